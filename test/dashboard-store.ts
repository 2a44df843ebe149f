/**
 * Where the dashboard's end-to-end suites keep their workspaces: embedded SQLite (the default),
 * or a project of its own per workspace on a PostgreSQL cluster (`baton init --store … --project
 * …`, as a team would set it up). The suites (test/dashboard-*.suite.ts) take one of these; each
 * spec file is a line handing a suite its store, so every suite runs unchanged on both.
 */
import { cli, tempDir } from "./helpers.js";
import type { PgCluster } from "./pg-cluster.js";

export interface DashboardStore {
  name: "sqlite" | "postgres";
  /** A fresh workspace root on this store (nothing in it yet but `.baton/`'s choice of store). */
  workspace(): string;
}

export const sqliteStore: DashboardStore = { name: "sqlite", workspace: () => tempDir() };

let projects = 0;

/** Workspaces on `cluster()` (asked for when a workspace is made: the cluster starts in a beforeAll). */
export function postgresStore(cluster: () => PgCluster): DashboardStore {
  return {
    name: "postgres",
    workspace() {
      const root = tempDir();
      const project = `dash_${process.pid}_${projects++}`;
      const r = cli(["init", "--root", root, "--store", cluster().url, "--project", project, "--json"]);
      if (r.code !== 0) throw new Error(`baton init --store exited ${r.code}: ${r.stdout}${r.stderr}`);
      if (r.json().store?.kind !== "postgres") throw new Error(`baton init --store did not choose PostgreSQL: ${r.stdout}`);
      return root;
    },
  };
}

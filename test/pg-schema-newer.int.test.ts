/**
 * A process that opened a PostgreSQL project before a newer Baton on another host migrated it:
 * its statements now fail against a schema it does not know (a column made NOT NULL, a table
 * dropped or renamed, a key changed). It must say so (`schema_too_new`, naming the project and
 * the version, and to upgrade and restart), never `internal`. The newer Baton is this code with
 * one more migration than this code knows; the older process is this code as it is. Skipped
 * without PostgreSQL server binaries unless BATON_TEST_POSTGRES=require.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { PostgresBackend, projectSchema } from "../src/backend/postgres/pg-backend.js";
import { PG_MIGRATIONS } from "../src/backend/postgres/pg-migrations.js";
import { openBaton } from "../src/compose.js";
import { type Baton, isBatonError } from "../src/index.js";
import { tempDir } from "./helpers.js";
import { type PgCluster, pgAvailable } from "./pg-cluster.js";
import { clusterForSuite } from "./pg-suite.js";

const available = pgAvailable();
const known = PG_MIGRATIONS.reduce((m, x) => Math.max(m, x.version), 0);
let n = 0;

/** Schema changes a later Baton could make, each breaking one kind of statement of this one (SQLSTATE). */
const FUTURE: { sqlstate: string; sql: string; op: (b: Baton, root: string) => Promise<unknown> }[] = [
  {
    sqlstate: "23502", // not_null_violation: a column this code does not fill
    sql: "ALTER TABLE checkpoints ADD COLUMN shard text NOT NULL DEFAULT 'x'; ALTER TABLE checkpoints ALTER COLUMN shard DROP DEFAULT",
    op: (b) => b.checkpoints.create("s", { files: ["a.txt"] }),
  },
  {
    sqlstate: "42P01", // undefined_table: a table this code reads
    sql: "ALTER TABLE manifest_runs RENAME TO manifest_spans",
    op: async (b) => b.checkpoints.get((await b.checkpoints.list("s"))[0]?.id as string),
  },
  {
    sqlstate: "42703", // undefined_column: a column this code writes
    sql: "ALTER TABLE checkpoints RENAME COLUMN label TO title",
    op: (b) => b.checkpoints.create("s", { files: ["a.txt"] }),
  },
  {
    sqlstate: "42P10", // invalid_column_reference: an ON CONFLICT key that is no longer unique
    sql: "ALTER TABLE stat_cache DROP CONSTRAINT stat_cache_pkey; ALTER TABLE stat_cache ADD PRIMARY KEY (scope, path, ino)",
    op: (b, root) => {
      writeFileSync(join(root, "b.txt"), `${Date.now()}\n`);
      return b.checkpoints.create("s", { all: true });
    },
  },
];

describe.skipIf(!available)("a PostgreSQL project migrated past this code while it runs", () => {
  const open: Baton[] = [];
  const clusterOf = clusterForSuite(open);
  let cluster: PgCluster;
  beforeAll(() => {
    cluster = clusterOf();
  });

  for (const future of FUTURE) {
    it(`a statement failing with ${future.sqlstate} after another host migrated is schema_too_new, saying to upgrade and restart`, async () => {
      const project = `newer_${process.pid}_${n++}`;
      const root = tempDir("newer-");
      writeFileSync(join(root, "a.txt"), "a\n");
      const old = await openBaton({ root, backend: await PostgresBackend.open({ url: cluster.url, project }) });
      open.push(old);
      await old.sessions.start({ flow: "task", id: "s" });
      await old.checkpoints.create("s", { all: true });
      // Another host's newer Baton opens the project and migrates it one step further.
      const migrations = [...PG_MIGRATIONS, { version: known + 1, name: "future", sql: future.sql }];
      const newer = await PostgresBackend.open({ url: cluster.url, project, migrations });
      expect(newer.migration.to).toBe(known + 1);
      await newer.close();

      const err = await future.op(old, root).catch((e: unknown) => e);
      expect(
        isBatonError(err, "schema_too_new"),
        `${(err as Error)?.message} (${JSON.stringify((err as { details?: unknown }).details)})`,
      ).toBe(true);
      const e = err as Error & { details: Record<string, unknown> };
      expect(e.message).toContain(`"${project}"`);
      expect(e.message).toContain(`version ${known + 1}`);
      expect(e.message).toMatch(/[Uu]pgrade Baton here and restart this process/);
      expect(e.details).toMatchObject({ project, version: known + 1, known, pg: future.sqlstate });
    });
  }

  it("the same failure on a schema this code knows stays what it is (not schema_too_new)", async () => {
    const project = `newer_${process.pid}_${n++}`;
    const root = tempDir("newer-");
    const b = await openBaton({ root, backend: await PostgresBackend.open({ url: cluster.url, project }) });
    open.push(b);
    await b.sessions.start({ flow: "task", id: "s" });
    writeFileSync(join(root, "a.txt"), "a\n");
    await b.checkpoints.create("s", { files: ["a.txt"] });
    // Damage by hand, not a migration: the code is as new as the schema, so this is not its age.
    const c = new pg.Client({ connectionString: cluster.url });
    await c.connect();
    await c.query(`ALTER TABLE ${projectSchema(project)}.manifest_runs RENAME TO manifest_spans`);
    await c.end();
    const err = await b.checkpoints.get((await b.checkpoints.list("s"))[0]?.id as string).catch((e: unknown) => e);
    expect(isBatonError(err, "schema_too_new"), String(err)).toBe(false);
    expect((err as { details?: { pg?: string } }).details?.pg).toBe("42P01");
  });
});

/**
 * The dashboard on PostgreSQL: every view's end-to-end suite (sessions, a session's timeline,
 * checkpoints with rollback and undo, the spiral pause, lessons, the ledger, health, pending
 * work) run unchanged against workspaces whose store is a project on a throwaway cluster
 * (test/pg-cluster.ts), each workspace its own project. The login and its guard do not touch
 * the store and run on SQLite only (dashboard.e2e.test.ts). Skipped without PostgreSQL server
 * binaries unless BATON_TEST_POSTGRES=require.
 */
import { afterAll, afterEach, beforeAll, describe } from "vitest";
import { checkpointsSuite } from "./dashboard-checkpoints.suite.js";
import { healthSuite } from "./dashboard-health.suite.js";
import { ledgerSuite } from "./dashboard-ledger.suite.js";
import { lessonsSuite } from "./dashboard-lessons.suite.js";
import { sessionSuite } from "./dashboard-session.suite.js";
import { sessionsSuite } from "./dashboard-sessions.suite.js";
import { spiralSuite } from "./dashboard-spiral.suite.js";
import { postgresStore } from "./dashboard-store.js";
import { workSuite } from "./dashboard-work.suite.js";
import { type PgCluster, POSTGRES_REQUIRED, pgBinDir, startCluster } from "./pg-cluster.js";

const available = pgBinDir() !== undefined;
if (!available && POSTGRES_REQUIRED) throw new Error("BATON_TEST_POSTGRES=require but no PostgreSQL server binaries were found");

let cluster: PgCluster | undefined;
let failed = false;

describe.skipIf(!available)("dashboard on PostgreSQL", () => {
  beforeAll(async () => {
    cluster = await startCluster();
  });
  afterEach((ctx) => {
    if (ctx.task.result?.state === "fail") failed = true;
  });
  afterAll(() => {
    cluster?.stop(failed);
  });

  const store = postgresStore(() => {
    if (!cluster) throw new Error("the PostgreSQL cluster has not started");
    return cluster;
  });
  sessionsSuite(store);
  sessionSuite(store);
  checkpointsSuite(store);
  spiralSuite(store);
  lessonsSuite(store);
  ledgerSuite(store);
  healthSuite(store);
  workSuite(store);
});

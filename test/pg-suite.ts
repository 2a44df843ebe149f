/** A PostgreSQL test cluster shared by a describe block's tests (test/pg-cluster.ts starts and stops it). */
import { afterAll, afterEach, beforeAll } from "vitest";
import { cleanupDirs } from "./helpers.js";
import { type PgCluster, startCluster } from "./pg-cluster.js";

/**
 * One cluster for the enclosing describe block: started before its tests, stopped after them
 * (its directory kept and named when a test failed), with `open`'s members closed after each
 * test and the temp directories removed at the end. Returns the running cluster's getter.
 */
export function clusterForSuite(open: { close(): Promise<void> }[]): () => PgCluster {
  let cluster: PgCluster | undefined;
  let failed = false;
  beforeAll(async () => {
    cluster = await startCluster();
  });
  afterEach(async (ctx) => {
    if (ctx.task.result?.state === "fail") failed = true;
    for (const b of open.splice(0)) await b.close();
  });
  afterAll(() => {
    cluster?.stop(failed);
    cleanupDirs();
  });
  return () => {
    if (!cluster) throw new Error("the PostgreSQL test cluster is not running");
    return cluster;
  };
}

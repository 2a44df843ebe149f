import { createHash } from "node:crypto";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PostgresBackend, projectSchema } from "../src/backend/postgres/pg-backend.js";
import { concurrencyContract } from "./contract/concurrency-contract.js";
import { journalContract, type StoreFactory } from "./contract/journal-contract.js";
import { ledgerContract } from "./contract/ledger-contract.js";
import { locksContract } from "./contract/locks-contract.js";
import { queueContract } from "./contract/queue-contract.js";
import { storeContract } from "./contract/store-contract.js";
import { type PgCluster, POSTGRES_REQUIRED, pgBinDir, startCluster } from "./pg-cluster.js";

const available = pgBinDir() !== undefined;
if (!available && POSTGRES_REQUIRED) throw new Error("BATON_TEST_POSTGRES=require but no PostgreSQL server binaries were found");

let cluster: PgCluster | undefined;
const schemasByTest = new Map<string, string>();
let failed = false;

/** One project (schema) per workspace root, so reopening a root reopens its store. */
const projectOf = (root: string) => `t_${createHash("sha256").update(root).digest("hex").slice(0, 16)}`;

export const pgStore: StoreFactory = async (root) => {
  if (!cluster) throw new Error("the PostgreSQL test cluster is not running");
  const project = projectOf(root);
  schemasByTest.set(expect.getState().currentTestName ?? root, projectSchema(project));
  const backend = await PostgresBackend.open({ url: cluster.url, project });
  const url = cluster.url;
  return {
    backend,
    async raw(sql) {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        await c.query(`SET search_path TO ${projectSchema(project)}`);
        await c.query(sql);
      } finally {
        await c.end();
      }
    },
  };
};

if (available) {
  beforeAll(async () => {
    cluster = await startCluster();
  });
  afterEach((ctx) => {
    if (ctx.task.result?.state === "fail") {
      failed = true;
      console.error(`test "${ctx.task.name}" failed; its schema: ${schemasByTest.get(expect.getState().currentTestName ?? "") ?? "?"}`);
    }
  });
  afterAll(() => cluster?.stop(failed));

  journalContract("postgres", pgStore);
  queueContract("postgres", pgStore);
  ledgerContract("postgres", pgStore);
  locksContract("postgres", pgStore);
  concurrencyContract("postgres", pgStore, "separate");
  storeContract("postgres", pgStore);
} else {
  describe("postgres contract", () => {
    it.skip("needs PostgreSQL server binaries (apt-get install -y postgresql); CI installs them", () => undefined);
  });
}

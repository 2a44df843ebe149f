import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { SqliteBackend } from "../src/backend/sqlite/sqlite-backend.js";
import { openBaton } from "../src/index.js";
import { ensureWorkspace, workspaceAt } from "../src/services/workspace.js";
import { journalContract, type StoreFactory } from "./contract/journal-contract.js";
import { ledgerContract } from "./contract/ledger-contract.js";
import { locksContract } from "./contract/locks-contract.js";
import { queueContract } from "./contract/queue-contract.js";
import { cleanupDirs, tempDir } from "./helpers.js";

const sqliteStore: StoreFactory = async (root) => {
  const ws = workspaceAt(root);
  ensureWorkspace(ws);
  return {
    backend: new SqliteBackend({ path: ws.dbPath }),
    async raw(sql) {
      const db = new Database(ws.dbPath);
      try {
        db.exec(sql);
      } finally {
        db.close();
      }
    },
  };
};

journalContract("sqlite", sqliteStore);

queueContract("sqlite", sqliteStore);

ledgerContract("sqlite", sqliteStore);

locksContract("sqlite", sqliteStore);

describe("sqlite group commit", () => {
  afterAll(() => cleanupDirs());

  it("carries concurrent writes in shared commits, each durable and each failing alone", async () => {
    const root = tempDir();
    const backend = new SqliteBackend({ path: join(root, "g.db") });
    const b = await openBaton({ root, backend });
    await b.startSession({ flow: "task", id: "t" });
    const before = backend.writeStats;
    const writes = Array.from({ length: 40 }, (_, i) =>
      i === 17
        ? b.append("nope", { type: "note:added", data: { text: "x" } })
        : b.append("t", { type: "note:added", data: { text: `n${i}` } }),
    );
    const settled = await Promise.allSettled(writes);
    const refused = settled.filter((s) => s.status === "rejected").map((s) => (s as PromiseRejectedResult).reason as { code?: string });
    expect(refused.map((e) => e.code)).toEqual(["not_found"]);
    const after = backend.writeStats;
    expect(after.transactions - before.transactions).toBe(40);
    // The first write commits alone; the 39 queued behind it share far fewer commits.
    expect(after.commits - before.commits).toBeLessThanOrEqual(4);
    await b.close();
    // What each caller was told is what a fresh connection reads.
    const raw = new Database(join(root, "g.db"), { readonly: true });
    try {
      expect((raw.prepare("SELECT count(*) AS n FROM events WHERE session_id = 't'").get() as { n: number }).n).toBe(40);
    } finally {
      raw.close();
    }
  });
});

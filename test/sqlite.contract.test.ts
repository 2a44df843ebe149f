import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { SqliteBackend } from "../src/backend/sqlite/sqlite-backend.js";
import { openBaton } from "../src/compose.js";
import { BatonError } from "../src/errors.js";

import { ensureWorkspace, workspaceAt } from "../src/platform/workspace.js";
import { checkpointsContract } from "./contract/checkpoints-contract.js";
import { concurrencyContract } from "./contract/concurrency-contract.js";
import { idempotencyContract } from "./contract/idempotency-contract.js";
import { journalContract, type StoreFactory } from "./contract/journal-contract.js";
import { ledgerContract } from "./contract/ledger-contract.js";
import { locksContract } from "./contract/locks-contract.js";
import { queueContract } from "./contract/queue-contract.js";
import { storeContract } from "./contract/store-contract.js";
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
    async rows(sql) {
      const db = new Database(ws.dbPath, { readonly: true });
      try {
        return db.prepare(sql).all() as Record<string, unknown>[];
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

concurrencyContract("sqlite", sqliteStore, "shared");

idempotencyContract("sqlite", sqliteStore, "shared");

storeContract("sqlite", sqliteStore);

checkpointsContract("sqlite", sqliteStore, "shared");

describe("sqlite group commit", () => {
  afterAll(() => cleanupDirs());

  it("carries concurrent writes in shared commits, each durable and each failing alone", async () => {
    const root = tempDir();
    const backend = new SqliteBackend({ path: join(root, "g.db") });
    const b = await openBaton({ root, backend });
    await b.sessions.start({ flow: "task", id: "t" });
    const before = backend.writeStats;
    const writes = Array.from({ length: 40 }, (_, i) =>
      i === 17
        ? b.events.append("nope", { type: "note:added", data: { text: "x" } })
        : b.events.append("t", { type: "note:added", data: { text: `n${i}` } }),
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
  it("fails a member alone on its own io_error, and runs beforeCommit and afterCommit actions only for members that commit", async () => {
    const root = tempDir();
    const backend = new SqliteBackend({ path: join(root, "a.db") });
    const b = await openBaton({ root, backend });
    await b.sessions.start({ flow: "task", id: "t" });
    const ran: string[] = [];
    const committed: string[] = [];
    const member = (name: string, fail: boolean) =>
      backend.transaction("write", async (tx) => {
        tx.beforeCommit(() => ran.push(name));
        tx.afterCommit(() => committed.push(name));
        await tx.checkpoints.bumpBlobEpoch();
        if (fail) throw new BatonError("io_error", "cannot delete a blob file: EIO");
        return name;
      });
    const before = backend.writeStats;
    const settled = await Promise.allSettled([
      member("a", false),
      member("b", true),
      b.events.append("t", { type: "note:added", data: { text: "kept" } }),
      member("c", false),
    ]);
    expect(settled.map((s) => s.status)).toEqual(["fulfilled", "rejected", "fulfilled", "fulfilled"]);
    expect(((settled[1] as PromiseRejectedResult).reason as { code?: string }).code).toBe("io_error");
    expect(backend.writeStats.commits - before.commits, "one group").toBe(1);
    expect(ran, "the failed member's action went with it").toEqual(["a", "c"]);
    expect(committed, "after the group's COMMIT, the failed member's left out").toEqual(["a", "c"]);
    expect((await b.events.list("t")).events.map((e) => e.type)).toContain("note:added");
    // Alone, a failing transaction runs no action either.
    await expect(member("d", true)).rejects.toMatchObject({ code: "io_error" });
    expect(ran).toEqual(["a", "c"]);
    expect(committed).toEqual(["a", "c"]);
    await b.close();
  });

  it("a committed transaction stands when an afterCommit action throws: the caller hears success, a warning says it", async () => {
    const root = tempDir();
    const backend = new SqliteBackend({ path: join(root, "w.db") });
    const warnings: Error[] = [];
    const warn = (w: Error) => warnings.push(w);
    process.on("warning", warn);
    try {
      const ran: string[] = [];
      const v = await backend.transaction("write", async (tx) => {
        tx.afterCommit(() => {
          throw new Error("a broken action");
        });
        tx.afterCommit(() => ran.push("next"));
        await tx.checkpoints.bumpBlobEpoch();
        return "stored";
      });
      expect(v).toBe("stored");
      expect(ran).toEqual(["next"]);
      await new Promise((r) => setImmediate(r));
      expect(warnings.map((w) => w.message)).toContain("a broken action");
    } finally {
      process.off("warning", warn);
      await backend.close();
    }
  });
});

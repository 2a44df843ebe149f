/**
 * Locks, runs and the store's integrity check: what every backend must do. The epoch of a
 * lock row only grows, a freed row keeps it, updates name the epoch they expect, and a guarded
 * write in the same transaction as its epoch check is refused once another epoch holds it.
 */
import { afterAll, describe, expect, it } from "vitest";
import type { LockRow, RunRow } from "../../src/backend/contract.js";
import { openBaton } from "../../src/compose.js";
import { isBatonError } from "../../src/index.js";
import type { ProcessFacts } from "../../src/platform/process-facts.js";
import { cleanupDirs, tempDir } from "../helpers.js";
import type { StoreFactory } from "./journal-contract.js";

const AT = "2026-02-01T00:00:00.000Z";

function lock(epoch: number, over: Partial<LockRow> = {}): LockRow {
  return {
    name: "deploy",
    epoch,
    state: "held",
    owner: "a",
    pid: 10,
    host: "h",
    hostId: "linux:0123456789abcdef",
    startTime: "1",
    runId: null,
    acquiredAt: AT,
    heartbeatAt: AT,
    expiresMs: 1_000,
    ttlMs: 1_000,
    releasedAt: null,
    releaseReason: null,
    ...over,
  };
}

function run(runId: string, sessionId: string, over: Partial<RunRow> = {}): RunRow {
  return {
    sessionId,
    runId,
    agent: "agent",
    pid: 10,
    host: "h",
    hostId: "linux:0123456789abcdef",
    startTime: "1",
    startedAt: AT,
    heartbeatAt: AT,
    ttlMs: 60_000,
    state: "running",
    endedAt: null,
    ...over,
  };
}

export function locksContract(name: string, factory: StoreFactory): void {
  describe(`locks contract: ${name}`, () => {
    afterAll(() => cleanupDirs());

    it("keeps one row per lock whose epoch only grows; acquire, heartbeat and free compare the epoch", async () => {
      const { backend } = await factory(tempDir());
      await backend.transaction("write", async (tx) => {
        expect(await tx.locks.getLock("deploy")).toBeUndefined();
        expect(await tx.locks.acquireLock(lock(1), null)).toBe(true);
        expect(await tx.locks.acquireLock(lock(1, { owner: "late" }), null), "a second first acquisition loses").toBe(false);
        expect(await tx.locks.heartbeatLock("deploy", 2, AT, 5_000, 1_000)).toBe(false);
        expect(await tx.locks.heartbeatLock("deploy", 1, AT, 5_000, 2_000)).toBe(true);
        expect(await tx.locks.getLock("deploy")).toMatchObject({
          epoch: 1,
          expiresMs: 5_000,
          ttlMs: 2_000,
          state: "held",
          host: "h",
          hostId: "linux:0123456789abcdef",
        });
        expect(await tx.locks.freeLock("deploy", 2, AT, "released")).toBe(false);
        expect(await tx.locks.freeLock("deploy", 1, AT, "released")).toBe(true);
        expect(await tx.locks.freeLock("deploy", 1, AT, "released")).toBe(false);
        expect(await tx.locks.getLock("deploy")).toMatchObject({
          epoch: 1,
          state: "free",
          releasedAt: AT,
          releaseReason: "released",
          owner: "a",
        });
        expect(await tx.locks.acquireLock(lock(2, { owner: "c" }), 0), "compare-and-set on the epoch").toBe(false);
        expect(await tx.locks.acquireLock(lock(2, { owner: "b", pid: null, host: null, hostId: null, startTime: null }), 1)).toBe(true);
        expect(await tx.locks.acquireLock(lock(1, { name: "another" }), null)).toBe(true);
        expect((await tx.locks.listLocks()).map((l) => [l.name, l.epoch, l.owner, l.pid, l.hostId])).toEqual([
          ["another", 1, "a", 10, "linux:0123456789abcdef"],
          ["deploy", 2, "b", null, null],
        ]);
      });
      expect(await backend.integrityCheck()).toEqual([]);
      await backend.close();
    });

    it("tracks runs: running ones by session, heartbeats only while running", async () => {
      const { backend } = await factory(tempDir());
      await backend.transaction("write", async (tx) => {
        await tx.runs.insertRun(run("r1", "s1"));
        await tx.runs.insertRun(run("r2", "s2"));
        await tx.runs.insertRun(run("r1", "s2", { agent: "other", hostId: null }));
        expect((await tx.runs.runningRuns()).map((r) => `${r.sessionId}/${r.runId}`).sort()).toEqual(["s1/r1", "s2/r1", "s2/r2"]);
        expect((await tx.runs.runningRuns("s2")).map((r) => [r.runId, r.hostId]).sort()).toEqual([
          ["r1", null],
          ["r2", "linux:0123456789abcdef"],
        ]);
        expect(await tx.runs.heartbeatRun("s1", "r1", "2026-02-01T00:01:00.000Z", 90_000)).toBe(true);
        expect(await tx.runs.getRun("s1", "r1")).toMatchObject({ heartbeatAt: "2026-02-01T00:01:00.000Z", ttlMs: 90_000 });
        await tx.runs.setRunState("s1", "r1", "crashed", AT);
        expect(await tx.runs.heartbeatRun("s1", "r1", AT, 1_000)).toBe(false);
        expect(await tx.runs.getRun("s1", "r1")).toMatchObject({ state: "crashed", endedAt: AT });
        expect((await tx.runs.runningRuns("s1")).length).toBe(0);
        expect(await tx.runs.getRun("s9", "r1")).toBeUndefined();
      });
      await backend.close();
    });

    it("refuses a stale epoch's guarded write in the write's own transaction, and finds leases by owner", async () => {
      const root = tempDir();
      const { backend } = await factory(root);
      const alive = new Set([1, 2]);
      const facts: ProcessFacts = { host: () => "h", alive: (pid) => alive.has(pid), startTime: () => "1" };
      const b = await openBaton({ root, backend, processFacts: facts });
      await b.sessions.start({ flow: "live-variant", id: "lv" });
      await b.events.append("lv", { type: "generate", actor: "browser" });
      const lease = await b.work.lease("owner-1");
      expect((await backend.transaction("read", (tx) => tx.queue.leasedBy(["owner-1", "nobody"]))).map((i) => i.itemId)).toEqual([
        lease?.item.itemId,
      ]);
      expect(await backend.transaction("read", (tx) => tx.queue.leasedBy([]))).toEqual([]);

      const first = await b.locks.acquire("session:lv", { pid: 1 });
      alive.delete(1);
      const second = await b.locks.acquire("session:lv", { pid: 2 });
      expect(second).toMatchObject({ epoch: first.epoch + 1, reclaimed: { proof: "dead_pid" } });
      const seq = (await b.sessions.snapshot("lv")).lastSeq;
      const err = await b.locks.append("session:lv", first.epoch, "lv", { type: "note:added", data: { text: "late" } }).catch((e) => e);
      expect(isBatonError(err, "lock_lost")).toBe(true);
      expect((await b.sessions.snapshot("lv")).lastSeq).toBe(seq);
      await b.locks.append("session:lv", second.epoch, "lv", { type: "note:added", data: { text: "fresh" } });
      expect((await b.sessions.snapshot("lv")).lastSeq).toBe(seq + 1);
      await b.close();
    });
  });
}

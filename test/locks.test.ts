/**
 * Named locks: reclaimed only on proof (expiry, a dead pid here, a reused pid here), never
 * from a live holder that heartbeats, never from another host before expiry; every
 * acquisition bumps the epoch and a stale epoch's guarded write is refused with lock_lost.
 * Clock and process facts are faked, so "5 minutes" takes no time.
 */
import { spawnSync } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { staleDecision } from "../src/core/locks.js";
import { type Baton, isBatonError, openBaton } from "../src/index.js";
import type { ProcessFacts } from "../src/services/process-facts.js";
import { cleanupDirs, tempDir } from "./helpers.js";

afterAll(() => cleanupDirs());

/** A host whose processes are a map pid → start time. */
function fakeHost(host: string, procs: Map<number, string>): ProcessFacts {
  return { host: () => host, alive: (pid) => procs.has(pid), startTime: (pid) => procs.get(pid) };
}

function clock(start = "2026-03-01T12:00:00.000Z") {
  let t = Date.parse(start);
  return {
    now: () => new Date(t),
    advance: (ms: number) => {
      t += ms;
    },
  };
}

async function open(root: string, facts: ProcessFacts, now: () => Date): Promise<Baton> {
  return openBaton({ root, now, processFacts: facts });
}

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    if (isBatonError(err)) return err.code;
    throw err;
  }
  return "ok";
}

describe("lock reclaim proofs", () => {
  it("a heartbeating lock is not stale after 5 minutes (fake clock), and is reclaimed only once it expires", async () => {
    const c = clock();
    const procs = new Map([
      [100, "5000"],
      [200, "6000"],
    ]);
    const b = await open(tempDir(), fakeHost("h1", procs), c.now);
    const g = await b.locks.acquire("deploy", { pid: 100, owner: "agent-a", ttlMs: 60_000 });
    expect(g.epoch).toBe(1);
    for (let i = 0; i < 10; i++) {
      c.advance(30_000);
      await b.locks.heartbeat("deploy", g.epoch);
    }
    // 5 minutes later: still live, and a contender is refused.
    const info = await b.locks.inspect("deploy");
    expect(info).toMatchObject({ state: "held", epoch: 1, holder: { owner: "agent-a", pid: 100, host: "h1", startTime: "5000" } });
    expect(info.stale).toMatchObject({ stale: false, reason: "live" });
    expect(await code(b.locks.acquire("deploy", { pid: 200, owner: "agent-b" }))).toBe("lock_held");
    // A long-running holder whose process is alive but stops heartbeating: still not stolen before expiry.
    c.advance(59_000);
    expect(await code(b.locks.acquire("deploy", { pid: 200, owner: "agent-b" }))).toBe("lock_held");
    c.advance(1_000);
    const next = await b.locks.acquire("deploy", { pid: 200, owner: "agent-b" });
    expect(next).toMatchObject({ epoch: 2, reclaimed: { epoch: 1, proof: "expired" } });
    await b.close();
  });

  it("a dead pid's lock is reclaimed at once, with the proof", async () => {
    const c = clock();
    const procs = new Map([
      [100, "5000"],
      [200, "6000"],
    ]);
    const b = await open(tempDir(), fakeHost("h1", procs), c.now);
    await b.locks.acquire("build", { pid: 100, ttlMs: 3_600_000 });
    procs.delete(100); // the holder died
    expect((await b.locks.inspect("build")).stale).toMatchObject({ stale: true, proof: "dead_pid" });
    const g = await b.locks.acquire("build", { pid: 200 });
    expect(g).toMatchObject({ epoch: 2, reclaimed: { epoch: 1, proof: "dead_pid" } });
    expect(g.reclaimed?.evidence).toBe("pid 100 on h1 is not running");
    await b.close();
  });

  it("a real process that exited is a dead pid on this host (real facts)", async () => {
    const root = tempDir();
    const b = await openBaton({ root });
    const dead = spawnSync(process.execPath, ["-e", "0"]).pid as number;
    await b.locks.acquire("real", { pid: dead, ttlMs: 3_600_000 });
    const g = await b.locks.acquire("real", { pid: process.pid });
    expect(g.reclaimed?.proof).toBe("dead_pid");
    // This process is alive and its start time matches: not reclaimable.
    expect((await b.locks.inspect("real")).stale).toMatchObject({ stale: false, reason: "live" });
    expect(await code(b.locks.acquire("real", { pid: process.pid }))).toBe("lock_held");
    await b.close();
  });

  it("detects pid reuse by the process start time", async () => {
    const c = clock();
    const procs = new Map([
      [100, "5000"],
      [200, "6000"],
    ]);
    const b = await open(tempDir(), fakeHost("h1", procs), c.now);
    await b.locks.acquire("x", { pid: 100, ttlMs: 3_600_000 });
    expect(await code(b.locks.acquire("x", { pid: 200 }))).toBe("lock_held");
    procs.set(100, "9999"); // pid 100 died and an unrelated process got the same pid
    const g = await b.locks.acquire("x", { pid: 200 });
    expect(g.reclaimed).toMatchObject({ epoch: 1, proof: "pid_reused" });
    expect(g.reclaimed?.evidence).toContain("start time 9999, recorded 5000");
    await b.close();
  });

  it("another host's lock is not broken before expiry, whatever its pid looks like here", async () => {
    const c = clock();
    const root = tempDir();
    const a = await open(root, fakeHost("host-a", new Map([[100, "1"]])), c.now);
    const b = await open(root, fakeHost("host-b", new Map()), c.now); // pid 100 does not exist on host-b
    await a.locks.acquire("shared", { pid: 100, ttlMs: 120_000 });
    expect((await b.locks.inspect("shared")).stale).toMatchObject({ stale: false, reason: "other_host" });
    expect(await code(b.locks.acquire("shared", { pid: 100 }))).toBe("lock_held");
    c.advance(119_999);
    expect(await code(b.locks.acquire("shared", { pid: 100 }))).toBe("lock_held");
    c.advance(1);
    expect(await b.locks.acquire("shared", { pid: 100 })).toMatchObject({ epoch: 2, reclaimed: { proof: "expired" } });
    await a.close();
    await b.close();
  });

  it("decides proofs purely", () => {
    const facts = { host: "h", alive: true, startTime: "7" };
    const holder = { pid: 1, host: "h", startTime: "7", expiresMs: 1_000 };
    expect(staleDecision(holder, facts, 999)).toMatchObject({ stale: false, reason: "live" });
    expect(staleDecision(holder, facts, 1_000)).toMatchObject({ stale: true, proof: "expired" });
    expect(staleDecision(holder, { host: "h", alive: false }, 0)).toMatchObject({ stale: true, proof: "dead_pid" });
    expect(staleDecision(holder, { host: "h", alive: true, startTime: "8" }, 0)).toMatchObject({ stale: true, proof: "pid_reused" });
    // Unknown start time proves nothing.
    expect(staleDecision({ pid: 1, host: "h", expiresMs: 1_000 }, { host: "h", alive: true, startTime: "8" }, 0).stale).toBe(false);
    expect(staleDecision(holder, { host: "other" }, 0)).toMatchObject({ stale: false, reason: "other_host" });
  });
});

describe("fencing epochs", () => {
  it("every acquisition bumps the epoch; a stale holder's guarded write, heartbeat and release are refused with lock_lost", async () => {
    const c = clock();
    const procs = new Map([
      [100, "1"],
      [200, "2"],
    ]);
    const b = await open(tempDir(), fakeHost("h1", procs), c.now);
    await b.sessions.start({ flow: "task", id: "t" });
    const first = await b.locks.acquire("session:t", { pid: 100, ttlMs: 1_000 });
    await b.locks.append("session:t", first.epoch, "t", { type: "note:added", data: { text: "one" } });
    // Expired but nobody took it over: the holder's writes are still honoured.
    c.advance(5_000);
    await b.locks.append("session:t", first.epoch, "t", { type: "note:added", data: { text: "two" } });
    const second = await b.locks.acquire("session:t", { pid: 200, ttlMs: 1_000 });
    expect(second.epoch).toBe(2);
    const before = (await b.sessions.snapshot("t")).lastSeq;
    const refused = await b.locks.append("session:t", first.epoch, "t", { type: "note:added", data: { text: "stale" } }).catch((e) => e);
    expect(isBatonError(refused, "lock_lost")).toBe(true);
    expect(refused.details).toMatchObject({ name: "session:t", epoch: 1, currentEpoch: 2 });
    expect((await b.sessions.snapshot("t")).lastSeq).toBe(before);
    expect(await code(b.locks.heartbeat("session:t", first.epoch))).toBe("lock_lost");
    expect(await code(b.locks.release("session:t", first.epoch))).toBe("lock_lost");
    await b.locks.release("session:t", second.epoch);
    expect(await code(b.locks.append("session:t", second.epoch, "t", { type: "note:added", data: { text: "late" } }))).toBe("lock_lost");
    const info = await b.locks.inspect("session:t");
    expect(info).toMatchObject({ state: "free", epoch: 2, releaseReason: "released" });
    expect((await b.locks.acquire("session:t", { pid: 100 })).epoch).toBe(3);
    await b.close();
  });

  it("waits for a live holder to release, and refuses bad input", async () => {
    const b = await openBaton({ root: tempDir() });
    const g = await b.locks.acquire("w", { ttlMs: 60_000 });
    const waiting = b.locks.acquire("w", { waitMs: 5_000, owner: "second" });
    setTimeout(() => void b.locks.release("w", g.epoch), 100);
    expect(await waiting).toMatchObject({ epoch: 2, holder: { owner: "second" } });
    expect(await code(b.locks.acquire("w", { waitMs: 50 }))).toBe("lock_held");
    expect(await code(b.locks.acquire("bad name!"))).toBe("bad_input");
    expect(await code(b.locks.acquire("w2", { ttlMs: 1 }))).toBe("bad_input");
    expect(await code(b.locks.inspect("never"))).toBe("not_found");
    await b.close();
  });
});

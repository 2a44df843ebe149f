/**
 * Named locks: reclaimed only on proof (expiry, a dead pid here, a reused pid here), never
 * from a live holder that heartbeats, never from another host before expiry; every
 * acquisition bumps the epoch and a stale epoch's guarded write is refused with lock_lost.
 * Clock and process facts are faked, so "5 minutes" takes no time.
 *
 * Host identity (issue 31 item 2): a pid is judged (kill(0), /proc start time) only by a
 * process of the same host identity, never by the host name alone. Two containers of one name
 * with their own pid namespaces never take each other's live lock or crash each other's runs on
 * a pid proof; a record from before the identity is freed by its expiry only; `hostId`
 * (BATON_HOST_ID) makes processes of one machine count as different hosts.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import type { LockRow } from "../src/backend/contract.js";
import { SqliteBackend } from "../src/backend/sqlite/sqlite-backend.js";
import { SQLITE_MIGRATIONS } from "../src/backend/sqlite/sqlite-migrations.js";
import { openBaton as openInternal, servicesOf } from "../src/compose.js";
import { staleDecision } from "../src/core/locks.js";
import { envOptions } from "../src/env-options.js";
import { type Baton, isBatonError, openBaton } from "../src/index.js";
import { hostFacts, hostIdentity, type ProcessFacts } from "../src/platform/process-facts.js";
import { cleanupDirs, tempDir } from "./helpers.js";

afterAll(() => cleanupDirs());

/** A host whose processes are a map pid → start time. */
function fakeHost(host: string, procs: Map<number, string>): ProcessFacts {
  return { host: () => host, alive: (pid) => procs.has(pid), startTime: (pid) => procs.get(pid) };
}

/** The same, with a host identity of its own (two hosts may share a name). */
function namedHost(host: string, hostId: string, procs: Map<number, string>): ProcessFacts {
  return { ...fakeHost(host, procs), hostId: () => hostId };
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
    const facts = { host: "h", hostId: "k1", alive: true, startTime: "7" };
    const holder = { pid: 1, host: "h", hostId: "k1", startTime: "7", expiresMs: 1_000 };
    expect(staleDecision(holder, facts, 999)).toMatchObject({ stale: false, reason: "live" });
    expect(staleDecision(holder, facts, 1_000)).toMatchObject({ stale: true, proof: "expired" });
    expect(staleDecision(holder, { host: "h", hostId: "k1", alive: false }, 0)).toMatchObject({ stale: true, proof: "dead_pid" });
    expect(staleDecision(holder, { ...facts, startTime: "8" }, 0)).toMatchObject({ stale: true, proof: "pid_reused" });
    // Unknown start time proves nothing.
    expect(staleDecision({ pid: 1, host: "h", hostId: "k1", expiresMs: 1_000 }, { ...facts, startTime: "8" }, 0).stale).toBe(false);
    expect(staleDecision(holder, { host: "other", hostId: "k2" }, 0)).toMatchObject({ stale: false, reason: "other_host" });
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

describe("host identity (issue 31): the decision rule", () => {
  const holder = { pid: 1, host: "ci", hostId: "linux:aaaa", startTime: "100", expiresMs: 10_000 };

  it("two hosts of one name with other identities: the holder's pid is never judged, whatever it looks like here", () => {
    for (const here of [
      { host: "ci", hostId: "linux:bbbb", alive: true, startTime: "200" }, // pid 1 is another process here
      { host: "ci", hostId: "linux:bbbb", alive: false }, // pid 1 does not exist here
      { host: "ci", hostId: "linux:bbbb" },
    ]) {
      const d = staleDecision(holder, here, 9_999);
      expect(d).toMatchObject({ stale: false, reason: "other_host" });
      expect(d.evidence).toContain("another host of the same name");
    }
    expect(staleDecision(holder, { host: "ci", hostId: "linux:bbbb" }, 10_000)).toMatchObject({ stale: true, proof: "expired" });
  });

  it("the same identity: today's proofs hold, whatever the host names", () => {
    const here = { host: "ci", hostId: "linux:aaaa" };
    expect(staleDecision(holder, { ...here, alive: true, startTime: "200" }, 0)).toMatchObject({ stale: true, proof: "pid_reused" });
    expect(staleDecision(holder, { ...here, alive: false }, 0)).toMatchObject({ stale: true, proof: "dead_pid" });
    expect(staleDecision(holder, { ...here, alive: true, startTime: "100" }, 0)).toMatchObject({ stale: false, reason: "live" });
    // A renamed host (its name is for people): still the same pids.
    expect(staleDecision(holder, { host: "renamed", hostId: "linux:aaaa", alive: false }, 0)).toMatchObject({ proof: "dead_pid" });
  });

  it("a record without an identity (an older Baton) is freed by its expiry only; another name is another host at once", () => {
    const legacy = { pid: 1, host: "ci", startTime: "100", expiresMs: 10_000 };
    for (const here of [
      { host: "ci", hostId: "linux:aaaa", alive: false },
      { host: "ci", hostId: "linux:aaaa", alive: true, startTime: "200" },
    ]) {
      const d = staleDecision(legacy, here, 0);
      expect(d).toMatchObject({ stale: false, reason: "unknown_host" });
      expect(d.evidence).toContain("without a host identity");
    }
    expect(staleDecision(legacy, { host: "other", hostId: "linux:aaaa", alive: false }, 0)).toMatchObject({ reason: "other_host" });
    expect(staleDecision(legacy, { host: "ci", hostId: "linux:aaaa", alive: false }, 10_000)).toMatchObject({ proof: "expired" });
  });
});

describe("host identity: locks and runs between two hosts of one name", () => {
  it("a container never takes the other's live lock on a pid proof, nor crashes its run; expiry frees both", async () => {
    const c = clock();
    const root = tempDir();
    // Each has its own pid 1, started at another time: the observed pid_reused takeover.
    const a = await openBaton({ root, now: c.now, processFacts: namedHost("ci", "linux:aaaa", new Map([[1, "100"]])) });
    const b = await openBaton({ root, now: c.now, processFacts: namedHost("ci", "linux:bbbb", new Map([[1, "200"]])) });
    const g = await a.locks.acquire("deploy", { pid: 1, ttlMs: 3_000 });
    expect(g.holder).toMatchObject({ pid: 1, host: "ci", hostId: "linux:aaaa", startTime: "100" });
    await a.sessions.start({ flow: "task", id: "t" });
    const { runId } = await a.runs.start("t", { agent: "agent-a", pid: 1, ttlMs: 60_000 });
    for (let i = 0; i < 4; i++) {
      c.advance(1_000);
      await a.locks.heartbeat("deploy", g.epoch);
      expect(await code(b.locks.acquire("deploy", { pid: 1 }))).toBe("lock_held");
      expect((await b.locks.inspect("deploy")).stale).toMatchObject({ stale: false, reason: "other_host" });
      expect(await b.runs.detectCrashed()).toEqual([]);
    }
    // The holder's fenced write still goes through: it was never stopped with lock_lost.
    await a.locks.append("deploy", g.epoch, "t", { type: "note:added", data: { text: "still mine" } });
    // A stops heartbeating: the lock is B's after its expiry, the run crashed after its ttl.
    c.advance(3_000);
    expect(await b.locks.acquire("deploy", { pid: 1 })).toMatchObject({ epoch: 2, reclaimed: { epoch: 1, proof: "expired" } });
    c.advance(60_000);
    expect(await b.runs.detectCrashed()).toMatchObject([{ runId, proof: "expired", marked: true }]);
    await a.close();
    await b.close();
  });

  it("processes of one identity judge each other's pids as before (the container's own processes)", async () => {
    const c = clock();
    const root = tempDir();
    const procs = new Map([
      [1, "100"],
      [7, "700"],
    ]);
    const a = await openBaton({ root, now: c.now, processFacts: namedHost("ci", "linux:aaaa", procs) });
    const b = await openBaton({ root, now: c.now, processFacts: namedHost("other-name", "linux:aaaa", procs) });
    await a.locks.acquire("deploy", { pid: 1, ttlMs: 60_000 });
    expect(await code(b.locks.acquire("deploy", { pid: 7 }))).toBe("lock_held");
    procs.set(1, "999");
    expect(await b.locks.acquire("deploy", { pid: 7 })).toMatchObject({ reclaimed: { proof: "pid_reused" } });
    procs.delete(7);
    expect(await a.locks.acquire("deploy", { pid: 1 })).toMatchObject({ reclaimed: { proof: "dead_pid" } });
    await a.close();
    await b.close();
  });

  it("rows written before the identity: readable, shown with their host name, freed by expiry only", async () => {
    const c = clock();
    const root = tempDir();
    mkdirSync(join(root, ".baton"));
    const path = join(root, ".baton", "baton.db");
    // A store as the last Baton without the identity left it, a lock and a run in it.
    const old = new SqliteBackend({ path, migrations: SQLITE_MIGRATIONS.filter((m) => m.name !== "host-identity") });
    const dead = spawnSync(process.execPath, ["-e", "0"]).pid as number;
    const at = c.now().toISOString();
    const host = hostFacts.host();
    const ob = await openInternal({ root, backend: old, now: c.now });
    await ob.sessions.start({ flow: "task", id: "t" });
    await ob.close();
    const db = new Database(path);
    db.prepare(
      `INSERT INTO locks (name, epoch, state, owner, pid, host, start_time, run_id, acquired_at, heartbeat_at, expires_ms, ttl_ms)
       VALUES ('deploy', 1, 'held', 'old', ?, ?, '1', NULL, ?, ?, ?, 60000)`,
    ).run(dead, host, at, at, c.now().getTime() + 60_000);
    db.prepare(
      `INSERT INTO runs (session_id, run_id, agent, pid, host, start_time, started_at, heartbeat_at, ttl_ms, state)
       VALUES ('t', 'run-old', 'agent', ?, ?, '1', ?, ?, 60000, 'running')`,
    ).run(dead, host, at, at);
    db.close();

    const b = await openBaton({ root, now: c.now }); // this machine's facts; migrates
    const info = await b.locks.inspect("deploy");
    expect(info.holder).toMatchObject({ pid: dead, host });
    expect(info.holder?.hostId).toBeUndefined();
    expect(info.stale).toMatchObject({ stale: false, reason: "unknown_host" });
    expect(await code(b.locks.acquire("deploy"))).toBe("lock_held");
    expect(await code(b.locks.epochHeldBy("deploy", dead))).toBe("lock_held");
    expect(await b.runs.detectCrashed()).toEqual([]);
    c.advance(60_000);
    expect(await b.locks.acquire("deploy")).toMatchObject({ epoch: 2, reclaimed: { proof: "expired" } });
    expect(await b.runs.detectCrashed()).toMatchObject([{ runId: "run-old", proof: "expired" }]);
    // What this Baton writes carries the identity.
    const row = (await servicesOf(b).backend.transaction("read", (tx) => tx.locks.getLock("deploy"))) as LockRow;
    expect(row.hostId).toBe(hostIdentity(hostFacts));
    await b.close();
  });
});

describe("host identity: the host id override", () => {
  let b1: Baton | undefined;
  afterAll(async () => {
    await b1?.close();
  });

  it("hostId makes two processes of one machine two hosts: a lock of the other is judged by expiry, not by its pid", async () => {
    const c = clock();
    const root = tempDir();
    const procs = new Map([[1, "100"]]);
    const facts = namedHost("vm", "linux:aaaa", procs);
    const a = await openBaton({ root, now: c.now, processFacts: facts, hostId: "agent-a" });
    const b = await openBaton({ root, now: c.now, processFacts: facts, hostId: "agent-b" });
    const a2 = await openBaton({ root, now: c.now, processFacts: facts, hostId: "agent-a" });
    const g = await a.locks.acquire("deploy", { pid: 1, ttlMs: 5_000 });
    expect(g.holder).toMatchObject({ host: "vm", hostId: "agent-a@linux:aaaa" });
    procs.delete(1); // the holder died: only its own "host" can tell
    expect((await b.locks.inspect("deploy")).stale).toMatchObject({ stale: false, reason: "other_host" });
    expect(await code(b.locks.acquire("deploy", { pid: 2 }))).toBe("lock_held");
    expect((await a2.locks.inspect("deploy")).stale).toMatchObject({ stale: true, proof: "dead_pid" });
    c.advance(5_000);
    expect(await b.locks.acquire("deploy", { pid: 2 })).toMatchObject({ reclaimed: { proof: "expired" } });
    for (const x of [a, b, a2]) await x.close();
  });

  it("on this machine's facts, and refused when malformed; BATON_HOST_ID is read as the option", async () => {
    const root = tempDir();
    b1 = await openBaton({ root, hostId: "ci-job-1" });
    const g = await b1.locks.acquire("x", { ttlMs: 60_000 });
    expect(g.holder.hostId).toBe(`ci-job-1@${hostIdentity(hostFacts)}`);
    expect(g.holder.host).toBe(hostFacts.host());
    expect(await code(openBaton({ root, hostId: "two words" }))).toBe("bad_input");
    expect(envOptions({ BATON_HOST_ID: "ci-job-1" })).toEqual({ hostId: "ci-job-1" });
    expect(envOptions({})).toEqual({});
    expect(() => envOptions({ BATON_HOST_ID: "a/b" })).toThrow(/BATON_HOST_ID=a\/b is invalid/);
  });

  it("this machine's identity: its boot and pid namespace on Linux, else its host name", () => {
    const id = hostIdentity(hostFacts);
    expect(id).toBe(hostFacts.hostId?.());
    if (process.platform === "linux") expect(id).toMatch(/^linux:[0-9a-f]{16}$/);
    else expect(id).toBe(`name:${hostFacts.host()}`);
    // Facts without an identity (a test's): the host name stands for it.
    expect(hostIdentity({ host: () => "h", alive: () => true, startTime: () => undefined })).toBe("name:h");
  });
});

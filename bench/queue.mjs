/**
 * The delivery queue.
 *
 * - Durable lease + ack: `lease()` then `ack()` (two write transactions, two fsyncs at FULL)
 *   per item, vs a raw better-sqlite3 queue doing the same two transactions (select + update
 *   to lease, update to ack) on a comparable table, same pragmas. Goal: ≥ 5,000 lease+ack/s.
 *   Measured two ways: one worker at a time (each pair pays its own two commits), and WORKERS
 *   workers at once, as agents polling one server do (their writes share commits: group
 *   commit), against a raw queue that leases WORKERS items in one transaction and acks them in
 *   another.
 * - Wake latency: a parked `waitForWork` and an `append` of work, time from the append's call
 *   to the lease in the waiter's hands. In-process (how the local server parks HTTP long-polls)
 *   and across connections (another process's append, seen through SQLite's data_version).
 *   Goal: p99 ≤ 10 ms.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { hr, info, interleave, loadBaton, openRaw, ratio, scaled, summarise, tempDir } from "./lib.mjs";

export const name = "queue";
export const title = "delivery queue: durable lease+ack, and long-poll wake latency";

async function cyclingSession(baton, id) {
  await baton.sessions.start({ flow: "live-variant", id });
  await baton.events.append(id, { type: "generate", actor: "browser" });
  await baton.events.append(id, { type: "source_wrapped", actor: "agent", data: { file: "a.html" } });
  await baton.events.append(id, { type: "variants_written", actor: "agent", data: { count: 1, expected: 1 } });
  await baton.events.append(id, { type: "cycling", actor: "browser" });
}

const RAW_DDL = `
  CREATE TABLE work (id INTEGER PRIMARY KEY, priority INTEGER NOT NULL, state TEXT NOT NULL,
    lease_id TEXT, lease_expires INTEGER, attempts INTEGER NOT NULL DEFAULT 0);
  CREATE INDEX work_ready ON work (state, priority, id);`;

const WORKERS = 16;

export async function run() {
  const { openBaton, openSqliteStore } = await loadBaton();
  const items = scaled(4_000, 200);
  const concurrentItems = items * 2 + WORKERS * 10;

  // Baton
  const root = tempDir("queue");
  // The store is opened here so its group-commit counters can be read (writeStats, not public API).
  mkdirSync(join(root, ".baton"), { recursive: true });
  const store = await openSqliteStore({ path: join(root, ".baton", "baton.db"), durability: "full" });
  const baton = await openBaton({ root, store });
  await cyclingSession(baton, "q");
  for (let done = 0; done < items + 200; done += 1_000) {
    await baton.events.appendBatch(
      "q",
      Array.from({ length: Math.min(1_000, items + 200 - done) }, (_, i) => ({ type: "steer", actor: "browser", data: { n: done + i } })),
    );
  }
  await cyclingSession(baton, "c");
  for (let done = 0; done < concurrentItems; done += 1_000) {
    await baton.events.appendBatch(
      "c",
      Array.from({ length: Math.min(1_000, concurrentItems - done) }, (_, i) => ({
        type: "steer",
        actor: "browser",
        data: { n: done + i },
      })),
    );
  }
  // Raw
  const rawDir = tempDir("queue-raw");
  const { db: raw } = openRaw(join(rawDir, "raw.db"), "FULL");
  raw.exec(RAW_DDL);
  const insert = raw.prepare("INSERT INTO work (priority, state) VALUES (20, 'ready')");
  raw.transaction(() => {
    for (let i = 0; i < items + 200 + concurrentItems; i++) insert.run();
  })();
  const pick = raw.prepare("SELECT id FROM work WHERE state = 'ready' ORDER BY priority, id LIMIT 1");
  const take = raw.prepare("UPDATE work SET state = 'leased', lease_id = ?, lease_expires = ?, attempts = attempts + 1 WHERE id = ?");
  const finish = raw.prepare("UPDATE work SET state = 'done' WHERE id = ? AND lease_id = ?");
  const rawLease = raw.transaction(() => {
    const row = pick.get();
    const leaseId = `l${row.id}`;
    take.run(leaseId, Date.now() + 60_000, row.id);
    return { id: row.id, leaseId };
  });
  const rawAck = raw.transaction((l) => finish.run(l.id, l.leaseId));
  const rawLeaseMany = raw.transaction((n) => Array.from({ length: n }, () => rawLease()));
  const rawAckMany = raw.transaction((ls) => {
    for (const l of ls) finish.run(l.id, l.leaseId);
  });

  const sides = [
    {
      label: "Baton lease + ack (FULL)",
      op: async () => {
        const l = await baton.work.lease("bench", { sessionId: "q", leaseMs: 60_000 });
        await baton.work.ack(l.leaseId);
      },
    },
    {
      label: "raw SQLite lease + ack (FULL)",
      op: () => rawAck.immediate(rawLease.immediate()),
    },
  ];
  const samples = await interleave(sides, { rounds: 10, perRound: Math.floor(items / 10), warmup: 100 });

  // WORKERS workers at once: each leases then acks its own item; an op is one pair from each.
  const worker = async (i) => {
    const l = await baton.work.lease(`w${i}`, { sessionId: "c", leaseMs: 60_000 });
    await baton.work.ack(l.leaseId);
  };
  const together = [
    { label: `Baton lease + ack, ${WORKERS} workers (FULL)`, op: () => Promise.all(Array.from({ length: WORKERS }, (_, i) => worker(i))) },
    { label: `raw SQLite, ${WORKERS} per transaction (FULL)`, op: () => rawAckMany.immediate(rawLeaseMany.immediate(WORKERS)) },
  ];
  const commitsBefore = store.writeStats;
  const concurrent = await interleave(together, { rounds: 10, perRound: Math.floor(items / 10 / WORKERS), warmup: 5 });
  const commitsAfter = store.writeStats;
  raw.close();

  // Wake latency, in-process.
  const wakes = scaled(300, 30);
  const inProcess = [];
  await cyclingSession(baton, "w");
  for (let i = 0; i < wakes; i++) {
    let t0 = 0n;
    const got = baton.work.waitFor("waiter", { sessionId: "w", timeoutMs: 5_000 }).then((l) => {
      inProcess.push(Number(hr() - t0));
      return l;
    });
    await new Promise((r) => setTimeout(r, 2));
    t0 = hr();
    await baton.events.append("w", { type: "steer", actor: "browser", data: { i } });
    const l = await got;
    await baton.work.ack(l.leaseId);
  }
  // Across connections: another Baton (its own connection) appends; the waiter sees it
  // through data_version, as a poll in one process sees a browser event posted to another.
  const other = await openBaton({ root, durability: "full" });
  const crossConn = [];
  for (let i = 0; i < wakes; i++) {
    let t0 = 0n;
    const got = baton.work.waitFor("waiter", { sessionId: "w", timeoutMs: 5_000 }).then((l) => {
      crossConn.push(Number(hr() - t0));
      return l;
    });
    await new Promise((r) => setTimeout(r, 2));
    t0 = hr();
    await other.events.append("w", { type: "steer", actor: "browser", data: { i } });
    const l = await got;
    await baton.work.ack(l.leaseId);
  }
  await other.close();
  await baton.close();

  const b = summarise(samples[sides[0].label]);
  const r = summarise(samples[sides[1].label]);
  const bc = summarise(concurrent[together[0].label], WORKERS);
  const rc = summarise(concurrent[together[1].label], WORKERS);
  const perCommit =
    commitsBefore && commitsAfter
      ? (commitsAfter.transactions - commitsBefore.transactions) / (commitsAfter.commits - commitsBefore.commits)
      : undefined;
  const wIn = summarise(inProcess);
  const wX = summarise(crossConn);
  return {
    rows: [
      { subject: sides[0].label, unit: "pairs", ...b },
      { subject: sides[1].label, unit: "pairs", ...r },
      { subject: together[0].label, unit: "pairs", ...bc },
      { subject: together[1].label, unit: "pairs", ...rc },
      { subject: "wake latency, in-process append → lease", unit: "wakes", ...wIn },
      { subject: "wake latency, other connection's append → lease", unit: "wakes", ...wX },
    ],
    ratios: [
      ratio(`Baton lease+ack per second, ${WORKERS} workers`, bc.opsPerSec, ">=", 5_000, "/s"),
      info("Baton / raw throughput, grouped", bc.opsPerSec / rc.opsPerSec),
      info("Baton lease+ack per second, one worker", b.opsPerSec, "/s"),
      info("Baton / raw throughput, one worker", b.opsPerSec / r.opsPerSec),
      ...(perCommit ? [info("write transactions per commit (all Baton writes above)", perCommit, "")] : []),
      ratio("wake p99, in-process", wIn.p99Ms, "<=", 10, "ms"),
      ratio("wake p99, across connections", wX.p99Ms, "<=", 10, "ms"),
    ],
    notes: [
      "lease+ack is two write transactions, so two fsyncs per item at FULL on both sides when one worker runs",
      `with ${WORKERS} workers, Baton's concurrent writes share commits (group commit); the raw peer batches by hand`,
      "wake latency includes the append's own commit (one fsync at FULL)",
      "across connections, the waiter notices a commit through PRAGMA data_version, polled every 2 ms while it waits",
    ],
  };
}

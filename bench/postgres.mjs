/**
 * Baton on PostgreSQL, side by side with its baselines on the same cluster in the same run
 * (issue 12 §4; docs/benchmarks.md, "PostgreSQL"). Run after a build:
 *
 *   node bench/postgres.mjs                 # starts a throwaway cluster (Debian's server binaries)
 *   BENCH_PG_URL=postgres://… node bench/postgres.mjs   # or uses yours (creates schemas in it)
 *
 * Every side runs at synchronous_commit = on: an acknowledged write is committed.
 *
 * - lease+ack per second, 16 workers in one process: Baton (`lease` then `ack` per item; the
 *   process's concurrent leases share one claim statement and its acks one ack statement) vs
 *   pg-boss (`fetch` then `complete`) vs a raw `FOR UPDATE SKIP LOCKED` queue (one UPDATE to
 *   lease, one to finish, per item: what a plain queue does). Also Baton unbatched: 16 Batons
 *   with one worker each (16 processes would be the same), so nothing is shared. Goals: ≥ 10×
 *   pg-boss, ≥ 0.8× raw.
 * - durable append per second, 1, 4 and 16 writers split over two OS processes
 *   (bench/pg-peer.mjs): Baton `append` vs LangGraph's PostgresSaver `put` (goal ≥ 1×) vs a raw
 *   INSERT of the event with its session's seq bump in one transaction.
 * - wake latency across processes: a `work.waitFor` parked in one process, an append of work in
 *   the other; from the append's commit (its promise resolved) to the lease in the waiter's
 *   hands (NOTIFY, then the waiter's claim). Goal: p99 ≤ 10 ms.
 * - a Claude Code PreToolUse hook process on a PostgreSQL store, with and without the
 *   workspace's hook server, beside SQLite and a store that is down.
 *
 * It takes no arguments (`--help` prints this); the environment says the rest:
 *
 *   BENCH_PG_URL=postgres://…           use this cluster instead of a throwaway one
 *   BENCH_ONLY=lease,append,wake,hooks  run only those parts
 *   BENCH_SCALE=0.2                     shorten the loops (a smoke run)
 */
import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import pg from "pg";
import { cleanupAll, commandLine, hr, loadBaton, REPO, scaled, summarise, tempDir } from "./lib.mjs";
import { cluster, cpuLoops, peer, steerSession } from "./pg-lib.mjs";

commandLine(import.meta.url);

const WORKERS = 16;
const ONLY = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(",")) : undefined;
const part = (name) => !ONLY || ONLY.has(name);
const wall = () => performance.timeOrigin + performance.now();

/** CPU time (ms) of the server's processes so far (NaN on a cluster given by BENCH_PG_URL). */
let serverCpu = () => Number.NaN;
const loops = (workers, work) => cpuLoops(workers, work, () => serverCpu());

async function rawQueue(url, items) {
  const pool = new pg.Pool({ connectionString: url, max: WORKERS });
  await pool.query(`DROP TABLE IF EXISTS raw_work;
    CREATE TABLE raw_work (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, priority int NOT NULL, state text NOT NULL,
      lease_id text, lease_expires bigint, attempts int NOT NULL DEFAULT 0);
    CREATE INDEX raw_work_ready ON raw_work (priority, id) WHERE state = 'ready';`);
  await pool.query("INSERT INTO raw_work (priority, state) SELECT 20, 'ready' FROM generate_series(1, $1)", [items]);
  const r = await loops(WORKERS, async (w) => {
    const leased = await pool.query(
      `UPDATE raw_work SET state = 'leased', lease_id = $1, lease_expires = $2, attempts = attempts + 1
       WHERE id = (SELECT id FROM raw_work WHERE state = 'ready' ORDER BY priority, id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id`,
      [`l${w}-${Math.random()}`, Date.now() + 60_000],
    );
    if (leased.rowCount === 0) return false;
    await pool.query("UPDATE raw_work SET state = 'done' WHERE id = $1 AND state = 'leased'", [leased.rows[0].id]);
    return true;
  });
  await pool.end();
  return r;
}

async function pgBoss(url, items) {
  const mod = await import("pg-boss");
  const PgBoss = mod.default ?? mod;
  const boss = new PgBoss({ connectionString: url, schema: "bench_pgboss", max: WORKERS });
  boss.on("error", () => undefined);
  await boss.start();
  await boss.createQueue("work");
  for (let done = 0; done < items; done += 500) {
    await boss.insert(Array.from({ length: Math.min(500, items - done) }, (_, i) => ({ name: "work", data: { n: done + i } })));
  }
  const r = await loops(WORKERS, async () => {
    const jobs = await boss.fetch("work", { batchSize: 1 });
    if (!jobs || jobs.length === 0) return false;
    await boss.complete("work", jobs[0].id);
    return true;
  });
  await boss.stop({ graceful: false, wait: true });
  return r;
}

/** lease+ack: Baton batched and unbatched, raw, pg-boss; returns items/s of each. */
async function leaseAck(url, openPg) {
  const items = scaled(4_000, 200);
  const project = `bench_q_${process.pid}`;
  const baton = await openPg(project, WORKERS);
  await steerSession(baton, "q", items);
  const batched = await loops(WORKERS, async (w) => {
    const l = await baton.work.lease(`w${w}`);
    if (!l) return false;
    await baton.work.ack(l.leaseId);
    return true;
  });
  await steerSession(baton, "q1", items);
  const singles = [];
  for (let w = 0; w < WORKERS; w++) singles.push(await openPg(project, 1));
  const unbatched = await loops(WORKERS, async (w) => {
    const l = await singles[w].work.lease(`w${w}`);
    if (!l) return false;
    await singles[w].work.ack(l.leaseId);
    return true;
  });
  for (const b of [baton, ...singles]) await b.close();
  const raw = await rawQueue(url, items);
  const boss = await pgBoss(url, items);
  return { batched, unbatched, raw, boss };
}

/** Durable appends, 1, 4 and 16 writers split over the two peers; returns appends/s per side and count. */
async function appends(url, peers) {
  const setup = new pg.Pool({ connectionString: url, max: 2 });
  await setup.query(`DROP TABLE IF EXISTS raw_events; DROP TABLE IF EXISTS raw_sessions;
    CREATE TABLE raw_sessions (id text PRIMARY KEY, last_seq bigint NOT NULL);
    CREATE TABLE raw_events (session_id text, seq bigint, id text, type text, data text, at text, PRIMARY KEY (session_id, seq));`);
  const saver = new PostgresSaver(setup, undefined, { schema: "bench_langgraph" });
  await saver.setup();
  await setup.end();
  const per = scaled(100, 20);
  const rounds = 3;
  const out = {};
  for (const writers of [1, 4, 16]) {
    const kinds = ["baton", "langgraph", "raw"];
    const total = Object.fromEntries(kinds.map((k) => [k, { ops: 0, ms: 0, cpuMs: 0 }]));
    for (const kind of kinds) {
      const ids = Array.from({ length: writers }, (_, w) => `${kind}-${writers}-${w}`);
      await Promise.all(peers.map((p, i) => p.call("prepare", { kind, ids: ids.filter((_, k) => k % 2 === i) })));
    }
    // Rounds with the order rotated, so drift in the machine's load hits every side alike.
    for (let round = 0; round < rounds; round++) {
      for (let k = 0; k < kinds.length; k++) {
        const kind = kinds[(round + k) % kinds.length];
        const ids = Array.from({ length: writers }, (_, w) => `${kind}-${writers}-${w}`);
        const startAt = wall() + 50;
        const server0 = serverCpu();
        const runs = await Promise.all(
          peers.map((p, i) => p.call("run", { kind, ids: ids.filter((_, x) => x % 2 === i), per, from: round * per, startAt })),
        );
        const busy = runs.filter((r) => r.ops > 0);
        total[kind].ops += busy.reduce((a, r) => a + r.ops, 0);
        total[kind].ms += Math.max(...busy.map((r) => r.t1)) - Math.min(...busy.map((r) => r.t0));
        total[kind].cpuMs += runs.reduce((a, r) => a + r.cpuMs, 0) + serverCpu() - server0;
      }
    }
    for (const kind of kinds) {
      out[`${kind}/${writers}`] = (total[kind].ops / total[kind].ms) * 1000;
      out[`${kind}/${writers}/cpu`] = (total[kind].cpuMs * 1000) / total[kind].ops;
    }
  }
  return out;
}

/** Wake latency: peer 0 parks a long-poll, peer 1 appends work; ms from commit (and from the call) to the lease. */
async function wake(url, peers) {
  const [waiter, writer] = peers;
  await writer.call("start", { session: "wake" });
  await waiter.call("start", { url, listen: true });
  const fromCommit = [];
  const fromCall = [];
  const notice = [];
  const claim = [];
  for (let i = 0, rounds = scaled(200, 30); i < rounds; i++) {
    await waiter.call("park", { session: "wake" });
    const [woken, appended] = await Promise.all([waiter.call("woken"), writer.call("append", { session: "wake", i })]);
    if (!woken.leased) throw new Error("the parked long-poll timed out without its work");
    fromCommit.push(Math.max(0, woken.t - appended.t1) * 1e6);
    fromCall.push((woken.t - appended.t0) * 1e6);
    // The two hops: the notice reaching the waiter's process (from the append's call: the NOTIFY
    // goes out as the commit returns), then the waiter's claim.
    if (woken.heard !== undefined) {
      notice.push(Math.max(0, woken.heard - appended.t1) * 1e6);
      claim.push(Math.max(0, woken.t - woken.heard) * 1e6);
    }
  }
  return { fromCommit: summarise(fromCommit), fromCall: summarise(fromCall), notice: summarise(notice), claim: summarise(claim) };
}

async function main() {
  const { openBaton, openPostgresStore } = await loadBaton();
  const c = await cluster();
  const openPg = async (project, poolSize) =>
    openBaton({ root: tempDir("pg"), store: await openPostgresStore({ url: c.url, project, poolSize }) });
  serverCpu = () => c.cpuMs();
  const loads = [os.loadavg()[0]];
  const rows = [];
  const notes = [];
  const peers = [peer(), peer()];
  try {
    if (part("lease")) {
      const q = await leaseAck(c.url, openPg);
      rows.push(["lease+ack/s, 16 workers, batched", q.batched.perSec, { "pg-boss": q.boss.perSec, raw: q.raw.perSec }]);
      rows.push(["lease+ack/s, 16 workers, unbatched (16 Batons)", q.unbatched.perSec, { "pg-boss": q.boss.perSec, raw: q.raw.perSec }]);
      const cpu = (k) => `${q[k].cpuUs.toFixed(0)} µs`;
      notes.push(
        `lease+ack CPU per item (this process + server): batched ${cpu("batched")}, unbatched ${cpu("unbatched")}, raw ${cpu("raw")}, pg-boss ${cpu("boss")}`,
      );
      loads.push(os.loadavg()[0]);
    }
    const project = `bench_a_${process.pid}`;
    for (const p of peers) await p.call("open", { url: c.url, project });
    if (part("append")) {
      const a = await appends(c.url, peers);
      for (const w of [1, 4, 16]) {
        const label = `durable append/s, ${w} writer(s), two processes`;
        rows.push([label, a[`baton/${w}`], { langgraph: a[`langgraph/${w}`], raw: a[`raw/${w}`] }]);
        const cpu = (k) => `${a[`${k}/${w}/cpu`].toFixed(0)} µs`;
        notes.push(
          `append CPU per append, ${w} writer(s) (both processes + server): Baton ${cpu("baton")}, LangGraph ${cpu("langgraph")}, raw ${cpu("raw")}`,
        );
      }
      loads.push(os.loadavg()[0]);
    }
    if (part("wake")) {
      const wk = await wake(c.url, peers);
      rows.push(["wake across processes, commit → lease (ms)", wk.fromCommit, {}]);
      rows.push(["wake across processes, append call → lease (ms)", wk.fromCall, {}]);
      rows.push(["  first hop: commit → notice in the waiter's process (ms)", wk.notice, {}]);
      rows.push(["  second hop: notice → lease in hand (ms)", wk.claim, {}]);
      loads.push(os.loadavg()[0]);
    }
    for (const p of peers) await p.stop();
    if (part("hooks")) {
      for (const [label, s] of await hooks(c.url)) rows.push([label, s, {}]);
      loads.push(os.loadavg()[0]);
    }
  } finally {
    for (const p of peers) await p.stop();
    c.stop();
    cleanupAll();
  }
  for (const [label, v, base] of rows) {
    if (typeof v === "number") {
      const cmp = Object.entries(base)
        .map(([k, x]) => `${k} ${x.toFixed(0)}/s (${(v / x).toFixed(2)}×)`)
        .join(", ");
      console.log(`${label}: Baton ${v.toFixed(0)}/s${cmp ? `; ${cmp}` : ""}`);
    } else
      console.log(`${label}: median ${v.medianMs.toFixed(2)}, p99 ${v.p99Ms.toFixed(2)}, max ${v.maxMs.toFixed(2)} (${v.samples} samples)`);
  }
  for (const n of notes) console.log(n);
  console.log(`load average (1 min) at start and after each part: ${loads.map((l) => l.toFixed(1)).join(", ")}`);
}

/**
 * A Claude Code PreToolUse (Bash) hook process, as the agent runs it on every tool call: on
 * SQLite, on the PostgreSQL store without and with the workspace's hook server, and with the
 * store down (fail open: how long the agent waits).
 */
async function hooks(url) {
  const runs = scaled(20, 5);
  const baton = (args, opts) => spawnSync(process.execPath, [join(REPO, "bin", "baton.cjs"), ...args], opts);
  const hookOn = async (env, withServer) => {
    const root = tempDir("hook");
    const e = { ...process.env, ...env };
    const init = baton(["init", "--root", root], { env: { ...e, BATON_STORE: "" } });
    if (init.status !== 0) throw new Error(`baton init failed: ${init.stderr}`);
    const input = readFileSync(join(REPO, "test", "fixtures", "hooks", "claude", "pre-bash.json"), "utf8")
      .split("{{cwd}}")
      .join(root)
      .split("{{session}}")
      .join("bench-session")
      .split("{{call}}")
      .join("call-1");
    let server;
    if (withServer) {
      server = spawn(process.execPath, [join(REPO, "bin", "baton.cjs"), "serve", "--root", root, "--port", "0"], {
        env: e,
        stdio: "ignore",
      });
      await waitForServer(root);
    }
    try {
      baton(["hook", "claude", "SessionStart"], { cwd: root, input: input.replace('"PreToolUse"', '"SessionStart"'), env: e });
      const ns = [];
      for (let i = 0; i < runs; i++) {
        const t0 = hr();
        const r = baton(["hook", "claude", "PreToolUse"], { cwd: root, input, env: e });
        ns.push(Number(hr() - t0));
        if (r.status !== 0) throw new Error(`hook exited ${r.status}: ${r.stderr}`);
      }
      return summarise(ns);
    } finally {
      server?.kill("SIGTERM");
      if (server) await new Promise((r) => server.once("exit", r));
    }
  };
  const project = `bench_hooks_${process.pid}`;
  const pgEnv = { BATON_STORE: url, BATON_PROJECT: project };
  return [
    ["hook PreToolUse process, SQLite, no server (ms)", await hookOn({ BATON_STORE: "", BATON_HOOK_SERVER: "0" }, false)],
    ["hook PreToolUse process, PostgreSQL, no server (ms)", await hookOn({ ...pgEnv, BATON_HOOK_SERVER: "0" }, false)],
    ["hook PreToolUse process, PostgreSQL, hook server running (ms)", await hookOn(pgEnv, true)],
    [
      "hook PreToolUse process, PostgreSQL down, fails open (ms)",
      await hookOn({ BATON_STORE: "postgres://baton@127.0.0.1:1/postgres", BATON_PROJECT: project, BATON_HOOK_SERVER: "0" }, false),
    ],
  ];
}

/** Until `baton serve` has written .baton/server.json and answers. */
async function waitForServer(root) {
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      const info = JSON.parse(readFileSync(join(root, ".baton", "server.json"), "utf8"));
      const r = await fetch(`http://127.0.0.1:${info.port}/v1/health`);
      if (r.ok) return;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error("baton serve did not start within 15 s");
    await new Promise((r) => setTimeout(r, 50));
  }
}

await main();

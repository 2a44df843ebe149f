/**
 * Baton on PostgreSQL, side by side with its baselines on the same cluster in the same run
 * (issue 12 §4; docs/benchmarks.md, "PostgreSQL"). Run after a build:
 *
 *   node bench/postgres.mjs                 # starts a throwaway cluster (Debian's server binaries)
 *   BENCH_PG_URL=postgres://… node bench/postgres.mjs   # or uses yours (creates schemas in it)
 *
 * - lease+ack per second, 16 workers: Baton (`lease` then `ack`, two write transactions per
 *   item) vs pg-boss (`fetch` then `complete`) vs a raw `FOR UPDATE SKIP LOCKED` queue doing the
 *   same two transactions. Goals: ≥ 10× pg-boss, ≥ 0.8× raw.
 * - durable append per second (synchronous_commit = on on every side): Baton `append` vs a raw
 *   INSERT of the same row with its session update, 1, 4 and 16 concurrent writers split over
 *   two Baton instances (two pools, as two processes would have).
 * - wake latency across connections: a `waitForWork` parked on one instance, an append of work
 *   on the other; time from the append's call to the lease in the waiter's hands (NOTIFY).
 *   Goal: p99 ≤ 10 ms.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import os from "node:os";
import { join } from "node:path";
import pg from "pg";
import { cleanupAll, hr, loadBaton, REPO, scaled, summarise, tempDir } from "./lib.mjs";

const WORKERS = 16;

async function freePort() {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** A throwaway cluster like test/pg-cluster.ts (fsync on: the numbers are durable ones). */
async function cluster() {
  if (process.env.BENCH_PG_URL) return { url: process.env.BENCH_PG_URL, stop() {} };
  const which = spawnSync("sh", ["-c", "command -v initdb"], { encoding: "utf8" });
  let bin = which.status === 0 ? which.stdout.trim().replace(/\/initdb$/, "") : "";
  if (!bin && existsSync("/usr/lib/postgresql")) {
    const v = readdirSync("/usr/lib/postgresql").sort((a, b) => Number(b) - Number(a))[0];
    if (v) bin = join("/usr/lib/postgresql", v, "bin");
  }
  if (!bin) throw new Error("no PostgreSQL server binaries: apt-get install -y postgresql, or set BENCH_PG_URL");
  const root = process.getuid?.() === 0;
  const dir = mkdtempSync(join(os.tmpdir(), "baton-bench-pg-"));
  const data = join(dir, "data");
  const as = (cmd, args) =>
    execFileSync(root ? "runuser" : join(bin, cmd), root ? ["-u", "postgres", "--", join(bin, cmd), ...args] : args, { stdio: "pipe" });
  if (root) execFileSync("chown", ["postgres:postgres", dir]);
  as("initdb", ["-D", data, "-U", "baton", "--auth=trust", "-E", "UTF8", "--locale=C"]);
  const port = await freePort();
  as("pg_ctl", [
    "-D",
    data,
    "-l",
    join(dir, "log"),
    "-w",
    "-o",
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=300`,
    "start",
  ]);
  return {
    url: `postgres://baton@127.0.0.1:${port}/postgres`,
    stop() {
      as("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function steerSession(baton, id, n) {
  await baton.sessions.start({ flow: "live-variant", id });
  for (let done = 0; done < n; done += 500) {
    await baton.events.appendBatch(
      id,
      Array.from({ length: Math.min(500, n - done) }, (_, i) => ({ type: "steer", actor: "browser", data: { n: done + i } })),
    );
  }
}

/** Run `work` on `workers` concurrent loops until it returns false; returns ops/s. */
async function loops(workers, work) {
  let ops = 0;
  const t0 = hr();
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      while (await work(w)) ops++;
    }),
  );
  const s = Number(hr() - t0) / 1e9;
  return { ops, perSec: ops / s };
}

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

async function main() {
  const { openBaton, openPostgresStore } = await loadBaton();
  const c = await cluster();
  const rows = [];
  try {
    const items = scaled(4_000, 200);
    // lease + ack, 16 workers
    const project = `bench_${process.pid}`;
    const baton = await openBaton({ root: tempDir("pg"), store: await openPostgresStore({ url: c.url, project, poolSize: WORKERS }) });
    await steerSession(baton, "q", items);
    const b = await loops(WORKERS, async (w) => {
      const l = await baton.work.lease(`w${w}`);
      if (!l) return false;
      await baton.work.ack(l.leaseId);
      return true;
    });
    const raw = await rawQueue(c.url, items);
    const boss = await pgBoss(c.url, items);
    rows.push(["lease+ack/s, 16 workers", b.perSec, { "pg-boss": boss.perSec, raw: raw.perSec }]);

    // durable appends: 1, 4, 16 writers over two instances (two pools)
    const other = await openBaton({ root: tempDir("pg2"), store: await openPostgresStore({ url: c.url, project, poolSize: WORKERS }) });
    const rawPool = new pg.Pool({ connectionString: c.url, max: WORKERS });
    await rawPool.query(`DROP TABLE IF EXISTS raw_events; DROP TABLE IF EXISTS raw_sessions;
      CREATE TABLE raw_sessions (id text PRIMARY KEY, last_seq bigint NOT NULL);
      CREATE TABLE raw_events (session_id text, seq bigint, id text, type text, data text, at text, PRIMARY KEY (session_id, seq));`);
    const perWriterOps = scaled(400, 40);
    for (const writers of [1, 4, 16]) {
      for (let w = 0; w < writers; w++) {
        await baton.sessions.start({ flow: "task", id: `a${writers}-${w}` });
        await rawPool.query("INSERT INTO raw_sessions VALUES ($1, 0)", [`a${writers}-${w}`]);
      }
      const counts = new Array(writers).fill(0);
      const bt = await loops(writers, async (w) => {
        if (counts[w]++ >= perWriterOps) return false;
        await (w % 2 ? other : baton).append(`a${writers}-${w}`, { type: "note:added", data: { text: `n${counts[w]}` } });
        return true;
      });
      counts.fill(0);
      const rt = await loops(writers, async (w) => {
        if (counts[w]++ >= perWriterOps) return false;
        const client = await rawPool.connect();
        try {
          await client.query("BEGIN");
          const s = await client.query("UPDATE raw_sessions SET last_seq = last_seq + 1 WHERE id = $1 RETURNING last_seq", [
            `a${writers}-${w}`,
          ]);
          await client.query("INSERT INTO raw_events VALUES ($1, $2, $3, 'note:added', $4, $5)", [
            `a${writers}-${w}`,
            s.rows[0].last_seq,
            `e${Math.random()}`,
            JSON.stringify({ text: `n${counts[w]}` }),
            new Date().toISOString(),
          ]);
          await client.query("COMMIT");
        } finally {
          client.release();
        }
        return true;
      });
      rows.push([`durable append/s, ${writers} writer(s), two instances`, bt.perSec, { raw: rt.perSec }]);
    }
    await rawPool.end();

    // wake latency across instances (LISTEN/NOTIFY)
    await baton.sessions.start({ flow: "live-variant", id: "wake" });
    const samples = [];
    const rounds = scaled(200, 30);
    for (let i = 0; i < rounds; i++) {
      let t0 = 0n;
      const waiter = baton.work.waitFor("waiter", { sessionId: "wake", timeoutMs: 5_000 });
      await new Promise((r) => setTimeout(r, 5));
      t0 = hr();
      await other.events.append("wake", { type: "steer", actor: "browser", data: { i } });
      const l = await waiter;
      samples.push(Number(hr() - t0));
      if (l) await baton.work.ack(l.leaseId);
    }
    const wake = summarise(samples);
    rows.push(["wake latency across instances (NOTIFY)", wake, {}]);
    await baton.close();
    await other.close();

    // Hooks: a Claude Code PreToolUse (Bash) hook process, SQLite vs the PostgreSQL store, and
    // with the server down (fail open: how long the agent waits).
    const hookRuns = scaled(20, 5);
    const hookOn = (env) => {
      const root = tempDir("hook");
      const init = spawnSync(process.execPath, [join(REPO, "bin", "baton.cjs"), "init", "--root", root], {
        env: { ...process.env, BATON_STORE: "" },
      });
      if (init.status !== 0) throw new Error(`baton init failed: ${init.stderr}`);
      const input = readFileSync(join(REPO, "test", "fixtures", "hooks", "claude", "pre-bash.json"), "utf8")
        .split("{{cwd}}")
        .join(root)
        .split("{{session}}")
        .join("bench-session")
        .split("{{call}}")
        .join("call-1");
      spawnSync(process.execPath, [join(REPO, "bin", "baton.cjs"), "hook", "claude", "SessionStart"], {
        cwd: root,
        input: input.replace('"PreToolUse"', '"SessionStart"'),
        env: { ...process.env, ...env },
      });
      const ns = [];
      for (let i = 0; i < hookRuns; i++) {
        const t0 = hr();
        const r = spawnSync(process.execPath, [join(REPO, "bin", "baton.cjs"), "hook", "claude", "PreToolUse"], {
          cwd: root,
          input,
          env: { ...process.env, ...env },
        });
        ns.push(Number(hr() - t0));
        if (r.status !== 0) throw new Error(`hook exited ${r.status}: ${r.stderr}`);
      }
      return summarise(ns);
    };
    const hookProject = `bench_hooks_${process.pid}`;
    rows.push(["hook PreToolUse process, SQLite", hookOn({ BATON_STORE: "", BATON_HOOK_SERVER: "0" }), {}]);
    rows.push([
      "hook PreToolUse process, PostgreSQL store",
      hookOn({ BATON_STORE: c.url, BATON_PROJECT: hookProject, BATON_HOOK_SERVER: "0" }),
      {},
    ]);
    rows.push([
      "hook PreToolUse process, PostgreSQL down (fails open)",
      hookOn({ BATON_STORE: "postgres://baton@127.0.0.1:1/postgres", BATON_PROJECT: hookProject, BATON_HOOK_SERVER: "0" }),
      {},
    ]);
  } finally {
    c.stop();
    cleanupAll();
  }
  for (const [label, v, base] of rows) {
    if (typeof v === "number") {
      const cmp = Object.entries(base)
        .map(([k, x]) => `${k} ${x.toFixed(0)}/s (${(v / x).toFixed(2)}×)`)
        .join(", ");
      console.log(`${label}: Baton ${v.toFixed(0)}/s${cmp ? `; ${cmp}` : ""}`);
    } else console.log(`${label}: ${JSON.stringify(v)}`);
  }
}

await main();

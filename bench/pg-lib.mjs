/**
 * What bench/postgres.mjs and bench/pg-ab.mjs need around PostgreSQL: a throwaway cluster, peer
 * processes (bench/pg-peer.mjs) they talk to over IPC, a queue to lease from, and worker loops.
 */
import { execFileSync, fork, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import os from "node:os";
import { join } from "node:path";
import { hr, REPO } from "./lib.mjs";

/** USER_HZ, the unit of /proc/<pid>/stat's times (100 on Linux everywhere in practice). */
const CLOCK_TICKS = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout.trim()) || 100;

async function freePort() {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** A throwaway cluster like test/pg-cluster.ts, but with fsync on: the numbers are durable ones. */
export async function cluster() {
  if (process.env.BENCH_PG_URL) return { url: process.env.BENCH_PG_URL, cpuMs: () => Number.NaN, stop() {} };
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
    /** CPU time (ms) the server's processes have used so far: the postmaster and every backend it runs. */
    cpuMs() {
      const postmaster = Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0]);
      let ticks = 0;
      for (const pid of readdirSync("/proc")) {
        if (!/^\d+$/.test(pid)) continue;
        let stat;
        try {
          stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        } catch {
          continue; // gone meanwhile
        }
        // Fields after the command (which may hold spaces): state, ppid, …; utime and stime are 14 and 15.
        const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        if (Number(pid) === postmaster || Number(f[1]) === postmaster) ticks += Number(f[11]) + Number(f[12]);
      }
      return (ticks * 1000) / CLOCK_TICKS;
    },
    stop() {
      as("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A bench/pg-peer.mjs process; `call(op, args)` resolves with its answer. */
export function peer() {
  const child = fork(join(REPO, "bench", "pg-peer.mjs"), { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const pending = new Map();
  let next = 0;
  child.on("message", (m) => {
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (m.ok) p?.resolve(m.value);
    else p?.reject(new Error(`peer ${child.pid}: ${m.error}`));
  });
  child.on("exit", (code) => {
    for (const p of pending.values()) p.reject(new Error(`peer ${child.pid} exited with ${code}`));
    pending.clear();
  });
  let stopping;
  return {
    call(op, args = {}) {
      if (!child.connected) return Promise.reject(new Error(`peer ${child.pid} is gone`));
      const id = next++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        child.send({ ...args, id, op });
      });
    },
    /** Close its stores and end it; idempotent. */
    stop() {
      stopping ??= this.call("close")
        .catch(() => undefined)
        .then(() => child.kill());
      return stopping;
    },
  };
}

/** A live-variant session of `n` steer events: n ready work items. */
export async function steerSession(baton, id, n) {
  await baton.sessions.start({ flow: "live-variant", id });
  for (let done = 0; done < n; done += 500) {
    await baton.events.appendBatch(
      id,
      Array.from({ length: Math.min(500, n - done) }, (_, i) => ({ type: "steer", actor: "browser", data: { n: done + i } })),
    );
  }
}

/**
 * Run `work` on `workers` concurrent loops until it returns false; returns ops/s, and the CPU
 * this process and the server (`serverCpu`, ms so far) spent per op (µs): where other jobs share
 * the machine, throughput follows how much of it each side gets, CPU per op does not.
 */
export async function cpuLoops(workers, work, serverCpu) {
  const cpuNow = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000 + serverCpu();
  };
  let ops = 0;
  const t0 = hr();
  const c0 = cpuNow();
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      while (await work(w)) ops++;
    }),
  );
  const s = Number(hr() - t0) / 1e9;
  return { ops, perSec: ops / s, cpuUs: ((cpuNow() - c0) * 1000) / ops };
}

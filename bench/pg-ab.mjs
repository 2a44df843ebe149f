/**
 * Two builds of Baton side by side on one PostgreSQL cluster, to measure a change to the
 * PostgreSQL backend (docs/benchmarks.md, "PostgreSQL"):
 *
 *   node bench/pg-ab.mjs <rootA> <rootB> [rounds]
 *
 * A root is a directory with Baton's built `dist/` (a checkout, or a copy of one's `dist/` placed
 * where `pg` and the peers' packages resolve, e.g. beside this repository's node_modules). In
 * every round, in an order that alternates: durable appends with 4 and 16 writers over two fresh
 * peer processes per build (bench/pg-peer.mjs, as bench/postgres.mjs runs them), LangGraph's
 * `put` alongside for the ratio; then lease+ack with 16 workers in this process, 4,000 items, one
 * build after the other. Prints each side's medians over the rounds: throughput, and CPU per
 * operation (processes + server), which other jobs on the machine move far less.
 * BENCH_ONLY=append or lease runs one part.
 */
import os from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import pg from "pg";
import { cleanupAll, commandLine, median, tempDir } from "./lib.mjs";
import { cluster, cpuLoops, peer, steerSession } from "./pg-lib.mjs";

const [rootA, rootB, roundsArg = "4"] = commandLine(import.meta.url, { positional: [0, 3] });
const rounds = Number(roundsArg);
if (!rootA || !rootB || !Number.isInteger(rounds) || rounds < 1) {
  console.error("usage: node bench/pg-ab.mjs <rootA> <rootB> [rounds=4, a whole number ≥ 1]");
  process.exit(2);
}
const builds = { A: resolve(rootA), B: resolve(rootB) };
const ONLY = process.env.BENCH_ONLY;
const PER = 300;
const ITEMS = 4_000;
const wall = () => performance.timeOrigin + performance.now();

const c = await cluster();
const results = {};
const add = (key, v) => {
  results[key] ??= [];
  results[key].push(v);
};
let projects = 0;

/** One side's appends: `writers` writers split over two fresh peers of `root`, PER appends each after a warm-up. */
async function appendSide(label, root, kind, writers) {
  process.env.BATON_BENCH_TARGET = root; // the peers load this build
  const peers = [peer(), peer()];
  const project = `ab_${process.pid}_${projects++}`;
  try {
    for (const p of peers) await p.call("open", { url: c.url, project });
    const ids = Array.from({ length: writers }, (_, w) => `${kind}-${project}-${w}`);
    const mine = (i) => ids.filter((_, k) => k % 2 === i);
    await Promise.all(peers.map((p, i) => p.call("prepare", { kind, ids: mine(i) })));
    await Promise.all(peers.map((p, i) => p.call("run", { kind, ids: mine(i), per: 40, from: 0, startAt: wall() + 20 })));
    const startAt = wall() + 50;
    const server0 = c.cpuMs();
    const runs = await Promise.all(peers.map((p, i) => p.call("run", { kind, ids: mine(i), per: PER, from: 40, startAt })));
    const busy = runs.filter((r) => r.ops > 0);
    const ops = busy.reduce((a, r) => a + r.ops, 0);
    const ms = Math.max(...busy.map((r) => r.t1)) - Math.min(...busy.map((r) => r.t0));
    const cpuMs = runs.reduce((a, r) => a + r.cpuMs, 0) + c.cpuMs() - server0;
    add(`append ${writers} ${label} /s`, (ops / ms) * 1000);
    add(`append ${writers} ${label} µs CPU`, (cpuMs * 1000) / ops);
  } finally {
    for (const p of peers) await p.stop();
  }
}

/** One build's lease+ack: 16 workers of one Baton (pool of 16) over ITEMS ready items. */
async function leaseSide(label, root) {
  const { openBaton, openPostgresStore } = await import(pathToFileURL(join(root, "dist", "index.js")).href);
  const store = await openPostgresStore({ url: c.url, project: `abq_${process.pid}_${projects++}`, poolSize: 16 });
  const baton = await openBaton({ root: tempDir("pg-ab"), store });
  try {
    await steerSession(baton, "q", ITEMS);
    const r = await cpuLoops(
      16,
      async (w) => {
        const l = await baton.work.lease(`w${w}`);
        if (!l) return false;
        await baton.work.ack(l.leaseId);
        return true;
      },
      () => c.cpuMs(),
    );
    add(`lease+ack ${label} /s`, r.perSec);
    add(`lease+ack ${label} µs CPU`, r.cpuUs);
  } finally {
    await baton.close();
  }
}

try {
  if (ONLY !== "lease") {
    const setup = new pg.Pool({ connectionString: c.url, max: 2 });
    await new PostgresSaver(setup, undefined, { schema: "bench_langgraph" }).setup();
    await setup.end();
  }
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? ["A", "B"] : ["B", "A"];
    if (ONLY !== "lease") {
      for (const writers of [4, 16]) {
        for (const label of order) await appendSide(label, builds[label], "baton", writers);
        await appendSide("LangGraph", builds.A, "langgraph", writers);
      }
    }
    if (ONLY !== "append") for (const label of order) await leaseSide(label, builds[label]);
    process.stderr.write(`round ${r + 1} of ${rounds}, load ${os.loadavg()[0].toFixed(1)}\n`);
  }
} finally {
  c.stop();
  cleanupAll();
}
for (const [key, xs] of Object.entries(results)) {
  console.log(`${key}: median ${median(xs).toFixed(0)} [${xs.map((x) => x.toFixed(0)).join(" ")}]`);
}
for (const part of ["append 4", "append 16", "lease+ack"]) {
  const a = results[`${part} A /s`];
  const b = results[`${part} B /s`];
  if (a && b) console.log(`${part}: B / A ${(median(b) / median(a)).toFixed(3)}`);
}
console.log(`load average (1 min) at the end: ${os.loadavg()[0].toFixed(1)}`);

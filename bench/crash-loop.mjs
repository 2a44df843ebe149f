/**
 * The queue crash loop at length: queue workers (test/fixtures/queue-worker.mjs) are killed with
 * SIGKILL at random moments, mid-lease or between calls, for N iterations (default 10,000; the
 * test suite runs the same loop for 200). At the end nothing may be lost and nothing acked twice.
 *
 *   node scripts/build.mjs --no-types && node bench/crash-loop.mjs [iterations] [parallel]
 *
 * Prints progress every 500 iterations and a summary; exits 1 if an invariant fails. Not part
 * of `bench/run.mjs` (10,000 iterations take roughly half an hour on 2 cores).
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import Database from "better-sqlite3";
import { cleanupAll, commandLine, loadBaton, REPO, tempDir } from "./lib.mjs";

const [iterationsArg = "10000", parallelArg = "2"] = commandLine(import.meta.url, { positional: [0, 2] });
const iterations = Number(iterationsArg);
const parallel = Number(parallelArg);
if (!Number.isInteger(iterations) || iterations < 1 || !Number.isInteger(parallel) || parallel < 1) {
  console.error("usage: node bench/crash-loop.mjs [iterations=10000] [parallel=2], whole numbers ≥ 1");
  process.exit(2);
}
const LEASE_MS = 250;
const WORKER = join(REPO, "test", "fixtures", "queue-worker.mjs");

const { openBaton } = await loadBaton();
const root = tempDir("crash-loop");
const setup = await openBaton({ root, maxAttempts: 1_000_000 }); // items keep it: never dead-letter here
await setup.startSession({ flow: "live-variant", id: "lv" });
await setup.append("lv", { type: "generate", actor: "browser" });
await setup.append("lv", { type: "source_wrapped", actor: "agent", data: { file: "a" } });
await setup.append("lv", { type: "variants_written", actor: "agent", data: { count: 1, expected: 1 } });
await setup.append("lv", { type: "cycling", actor: "browser" });
let enqueued = 0;
async function topUp() {
  const open = (await setup.pendingWork("lv")).length;
  if (open < 200) {
    await setup.appendBatch(
      "lv",
      Array.from({ length: 400 }, (_, i) => ({ type: "steer", actor: "browser", data: { n: enqueued + i } })),
    );
    enqueued += 400;
  }
}
await topUp();

const ackedBy = new Map();
let kills = 0;
function runWorker(n) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WORKER, root, `w${n}`, String(LEASE_MS), "400"], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    const target = 1 + Math.floor(Math.random() * 6);
    let progress = 0;
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk) => {
      out += chunk;
      progress = (out.match(/^(leased|acked) /gm) ?? []).length;
      if (progress >= target && child.exitCode === null && child.signalCode === null) {
        child.kill("SIGKILL");
        kills++;
      }
    });
    child.stderr.on("data", (c) => {
      err += c;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      if (code !== 0 && signal !== "SIGKILL") return reject(new Error(`worker w${n} failed (${code}): ${err}`));
      for (const line of out.split("\n")) {
        const [verb, itemId, leaseId, kind] = line.split(" ");
        if (verb === "acked" && kind === "new") ackedBy.set(itemId, [...(ackedBy.get(itemId) ?? []), `w${n}:${leaseId}`]);
      }
      resolve();
    });
  });
}

const t0 = Date.now();
for (let i = 0; i < iterations; i += parallel) {
  await Promise.all(Array.from({ length: Math.min(parallel, iterations - i) }, (_, k) => runWorker(i + k)));
  if (i % 100 < parallel) await topUp();
  if (i % 500 < parallel)
    console.log(`${i} iterations, ${kills} kills, ${ackedBy.size} items acked, ${((Date.now() - t0) / 1000).toFixed(0)} s`);
}
await new Promise((r) => setTimeout(r, LEASE_MS + 50));
for (;;) {
  const l = await setup.lease("drain", { leaseMs: 10_000 });
  if (!l) break;
  await setup.ack(l.leaseId);
}
await setup.close();

const db = new Database(join(root, ".baton", "baton.db"), { readonly: true });
const states = db.prepare("SELECT state, count(*) AS n FROM work_items GROUP BY state").all();
const twiceAcked = db
  .prepare("SELECT count(*) AS n FROM (SELECT item_id FROM leases WHERE state = 'acked' GROUP BY item_id HAVING count(*) > 1)")
  .get().n;
db.close();
const reportedTwice = [...ackedBy].filter(([, by]) => by.length > 1).length;
const lost = states.filter((s) => s.state !== "done").reduce((a, s) => a + s.n, 0);
console.log(
  JSON.stringify({
    iterations,
    kills,
    items: enqueued,
    states,
    lost,
    ackedTwice: twiceAcked,
    reportedAckedTwice: reportedTwice,
    seconds: (Date.now() - t0) / 1000,
  }),
);
cleanupAll();
process.exit(lost === 0 && twiceAcked === 0 && reportedTwice === 0 ? 0 : 1);

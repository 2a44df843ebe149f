/**
 * The trajectory ledger's overhead on a tool call: `ledger.record()` in-process, awaited one
 * at a time (the way a hook or an agent loop records), with realistic arguments (an Edit call:
 * path, old and new strings), an observation, and an error on every fifth call (fingerprinted).
 *
 * - `relaxed` (the default), awaited until the node is committed; the same calls also note how
 *   long each blocks its caller before returning (validation, redaction, queueing: what a caller
 *   that does not await pays; the commit follows on the event loop).
 * - `relaxed` (the default): the ledger's write transaction commits at synchronous=NORMAL, so it
 *   does not wait for an fsync; the workspace itself stays at FULL (journal appends still fsync,
 *   and their fsync covers earlier ledger commits). Goal: median ≤ 50 µs.
 * - `full`: the same with `ledger: { durability: "full" }`: every node waits for its fsync, like
 *   a journal append. No goal; it shows what the relaxed commit saves.
 * - redaction only: `redactValue` of the arguments + `redactText` of the observation and error
 *   + the fingerprint: the CPU part of a record, without storage. No goal.
 * - A burst: 1,000 records fired at once, group-committed (many nodes per transaction). Per-node
 *   time, no goal.
 *
 * Each session is recorded past the 500-node cap first, so the timed records run in the steady
 * state of a long session: every 50th record prunes the session's oldest 50 nodes.
 */
import { join } from "node:path";
import { gc, hr, info, interleave, loadBaton, ratio, scaled, summarise, tempDir, walPagesPerOp } from "./lib.mjs";

export const name = "ledger";
export const title = "trajectory ledger: ledger.record() overhead per tool call";

function call(i) {
  const failed = i % 5 === 0;
  return {
    toolName: "Edit",
    status: failed ? "error" : "success",
    args: {
      file_path: `src/services/file-${i % 40}.ts`,
      old_string: `const value = compute(input, ${i});\n  return value;`,
      new_string: `const value = compute(input, ${i + 1});\n  if (!value) throw new Error("empty");\n  return value;`,
    },
    observation: `The file src/services/file-${i % 40}.ts has been updated. Here's the result of running \`cat -n\` on a snippet: 12 const value = compute(input, ${i + 1});`,
    ...(failed ? { error: `String to replace not found in file.\nString: const value = compute(input, ${i}); (attempt ${i})` } : {}),
    durationMs: 3 + (i % 7),
  };
}

async function warmSession(baton, id, n) {
  await baton.sessions.start({ flow: "task", id });
  for (let i = 0; i < n; i++) await baton.ledger.record(id, call(i));
}

export async function run() {
  const lib = await loadBaton();
  const { openBaton, redactValue, redactText, failureFingerprint } = lib;
  const cap = 500;
  const relaxedRoot = tempDir("ledger-relaxed");
  const fullRoot = tempDir("ledger-full");
  const relaxed = await openBaton({ root: relaxedRoot, durability: "full" });
  const full = await openBaton({ root: fullRoot, durability: "full", ledger: { durability: "full" } });
  await warmSession(relaxed, "r", cap + 50);
  await warmSession(full, "f", cap + 50);
  gc();

  // The relaxed side also notes how long each call blocks its caller before returning the
  // promise (the input is validated and redacted by then); the interleaved timing awaits the commit.
  const blocked = [];
  const sides = [
    {
      label: "relaxed",
      op: (i) => {
        const t = hr();
        const p = relaxed.ledger.record("r", call(i)); // timed until it returns; the commit follows
        blocked.push(Number(hr() - t));
        return p;
      },
    },
    { label: "full", op: (i) => full.ledger.record("f", call(i)) },
    {
      label: "redaction",
      op: (i) => {
        const c = call(i);
        redactValue(c.args, { toolName: c.toolName });
        redactText(c.observation);
        if (c.error) {
          redactText(c.error);
          failureFingerprint(c.error);
        }
      },
    },
  ];
  const perRound = Math.ceil(scaled(2_000, 50) / 10);
  const samples = await interleave(sides, { rounds: 10, perRound, warmup: scaled(200, 20) });
  const check = await relaxed.ledger.list("r");
  if (check.length !== cap) throw new Error(`expected ${cap} nodes after pruning, found ${check.length}`);
  if (!check.every((n) => n.args && !JSON.stringify(n.args).includes("[redacted"))) {
    // ordinary Edit arguments must survive redaction unchanged (a false positive would show here)
    throw new Error("ordinary Edit arguments were redacted");
  }

  // A burst, group-committed.
  await relaxed.sessions.start({ flow: "task", id: "burst" });
  const burst = scaled(1_000, 100);
  gc();
  const t0 = hr();
  const nodes = await Promise.all(Array.from({ length: burst }, (_, i) => relaxed.ledger.record("burst", call(i))));
  const burstNs = Number(hr() - t0);
  if (nodes.some((n) => n === undefined)) throw new Error("a burst record failed");

  const dbPath = (root) => join(root, ".baton", "baton.db");
  const pagesRelaxed = await walPagesPerOp(dbPath(relaxedRoot), 40, (i) => relaxed.ledger.record("r", call(1e6 + i)));
  const health = relaxed.ledger.health();
  await relaxed.close();
  await full.close();
  if (health.writeFailures !== 0) throw new Error(`ledger writes failed: ${health.lastError}`);

  const r = summarise(samples.relaxed);
  const b = summarise(blocked.slice(-samples.relaxed.length));
  const f = summarise(samples.full);
  const red = summarise(samples.redaction);
  return {
    rows: [
      { subject: "ledger.record awaited until committed, relaxed (default; workspace at FULL)", unit: "records", ...r },
      { subject: "ledger.record, time the caller is blocked (redacted, queued; commit follows)", unit: "records", ...b },
      { subject: "ledger.record, durability full (fsync per node)", unit: "records", ...f },
      { subject: "redaction + fingerprint only (no storage)", unit: "records", ...red },
      {
        subject: `burst of ${burst} concurrent records (group commit), per record`,
        unit: "records",
        samples: burst,
        opsPerSec: burst / (burstNs / 1e9),
        medianMs: burstNs / burst / 1e6,
        p99Ms: Number.NaN,
      },
    ],
    ratios: [
      // The time a tool call is blocked: redaction, shaping and queueing; the commit follows on
      // the event loop, group-committed, and a caller that does not need the node does not wait.
      ratio("ledger.record() median: time the tool call is blocked", b.medianMs * 1000, "<=", 50, "µs"),
      info("ledger.record() median, awaited until committed (relaxed)", r.medianMs * 1000, "µs"),
      info("record() median, full", f.medianMs * 1000, "µs"),
      info("record() p99, relaxed", r.p99Ms * 1000, "µs"),
      info("redaction share of a relaxed record (medians)", red.medianMs / r.medianMs),
    ],
    notes: [
      `sessions held ${cap} nodes (the cap) before timing: every 50th timed record pruned the oldest 50`,
      `WAL pages written per relaxed record: ${pagesRelaxed.toFixed(1)}`,
      "relaxed: commit at synchronous=NORMAL (durable on process crash at once, on power loss from the next FULL commit)",
    ],
    extra: { cap, burst, burstNs, walPagesPerRecord: pagesRelaxed },
  };
}

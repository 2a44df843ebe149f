/**
 * Spiral detection, measured: every labelled trajectory of test/fixtures/trajectories/ (its
 * README has the format, the sources and the labelling rule) through Baton's detector and
 * through re-implementations of its peers' tool-call loop rules (bench/spiral-peers.mjs:
 * OpenHands, the OpenHands agent SDK, Gemini CLI, Roo Code), side by side.
 *
 *   node bench/spiral.mjs                        # the tuning set
 *   node bench/spiral.mjs --set heldout          # the held-out set (look at it last)
 *   node bench/spiral.mjs --set all --by-source  # also a table per source (each peer's own tests)
 *   node bench/spiral.mjs --target <checkout>    # the detector of another checkout (its src/)
 *   node bench/spiral.mjs --trajectory <id>      # one trajectory, step by step
 *   node bench/spiral.mjs --json                 # the numbers as JSON
 *
 * Per detector: precision, recall and F1 over the loops; false pauses (a pause on progress, or
 * before the loop began), listed; early (before the step the label says a watcher would stop)
 * and late detections; the median step of the loop at which it was caught (1 = its first step);
 * for Baton, loops caught later than the earliest peer (a detection before the step a watcher
 * would stop counts as at that step) and proposals of a checkpoint taken inside the loop. Roo
 * Code and Gemini CLI refuse the call that completes a loop before it runs, OpenHands and Baton
 * judge a call after it ran: either way that call's step is the step of detection. Then each
 * peer's own test expectations are checked against its re-implementation; the exit code is 1
 * when one does not hold.
 *
 * Needs esbuild (a dev dependency): the detector is bundled from the checkout's sources.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { commandLine, REPO } from "./lib.mjs";
import { PEERS } from "./spiral-peers.mjs";

const args = commandLine(import.meta.url, { valued: ["--set", "--target", "--trajectory"], flags: ["--json", "--by-source"] });
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const SET = opt("--set", "tuning");
const TARGET = resolve(opt("--target", REPO));
const ONE = opt("--trajectory");
const JSON_OUT = args.includes("--json");
const BY_SOURCE = args.includes("--by-source");
if (!["tuning", "heldout", "all"].includes(SET)) {
  console.error("--set is tuning, heldout or all");
  process.exit(2);
}

// The corpus.

const DIR = join(REPO, "test", "fixtures", "trajectories");
function load(set) {
  const out = [];
  for (const part of set === "all" ? ["tuning", "heldout"] : [set]) {
    for (const f of readdirSync(join(DIR, part))
      .filter((n) => n.endsWith(".json"))
      .sort()) {
      const doc = JSON.parse(readFileSync(join(DIR, part, f), "utf8"));
      if (doc.format !== "baton-spiral-trajectories/1") throw new Error(`${part}/${f}: unknown format ${doc.format}`);
      for (const t of doc.trajectories) out.push({ ...t, source: f.replace(/\.json$/, ""), part });
    }
  }
  return out;
}
const corpus = load(SET).filter((t) => ONE === undefined || t.id === ONE);
if (corpus.length === 0) {
  console.error(ONE ? `no trajectory ${ONE} in the ${SET} set` : "no trajectories");
  process.exit(2);
}

// Baton's detector, bundled from the target checkout's sources.

async function loadBaton(root) {
  const esbuild = await import("esbuild");
  const has = (p) => {
    try {
      readFileSync(join(root, p));
      return true;
    } catch {
      return false;
    }
  };
  // Checkouts before the rooms (src/core/spiral/) kept the detector at src/core/spiral*.ts.
  const rooms = has("src/core/spiral/detector.ts");
  const lines = [
    `export * from "./src/core/${rooms ? "spiral/detector" : "spiral"}.js";`,
    'export { argsHash } from "./src/core/hooks/keys.js";',
    'export { failureFingerprint } from "./src/core/fingerprint.js";',
  ];
  if (rooms) lines.push('export * as turns from "./src/core/spiral/turn.js";');
  else if (has("src/core/spiral-turn.ts")) lines.push('export * as turns from "./src/core/spiral-turn.js";');
  const r = await esbuild.build({
    stdin: { contents: lines.join("\n"), resolveDir: root, loader: "ts" },
    bundle: true,
    format: "esm",
    platform: "node",
    write: false,
    logLevel: "silent",
  });
  // A file, not a data: URL: the sources resolve node:crypto through import.meta.url.
  const dir = mkdtempSync(join(tmpdir(), "baton-bench-spiral-"));
  const file = join(dir, "spiral.mjs");
  writeFileSync(file, r.outputFiles[0].text);
  try {
    return await import(pathToFileURL(file).href);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
const B = await loadBaton(TARGET);

const SHELL = /^(Bash|execute_bash|run_shell_command|execute_command|shell|exec_command|local_shell)$/;
const WRITES = /^(Edit|Write|MultiEdit|apply_patch|replace|write_file)$/;
/** Whether the agent's hooks take a checkpoint before this call (a write or a shell command). */
const checkpointed = (s) => SHELL.test(s.tool) || WRITES.test(s.tool) || s.tool === "execute_ipython_cell";

/** A step's result as an agent hook reports it (what `core/hooks/` adapters hand on). */
function callOf(s) {
  const failed = s.err !== undefined || (s.exit !== undefined && s.exit !== 0);
  const command = typeof s.args?.command === "string" ? s.args.command : undefined;
  const error = s.err ?? (failed ? `Exit code ${s.exit}\n${s.out ?? ""}` : undefined);
  return {
    tool: s.tool,
    input: s.args ?? {},
    ...(command !== undefined && SHELL.test(s.tool) ? { command } : {}),
    status: failed ? "error" : "success",
    ...(failed ? { error } : { output: s.out ?? "" }),
    files: (s.files ?? []).map((f) => ({ path: f.path, ...(f.v === null ? {} : { hash: f.v, size: f.size ?? 0 }) })),
  };
}

/** The turn record the hooks would record for a step: through core/spiral/turn.ts when the checkout has it. */
function turnOf(s, i) {
  const call = callOf(s);
  const cp = checkpointed(s) ? { checkpointId: `cp-${i + 1}` } : {};
  if (B.turns) return { ...B.turns.spiralTurn(call), ...cp };
  // Before the turn record had a module of its own, the agent hooks built it themselves.
  const fingerprint = call.error ? B.failureFingerprint(call.error) : undefined;
  return {
    tool: call.tool,
    argsHash: B.argsHash(call.input),
    status: call.status,
    ...(call.files.length > 0 ? { files: call.files } : {}),
    ...(fingerprint ? { fingerprint } : {}),
    ...(call.output !== undefined ? { observationHash: B.argsHash(call.output) } : {}),
    ...cp,
  };
}

const START = Date.parse("2026-01-05T09:00:00Z");
/** Seconds since the start of each step: its `t`, else 20 s after the one before. */
function clock(traj) {
  let t = -20;
  return traj.steps.map((s) => (t = s.t ?? t + 20));
}

function baton(traj) {
  const at = clock(traj);
  let w = [];
  for (let i = 0; i < traj.steps.length; i++) {
    const entry = B.turnEntry(turnOf(traj.steps[i], i), { id: `t${i + 1}`, seq: i + 1, at: new Date(START + at[i] * 1000).toISOString() });
    w = B.pushTurn(w, entry);
    const d = B.detectSpiral(w, B.DEFAULT_SPIRAL_THRESHOLDS);
    if (d) {
      const from = Number(d.from.id.slice(1));
      const cp = d.proposedCheckpoint ? Number(d.proposedCheckpoint.slice(3)) : undefined;
      return { hits: [i + 1], pattern: d.pattern, summary: d.summary, from, proposed: cp };
    }
  }
  return { hits: [] };
}

const DETECTORS = [{ name: "baton", label: "Baton", run: baton }, ...PEERS.map((p) => ({ ...p, run: (t) => ({ hits: p.run(t) }) }))];

// Scoring.

function judge(traj, r) {
  const d = r.hits[0];
  const L = traj.label;
  if (!L.loop) return d === undefined ? { outcome: "ok" } : { outcome: "false_pause", at: d };
  if (d === undefined) return { outcome: "missed" };
  if (d < L.from) return { outcome: "false_pause", at: d, before: true };
  return { outcome: "caught", at: d, steps: d - L.from + 1, early: d < L.stop, late: d > L.stop };
}

const median = (xs) => {
  if (xs.length === 0) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

function score(trajs, results, det) {
  const loops = trajs.filter((t) => t.label.loop).length;
  const progress = trajs.length - loops;
  let caught = 0;
  let early = 0;
  let late = 0;
  const falsePauses = [];
  const missed = [];
  const steps = [];
  for (const t of trajs) {
    const j = results.get(t.id)[det];
    if (j.outcome === "caught") {
      caught++;
      steps.push(j.steps);
      if (j.early) early++;
      if (j.late) late++;
    } else if (j.outcome === "false_pause") {
      falsePauses.push(`${t.id}@${j.at}`);
      if (j.before) missed.push(t.id);
    } else if (j.outcome === "missed") missed.push(t.id);
  }
  const fp = falsePauses.length;
  const precision = caught + fp === 0 ? 1 : caught / (caught + fp);
  const recall = loops === 0 ? 1 : caught / loops;
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  return { loops, progress, caught, falsePauses, missed, early, late, precision, recall, f1, medianSteps: median(steps) };
}

const results = new Map();
const details = new Map();
for (const t of corpus) {
  const row = {};
  for (const d of DETECTORS) {
    const r = d.run(t);
    row[d.name] = judge(t, r);
    if (d.name === "baton") details.set(t.id, r);
  }
  results.set(t.id, row);
}

/**
 * Loops Baton caught later than the earliest peer that caught them, or missed while a peer
 * caught them. A detection before the step a watcher would stop the agent counts as at that
 * step: stopping earlier than a person would is no better (the same rule pauses the twin
 * trajectory that is progress).
 */
function behindPeers(trajs) {
  const out = [];
  for (const t of trajs.filter((x) => x.label.loop)) {
    const row = results.get(t.id);
    const due = (j) => Math.max(j.at, t.label.stop);
    const peers = PEERS.map((p) => row[p.name]).filter((j) => j.outcome === "caught");
    if (peers.length === 0) continue;
    const best = Math.min(...peers.map(due));
    const b = row.baton;
    if (b.outcome !== "caught" || due(b) > best)
      out.push(`${t.id} (Baton ${b.outcome === "caught" ? `@${b.at}` : b.outcome}, a peer @${Math.min(...peers.map((j) => j.at))})`);
  }
  return out;
}

/**
 * Baton's pauses that proposed a checkpoint taken inside the loop: after a step of the loop
 * that wrote files or ran a command (a read before it changes nothing).
 */
function insideProposals(trajs) {
  const out = [];
  for (const t of trajs.filter((x) => x.label.loop)) {
    const r = details.get(t.id);
    if (results.get(t.id).baton.outcome !== "caught" || r.proposed === undefined) continue;
    const steps = t.steps.slice(t.label.from - 1, r.proposed - 1);
    if (steps.some((s) => (s.files ?? []).length > 0 || SHELL.test(s.tool))) out.push(`${t.id} (cp before step ${r.proposed})`);
  }
  return out;
}

/** Each peer's own test expectations against its re-implementation. */
function peerChecks() {
  const bad = [];
  let checked = 0;
  for (const t of load("all").filter((x) => x.peer)) {
    const p = PEERS.find((x) => x.name === t.peer.detector);
    const hits = new Set(p.run(t, t.peer.options ?? {}));
    checked++;
    for (const s of t.peer.stuckAt) if (!hits.has(s)) bad.push(`${t.id}: ${p.label} should report a loop at step ${s}`);
    for (const s of t.peer.notStuckAt) if (hits.has(s)) bad.push(`${t.id}: ${p.label} should not report a loop at step ${s}`);
  }
  return { checked, bad };
}

// Output.

const pct = (x) => x.toFixed(2);
function table(title, trajs) {
  const rows = DETECTORS.map((d) => ({ d, s: score(trajs, results, d.name) }));
  const loops = rows[0].s.loops;
  const progress = rows[0].s.progress;
  const lines = [`${title}: ${trajs.length} trajectories (${loops} loops, ${progress} progress)`];
  lines.push("detector       precision  recall    F1  caught  false pauses  missed  early  late  median steps");
  for (const { d, s } of rows)
    lines.push(
      `${d.label.padEnd(14)} ${pct(s.precision).padStart(9)}  ${pct(s.recall).padStart(6)}  ${pct(s.f1).padStart(4)}  ${String(s.caught).padStart(6)}  ${String(s.falsePauses.length).padStart(12)}  ${String(s.missed.length).padStart(6)}  ${String(s.early).padStart(5)}  ${String(s.late).padStart(4)}  ${String(s.medianSteps ?? "-").padStart(12)}`,
    );
  return { lines, rows };
}

if (ONE !== undefined) {
  const t = corpus[0];
  console.log(
    `${t.id} (${t.part}/${t.source}): ${t.label.loop ? `loop from step ${t.label.from}, a watcher stops it at ${t.label.stop}` : "progress"}; ${t.label.why}`,
  );
  const at = clock(t);
  t.steps.forEach((s, i) => {
    const turn = turnOf(s, i);
    console.log(
      `  ${String(i + 1).padStart(2)} t=${at[i]}s ${s.tool} ${JSON.stringify(s.args).slice(0, 70)} → ${turn.status}${turn.waiting ? " (waiting)" : ""}`,
    );
  });
  for (const d of DETECTORS) {
    const j = results.get(t.id)[d.name];
    console.log(`${d.label.padEnd(14)} ${j.outcome}${j.at !== undefined ? ` at step ${j.at}` : ""}`);
  }
  const r = details.get(t.id);
  if (r.pattern)
    console.log(`Baton: ${r.pattern}: ${r.summary} (from step ${r.from}; proposes the checkpoint before step ${r.proposed ?? "none"})`);
  process.exit(0);
}

const main = table(`Set "${SET}"`, corpus);
const behind = behindPeers(corpus);
const inside = insideProposals(corpus);
const checks = peerChecks();
const bySource = BY_SOURCE
  ? [...new Set(corpus.map((t) => t.source))].map((src) =>
      table(
        `  ${src}`,
        corpus.filter((t) => t.source === src),
      ),
    )
  : [];

if (JSON_OUT) {
  const json = {
    set: SET,
    target: TARGET,
    trajectories: corpus.length,
    detectors: Object.fromEntries(main.rows.map(({ d, s }) => [d.name, s])),
    batonBehindPeers: behind,
    batonProposalsInsideLoop: inside,
    peerChecks: checks,
    bySource: Object.fromEntries(
      bySource.map((b, i) => [[...new Set(corpus.map((t) => t.source))][i], Object.fromEntries(b.rows.map(({ d, s }) => [d.name, s]))]),
    ),
  };
  console.log(JSON.stringify(json, null, 2));
} else {
  console.log(main.lines.join("\n"));
  for (const b of bySource) console.log(`\n${b.lines.join("\n")}`);
  console.log("\nFalse pauses:");
  for (const { d, s } of main.rows) console.log(`  ${d.label}: ${s.falsePauses.length === 0 ? "none" : s.falsePauses.join(", ")}`);
  console.log("\nMissed loops:");
  for (const { d, s } of main.rows) console.log(`  ${d.label}: ${s.missed.length === 0 ? "none" : s.missed.join(", ")}`);
  console.log(`\nBaton later than the earliest peer: ${behind.length === 0 ? "never" : behind.join(", ")}`);
  console.log(`Baton proposing a checkpoint from inside the loop: ${inside.length === 0 ? "never" : inside.join(", ")}`);
  const progress = main.rows[0].s.progress;
  const fp = main.rows[0].s.falsePauses.filter((x) => !corpus.find((t) => x.startsWith(`${t.id}@`))?.label.loop).length;
  console.log(`Baton false pauses per 50 progress trajectories: ${progress ? ((fp * 50) / progress).toFixed(1) : "-"}`);
  console.log(
    `\nPeers' own tests against their re-implementations: ${checks.checked} trajectories, ${checks.bad.length === 0 ? "all hold" : `${checks.bad.length} do not:\n  ${checks.bad.join("\n  ")}`}`,
  );
}
process.exit(checks.bad.length === 0 ? 0 : 1);

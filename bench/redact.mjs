/**
 * Redaction: how much of the seeded corpus (test/redaction/: provider formats × contexts, plus
 * ordinary developer text) is caught, what it costs a tool call, and how fast it is beside
 * secretlint (its recommended preset) on the same input.
 *
 * - recall: planted secrets of which nothing readable is left (test/redaction/corpus.ts `score`).
 * - precision: ordinary texts returned unchanged; and placements whose surroundings survive.
 * - secretlint's recall and precision on the same texts, counted generously: a text counts as
 *   caught when secretlint reports anything in it (it finds, it does not redact).
 * - throughput (process CPU time): each corpus text on its own (the way Baton redacts a tool
 *   call's fields), each side alone in a fresh process, at its steady state (after the same
 *   three seconds of warm-up, measured over the same second), in nine alternating rounds, the
 *   mean of each side's processes (medians, fastest, passes five and six and the first pass,
 *   cold, beside it; bench/redact-side.mjs); and the sample as one document (the way a scanner
 *   reads a file).
 *   Goal: ≥ 10× secretlint one text at a time. Per-text latency (wall time, median) is in the rows.
 * - the first redaction in a fresh process (each hook is one): median of fresh processes.
 * - the redaction part of `record()` (arguments through `redactValue`, the observation through
 *   `redactText`) for an ordinary Edit call and for a call whose command and output carry
 *   corpus secrets: it must leave room in record()'s 50 µs (record() itself, storage
 *   included, is bench/ledger.mjs).
 *
 * The corpus is TypeScript (shared with the tests), bundled here with esbuild.
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { DIST, gc, hr, info, loadBaton, loadTs, mean, median, REPO, ratio, scaled, summarise, tempDir } from "./lib.mjs";
import { loadSecretlint } from "./secretlint.mjs";

export const name = "redact";
export const title = "redaction: recall, precision and throughput beside secretlint";

export function loadCorpus() {
  return loadTs("test/redaction/corpus.ts");
}

/**
 * The throughput sample (about 3,000 texts of corpus seed 11, every nth) written to a JSON file
 * in a temporary directory; for the tools that compare two builds (redact-ab, redact-instr).
 */
export async function writeSample(label) {
  const { generate, corpusTexts } = await loadCorpus();
  const all = corpusTexts(generate(11));
  const step = Math.max(1, Math.floor(all.length / 3_000));
  const file = join(tempDir(label), "sample.json");
  writeFileSync(file, JSON.stringify(all.filter((_, i) => i % step === 0)));
  return file;
}

/** Time `op` over `items`, `rounds` times; per-item nanoseconds. */
async function timeEach(items, rounds, op) {
  const samples = [];
  for (let r = 0; r < rounds; r++) {
    for (const it of items) {
      const t0 = hr();
      const x = op(it);
      if (x && typeof x.then === "function") await x;
      samples.push(Number(hr() - t0));
    }
    gc();
  }
  return samples;
}

const mbps = (bytes, ns) => bytes / (ns / 1e9) / 1e6;

/**
 * The process's CPU time (ns) for one pass of `op` over `items`. Throughput is compared on CPU
 * time: both sides are single-threaded, and on a machine shared with other work wall time
 * mostly measures how often the process was scheduled.
 */
async function cpuPass(items, op) {
  const c0 = process.cpuUsage();
  for (const it of items) {
    const x = op(it);
    if (x && typeof x.then === "function") await x;
  }
  const c = process.cpuUsage(c0);
  return (c.user + c.system) * 1000;
}
const started = Date.now();
/** Phase times on stderr (the run takes a while: secretlint is slow). */
const progress = (phase) => process.stderr.write(` [${phase} ${((Date.now() - started) / 1000).toFixed(0)} s]`);

export async function run() {
  const lib = await loadBaton();
  const { redactText, redactValue } = lib;
  const { generate, score, corpusTexts, ADVERSARIAL } = await loadCorpus();
  const lint = await loadSecretlint();
  const corpus = generate(11);

  // Quality, Baton.
  const s = score(corpus, { text: redactText, value: (v) => redactValue(v) });
  progress("score");
  // Quality, secretlint (generous: any finding in a text counts as catching it), on every third
  // placement: its per-call cost makes the whole corpus take minutes.
  const texts = corpus.positives.filter((p) => p.text !== undefined);
  const lintSample = texts.filter((_, i) => i % 3 === 0);
  let caught = 0;
  for (const p of lintSample) if ((await lint(p.text)) > 0) caught++;
  let flagged = 0;
  for (const n of corpus.negatives) if ((await lint(n)) > 0) flagged++;
  progress("quality");

  // Throughput: the same sample of texts, one at a time.
  const all = corpusTexts(corpus);
  const step = Math.max(1, Math.floor(all.length / scaled(3_000, 300)));
  const sample = all.filter((_, i) => i % step === 0);
  const bytes = sample.reduce((a, t) => a + Buffer.byteLength(t), 0);
  // Per-text latency (wall time), in this process, after a warm-up pass of each side.
  await cpuPass(sample, (t) => redactText(t));
  await cpuPass(sample, (t) => lint(t));
  gc();
  const ours = await timeEach(sample, 1, (t) => redactText(t));
  const theirs = await timeEach(sample, 1, (t) => lint(t));
  // Throughput (CPU time): each side alone in a fresh process (bench/redact-side.mjs), in nine
  // alternating rounds (ours, theirs, ours, ...) so drift in the machine's load hits both sides
  // alike. Each process warms up for the same CPU time, WARM (six passes at least), then is
  // measured for at least the same CPU time, MEASURE (two passes at least; the pass that
  // crosses it is finished): its steady state is the measured CPU time over the measured
  // passes. Each side's figure is the mean of its nine processes: the CPU a pass costs on this
  // machine, whichever of its two speeds a process settles at (docs/benchmarks.md, "Redaction").
  // - The same time rather than the same number of passes: a pass of Baton's is about a twelfth
  //   of secretlint's, and V8 goes on compiling Baton's many small rules for twenty to thirty
  //   passes (`--trace-opt`), so its passes five and six (the steady state until 2026-11-27)
  //   were still 1.2-1.7× its settled time, while secretlint's passes are flat from the fourth.
  // - The mean rather than the median: a process settles at one of two speeds, 1.4-1.6× apart,
  //   and a median of nine falls in whichever five landed in; the ratio of two medians moved
  //   between 8.3× and 16.8× in runs of one build. The medians are printed too, each side's
  //   fastest process, passes five and six (the measure until 2026-11-27), and the first pass.
  const ROUNDS = scaled(9, 3);
  const WARM = `${scaled(3)}s`;
  const MEASURE = "1s";
  const dir = tempDir("redact-sample");
  const file = join(dir, "sample.json");
  writeFileSync(file, JSON.stringify(sample));
  const side = (name) => {
    const r = spawnSync(process.execPath, [join(REPO, "bench", "redact-side.mjs"), name, file, WARM, MEASURE], {
      encoding: "utf8",
      maxBuffer: 1 << 20,
    });
    if (r.status !== 0) throw new Error(`bench/redact-side.mjs ${name} failed: ${r.stderr}`);
    return JSON.parse(r.stdout.trim().split("\n").pop());
  };
  const oursSteady = [];
  const theirsSteady = [];
  const oursFirst = [];
  const theirsFirst = [];
  const oursFifth = [];
  const theirsFifth = [];
  const warmPasses = { baton: [], secretlint: [] };
  const measuredPasses = { baton: [], secretlint: [] };
  for (let round = 0; round < ROUNDS; round++) {
    const o = side("baton");
    const t = side("secretlint");
    oursSteady.push(mean(o.passes));
    theirsSteady.push(mean(t.passes));
    oursFirst.push(o.warm[0]);
    theirsFirst.push(t.warm[0]);
    oursFifth.push((o.warm[4] + o.warm[5]) / 2);
    theirsFifth.push((t.warm[4] + t.warm[5]) / 2);
    warmPasses.baton.push(o.warm.length);
    warmPasses.secretlint.push(t.warm.length);
    measuredPasses.baton.push(o.passes.length);
    measuredPasses.secretlint.push(t.passes.length);
  }
  const oursNs = mean(oursSteady);
  const theirsNs = mean(theirsSteady);
  const oursCold = median(oursFirst);
  const theirsCold = median(theirsFirst);
  // Throughput: the sample as one document (best of three passes each, CPU time).
  const doc = sample.join("\n");
  const docOurs = [];
  const docTheirs = [];
  for (let i = 0; i < 3; i++) {
    docOurs.push(await cpuPass([doc], (t) => redactText(t)));
    docTheirs.push(await cpuPass([doc], (t) => lint(t)));
  }
  const docOursNs = Math.min(...docOurs);
  const docTheirsNs = Math.min(...docTheirs);
  progress("throughput");

  // What redaction adds to record(): the arguments and the observation of a call, as the ledger
  // shapes them, for an ordinary Edit call and for a Bash call whose command and output carry
  // corpus secrets. (record() itself, storage included, is bench/ledger.mjs.)
  const edit = (i) => ({
    args: { file_path: `src/file-${i % 40}.ts`, old_string: `const v = f(${i});`, new_string: `const v = f(${i + 1});` },
    observation: `The file src/file-${i % 40}.ts has been updated.`,
  });
  const secretTexts = texts.filter((_, i) => i % 37 === 0).map((p) => p.text);
  const withSecrets = (i) => ({
    args: { command: secretTexts[i % secretTexts.length] },
    observation: secretTexts[(i + 1) % secretTexts.length],
  });
  const shape = (c) => {
    redactValue(c.args, { toolName: "Bash" });
    redactText(c.observation);
  };
  const n = scaled(4_000, 400);
  const blockEdit = await timeEach(
    Array.from({ length: n }, (_, i) => edit(i)),
    1,
    shape,
  );
  const blockSecret = await timeEach(
    Array.from({ length: n }, (_, i) => withSecrets(i)),
    1,
    shape,
  );
  progress("shaping");

  // The first redaction in a fresh process, as each hook pays it: import the library, then time
  // one redactText of a tool call's command carrying a secret (patterns compile on first use),
  // and a second call for comparison. Median of fresh processes.
  const firstText = secretTexts[0] ?? "export GITHUB_TOKEN=ghp_R7xkq2LmN8pQ4sT6vW9yZ1aB3cD5eF7gH9iJ";
  const probe = `const t0 = performance.now(); const { redactText } = await import(${JSON.stringify(pathToFileURL(DIST).href)});
const t1 = performance.now(); redactText(${JSON.stringify(firstText)}); const t2 = performance.now();
redactText(${JSON.stringify(`${firstText} `)}); const t3 = performance.now();
console.log(JSON.stringify({ load: t1 - t0, first: t2 - t1, second: t3 - t2 }));`;
  const fresh = [];
  for (let i = 0; i < scaled(15, 5); i++) {
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", probe], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`fresh-process probe failed: ${r.stderr}`);
    fresh.push(JSON.parse(r.stdout));
  }
  const firstMs = median(fresh.map((f) => f.first));
  const secondMs = median(fresh.map((f) => f.second));
  progress("fresh");

  // Adversarial inputs (test/redaction/adversarial.ts): runs of a rule's trigger that would make
  // a backtracking pattern rescan. CPU time of one redactText each, best of three.
  const adversarial = [];
  for (const a of ADVERSARIAL) {
    const times = [];
    for (let i = 0; i < 3; i++) times.push(await cpuPass([a.text], (t) => redactText(t)));
    adversarial.push(info(`adversarial: ${a.name} (${(a.text.length / 1024).toFixed(0)} KB)`, Math.min(...times) / 1e6, "ms"));
  }
  progress("adversarial");

  const e = summarise(blockEdit.slice(200));
  const w = summarise(blockSecret.slice(200));
  const o = summarise(ours, 1);
  const t = summarise(theirs, 1);
  const pct = (x) => x * 100;
  return {
    rows: [
      {
        subject: `Baton redactText, one corpus text at a time (${sample.length} texts, ${(bytes / 1e6).toFixed(2)} MB)`,
        unit: "texts",
        ...o,
      },
      { subject: "secretlint lintSource (preset-recommend), one text at a time", unit: "texts", ...t },
      { subject: "redaction of a call (args + observation), an Edit call", unit: "calls", ...e },
      { subject: "redaction of a call (args + observation) whose command and output carry secrets", unit: "calls", ...w },
    ],
    ratios: [
      ratio("recall (secrets of which nothing readable is left)", pct(s.recall), ">=", 99, "%"),
      ratio("precision: ordinary texts unchanged", pct(s.negativePrecision), ">=", 99, "%"),
      ratio("precision: surroundings of a secret kept", pct(s.contextPrecision), ">=", 99, "%"),
      info("secretlint recall (any finding in the text)", pct(caught / lintSample.length), "%"),
      info("secretlint precision (ordinary texts without a finding)", pct(1 - flagged / corpus.negatives.length), "%"),
      ratio("throughput vs secretlint, one text at a time (steady, mean of processes)", theirsNs / oursNs, ">=", 10),
      info("throughput vs secretlint, one text at a time, median processes", median(theirsSteady) / median(oursSteady)),
      info(
        "throughput vs secretlint, one text at a time, each side's fastest process",
        Math.min(...theirsSteady) / Math.min(...oursSteady),
      ),
      info("throughput vs secretlint, first pass in a fresh process (cold)", theirsCold / oursCold),
      info("throughput vs secretlint, passes five and six, median processes (warming up)", median(theirsFifth) / median(oursFifth)),
      info("median time per text vs secretlint", t.medianMs / o.medianMs),
      info("throughput vs secretlint, the sample as one document", docTheirsNs / docOursNs),
      info("Baton redaction, one text at a time (steady, mean of processes)", mbps(bytes, oursNs), "MB/s"),
      info("secretlint, one text at a time (steady, mean of processes)", mbps(bytes, theirsNs), "MB/s"),
      info("Baton redaction, one document", mbps(bytes, docOursNs), "MB/s"),
      info("secretlint, one document", mbps(bytes, docTheirsNs), "MB/s"),
      info("redaction of an Edit call, median (record() itself: bench/ledger.mjs, goal ≤ 50 µs)", e.medianMs * 1000, "µs"),
      ratio("redaction of a call carrying secrets, median, within record()'s 50 µs", w.medianMs * 1000, "<=", 50, "µs"),
      info("redaction of a call carrying secrets, p99", w.p99Ms * 1000, "µs"),
      info("first redaction in a fresh process (a hook's), median", firstMs, "ms"),
      info("second redaction in that process, median", secondMs * 1000, "µs"),
      ...adversarial,
    ],
    notes: [
      `corpus: ${s.positives} placements (${corpus.positives.length} texts and values), ${s.negatives} ordinary texts, seed 11`,
      `Baton missed ${s.misses.length}, changed ${s.changedNegatives.length} ordinary texts, over-redacted around ${s.overRedacted.length} secrets`,
      "secretlint finds rather than redacts; its numbers count a text as caught when it reports anything in it",
    ],
    extra: {
      firstRedactionMs: firstMs,
      recall: s.recall,
      negativePrecision: s.negativePrecision,
      contextPrecision: s.contextPrecision,
      secretlintRecall: caught / lintSample.length,
      secretlintPrecision: 1 - flagged / corpus.negatives.length,
      bytes,
      texts: sample.length,
      steadyNs: { baton: oursSteady, secretlint: theirsSteady },
      fifthSixthNs: { baton: oursFifth, secretlint: theirsFifth },
      warmPasses,
      measuredPasses,
    },
  };
}

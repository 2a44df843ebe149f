/**
 * Two builds of Baton's redaction compared by the instructions they execute, not by time: for
 * deciding whether a change to the redaction does less work when timings cannot say so.
 *
 * On the machine these numbers come from, the same build runs a pass of the sample in 31–38 ms
 * in some processes and 53–62 ms in others (docs/benchmarks.md, "Machine"), so a change of a
 * few percent is lost in timings. Instructions are not: each build runs under valgrind's
 * cachegrind (no cache simulation) with `node --predictable --random-seed=1 --hash-seed=1`
 * (one thread, no concurrent compilation, fixed seeds), twice, for `lo` and `hi` passes of the sample; the difference,
 * divided by `hi - lo`, is the instructions of one pass once V8 has optimised the code. The same
 * build measured twice agrees to about 0.01%.
 *
 *   node scripts/build.mjs   # in each checkout
 *   node bench/redact-instr.mjs <checkout A> <checkout B> [lo=8] [hi=14]
 *
 * Instructions are a proxy: a pass bound by the latency of its loads (the scan's automaton) or
 * by branch mispredictions gains less time than instructions (docs/benchmarks.md). Needs
 * valgrind (Debian: `apt-get install valgrind`); a few minutes.
 */
import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

// Run as the measured process: redact every text of the sample, `passes` times.
if (process.argv[2] === "--passes") {
  const [, , , lib, file, passes] = process.argv;
  const { redactText } = await import(pathToFileURL(lib).href);
  const texts = JSON.parse(readFileSync(file, "utf8"));
  for (let p = 0; p < Number(passes); p++) for (const t of texts) redactText(t);
  process.exit(0);
}

const { builtLibrary, cleanupAll, commandLine } = await import("./lib.mjs"); // not in the measured process
const [a, b, loArg = "8", hiArg = "14"] = commandLine(import.meta.url, { positional: [0, 4] });
const lo = Number(loArg);
const hi = Number(hiArg);
if (!a || !b || !Number.isInteger(lo) || !Number.isInteger(hi) || lo < 1 || hi <= lo) {
  console.error("usage: node bench/redact-instr.mjs <checkout A> <checkout B> [lo=8] [hi=14, more than lo]");
  process.exit(2);
}
if (spawnSync("valgrind", ["--version"]).status !== 0) {
  console.error("valgrind is not installed (Debian: apt-get install valgrind)");
  process.exit(2);
}
const libs = [a, b].map((dir) => builtLibrary(dir));
const { writeSample } = await import("./redact.mjs");
const file = await writeSample("redact-instr");
const self = fileURLToPath(import.meta.url);

/** Instructions of a whole process that redacts the sample `passes` times. */
function instructions(lib, passes) {
  const args = ["--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"];
  args.push(process.execPath, "--predictable", "--random-seed=1", "--hash-seed=1", self, "--passes", lib, file, String(passes));
  return new Promise((done, fail) => {
    let err = "";
    const child = spawn("valgrind", args, { stdio: ["ignore", "ignore", "pipe"] });
    child.stderr.on("data", (d) => (err += d));
    child.on("close", (code, signal) => {
      const m = /I\s+refs:\s+([\d,]+)/.exec(err);
      if (code !== 0 || m === null) fail(new Error(`valgrind ended (${signal ?? `exit ${code}`}):\n${err.slice(-2000)}`));
      else done(Number((m[1] ?? "").replaceAll(",", "")));
    });
  });
}

// Two processes at a time (the machine of record has two cores); each build's pair at once.
try {
  const perPass = [];
  for (const lib of libs) {
    const [l, h] = await Promise.all([instructions(lib, lo), instructions(lib, hi)]);
    perPass.push((h - l) / (hi - lo));
  }
  const [pa, pb] = perPass;
  console.log(`A ${resolve(a)}: ${(pa / 1e6).toFixed(1)}M instructions a pass`);
  console.log(`B ${resolve(b)}: ${(pb / 1e6).toFixed(1)}M instructions a pass`);
  console.log(`B/A ${(pb / pa).toFixed(3)} (passes ${lo + 1}-${hi})`);
} finally {
  cleanupAll();
}

/**
 * One side of bench/redact.mjs's throughput comparison, alone in its process: Baton's
 * redactText or secretlint's lintSource over the sample texts in a JSON file. It makes unmeasured
 * passes to warm up, then measured ones, each timed on the process's CPU time, and prints both
 * lists (ns per pass) as JSON: `{"warm": [...], "passes": [...]}`. Each side in its own process,
 * so neither side's garbage, collections or compiled code is paid or lost on the other's clock
 * (measured in one process, a major collection between the sides cost Baton's rules most of
 * their warm state).
 *
 *   node bench/redact-side.mjs baton|secretlint <texts.json> [warm=2] [passes=1]
 *
 * Each of `warm` and `passes` is a number of passes, or a CPU time (`3s`): passes until the
 * process has spent that much on them, the same budget for either side however long its passes
 * are (a timed warm-up makes six passes at least, timed measured passes two).
 */
import { readFileSync } from "node:fs";
import { commandLine, loadBaton } from "./lib.mjs";
import { loadSecretlint } from "./secretlint.mjs";

/** A count of passes (`6`) or seconds of CPU (`3s`), as { passes } or { seconds }; undefined when neither. */
function budget(arg) {
  const seconds = arg.endsWith("s") ? Number(arg.slice(0, -1)) : undefined;
  if (seconds !== undefined) return Number.isFinite(seconds) && seconds > 0 ? { seconds } : undefined;
  const passes = Number(arg);
  return Number.isInteger(passes) && passes >= 0 ? { passes } : undefined;
}

const [side, file, warmArg = "2", passesArg = "1"] = commandLine(import.meta.url, { positional: [0, 4] });
const warm = budget(warmArg);
const measured = budget(passesArg);
if (!(side === "baton" || side === "secretlint") || !file || !warm || !measured) {
  console.error(
    "usage: node bench/redact-side.mjs baton|secretlint <texts.json> [warm=2] [passes=1]  (each a count, or seconds of CPU as `3s`)",
  );
  process.exit(2);
}
const texts = JSON.parse(readFileSync(file, "utf8"));

async function redactor() {
  if (side === "baton") {
    const { redactText } = await loadBaton();
    return redactText;
  }
  return loadSecretlint();
}

const op = await redactor();
const cpuNs = (c) => (c.user + c.system) * 1000;
async function pass() {
  const c0 = process.cpuUsage();
  for (const t of texts) {
    const x = op(t);
    if (x && typeof x.then === "function") await x;
  }
  return cpuNs(process.cpuUsage(c0));
}
/** Passes until `b` is spent: its count, or its CPU time and `least` passes. */
async function passes(b, least) {
  const out = [];
  let spent = 0;
  while (b.seconds === undefined ? out.length < b.passes : out.length < least || spent < b.seconds * 1e9) {
    out.push(await pass());
    spent += out[out.length - 1];
  }
  return out;
}
const out = { warm: await passes(warm, 6), passes: await passes(measured, 2) };
console.log(JSON.stringify(out));
// secretlint keeps the process busy after its last call (bench/run.mjs says so too).
process.exit(0);

/**
 * One side of bench/redact.mjs's throughput comparison, alone in its process: Baton's
 * redactText or secretlint's lintSource over the sample texts in a JSON file. It makes unmeasured
 * passes to warm up, then `passes` measured ones, each timed on the process's CPU time, and
 * prints both lists (ns per pass) as JSON: `{"warm": [...], "passes": [...]}`. Each side in its
 * own process, so neither side's garbage, collections or compiled code is paid or lost on the
 * other's clock (measured in one process, a major collection between the sides cost Baton's
 * rules most of their warm state).
 *
 *   node bench/redact-side.mjs baton|secretlint <texts.json> [warm=2] [passes=1]
 *
 * `warm` is a number of passes, or a time (`3s`): passes until the process has spent that much
 * CPU time and made six passes at least, the same budget for either side however long its
 * passes are.
 */
import { readFileSync } from "node:fs";
import { loadBaton } from "./lib.mjs";
import { loadSecretlint } from "./secretlint.mjs";

const [side, file, warm = "2", passes = "1"] = process.argv.slice(2);
const texts = JSON.parse(readFileSync(file, "utf8"));
const warmSeconds = warm.endsWith("s") ? Number(warm.slice(0, -1)) : undefined;
if (!(side === "baton" || side === "secretlint") || Number.isNaN(warmSeconds ?? Number(warm)) || !(Number(passes) >= 0)) {
  console.error("usage: node bench/redact-side.mjs baton|secretlint <texts.json> [warm passes, or seconds as `3s`] [passes]");
  process.exit(2);
}

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
const out = { warm: [], passes: [] };
const started = process.cpuUsage();
const warmed = () =>
  warmSeconds === undefined
    ? out.warm.length >= Number(warm)
    : out.warm.length >= 6 && cpuNs(process.cpuUsage(started)) >= warmSeconds * 1e9;
while (!warmed()) out.warm.push(await pass());
for (let i = 0; i < Number(passes); i++) out.passes.push(await pass());
console.log(JSON.stringify(out));
// secretlint keeps the process busy after its last call (bench/run.mjs says so too).
process.exit(0);

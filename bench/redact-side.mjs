/**
 * One side of bench/redact.mjs's throughput comparison, alone in its process: Baton's
 * redactText or secretlint's lintSource over the sample texts in a JSON file. It makes `warm`
 * unmeasured passes, then `passes` passes timed on the process's CPU time, and prints those
 * (ns per pass) as JSON. Each side in its own process, so neither side's garbage, collections or
 * compiled code is paid or lost on the other's clock (measured in one process, a major collection
 * between the sides cost Baton's rules most of their warm state).
 *
 *   node bench/redact-side.mjs baton|secretlint <texts.json> [warm=2] [passes=1]
 */
import { readFileSync } from "node:fs";
import { loadBaton } from "./lib.mjs";
import { loadSecretlint } from "./secretlint.mjs";

const [side, file, warm = "2", passes = "1"] = process.argv.slice(2);
const texts = JSON.parse(readFileSync(file, "utf8"));

async function redactor() {
  if (side === "baton") {
    const { redactText } = await loadBaton();
    return redactText;
  }
  return loadSecretlint();
}

const op = await redactor();
async function pass() {
  const c0 = process.cpuUsage();
  for (const t of texts) {
    const x = op(t);
    if (x && typeof x.then === "function") await x;
  }
  const c = process.cpuUsage(c0);
  return (c.user + c.system) * 1000;
}
for (let i = 0; i < Number(warm); i++) await pass();
const out = [];
for (let i = 0; i < Number(passes); i++) out.push(await pass());
console.log(JSON.stringify(out));
// secretlint keeps the process busy after its last call (bench/run.mjs says so too).
process.exit(0);

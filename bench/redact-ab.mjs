/**
 * Two builds of Baton's redaction side by side, for deciding whether a change is faster: each
 * round runs both at once, each in its own fresh process pinned to its own core (swapped every
 * round), over the sample bench/redact.mjs uses, and reports each build's CPU time per pass.
 *
 * Why at once rather than one after the other: on the machine these numbers come from, a
 * process settles at one of two speeds (about 1.6× apart for this work) depending on how the
 * memory it is given behaves, and that state drifts over seconds (docs/benchmarks.md,
 * "Machine"). Two builds run at the same moment meet the same conditions; the per-round
 * ratio and the medians over rounds are what to read, not one process's figure.
 *
 *   node scripts/build.mjs   # in each checkout
 *   node bench/redact-ab.mjs <checkout A> <checkout B> [rounds=12] [passes=30]
 *
 * Passes five and six show a build still warming up (V8 goes on compiling the rules for twenty
 * to thirty passes); the last two, where it ends up once V8 has finished optimising it (what
 * bench/redact.mjs measures after three seconds of warm-up).
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { builtLibrary, cleanupAll, commandLine, median, REPO } from "./lib.mjs";
import { writeSample } from "./redact.mjs";

const [a, b, roundsArg = "12", passesArg = "30"] = commandLine(import.meta.url, { positional: [0, 4] });
const rounds = Number(roundsArg);
const P = Number(passesArg);
if (!a || !b || !Number.isInteger(rounds) || rounds < 1 || !Number.isInteger(P) || P < 6) {
  console.error("usage: node bench/redact-ab.mjs <checkout A> <checkout B> [rounds=12] [passes=30, at least 6]");
  process.exit(2);
}
for (const dir of [a, b]) builtLibrary(dir);

const file = await writeSample("redact-ab");

const pinned = existsSync("/usr/bin/taskset");
if (!pinned) console.log("(no taskset here: the two processes run at once but are not pinned to a core each)");
function side(dir, cpu) {
  const cmd = [process.execPath, join(REPO, "bench", "redact-side.mjs"), "baton", file, "0", String(P)];
  const [exe, ...args] = pinned ? ["/usr/bin/taskset", "-c", String(cpu), ...cmd] : cmd;
  return new Promise((done, fail) => {
    let out = "";
    const child = spawn(exe, args, { env: { ...process.env, BATON_BENCH_TARGET: resolve(dir) }, stdio: ["ignore", "pipe", "inherit"] });
    child.stdout.on("data", (d) => (out += d));
    child.on("close", (code) =>
      code === 0 ? done(JSON.parse(out.trim().split("\n").pop()).passes.map((ns) => ns / 1e6)) : fail(new Error(`${dir}: exit ${code}`)),
    );
  });
}

const fifthSixth = (ms) => (ms[4] + ms[5]) / 2;
const last = (ms) => (ms[P - 1] + ms[P - 2]) / 2;
const rows = { a: [], b: [] };
for (let r = 0; r < rounds; r++) {
  const [ma, mb] = await Promise.all([side(a, r % 2), side(b, 1 - (r % 2))]);
  rows.a.push(ma);
  rows.b.push(mb);
  console.log(
    `round ${r + 1}: A ${last(ma).toFixed(1)} ms, B ${last(mb).toFixed(1)} ms (passes ${P - 1}-${P}); B/A ${(last(mb) / last(ma)).toFixed(2)}; passes 5-6 B/A ${(fifthSixth(mb) / fifthSixth(ma)).toFixed(2)}`,
  );
}
const summaries =
  P > 6
    ? [
        ["passes 5-6", fifthSixth],
        [`passes ${P - 1}-${P}`, last],
      ]
    : [["passes 5-6", fifthSixth]];
for (const [label, f] of summaries) {
  const A = rows.a.map(f);
  const B = rows.b.map(f);
  const perRound = A.map((x, i) => B[i] / x);
  console.log(
    `${label}: A median ${median(A).toFixed(1)} ms, B median ${median(B).toFixed(1)} ms; B/A per round, median ${median(perRound).toFixed(3)}`,
  );
}
cleanupAll();

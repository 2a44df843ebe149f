/**
 * Keep what was won: a fresh run's goals against the run of record in bench/baseline.json.
 * `node bench/run.mjs --check [names…]` names every goal that moved by more than the margin
 * (15% of its recorded value) in the wrong direction, and exits 1 when one did;
 * `node bench/run.mjs --record [names…]` makes this run the run of record for its goals (do it
 * on a quiet machine: the load average is recorded with it).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO } from "./lib.mjs";

export const BASELINE = join(REPO, "bench", "baseline.json");
export const MARGIN = 0.15;

/**
 * Each goal of `fresh` beside the same goal (benchmark and label) of `baseline`: `worse` when it
 * moved by more than `margin` of the recorded value against its goal's direction (a ratio that
 * must be ≥ fell, a time that must be ≤ grew), `better` the other way, else `same`; `new` when
 * the baseline has no such goal. Goals the baseline has and this run did not measure are left out.
 */
export function compareGoals(baseline, fresh, margin = MARGIN) {
  const recorded = new Map(baseline.map((g) => [`${g.bench}\u0000${g.label}`, g]));
  return fresh.map((g) => {
    const before = recorded.get(`${g.bench}\u0000${g.label}`);
    if (!before || !(before.value > 0)) return { ...g, before: undefined, change: undefined, verdict: "new" };
    const change = g.value / before.value - 1;
    const higherIsBetter = g.op === ">=";
    const moved = Math.abs(change) > margin;
    const verdict = !moved ? "same" : change > 0 === higherIsBetter ? "better" : "worse";
    return { ...g, before: before.value, change, verdict };
  });
}

/** The recorded goals, or undefined when no run of record exists. */
export function readBaseline(file = BASELINE) {
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, "utf8"));
}

/** Make `goals` (of the benchmarks that ran) the run of record, keeping the others' goals. */
export function recordBaseline(goals, machine, file = BASELINE) {
  const old = readBaseline(file);
  const ran = new Set(goals.map((g) => g.bench));
  const kept = (old?.goals ?? []).filter((g) => !ran.has(g.bench));
  const runs = { ...(old?.runs ?? {}) };
  for (const bench of ran)
    runs[bench] = {
      recordedAt: new Date().toISOString(),
      load: machine.loadAverageAtStart,
      node: machine.node,
      cpu: machine.cpu,
      cores: machine.cores,
    };
  const goalsOut = [
    ...kept,
    ...goals.map(({ bench, label, value, goal, op, target, unit }) => ({ bench, label, value, goal, op, target, unit })),
  ];
  writeFileSync(file, `${JSON.stringify({ margin: MARGIN, runs, goals: goalsOut }, null, 2)}\n`);
}

/**
 * `bench/run.mjs --check` (bench/check.mjs): a fresh run's goals against the run of record,
 * each judged in its goal's direction, so a win kept is quiet and one lost is named.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
// @ts-expect-error: a JavaScript module of the benchmarks, without declarations
import { compareGoals, recordBaseline } from "../bench/check.mjs";
import { tempDir } from "./helpers.js";

const goal = (bench: string, label: string, value: number, op: ">=" | "<=") => ({
  bench,
  label,
  value,
  op,
  goal: `${op} 1`,
  target: 1,
  unit: "x",
});

describe("bench --check", () => {
  it("names the goals that moved more than the margin the wrong way, in each goal's direction", () => {
    const baseline = [
      goal("append", "Baton / raw", 0.8, ">="),
      goal("cli", "status / node -e 0", 1.3, "<="),
      goal("queue", "lease+ack / pg-boss", 10, ">="),
      goal("status", "median ms", 0.3, "<="),
    ];
    const fresh = [
      goal("append", "Baton / raw", 0.6, ">="), // fell 25%: worse
      goal("cli", "status / node -e 0", 1.1, "<="), // fell 15.4%: better (lower is better)
      goal("queue", "lease+ack / pg-boss", 9, ">="), // fell 10%: within the margin
      goal("hooks", "hook / node -e 0", 1.2, "<="), // not recorded
    ];
    const rows = compareGoals(baseline, fresh, 0.15);
    expect(rows.map((r: { bench: string; verdict: string }) => [r.bench, r.verdict])).toEqual([
      ["append", "worse"],
      ["cli", "better"],
      ["queue", "same"],
      ["hooks", "new"],
    ]);
    expect(rows[0].change).toBeCloseTo(-0.25, 5);
    expect(compareGoals(baseline, [goal("status", "median ms", 0.4, "<=")], 0.15)[0].verdict).toBe("worse");
  });

  it("records the goals of the benchmarks that ran, keeping the others' run of record", () => {
    const file = join(tempDir(), "baseline.json");
    const machine = { loadAverageAtStart: [0.4], node: "v20", cpu: "cpu", cores: 2 };
    recordBaseline([goal("append", "Baton / raw", 0.8, ">="), goal("cli", "status", 1.3, "<=")], machine, file);
    recordBaseline([goal("cli", "status", 1.2, "<=")], { ...machine, loadAverageAtStart: [0.2] }, file);
    const saved = JSON.parse(readFileSync(file, "utf8"));
    expect(saved.goals.map((g: { bench: string; value: number }) => [g.bench, g.value])).toEqual([
      ["append", 0.8],
      ["cli", 1.2],
    ]);
    expect(saved.runs.cli.load).toEqual([0.2]);
    expect(saved.runs.append.load).toEqual([0.4]);
  });
});

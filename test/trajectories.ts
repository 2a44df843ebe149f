/**
 * The labelled trajectories of test/fixtures/trajectories/ (its README: format and labels),
 * run through the detector the way the agent hooks feed it: each step becomes the turn record
 * core/spiral/turn.ts makes of a call and its result (bench/spiral.mjs does the same).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DEFAULT_SPIRAL_THRESHOLDS, detectSpiral, pushTurn, type SpiralThresholds, turnEntry } from "../src/core/spiral/detector.js";
import { type SpiralCall, spiralTurn } from "../src/core/spiral/turn.js";
import type { SpiralPattern, TurnEntry, TurnRecord } from "../src/core/types.js";

export interface Step {
  tool: string;
  args?: Record<string, unknown>;
  exit?: number;
  out?: string;
  err?: string;
  files?: { path: string; v: string | null; size?: number }[];
  t?: number;
}

export interface Trajectory {
  id: string;
  kind: string;
  label: { loop: boolean; from?: number; stop?: number; why: string };
  steps: Step[];
}

const DIR = fileURLToPath(new URL("./fixtures/trajectories/", import.meta.url));

/** Every trajectory of a part of the corpus (`tuning` unless told). */
export function trajectories(part: "tuning" | "heldout" = "tuning"): Trajectory[] {
  return readdirSync(join(DIR, part))
    .filter((f) => f.endsWith(".json"))
    .sort()
    .flatMap((f) => (JSON.parse(readFileSync(join(DIR, part, f), "utf8")) as { trajectories: Trajectory[] }).trajectories);
}

export function trajectory(id: string): Trajectory {
  const t = [...trajectories("tuning"), ...trajectories("heldout")].find((x) => x.id === id);
  if (!t) throw new Error(`no trajectory ${id} in test/fixtures/trajectories/`);
  return t;
}

const SHELL = /^(Bash|execute_bash|run_shell_command|execute_command|shell|exec_command|local_shell)$/;
const CHECKPOINTED =
  /^(Bash|execute_bash|run_shell_command|execute_command|shell|exec_command|local_shell|Edit|Write|MultiEdit|apply_patch|replace|write_file|execute_ipython_cell)$/;

/** A step as an agent hook reports it: a failed shell command's error is "Exit code N" and its output (Claude Code's form). */
export function callOf(s: Step): SpiralCall {
  const failed = s.err !== undefined || (s.exit !== undefined && s.exit !== 0);
  const command = typeof s.args?.command === "string" && SHELL.test(s.tool) ? s.args.command : undefined;
  return {
    tool: s.tool,
    input: s.args ?? {},
    ...(command !== undefined ? { command } : {}),
    status: failed ? "error" : "success",
    ...(failed ? { error: s.err ?? `Exit code ${s.exit}\n${s.out ?? ""}` } : { output: s.out ?? "" }),
    files: (s.files ?? []).map((f) => ({ path: f.path, ...(f.v === null ? {} : { hash: f.v, size: f.size ?? 0 }) })),
  };
}

export interface Run {
  /** The step the detector paused at (1-based), if it did. */
  step?: number;
  pattern?: SpiralPattern;
  summary?: string;
  /** The step the spiral began with, and the step whose checkpoint (taken before it) the pause proposes. */
  from?: number;
  checkpointBefore?: number;
  window: TurnEntry[];
}

/** The trajectory through the detector, step by step, until it pauses. Each write or shell step has a checkpoint `cp-<step>` taken before it. */
export function run(t: Trajectory, thresholds: SpiralThresholds = DEFAULT_SPIRAL_THRESHOLDS): Run {
  let w: TurnEntry[] = [];
  let at = -20;
  for (let i = 0; i < t.steps.length; i++) {
    const s = t.steps[i] as Step;
    at = s.t ?? at + 20;
    const record: TurnRecord = { ...spiralTurn(callOf(s)), ...(CHECKPOINTED.test(s.tool) ? { checkpointId: `cp-${i + 1}` } : {}) };
    w = pushTurn(w, turnEntry(record, { id: `t${i + 1}`, seq: i + 1, at: new Date(Date.UTC(2026, 0, 5, 9) + at * 1000).toISOString() }));
    const d = detectSpiral(w, thresholds);
    if (d) {
      return {
        step: i + 1,
        pattern: d.pattern,
        summary: d.summary,
        from: Number(d.from.id.slice(1)),
        ...(d.proposedCheckpoint !== undefined ? { checkpointBefore: Number(d.proposedCheckpoint.slice(3)) } : {}),
        window: w,
      };
    }
  }
  return { window: w };
}

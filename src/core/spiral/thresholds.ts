/**
 * The spiral detector's thresholds: the defaults, and a workspace's `"spiral"` settings from
 * `.baton/config.json` checked over them.
 *
 * The defaults are no lower than the boundaries of the peers' own tests, and were measured on
 * the labelled trajectories of test/fixtures/trajectories/ (`node bench/spiral.mjs`,
 * docs/benchmarks.md): OpenHands, its agent SDK, Gemini CLI and Roo Code all let three
 * identical calls through (Roo Code refuses the fourth, OpenHands stops four identical calls
 * with identical results), so `sameSignature` is 4; OpenHands and its SDK stop three identical
 * calls that all fail, so `sameFailure` is 3 when the failure is the same, in the same place;
 * OpenHands stops A-B-A-B-A-B, so a cycle needs three rounds (`alternation`: 6 turns of two
 * calls); Gemini CLI looks for cycles up to five calls long, so the window holds three rounds
 * of five. Waiting has its own budget: polls of a CI run that take minutes are progress.
 */
import { SNAPSHOT_LIMITS } from "../types.js";

export interface SpiralThresholds {
  /** Detect at all. */
  readonly enabled: boolean;
  /** The same call in a row with the same result (or failing in any way). */
  readonly sameSignature: number;
  /** Writes of one file that go back and forth (a change, its undo, the change again). */
  readonly fileChurn: number;
  /** No longer used (the size rule paused edits that grew a file and trimmed it); kept so older settings still load. */
  readonly sizeTolerance: number;
  /** The same failure in the same place, in a row or with no file changed in between. */
  readonly sameFailure: number;
  /** Turns of a cycle of two calls with the same results; a cycle of 3 to 5 calls needs as many rounds (alternation / 2). */
  readonly alternation: number;
  /**
   * The same call with the same result, not necessarily in a row, with no file changed in
   * between. Off (0) by default: Gemini CLI's own tests expect A-B-A-B-C-A-B-A-B (the same two
   * reads four times each) not to be a loop.
   */
  readonly sameObservation: number;
  /** Polls that brought nothing new before a wait becomes a pause (0: no limit on calls). */
  readonly waitCalls: number;
  /** Minutes of polls that brought nothing new before a wait becomes a pause (0: no limit on time). */
  readonly waitMinutes: number;
}

/** The defaults; a workspace overrides them in `.baton/config.json` under `"spiral"`. */
export const DEFAULT_SPIRAL_THRESHOLDS: SpiralThresholds = Object.freeze({
  enabled: true,
  sameSignature: 4,
  fileChurn: 3,
  sizeTolerance: 0.05,
  sameFailure: 3,
  alternation: 6,
  sameObservation: 0,
  waitCalls: 30,
  waitMinutes: 30,
});

const COUNT_KEYS = ["sameSignature", "fileChurn", "sameFailure", "alternation", "sameObservation", "waitCalls"] as const;
/** A day: a wait longer than that is not a wait. */
const MAX_WAIT_MINUTES = 1_440;

/**
 * Thresholds from a config value (the `"spiral"` object), over the defaults. A count of 0
 * turns its pattern off; otherwise it is 2..window (alternation 4..window); `waitMinutes` is
 * 0..1440. Problems are returned, not thrown: a bad config must not stop turns from being recorded.
 */
export function spiralThresholds(value: unknown): { thresholds: SpiralThresholds; problems: string[] } {
  const out: { -readonly [K in keyof SpiralThresholds]: SpiralThresholds[K] } = { ...DEFAULT_SPIRAL_THRESHOLDS };
  const problems: string[] = [];
  if (value === undefined) return { thresholds: Object.freeze(out), problems };
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { thresholds: Object.freeze(out), problems: ['spiral must be an object, e.g. {"sameSignature": 5}'] };
  }
  const max = SNAPSHOT_LIMITS.turns;
  for (const [key, v] of Object.entries(value)) {
    if (key === "enabled") {
      if (typeof v === "boolean") out.enabled = v;
      else problems.push("spiral.enabled must be true or false");
    } else if (key === "sizeTolerance") {
      if (typeof v === "number" && v >= 0 && v <= 1) out.sizeTolerance = v;
      else problems.push("spiral.sizeTolerance must be a number from 0 to 1 (it no longer has an effect)");
    } else if (key === "waitMinutes") {
      if (typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= MAX_WAIT_MINUTES) out.waitMinutes = v;
      else problems.push(`spiral.waitMinutes must be 0 (no limit) or a whole number of minutes up to ${MAX_WAIT_MINUTES}`);
    } else if ((COUNT_KEYS as readonly string[]).includes(key)) {
      const min = key === "alternation" ? 4 : 2;
      if (typeof v === "number" && Number.isInteger(v) && (v === 0 || (v >= min && v <= max))) out[key as (typeof COUNT_KEYS)[number]] = v;
      else problems.push(`spiral.${key} must be 0 (off) or a whole number from ${min} to ${max}`);
    } else {
      problems.push(`spiral.${key} is not a setting (settings: enabled, ${COUNT_KEYS.join(", ")}, waitMinutes, sizeTolerance)`);
    }
  }
  return { thresholds: Object.freeze(out), problems };
}

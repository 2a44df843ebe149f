/**
 * The spiral detector's thresholds: the defaults, and a workspace's `"spiral"` settings from
 * `.baton/config.json` checked over them.
 */
import { SNAPSHOT_LIMITS } from "./types.js";

export interface SpiralThresholds {
  /** Detect at all. */
  readonly enabled: boolean;
  /** Identical calls in a row. */
  readonly sameSignature: number;
  /** Consecutive turns writing one file without progress. */
  readonly fileChurn: number;
  /** Net size change that still counts as "no net change", as a fraction of the file's size. */
  readonly sizeTolerance: number;
  /** Occurrences of one failure fingerprint. */
  readonly sameFailure: number;
  /** Turns of A-B-A-B alternation. */
  readonly alternation: number;
  /** Occurrences of one call with one observation. */
  readonly sameObservation: number;
}

/** The defaults; a workspace overrides them in `.baton/config.json` under `"spiral"`. */
export const DEFAULT_SPIRAL_THRESHOLDS: SpiralThresholds = Object.freeze({
  enabled: true,
  sameSignature: 3,
  fileChurn: 3,
  sizeTolerance: 0.05,
  sameFailure: 3,
  alternation: 6,
  sameObservation: 4,
});

const COUNT_KEYS = ["sameSignature", "fileChurn", "sameFailure", "alternation", "sameObservation"] as const;

/**
 * Thresholds from a config value (the `"spiral"` object), over the defaults. A count of 0
 * turns its pattern off; otherwise it is 2..window (alternation 4..window). Problems are
 * returned, not thrown: a bad config must not stop turns from being recorded.
 */
export function spiralThresholds(value: unknown): { thresholds: SpiralThresholds; problems: string[] } {
  const out: { -readonly [K in keyof SpiralThresholds]: SpiralThresholds[K] } = { ...DEFAULT_SPIRAL_THRESHOLDS };
  const problems: string[] = [];
  if (value === undefined) return { thresholds: Object.freeze(out), problems };
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { thresholds: Object.freeze(out), problems: ['spiral must be an object, e.g. {"sameSignature": 4}'] };
  }
  const max = SNAPSHOT_LIMITS.turns;
  for (const [key, v] of Object.entries(value)) {
    if (key === "enabled") {
      if (typeof v === "boolean") out.enabled = v;
      else problems.push("spiral.enabled must be true or false");
    } else if (key === "sizeTolerance") {
      if (typeof v === "number" && v >= 0 && v <= 1) out.sizeTolerance = v;
      else problems.push("spiral.sizeTolerance must be a number from 0 to 1 (a fraction of the file's size)");
    } else if ((COUNT_KEYS as readonly string[]).includes(key)) {
      const min = key === "alternation" ? 4 : 2;
      if (typeof v === "number" && Number.isInteger(v) && (v === 0 || (v >= min && v <= max))) out[key as (typeof COUNT_KEYS)[number]] = v;
      else problems.push(`spiral.${key} must be 0 (off) or a whole number from ${min} to ${max}`);
    } else {
      problems.push(`spiral.${key} is not a setting (settings: enabled, ${COUNT_KEYS.join(", ")}, sizeTolerance)`);
    }
  }
  return { thresholds: Object.freeze(out), problems };
}

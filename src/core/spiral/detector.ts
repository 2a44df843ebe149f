/**
 * The spiral detector: pure, over a bounded window of recent turns (SNAPSHOT_LIMITS.turns),
 * so a 1,000-turn session costs what a 32-turn one does.
 *
 * A spiral is an agent repeating itself without progress. Six patterns (core/spiral/rules.ts),
 * each must include the latest turn (so a pattern is reported once, when it completes):
 *
 *  - waiting: polls of something outside the workspace that brought nothing new for
 *    `waitCalls` calls or `waitMinutes` minutes ("still waiting on …");
 *  - same_signature: the same call in a row with the same result `sameSignature` times (4),
 *    failing the same way in the same place `sameFailure` times (3), or failing in any way
 *    `sameSignature` times;
 *  - file_churn: a file going back and forth: a change it already went through made again, or
 *    an undone change redone by the same call with nothing else changed since;
 *  - same_failure: the same failure in the same place `sameFailure` times (3), not necessarily
 *    in a row, with no file changed in between and the failing call not succeeding since;
 *  - cycle: the same 2 to 5 calls with the same results, `alternation / 2` times round (3);
 *  - same_observation: the same call returning the same result `sameObservation` times (4),
 *    not necessarily in a row, with no file changed in between.
 *
 * A turn's result is part of what repeats: a call whose result changed is a new step.
 * Real progress resets the window: a turn recorded with `progress: true` (kept as the
 * baseline of what follows), a `progress:set` that raises `completed`, or clearing a pause.
 */
import { describeLane, pausedSpiral } from "../lanes.js";
import type { NextActionRule } from "../next-action-rule.js";
import {
  type NextActionChoice,
  SNAPSHOT_LIMITS,
  type SpiralPattern,
  type SpiralState,
  type TurnEntry,
  type TurnFile,
  type TurnRecord,
} from "../types.js";
import { cycle, type Found, flipFlop, repeat, sameFailure, sameObservation, waiting } from "./rules.js";
import { DEFAULT_SPIRAL_THRESHOLDS, type SpiralThresholds } from "./thresholds.js";

export { signature } from "./rules.js";

export { DEFAULT_SPIRAL_THRESHOLDS, type SpiralThresholds, spiralThresholds } from "./thresholds.js";

export function emptySpiral(): SpiralState {
  return { paused: false, turns: 0, window: [] };
}

/** The first 16 hex digits of a file's hash: the window only tells versions apart (the event keeps the whole hash). */
const WINDOW_HASH = 16;

/**
 * A window entry from a turn record and its journal position: files bounded, each a path and a
 * short hash (no rule reads a size), undefined dropped. The window holds 32 turns (a cycle of five
 * calls three times round, the waiting budget's 30 polls); short entries keep its snapshot about
 * the size the 12-turn window with whole hashes had.
 */
export function turnEntry(record: TurnRecord, at: { id: string; seq: number; at: string }): TurnEntry {
  const files: TurnFile[] = (record.files ?? []).slice(0, SNAPSHOT_LIMITS.filesPerTurn).map((f) => {
    const file: TurnFile = { path: f.path };
    if (typeof f.hash === "string") file.hash = f.hash.slice(0, WINDOW_HASH);
    return file;
  });
  const e: TurnEntry = { id: at.id, seq: at.seq, at: at.at, tool: record.tool, status: record.status, files };
  if (record.argsHash !== undefined) e.argsHash = record.argsHash;
  if (record.fingerprint !== undefined) e.fingerprint = record.fingerprint;
  if (record.failurePlace !== undefined) e.failurePlace = record.failurePlace;
  if (record.observationHash !== undefined) e.observationHash = record.observationHash;
  if (record.waiting === true) e.waiting = true;
  if (record.waitingOn !== undefined) e.waitingOn = record.waitingOn;
  if (record.checkpointId !== undefined) e.checkpointId = record.checkpointId;
  if (record.progress !== undefined) e.progress = record.progress;
  return e;
}

/**
 * The window after a turn: a progress turn starts a new window (it stays as the baseline of
 * what follows); otherwise the turn is appended and the oldest dropped past the limit.
 */
export function pushTurn(window: readonly TurnEntry[], entry: TurnEntry, limit: number = SNAPSHOT_LIMITS.turns): TurnEntry[] {
  const next = entry.progress === true ? [entry] : [...window, entry];
  return next.length > limit ? next.slice(next.length - limit) : next;
}

export interface SpiralDetection {
  pattern: SpiralPattern;
  summary: string;
  /** The turns involved, oldest first. */
  turns: TurnEntry[];
  /** The turn the spiral began with. */
  from: TurnEntry;
  /** Where a rollback goes back to when not to before `from` (core/spiral/rules.ts). */
  rollbackFrom?: TurnEntry;
  /** The last checkpoint taken before the spiral began, if turns carried any. */
  proposedCheckpoint?: string;
  path?: string;
  signature?: string;
  fingerprint?: string;
}

/** The spiral the window ends in, if any. The window's first turn may be a progress baseline. */
export function detectSpiral(window: readonly TurnEntry[], t: SpiralThresholds = DEFAULT_SPIRAL_THRESHOLDS): SpiralDetection | undefined {
  if (!t.enabled) return undefined;
  const active = window[0]?.progress === true ? window.slice(1) : window;
  if (active.length === 0) return undefined;
  const found: Found | undefined =
    waiting(active, t) ??
    repeat(window, active, t) ??
    flipFlop(window, active, t.fileChurn) ??
    sameFailure(window, active, t.sameFailure) ??
    cycle(active, Math.floor(t.alternation / 2)) ??
    sameObservation(window, active, t.sameObservation);
  if (!found) return undefined;
  const cp = checkpointBefore(window, found.rollbackFrom ?? found.from);
  return cp === undefined ? found : { ...found, proposedCheckpoint: cp };
}

/** The checkpoint taken before `from`, else the latest one before it in the window. */
function checkpointBefore(window: readonly TurnEntry[], from: TurnEntry): string | undefined {
  for (let i = window.indexOf(from); i >= 0; i--) {
    const cp = window[i]?.checkpointId;
    if (cp !== undefined) return cp;
  }
  return undefined;
}

/** A checkpoint as the spiral's fallback choice sees it. */
export interface CheckpointStamp {
  id: string;
  kind: string;
  createdAt: string;
}

/**
 * The last good point when no turn of the window named its checkpoint: the newest checkpoint
 * taken at or before the spiral's first turn. Safety checkpoints are left out: they hold the
 * state just before a rollback, not a point the agent chose to keep.
 */
export function checkpointBeforeTurn(checkpoints: readonly CheckpointStamp[], from: { at: string }): string | undefined {
  let best: CheckpointStamp | undefined;
  for (const c of checkpoints) {
    if (c.kind === "safety" || c.createdAt > from.at) continue;
    if (!best || c.createdAt >= best.createdAt) best = c;
  }
  return best?.id;
}

/** What status and `turn record` show of a session's spiral state. */
export interface SpiralView {
  paused: boolean;
  pattern?: string;
  summary?: string;
  /** Journal seqs of the turns involved. */
  turns?: number[];
  proposedCheckpoint?: string;
  detectedAt?: string;
}

/** When the spiral began: its first turn's time (the detection's, if that turn left the window). */
export function spiralStart(sp: SpiralState): string | undefined {
  const first = sp.evidence?.turns[0];
  return sp.window.find((t) => t.seq === first)?.at ?? sp.detectedAt;
}

export function spiralView(sp: SpiralState | undefined, fallback?: string): SpiralView {
  if (!sp?.paused) return { paused: false };
  const v: SpiralView = { paused: true };
  if (sp.pattern !== undefined) v.pattern = sp.pattern;
  if (sp.evidence) {
    v.summary = sp.evidence.summary;
    v.turns = sp.evidence.turns;
  }
  const cp = sp.proposedCheckpoint ?? fallback;
  if (cp !== undefined) v.proposedCheckpoint = cp;
  if (sp.detectedAt !== undefined) v.detectedAt = sp.detectedAt;
  return v;
}

/**
 * Next-action rule (position 2, see core/session/next-action.ts): a paused session asks the user to
 * choose between rolling back to the proposed checkpoint and taking over by hand.
 */
export const spiralPauseRule: NextActionRule = ({ snap, spiralFallback }) => {
  const paused = pausedSpiral(snap);
  if (!paused) return undefined;
  const sp = paused.state;
  const lane = paused.lane;
  const unpause = `baton resume ${snap.sessionId} --unpause${lane ? ` --lane ${lane.id}` : ""}`;
  // Proposed at detection, else found by status now (a pause detected without it).
  const cp = sp.proposedCheckpoint ?? spiralFallback;
  const choices: NextActionChoice[] = [];
  if (cp !== undefined) {
    choices.push({
      choice: "rollback",
      description: `roll back to checkpoint ${cp} (taken before the spiral began) and try another approach`,
      command: `baton rollback --session ${snap.sessionId} --to ${cp}${lane ? ` --lane ${lane.id}` : ""} && ${unpause}`,
    });
  }
  choices.push({ choice: "take_over", description: "the user takes over by hand, then lets the agent continue", command: unpause });
  // The turns the detection named that are still in the window: none when they were never
  // recorded there (a `spiral:detected` written by hand, or its turns pushed out), and then an
  // empty "(turns )" would say nothing.
  const turns = sp.evidence?.turns ?? [];
  const what = sp.evidence
    ? `${sp.evidence.summary}${turns.length > 0 ? ` (turns ${turns.join(", ")})` : ""}`
    : "the agent repeated itself without progress";
  const first = sp.evidence?.turns[0];
  const options =
    cp !== undefined
      ? `roll back to checkpoint ${cp} (the last good point, taken before the spiral began) and try another approach, or take over by hand`
      : `take over by hand or let the agent try another approach. No checkpoint exists from before the spiral began${first !== undefined ? ` (turn seq ${first})` : ""}, so there is no point to roll back to`;
  return {
    action: {
      action: "ask_user",
      reason: `Spiral detected (${sp.pattern ?? "unknown"}): ${what}. ${lane ? `The agent session ${describeLane(lane)} is paused (other agents go on)` : "The session is paused"}: stop and ask the user whether to ${options}.`,
      command: (choices[0] as NextActionChoice).command,
      choices,
    },
    fact: `a spiral (${sp.pattern ?? "unknown"}) paused ${lane ? `lane ${lane.id}` : "the session"}`,
  };
};

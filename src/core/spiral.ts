/**
 * The spiral detector: pure, over a bounded window of recent turns (SNAPSHOT_LIMITS.turns),
 * so a 1,000-turn session costs what a 12-turn one does.
 *
 * A spiral is an agent repeating itself without progress. Five patterns, each must include
 * the latest turn (so a pattern is reported once, when it completes):
 *
 *  - same_signature: the same call (tool + args hash) N times in a row (default 3), unless
 *    every one of them left a file at content never seen before (a generator run repeatedly);
 *  - file_churn: one file written on N consecutive turns (default 3) that is back at a version
 *    it had before, or whose size went back and forth with no net change (within
 *    `sizeTolerance`);
 *  - same_failure: the same failure fingerprint N times (default 3), not necessarily in a row;
 *    failures of a call (tool + args hash) that later succeeded are resolved and do not count;
 *  - alternation: two calls alternating A-B-A-B-... over N turns (default 6);
 *  - same_observation: the same call returning the same observation N times (default 4), not
 *    necessarily in a row.
 *
 * Real progress resets the window: a turn recorded with `progress: true` (kept as the
 * baseline of what follows), a `progress:set` that raises `completed`, or clearing a pause.
 */
import { describeLane, pausedSpiral } from "./lanes.js";
import type { NextActionRule } from "./next-action.js";
import { DEFAULT_SPIRAL_THRESHOLDS, type SpiralThresholds } from "./spiral-thresholds.js";
import {
  type NextActionChoice,
  SNAPSHOT_LIMITS,
  type SpiralPattern,
  type SpiralState,
  type TurnEntry,
  type TurnFile,
  type TurnRecord,
} from "./types.js";

export { DEFAULT_SPIRAL_THRESHOLDS, type SpiralThresholds, spiralThresholds } from "./spiral-thresholds.js";

export function emptySpiral(): SpiralState {
  return { paused: false, turns: 0, window: [] };
}

/** A window entry from a turn record and its journal position (files bounded, undefined dropped). */
export function turnEntry(record: TurnRecord, at: { id: string; seq: number; at: string }): TurnEntry {
  const files: TurnFile[] = (record.files ?? []).slice(0, SNAPSHOT_LIMITS.filesPerTurn).map((f) => {
    const file: TurnFile = { path: f.path };
    if (typeof f.hash === "string") file.hash = f.hash;
    if (typeof f.size === "number") file.size = f.size;
    return file;
  });
  const e: TurnEntry = { id: at.id, seq: at.seq, at: at.at, tool: record.tool, status: record.status, files };
  if (record.argsHash !== undefined) e.argsHash = record.argsHash;
  if (record.fingerprint !== undefined) e.fingerprint = record.fingerprint;
  if (record.observationHash !== undefined) e.observationHash = record.observationHash;
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
  /** The last checkpoint taken before the spiral began, if turns carried any. */
  proposedCheckpoint?: string;
  path?: string;
  signature?: string;
  fingerprint?: string;
}

type Found = Omit<SpiralDetection, "proposedCheckpoint">;

/** The spiral the window ends in, if any. The window's first turn may be a progress baseline. */
export function detectSpiral(window: readonly TurnEntry[], t: SpiralThresholds = DEFAULT_SPIRAL_THRESHOLDS): SpiralDetection | undefined {
  if (!t.enabled) return undefined;
  const active = window[0]?.progress === true ? window.slice(1) : window;
  if (active.length === 0) return undefined;
  const found =
    sameSignature(window, active, t.sameSignature) ??
    fileChurn(window, active, t.fileChurn, t.sizeTolerance) ??
    sameFailure(active, t.sameFailure) ??
    alternation(active, t.alternation) ??
    sameObservation(active, t.sameObservation);
  if (!found) return undefined;
  const cp = checkpointBefore(window, found.from);
  return cp === undefined ? found : { ...found, proposedCheckpoint: cp };
}

/** A call's signature: tool + args hash. Without an args hash a call has none and never repeats. */
export function signature(t: TurnRecord): string | undefined {
  return t.argsHash === undefined ? undefined : `${t.tool}#${t.argsHash}`;
}

function last<T>(list: readonly T[]): T {
  return list[list.length - 1] as T;
}

/** The checkpoint taken before `from`, else the latest one before it in the window. */
function checkpointBefore(window: readonly TurnEntry[], from: TurnEntry): string | undefined {
  for (let i = window.indexOf(from); i >= 0; i--) {
    const cp = window[i]?.checkpointId;
    if (cp !== undefined) return cp;
  }
  return undefined;
}

const DELETED = "(deleted)";
const version = (f: TurnFile): string => f.hash ?? DELETED;

/** Whether the turn left some file at content no earlier turn in the window produced. */
function wroteNewContent(window: readonly TurnEntry[], turn: TurnEntry): boolean {
  const before = window.slice(0, window.indexOf(turn));
  return turn.files.some((f) => f.hash !== undefined && !before.some((b) => b.files.some((x) => x.path === f.path && x.hash === f.hash)));
}

function sameSignature(window: readonly TurnEntry[], active: readonly TurnEntry[], n: number): Found | undefined {
  if (n < 2 || active.length < n) return undefined;
  const sig = signature(last(active));
  if (sig === undefined) return undefined;
  let start = active.length - 1;
  while (start > 0 && signature(active[start - 1] as TurnEntry) === sig) start--;
  const turns = active.slice(start);
  if (turns.length < n) return undefined;
  if (turns.every((x) => wroteNewContent(window, x))) return undefined;
  const tool = last(active).tool;
  return {
    pattern: "same_signature",
    summary: `${tool} was called with the same arguments ${turns.length} times in a row`,
    turns,
    from: turns[0] as TurnEntry,
    signature: sig,
  };
}

function fileChurn(window: readonly TurnEntry[], active: readonly TurnEntry[], n: number, tolerance: number): Found | undefined {
  if (n < 2) return undefined;
  const latest = last(active);
  for (const file of [...latest.files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
    const path = file.path;
    const touched = (t: TurnEntry) => t.files.find((f) => f.path === path);
    let start = active.length - 1;
    while (start > 0 && touched(active[start - 1] as TurnEntry)) start--;
    const run = active.slice(start);
    if (run.length < n) continue;
    // The file's versions: the one before the run (if the window knows it), then one per turn.
    const versions: { turn?: TurnEntry; f: TurnFile }[] = [];
    for (let i = window.indexOf(run[0] as TurnEntry) - 1; i >= 0; i--) {
      const f = touched(window[i] as TurnEntry);
      if (f) {
        versions.push({ f });
        break;
      }
    }
    for (const turn of run) versions.push({ turn, f: touched(turn) as TurnFile });
    // Back at an earlier version, N versions or more ago (one no-op write after real edits is
    // not a spiral): the spiral began with the turn after that version was made.
    const now = version(last(versions).f);
    const origin = versions.findIndex((v) => version(v.f) === now);
    if (origin < versions.length - 1 && versions.length - origin >= n) {
      const from = versions[origin + 1]?.turn as TurnEntry;
      const turns = run.slice(Math.max(0, run.indexOf(versions[origin]?.turn as TurnEntry)));
      return {
        pattern: "file_churn",
        summary: `${path} was written on ${run.length} consecutive turns and is back at a version it had before`,
        turns,
        from,
        path,
      };
    }
    // The size went back and forth and ended where it started.
    const sizes = versions.map((v) => v.f.size).filter((s): s is number => s !== undefined);
    if (sizes.length >= 3 && reverses(sizes)) {
      const first = sizes[0] as number;
      const end = last(sizes);
      if (Math.abs(end - first) <= tolerance * Math.max(first, end, 1)) {
        return {
          pattern: "file_churn",
          summary: `${path} was written on ${run.length} consecutive turns; its size went back and forth (${sizes.join(" → ")} bytes) with no net change`,
          turns: run,
          from: run[0] as TurnEntry,
          path,
        };
      }
    }
  }
  return undefined;
}

/** Whether a sequence changes direction at least once (ignoring steps with no change). */
function reverses(values: readonly number[]): boolean {
  let dir = 0;
  for (let i = 1; i < values.length; i++) {
    const d = Math.sign((values[i] as number) - (values[i - 1] as number));
    if (d === 0) continue;
    if (dir !== 0 && d !== dir) return true;
    dir = d;
  }
  return false;
}

function sameFailure(active: readonly TurnEntry[], n: number): Found | undefined {
  const fp = last(active).fingerprint;
  if (n < 2 || fp === undefined) return undefined;
  const key = (t: TurnEntry) => signature(t) ?? t.tool;
  let hits: TurnEntry[] = [];
  for (const t of active) {
    if (t.fingerprint === fp) hits.push(t);
    else if (t.status === "success" && t.fingerprint === undefined) {
      // The failing call succeeded since: its earlier failures are resolved and do not count.
      const k = key(t);
      hits = hits.filter((h) => key(h) !== k);
    }
  }
  if (hits.length < n) return undefined;
  return {
    pattern: "same_failure",
    summary: `the same failure (${fp}) happened ${hits.length} times without the failing call succeeding in between`,
    turns: hits,
    from: hits[0] as TurnEntry,
    fingerprint: fp,
  };
}

function alternation(active: readonly TurnEntry[], n: number): Found | undefined {
  if (n < 4 || active.length < n) return undefined;
  const tail = active.slice(-n);
  const a = signature(tail[0] as TurnEntry);
  const b = signature(tail[1] as TurnEntry);
  if (a === undefined || b === undefined || a === b) return undefined;
  if (!tail.every((t, i) => signature(t) === (i % 2 === 0 ? a : b))) return undefined;
  return {
    pattern: "alternation",
    summary: `the agent alternated between the same two calls (${(tail[0] as TurnEntry).tool} and ${(tail[1] as TurnEntry).tool}) for ${n} turns`,
    turns: tail,
    from: tail[0] as TurnEntry,
    signature: `${a} | ${b}`,
  };
}

function sameObservation(active: readonly TurnEntry[], n: number): Found | undefined {
  const latest = last(active);
  const sig = signature(latest);
  const obs = latest.observationHash;
  if (n < 2 || sig === undefined || obs === undefined) return undefined;
  const hits = active.filter((t) => signature(t) === sig && t.observationHash === obs);
  if (hits.length < n) return undefined;
  return {
    pattern: "same_observation",
    summary: `${latest.tool} was called with the same arguments and returned the same result ${hits.length} times`,
    turns: hits,
    from: hits[0] as TurnEntry,
    signature: sig,
  };
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
 * Next-action rule (position 2, see core/next-action.ts): a paused session asks the user to
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

/**
 * The spiral detector's rules (core/spiral/detector.ts runs them in this order). Pure. Each looks at the
 * active turns of the window (the window after its progress baseline) and fires only when the
 * latest turn completes its pattern, so a spiral is reported once.
 *
 * A turn's result is its status with the failure's place (a failure) or the hash of what it
 * returned (a success), and the versions of the files it wrote (core/spiral/turn.ts): a repeat
 * whose result changed is a new step. The thresholds, and the evidence behind each default,
 * are in core/spiral/thresholds.ts; docs/architecture.md, "Turns and spirals", sums them up.
 */

import type { SpiralPattern, TurnEntry, TurnFile } from "../types.js";
import type { SpiralThresholds } from "./thresholds.js";

export interface Found {
  pattern: SpiralPattern;
  summary: string;
  /** The turns involved, oldest first. */
  turns: TurnEntry[];
  /** The turn the spiral began with. */
  from: TurnEntry;
  /**
   * Where a rollback should go back to, when not to before `from`: a spiral of failures with no
   * file changed between them goes back to before the change that led to them (before `from`
   * the files are as they are now).
   */
  rollbackFrom?: TurnEntry;
  path?: string;
  signature?: string;
  fingerprint?: string;
}

/** A call's signature: tool + args hash. Without an args hash a call has none and never repeats. */
export function signature(t: { tool: string; argsHash?: string }): string | undefined {
  return t.argsHash === undefined ? undefined : `${t.tool}#${t.argsHash}`;
}

const DELETED = "(deleted)";
const version = (f: TurnFile): string => f.hash ?? DELETED;
const failed = (t: TurnEntry): boolean => t.status === "error";

function last<T>(list: readonly T[]): T {
  return list[list.length - 1] as T;
}

/** What a turn got back: its status, the failure's place or the output's hash, the files it left. */
export function resultKey(t: TurnEntry): string {
  const what = failed(t) ? (t.failurePlace ?? t.fingerprint ?? "") : (t.observationHash ?? "");
  const files = t.files.map((f) => `${f.path}=${version(f)}`).sort();
  return `${t.status}|${what}|${files.join(",")}`;
}

/** A turn as a step of a cycle: the call and what it got back (undefined: no signature, never the same). */
function stepKey(t: TurnEntry): string | undefined {
  const sig = signature(t);
  return sig === undefined ? undefined : `${sig}|${resultKey(t)}`;
}

/**
 * For each turn of `turns`, whether it changed a file: left it at content other than the
 * version the window last saw (its first write counts when the window did not see the file).
 */
function contentChanges(window: readonly TurnEntry[], turns: readonly TurnEntry[]): Set<TurnEntry> {
  const seen = new Map<string, string>();
  const changed = new Set<TurnEntry>();
  const mine = new Set(turns);
  for (const t of window) {
    for (const f of t.files) {
      const v = version(f);
      if (seen.get(f.path) !== v && mine.has(t)) changed.add(t);
      seen.set(f.path, v);
    }
  }
  return changed;
}

/** The last active turn before `turn` that changed a file, as `rollbackFrom`. */
function changedBefore(window: readonly TurnEntry[], active: readonly TurnEntry[], turn: TurnEntry): { rollbackFrom?: TurnEntry } {
  const changed = contentChanges(window, active);
  for (let i = active.indexOf(turn) - 1; i >= 0; i--) {
    const t = active[i] as TurnEntry;
    if (changed.has(t)) return { rollbackFrom: t };
  }
  return {};
}

const minutes = (ms: number): string => (ms < 90_000 ? `${Math.round(ms / 1000)} s` : `${Math.round(ms / 60_000)} min`);

/**
 * Waiting: the latest turns all wait on something outside the workspace (core/spiral/turn.ts)
 * and none of them has brought anything new for `waitCalls` calls or `waitMinutes` minutes.
 */
export function waiting(active: readonly TurnEntry[], t: SpiralThresholds): Found | undefined {
  const latest = last(active);
  if (!latest.waiting || (t.waitCalls === 0 && t.waitMinutes === 0)) return undefined;
  let start = active.length - 1;
  while (start > 0 && (active[start - 1] as TurnEntry).waiting) start--;
  const run = active.slice(start);
  // The polls since the last one that brought something new (a result not seen before in the run).
  const keys = run.map((x) => stepKey(x) ?? `#${x.id}`);
  let news = 0;
  keys.forEach((k, i) => {
    if (keys.indexOf(k) === i) news = i;
  });
  const stale = run.slice(news);
  if (stale.length < 2) return undefined;
  const elapsed = Date.parse(latest.at) - Date.parse((stale[0] as TurnEntry).at);
  const tooMany = t.waitCalls > 0 && stale.length >= t.waitCalls;
  const tooLong = t.waitMinutes > 0 && elapsed >= t.waitMinutes * 60_000;
  if (!tooMany && !tooLong) return undefined;
  const on = latest.waitingOn ?? latest.tool;
  return {
    pattern: "waiting",
    summary: `still waiting on ${on}: ${stale.length} calls over ${minutes(elapsed)} brought nothing new`,
    turns: stale,
    from: stale[0] as TurnEntry,
    ...(signature(latest) !== undefined ? { signature: signature(latest) } : {}),
  };
}

/**
 * The same call in a row: with the same result `sameSignature` times, or failing the same way
 * in the same place `sameFailure` times, or failing in any way `sameSignature` times. Waiting
 * calls have their own budget.
 */
export function repeat(window: readonly TurnEntry[], active: readonly TurnEntry[], t: SpiralThresholds): Found | undefined {
  const latest = last(active);
  const sig = signature(latest);
  if (sig === undefined || latest.waiting) return undefined;
  let start = active.length - 1;
  while (start > 0 && signature(active[start - 1] as TurnEntry) === sig) start--;
  const run = active.slice(start);
  const trailing = (ok: (x: TurnEntry) => boolean): TurnEntry[] => {
    let i = run.length;
    while (i > 0 && ok(run[i - 1] as TurnEntry)) i--;
    return run.slice(i);
  };
  const key = resultKey(latest);
  const same = trailing((x) => resultKey(x) === key);
  const found = (turns: TurnEntry[], what: string): Found => ({
    pattern: "same_signature",
    summary: `${latest.tool} was called with the same arguments ${turns.length} times in a row ${what}`,
    turns,
    from: turns[0] as TurnEntry,
    ...changedBefore(window, active, turns[0] as TurnEntry),
    signature: sig,
    ...(latest.fingerprint !== undefined ? { fingerprint: latest.fingerprint } : {}),
  });
  if (!failed(latest))
    return t.sameSignature > 0 && same.length >= t.sameSignature ? found(same, "and got the same result each time") : undefined;
  if (t.sameFailure > 0 && same.length >= t.sameFailure) return found(same, "and failed the same way each time");
  const failing = trailing(failed);
  return t.sameSignature > 0 && failing.length >= t.sameSignature ? found(failing, "and failed each time") : undefined;
}

/**
 * A file going back and forth: the latest write makes a change the file already went through
 * (X→Y again, after Y→…→X), or redoes a change that was undone (the same call leaving the file
 * as it did before, after the file was changed back and nothing else changed since).
 */
export function flipFlop(window: readonly TurnEntry[], active: readonly TurnEntry[], n: number): Found | undefined {
  if (n < 2) return undefined;
  const latest = last(active);
  const sig = signature(latest);
  const changed = contentChanges(window, active);
  for (const file of [...latest.files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
    const path = file.path;
    const writes: { turn: TurnEntry; v: string }[] = [];
    for (const turn of window) {
      const f = turn.files.find((x) => x.path === path);
      if (f && (writes.length === 0 || last(writes).v !== version(f))) writes.push({ turn, v: version(f) });
    }
    if (last(writes)?.turn !== latest || writes.length < 2) continue;
    const now = writes.length - 1;
    const x = (writes[now - 1] as { v: string }).v;
    const y = version(file);
    // The same transition X→Y made before, in the active turns.
    for (let i = now - 1; i >= 1; i--) {
      const w = writes[i] as { turn: TurnEntry; v: string };
      if (w.v === y && (writes[i - 1] as { v: string }).v === x && now - i + 2 >= n + 1 && active.includes(w.turn)) {
        const turns = writes.slice(i - 1).map((v) => v.turn);
        return {
          pattern: "file_churn",
          summary: `${path} went back and forth between the same versions: the change made at the start was made again`,
          turns: turns.filter((tt) => active.includes(tt)),
          from: w.turn,
          path,
        };
      }
    }
    // A change undone, then redone by the same call, nothing else changed since it was undone.
    if (sig === undefined || writes.length < n) continue;
    for (let i = now - 2; i >= 0; i--) {
      const w = writes[i] as { turn: TurnEntry; v: string };
      if (w.v !== y || signature(w.turn) !== sig || !active.includes(w.turn)) continue;
      const undo = (writes[i + 1] as { turn: TurnEntry }).turn;
      const span = active.slice(active.indexOf(undo) + 1, active.length - 1);
      if (span.some((tt) => changed.has(tt))) break;
      return {
        pattern: "file_churn",
        summary: `${path} was changed back, then ${latest.tool} made the same change to it again`,
        turns: active.slice(active.indexOf(w.turn)).filter((tt) => tt.files.some((f) => f.path === path)),
        from: w.turn,
        path,
      };
    }
  }
  return undefined;
}

/**
 * The same failure in the same place `n` times, with no file changed in between (a changed
 * file makes the next failure a new one) and the failing call not succeeding since.
 */
export function sameFailure(window: readonly TurnEntry[], active: readonly TurnEntry[], n: number): Found | undefined {
  const latest = last(active);
  const place = latest.failurePlace ?? latest.fingerprint;
  if (n < 2 || !failed(latest) || place === undefined || latest.waiting) return undefined;
  const changed = contentChanges(window, active);
  let hits: TurnEntry[] = [];
  for (const t of active) {
    if (changed.has(t)) hits = [];
    if (failed(t) && (t.failurePlace ?? t.fingerprint) === place) hits.push(t);
    else if (!failed(t)) {
      const k = signature(t) ?? t.tool;
      hits = hits.filter((h) => (signature(h) ?? h.tool) !== k);
    }
  }
  if (hits.length < n) return undefined;
  return {
    pattern: "same_failure",
    summary: `the same failure, in the same place, happened ${hits.length} times with no file changed in between`,
    turns: hits,
    from: hits[0] as TurnEntry,
    ...changedBefore(window, active, hits[0] as TurnEntry),
    ...(latest.fingerprint !== undefined ? { fingerprint: latest.fingerprint } : {}),
  };
}

/** The same 2 to 5 calls, with the same results, `rounds` times round (waiting calls have their own budget). */
export function cycle(active: readonly TurnEntry[], rounds: number): Found | undefined {
  if (rounds < 2) return undefined;
  const keys = active.map(stepKey);
  for (let k = 2; k <= 5; k++) {
    const need = k * rounds;
    if (keys.length < need) break;
    const tail = keys.slice(-need);
    if (tail.some((x) => x === undefined) || tail.every((x) => x === tail[0])) continue;
    if (!tail.every((x, i) => i < k || x === tail[i - k])) continue;
    const turns = active.slice(-need);
    if (turns.slice(0, k).every((x) => x.waiting)) continue;
    const tools = turns
      .slice(0, k)
      .map((x) => x.tool)
      .join(", ");
    return {
      pattern: "cycle",
      summary: `the same ${k} calls (${tools}) with the same results came round ${rounds} times`,
      turns,
      from: turns[0] as TurnEntry,
      signature: turns
        .slice(0, k)
        .map((x) => signature(x))
        .join(" | "),
    };
  }
  return undefined;
}

/** The same call with the same result `n` times, not necessarily in a row, with no file changed in between. */
export function sameObservation(window: readonly TurnEntry[], active: readonly TurnEntry[], n: number): Found | undefined {
  const latest = last(active);
  const sig = signature(latest);
  if (n < 2 || sig === undefined || failed(latest) || latest.observationHash === undefined || latest.waiting) return undefined;
  const changed = contentChanges(window, active);
  const key = resultKey(latest);
  let hits: TurnEntry[] = [];
  for (const t of active) {
    if (changed.has(t) && signature(t) !== sig) hits = [];
    if (signature(t) === sig && resultKey(t) === key) hits.push(t);
  }
  if (hits.length < n) return undefined;
  return {
    pattern: "same_observation",
    summary: `${latest.tool} was called with the same arguments and returned the same result ${hits.length} times, with no file changed in between`,
    turns: hits,
    from: hits[0] as TurnEntry,
    signature: sig,
  };
}

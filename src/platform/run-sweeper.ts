/**
 * Crashed runs found without anyone asking. `detectCrashed` is a write step that status, resume
 * and doctor call; a process that stays up (`baton serve`, the MCP server) also calls it every
 * RUN_SWEEP_MS, so a run whose host died is marked crashed, and the work it leased given back,
 * within its ttl plus one sweep rather than whenever a person next looks. Sweeps never overlap,
 * a failed one is reported and the next one tries again, and the timer never keeps a process up.
 */

/** How often a long-lived process looks for crashed runs. */
export const RUN_SWEEP_MS = 10_000;

export interface SweepOptions<T> {
  everyMs?: number;
  /** Each sweep's result (the runs it marked crashed), when it marked any. */
  onCrashed?: (crashed: T[]) => void;
  onError?: (err: unknown) => void;
}

/** Start sweeping; returns the function that stops it (a sweep in flight finishes on its own). */
export function startRunSweeper<T>(detect: () => Promise<T[]>, o: SweepOptions<T> = {}): () => void {
  let busy = false;
  let stopped = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    detect()
      .then(
        (crashed) => {
          if (crashed.length > 0) o.onCrashed?.(crashed);
        },
        // A sweep cut short by the process closing its store is no failure worth a line.
        (err) => {
          if (!stopped) o.onError?.(err);
        },
      )
      .finally(() => {
        busy = false;
      });
  }, o.everyMs ?? RUN_SWEEP_MS);
  timer.unref();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}

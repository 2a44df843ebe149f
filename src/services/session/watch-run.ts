/**
 * `watch`: follow a session (an external run) until it is terminal.
 *
 * A phase that is terminal only after the deadline (external-run's `timeout`) is a transient
 * local timeout while the deadline is in the future: the watcher flips it back to polling
 * under the session's command lock, re-reading the session inside the lock (in the same
 * transaction as the fenced append), and reports a warning. After the deadline the same phase
 * is terminal and stays so. When another command holds the session's lock, the flip waits for
 * the next tick rather than racing it.
 */
import type { Backend } from "../../backend/contract.js";
import { type FlowDefinition, isTerminal } from "../../core/flows/flow.js";
import { sessionLockName } from "../../core/locks.js";
import type { Snapshot, TargetBinding } from "../../core/types.js";
import { badInput, isBatonError } from "../../errors.js";
import type { Journal } from "../journal/journal.js";
import { ChangeWait } from "../work/change-wait.js";
import type { LockService } from "../work/locks.js";

export interface WatchWarning {
  /** `transient_timeout`: a timeout before the deadline was turned back into polling. `lock_busy`: another command held the session; retried next tick. `no_resume_event`: the phase has no event back to a live phase. */
  code: "transient_timeout" | "lock_busy" | "no_resume_event";
  message: string;
}

/** One line of `baton watch --json`. */
export interface WatchLine {
  type: "start" | "tick" | "terminal" | "stopped";
  sessionId: string;
  at: string;
  phase: string;
  /** Ticks so far (0 on `start`). */
  n: number;
  terminal?: boolean;
  reason?: string;
  warnings?: WatchWarning[];
  flow?: string;
  deadline?: string;
  intervalMs?: number;
  target?: TargetBinding;
}

export interface TickResult {
  phase: string;
  terminal: boolean;
  reason?: string;
  warnings: WatchWarning[];
}

export interface FollowOptions {
  /** Between ticks. Default 2000 ms. */
  intervalMs?: number;
  signal?: AbortSignal;
  /** Stop after this many ticks (a `stopped` line); default: until terminal. */
  maxTicks?: number;
  onLine?: (line: WatchLine) => void;
}

/** The command lock a flip takes: short, it only guards one append. */
const FLIP_LOCK_TTL_MS = 30_000;

export class RunWatcher {
  readonly #backend: Backend;
  readonly #journal: Journal;
  readonly #locks: LockService;
  readonly #now: () => Date;

  constructor(backend: Backend, journal: Journal, locks: LockService, now: () => Date = () => new Date()) {
    this.#backend = backend;
    this.#journal = journal;
    this.#locks = locks;
    this.#now = now;
  }

  /** Look once: terminal or not, flipping a transient timeout back to polling. */
  async tick(sessionId: string): Promise<TickResult> {
    const { flow, snapshot: snap } = await this.#journal.read(sessionId);
    const now = this.#now();
    if (isTerminal(flow, snap.phase, snap.deadline, now))
      return { phase: snap.phase, terminal: true, reason: terminalReason(flow, snap), warnings: [] };
    if (flow.phases[snap.phase]?.terminal !== "after_deadline") return { phase: snap.phase, terminal: false, warnings: [] };
    return this.#flip(sessionId, flow, snap);
  }

  async #flip(sessionId: string, flow: FlowDefinition, snap: Snapshot): Promise<TickResult> {
    const resume = resumeEvent(flow, snap.phase);
    if (!resume) {
      return {
        phase: snap.phase,
        terminal: false,
        warnings: [
          {
            code: "no_resume_event",
            message: `phase ${snap.phase} is transient before the deadline, but the flow has no event back to a live phase`,
          },
        ],
      };
    }
    const name = sessionLockName(sessionId);
    let epoch: number;
    try {
      epoch = (await this.#locks.acquire(name, { owner: "watch", ttlMs: FLIP_LOCK_TTL_MS })).epoch;
    } catch (err) {
      if (!isBatonError(err, "lock_held")) throw err;
      return {
        phase: snap.phase,
        terminal: false,
        warnings: [
          {
            code: "lock_busy",
            message: `another command holds ${name}; the transient ${snap.phase} is left to it and looked at again next tick`,
          },
        ],
      };
    }
    try {
      return await this.#locks.withLock(name, epoch, async (tx) => {
        // Re-read inside the lock: a live poll may have moved the session meanwhile.
        const row = await tx.getSession(sessionId);
        const now = this.#now();
        if (!row || row.phase !== snap.phase) {
          const phase = row?.phase ?? snap.phase;
          return { phase, terminal: isTerminal(flow, phase, snap.deadline, now), warnings: [] };
        }
        if (isTerminal(flow, row.phase, snap.deadline, now))
          return { phase: row.phase, terminal: true, reason: terminalReason(flow, snap), warnings: [] };
        const [r] = await this.#journal.appendInTx(tx, sessionId, [
          { type: resume, actor: "watch", id: `watch-resume-${sessionId}-${row.lastSeq}` },
          {
            type: "note:added",
            actor: "watch",
            id: `watch-note-${sessionId}-${row.lastSeq}`,
            data: { text: `watch: a local ${row.phase} before the deadline (${snap.deadline}) is transient; resumed ${resume}` },
          },
        ]);
        return {
          phase: r?.phase || resume,
          terminal: false,
          warnings: [
            {
              code: "transient_timeout" as const,
              message: `the session was in ${row.phase} (seq ${row.lastSeq}) before its deadline ${snap.deadline}: a transient local timeout, not an outcome; resumed ${resume}`,
            },
          ],
        };
      });
    } finally {
      await this.#locks.release(name, epoch).catch(() => undefined);
    }
  }

  /** Tick every `intervalMs` (sooner when the journal changes) until terminal, aborted, or `maxTicks`. */
  async follow(sessionId: string, opts: FollowOptions = {}): Promise<WatchLine> {
    const intervalMs = opts.intervalMs ?? 2_000;
    if (!Number.isInteger(intervalMs) || intervalMs < 10 || intervalMs > 3_600_000)
      throw badInput(`the watch interval must be a whole number of milliseconds between 10 and 3600000, got ${opts.intervalMs}`);
    const emit = (l: WatchLine) => {
      opts.onLine?.(l);
      return l;
    };
    const first = await this.#journal.read(sessionId);
    const start: WatchLine = {
      type: "start",
      sessionId,
      at: this.#now().toISOString(),
      phase: first.snapshot.phase,
      n: 0,
      flow: first.flow.name,
      intervalMs,
    };
    if (first.snapshot.deadline !== undefined) start.deadline = first.snapshot.deadline;
    if (first.snapshot.target) start.target = first.snapshot.target;
    emit(start);
    const waiter = new ChangeWait(this.#backend, opts.signal);
    try {
      for (let n = 1; ; n++) {
        const t = await this.tick(sessionId);
        const line: WatchLine = {
          type: t.terminal ? "terminal" : "tick",
          sessionId,
          at: this.#now().toISOString(),
          phase: t.phase,
          n,
          terminal: t.terminal,
        };
        if (t.reason !== undefined) line.reason = t.reason;
        if (t.warnings.length > 0) line.warnings = t.warnings;
        emit(line);
        if (t.terminal) return line;
        if (opts.signal?.aborted || (opts.maxTicks !== undefined && n >= opts.maxTicks)) {
          return emit({
            type: "stopped",
            sessionId,
            at: this.#now().toISOString(),
            phase: t.phase,
            n,
            terminal: false,
            reason: opts.signal?.aborted ? "interrupted" : "max ticks",
          });
        }
        // A flip is a write: only other writers' commits cut the interval short.
        await waiter.passOwnWrites();
        await waiter.sleep(intervalMs);
        if (opts.signal?.aborted) {
          return emit({
            type: "stopped",
            sessionId,
            at: this.#now().toISOString(),
            phase: t.phase,
            n,
            terminal: false,
            reason: "interrupted",
          });
        }
      }
    } finally {
      waiter.close();
    }
  }
}

/** The event that takes a transient phase back to a live one: `polling` when the flow has it. */
function resumeEvent(flow: FlowDefinition, phase: string): string | undefined {
  const on = flow.phases[phase]?.on ?? {};
  const live = Object.entries(on).filter(([, rules]) =>
    (Array.isArray(rules) ? rules : [rules]).some((r) => r.to !== undefined && r.to !== phase && !flow.phases[r.to]?.terminal),
  );
  return (live.find(([e]) => e === "polling") ?? live[0])?.[0];
}

function terminalReason(flow: FlowDefinition, snap: Snapshot): string {
  return flow.phases[snap.phase]?.terminal === "after_deadline"
    ? `${snap.phase} after the deadline (${snap.deadline ?? "none set"}): terminal`
    : `phase ${snap.phase} is terminal`;
}

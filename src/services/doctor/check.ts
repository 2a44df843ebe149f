/**
 * What a doctor check is: a named object that says what it reads, finds problems, and may carry
 * one safe fix (the repair the system would make on its own sooner or later). The runner
 * (services/doctor/doctor.ts) runs the list in order, sets each finding's `check` and `safe`, and
 * applies the fixes it is asked for. One file per group of checks beside this one.
 */
import type { Backend } from "../../backend/contract.js";
import type { DoctorCheck, DoctorFinding } from "../../core/doctor.js";
import type { Journal } from "../journal/journal.js";
import type { LedgerHealth } from "../ledger/health.js";
import type { RunService } from "../session/runs.js";
import type { SessionStatus } from "../session/status.js";
import type { LockInfo, LockService } from "../work/locks.js";
import type { Queue } from "../work/queue.js";

export interface DoctorDeps {
  backend: Backend;
  journal: Journal;
  queue: Queue;
  locks: LockService;
  runs: RunService;
  /** Status of one session (markers, next action, pending work). */
  describe: (sessionId: string) => Promise<SessionStatus>;
  root: string;
  batonDir: string;
  now: () => Date;
  collectGarbage: () => Promise<{ blobsRemoved: number; tempsRemoved: number }>;
  /** The trajectory ledger's health, when the ledger exists. */
  ledgerHealth?: () => Promise<LedgerHealth>;
  /**
   * This workspace as checkpoints see it: its host, and which paths are private files whose
   * content stays in this workspace on a shared store (services/time-travel/checkpoint-config.ts).
   */
  checkpointFacts?: () => Promise<{ host(): string; keptLocal(rel: string): boolean; sharedAcrossHosts: boolean }>;
  /**
   * The paths a rollback of the session to checkpoint `to` would change now (planned, nothing
   * written; `lane`: as that agent lane's rollback): after a rollback to `to`, what changed since.
   */
  wouldChange?: (sessionId: string, to: string, lane?: string) => Promise<string[]>;
  /** What this process's environment decides (env-options.ts `envSettings`), compared with the server's; throws on a bad value. */
  envSettings?: () => string;
  /** Files a whole-tree checkpoint would leave out now (names it cannot store safely). */
  treeSkips?: () => Promise<{ path: string; reason: string }[]>;
  /** Baton's installed agent hooks and whether each agent will run them (given by the CLI). */
  hookSetup?: () => Promise<HookSetup[]>;
}

export interface HookSetup {
  agent: string;
  scope: string;
  file: string;
  willRun: boolean;
  remaining: string[];
  /** Installed as the agent's plugin or extension (`file` is its hooks.json). */
  route?: string;
  /** Also installed by the other route: the agent runs each hook twice (what to do). */
  twice?: string;
}

export interface DoctorOptions {
  sessionId?: string;
  /**
   * `true`: apply every safe fix. A list of finding codes (e.g. `["lease_expired"]`): apply only
   * the safe fixes of findings with those codes. Default: look only, write nothing.
   */
  fix?: boolean | readonly string[];
  hookSetup?: () => Promise<HookSetup[]>;
}

/** What every check is handed: the dependencies, the scope, and reads several checks share. */
export interface DoctorContext {
  deps: DoctorDeps;
  opts: DoctorOptions;
  /** The session in scope, if any. */
  sid: string | undefined;
  /** Its status (read first: an unknown session is `not_found` before anything else). */
  status: SessionStatus | undefined;
  /** Every session in scope, completed ones included. */
  sessions: string[];
  /** The active sessions in scope. */
  active: string[];
  /** Every lock (read once, by the locks check or the session view, whichever asks first). */
  locks(): Promise<LockInfo[]>;
}

/** A finding as a check makes it; the runner adds `check` and `safe`. */
export type Found = Omit<DoctorFinding, "check" | "safe" | "repaired">;

/**
 * A check's safe fix. Findings with one of `codes` are `safe: true`; `apply` repairs one of
 * them (from its evidence, checking again first where the state may have moved), and findings
 * that share a `key` are repaired once.
 */
export interface SafeFix {
  codes: readonly string[];
  /** What the fix does, in words, for a reader of the check. */
  does: string;
  key(f: DoctorFinding): string;
  subject(f: DoctorFinding): string;
  apply(f: DoctorFinding, ctx: DoctorContext): Promise<string>;
}

export interface Check {
  name: DoctorCheck;
  /** What it reads, in words. */
  reads: string;
  /** Runs only when doctor looks at one session. */
  sessionOnly?: boolean;
  fix?: SafeFix;
  /** The findings, or `{skipped}` saying why the check could not apply here. */
  run(ctx: DoctorContext): Promise<Found[] | { skipped: string }>;
}

/** At most this many ids, paths or hashes go into a finding's evidence. */
export const SAMPLE = 10;

/**
 * Baton's public API: what `openBaton()` returns, namespaced by capability. Types only; the
 * implementation is src/baton.ts, the wiring src/compose.ts. docs/api.md lists the same with
 * every option and its default. Longer than the house's ~400 lines on purpose: the whole public
 * surface is read in one place.
 *
 * Glossary: every noun of the vocabulary, defined once.
 *
 * - workspace: a project directory; Baton's data lives in `<root>/.baton/`.
 * - store: where the journal and everything beside it is kept: the workspace's SQLite file
 *   (default) or a PostgreSQL schema shared by a project's workspaces on many machines.
 * - session: a durable unit of agent work, with a flow, a phase, facets and a journal.
 * - event: one immutable journal entry `{sessionId, seq, id, type, actor, data, at}`; `seq` is
 *   contiguous per session, `id` is the idempotency key (same id + same body = the same event;
 *   same id + another body = `conflict`).
 * - journal: a session's events in order; the truth everything else is rebuilt from.
 * - flow: a declarative state machine: phases, the events that move between them, which events
 *   become work for the agent, priorities, the next action in each phase.
 * - snapshot: the session folded from its journal, keyed by the last folded seq. A cache:
 *   always rebuildable, never the truth.
 * - facets: state every session has whatever its flow: position, progress, decisions,
 *   blockers, runs, resume context, free context.
 * - work item: something a flow says the agent must do (an event that needs an answer).
 * - lease: a work item handed to one owner until it expires; its id is the fencing token that
 *   alone can ack (finish) or nack (give back) it. An expired lease is delivered again.
 * - run: one agent process working on a session; it heartbeats, ends, or is found crashed
 *   (its leases are then given back).
 * - checkpoint: a set of file versions taken before a tool changes them; a rollback restores
 *   one (and takes a safety checkpoint first, so it can be undone).
 * - blob: the content of one file version, stored once by its sha256. Blobs hold file contents
 *   verbatim (they must, to restore them).
 * - artifact: a named file kept with a session until it completes (a blob with a name).
 * - lesson: a sentence of advice with triggers (tool, path, failure fingerprint), kept in
 *   LESSONS.md, injected into the next agent prompt it is relevant to.
 * - turn: one agent tool call as the spiral detector sees it; a run of non-progressive turns is
 *   a spiral, which pauses the session until the user answers.
 * - ledger node: one tool-call attempt in the trajectory ledger, redacted and bounded before
 *   it is stored; kept beside the journal, not in it.
 * - lock: a named, heartbeated lease on a resource; a holder that is provably gone is reclaimed.
 * - epoch: a lock's fencing number, raised by every acquisition: a write carrying an older
 *   epoch is refused (`lock_lost`).
 * - target: the external thing a session is bound to (a browser tab, a remote job).
 * - marker: a literal string a flow names (`<!-- baton:variant -->`) that source files carry while
 *   work remains in them; status scans for it, and `complete` refuses while any remains.
 * - next action: the single thing to do now, with a stable code, a reason and the exact command.
 * - diagnostic: something Baton noticed and kept rather than threw away (a late event, a
 *   corrupt journal row, a repaired snapshot).
 * - hook event: what an agent's hook reports (a session start, a prompt, a tool call before or
 *   after it runs, a compaction, a turn's end), in one neutral shape whatever the agent.
 * - idempotency key: an id a caller gives a write so that sending it twice acts once (an
 *   event's id, a checkpoint's id, a rollback's key).
 */

import type { MigrationReport, SessionRow } from "./backend/contract.js";
import type { DoctorReport } from "./core/doctor.js";
import type { FlowDefinition } from "./core/flows/flow.js";
import type { AgentHookOptions, HookEvent, HookResponse } from "./core/hooks/types.js";
import type { ClaimHolder } from "./core/lanes.js";
import type { LedgerInput, LedgerNode } from "./core/ledger/nodes.js";
import type { Lesson, LessonDiagnostic } from "./core/lessons/lessons-md.js";
import type { LessonIntent } from "./core/lessons/rank.js";
import type { LaneView } from "./core/session/lane-view.js";
import type { TargetInput } from "./core/session/targets.js";
import type { Checkpoint, CheckpointInfo } from "./core/time-travel/checkpoints.js";
import type {
  AppendOptions,
  AppendResult,
  ArtifactRecord,
  Diagnostic,
  EventInput,
  JournalEvent,
  JsonObject,
  Position,
  Snapshot,
  TargetBinding,
} from "./core/types.js";
import type { ProcessFacts } from "./platform/process-facts.js";
import type { TurnInput, TurnResult } from "./services/agents/spiral.js";
import type { SpiralAnswer, SpiralAnswerResult } from "./services/agents/spiral-answer.js";
import type { DoctorOptions } from "./services/doctor/doctor.js";
import type { FlowFileReport } from "./services/flows.js";
import type { SessionView, StartSessionInput } from "./services/journal/journal.js";
import type { JournalChange } from "./services/journal/watch.js";
import type { LedgerHealth } from "./services/ledger/health.js";
import type { LedgerListOptions, LedgerOptions, OtlpSendResult } from "./services/ledger/ledger.js";
import type { LessonEditResult } from "./services/lessons/lesson-edit.js";
import type { LessonInjection, LessonInput, LessonSearchResult, LessonsReport, ListedLesson } from "./services/lessons/lessons.js";
import type { EventScan, SessionOverview, SessionVersions } from "./services/session/overview.js";
import type { CrashedRun, RunStartInput } from "./services/session/runs.js";
import type { CompleteResult, ResumeReport, StatusReport } from "./services/session/status.js";
import type { TargetResolution } from "./services/session/targets.js";
import type { FollowOptions, TickResult, WatchLine } from "./services/session/watch-run.js";
import type { ArtifactInfo, ArtifactInput } from "./services/time-travel/artifacts.js";
import type { CheckpointPairDiff } from "./services/time-travel/checkpoint-diff.js";
import type { CheckpointInput, CheckpointOptions, CheckpointResult, CollectResult } from "./services/time-travel/checkpoints.js";
import type { RollbackInput, RollbackResult } from "./services/time-travel/rollback.js";
import type { AcquireOptions, LockGrant, LockInfo } from "./services/work/locks.js";
import type { AckResult, DeadItem, Lease, LeaseRequest, NackResult, PendingWork, ResultInput, RetryResult } from "./services/work/queue.js";

/** How hard a commit waits for the disk before it is acknowledged. */
export type Durability =
  /** Every acknowledged write is fsynced: it survives a power cut. */
  | "full"
  /** The database stays consistent, but the last writes before a power cut (not a crash) may be lost. */
  | "relaxed"
  /** Nothing waits for the disk: an OS crash or power cut may lose recent writes or damage the store. Throwaway workspaces only. */
  | "none";

export interface OpenBatonOptions {
  /** Workspace root. Default: walk up from `cwd` to the nearest `.baton/`, else `cwd`. */
  root?: string;
  /** Where to start looking for the workspace. Default `process.cwd()`. */
  cwd?: string;
  /** Create `.baton/` when missing. Default true. */
  create?: boolean;
  /**
   * The embedded store's commits. Default `"full"` (env `BATON_DURABILITY`). A PostgreSQL store
   * commits as its server's `synchronous_commit` says.
   */
  durability?: Durability;
  /** Wait this long for another process's write lock (embedded store). Default 10 000 ms. */
  busyTimeoutMs?: number;
  /**
   * A server store (PostgreSQL): how long to keep trying to connect before `storage_unavailable`
   * (env `BATON_STORE_TIMEOUT_MS`). Default 5 000 ms; hooks use 1 000 so an agent is never held
   * up long by a store that is down (they fail open).
   */
  storeTimeoutMs?: number;
  /**
   * A server store (PostgreSQL): the statement bound. A statement or COMMIT the server has not
   * answered within this long (plus a second's grace and 1 ms per KiB it sends) fails with
   * `storage_unavailable` (a COMMIT's with `details.outcome: "unknown"`), so no call waits without
   * bound on a frozen or cut-off server; the server cancels a statement that runs this long
   * (env `BATON_STORE_STATEMENT_TIMEOUT_MS`). Default 30 000 ms; migrations get at least 10 minutes.
   */
  storeStatementTimeoutMs?: number;
  /**
   * A store to use instead of the one the workspace is configured for: from `openSqliteStore`
   * or `openPostgresStore`. Otherwise: `BATON_STORE` / `BATON_PROJECT`, else
   * `.baton/config.json`'s store and project (once its user trusted the file: `baton trust`), else
   * the workspace's `.baton/baton.db`. Closed by `close()`.
   */
  store?: Store;
  /** Clock, for tests. Default `() => new Date()`. */
  now?: () => Date;
  /** Deliveries of a work item before it is dead-lettered. Default 5. */
  maxAttempts?: number;
  /** Lease length when a lease request names none. Default 60 000 ms. */
  defaultLeaseMs?: number;
  /**
   * Checkpoints: `retain` per session (default 100, env `BATON_CHECKPOINT_RETAIN`), `exclude`
   * (gitignore-style patterns no checkpoint stores), `private` (patterns of private files,
   * after the built-in list: on a store shared across hosts their content stays in this
   * workspace), `maxFileBytes` (default 64 MiB), `inlineMaxBytes` (default 1 MiB; a shared
   * store's blob limit), `stageAheadBytes` (default 32 MiB).
   */
  checkpoints?: Omit<CheckpointOptions, "durable">;
  /** Process facts (host, pid liveness, start times) for lock and run proofs; tests fake them. Default: this machine's. */
  processFacts?: ProcessFacts;
  /**
   * A name for this process's host, added to its host identity (env `BATON_HOST_ID` for the
   * CLI, servers and hooks): processes given different names count as different hosts, so a
   * lock or run of one is judged by its expiry only, never by its pid. It cannot make
   * processes of different machines, boots or pid namespaces one host. 1-128 letters, digits
   * and `. _ : @ -`.
   */
  hostId?: string;
  /** Trajectory ledger: caps (nodes per session, bytes per node, total bytes) and commit durability. */
  ledger?: LedgerOptions;
}

declare const storeBrand: unique symbol;

/** An open store, opaque: from `openSqliteStore` or `openPostgresStore`, handed to `openBaton({ store })`. */
export interface Store {
  readonly kind: string;
  readonly [storeBrand]: true;
}

export interface SqliteStoreOptions {
  /** The database file (created when missing; its directory must exist). */
  path: string;
  /** Default `"full"`. */
  durability?: Durability;
  /** Wait this long for another process's write lock before `storage_busy`. Default 10 000 ms. */
  busyTimeoutMs?: number;
}

export interface PostgresStoreOptions {
  /** `postgres://user@host:port/db`; the password from PGPASSWORD or ~/.pgpass (one in the URL works, but Baton never writes it down). */
  url: string;
  /** The Baton project: its schema is `baton_<project>_<hash8>`; 1-48 lowercase letters, digits, `_` or `-`. */
  project: string;
  /** Connections per process. Default 8. */
  poolSize?: number;
  /** Keep trying to connect (with backoff) this long before `storage_unavailable`. Default 5 000 ms. */
  connectTimeoutMs?: number;
  /** The statement bound (see OpenBatonOptions.storeStatementTimeoutMs). Default 30 000 ms. */
  statementTimeoutMs?: number;
  /** The largest blob stored in the database. Default 64 MiB. */
  blobMaxBytes?: number;
}

/** The store in use: its kind, where it is (a URL without password, or the SQLite file), project, and what chose it. */
export interface StoreInfo {
  kind: string;
  location: string;
  project?: string;
  source: string;
  /** What opening it migrated (the SQLite file or PostgreSQL schema brought up to date), when the backend says. */
  migration?: MigrationReport;
}

/** A session as listed: its row (id, flow, title, phase, status, created/updated, last seq), without folding the journal. */
export type SessionSummary = SessionRow;

export interface DecisionInput {
  decision: string;
  context?: string;
  reason?: string;
  alternatives?: string[];
  reversible?: boolean;
}

export interface BlockerInput {
  text: string;
  /** Default: a generated `blk-…` id. */
  id?: string;
  affects?: string;
  workaround?: string;
}

export interface ResumeContextInput {
  /** The `resume:updated` event's idempotency key, for a caller that may send it twice. */
  id?: string;
  /** Files the session modified: recorded with their current hash, size and time (relative to the root). */
  files?: string[];
  keyImplementations?: string[];
  openQuestions?: string[];
}

/** Sessions: start, list, read, and what to do next. */
export interface Sessions {
  start(input: StartSessionInput): Promise<Snapshot>;
  /** Active sessions (with `includeCompleted`, all), oldest first. */
  list(opts?: { includeCompleted?: boolean }): Promise<SessionSummary[]>;
  /** The snapshot folded up to the last event, with its diagnostics. */
  read(sessionId: string): Promise<SessionView>;
  snapshot(sessionId: string): Promise<Snapshot>;
  /** The session a command means: the one named, else the single active one (`not_found` / `ambiguous_session`). */
  resolve(sessionId?: string): Promise<string>;
  /** Every active session (with `all`, also completed ones) with its next action. */
  status(opts?: { all?: boolean; sessionId?: string }): Promise<StatusReport>;
  /** Everything a fresh agent needs: facets, recent events, recorded files re-checked. */
  resume(sessionId: string): Promise<ResumeReport>;
  /** Complete the session; refused with `source_dirty` while markers remain, unless `force`. */
  complete(sessionId: string, opts?: { force?: boolean; actor?: string }): Promise<CompleteResult>;
  /** Every session's status with its last run and journal length, active first (the dashboard's list). */
  overview(ids?: readonly string[]): Promise<SessionOverview[]>;
  /**
   * Short tags of the parts of a session that change without a journal event (its newest ledger
   * node; its checkpoints, pinned and pruned; its open and dead-lettered work): equal tags, same
   * content. The dashboard's session stream sends them, so a page re-reads only what moved.
   */
  versions(sessionId: string): Promise<SessionVersions>;
  /** Refold snapshots from the journal (one session or all); a damaged one is repaired and noted. */
  rebuild(sessionId?: string): Promise<{ sessionId: string; repaired: boolean; lastSeq: number; phase: string }[]>;
  /** STATE.md for the session, as text. */
  stateMarkdown(sessionId: string): Promise<string>;
  /** Write `.baton/sessions/<id>/STATE.md` (atomically); returns its path. */
  writeStateMarkdown(sessionId: string): Promise<string>;
  /** Write STATE.md only when the journal moved on since it was last written; its path when written. */
  refreshStateMarkdown(sessionId: string): Promise<string | undefined>;
}

/** The journal: append events, read them back, be told when it grows. */
export interface Events {
  /** One durable transaction: validated, deduplicated by id, moved through the flow. */
  append(sessionId: string, input: EventInput, opts?: AppendOptions): Promise<AppendResult>;
  /** Many events in one transaction: all or nothing, one fsync. */
  appendBatch(sessionId: string, inputs: readonly EventInput[], opts?: AppendOptions): Promise<AppendResult[]>;
  /** The event appended with idempotency key `id`, if any (what an earlier attempt of the same caller decided). */
  find(sessionId: string, id: string): Promise<JournalEvent | undefined>;
  /** Events after `afterSeq` (default 0), at most `limit` (default 1 000); rows that no longer parse as `corrupt` diagnostics. */
  list(sessionId: string, opts?: { afterSeq?: number; limit?: number }): Promise<{ events: JournalEvent[]; corrupt: Diagnostic[] }>;
  /** Events filtered by type and/or actor, read in bounded slices (`next` continues the scan). */
  scan(sessionId: string, opts: { after: number; limit: number; type?: string; actor?: string }): Promise<EventScan>;
  /** The session's journal as JSON Lines, one event per line (unreadable rows as `{seq, corrupt}`). */
  exportJsonl(sessionId: string): AsyncGenerator<string>;
  /** Be told when any session's journal grows (this process at once, others within ms). Returns the unsubscribe. */
  watch(listener: (change: JournalChange) => void): () => void;
  /**
   * Be told when anything in the store may have changed (any write by any process, journaled or
   * not: a ledger node, a checkpoint), without detail. Returns the unsubscribe.
   */
  onStoreChange(listener: () => void): () => void;
}

/** Facets every session has; each change is one journal event. `actor` defaults to `"agent"`. */
export interface Facets {
  addDecision(sessionId: string, d: DecisionInput, actor?: string): Promise<AppendResult>;
  addBlocker(sessionId: string, b: BlockerInput, actor?: string): Promise<AppendResult>;
  resolveBlocker(sessionId: string, id: string, resolution?: string, actor?: string): Promise<AppendResult>;
  bypassBlocker(sessionId: string, id: string, workaround: string, actor?: string): Promise<AppendResult>;
  /** At least one of phase, plan, task, wave, status. */
  setPosition(sessionId: string, p: Position, actor?: string): Promise<AppendResult>;
  setProgress(sessionId: string, p: { total?: number; completed?: number }, actor?: string): Promise<AppendResult>;
  /** Record files the session modified (with their current hashes) and resume notes. */
  recordResumeContext(sessionId: string, r: ResumeContextInput, actor?: string, opts?: AppendOptions): Promise<AppendResult>;
  setContext(sessionId: string, values: JsonObject, actor?: string): Promise<AppendResult>;
}

/** Delivery: work for the agent under leases, finished only by an ack with the lease's id. */
export interface Work {
  /** The most urgent ready item (by flow priority), leased to `owner`; undefined when none. */
  lease(owner: string, req?: LeaseRequest): Promise<Lease | undefined>;
  /** Like `lease`, waiting up to `timeoutMs` for work to arrive (long-poll). */
  waitFor(owner: string, req: LeaseRequest & { timeoutMs: number; signal?: AbortSignal }): Promise<Lease | undefined>;
  /** Extend a lease by `leaseMs` (default: `defaultLeaseMs`, whatever the lease's first length was). */
  heartbeat(leaseId: string, opts?: { leaseMs?: number }): Promise<{ leaseId: string; expiresAt: string }>;
  /** Finish the item; `result` is journaled as the answer event. Idempotent for the same lease. */
  ack(leaseId: string, result?: ResultInput): Promise<AckResult>;
  /** Give the item back (ready again after `delayMs`, default 0). */
  nack(leaseId: string, opts?: { delayMs?: number; reason?: string }): Promise<NackResult>;
  /** Open work (ready or leased, with the lease's holder and expiry), one session or all; dead-lettered work is `dead`. */
  pending(sessionId?: string): Promise<PendingWork[]>;
  /**
   * A person gives someone's leased work back (the dashboard's "Release"): a nack, refused with
   * `lease_lost` unless the lease still holds its item as leased.
   */
  release(leaseId: string, opts?: { reason?: string }): Promise<NackResult>;
  /** A session's dead-lettered work that no event handled since, oldest first (at most 20). */
  dead(sessionId: string): Promise<DeadItem[]>;
  /** Deliver dead-lettered work again with fresh attempts (`conflict` unless it is still dead and unhandled). */
  retry(itemId: string): Promise<RetryResult>;
}

/** Checkpoints of the workspace's files, and rollback. */
export interface Checkpoints {
  /** Checkpoint the files a tool is about to write (`files`), or the whole tree (`all`). */
  create(sessionId: string, input?: CheckpointInput): Promise<CheckpointResult>;
  /** A session's live checkpoints, oldest first; pruned ones too with `includePruned`; only ids starting with `idPrefix` with it. */
  list(sessionId: string, opts?: { includePruned?: boolean; idPrefix?: string }): Promise<CheckpointInfo[]>;
  get(id: string): Promise<Checkpoint>;
  /** Pinned checkpoints are never pruned. */
  pin(id: string, pinned?: boolean): Promise<CheckpointInfo>;
  /** Per-file differences between two checkpoints of a session. */
  diff(fromId: string, toId: string): Promise<CheckpointPairDiff>;
  /** Roll back one step, `steps`, or `to` a checkpoint; `dryRun` returns the plan only. */
  rollback(sessionId: string, input?: RollbackInput): Promise<RollbackResult>;
  /** Delete blobs nothing references (older than `graceMs`, default 1 h) and stale temp files. */
  collectGarbage(opts?: { graceMs?: number }): Promise<CollectResult>;
}

/** Named files kept with a session until it completes. */
export interface Artifacts {
  add(sessionId: string, input: ArtifactInput): Promise<ArtifactRecord>;
  list(sessionId: string): Promise<ArtifactInfo[]>;
  get(sessionId: string, idOrName: string): Promise<{ artifact: ArtifactInfo; content: Buffer }>;
}

/** Lessons: LESSONS.md is the source; these read, rank and edit it. */
export interface Lessons {
  /**
   * Write a lesson (scope `session` by default: give its `sessionId`). A lesson the file holds
   * already (the same id, or none given, with the same text, scope and triggers) is answered as
   * it is, written and journaled once. `warnings` (here and on `remove` / `edit`): what failed
   * after LESSONS.md was written (the search index refresh, the directory's fsync, the writers'
   * lock release); the change was made, so it is not an error to retry.
   */
  add(
    input: LessonInput,
  ): Promise<{ lesson: Lesson; file: string; journaled?: AppendResult; diagnostics: LessonDiagnostic[]; warnings?: string[] }>;
  /** Lessons as one session sees them (`sessionId`) or all; with `versions`, each lesson's version for `edit` / `remove`. */
  list(opts?: { sessionId?: string; all?: boolean; versions?: boolean }): Promise<LessonsReport & { lessons: ListedLesson[] }>;
  search(intent: LessonIntent, opts?: { k?: number }): Promise<LessonSearchResult>;
  /** The markdown block of the top `k` lessons (default 5) for an intent, within `maxChars` (default 2 000). */
  inject(intent: LessonIntent, opts?: { k?: number; maxChars?: number }): Promise<LessonInjection>;
  /** Remove a lesson; with `version`, only as it was then (changed meanwhile: `conflict`, nothing written). */
  remove(id: string, opts?: { version?: string }): Promise<{ id: string; removed: number; file: string; warnings?: string[] }>;
  /** Change a lesson's text or pin, made from the lesson as it was at `version` (changed meanwhile: `conflict`). */
  edit(id: string, version: string, change: { text?: string; pinned?: boolean }): Promise<LessonEditResult & { warnings?: string[] }>;
  /** Each lesson's current version, by id. */
  versions(): Promise<Map<string, string>>;
  /** LESSONS.md as it is on disk (`text` undefined while there is none). */
  file(): Promise<{ file: string; text: string | undefined }>;
  /** Parse LESSONS.md and report its problems. */
  check(): Promise<LessonsReport & { lessons: number }>;
}

/** Turns and the spiral detector. */
export interface Turns {
  /** Record a turn; one that completes a spiral pauses the session. */
  record(sessionId: string, turn: TurnInput, opts?: AppendOptions): Promise<TurnResult>;
  /** The user's answer to the pause detected at `detectedAt` (a pause cleared or renewed meanwhile: `conflict`). */
  answerSpiralPause(sessionId: string, answer: SpiralAnswer): Promise<SpiralAnswerResult>;
  /**
   * Clear a spiral pause; `unpaused: false` when the session was not paused. `id`: the
   * `spiral:cleared` event's idempotency key (a repeat with it answers as the first did).
   */
  unpause(
    sessionId: string,
    opts?: { reason?: string; actor?: string; id?: string; lane?: string },
  ): Promise<{ unpaused: boolean; seq?: number }>;
}

/** The trajectory ledger: one redacted, bounded node per tool-call attempt. */
export interface Ledger {
  /**
   * Record one tool-call attempt. The input is redacted and queued before this returns; the
   * promise resolves with the node once committed (group-committed with others). Never
   * rejects: a node that cannot be written resolves `undefined` and counts in `health()`, so the
   * tool call it describes is never failed by it.
   */
  record(sessionId: string, input: LedgerInput): Promise<LedgerNode | undefined>;
  /** A session's nodes, oldest first (filtered by status, tool, workflow, tab; the newest `limit`). */
  list(sessionId: string, opts?: LedgerListOptions): Promise<LedgerNode[]>;
  node(nodeId: string): Promise<LedgerNode>;
  /** One session's (or all) nodes as lines: `jsonl` (default) or `otlp` (OTLP/JSON requests, ≤ 512 spans each). */
  export(opts?: { sessionId?: string; format?: "jsonl" | "otlp" }): AsyncGenerator<string>;
  /** POST the ledger as OTLP/JSON spans to `<endpoint>/v1/traces` (timeout default 10 000 ms). */
  sendOtlp(opts: { endpoint: string; headers?: Record<string, string>; sessionId?: string; timeoutMs?: number }): Promise<OtlpSendResult>;
  /** Failed ledger writes in this workspace (persisted beside the database). */
  health(): LedgerHealth;
}

/** Agent runs on a session. */
export interface Runs {
  /** `run:started` and its liveness row; `pid` defaults to this process, `ttlMs` to 30 min. A run id started again returns that run (`result.duplicate`). */
  start(sessionId: string, r: RunStartInput): Promise<{ runId: string; result: AppendResult; expiresAt: string }>;
  /** Keep a run alive; `run_crashed` once it was marked crashed. */
  heartbeat(
    sessionId: string,
    runId: string,
    opts?: { ttlMs?: number },
  ): Promise<{ runId: string; heartbeatAt: string; expiresAt: string }>;
  /** `id`: the `run:ended` event's idempotency key, for a caller that may send the end twice. */
  end(
    sessionId: string,
    runId: string,
    r?: { reason?: string; completedWork?: string; contextUsage?: number; id?: string },
    actor?: string,
  ): Promise<AppendResult>;
  /** Mark runs that are provably gone as crashed, giving their leases back; `dryRun` only reports. */
  detectCrashed(opts?: { sessionId?: string; dryRun?: boolean }): Promise<CrashedRun[]>;
}

/** Named, heartbeated locks fenced by their epoch. */
export interface Locks {
  /** Acquire (fail fast with `lock_held`, or wait `waitMs`); the grant's epoch fences the writes it guards. */
  acquire(name: string, opts?: AcquireOptions): Promise<LockGrant>;
  heartbeat(name: string, epoch: number, opts?: { ttlMs?: number }): Promise<{ name: string; epoch: number; expiresAt: string }>;
  release(name: string, epoch: number): Promise<{ name: string; epoch: number; released: true }>;
  /** The epoch with which process `pid` on this host holds the lock (`lock_held` when someone else does). */
  epochHeldBy(name: string, pid: number): Promise<number>;
  inspect(name: string): Promise<LockInfo>;
  list(): Promise<LockInfo[]>;
  /** Append to a session under the lock: `lock_lost` when `epoch` no longer holds `name`. */
  append(name: string, epoch: number, sessionId: string, input: EventInput): Promise<AppendResult>;
}

/** The external target a session is bound to, and watching an external run. */
export interface Targets {
  set(sessionId: string, t: TargetInput, actor?: string): Promise<{ target: TargetBinding; result: AppendResult }>;
  get(sessionId: string): Promise<TargetBinding | undefined>;
  clear(sessionId: string, reason?: string, actor?: string): Promise<AppendResult>;
  /** The bound target; with `observed`, `target_mismatch` unless `allowNavigate` or `force`. */
  resolve(
    sessionId: string,
    observed?: Partial<TargetInput>,
    opts?: { allowNavigate?: boolean; force?: boolean; actor?: string },
  ): Promise<TargetResolution>;
  /** Look at an external-run session once (a transient timeout before the deadline goes back to polling). */
  watchTick(sessionId: string): Promise<TickResult>;
  /** Follow a session until it is terminal; `onLine` gets each line. */
  watchRun(sessionId: string, opts?: FollowOptions): Promise<WatchLine>;
}

/** Flows: the built-in ones and the workspace's flow files. */
export interface Flows {
  names(): Promise<string[]>;
  get(name: string): Promise<FlowDefinition>;
  /** Each flow file in `.baton/flows/` with its problems. */
  reports(): Promise<FlowFileReport[]>;
}

/** Agent lanes: several agent sessions at work in one session at once (core/lanes.ts). */
export interface Lanes {
  /** The lanes working in a session now, most recently active first, each with the files it claims. */
  list(sessionId: string): Promise<LaneView[]>;
  /**
   * The live claims every other agent lane holds on these files (for `lane`, about to write
   * them), newest first. `snapshot`: the session's state the caller has just read, not read again.
   */
  claimsOn(sessionId: string, lane: string, paths: readonly string[], snapshot?: Snapshot): Promise<ClaimHolder[]>;
  /** Every live claim every other agent lane holds (`lane`'s family left out), newest first. */
  claimsOfOthers(sessionId: string, lane: string): Promise<ClaimHolder[]>;
}

/** Agent hooks: Baton's part in an agent's loop (docs/integrations.md, "Agent hooks"). */
export interface Agents {
  /**
   * Answer one hook, translated by the agent's adapter (core/hooks/) into a neutral event: the
   * response holds context for the model, a message for the user, or a refusal of the tool.
   * Never throws: Baton's own failures are logged to `.baton/logs/hooks.log` and answered with
   * `{}`, so the agent goes on.
   */
  handle(event: HookEvent, opts?: AgentHookOptions): Promise<HookResponse>;
}

/** The workspace's health. */
export interface Health {
  /** Check the workspace (or one session); `fix` applies the safe repairs. Never prompt or answer text. */
  doctor(opts?: DoctorOptions): Promise<DoctorReport>;
}

/** An open workspace. */
export interface Baton {
  /** The workspace root (absolute). */
  readonly root: string;
  /** The workspace root and its `.baton/` directory. */
  readonly workspace: { readonly root: string; readonly dir: string };
  /** Which store is in use (never a password). */
  readonly store: StoreInfo;
  readonly sessions: Sessions;
  readonly events: Events;
  readonly facets: Facets;
  readonly work: Work;
  readonly checkpoints: Checkpoints;
  readonly artifacts: Artifacts;
  readonly lessons: Lessons;
  readonly turns: Turns;
  readonly ledger: Ledger;
  readonly runs: Runs;
  readonly locks: Locks;
  readonly targets: Targets;
  readonly flows: Flows;
  readonly health: Health;
  readonly agents: Agents;
  readonly lanes: Lanes;
  /**
   * The time every expiry and availability decision uses: leases, locks, runs, lanes. On a
   * store shared by hosts, the database's clock (read as this host's plus the measured offset),
   * so hosts whose clocks disagree still agree; else this host's. `openBaton({ now })` replaces it.
   */
  now(): Date;
  /** Write what is queued (ledger records) without closing: for a process about to exit. */
  flush(): Promise<void>;
  /** Write what is queued, then close the store. Idempotent. */
  close(): Promise<void>;
}

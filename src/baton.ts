import { join, resolve } from "node:path";
import type { Backend, StoreTx } from "./backend/contract.js";
import type { SynchronousMode } from "./backend/sqlite/sqlite-backend.js";
import { randomHex } from "./core/canonical.js";
import type { Checkpoint, CheckpointInfo } from "./core/checkpoints.js";
import type { DoctorReport } from "./core/doctor.js";
import type { LedgerInput, LedgerNode } from "./core/ledger.js";
import type { LessonIntent } from "./core/lesson-rank.js";
import { isPlaceholder } from "./core/shell.js";
import { renderStateMd } from "./core/state-md.js";
import type { TargetInput } from "./core/targets.js";
import type { AppendResult, ArtifactRecord, EventInput, JsonObject, Position, Snapshot, TargetBinding } from "./core/types.js";
import { BatonError, badInput } from "./errors.js";
import type { ArtifactInfo, ArtifactInput, ArtifactService } from "./services/artifacts.js";
import type { CheckpointInput, CheckpointOptions, CheckpointResult, CheckpointService } from "./services/checkpoints.js";
import type { DoctorOptions } from "./services/doctor.js";
import { fingerprintFile, workspaceRelative } from "./services/files.js";
import { FlowRegistry } from "./services/flows.js";
import { Journal, type SessionView, type StartSessionInput } from "./services/journal.js";
import type { LedgerListOptions, LedgerOptions, LedgerService, OtlpSendResult } from "./services/ledger.js";
import { type LedgerHealth, LedgerHealthTracker } from "./services/ledger-health.js";
import type { LessonInjection, LessonInput, LessonSearchResult, LessonService } from "./services/lessons.js";
import type { AcquireOptions, LockGrant, LockInfo, LockService } from "./services/locks.js";
import { loadPostgres } from "./services/pg-loader.js";
import type { ProcessFacts } from "./services/process-facts.js";
import {
  type AckResult,
  type DeadItem,
  type Lease,
  type LeaseRequest,
  type PendingWork,
  Queue,
  type ResultInput,
} from "./services/queue.js";
import type { RollbackInput, RollbackResult, RollbackService } from "./services/rollback.js";
import type { CrashedRun, RunService } from "./services/runs.js";
import { atomicWrite, readCurrent } from "./services/safe-fs.js";
import type { SpiralService, TurnInput, TurnResult } from "./services/spiral.js";
import type { SpiralAnswer } from "./services/spiral-answer.js";
import { type ResumeReport, type StatusReport, StatusService } from "./services/status.js";
import { describeStore, resolveStore } from "./services/store-config.js";
import type { TargetResolution, TargetService } from "./services/targets.js";
import { type JournalChange, JournalWatcher } from "./services/watch.js";
import type { FollowOptions, RunWatcher, TickResult, WatchLine } from "./services/watch-run.js";
import { resolveWorkspace, type Workspace } from "./services/workspace.js";

/** The store in use: its kind, where it is (a URL without password, or the SQLite file), project, and what chose it. */
export interface StoreInfo {
  kind: string;
  location: string;
  project?: string;
  source: string;
}

export interface OpenBatonOptions {
  /** Workspace root. Default: walk up from `cwd` to the nearest `.baton/`, else `cwd`. */
  root?: string;
  cwd?: string;
  /** Create `.baton/` when missing. Default true. */
  create?: boolean;
  /** SQLite durability. Default `FULL`: an acknowledged append survives power loss. */
  synchronous?: SynchronousMode;
  /** Wait this long for another process's write lock. Default 10 000 ms. */
  busyTimeoutMs?: number;
  /**
   * A server store (PostgreSQL): how long to keep trying to connect before `storage_unavailable`
   * (env BATON_STORE_TIMEOUT_MS). Default 5 000 ms; hooks use 1 000 so an agent is never held
   * up long by a store that is down (they fail open).
   */
  storeTimeoutMs?: number;
  /**
   * A backend to use instead of the one the workspace is configured for (tests). Otherwise:
   * BATON_STORE / BATON_PROJECT, else `.baton/config.json`'s store and project, else the
   * workspace's SQLite file (services/store-config.ts).
   */
  backend?: Backend;
  /** Clock, for tests. */
  now?: () => Date;
  /** Deliveries of a work item before it is dead-lettered. Default 5. */
  maxAttempts?: number;
  /** Lease length when a poll names none. Default 60 000 ms. */
  defaultLeaseMs?: number;
  /** Checkpoints: retention per session (default 100), extra excludes, size limit. */
  checkpoints?: CheckpointOptions;
  /** Process facts (host, pid liveness, start times) for lock and run proofs; tests fake them. */
  processFacts?: ProcessFacts;
  /** Trajectory ledger: caps (nodes per session, bytes per node, total bytes) and commit durability. */
  ledger?: LedgerOptions;
}

export interface DecisionInput {
  decision: string;
  context?: string;
  reason?: string;
  alternatives?: string[];
  reversible?: boolean;
}

export interface BlockerInput {
  text: string;
  id?: string;
  affects?: string;
  workaround?: string;
}

export class Baton {
  readonly workspace: Workspace;
  readonly backend: Backend;
  /** Which store this Baton uses, for doctor and status (never a password). */
  readonly store: StoreInfo;
  readonly flows: FlowRegistry;
  readonly journal: Journal;
  readonly queue: Queue;
  readonly #status: StatusService;
  readonly #watcher: JournalWatcher;
  readonly #now: () => Date;
  readonly #checkpointOpts: CheckpointOptions;
  #checkpointing: Promise<Checkpointing> | undefined;
  #learning: Promise<LessonService> | undefined;
  #spiraling: Promise<SpiralService> | undefined;
  #operating: Promise<Operations> | undefined;
  readonly #processFacts: ProcessFacts | undefined;
  readonly #ledgerOpts: LedgerOptions;
  readonly #ledgerHealth: LedgerHealthTracker;
  #ledger: Promise<LedgerService> | undefined;
  #ledgerLoaded: LedgerService | undefined;
  #closing: Promise<void> | undefined;

  constructor(
    workspace: Workspace,
    backend: Backend,
    now: () => Date,
    opts: Pick<OpenBatonOptions, "maxAttempts" | "defaultLeaseMs" | "checkpoints" | "synchronous" | "processFacts" | "ledger"> & {
      store?: StoreInfo;
    } = {},
  ) {
    this.store = opts.store ?? { kind: backend.kind, location: workspace.dbPath, source: "default" };
    this.#processFacts = opts.processFacts;
    this.#ledgerOpts = opts.ledger ?? {};
    this.#ledgerHealth = new LedgerHealthTracker(workspace.dir, now);
    this.#checkpointOpts = { durable: (opts.synchronous ?? "FULL") === "FULL", ...opts.checkpoints };
    this.workspace = workspace;
    this.backend = backend;
    this.#now = now;
    this.flows = new FlowRegistry(workspace.flowsDir);
    this.journal = new Journal(backend, this.flows, { now });
    this.queue = new Queue(backend, this.journal, { now, ...opts });
    this.#status = new StatusService(this.journal, this.queue, workspace.root, now, backend, opts.processFacts);
    this.#watcher = new JournalWatcher(backend);
  }

  get root(): string {
    return this.workspace.root;
  }

  // Sessions and events

  startSession(input: StartSessionInput): Promise<Snapshot> {
    return this.journal.startSession(input);
  }

  listSessions(opts: { includeCompleted?: boolean } = {}) {
    return this.journal.listSessions(opts);
  }

  read(sessionId: string): Promise<SessionView> {
    return this.journal.read(sessionId);
  }

  async snapshot(sessionId: string): Promise<Snapshot> {
    return (await this.journal.read(sessionId)).snapshot;
  }

  append(sessionId: string, input: EventInput): Promise<AppendResult> {
    return this.journal.append(sessionId, input);
  }

  appendBatch(sessionId: string, inputs: readonly EventInput[]): Promise<AppendResult[]> {
    return this.journal.appendBatch(sessionId, inputs);
  }

  events(sessionId: string, opts?: { afterSeq?: number; limit?: number }) {
    return this.journal.events(sessionId, opts);
  }

  /** A session's events filtered by type and/or actor, read in bounded slices (services/session-overview.ts). */
  async scanEvents(sessionId: string, opts: { after: number; limit: number; type?: string; actor?: string }) {
    const { scanEvents } = await import("./services/session-overview.js");
    return scanEvents(this.journal, sessionId, opts);
  }

  /** Every session's status with its last run and journal length, active first (the dashboard's sessions). */
  async sessionOverview(ids?: readonly string[]) {
    const { sessionOverview } = await import("./services/session-overview.js");
    return sessionOverview(this.journal, (opts) => this.status(opts), ids);
  }

  rebuild(sessionId?: string) {
    return this.journal.rebuild(sessionId);
  }

  /** The session's journal as JSON Lines, one event per line (unreadable rows as `{seq, corrupt}`). */
  async *exportJsonl(sessionId: string): AsyncGenerator<string> {
    for await (const row of this.journal.exportRows(sessionId)) yield `${JSON.stringify(row)}\n`;
  }

  /**
   * The session a command means: the one named, else the single active session. With none or
   * several active, the error lists what exists.
   */
  async resolveSession(sessionId?: string): Promise<string> {
    if (sessionId) return sessionId;
    const active = await this.journal.listSessions();
    if (active.length === 1) return (active[0] as { id: string }).id;
    if (active.length === 0) {
      throw new BatonError(
        "not_found",
        "no active session; start one with `baton session start --flow <flow>`, or name one with --session",
        { sessions: [] },
      );
    }
    throw new BatonError(
      "ambiguous_session",
      `${active.length} sessions are active (${active.map((s) => s.id).join(", ")}); name one with --session <id>`,
      { sessions: active.map((s) => ({ sessionId: s.id, flow: s.flow, phase: s.phase, title: s.title })) },
    );
  }

  // Delivery: work for the agent under leases (services/queue.ts)

  lease(owner: string, req?: LeaseRequest): Promise<Lease | undefined> {
    return this.queue.lease(owner, req);
  }

  waitForWork(owner: string, req: LeaseRequest & { timeoutMs: number; signal?: AbortSignal }): Promise<Lease | undefined> {
    return this.queue.waitForWork(owner, req);
  }

  heartbeat(leaseId: string, opts?: { leaseMs?: number }) {
    return this.queue.heartbeat(leaseId, opts);
  }

  ack(leaseId: string, result?: ResultInput): Promise<AckResult> {
    return this.queue.ack(leaseId, result);
  }

  nack(leaseId: string, opts?: { delayMs?: number; reason?: string }) {
    return this.queue.nack(leaseId, opts);
  }

  pendingWork(sessionId?: string): Promise<PendingWork[]> {
    return this.queue.pending(sessionId);
  }

  /** A person gives leased work back: a nack, refused (`lease_lost`) unless the lease still holds its item. */
  releaseLease(leaseId: string, opts?: { reason?: string }) {
    return this.queue.release(leaseId, opts);
  }

  /** A session's dead-lettered work that no event handled since, oldest first. */
  deadWork(sessionId: string): Promise<DeadItem[]> {
    return this.queue.deadWork(sessionId);
  }

  /** Deliver dead-lettered work again, with fresh attempts (`conflict` unless still dead and unhandled). */
  retryWork(itemId: string) {
    return this.queue.retryDead(itemId);
  }

  /** Be told when any session's journal grows (this process at once, others within ms). */
  watch(listener: (change: JournalChange) => void): () => void {
    return this.#watcher.watch(listener);
  }

  // Checkpoints, rollback and artifacts (services/checkpoints.ts, rollback.ts, artifacts.ts),
  // loaded on first use so status and hooks that only read never compile them.

  #cp(): Promise<Checkpointing> {
    this.#checkpointing ??= (async () => {
      const [{ CheckpointService }, { RollbackService }, { ArtifactService }] = await Promise.all([
        import("./services/checkpoints.js"),
        import("./services/rollback.js"),
        import("./services/artifacts.js"),
      ]);
      // A shared store keeps every blob it can take: another host cannot read this one's files.
      const inline =
        this.backend.blobMaxBytes !== undefined && this.#checkpointOpts.inlineMaxBytes === undefined
          ? { inlineMaxBytes: this.backend.blobMaxBytes }
          : {};
      const facts = this.#processFacts;
      const cps = new CheckpointService(this.backend, this.root, this.workspace.dir, {
        ...this.#checkpointOpts,
        ...inline,
        now: this.#now,
        // Injected facts name a pretend host: its machine is theirs to say (none: the host name decides).
        ...(facts ? { host: () => facts.host(), machine: () => facts.machine?.() } : {}),
      });
      return {
        cps,
        rollback: new RollbackService(this.backend, this.journal, cps, { durable: this.#checkpointOpts.durable ?? true }),
        artifacts: new ArtifactService(this.backend, this.journal, cps, this.#now),
      };
    })();
    return this.#checkpointing;
  }

  /** Checkpoint the files a tool is about to write (`files`), or the whole tree. */
  async checkpoint(sessionId: string, input: CheckpointInput = {}): Promise<CheckpointResult> {
    return (await this.#cp()).cps.create(sessionId, input);
  }

  async checkpoints(sessionId: string, opts: { includePruned?: boolean } = {}): Promise<CheckpointInfo[]> {
    return (await this.#cp()).cps.list(sessionId, opts);
  }

  async getCheckpoint(id: string): Promise<Checkpoint> {
    return (await this.#cp()).cps.get(id);
  }

  async pinCheckpoint(id: string, pinned = true): Promise<CheckpointInfo> {
    return (await this.#cp()).cps.pin(id, pinned);
  }

  /** Per-file differences between two checkpoints of a session (services/checkpoint-diff.ts). */
  async diffCheckpoints(fromId: string, toId: string) {
    const { cps } = await this.#cp();
    return (await import("./services/checkpoint-diff.js")).diffCheckpoints(cps, fromId, toId);
  }

  /** Roll back one step, `steps`, or `to` a checkpoint; `dryRun` returns the diff only. */
  async rollback(sessionId: string, input: RollbackInput = {}): Promise<RollbackResult> {
    return (await this.#cp()).rollback.rollback(sessionId, input);
  }

  async addArtifact(sessionId: string, input: ArtifactInput): Promise<ArtifactRecord> {
    return (await this.#cp()).artifacts.add(sessionId, input);
  }

  async artifacts(sessionId: string): Promise<ArtifactInfo[]> {
    return (await this.#cp()).artifacts.list(sessionId);
  }

  async artifact(sessionId: string, idOrName: string): Promise<{ artifact: ArtifactInfo; content: Buffer }> {
    return (await this.#cp()).artifacts.get(sessionId, idOrName);
  }

  /** Delete blobs nothing references (older than `graceMs`, default 1 h) and stale temp files. */
  async collectGarbage(opts: { graceMs?: number } = {}) {
    return (await this.#cp()).cps.collect(opts);
  }

  // Lessons (LESSONS.md, services/lessons.ts) and the spiral detector (services/spiral.ts),
  // loaded on first use like checkpoints.

  #learn(): Promise<LessonService> {
    this.#learning ??= import("./services/lessons.js").then((l) => new l.LessonService(this.backend, this.journal, this.root, this.#now));
    return this.#learning;
  }

  // Apart from the lessons: an agent hook records a turn after every tool call, and loading the
  // lessons code with it cost ~1.3 ms per hook process (docs/benchmarks.md, "hooks").
  #spiral(): Promise<SpiralService> {
    this.#spiraling ??= import("./services/spiral.js").then(
      (s) => new s.SpiralService(this.journal, this.root, this.workspace.dir, this.#now, this.backend),
    );
    return this.#spiraling;
  }

  /** Write a lesson to LESSONS.md (scope `session` by default: give its `sessionId`). */
  async addLesson(input: LessonInput) {
    refusePlaceholder("lesson text", input.text);
    return (await this.#learn()).add(input);
  }

  /**
   * Lessons in LESSONS.md (as one session sees them with `sessionId`), with the file's
   * diagnostics; with `versions`, each lesson's version for `editLesson`/`removeLesson`, from
   * the same read of the file.
   */
  async listLessons(opts: { sessionId?: string; all?: boolean; versions?: boolean } = {}) {
    return (await this.#learn()).list(opts);
  }

  async searchLessons(intent: LessonIntent, opts: { k?: number } = {}): Promise<LessonSearchResult> {
    return (await this.#learn()).search(intent, opts);
  }

  /** The markdown block of the top `k` lessons for an intent, within `maxChars`. */
  async injectLessons(intent: LessonIntent, opts: { k?: number; maxChars?: number } = {}): Promise<LessonInjection> {
    return (await this.#learn()).inject(intent, opts);
  }

  /**
   * Remove a lesson's block(s) from LESSONS.md. With `version` (from `listLessons({versions})`),
   * only the block as it was at that version: one changed or removed meanwhile is refused and
   * nothing is written (services/lesson-edit.ts).
   */
  async removeLesson(id: string, opts: { version?: string } = {}): Promise<{ id: string; removed: number; file: string }> {
    if (opts.version !== undefined)
      return (await import("./services/lesson-edit.js")).deleteLesson(this.backend, this.root, id, opts.version);
    return (await this.#learn()).remove(id);
  }

  async checkLessons() {
    return (await this.#learn()).check();
  }

  /**
   * Change one lesson's text or pin, made from the lesson as it was at `version` (from
   * `lessonVersions`): a lesson changed or removed in LESSONS.md meanwhile is refused and
   * nothing is written (services/lesson-edit.ts).
   */
  async editLesson(id: string, version: string, change: { text?: string; pinned?: boolean }) {
    return (await import("./services/lesson-edit.js")).editLesson(this.backend, this.root, id, version, change);
  }

  /** Each lesson's current version in LESSONS.md, by id, for `editLesson` and `removeLesson`. */
  async lessonVersions(): Promise<Map<string, string>> {
    const [{ lessonVersions }, { text }] = await Promise.all([import("./services/lesson-edit.js"), this.lessonsFile()]);
    return lessonVersions(text);
  }

  /** LESSONS.md as it is on disk (`text` undefined while there is no such file). */
  async lessonsFile(): Promise<{ file: string; text: string | undefined }> {
    const { lessonsPath, readLessonsText } = await import("./services/lessons-file.js");
    const file = lessonsPath(this.root);
    return { file, text: readLessonsText(file) };
  }

  /** Record a turn; a turn that completes a spiral pauses the session (see core/spiral.ts). */
  async recordTurn(sessionId: string, turn: TurnInput): Promise<TurnResult> {
    return (await this.#spiral()).record(sessionId, turn);
  }

  /**
   * The user's answer to a spiral pause, made on the pause detected at `detectedAt`: a pause
   * cleared or renewed meanwhile is `conflict`, re-checked inside the write that journals the
   * answer (services/spiral-answer.ts). A rollback is the user's, as `rollback({to})`.
   */
  async answerSpiralPause(sessionId: string, answer: SpiralAnswer) {
    const { answerSpiralPause } = await import("./services/spiral-answer.js");
    return answerSpiralPause({ journal: this.journal, rollback: (id, to) => this.rollback(id, { to, actor: "user" }) }, sessionId, answer);
  }

  /** Clear a spiral pause; `unpaused: false` when the session was not paused. */
  async unpause(sessionId: string, opts: { reason?: string; actor?: string } = {}) {
    return (await this.#spiral()).unpause(sessionId, opts);
  }

  // Trajectory ledger (services/ledger.ts): one redacted, bounded node per tool-call attempt,
  // loaded on first use.

  #ledgerService(): Promise<LedgerService> {
    this.#ledger ??= import("./services/ledger.js").then((m) => {
      this.#ledgerLoaded = new m.LedgerService(this.backend, this.#ledgerHealth, this.#now, this.#ledgerOpts);
      return this.#ledgerLoaded;
    });
    return this.#ledger;
  }

  /**
   * Record one tool-call attempt (redacted and bounded before it is stored). Never throws and
   * never rejects: a node that cannot be written resolves `undefined` and counts in
   * `ledgerHealth()`, so the tool call it describes is never failed by it. The input is redacted
   * before this returns; the promise settles when the node is committed (group-committed with
   * records that arrive meanwhile), so a caller that does not need the node need not wait.
   */
  recordToolCall(sessionId: string, input: LedgerInput): Promise<LedgerNode | undefined> {
    const fail = (err: unknown) => {
      this.#ledgerHealth.recordFailure(err);
      return undefined;
    };
    try {
      const loaded = this.#ledgerLoaded;
      if (loaded) return loaded.record(sessionId, input);
      return this.#ledgerService().then((svc) => svc.record(sessionId, input), fail);
    } catch (err) {
      return Promise.resolve(fail(err));
    }
  }

  /**
   * Record one tool-call attempt and return nothing: the call is redacted and queued before
   * this returns, and committed right after on the event loop, group-committed with others. A
   * failure is counted (`ledgerHealth()`), never thrown. `flush()` waits for what is queued;
   * use `recordToolCall()` to wait for the stored node.
   */
  record(sessionId: string, input: LedgerInput): void {
    void this.recordToolCall(sessionId, input);
  }

  /** A session's ledger nodes, oldest first (filtered by status, tool, workflow, tab; the newest `limit`). */
  async ledger(sessionId: string, opts: LedgerListOptions = {}): Promise<LedgerNode[]> {
    return (await this.#ledgerService()).list(sessionId, opts);
  }

  async ledgerNode(nodeId: string): Promise<LedgerNode> {
    return (await this.#ledgerService()).get(nodeId);
  }

  /**
   * The ledger of one session (or all) as lines: `jsonl`, one node per line; `otlp`, one OTLP/JSON
   * ExportTraceServiceRequest per line (at most 512 spans each; GenAI execute_tool spans).
   */
  async *exportLedger(opts: { sessionId?: string; format?: "jsonl" | "otlp" } = {}): AsyncGenerator<string> {
    const svc = await this.#ledgerService();
    if (opts.format === "otlp") for await (const r of svc.otlpRequests(opts.sessionId)) yield `${JSON.stringify(r)}\n`;
    else for await (const n of svc.nodes(opts.sessionId)) yield `${JSON.stringify(n)}\n`;
  }

  /** POST the ledger (one session or all) as OTLP/JSON spans to `<endpoint>/v1/traces`. */
  async sendLedgerOtlp(opts: {
    endpoint: string;
    headers?: Record<string, string>;
    sessionId?: string;
    timeoutMs?: number;
  }): Promise<OtlpSendResult> {
    return (await this.#ledgerService()).sendOtlp(opts);
  }

  /** Failed ledger writes in this workspace (persisted beside the database), for the doctor. */
  ledgerHealth(): LedgerHealth {
    return this.#ledgerHealth.health();
  }

  // Status

  status(opts: { all?: boolean; sessionId?: string } = {}): Promise<StatusReport> {
    return this.#status.status(opts);
  }

  resume(sessionId: string): Promise<ResumeReport> {
    return this.#status.resume(sessionId);
  }

  async complete(sessionId: string, opts: { force?: boolean; actor?: string } = {}) {
    const r = await this.#status.complete(sessionId, opts);
    // Artifacts are kept until the session completes; their blobs go now unless still referenced.
    if (!r.alreadyComplete && (await this.snapshot(sessionId)).facets.artifacts?.length)
      await (await this.#cp()).artifacts.release(sessionId);
    return r;
  }

  async stateMarkdown(sessionId: string): Promise<string> {
    return (await this.#stateMarkdown(sessionId)).text;
  }

  async #stateMarkdown(sessionId: string): Promise<{ text: string; seq: number }> {
    // The same next action as status and resume: every fact, not only the journal's.
    const view = await this.journal.read(sessionId);
    const status = await this.#status.describeSession(sessionId, view);
    return {
      text: renderStateMd(view.snapshot, status.nextAction, { generatedAt: this.#now().toISOString() }),
      seq: view.snapshot.lastSeq,
    };
  }

  /**
   * Write STATE.md beside the session (`.baton/sessions/<id>/STATE.md`), atomically, and beside
   * it `STATE.seq`: the journal seq it shows (for `refreshStateMarkdown`).
   */
  async writeStateMarkdown(sessionId: string): Promise<string> {
    const { text, seq } = await this.#stateMarkdown(sessionId);
    // Written as a restore writes: never through a link in any component (services/safe-fs.ts).
    // sessions/ and sessions/<id>/ are private like the rest of .baton/ (services/private-files.ts), whatever the umask.
    atomicWrite(this.workspace.dir, `sessions/${sessionId}/STATE.md`, Buffer.from(text), 0o600, true, 0o700);
    atomicWrite(this.workspace.dir, `sessions/${sessionId}/STATE.seq`, Buffer.from(`${seq}\n`), 0o600, false, 0o700);
    return join(this.workspace.dir, "sessions", sessionId, "STATE.md");
  }

  /**
   * Write STATE.md only when the journal moved on since it was last written (a hook that fires
   * before every model request: one snapshot read and one small file read when nothing changed).
   * Returns the file when it was written.
   */
  async refreshStateMarkdown(sessionId: string): Promise<string | undefined> {
    const cur = readCurrent(this.workspace.dir, `sessions/${sessionId}/STATE.seq`, 64);
    const written = cur.kind === "file" ? Number(cur.content.toString("utf8").trim()) : Number.NaN;
    if (written === (await this.snapshot(sessionId)).lastSeq) return undefined;
    return this.writeStateMarkdown(sessionId);
  }

  // Facets: each is one journal event.

  addDecision(sessionId: string, d: DecisionInput, actor = "agent"): Promise<AppendResult> {
    return this.append(sessionId, { type: "decision:added", actor, data: compact({ ...d }) });
  }

  async addBlocker(sessionId: string, b: BlockerInput, actor = "agent"): Promise<AppendResult> {
    const id = b.id ?? `blk-${randomHex(3)}`;
    return this.append(sessionId, { type: "blocker:added", actor, data: compact({ ...b, id }) });
  }

  resolveBlocker(sessionId: string, id: string, resolution?: string, actor = "agent"): Promise<AppendResult> {
    refusePlaceholder("resolution", resolution);
    return this.append(sessionId, { type: "blocker:resolved", actor, data: compact({ id, resolution }) });
  }

  bypassBlocker(sessionId: string, id: string, workaround: string, actor = "agent"): Promise<AppendResult> {
    refusePlaceholder("workaround", workaround);
    return this.append(sessionId, { type: "blocker:bypassed", actor, data: { id, workaround } });
  }

  setPosition(sessionId: string, p: Position, actor = "agent"): Promise<AppendResult> {
    if (Object.values(p).every((v) => v === undefined)) throw badInput("give at least one of phase, plan, task, wave, status");
    return this.append(sessionId, { type: "position:set", actor, data: compact({ ...p }) });
  }

  setProgress(sessionId: string, p: { total?: number; completed?: number }, actor = "agent"): Promise<AppendResult> {
    return this.append(sessionId, { type: "progress:set", actor, data: compact({ ...p }) });
  }

  /**
   * Start an agent run: `run:started` in the journal and its liveness row (services/runs.ts).
   * `pid` is the agent's process (default: this one); a run whose heartbeat goes stale (ttl,
   * default 30 min) or whose pid dies is marked crashed by `detectCrashedRuns`.
   */
  async startRun(
    sessionId: string,
    r: { agent: string; runId?: string; pid?: number; ttlMs?: number },
  ): Promise<{ runId: string; result: AppendResult; expiresAt: string }> {
    return (await this.#ops()).runs.start(sessionId, r);
  }

  /** Keep a run alive (outside the journal); `run_crashed` once it was marked crashed. */
  async runHeartbeat(sessionId: string, runId: string, opts: { ttlMs?: number } = {}) {
    return (await this.#ops()).runs.heartbeat(sessionId, runId, opts);
  }

  async endRun(
    sessionId: string,
    runId: string,
    r: { reason?: string; completedWork?: string; contextUsage?: number } = {},
    actor = "agent",
  ): Promise<AppendResult> {
    return (await this.#ops()).runs.end(sessionId, runId, r, actor);
  }

  /**
   * Mark running runs that are provably gone as crashed (`run:crashed`), giving their leased
   * work back to the queue. A write: status, resume and doctor call it explicitly; `dryRun`
   * only reports. Costs one read when no run is running.
   */
  async detectCrashedRuns(opts: { sessionId?: string; dryRun?: boolean } = {}): Promise<CrashedRun[]> {
    const running = await this.backend.transaction("read", (tx) => tx.runs.runningRuns(opts.sessionId));
    if (running.length === 0) return [];
    return (await this.#ops()).runs.detectCrashed(opts);
  }

  // Locks (services/locks.ts): named, heartbeated, fenced by their epoch.

  /** Acquire a lock (fail fast, or wait `waitMs`); the grant's epoch fences the writes it guards. */
  async acquireLock(name: string, opts: AcquireOptions = {}): Promise<LockGrant> {
    return (await this.#ops()).locks.acquire(name, opts);
  }

  async heartbeatLock(name: string, epoch: number, opts: { ttlMs?: number } = {}) {
    return (await this.#ops()).locks.heartbeat(name, epoch, opts);
  }

  async releaseLock(name: string, epoch: number) {
    return (await this.#ops()).locks.release(name, epoch);
  }

  /** The epoch with which process `pid` on this host holds the lock (`lock_held` when someone else does). */
  async lockEpochHeldBy(name: string, pid: number): Promise<number> {
    return (await this.#ops()).locks.epochHeldBy(name, pid);
  }

  async inspectLock(name: string): Promise<LockInfo> {
    return (await this.#ops()).locks.inspect(name);
  }

  async listLocks(): Promise<LockInfo[]> {
    return (await this.#ops()).locks.list();
  }

  /** Run `fn` in one write transaction after checking `epoch` still holds `name`; `lock_lost` otherwise. */
  async withLock<T>(name: string, epoch: number, fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    return (await this.#ops()).locks.withLock(name, epoch, fn);
  }

  /** Append to a session under a lock: refused with `lock_lost` when `epoch` no longer holds `name`. */
  async appendUnderLock(name: string, epoch: number, sessionId: string, input: EventInput): Promise<AppendResult> {
    return this.withLock(name, epoch, async (tx) => (await this.journal.appendInTx(tx, sessionId, [input]))[0] as AppendResult);
  }

  // External targets (services/targets.ts) and watching an external run (services/watch-run.ts).

  async setTarget(sessionId: string, t: TargetInput, actor = "agent"): Promise<{ target: TargetBinding; result: AppendResult }> {
    return (await this.#ops()).targets.set(sessionId, t, actor);
  }

  async target(sessionId: string): Promise<TargetBinding | undefined> {
    return (await this.#ops()).targets.get(sessionId);
  }

  async clearTarget(sessionId: string, reason?: string, actor = "agent"): Promise<AppendResult> {
    return (await this.#ops()).targets.clear(sessionId, reason, actor);
  }

  /** The bound target; with `observed`, `target_mismatch` unless `allowNavigate` or `force`. */
  async resolveTarget(
    sessionId: string,
    observed?: Partial<TargetInput>,
    opts: { allowNavigate?: boolean; force?: boolean; actor?: string } = {},
  ): Promise<TargetResolution> {
    return (await this.#ops()).targets.resolve(sessionId, observed, opts);
  }

  /** Look at an external-run session once (flipping a transient timeout back to polling). */
  async watchTick(sessionId: string): Promise<TickResult> {
    return (await this.#ops()).watcher.tick(sessionId);
  }

  /** Follow a session until it is terminal; `onLine` gets each start / tick / terminal line. */
  async watchRun(sessionId: string, opts: FollowOptions = {}): Promise<WatchLine> {
    return (await this.#ops()).watcher.follow(sessionId, opts);
  }

  /** Check the workspace (or one session); `fix` applies the safe repairs. Never prompt or answer text. */
  async doctor(opts: DoctorOptions = {}): Promise<DoctorReport> {
    const [{ runDoctor }, ops] = await Promise.all([import("./services/doctor.js"), this.#ops()]);
    return runDoctor(
      {
        backend: this.backend,
        journal: this.journal,
        queue: this.queue,
        locks: ops.locks,
        runs: ops.runs,
        describe: (id) => this.#status.describeSession(id),
        root: this.root,
        batonDir: this.workspace.dir,
        now: this.#now,
        collectGarbage: () => this.collectGarbage(),
        ledgerHealth: async () => this.ledgerHealth(),
        treeSkips: async () => (await this.#cp()).cps.treeScan().skipped,
      },
      opts,
    );
  }

  #ops(): Promise<Operations> {
    this.#operating ??= Promise.all([
      import("./services/locks.js"),
      import("./services/runs.js"),
      import("./services/targets.js"),
      import("./services/watch-run.js"),
    ]).then(([l, r, t, w]) => {
      const facts = this.#processFacts ? { facts: this.#processFacts } : {};
      const locks = new l.LockService(this.backend, { now: this.#now, ...facts });
      return {
        locks,
        runs: new r.RunService(this.backend, this.journal, this.queue, { now: this.#now, ...facts }),
        targets: new t.TargetService(this.journal, this.backend, this.#now),
        watcher: new w.RunWatcher(this.backend, this.journal, locks, this.#now),
      };
    });
    return this.#operating;
  }

  /** Record files the session modified (with their current hashes) and resume notes. */
  recordResumeContext(
    sessionId: string,
    r: { files?: string[]; keyImplementations?: string[]; openQuestions?: string[] },
    actor = "agent",
  ): Promise<AppendResult> {
    const filesModified: JsonObject[] = [];
    for (const path of r.files ?? []) {
      const rel = workspaceRelative(this.root, path);
      if (!rel) throw badInput(`${path} is outside the workspace ${this.root}`);
      const f = fingerprintFile(resolve(this.root, rel));
      filesModified.push(f ? { path: rel, hash: f.hash, size: f.size, mtimeMs: f.mtimeMs } : { path: rel });
    }
    return this.append(sessionId, {
      type: "resume:updated",
      actor,
      data: compact({
        filesModified: filesModified.length ? filesModified : undefined,
        keyImplementations: r.keyImplementations,
        openQuestions: r.openQuestions,
      }),
    });
  }

  setContext(sessionId: string, values: JsonObject, actor = "agent"): Promise<AppendResult> {
    return this.append(sessionId, { type: "context:set", actor, data: values });
  }

  /** Idempotent. */
  /** Write what is queued (ledger records) without closing: for a process about to exit. */
  async flush(): Promise<void> {
    await (this.#ledger ?? Promise.resolve(undefined)).then((l) => l?.flush()).catch(() => undefined);
  }

  close(): Promise<void> {
    // Ledger records already queued are written first.
    this.#closing ??= (this.#ledger ?? Promise.resolve(undefined))
      .then((l) => l?.flush())
      .catch(() => undefined)
      .then(() => this.backend.close());
    return this.#closing;
  }
}

function compact(o: Record<string, unknown>): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v as JsonObject[string];
  return out;
}

function envMs(name: string): number | undefined {
  const v = process.env[name];
  if (v === undefined || v.trim() === "") return undefined;
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 0) throw new BatonError("bad_input", `${name}=${v} is not a whole number ≥ 0`);
  return n;
}

export async function openBaton(opts: OpenBatonOptions = {}): Promise<Baton> {
  const ws = resolveWorkspace({
    create: opts.create ?? true,
    ...(opts.root ? { root: opts.root } : {}),
    ...(opts.cwd ? { cwd: opts.cwd } : {}),
  });
  let backend = opts.backend;
  let store: StoreInfo = { kind: backend?.kind ?? "sqlite", location: backend ? "(given by the caller)" : ws.dbPath, source: "caller" };
  const choice = backend ? undefined : resolveStore(ws.dir);
  if (choice?.kind === "postgres") {
    // Loaded only when configured: the SQLite hook path never pays for the driver.
    const { PostgresBackend } = await loadPostgres();
    const wait = opts.storeTimeoutMs ?? envMs("BATON_STORE_TIMEOUT_MS");
    const blobMax = envMs("BATON_STORE_BLOB_MAX_BYTES");
    backend = await PostgresBackend.open({
      url: choice.url,
      project: choice.project,
      ...(wait !== undefined ? { connectTimeoutMs: wait } : {}),
      ...(blobMax !== undefined ? { blobMaxBytes: blobMax } : {}),
    });
    store = describeStore(choice, ws.dbPath);
  } else if (!backend) {
    store = { kind: "sqlite", location: ws.dbPath, source: "default" };
    const { SqliteBackend } = await import("./backend/sqlite/sqlite-backend.js");
    backend = new SqliteBackend({
      path: ws.dbPath,
      ...(opts.synchronous ? { synchronous: opts.synchronous } : {}),
      ...(opts.busyTimeoutMs !== undefined ? { busyTimeoutMs: opts.busyTimeoutMs } : {}),
    });
  }
  return new Baton(ws, backend, opts.now ?? (() => new Date()), {
    store,
    ...(opts.maxAttempts !== undefined ? { maxAttempts: opts.maxAttempts } : {}),
    ...(opts.defaultLeaseMs !== undefined ? { defaultLeaseMs: opts.defaultLeaseMs } : {}),
    ...(opts.checkpoints ? { checkpoints: opts.checkpoints } : {}),
    ...(opts.synchronous ? { synchronous: opts.synchronous } : {}),
    ...(opts.processFacts ? { processFacts: opts.processFacts } : {}),
    ...(opts.ledger ? { ledger: opts.ledger } : {}),
  });
}

interface Operations {
  locks: LockService;
  runs: RunService;
  targets: TargetService;
  watcher: RunWatcher;
}

interface Checkpointing {
  cps: CheckpointService;
  rollback: RollbackService;
  artifacts: ArtifactService;
}

/**
 * A printed command's `<…>` placeholder, run without replacing it, records nothing: the value
 * is refused so the agent learns to ask for the real one.
 */
function refusePlaceholder(what: string, value: string | undefined): void {
  if (value !== undefined && isPlaceholder(value))
    throw badInput(`the ${what} ${JSON.stringify(value)} is a placeholder from a printed command: replace it with the real text`);
}

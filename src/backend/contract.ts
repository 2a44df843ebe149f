/**
 * The storage seam. Services talk to storage only through this contract, never a driver, so
 * the same services (and the same contract test suite, test/contract/) run on every backend.
 *
 * One primitive, `transaction`, hands the callback a `StoreTx` whose methods are the domain's
 * queries; each backend keeps its SQL beside its driver. Everything is Promise-based so a
 * network backend fits the same shape as the embedded one.
 *
 * Longer than the house's ~400 lines on purpose: it is the one document of what every engine
 * promises (each method with the guarantee it keeps under concurrent writers); split by table,
 * the rules that span tables (the blob collector's lock, the write lock's atomic operations)
 * would be read in pieces.
 */

/** Where engines differ. Services branch on these flags, never on the engine's name. */
export interface BackendCapabilities {
  /**
   * Write transactions run one at a time, in the order they were asked for (SQLite: one write
   * lock, a promise chain, group commit in request order). When false (PostgreSQL), services
   * keep one caller's requests on one session in order themselves (journal.ts).
   */
  readonly serialWrites: boolean;
  /**
   * Several machines share the store (PostgreSQL), so a checkpoint may come from another
   * machine's workspace and restoring it here is a hand-over that needs an explicit flag. False
   * for SQLite: its store lives in the workspace, so every checkpoint in it is this machine's,
   * whatever the host is called now (containers, CI and laptops rename hosts).
   */
  readonly sharedAcrossHosts: boolean;
  /**
   * A commit's outcome can be unknown to the caller: the connection to a server can die during
   * COMMIT (PostgreSQL). The journal then gives every event its id up front and re-sends once.
   * False for an embedded store, whose commit either returns or throws.
   */
  readonly uncertainCommits: boolean;
  /** Full-text search with ranking is available (SQLite FTS5, PostgreSQL tsvector). */
  readonly fullTextSearch: boolean;
}

/**
 * The `lockKey` under which a session's checkpoint and ledger seqs are allocated, and a session is
 * started. The journal's seqs need no key: appenders take turns on the session's row, which
 * `getSession` holds in a write transaction.
 */
export function sessionKey(sessionId: string): string {
  return `session:${sessionId}`;
}

/** Whether a session is still open (`SessionStatus` in services/session/status.ts is the full report of one). */
export type SessionLifecycle = "active" | "completed";

export interface SessionRow {
  id: string;
  flow: string;
  title: string | null;
  phase: string;
  status: SessionLifecycle;
  createdAt: string;
  updatedAt: string;
  lastSeq: number;
}

/** Where a session's row goes when events are appended to it. */
export type SessionMove = Pick<SessionRow, "id" | "phase" | "status" | "updatedAt" | "lastSeq"> & {
  /** The row's phase and status as this transaction read them: where both stay, an engine need not write the row. */
  from?: Pick<SessionRow, "phase" | "status">;
};

/** A journal row as stored. `data` is JSON text: a row that no longer parses is reported, not fatal. */
export interface EventRow {
  sessionId: string;
  seq: number;
  id: string;
  type: string;
  actor: string;
  data: string;
  revision: number | null;
  at: string;
  /** sha256 of the canonical body (type, actor, data, revision): the idempotency comparison. */
  bodyHash: string;
  /** How the flow treated the event when it was appended (informational; the fold re-derives it). */
  outcome: string;
}

export interface SnapshotRow {
  sessionId: string;
  lastSeq: number;
  body: string;
  /** Checksum of `body` (core/canonical.ts `checksum`): a snapshot that does not match is treated as corrupt. */
  hash: string;
}

export interface DiagnosticRow {
  sessionId: string | null;
  code: string;
  severity: "info" | "warning" | "error";
  message: string;
  at: string;
}

/** The journal's queries: sessions, events, snapshots, diagnostics. */
export interface JournalQueries {
  getSession(id: string): Promise<SessionRow | undefined>;
  /**
   * Hold `key` against every other write transaction that asks for the same key, until this
   * one ends: the per-key mutex under which a read-then-write (the next seq of a session's
   * checkpoints or ledger: key `session:<id>`) is done. A no-op on an engine whose
   * write transactions already run one at a time (SQLite); PostgreSQL takes a transaction
   * advisory lock. Writers of one key are ordered; writers of different keys are not.
   */
  lockKey(key: string): Promise<void>;
  /** Throws `session_exists` when the id is taken (a concurrent start on another connection). */
  insertSession(row: SessionRow): Promise<void>;
  updateSession(id: string, patch: Pick<SessionRow, "phase" | "status" | "updatedAt" | "lastSeq">): Promise<void>;
  listSessions(opts: { includeCompleted: boolean }): Promise<SessionRow[]>;
  findEventById(sessionId: string, id: string): Promise<EventRow | undefined>;
  /**
   * Insert a session's new events and move its row to the state they leave it in (phase,
   * status, updatedAt, lastSeq): one statement on PostgreSQL, a round trip fewer per append.
   */
  insertEvents(rows: readonly EventRow[], session: SessionMove): Promise<void>;
  /**
   * `insertEvents` (and `putSnapshot` when given) as a compare-and-set on the session's row:
   * only when the row is still at `expect` (its lastSeq: nobody appended since the caller folded
   * its events from a state it kept). False, changing nothing, when it moved. `expect` must be
   * a state of a started session that this store committed (the journal's kept fold); given
   * one, the answer is false exactly when another writer appended since. A backend may take
   * more as given: a session's flow is fixed when it starts, and its seqs run 1, 2, 3… with no
   * gap, so SQLite's check is the events' primary key on `lastSeq + 1` (PostgreSQL's row update
   * checks the flow and the row as well).
   * Needs no held read before it, so an append whose state is cached is one statement
   * (PostgreSQL: a `oneStatement` transaction, one round trip instead of four).
   */
  insertEventsAt(
    expect: { lastSeq: number; flow: string },
    rows: readonly EventRow[],
    session: SessionMove,
    snapshot?: SnapshotRow,
  ): Promise<boolean>;
  /** Events with seq > afterSeq, ascending, at most `limit`. */
  readEvents(sessionId: string, afterSeq: number, limit: number): Promise<EventRow[]>;
  getSnapshot(sessionId: string): Promise<SnapshotRow | undefined>;
  putSnapshot(row: SnapshotRow): Promise<void>;
  insertDiagnostic(row: DiagnosticRow): Promise<void>;
  listDiagnostics(sessionId: string, limit: number): Promise<DiagnosticRow[]>;
}

/** Delivery states of a work item. `ready` and `leased` are open; `done` and `dead` are final. */
export type WorkState = "ready" | "leased" | "done" | "dead";

export interface WorkItemRow {
  itemId: string;
  sessionId: string;
  /** The journal event that made this work. */
  seq: number;
  kind: string;
  priority: number;
  state: WorkState;
  attempts: number;
  maxAttempts: number;
  /** Not delivered before this time (epoch ms): a nack with a delay sets it. */
  availableMs: number;
  /** The last lease handed out (kept while ready again, so its late ack can be recognised). */
  leaseId: string | null;
  leaseOwner: string | null;
  leaseExpiresMs: number | null;
  createdAt: string;
  doneAt: string | null;
  /** The lease id or event id that finished it, or the reason it died. */
  doneBy: string | null;
  resultSeq: number | null;
}

export type LeaseState = "active" | "acked" | "released" | "expired";

export interface LeaseRow {
  leaseId: string;
  itemId: string;
  owner: string;
  attempt: number;
  acquiredAt: string;
  state: LeaseState;
  resultSeq: number | null;
}

/** `QueueQueries.workVersion`'s answer. */
export interface WorkVersion {
  lastSeq: number | null;
  open: {
    itemId: string;
    state: string;
    attempts: number;
    leaseId: string | null;
    leaseExpiresMs: number | null;
    availableMs: number;
    leases: number;
  }[];
  dead: { count: number; leases: number; lastAt: string | null };
}

/** The delivery queue's queries. Items are ordered by priority, then creation. */
export interface QueueQueries {
  insertItem(row: WorkItemRow): Promise<void>;
  getItem(itemId: string): Promise<WorkItemRow | undefined>;
  /**
   * Leased items whose lease expired at or before `nowMs`. In a write transaction the rows are
   * held until it ends and rows another writer holds are skipped (it is expiring them).
   */
  expiredLeases(nowMs: number): Promise<WorkItemRow[]>;
  /**
   * Atomically claim the first ready, available items (optionally of one session and of some
   * kinds), one for each of `leases` in order (fewer when fewer are ready): mark each leased to
   * its lease, bump its attempts, record the lease row (`active`, its attempt the bumped count),
   * and return the items as now stored with the journal events that made them (undefined when
   * that row is missing). `claimed[i]` was claimed under `leases[i]`. A concurrent claimer never
   * gets the same item (the update is guarded by `state = 'ready'`; PostgreSQL skips rows another
   * claimer holds: `FOR UPDATE SKIP LOCKED`, all in one statement, so it can run as a
   * `oneStatement` transaction). With `unlessExpired`, nothing is claimed and `expired` is true
   * when any lease (of any item) has expired by `nowMs`: the caller returns those items first
   * (in a transaction of its own), so a redelivery keeps its place in the delivery order.
   */
  claimReady(
    opts: { nowMs: number; sessionId?: string; kinds?: readonly string[]; unlessExpired?: boolean },
    leases: readonly { leaseId: string; owner: string; expiresMs: number }[],
    acquiredAt: string,
  ): Promise<{ claimed: { item: WorkItemRow; event: EventRow | undefined }[]; expired: boolean }>;
  /**
   * The ack of leases that still hold their items, in one atomic operation (one statement on
   * PostgreSQL): for each of `leaseIds` whose lease is `active` or `expired` and is its item's
   * last lease while the item is `leased` or `ready` (expired, not delivered again), the item
   * becomes `done` (by `lease:<id>`, at `doneAt`, no result) and the lease `acked`. Returns the
   * leases finished with their items; any other lease is left as it was (the caller decides
   * what it is: a duplicate, `lease_lost`, unknown). Lease rows are taken before item rows, as
   * every other ack, nack and heartbeat takes them.
   */
  ackHeld(leaseIds: readonly string[], doneAt: string): Promise<{ leaseId: string; itemId: string }[]>;
  /** The earliest future time (epoch ms) an item becomes available or a lease expires. */
  nextWakeMs(nowMs: number): Promise<number | undefined>;
  /** Open (ready or leased) items, of one session or all, in delivery order. */
  openItems(sessionId?: string): Promise<WorkItemRow[]>;
  /**
   * What the dashboard's version tag of a session's work is made of, read in one statement (one
   * snapshot on every engine): the session's last journal seq (null: no such session), which
   * grows with every event that creates or handles work; each open item, in delivery order,
   * with its state, attempts, lease and expiry, when it is next available (set to the time, or
   * later, by every expiry and give-back), and how many leases it has had (one per delivery, ever: a retry
   * starts its attempts again, its old leases stay); and its dead, unhandled items, all of them,
   * counted, with their leases summed and the newest death's time.
   */
  workVersion(sessionId: string): Promise<WorkVersion>;
  setLeased(itemId: string, lease: { leaseId: string; owner: string; expiresMs: number; attempts: number }): Promise<void>;
  extendLease(itemId: string, leaseId: string, expiresMs: number): Promise<void>;
  setReady(itemId: string, availableMs: number): Promise<void>;
  setFinal(itemId: string, f: { state: "done" | "dead"; doneAt: string; doneBy: string; resultSeq: number | null }): Promise<void>;
  /**
   * A dead item not handled since, back to ready with no attempts and no lease (its last lease
   * no longer names it), available from `availableMs`. False (and nothing changed) when the
   * item is not dead, or an event handled it.
   */
  requeueDead(itemId: string, availableMs: number): Promise<boolean>;
  insertLease(row: LeaseRow): Promise<void>;
  getLease(leaseId: string): Promise<LeaseRow | undefined>;
  setLeaseState(leaseId: string, state: LeaseState, resultSeq?: number | null): Promise<void>;
  /** Leased items whose lease owner is one of `owners` (a crashed run's work), in delivery order. */
  leasedBy(owners: readonly string[]): Promise<WorkItemRow[]>;
  /** Dead-lettered items of a session not handled since, oldest first, at most `limit`. */
  deadUnhandled(sessionId: string, limit: number): Promise<WorkItemRow[]>;
  /**
   * Mark a session's unhandled dead items handled by the event at `handledSeq`: those of
   * `kinds`, and those whose seq is in `seqs`, created before it.
   */
  markDeadHandled(sessionId: string, match: { kinds: readonly string[]; seqs: readonly number[] }, handledSeq: number): Promise<void>;
}

export type CheckpointKindColumn = "targeted" | "tree" | "safety";

export interface CheckpointRow {
  id: string;
  sessionId: string;
  /** 1, 2, 3 … per session; pruned checkpoints keep theirs. */
  seq: number;
  kind: CheckpointKindColumn;
  /**
   * The lane whose manifest runs hold its files (services/time-travel/manifests.ts chooses it: a session's
   * tree checkpoints share one, every other checkpoint is a lane of its own, named by its id).
   */
  lane: string;
  runId: string | null;
  turn: number | null;
  toolName: string | null;
  parent: string | null;
  label: string | null;
  pinned: boolean;
  /**
   * How many times `setPinned` changed `pinned` (read back; an insert leaves it at 0). A pin set
   * and cleared is back at `pinned: false`, but not at the count it had.
   */
  pinChanges?: number;
  /** Safety checkpoints: the checkpoint their rollback restored. */
  restores: string | null;
  createdAt: string;
  /** Set when retention pruned it; its file rows are gone, the row stays so a rollback to it is `checkpoint_pruned`. */
  prunedAt: string | null;
  fileCount: number;
  /** The host and workspace root it was taken on (absent on checkpoints from before migration 10). */
  host?: string | null;
  /**
   * A whole-tree checkpoint's ignore rules from outside the workspace, as JSON (the configured
   * excludes, the repository's info/exclude and .gitignore files above it: tree-rules.ts
   * `OutsideRules`): a rollback judges the paths it does not list by them. Null on other kinds
   * and on checkpoints from before it was kept.
   */
  outsideRules?: string | null;
  workspace?: string | null;
  /** A hash of the machine's stable identity (/etc/machine-id), when it has one (SQLite migration 12 / PostgreSQL 9). */
  machine?: string | null;
  /**
   * The agent lane that took it (core/lanes.ts; SQLite migration 16 / PostgreSQL 15): an agent's
   * undo steps through its own lane's checkpoints. Not the manifest `lane` above.
   */
  agentLane?: string | null;
  /**
   * Whole-tree checkpoints: the files the walk left out because their names cannot be stored
   * and restored safely (absent or empty when none were). Kept so status can name them without
   * walking the tree again.
   */
  skipped?: readonly SkippedPath[];
}

/** A path a whole-tree checkpoint left out, and why. */
export interface SkippedPath {
  path: string;
  reason: string;
}

/**
 * One path of a checkpoint: `file` (hash, mode, size), `absent`, or `skipped` (with a note why).
 * A `file` whose note is `local` has its blob only in the workspace that took it (a private
 * file on a store shared across hosts: services/time-travel/checkpoint-config.ts).
 */
export interface CheckpointFileRow {
  path: string;
  state: "file" | "absent" | "skipped";
  hash: string | null;
  mode: number | null;
  size: number | null;
  note: string | null;
}

/**
 * A run of a lane's manifest: the path's entry stayed the same from checkpoint seq `from` up
 * to, not including, `until` (null: the lane's newest checkpoint still holds it). A
 * checkpoint's files are the runs of its lane that hold its seq.
 */
export interface ManifestRunRow extends CheckpointFileRow {
  from: number;
  until: number | null;
}

/**
 * Which runs of a lane `deleteRuns` removes: those holding seq `holding` (from ≤ holding, and
 * until null or > holding) that began after `fromAfter`, and, when `endsBy` is a number, ended
 * (until not null) at or before it.
 */
export interface RunWindow {
  holding: number;
  fromAfter: number;
  endsBy: number | null;
}

/** Whole-tree checkpoints re-read only files whose (size, mtime, ctime, inode, mode) changed. */
export interface StatCacheRow {
  path: string;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
  mode: number;
  hash: string;
  /** When the scan that hashed it started, by the filesystem's clock: a file whose mtime is not older is re-read. */
  checkedMs: number;
}

export interface ArtifactRow {
  id: string;
  sessionId: string;
  name: string;
  hash: string;
  size: number;
  mediaType: string | null;
  label: string | null;
  createdAt: string;
}

/**
 * Checkpoints and their manifest runs, the references that keep blobs alive (runs and active
 * sessions' artifacts), the blob collector's epoch, the whole-tree stat cache, and the small
 * blobs themselves (their stored form: a method byte and the payload; services/time-travel/blobs.ts packs,
 * unpacks and verifies). Large blobs are files under `.baton/blobs/`.
 *
 * Storage only: which lane a checkpoint goes in, which runs a new checkpoint opens or closes
 * and which runs pruning deletes are decided in services/time-travel/manifests.ts, under the session's
 * `lockKey`, so every engine stores the same rows.
 */
export interface CheckpointQueries {
  insertCheckpoint(row: CheckpointRow): Promise<void>;
  getCheckpoint(id: string): Promise<CheckpointRow | undefined>;
  /** A session's checkpoints by seq, pruned ones included; with `idPrefix`, only those whose id starts with it. */
  listCheckpoints(sessionId: string, idPrefix?: string): Promise<CheckpointRow[]>;
  /** A session's live (not pruned) checkpoints by seq; with `idPrefix`, only those whose id starts with it. */
  liveCheckpoints(sessionId: string, idPrefix?: string): Promise<CheckpointRow[]>;
  /**
   * The newest live checkpoint of a session, not a safety one, created at or before `at` (one
   * row); with `agentLane`, only that lane's and its subagents' (`<lane>/…`).
   */
  lastGoodCheckpoint(sessionId: string, at: string, agentLane?: string): Promise<string | undefined>;
  /** The session's newest checkpoint, pruned or not. */
  lastCheckpoint(sessionId: string): Promise<CheckpointRow | undefined>;
  /** The lane's newest checkpoint, pruned or not. */
  laneHead(lane: string): Promise<CheckpointRow | undefined>;
  /** The lane's newest live checkpoint. */
  lastLiveInLane(lane: string): Promise<CheckpointRow | undefined>;
  /** The seqs of the lane's nearest live checkpoints before and after `seq` (null: none). */
  liveNeighbours(lane: string, seq: number): Promise<{ before: number | null; after: number | null }>;
  /** Ids of the session's live unpinned checkpoints beyond the newest `retain`, oldest first. */
  retentionCandidates(sessionId: string, retain: number): Promise<string[]>;
  /**
   * Pin or unpin. Pinning changes only a live checkpoint: false when it is pruned (or pruned by
   * a concurrent writer first; the row is held until the transaction ends).
   */
  setPinned(id: string, pinned: boolean): Promise<boolean>;
  /**
   * Mark a live, unpinned checkpoint pruned: false (nothing changed) when it is pinned or pruned
   * already, also when a concurrent writer pinned or pruned it first.
   */
  markPruned(id: string, at: string): Promise<boolean>;
  /** The lane's open runs (until null). */
  openRuns(lane: string): Promise<ManifestRunRow[]>;
  /** The entries of the lane's runs that hold `seq`, by path (byte order). */
  runsAt(lane: string, seq: number): Promise<CheckpointFileRow[]>;
  insertRuns(lane: string, runs: readonly ManifestRunRow[]): Promise<void>;
  /** End the open runs of these paths (each named with its `from`) at `until`. */
  closeRuns(lane: string, ends: readonly { path: string; from: number }[], until: number): Promise<void>;
  /** Delete the runs of `window`; returns the hashes they named (each once). */
  deleteRuns(lane: string, window: RunWindow): Promise<string[]>;
  /**
   * Of `hashes`, those that no run and no artifact of an active session references.
   * Takes the blob collector's lock exclusively until the transaction ends, before looking:
   * `putBlob`, `inlineBlobs`, `blobEpoch`, `insertCheckpoint`, `insertRuns` and `insertArtifact`
   * take it shared in a write transaction, so no concurrent writer can reference a blob between
   * this answer and the deletion (SQLite: the write lock; PostgreSQL: a row lock on the meta row).
   */
  unreferenced(hashes: readonly string[]): Promise<string[]>;
  /**
   * Take the blob collector's lock exclusively now, before anything in this transaction takes
   * it shared: for a transaction that may collect blobs (`unreferenced`) later. Two writers
   * that each hold it shared and then both need it exclusively would deadlock (PostgreSQL
   * detects it after deadlock_timeout and one whole transaction re-runs). SQLite: nothing (its
   * write lock already is exclusive).
   */
  reserveCollector(): Promise<void>;
  /**
   * Every hash a run or an active session's artifact references. `sharedOnly`: leave out the
   * hashes only `local` file entries name (private files, whose blobs are in the workspace that
   * took them, not in the store).
   */
  referencedHashes(opts?: { sharedOnly?: boolean }): Promise<string[]>;
  /**
   * The hashes `local` file entries of live checkpoints taken on `host` in `workspace` name:
   * the private files' blobs that workspace's `.baton/blobs/` must hold.
   */
  localHashes(host: string, workspace: string): Promise<string[]>;
  /**
   * Each path and hash of a run not marked `local` whose blob is a row of the store, with the
   * session of the checkpoint that opened it (doctor: private files stored in a shared store
   * before they were kept local).
   */
  storedFileRuns(): Promise<{ path: string; hash: string; sessionId: string }[]>;
  /** Bumped by every collection that deletes blobs; a checkpoint that saw it change while it ran retries. */
  blobEpoch(): Promise<number>;
  bumpBlobEpoch(): Promise<void>;
  /**
   * The stat cache is one per `scope` (a workspace on a host: services/time-travel/checkpoints.ts
   * `cacheScope`), since hosts sharing a store each have their own files, inodes and clocks.
   */
  statCache(scope: string): Promise<StatCacheRow[]>;
  /** Changes whenever the scope's stat cache does, so a process may keep a copy while it is unchanged. */
  statCacheGeneration(scope: string): Promise<number>;
  /** Bump the scope's generation and note the scope as used now (`usedMs`). */
  bumpStatCacheGeneration(scope: string, usedMs: number): Promise<void>;
  /** Note the scope as used at `usedMs` (its cache trusted, not changed), if it was last noted before `ifBefore` (ms). */
  touchStatScope(scope: string, usedMs: number, ifBefore: number): Promise<void>;
  putStatCache(scope: string, rows: readonly StatCacheRow[]): Promise<void>;
  deleteStatCache(scope: string, paths: readonly string[]): Promise<void>;
  /** Drop every scope's entries pointing at blobs that were deleted (bumping the generation of each scope that lost one). */
  forgetStatCacheHashes(hashes: readonly string[]): Promise<void>;
  /** Drop the entries of scopes not used since `beforeMs` (hosts renamed or gone, workspaces moved); returns how many scopes. */
  dropStatScopes(beforeMs: number): Promise<number>;
  insertArtifact(row: ArtifactRow): Promise<void>;
  listArtifacts(sessionId: string): Promise<ArtifactRow[]>;
  /**
   * Store a blob's stored form unless one with this hash exists; one that exists keeps its
   * content and gets `storedMs` as its stored time when that is later (a blob a checkpoint is
   * about to name is young again for `baton gc`'s grace period). True when stored now.
   */
  putBlob(hash: string, data: Uint8Array, storedMs: number): Promise<boolean>;
  /** A blob's stored form, unverified (the caller re-hashes it); undefined when not stored here. */
  getBlob(hash: string): Promise<Uint8Array | undefined>;
  /** Of `hashes`, those stored here. */
  inlineBlobs(hashes: readonly string[]): Promise<string[]>;
  /** Delete these blobs; returns the hashes that were stored here. */
  deleteBlobs(hashes: readonly string[]): Promise<string[]>;
  /** Every blob stored here, with when it was stored (ms). */
  listBlobs(): Promise<{ hash: string; storedMs: number }[]>;
}

/** A lesson as the search index holds it: a cache of LESSONS.md, which stays the truth. */
export interface LessonDocRow {
  id: string;
  /** The advice: what full-text search ranks. */
  text: string;
}

/**
 * The lessons search index, one per `scope` (a workspace on a host: hosts sharing a store each
 * have their own LESSONS.md), rebuilt whenever that file's content hash changes.
 */
export interface LessonQueries {
  /**
   * The content hash of the LESSONS.md text the scope's index was built from, and when it was
   * last built or noted as used (`touchIndex`); undefined before the first build.
   */
  indexState(scope: string): Promise<{ hash: string; usedAt: string } | undefined>;
  /** Note the scope's index as used at `at` (ISO time), if it was last noted before `ifBefore`. */
  touchIndex(scope: string, at: string, ifBefore: string): Promise<void>;
  /** Replace the scope's whole index with `docs`, built from the text with this hash. */
  replaceIndex(scope: string, hash: string, docs: readonly LessonDocRow[], at: string): Promise<void>;
  /**
   * The scope's indexed lessons matching any of `terms` (plain lowercase words), best first,
   * with a relevance > 0 (higher is better; SQLite FTS5: −bm25). Only on backends whose
   * capabilities include `fullTextSearch`.
   */
  search(scope: string, terms: readonly string[], limit: number): Promise<{ id: string; relevance: number }[]>;
  /** Drop the indexes last built or used before `before` (ISO time); returns how many scopes. */
  dropIndexes(before: string): Promise<number>;
}

/**
 * A named lock. The row stays after release so the epoch (the fencing token) only ever grows:
 * every acquisition takes `epoch + 1`, and a write guarded by the lock names its epoch.
 */
export interface LockRow {
  name: string;
  epoch: number;
  state: "held" | "free";
  owner: string;
  pid: number | null;
  /** The holder's host name, for people. */
  host: string | null;
  /** The holder's host identity (platform/process-facts.ts); null on rows written before it (migration 17/16). */
  hostId: string | null;
  /** The holder process's start time (Linux /proc/<pid>/stat field 22), to detect pid reuse. */
  startTime: string | null;
  runId: string | null;
  acquiredAt: string;
  heartbeatAt: string;
  /** When the holder's last heartbeat runs out (epoch ms). */
  expiresMs: number;
  ttlMs: number;
  /** Set when freed: when, and why (`released`, or `reclaimed: <proof>`). */
  releasedAt: string | null;
  releaseReason: string | null;
}

/** Named locks with fencing epochs (services/work/locks.ts). */
export interface LockQueries {
  getLock(name: string): Promise<LockRow | undefined>;
  listLocks(): Promise<LockRow[]>;
  /**
   * An acquisition, as compare-and-set on the epoch: insert the row when `prevEpoch` is null
   * and no row exists, or replace the row whose epoch is still `prevEpoch`. False when another
   * challenger got there first (the caller re-reads and reports the holder).
   */
  acquireLock(row: LockRow, prevEpoch: number | null): Promise<boolean>;
  /** Extend a held lock of this epoch; returns whether a row changed. */
  heartbeatLock(name: string, epoch: number, heartbeatAt: string, expiresMs: number, ttlMs: number): Promise<boolean>;
  /** Free a held lock of this epoch (the epoch is kept); returns whether a row changed. */
  freeLock(name: string, epoch: number, at: string, reason: string): Promise<boolean>;
}

export type RunState = "running" | "ended" | "crashed";

/** An agent run's liveness, kept beside the journal so heartbeats do not flood it. */
export interface RunRow {
  sessionId: string;
  runId: string;
  agent: string;
  pid: number | null;
  host: string | null;
  /** The run's host identity, as a lock's (`LockRow.hostId`). */
  hostId: string | null;
  startTime: string | null;
  startedAt: string;
  heartbeatAt: string;
  /** A heartbeat older than this marks the run crashed. */
  ttlMs: number;
  state: RunState;
  endedAt: string | null;
}

/**
 * A file an agent lane wrote with a tool (core/lanes.ts): the newest write per session, path and
 * lane, kept while the lane lives. A write since the start of the lane's running run is its
 * claim; the hash is what the lane left in the file. Written by the journal's append hook for
 * `turn:recorded` (services/agents/lanes.ts), in the turn's own transaction.
 */
export interface LaneWriteRow {
  sessionId: string;
  path: string;
  lane: string;
  /** The turn's time. */
  at: string;
  /** sha256 of the file after the write; "" when the write deleted it or it could not be read. */
  hash: string;
}

/** The lane writes' queries (services/agents/lanes.ts). */
export interface LaneQueries {
  /** Record writes: one row per (session, path, lane), the newest replacing the older. */
  putWrites(rows: readonly LaneWriteRow[]): Promise<void>;
  /** Every lane's writes of these paths in the session. */
  writesOn(sessionId: string, paths: readonly string[]): Promise<LaneWriteRow[]>;
  /** One lane's writes at or after `since`, newest first (then by path), at most `limit`. */
  laneWrites(sessionId: string, lane: string, since: string, limit: number): Promise<LaneWriteRow[]>;
  /** How many writes of one lane are at or after `since`. */
  countWrites(sessionId: string, lane: string, since: string): Promise<number>;
  /**
   * The writes, at or after `since`, by any of `lanes`, of the paths two or more of them wrote
   * then (at most `limit` paths, in path order).
   */
  overlapping(sessionId: string, lanes: readonly string[], since: string, limit: number): Promise<LaneWriteRow[]>;
  /** Forget the writes of a lane and of its subagents (`<lane>/…`: it ended); returns how many. */
  dropLane(sessionId: string, lane: string): Promise<number>;
}

export interface RunQueries {
  insertRun(row: RunRow): Promise<void>;
  getRun(sessionId: string, runId: string): Promise<RunRow | undefined>;
  /** Running runs, of one session or all, oldest first. */
  runningRuns(sessionId?: string): Promise<RunRow[]>;
  heartbeatRun(sessionId: string, runId: string, at: string, ttlMs: number): Promise<boolean>;
  setRunState(sessionId: string, runId: string, state: RunState, endedAt: string): Promise<void>;
}

/** A trajectory-ledger node as stored: the columns the queries need, and the node's JSON. */
export interface LedgerNodeRow {
  /** Global insertion order: the oldest nodes (smallest `no`) are pruned first. Assigned by the store. */
  no: number;
  nodeId: string;
  sessionId: string;
  /** Per-session order, 1, 2, 3 … */
  seq: number;
  at: string;
  toolName: string;
  status: string;
  /** Tool + primary argument hash (core/ledger/nodes.ts `targetKey`); null when the call has none. */
  target: string | null;
  /** UTF-8 size of `body`. */
  bytes: number;
  /** The redacted, bounded node as JSON (core/ledger/nodes.ts `LedgerNode`). */
  body: string;
}

/** What the write path needs to know of an earlier node (no body: it is not parsed on the hot path). */
export type LedgerNodeRef = Pick<LedgerNodeRow, "nodeId" | "seq" | "toolName" | "status">;

/** The trajectory ledger's queries (services/ledger/ledger.ts). Rows are append-only; only pruning deletes. */
export interface LedgerQueries {
  /** The session's newest node. */
  lastNode(sessionId: string): Promise<LedgerNodeRef | undefined>;
  /** The session's newest node on this target. */
  lastOnTarget(sessionId: string, target: string): Promise<LedgerNodeRef | undefined>;
  getNode(nodeId: string): Promise<LedgerNodeRow | undefined>;
  insertNode(row: Omit<LedgerNodeRow, "no">): Promise<void>;
  /** Delete the session's nodes with seq ≤ `throughSeq`; returns how many. */
  pruneSession(sessionId: string, throughSeq: number): Promise<number>;
  /** Node count and total body bytes of the whole ledger (kept by the store, O(1)). */
  totals(): Promise<{ nodes: number; bytes: number }>;
  /** Delete the oldest nodes of the whole ledger until at least `bytes` bytes are freed; returns how many. */
  pruneOldest(bytes: number): Promise<number>;
  /** The session's nodes with seq > `afterSeq`, by seq, at most `limit`. */
  sessionNodes(sessionId: string, afterSeq: number, limit: number): Promise<LedgerNodeRow[]>;
  /** Every session's nodes with no > `afterNo`, in insertion order, at most `limit`. */
  allNodes(afterNo: number, limit: number): Promise<LedgerNodeRow[]>;
}

/**
 * What a transaction can do. In a write transaction, the point reads (`getSession`,
 * `queue.getItem`, `queue.getLease`, `locks.getLock`, `runs.getRun`) and the item lists a
 * writer acts on (`queue.openItems`, `queue.leasedBy`) hold the rows they return against other
 * writers until the transaction ends (a row another writer changed meanwhile is read as
 * committed, and dropped if it no longer matches), so a read-then-write of one row
 * never races another connection (SQLite: the write lock; PostgreSQL: `FOR UPDATE`). The
 * journal's queries sit at the top level; each further
 * capability adds one group (`readonly queue: QueueQueries`, ...) so its queries stay together,
 * and each backend implements the group in its own file.
 */
export interface StoreTx extends JournalQueries {
  /**
   * Run `action` once this transaction is sure to commit: after everything it did succeeded,
   * just before COMMIT (with group commit, after every member of the group). Dropped if the
   * transaction rolls back. For work outside the database that must not happen unless the
   * transaction's changes do, such as deleting a blob file the transaction just found
   * unreferenced. An action that throws fails the commit. It is NOT a mutex: on an engine with
   * many writers other transactions run meanwhile, so an action must be safe on its own (a blob
   * file is safe to unlink because the collector's lock, taken by `unreferenced`, is held until
   * the commit and keeps any concurrent transaction from referencing it).
   */
  beforeCommit(action: () => void): void;
  /**
   * Run `action` once this transaction has committed (with group commit, once the group's COMMIT
   * succeeded); dropped if it rolls back or its commit fails. For state this process keeps that
   * must follow only what is stored (the journal's folded state of a session). It must not throw.
   */
  afterCommit(action: () => void): void;
  readonly queue: QueueQueries;
  readonly checkpoints: CheckpointQueries;
  readonly lessons: LessonQueries;
  readonly locks: LockQueries;
  readonly runs: RunQueries;
  readonly ledger: LedgerQueries;
  readonly lanes: LaneQueries;
}

/**
 * Run a committed transaction's afterCommit actions. The commit stands whatever they do: one that
 * throws (which the contract forbids) is reported as a process warning, and the rest still run.
 */
export function runCommitted(actions: readonly (() => void)[]): void {
  for (const action of actions) {
    try {
      action();
    } catch (err) {
      process.emitWarning(err instanceof Error ? err : String(err), "AfterCommitWarning");
    }
  }
}

export type TxMode = "read" | "write";

export interface TxOptions {
  /**
   * `full` (default): the commit is as durable as the backend is configured to make it.
   * `relaxed`: a write transaction whose commit may skip its own flush to disk. It survives a
   * process crash at once, and power loss from the next full commit on (SQLite in WAL mode: this
   * transaction runs at synchronous=NORMAL and the next FULL commit's fsync covers it;
   * PostgreSQL: `SET LOCAL synchronous_commit = off`). For records whose loss in a power cut is
   * acceptable, such as the trajectory ledger. A backend without the notion ignores it.
   */
  durability?: "full" | "relaxed";
  /**
   * `fn` runs exactly one statement: one atomic operation of the contract (`queue.claimReady`,
   * `queue.ackHeld`, `queue.nextWakeMs`) and nothing else, no `beforeCommit`. An engine where a
   * lone statement is a transaction of its own may skip BEGIN and COMMIT (PostgreSQL: one round
   * trip instead of three; the statement's own commit is as durable as COMMIT's). A second
   * statement is a programming error (`internal`, and it is not sent).
   */
  oneStatement?: boolean;
  /**
   * Nobody waits for what this transaction changes (a lease's claim, an ack without a result):
   * listeners hear of it late and coalesced (within ~100 ms) instead of at once, so a busy
   * queue does not wake every waiter, or NOTIFY every process, on each claim and ack, while a
   * page showing pending work still refreshes.
   */
  quiet?: boolean;
  /**
   * An append no waiter for work or for a lock depends on (the journal's one-statement append:
   * no append hook acted on it): this process's listeners hear of it at once, other processes may
   * hear of it a few milliseconds late, coalesced with the ones after it (PostgreSQL: at most one
   * NOTIFY per APPEND_NOTICE_GAP_MS per process for these, the first at once), so a process
   * appending steadily does not pay a NOTIFY round trip for every append.
   */
  lateNotice?: boolean;
}

export interface Backend {
  readonly kind: string;
  readonly capabilities: BackendCapabilities;
  /** What the open-time migration did (see MigrationReport). */
  readonly migration?: MigrationReport;
  /**
   * Set by a store shared across hosts: every blob up to this size is kept in the store, since
   * another host cannot read this one's `.baton/blobs/` files (PostgreSQL: bytea, default 64 MiB).
   */
  readonly blobMaxBytes?: number;
  /** Where the store is, for messages: a database file, or a URL without its password and the schema. */
  readonly location?: string;
  /**
   * Run `fn` in one transaction. A throw rolls back. A connection lost during COMMIT is
   * `storage_unavailable` with `details.outcome = "unknown"`: the caller re-sends with its
   * idempotency key (the journal does so once for appends). Write transactions may run concurrently
   * on engines with many writers (PostgreSQL, READ COMMITTED): a read-then-write is safe only
   * through the contract's atomic operations (`lockKey`, the row-holding point reads,
   * `claimReady`, `acquireLock`, the blob collector's lock), never by assuming a global write
   * lock. An engine may re-run `fn` after a deadlock or serialisation failure, so `fn` must
   * not act outside the store except through `beforeCommit`. SQLite takes its single write
   * lock up front, which satisfies every rule trivially.
   * A backend may carry several concurrent write transactions in one commit (group commit):
   * each must behave as if run alone in request order (a throw undoes only its own changes),
   * and each promise settles only once the shared commit is durable.
   */
  transaction<T>(mode: TxMode, fn: (tx: StoreTx) => Promise<T>, opts?: TxOptions): Promise<T>;
  /**
   * Call `listener` after writes commit: at once for this process's own transactions, and for
   * other processes' within the backend's change-detection delay (SQLite: a cheap
   * `data_version` check every few ms while anyone listens). Returns the unsubscribe function.
   */
  onChange(listener: () => void): () => void;
  /** A full integrity check of the store (SQLite: PRAGMA integrity_check); an empty list means sound. */
  integrityCheck(): Promise<string[]>;
  /**
   * The clock every expiry and availability decision reads, given this host's clock, where
   * hosts share the store (PostgreSQL: the database's clock, pg-clock.ts). Absent: the host's
   * clock is the store's (SQLite: every process sharing the file runs on one machine).
   */
  clock?(host: () => Date, opts: { resync: boolean }): Promise<() => Date>;
  /**
   * The process holding the store's write lock right now, where the engine and platform can
   * tell (SQLite on Linux: /proc/locks); undefined when none does or nobody can say.
   */
  writeLockHolder?(): { pid: number; command?: string; stopped: boolean } | undefined;
  /** Idempotent; concurrent callers share one promise. */
  close(): Promise<void>;
}

/**
 * Migrations are part of the contract: every backend keeps numbered migrations beside its
 * driver, records the versions applied, applies the missing ones at open under a lock that
 * serialises concurrent openers (SQLite: the write lock; PostgreSQL: an advisory lock), and
 * refuses a store newer than the code (`schema_too_new`). `migration` reports what ran.
 */
export interface MigrationStep {
  version: number;
  name: string;
}

export interface MigrationReport {
  from: number;
  to: number;
  applied: MigrationStep[];
}

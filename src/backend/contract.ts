/**
 * The storage seam. Services talk to storage only through this contract, never a driver, so
 * the same services (and the same contract test suite, test/contract/) run on every backend.
 *
 * One primitive, `transaction`, hands the callback a `StoreTx` whose methods are the domain's
 * queries; each backend keeps its SQL beside its driver. Everything is Promise-based so a
 * network backend fits the same shape as the embedded one.
 */

/** Where engines differ. Services branch on these flags, never on the engine's name. */
export interface BackendCapabilities {
  /** Several processes may open the same store at once. */
  readonly multipleProcesses: boolean;
  /** The store can wake waiters in other processes (PostgreSQL LISTEN/NOTIFY). */
  readonly crossProcessNotify: boolean;
  /** Full-text search with ranking is available (SQLite FTS5, PostgreSQL tsvector). */
  readonly fullTextSearch: boolean;
}

export type SessionStatus = "active" | "completed";

export interface SessionRow {
  id: string;
  flow: string;
  title: string | null;
  phase: string;
  status: SessionStatus;
  createdAt: string;
  updatedAt: string;
  lastSeq: number;
}

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
  insertSession(row: SessionRow): Promise<void>;
  updateSession(id: string, patch: Pick<SessionRow, "phase" | "status" | "updatedAt" | "lastSeq">): Promise<void>;
  listSessions(opts: { includeCompleted: boolean }): Promise<SessionRow[]>;
  findEventById(sessionId: string, id: string): Promise<EventRow | undefined>;
  insertEvents(rows: readonly EventRow[]): Promise<void>;
  /** Events with seq > afterSeq, ascending, at most `limit`. */
  readEvents(sessionId: string, afterSeq: number, limit: number): Promise<EventRow[]>;
  getSnapshot(sessionId: string): Promise<SnapshotRow | undefined>;
  putSnapshot(row: SnapshotRow): Promise<void>;
  insertDiagnostic(row: DiagnosticRow): Promise<void>;
  listDiagnostics(sessionId: string, limit: number): Promise<DiagnosticRow[]>;
}

/**
 * What a transaction can do. The journal's queries sit at the top level; each further
 * capability adds one group (`readonly queue: QueueQueries`, ...) so its queries stay together,
 * and each backend implements the group in its own file.
 */
export interface StoreTx extends JournalQueries {}

export type TxMode = "read" | "write";

export interface Backend {
  readonly kind: string;
  readonly capabilities: BackendCapabilities;
  /**
   * Run `fn` in one transaction. `write` takes the write lock up front, so a read-then-write
   * (idempotency check, seq allocation) never races another process. A throw rolls back.
   */
  transaction<T>(mode: TxMode, fn: (tx: StoreTx) => Promise<T>): Promise<T>;
  /** Idempotent; concurrent callers share one promise. */
  close(): Promise<void>;
}

export interface MigrationStep {
  version: number;
  name: string;
}

export interface MigrationReport {
  from: number;
  to: number;
  applied: MigrationStep[];
}

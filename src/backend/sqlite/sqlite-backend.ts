/**
 * The embedded default backend: one SQLite file in WAL mode, opened by every process that
 * works on the workspace (hooks, the CLI, the server). The write lock is taken up front
 * (BEGIN IMMEDIATE) and waited for with a busy timeout, so concurrent appenders queue instead
 * of failing; within one process, transactions are serialised by a promise chain because
 * better-sqlite3 runs one connection synchronously.
 */
import { createRequire } from "node:module";
import BetterSqlite3 from "better-sqlite3";
import { BatonError } from "../../errors.js";
import type {
  Backend,
  BackendCapabilities,
  DiagnosticRow,
  EventRow,
  MigrationReport,
  SessionRow,
  SnapshotRow,
  StoreTx,
  TxMode,
} from "../contract.js";
import { SQLITE_MIGRATIONS, type SqliteMigration } from "./sqlite-migrations.js";

export type SynchronousMode = "FULL" | "NORMAL" | "OFF";

export interface SqliteBackendOptions {
  /** Database file path. */
  path: string;
  /**
   * `FULL` (default): every acknowledged commit is fsynced and survives power loss.
   * `NORMAL`: in WAL mode, a power loss may drop the last commits (never corrupts); faster.
   */
  synchronous?: SynchronousMode;
  /** How long to wait for another process's write lock before failing with storage_busy. Default 10 000 ms. */
  busyTimeoutMs?: number;
  /** Extra migrations (tests use this to exercise the migrator). */
  migrations?: readonly SqliteMigration[];
}

const requireCjs = createRequire(import.meta.url);

/**
 * The addon's path, resolved once. Handing it to better-sqlite3 skips the `bindings` package's
 * search of a dozen candidate paths at every process start (measured: several ms per hook).
 */
let nativeBinding: string | undefined | null = null;
function addonPath(): string | undefined {
  if (nativeBinding === null) {
    try {
      nativeBinding = requireCjs.resolve("better-sqlite3/build/Release/better_sqlite3.node");
    } catch {
      nativeBinding = undefined; // unusual build layout: let better-sqlite3 find it
    }
  }
  return nativeBinding;
}

/** SQLite result codes → Baton error codes. I/O and corruption are fatal, never retried. */
export function mapSqliteError(err: unknown, what: string): BatonError {
  if (err instanceof BatonError) return err;
  const code = typeof (err as { code?: unknown })?.code === "string" ? (err as { code: string }).code : "";
  const msg = err instanceof Error ? err.message : String(err);
  if (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED")) {
    return new BatonError(
      "storage_busy",
      `${what}: the database stayed locked by another process (${msg}); retry, or raise busyTimeoutMs`,
      { sqlite: code },
      { cause: err },
    );
  }
  if (
    code.startsWith("SQLITE_READONLY") ||
    code.startsWith("SQLITE_CANTOPEN") ||
    code.startsWith("SQLITE_PERM") ||
    code.startsWith("SQLITE_AUTH")
  ) {
    return new BatonError(
      "workspace_unwritable",
      `${what}: cannot write the database (${msg}); check the permissions of the workspace's .baton directory`,
      { sqlite: code },
      { cause: err },
    );
  }
  if (
    code.startsWith("SQLITE_IOERR") ||
    code.startsWith("SQLITE_FULL") ||
    code.startsWith("SQLITE_CORRUPT") ||
    code.startsWith("SQLITE_NOTADB")
  ) {
    return new BatonError(
      "io_error",
      `${what}: storage failure (${msg}); nothing after this point was acknowledged. Check the disk, then run \`baton rebuild\``,
      { sqlite: code },
      { cause: err },
    );
  }
  return new BatonError("internal", `${what}: ${msg}`, { sqlite: code || undefined }, { cause: err });
}

type Db = BetterSqlite3.Database;
type Stmt = BetterSqlite3.Statement;

interface RawSession {
  id: string;
  flow: string;
  title: string | null;
  phase: string;
  status: "active" | "completed";
  created_at: string;
  updated_at: string;
  last_seq: number;
}
interface RawEvent {
  session_id: string;
  seq: number;
  id: string;
  type: string;
  actor: string;
  data: string;
  revision: number | null;
  at: string;
  body_hash: string;
  outcome: string;
}

const toSession = (r: RawSession): SessionRow => ({
  id: r.id,
  flow: r.flow,
  title: r.title,
  phase: r.phase,
  status: r.status,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  lastSeq: r.last_seq,
});
const toEvent = (r: RawEvent): EventRow => ({
  sessionId: r.session_id,
  seq: r.seq,
  id: r.id,
  type: r.type,
  actor: r.actor,
  data: r.data,
  revision: r.revision,
  at: r.at,
  bodyHash: r.body_hash,
  outcome: r.outcome,
});

class SqliteTx implements StoreTx {
  readonly #stmt: (sql: string) => Stmt;
  constructor(stmt: (sql: string) => Stmt) {
    this.#stmt = stmt;
  }
  async getSession(id: string): Promise<SessionRow | undefined> {
    const r = this.#stmt("SELECT * FROM sessions WHERE id = ?").get(id) as RawSession | undefined;
    return r && toSession(r);
  }
  async insertSession(row: SessionRow): Promise<void> {
    this.#stmt(
      "INSERT INTO sessions (id, flow, title, phase, status, created_at, updated_at, last_seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    ).run(row.id, row.flow, row.title, row.phase, row.status, row.createdAt, row.updatedAt, row.lastSeq);
  }
  async updateSession(id: string, p: Pick<SessionRow, "phase" | "status" | "updatedAt" | "lastSeq">): Promise<void> {
    this.#stmt("UPDATE sessions SET phase = ?, status = ?, updated_at = ?, last_seq = ? WHERE id = ?").run(
      p.phase,
      p.status,
      p.updatedAt,
      p.lastSeq,
      id,
    );
  }
  async listSessions(opts: { includeCompleted: boolean }): Promise<SessionRow[]> {
    const rows = (
      opts.includeCompleted
        ? this.#stmt("SELECT * FROM sessions ORDER BY created_at, id").all()
        : this.#stmt("SELECT * FROM sessions WHERE status = 'active' ORDER BY created_at, id").all()
    ) as RawSession[];
    return rows.map(toSession);
  }
  async findEventById(sessionId: string, id: string): Promise<EventRow | undefined> {
    const r = this.#stmt("SELECT * FROM events WHERE session_id = ? AND id = ?").get(sessionId, id) as RawEvent | undefined;
    return r && toEvent(r);
  }
  async insertEvents(rows: readonly EventRow[]): Promise<void> {
    const stmt = this.#stmt(
      "INSERT INTO events (session_id, seq, id, type, actor, data, revision, at, body_hash, outcome) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    );
    for (const r of rows) stmt.run(r.sessionId, r.seq, r.id, r.type, r.actor, r.data, r.revision, r.at, r.bodyHash, r.outcome);
  }
  async readEvents(sessionId: string, afterSeq: number, limit: number): Promise<EventRow[]> {
    const rows = this.#stmt("SELECT * FROM events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?").all(
      sessionId,
      afterSeq,
      limit,
    ) as RawEvent[];
    return rows.map(toEvent);
  }
  async getSnapshot(sessionId: string): Promise<SnapshotRow | undefined> {
    const r = this.#stmt("SELECT session_id, last_seq, body, hash FROM snapshots WHERE session_id = ?").get(sessionId) as
      | { session_id: string; last_seq: number; body: string; hash: string }
      | undefined;
    return r && { sessionId: r.session_id, lastSeq: r.last_seq, body: r.body, hash: r.hash };
  }
  async putSnapshot(row: SnapshotRow): Promise<void> {
    this.#stmt(
      "INSERT INTO snapshots (session_id, last_seq, body, hash) VALUES (?, ?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET last_seq = excluded.last_seq, body = excluded.body, hash = excluded.hash",
    ).run(row.sessionId, row.lastSeq, row.body, row.hash);
  }
  async insertDiagnostic(row: DiagnosticRow): Promise<void> {
    this.#stmt("INSERT INTO diagnostics (session_id, code, severity, message, at) VALUES (?, ?, ?, ?, ?)").run(
      row.sessionId,
      row.code,
      row.severity,
      row.message,
      row.at,
    );
  }
  async listDiagnostics(sessionId: string, limit: number): Promise<DiagnosticRow[]> {
    const rows = this.#stmt(
      "SELECT session_id, code, severity, message, at FROM diagnostics WHERE session_id = ? ORDER BY id DESC LIMIT ?",
    ).all(sessionId, limit) as {
      session_id: string | null;
      code: string;
      severity: DiagnosticRow["severity"];
      message: string;
      at: string;
    }[];
    return rows.reverse().map((r) => ({ sessionId: r.session_id, code: r.code, severity: r.severity, message: r.message, at: r.at }));
  }
}

export class SqliteBackend implements Backend {
  readonly kind = "sqlite";
  readonly capabilities: BackendCapabilities = Object.freeze({
    multipleProcesses: true,
    crossProcessNotify: false,
    fullTextSearch: true,
  });
  readonly migration: MigrationReport;
  readonly #db: Db;
  readonly #stmts = new Map<string, Stmt>();
  readonly #tx: SqliteTx;
  #queue: Promise<unknown> = Promise.resolve();
  #closing: Promise<void> | undefined;

  constructor(opts: SqliteBackendOptions) {
    const busy = opts.busyTimeoutMs ?? 10_000;
    let db: Db;
    try {
      const binding = addonPath();
      db = new BetterSqlite3(opts.path, binding ? { timeout: busy, nativeBinding: binding } : { timeout: busy });
    } catch (err) {
      throw mapSqliteError(err, `opening ${opts.path}`);
    }
    this.#db = db;
    try {
      // WAL lets readers run beside one writer across processes. Switching a new file to WAL
      // needs a moment of exclusive access, and SQLite answers BUSY at once (no busy handler)
      // when several processes open a fresh workspace together, so retry until the timeout.
      retryBusy(() => {
        if ((db.pragma("journal_mode", { simple: true }) as string).toLowerCase() !== "wal") db.pragma("journal_mode = WAL");
      }, busy);
      db.pragma(`synchronous = ${opts.synchronous ?? "FULL"}`);
      db.pragma("foreign_keys = ON");
      // Deleted content is overwritten, so redacted or removed data does not linger in free pages.
      db.pragma("secure_delete = ON");
      this.migration = retryBusy(() => migrate(db, opts.migrations ?? SQLITE_MIGRATIONS), busy);
    } catch (err) {
      db.close();
      throw mapSqliteError(err, `opening ${opts.path}`);
    }
    this.#tx = new SqliteTx((sql) => this.#prepare(sql));
  }

  #prepare(sql: string): Stmt {
    let s = this.#stmts.get(sql);
    if (!s) {
      s = this.#db.prepare(sql);
      this.#stmts.set(sql, s);
    }
    return s;
  }

  transaction<T>(mode: TxMode, fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    if (this.#closing) return Promise.reject(new BatonError("internal", "the backend is closed; open Baton again"));
    const run = async (): Promise<T> => {
      const db = this.#db;
      try {
        db.exec(mode === "write" ? "BEGIN IMMEDIATE" : "BEGIN");
      } catch (err) {
        throw mapSqliteError(err, "starting a transaction");
      }
      let result: T;
      try {
        result = await fn(this.#tx);
      } catch (err) {
        if (db.inTransaction) db.exec("ROLLBACK");
        throw err instanceof BatonError ? err : mapSqliteError(err, "in a transaction");
      }
      try {
        db.exec("COMMIT");
      } catch (err) {
        if (db.inTransaction) db.exec("ROLLBACK");
        throw mapSqliteError(err, "committing");
      }
      return result;
    };
    const next = this.#queue.then(run, run);
    this.#queue = next.catch(() => undefined);
    return next;
  }

  close(): Promise<void> {
    this.#closing ??= this.#queue.then(() => {
      this.#db.close();
    });
    return this.#closing;
  }
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** Run `fn`, retrying with jittered backoff while SQLite answers BUSY, for up to `timeoutMs`. */
function retryBusy<T>(fn: () => T, timeoutMs: number): T {
  const deadline = Date.now() + timeoutMs;
  for (let delay = 1; ; delay = Math.min(delay * 2, 50)) {
    try {
      return fn();
    } catch (err) {
      const code = (err as { code?: unknown })?.code;
      if (typeof code !== "string" || !code.startsWith("SQLITE_BUSY") || Date.now() >= deadline) throw err;
      Atomics.wait(sleeper, 0, 0, delay + Math.random() * delay);
    }
  }
}

function migrate(db: Db, migrations: readonly SqliteMigration[]): MigrationReport {
  const latest = migrations.reduce((m, x) => Math.max(m, x.version), 0);
  const current = (): number => {
    const has = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'baton_migrations'").get();
    if (!has) return 0;
    return (db.prepare("SELECT coalesce(max(version), 0) AS v FROM baton_migrations").get() as { v: number }).v;
  };
  // Fast path, no write lock: every process opening an up-to-date workspace pays one read.
  const from = current();
  if (from > latest) {
    throw new BatonError("schema_too_new", `the workspace database is at schema ${from}, newer than this Baton (${latest}); upgrade Baton`);
  }
  if (from === latest) return { from, to: from, applied: [] };
  const applied: { version: number; name: string }[] = [];
  db.exec("BEGIN IMMEDIATE");
  try {
    db.exec("CREATE TABLE IF NOT EXISTS baton_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)");
    const now = current(); // re-read under the write lock: another process may have migrated
    for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
      if (m.version <= now) continue;
      try {
        db.prepare("INSERT INTO baton_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(
          m.version,
          m.name,
          new Date().toISOString(),
        );
      } catch (err) {
        throw new BatonError(
          "migration_failed",
          `migration ${m.version} (${m.name}) is already being applied by another process; retry`,
          {},
          { cause: err },
        );
      }
      try {
        db.exec(m.sql);
      } catch (err) {
        throw new BatonError(
          "migration_failed",
          `migration ${m.version} (${m.name}) failed: ${(err as Error).message}; the database is unchanged`,
          {},
          { cause: err },
        );
      }
      applied.push({ version: m.version, name: m.name });
    }
    db.exec("COMMIT");
  } catch (err) {
    if (db.inTransaction) db.exec("ROLLBACK");
    throw err;
  }
  return { from, to: latest, applied };
}

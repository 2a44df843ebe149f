/**
 * The embedded default backend: one SQLite file in WAL mode, opened by every process that
 * works on the workspace (hooks, the CLI, the server). The write lock is taken up front
 * (BEGIN IMMEDIATE) and waited for with a busy timeout, so concurrent appenders queue instead
 * of failing; within one process, transactions are serialised by a promise chain because
 * better-sqlite3 runs one connection synchronously.
 *
 * Longer than ~400 lines: opening (pragmas, private file modes, migrations), transactions and
 * grouped commits, error mapping and change notification are one lifecycle; each table's SQL is
 * in the sqlite-*.ts files beside it.
 */
import { closeSync, existsSync, openSync } from "node:fs";
import { createRequire } from "node:module";
import BetterSqlite3 from "better-sqlite3";
import { BatonError } from "../../errors.js";
import type { Backend, BackendCapabilities, MigrationReport, StoreTx, TxMode, TxOptions } from "../contract.js";
import { runCommitted } from "../contract.js";
import { describeHolder, type LockHolder, writeLockHolder } from "./sqlite-lock-holder.js";
import { SQLITE_MIGRATIONS, type SqliteMigration } from "./sqlite-migrations.js";
import { SqliteTx } from "./sqlite-tx.js";

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
  /** How often to look for other processes' commits while someone listens (onChange). Default 2 ms. */
  changePollMs?: number;
  /** Extra migrations (tests use this to exercise the migrator). */
  migrations?: readonly SqliteMigration[];
}

// Created on first use: import.meta.url costs a node:url load in the CommonJS CLI bundle.
let requireCjs: NodeJS.Require | undefined;

/**
 * The addon's path, resolved once. Handing it to better-sqlite3 skips the `bindings` package's
 * search of a dozen candidate paths at every process start (measured: several ms per hook).
 */
let nativeBinding: string | undefined | null = null;
function addonPath(): string | undefined {
  if (nativeBinding === null) {
    try {
      requireCjs ??= createRequire(import.meta.url);
      nativeBinding = requireCjs.resolve("better-sqlite3/build/Release/better_sqlite3.node");
    } catch {
      nativeBinding = undefined; // unusual build layout: let better-sqlite3 find it
    }
  }
  return nativeBinding;
}

/** SQLite result codes → Baton error codes. I/O and corruption are fatal, never retried. */
export function mapSqliteError(err: unknown, what: string, dbPath?: string): BatonError {
  if (err instanceof BatonError) return err;
  const code = typeof (err as { code?: unknown })?.code === "string" ? (err as { code: string }).code : "";
  const msg = err instanceof Error ? err.message : String(err);
  if (/Could not locate the bindings file|NODE_MODULE_VERSION|better_sqlite3\.node/.test(msg) || code === "ERR_DLOPEN_FAILED") {
    // The driver's install script did not run (npm 12 skips dependencies' install scripts until
    // they are approved) or built it for another Node: nothing can be stored until it is built.
    return new BatonError(
      "storage_unavailable",
      `${what}: better-sqlite3's native driver is not built for this Node (${process.version}): ${msg.split("\n")[0]}. Build it: in a project, \`npm install-scripts approve better-sqlite3\` (npm 12) then \`npm rebuild better-sqlite3\`; for the global command, \`npm install --global --allow-scripts=better-sqlite3 agent-baton\``,
      { driver: "better-sqlite3", node: process.version },
      { cause: err },
    );
  }
  if (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED")) {
    // Name the holder when the platform can: "another process" leaves a user hunting for a
    // stopped writer (SIGSTOP, a debugger) that will never let go by itself.
    const holder = dbPath !== undefined ? writeLockHolder(dbPath) : undefined;
    return new BatonError(
      "storage_busy",
      holder
        ? `${what}: the database stayed locked (${msg}): ${describeHolder(holder)}`
        : `${what}: the database stayed locked by another process (${msg}); retry, or raise busyTimeoutMs`,
      { sqlite: code, ...(holder ? { holder } : {}) },
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
  if (code.startsWith("SQLITE_IOERR") || code.startsWith("SQLITE_FULL")) {
    return new BatonError(
      "io_error",
      `${what}: storage failure (${msg}); nothing after this point was acknowledged. Check the disk (space, health), then run \`baton doctor\``,
      { sqlite: code },
      { cause: err },
    );
  }
  // Rebuilding snapshots cannot help here: the file itself is damaged.
  if (code.startsWith("SQLITE_CORRUPT") || code.startsWith("SQLITE_NOTADB")) {
    const file = dbPath ?? "the database file";
    const aside = `restore ${file} from a backup, or move it aside (\`mv ${file} ${file}.damaged\`, with its -wal file if any: its sessions are then gone from Baton, and \`sqlite3 ${file}.damaged .recover\` may save some) and the next command starts a new one`;
    return new BatonError(
      "io_error",
      // Not opened at all: no command can read it, doctor included.
      what.startsWith("opening ")
        ? `${what}: the database file is damaged (${msg}), so no command can open it (nor doctor, nor rebuild): ${aside}`
        : `${what}: the database file is damaged (${msg}); nothing after this point was acknowledged. Run \`baton doctor\` for its integrity check; if it cannot open the file either, ${aside}`,
      { sqlite: code },
      { cause: err },
    );
  }
  return new BatonError("internal", `${what}: ${msg}`, { sqlite: code || undefined }, { cause: err });
}

type Db = BetterSqlite3.Database;
type Stmt = BetterSqlite3.Statement;

interface WriteJob {
  fn: (tx: StoreTx) => Promise<unknown>;
  relaxed: boolean;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/** The most write transactions one commit carries; bounds how long one group holds the write lock. */
const MAX_GROUP = 128;

export class SqliteBackend implements Backend {
  readonly kind = "sqlite";
  readonly capabilities: BackendCapabilities = Object.freeze({
    serialWrites: true,
    sharedAcrossHosts: false,
    uncertainCommits: false,
    fullTextSearch: true,
  });
  readonly migration: MigrationReport;
  readonly #db: Db;
  readonly #stmts = new Map<string, Stmt>();
  readonly #tx: SqliteTx;
  #queue: Promise<unknown> = Promise.resolve();
  /** The write group queued last and not yet running, which a new write may join. */
  #openBatch: WriteJob[] | undefined;
  readonly #writeStats = { commits: 0, transactions: 0 };
  #closing: Promise<void> | undefined;
  readonly #listeners = new Set<() => void>();
  readonly #changePollMs: number;
  #changeTimer: NodeJS.Timeout | undefined;
  #dataVersion = -1;
  readonly #synchronous: SynchronousMode;
  readonly #path: string;

  writeLockHolder(): LockHolder | undefined {
    return writeLockHolder(this.#path);
  }

  get location(): string {
    return this.#path;
  }

  constructor(opts: SqliteBackendOptions) {
    this.#path = opts.path;
    const busy = opts.busyTimeoutMs ?? 10_000;
    let db: Db;
    // SQLite creates the file (and later its WAL and shared memory, with the same mode) at 0644
    // under the usual umask: create it first, empty, at 0600. Only here, where a SQLite store
    // is really opened: a workspace on another store never gets a baton.db.
    if (opts.path !== ":memory:" && !existsSync(opts.path)) {
      try {
        closeSync(openSync(opts.path, "a", 0o600));
      } catch {
        // better-sqlite3 reports why the file cannot be made, mapped below.
      }
    }
    try {
      const binding = addonPath();
      db = new BetterSqlite3(opts.path, binding ? { timeout: busy, nativeBinding: binding } : { timeout: busy });
    } catch (err) {
      throw mapSqliteError(err, `opening ${opts.path}`, opts.path);
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
      throw mapSqliteError(err, `opening ${opts.path}`, opts.path);
    }
    this.#tx = new SqliteTx((sql) => this.#prepare(sql));
    this.#synchronous = opts.synchronous ?? "FULL";
    this.#changePollMs = opts.changePollMs ?? 2;
  }

  #prepare(sql: string): Stmt {
    let s = this.#stmts.get(sql);
    if (!s) {
      s = this.#db.prepare(sql);
      this.#stmts.set(sql, s);
    }
    return s;
  }

  transaction<T>(mode: TxMode, fn: (tx: StoreTx) => Promise<T>, opts?: TxOptions): Promise<T> {
    if (this.#closing) return Promise.reject(new BatonError("internal", "the backend is closed; open Baton again"));
    if (mode === "read") {
      this.#openBatch = undefined; // a write requested after this read must not run before it
      return this.#enqueue(() => this.#runRead(fn));
    }
    const relaxed = opts?.durability === "relaxed" && this.#synchronous === "FULL";
    return new Promise<T>((resolve, reject) => {
      const job: WriteJob = { fn, relaxed, resolve: resolve as (v: unknown) => void, reject };
      const open = this.#openBatch;
      if (open && open.length < MAX_GROUP) {
        open.push(job); // group commit: ride on the commit of writes already waiting
        return;
      }
      const batch = [job];
      this.#openBatch = batch;
      void this.#enqueue(() => {
        if (this.#openBatch === batch) this.#openBatch = undefined; // running: later writes form the next group
        return this.#runWrites(batch);
      });
    });
  }

  /** Chain `work` after everything queued before it: one connection runs one transaction at a time. */
  #enqueue<T>(work: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(work, work);
    this.#queue = next.catch(() => undefined);
    return next;
  }

  async #runRead<T>(fn: (tx: StoreTx) => Promise<T>): Promise<T> {
    const db = this.#db;
    try {
      db.exec("BEGIN");
    } catch (err) {
      throw mapSqliteError(err, "starting a transaction", this.#path);
    }
    const pending = this.#tx.pendingActions;
    const committed = this.#tx.committedActions;
    pending.length = 0;
    committed.length = 0;
    let result: T;
    try {
      result = await fn(this.#tx);
      for (const action of pending.splice(0)) action();
    } catch (err) {
      pending.length = 0;
      committed.length = 0;
      if (db.inTransaction) db.exec("ROLLBACK");
      throw err instanceof BatonError ? err : mapSqliteError(err, "in a transaction", this.#path);
    }
    try {
      db.exec("COMMIT");
    } catch (err) {
      committed.length = 0;
      if (db.inTransaction) db.exec("ROLLBACK");
      throw mapSqliteError(err, "committing", this.#path);
    }
    runCommitted(committed.splice(0));
    return result;
  }

  /**
   * Run a group of write transactions under one BEGIN IMMEDIATE … COMMIT: one fsync for all of
   * them (group commit). Each member runs in its own savepoint, so a throw undoes only its own
   * changes and rejects only its own caller; every caller hears back only after the shared
   * commit. A group of one runs without a savepoint. If the storage fails or the commit does,
   * nothing of the group was stored and every caller is rejected. The group commits at
   * synchronous=NORMAL only when every member asked for relaxed durability (in WAL mode the next
   * FULL commit's fsync covers it).
   */
  async #runWrites(jobs: readonly WriteJob[]): Promise<void> {
    const db = this.#db;
    const relaxed = jobs.every((j) => j.relaxed);
    const outcomes: { ok: boolean; value: unknown }[] = [];
    let done: (() => void)[] = [];
    try {
      if (relaxed) this.#prepare("PRAGMA synchronous = NORMAL").run();
      try {
        db.exec("BEGIN IMMEDIATE");
      } catch (err) {
        throw mapSqliteError(err, "starting a transaction", this.#path);
      }
      // Listeners hear only about transactions that changed something: a lease attempt on an
      // empty queue must not wake the waiter that made it (it would spin).
      const changesBefore = this.#listeners.size > 0 ? this.#totalChanges() : -1;
      const grouped = jobs.length > 1;
      const pending = this.#tx.pendingActions;
      const committed = this.#tx.committedActions;
      pending.length = 0;
      committed.length = 0;
      for (const job of jobs) {
        const mark = pending.length;
        const committedMark = committed.length;
        if (grouped) this.#prepare("SAVEPOINT baton_member").run();
        try {
          const value = await job.fn(this.#tx);
          if (grouped) this.#prepare("RELEASE baton_member").run();
          outcomes.push({ ok: true, value });
        } catch (err) {
          const mapped = err instanceof BatonError ? err : mapSqliteError(err, "in a transaction", this.#path);
          // Alone, or SQLite already rolled everything back, or the driver reported a storage
          // failure: the whole group fails. A member's own failure (a BatonError, even an
          // io_error from a file it handled) undoes only that member.
          if (!grouped || !db.inTransaction || (!(err instanceof BatonError) && mapped.code === "io_error")) throw mapped;
          this.#prepare("ROLLBACK TO baton_member").run();
          this.#prepare("RELEASE baton_member").run();
          pending.length = mark; // its actions go with it
          committed.length = committedMark;
          outcomes.push({ ok: false, value: mapped });
        }
      }
      for (const action of pending.splice(0)) action();
      try {
        db.exec("COMMIT");
      } catch (err) {
        throw mapSqliteError(err, "committing", this.#path);
      }
      done = committed.splice(0);
      this.#writeStats.commits++;
      this.#writeStats.transactions += jobs.length;
      if (changesBefore >= 0 && this.#totalChanges() !== changesBefore) setImmediate(() => this.#notify());
    } catch (err) {
      this.#tx.pendingActions.length = 0;
      this.#tx.committedActions.length = 0;
      if (db.inTransaction) db.exec("ROLLBACK");
      const failure = err instanceof BatonError ? err : mapSqliteError(err, "in a transaction", this.#path);
      for (const job of jobs) job.reject(failure);
      return;
    } finally {
      if (relaxed) this.#prepare("PRAGMA synchronous = FULL").run();
    }
    runCommitted(done);
    jobs.forEach((job, i) => {
      const o = outcomes[i] as { ok: boolean; value: unknown };
      if (o.ok) job.resolve(o.value);
      else job.reject(o.value);
    });
  }

  /** Write commits made by this connection, and the write transactions they carried (group commit puts several in one). */
  /** The connection's `PRAGMA synchronous` as SQLite reports it (0 OFF, 1 NORMAL, 2 FULL), for tests and doctor. */
  get synchronousLevel(): number {
    return this.#db.pragma("synchronous", { simple: true }) as number;
  }

  get writeStats(): { commits: number; transactions: number } {
    return { ...this.#writeStats };
  }

  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    if (!this.#changeTimer && !this.#closing) {
      // data_version changes when another connection commits; reading it costs microseconds.
      this.#dataVersion = this.#readDataVersion();
      this.#changeTimer = setInterval(() => {
        const v = this.#readDataVersion();
        if (v !== this.#dataVersion) {
          this.#dataVersion = v;
          this.#notify();
        }
      }, this.#changePollMs);
      this.#changeTimer.unref();
    }
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0 && this.#changeTimer) {
        clearInterval(this.#changeTimer);
        this.#changeTimer = undefined;
      }
    };
  }

  #totalChanges(): number {
    return (this.#prepare("SELECT total_changes() AS n").get() as { n: number }).n;
  }

  #readDataVersion(): number {
    try {
      return this.#db.pragma("data_version", { simple: true }) as number;
    } catch {
      return this.#dataVersion; // closing; the next check or close() settles it
    }
  }

  #notify(): void {
    for (const l of [...this.#listeners]) {
      try {
        l();
      } catch {
        // a listener's failure is its own; the others still hear about the change
      }
    }
  }

  integrityCheck(): Promise<string[]> {
    return this.transaction("read", async () => {
      const rows = this.#db.pragma("integrity_check") as { integrity_check: string }[];
      return rows.map((r) => r.integrity_check).filter((m) => m !== "ok");
    });
  }

  close(): Promise<void> {
    this.#closing ??= this.#queue.then(() => {
      if (this.#changeTimer) clearInterval(this.#changeTimer);
      this.#changeTimer = undefined;
      this.#listeners.clear();
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
  // The applied set, not just the highest version: a migration numbered below one already
  // applied (added later on another branch of work) must still run.
  const appliedSet = (): Set<number> => {
    const has = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'baton_migrations'").get();
    if (!has) return new Set();
    return new Set((db.prepare("SELECT version FROM baton_migrations").all() as { version: number }[]).map((r) => r.version));
  };
  const pendingOf = (done: Set<number>) => [...migrations].sort((a, b) => a.version - b.version).filter((m) => !done.has(m.version));
  // Fast path, no write lock: every process opening an up-to-date workspace pays one read.
  const before = appliedSet();
  const from = Math.max(0, ...before);
  if (from > latest) {
    throw new BatonError("schema_too_new", `the workspace database is at schema ${from}, newer than this Baton (${latest}); upgrade Baton`);
  }
  if (pendingOf(before).length === 0) return { from, to: from, applied: [] };
  const applied: { version: number; name: string }[] = [];
  db.exec("BEGIN IMMEDIATE");
  try {
    db.exec("CREATE TABLE IF NOT EXISTS baton_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)");
    // Re-read under the write lock: another process may have migrated meanwhile.
    for (const m of pendingOf(appliedSet())) {
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

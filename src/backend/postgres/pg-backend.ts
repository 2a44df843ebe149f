/**
 * The PostgreSQL backend: one schema per Baton project inside a database, so one cluster serves
 * many teams and projects; a `pg` pool; write transactions side by side at READ COMMITTED, made
 * safe by the contract's atomic operations (contract.ts); change notification with
 * LISTEN/NOTIFY, so long-polls and SSE wake across processes and hosts.
 *
 * No password is ever taken from configuration: libpq's environment (PGPASSWORD, PGSERVICE) and
 * ~/.pgpass supply it, as `pg` reads them.
 *
 * Longer than ~400 lines: the connection (pool, retries with backoff, `storage_unavailable`),
 * transactions and their error mapping, migrations and LISTEN/NOTIFY are one lifecycle; each
 * table's SQL is in the pg-*.ts files beside it.
 */

import { createHash, randomUUID } from "node:crypto";
import pg from "pg";
import { checkProject, redactStoreUrl } from "../../core/store-url.js";
import { BatonError, isBatonError } from "../../errors.js";
import type { Backend, BackendCapabilities, MigrationReport, StoreTx, TxMode, TxOptions } from "../contract.js";
import { databaseClock } from "./pg-clock.js";
import { mapPgError, retriable, unavailable } from "./pg-errors.js";
import { PG_MIGRATIONS, type PgMigration } from "./pg-migrations.js";
import { PgTx } from "./pg-tx.js";
import type { PgCtx } from "./pg-types.js";

export interface PostgresBackendOptions {
  /** postgres://user@host:port/db (a password in it works, but Baton never writes one down). */
  url: string;
  /** The Baton project: its schema is `baton_<project>_<hash8>` (see projectSchema). */
  project: string;
  /** Pool size per process. Default 8. */
  poolSize?: number;
  /** Give up connecting (with backoff) after this long: `storage_unavailable`. Default 5 000 ms. */
  connectTimeoutMs?: number;
  /** The largest blob stored (bytea). Default 64 MiB. */
  blobMaxBytes?: number;
  /** Extra migrations (tests). */
  migrations?: readonly PgMigration[];
}

/**
 * The schema of a project (also its NOTIFY channel): `baton_`, the name with '-' as '_', and 8
 * hex digits of the exact name's sha256, so the mapping is one-to-one (`team-a` and `team_a` are
 * two projects) while staying readable in psql.
 */
export function projectSchema(project: string): string {
  checkProject(project);
  const hash = createHash("sha256").update(project).digest("hex").slice(0, 8);
  return `baton_${project.replace(/-/g, "_")}_${hash}`;
}

/** The URL without its password or secret parameters, for messages and configuration. */
export const redactUrl = redactStoreUrl;

/**
 * What a statement of this code hits when a newer Baton on another host migrated the project
 * after this process opened it: a column made NOT NULL that this code does not fill (23502), an
 * ON CONFLICT key that is no longer unique (42P10), a column (42703) or table (42P01) gone.
 */
const SCHEMA_DRIFT = new Set(["23502", "42P10", "42703", "42P01"]);

/** pg refuses a query on a client whose connection already failed, without sending it. */
const neverSent = (err: unknown): boolean => /not queryable/i.test(err instanceof Error ? err.message : String(err));

/** A prepared statement whose result columns changed under it (another process migrated). */
function isStalePlan(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  return code === "0A000" && /cached plan must not change result type/i.test(err instanceof Error ? err.message : String(err));
}

// int8 and numeric as numbers: every bigint Baton stores (seqs, ms) is a safe integer.
const TYPES = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === 20 || oid === 1700) return (v: string) => Number(v);
    return (pg.types.getTypeParser as (o: number, f?: string) => unknown)(oid, format);
  },
};

/** Statement names shared by every connection: each is prepared once per connection. */
const statementNames = new Map<string, string>();
function nameOf(sql: string): string {
  let n = statementNames.get(sql);
  if (!n) {
    n = `baton_${statementNames.size}`;
    statementNames.set(sql, n);
  }
  return n;
}

const guarded = new WeakSet<pg.PoolClient>();

/** How late a quiet change (TxOptions.quiet) is told: a dashboard holds "something changed" 150 ms anyway. */
const QUIET_MS = 100;

/**
 * At most one NOTIFY per this many ms for appends no waiter for work or a lock depends on
 * (TxOptions.lateNotice), the first at once: with two writers a process, a NOTIFY after every append was about a sixth of
 * the CPU an append cost (a round trip on a pooled connection and a statement on the server).
 */
const APPEND_NOTICE_GAP_MS = 5;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

class Ctx implements PgCtx {
  changed = false;
  #collector: "none" | "share" | "exclusive" = "none";
  /** Statements sent: a one-statement transaction (no BEGIN) may send only one. */
  #sent = 0;
  constructor(
    readonly client: pg.PoolClient,
    readonly write: boolean,
    readonly single: boolean,
  ) {}
  #query(sql: string, params: readonly unknown[]) {
    if (this.single && this.#sent > 0)
      throw new BatonError("internal", "a one-statement transaction tried a second statement; run it as an ordinary transaction");
    this.#sent++;
    return this.client.query({ name: nameOf(sql), text: sql, values: params as unknown[] });
  }
  async rows<R>(sql: string, params: readonly unknown[] = [], changes = false): Promise<R[]> {
    const r = await this.#query(sql, params);
    if (changes && (r.rowCount ?? 0) > 0) this.changed = true;
    return r.rows as R[];
  }
  async run(sql: string, params: readonly unknown[] = []): Promise<number> {
    const r = await this.#query(sql, params);
    const n = r.rowCount ?? 0;
    if (n > 0) this.changed = true;
    return n;
  }
  async collectorLock(mode: "share" | "exclusive"): Promise<void> {
    if (this.#collector === "exclusive" || (mode === "share" && this.#collector === "share")) return;
    await this.rows(`SELECT 1 FROM checkpoint_meta WHERE id = 1 FOR ${mode === "share" ? "SHARE" : "UPDATE"}`);
    this.#collector = mode;
  }
}

export class PostgresBackend implements Backend {
  readonly kind = "postgres";
  readonly capabilities: BackendCapabilities = Object.freeze({
    serialWrites: false,
    sharedAcrossHosts: true,
    uncertainCommits: true,
    fullTextSearch: true,
  });
  readonly schema: string;
  readonly blobMaxBytes: number;
  /** The store's URL without a password (for doctor and status). */
  readonly location: string;
  migration: MigrationReport = { from: 0, to: 0, applied: [] };
  readonly #pool: pg.Pool;
  readonly #url: string;
  readonly #connectTimeoutMs: number;
  readonly #origin = randomUUID();
  readonly #listeners = new Set<() => void>();
  #listenClient: pg.Client | undefined;
  #listenStarting = false;
  #closing: Promise<void> | undefined;
  #announcing = false;
  #announceAgain = false;
  #unlistenTimer: NodeJS.Timeout | undefined;
  #quietTimer: NodeJS.Timeout | undefined;
  /** A NOTIFY due for late-told appends (TxOptions.lateNotice), and when the last one was sent. */
  #lateTimer: NodeJS.Timeout | undefined;
  #lastAnnounced = Number.NEGATIVE_INFINITY;
  readonly #writeStats = { commits: 0, transactions: 0, retries: 0 };
  readonly #poolSize: number;
  readonly #project: string;
  /** The newest migration this code knows (set by the open-time migration). */
  #known = 0;

  private constructor(opts: PostgresBackendOptions) {
    this.schema = projectSchema(opts.project);
    this.#project = opts.project;
    this.blobMaxBytes = opts.blobMaxBytes ?? 64 * 1024 * 1024;
    this.location = `${redactUrl(opts.url)} (schema ${this.schema})`;
    this.#url = opts.url;
    this.#connectTimeoutMs = opts.connectTimeoutMs ?? 5_000;
    this.#poolSize = opts.poolSize ?? 8;
    this.#pool = new pg.Pool({
      connectionString: opts.url,
      max: this.#poolSize,
      connectionTimeoutMillis: Math.min(this.#connectTimeoutMs, 5_000),
      idleTimeoutMillis: 10_000,
      options: `-c search_path=${this.schema}`,
      types: TYPES,
      application_name: "baton",
      // Idle pooled connections do not keep a finished CLI or hook process alive.
      allowExitOnIdle: true,
    });
    // An idle client whose server went away reports here; the pool drops it and the next
    // transaction connects afresh (a restarted server is picked up without restarting us).
    this.#pool.on("error", () => undefined);
  }

  /** Connect, create the project's schema and apply the missing migrations (under an advisory lock). */
  static async open(opts: PostgresBackendOptions): Promise<PostgresBackend> {
    const b = new PostgresBackend(opts);
    try {
      b.migration = await b.#migrate(opts.migrations ?? PG_MIGRATIONS);
    } catch (err) {
      await b.#pool.end().catch(() => undefined);
      throw isBatonError(err) ? err : mapPgError(err, "opening the PostgreSQL store", b.location);
    }
    return b;
  }

  /** pg-pool says "timeout exceeded" both for a slow server and for a full pool: tell them apart. */
  #saturated(err: unknown): boolean {
    const msg = err instanceof Error ? err.message : String(err);
    return /timeout exceeded when trying to connect/i.test(msg) && this.#pool.totalCount >= this.#poolSize && this.#pool.idleCount === 0;
  }

  /**
   * A pooled client; connection failures are retried with backoff until the connect timeout,
   * except a refused connection (nothing listens there: a stopped server or a wrong port), which
   * fails after two quick tries so a CLI command or hook does not wait out the whole timeout. A
   * server starting up answers 57P03 instead and is waited for. A pool whose clients all stayed
   * checked out is this process being busy, not the server being down: `storage_busy`.
   */
  async #connect(): Promise<pg.PoolClient> {
    if (this.#closing) throw new BatonError("internal", "the backend is closed; open Baton again");
    const deadline = Date.now() + this.#connectTimeoutMs;
    let refused = 0;
    for (let delay = 25; ; delay = Math.min(delay * 2, 500)) {
      try {
        const client = await this.#pool.connect();
        // A checked-out client whose server dies emits 'error' beside the failed query's own
        // rejection; that rejection is what we report, so the event must not crash the process.
        if (!guarded.has(client)) {
          guarded.add(client);
          client.on("error", () => undefined);
        }
        return client;
      } catch (err) {
        if (this.#saturated(err)) {
          throw new BatonError(
            "storage_busy",
            `connecting to PostgreSQL at ${this.location}: all ${this.#poolSize} connections of this process stayed busy for ${this.#connectTimeoutMs} ms; retry, or raise the pool size or BATON_STORE_TIMEOUT_MS`,
            { poolSize: this.#poolSize },
            { cause: err },
          );
        }
        const isRefused = (err as { code?: unknown }).code === "ECONNREFUSED";
        if (isRefused) refused++;
        if (Date.now() + delay >= deadline || !retriable(err) || refused >= 3) {
          throw mapPgError(err, "connecting to PostgreSQL", this.location);
        }
        await sleep(isRefused ? 50 : delay * (0.5 + Math.random()));
      }
    }
  }

  async transaction<T>(mode: TxMode, fn: (tx: StoreTx) => Promise<T>, opts?: TxOptions): Promise<T> {
    // One statement needs no BEGIN/COMMIT: it commits by itself, in one round trip instead of
    // three (relaxed durability needs SET LOCAL, hence a transaction block).
    const single = opts?.oneStatement === true && opts.durability !== "relaxed";
    for (let attempt = 1; ; attempt++) {
      const client = await this.#connect();
      const ctx = new Ctx(client, mode === "write", single);
      const tx = new PgTx(ctx, this.schema);
      let begun = false;
      let committing = false;
      try {
        if (single)
          committing = mode === "write"; // the statement is the commit
        else {
          await client.query(mode === "write" ? "BEGIN" : "BEGIN READ ONLY");
          begun = true;
          // Relaxed durability for this transaction only: the commit returns before its WAL flush.
          if (mode === "write" && opts?.durability === "relaxed") await client.query("SET LOCAL synchronous_commit = off");
        }
        const result = await fn(tx);
        if (single && tx.pendingActions.length > 0)
          throw new BatonError("internal", "a one-statement transaction cannot run beforeCommit actions");
        for (const action of tx.pendingActions.splice(0)) action();
        if (!single) {
          committing = true;
          await client.query("COMMIT");
        }
        client.release();
        if (mode === "write") {
          this.#writeStats.commits++;
          this.#writeStats.transactions++;
        }
        if (ctx.changed) {
          if (opts?.quiet) this.#quietChange();
          else this.#loudChange(opts?.lateNotice === true);
        }
        return result;
      } catch (err) {
        let broken = false;
        if (begun && !committing) await client.query("ROLLBACK").catch(() => (broken = true));
        // Named statements are prepared once per connection; `SELECT *` prepared before another
        // process's migration added a column fails with "cached plan must not change result
        // type" (0A000) on that connection forever. Drop the connection (a new one prepares
        // afresh) and run the transaction again: it failed before COMMIT (or, alone, was refused
        // whole by the server), so nothing landed.
        const stalePlan = isStalePlan(err) && (!committing || single);
        // A lone statement the server refused for what it does (a deadlock, a constraint) did not
        // commit, and one that pg never sent (its connection had already failed) did not run. A
        // connection lost while it ran leaves the outcome unknown, even when the server said why
        // (a shutdown can end a backend after its commit, as it writes the answer).
        const notRun = single && neverSent(err);
        const uncertain = committing && !notRun && (!single || retriable(err));
        client.release(broken || uncertain || stalePlan || notRun ? true : undefined);
        if (isBatonError(err)) throw err;
        const code = (err as { code?: string }).code;
        if (stalePlan && attempt < 5) continue;
        // A deadlock or serialisation failure undid the whole transaction: run it again.
        if ((code === "40P01" || code === "40001") && attempt < 10) {
          this.#writeStats.retries++;
          await sleep(Math.random() * 5 * attempt);
          continue;
        }
        // The connection died before the transaction began (or its lone statement ran): nothing
        // landed, so retry.
        if (!begun && (!committing || notRun) && retriable(err) && attempt < 5) {
          await sleep(25 * attempt);
          continue;
        }
        if (code !== undefined && SCHEMA_DRIFT.has(code)) {
          const newer = await this.#newerSchema(err);
          if (newer) throw newer;
        }
        if (uncertain && retriable(err)) {
          throw unavailable(
            err,
            `committing to PostgreSQL at ${this.location}: the connection was lost while committing, so the outcome is unknown; send the same request again with its idempotency key (event id)`,
            { outcome: "unknown" },
          );
        }
        throw mapPgError(err, mode === "write" ? "in a write transaction" : "in a read transaction", this.location);
      }
    }
  }

  /**
   * A commit someone may be waiting for: this process's listeners at once, other processes by
   * NOTIFY; `late` (TxOptions.lateNotice): that NOTIFY at once only when none went out in the
   * last APPEND_NOTICE_GAP_MS, else once that gap has passed, for every such commit meanwhile.
   */
  #loudChange(late: boolean): void {
    // It covers any quiet change still waiting: listeners re-read everything anyway.
    if (this.#quietTimer) clearTimeout(this.#quietTimer);
    this.#quietTimer = undefined;
    if (this.#listeners.size > 0) setImmediate(() => this.#notify());
    const wait = late ? this.#lastAnnounced + APPEND_NOTICE_GAP_MS - performance.now() : 0;
    if (wait <= 0) {
      this.#announce();
      return;
    }
    if (this.#lateTimer || this.#closing) return; // one is due: it covers this commit
    // Not unref'd: a process that ends without close() still tells the others, ≤ 5 ms later.
    this.#lateTimer = setTimeout(() => {
      this.#lateTimer = undefined;
      if (!this.#closing) this.#announce();
    }, wait);
  }

  /**
   * A commit nobody waits for (a claim, an ack without a result): told late and coalesced, so
   * 16 workers leasing and acking do not send a NOTIFY per commit (each one a round trip on a
   * pooled connection, and a wake-up for every listening process), while a page showing
   * pending work still refreshes within QUIET_MS.
   */
  #quietChange(): void {
    if (this.#quietTimer || this.#closing) return;
    this.#quietTimer = setTimeout(() => {
      this.#quietTimer = undefined;
      if (this.#closing) return;
      if (this.#listeners.size > 0) this.#notify();
      this.#announce();
    }, QUIET_MS);
    this.#quietTimer.unref();
  }

  /**
   * Tell other processes that something committed: NOTIFY in a tiny transaction of its own,
   * after the commit. Inside the write transaction it would serialise every commit of the
   * cluster behind PostgreSQL's notify-queue lock, fsync included (measured: lease+ack at a fifth
   * of a raw queue). Coalesced: while one is in flight, later ones fold into a single next one.
   * Lost only if this process dies between its commit and the NOTIFY: waiters re-check on
   * their own deadlines (a lease's expiry, the long-poll timeout).
   */
  #announce(): void {
    if (this.#announcing) {
      this.#announceAgain = true;
      return;
    }
    this.#announcing = true;
    this.#announceAgain = false;
    // This NOTIFY covers every commit before it, late-told ones included.
    if (this.#lateTimer) clearTimeout(this.#lateTimer);
    this.#lateTimer = undefined;
    this.#lastAnnounced = performance.now(); // monotonic: a clock stepped back must not hold notices up
    this.#pool
      .query({ name: nameOf("SELECT pg_notify($1, $2)"), text: "SELECT pg_notify($1, $2)", values: [this.schema, this.#origin] })
      .catch(() => undefined)
      .finally(() => {
        this.#announcing = false;
        // Also while closing: close() waits for this one before the pool ends (a change told
        // by close() while a NOTIFY was on its way would otherwise never go out).
        if (this.#announceAgain) this.#announce();
      });
  }

  get writeStats(): { commits: number; transactions: number; retries: number } {
    return { ...this.#writeStats };
  }

  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    void this.#listen();
    if (this.#unlistenTimer) clearTimeout(this.#unlistenTimer);
    this.#unlistenTimer = undefined;
    return () => {
      this.#listeners.delete(listener);
      // Linger: a long-poll loop unsubscribes and subscribes again at once; reconnecting the
      // LISTEN connection each time would cost a connection and open a window for missed wakes.
      if (this.#listeners.size === 0 && !this.#unlistenTimer) {
        this.#unlistenTimer = setTimeout(() => {
          this.#unlistenTimer = undefined;
          if (this.#listeners.size === 0) this.#unlisten();
        }, 30_000);
        this.#unlistenTimer.unref();
      }
    };
  }

  /** One dedicated connection LISTENs while anyone listens; reconnected after a failure. */
  async #listen(): Promise<void> {
    if (this.#listenClient || this.#listenStarting || this.#closing || this.#listeners.size === 0) return;
    this.#listenStarting = true;
    const client = new pg.Client({
      connectionString: this.#url,
      types: TYPES,
      application_name: "baton-listen",
      // A server that accepts TCP but never answers must not leave the LISTEN connect hanging.
      connectionTimeoutMillis: Math.min(this.#connectTimeoutMs, 5_000),
    });
    client.on("notification", (msg) => {
      if (msg.payload !== this.#origin) this.#notify(); // our own commits were announced at once
    });
    client.on("error", () => {
      if (this.#listenClient === client) this.#listenClient = undefined;
      client.end().catch(() => undefined);
      // Missed notifications while down: wake everyone once, then listen again.
      setTimeout(() => {
        this.#notify();
        void this.#listen();
      }, 250).unref();
    });
    try {
      await client.connect();
      // The LISTEN connection never keeps a process alive by itself (a CLI command that polled
      // exits when done; a waiter keeps its own timer): unref its socket.
      (client as unknown as { connection?: { stream?: { unref?: () => void } } }).connection?.stream?.unref?.();
      await client.query(`LISTEN ${pg.escapeIdentifier(this.schema)}`);
      this.#listenClient = client;
      if (this.#listeners.size === 0 || this.#closing) this.#unlisten();
      // Whatever committed before LISTEN took effect was not announced to us: wake everyone to look.
      else this.#notify();
    } catch {
      client.end().catch(() => undefined);
      if (!this.#closing) setTimeout(() => void this.#listen(), 500).unref();
    } finally {
      this.#listenStarting = false;
    }
  }

  #unlisten(): void {
    const c = this.#listenClient;
    this.#listenClient = undefined;
    c?.end().catch(() => undefined);
  }

  #notify(): void {
    for (const l of [...this.#listeners]) {
      try {
        l();
      } catch {
        // a listener's failure is its own
      }
    }
  }

  /**
   * After a statement failed the way a schema newer than this code makes it fail: the schema's
   * version, read again, and `schema_too_new` when another process migrated past what this
   * code knows (it opened the project before). Undefined when the schema is not newer, or
   * cannot be read now (the original error is reported then).
   */
  async #newerSchema(cause: unknown): Promise<BatonError | undefined> {
    const version = await this.#pool
      .query<{ v: number | null }>(`SELECT max(version) AS v FROM ${pg.escapeIdentifier(this.schema)}.baton_migrations`)
      .then((r) => Number(r.rows[0]?.v ?? 0))
      .catch(() => 0);
    if (version <= this.#known) return undefined;
    const pgCode = (cause as { code?: string }).code;
    return new BatonError(
      "schema_too_new",
      `the project "${this.#project}" at ${this.location} was upgraded to schema version ${version} by a newer Baton (this one knows up to ${this.#known}) after this process opened it, so this process cannot use it any more; nothing was changed by this request. Upgrade Baton here and restart this process (and any server, MCP server or watcher running on this host)`,
      { project: this.#project, schema: this.schema, version, known: this.#known, ...(pgCode ? { pg: pgCode } : {}) },
      { cause },
    );
  }

  /** This database's clock, read as the host's clock plus the measured offset (pg-clock.ts). */
  clock(host: () => Date, opts: { resync: boolean }): Promise<() => Date> {
    return databaseClock(() => this.#serverTimeMs(), host, opts);
  }

  async #serverTimeMs(): Promise<number> {
    const client = await this.#connect();
    let broken = false;
    try {
      const r = await client.query<{ ms: number | string }>("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms");
      return Number(r.rows[0]?.ms);
    } catch (err) {
      broken = true;
      throw mapPgError(err, "reading the PostgreSQL server's clock", this.location);
    } finally {
      client.release(broken);
    }
  }

  async integrityCheck(): Promise<string[]> {
    // The server keeps its own consistency (WAL, checksums where enabled); check that every
    // table Baton needs is there and readable.
    return this.transaction("read", async (tx) => {
      await tx.listSessions({ includeCompleted: false });
      await tx.checkpoints.blobEpoch();
      await tx.ledger.totals();
      return [];
    });
  }

  async #migrate(migrations: readonly PgMigration[]): Promise<MigrationReport> {
    const latest = migrations.reduce((m, x) => Math.max(m, x.version), 0);
    this.#known = latest;
    const client = await this.#connect();
    let broken = false;
    try {
      const applied = async (): Promise<Set<number>> => {
        const r = await client
          .query<{ version: number }>(`SELECT version FROM ${pg.escapeIdentifier(this.schema)}.baton_migrations`)
          .catch((err: { code?: string }) => {
            if (err.code === "42P01" || err.code === "3F000") return { rows: [] as { version: number }[] };
            throw err;
          });
        return new Set(r.rows.map((x) => Number(x.version)));
      };
      const before = await applied();
      const from = Math.max(0, ...before);
      if (from > latest) {
        throw new BatonError(
          "schema_too_new",
          `the project "${this.#project}" at ${this.location} is at schema version ${from}, newer than this Baton (${latest}); upgrade Baton here`,
          { project: this.#project, schema: this.schema, version: from, known: latest },
        );
      }
      const pending = (done: Set<number>) => [...migrations].sort((a, b) => a.version - b.version).filter((m) => !done.has(m.version));
      if (pending(before).length === 0) return { from, to: from, applied: [] };
      // Serialise every opener of this project (other processes, other hosts) while migrating.
      await client.query("SELECT pg_advisory_lock(hashtextextended($1, 0))", [`baton-migrate:${this.schema}`]);
      const done: { version: number; name: string }[] = [];
      try {
        await client.query(`CREATE SCHEMA IF NOT EXISTS ${pg.escapeIdentifier(this.schema)}`);
        await client.query(
          "CREATE TABLE IF NOT EXISTS baton_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at text NOT NULL)",
        );
        for (const m of pending(await applied())) {
          await client.query("BEGIN");
          try {
            await client.query("INSERT INTO baton_migrations (version, name, applied_at) VALUES ($1, $2, $3)", [
              m.version,
              m.name,
              new Date().toISOString(),
            ]);
            await client.query(m.sql);
            await client.query("COMMIT");
          } catch (err) {
            await client.query("ROLLBACK").catch(() => (broken = true));
            if (retriable(err)) throw err;
            throw new BatonError(
              "migration_failed",
              `migration ${m.version} (${m.name}) failed: ${(err as Error).message}; the schema ${this.schema} is unchanged`,
              {},
              { cause: err },
            );
          }
          done.push({ version: m.version, name: m.name });
        }
      } finally {
        await client
          .query("SELECT pg_advisory_unlock(hashtextextended($1, 0))", [`baton-migrate:${this.schema}`])
          .catch(() => (broken = true));
      }
      return { from, to: latest, applied: done };
    } catch (err) {
      broken = broken || retriable(err);
      throw err;
    } finally {
      client.release(broken ? true : undefined);
    }
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#listeners.clear();
      if (this.#unlistenTimer) clearTimeout(this.#unlistenTimer);
      if (this.#quietTimer || this.#lateTimer) {
        // A quiet or late-told change not yet told goes out now, before the pool ends.
        clearTimeout(this.#quietTimer);
        this.#quietTimer = undefined;
        this.#announce();
      }
      this.#unlisten();
      while (this.#announcing) await sleep(1); // let the last NOTIFY go out before the pool ends
      await this.#pool.end().catch(() => undefined);
    })();
    return this.#closing;
  }
}

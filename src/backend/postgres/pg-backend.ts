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
import { BatonError, badInput, isBatonError } from "../../errors.js";
import { type StoreCallLimits, scopedStoreLimits } from "../../platform/store-limits.js";
import type { Backend, BackendCapabilities, MigrationReport, StoreTx, TxMode, TxOptions } from "../contract.js";
import { runCommitted } from "../contract.js";
import { databaseClock, type ServerClockReading } from "./pg-clock.js";
import { LIMIT_HINT, mapPgError, retriable, StoreTimeout, type TimeLimit, unavailable } from "./pg-errors.js";
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
  /**
   * The statement bound: a statement (or COMMIT) the server has not answered within this long,
   * plus 1 ms per KiB it sends and a second's grace, fails with `storage_unavailable` and its
   * connection is dropped; the server cancels one that runs this long (statement_timeout).
   * Default 30 000 ms. Migrations get at least 10 minutes.
   */
  statementTimeoutMs?: number;
  /** Limits on every call of this backend (a hook process's deadline); a scope's (withStoreLimits) come first. */
  limits?: StoreCallLimits;
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

/**
 * pg refuses a query on a client whose connection already failed, without sending it; a
 * statement due after its caller's deadline is not sent either.
 */
const neverSent = (err: unknown): boolean =>
  err instanceof StoreTimeout ? !err.sent : /not queryable/i.test(err instanceof Error ? err.message : String(err));

/**
 * The statement bound's default. Baton's statements take milliseconds; the heaviest legitimate
 * ones are a checkpoint's blob insert (up to `blobMaxBytes`, 64 MiB: the 1 ms per KiB sent gives
 * it 64 s more to go out, enough down to ~8 Mbit/s), an integrity check (three reads) and a
 * claim or append under lock contention. 30 s is far above any of them on a loaded server, yet
 * leaves an agent hook (whose deadline is 45 s by default) room to fail open in time; raise it
 * for a slow link. Migrations get at least 10 minutes (they may rebuild a large table, or wait
 * for another host's).
 */
export const STATEMENT_TIMEOUT_MS = 30_000;
/**
 * The client waits this much longer than the server's statement_timeout: a server that is up
 * cancels a statement past the bound itself (a clean error, the connection kept, nothing
 * committed), so the client's own timeout fires only when the server cannot answer at all.
 */
const CLIENT_GRACE_MS = 1_000;
/** A statement of a migration may rebuild a large table: at least this long. */
const MIGRATION_TIMEOUT_MS = 10 * 60_000;
/**
 * TCP keepalive on every connection after this long idle: a connection whose server vanished
 * (a host gone, a network cut) errors instead of lingering, and NAT or firewall state is kept.
 * The probes' interval and count are the OS's (Linux: net.ipv4.tcp_keepalive_intvl, _probes).
 */
const KEEPALIVE_MS = 10_000;

/** pg's own error for a statement past its `query_timeout`. */
const readTimeout = (err: unknown): boolean => err instanceof Error && err.message === "Query read timeout";

/** The bytes a statement sends in its parameters (large blobs and texts get more time to go out). */
function paramBytes(params: readonly unknown[]): number {
  let n = 0;
  for (const p of params) {
    if (typeof p === "string") n += p.length;
    else if (p instanceof Uint8Array) n += p.byteLength;
  }
  return n;
}

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

/** Close a client's socket at once (pg's own end() says goodbye to the server and waits for it). */
function destroySocket(client: pg.ClientBase): void {
  (client as unknown as { connection?: { stream?: { destroy?: () => void } } }).connection?.stream?.destroy?.();
}

/** Send one statement on a client, within a time limit (PostgresBackend.#send). */
type Send = (client: pg.ClientBase, config: pg.QueryConfig, bytes?: number) => Promise<pg.QueryResult>;

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
    readonly send: Send,
  ) {}
  #query(sql: string, params: readonly unknown[]) {
    if (this.single && this.#sent > 0)
      throw new BatonError("internal", "a one-statement transaction tried a second statement; run it as an ordinary transaction");
    this.#sent++;
    return this.send(this.client, { name: nameOf(sql), text: sql, values: params as unknown[] }, paramBytes(params));
  }
  async rows<R>(sql: string, params: readonly unknown[] = [], changes = false): Promise<R[]> {
    const r = await this.#query(sql, params);
    if (changes && (r.rowCount ?? 0) > 0) this.changed = true;
    return r.rows as R[];
  }
  noteChange(): void {
    this.changed = true;
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
  /** The pool's own wait for one connection attempt. */
  readonly #attemptMs: number;
  readonly #statementMs: number;
  readonly #limits: StoreCallLimits | undefined;
  /**
   * Bumped when a statement timed out: the server may be frozen or cut off, and so may every
   * idle connection to it. A pooled connection made before the bump is dropped when next
   * checked out, so the calls after a timeout wait for a fresh connection (the connect
   * timeout), not for another statement bound each.
   */
  #generation = 0;
  readonly #born = new WeakMap<pg.ClientBase, number>();
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
    this.#attemptMs = Math.min(this.#connectTimeoutMs, 5_000);
    const statementMs = opts.statementTimeoutMs ?? STATEMENT_TIMEOUT_MS;
    if (!Number.isSafeInteger(statementMs) || statementMs < 1)
      throw badInput(`the statement timeout must be a whole number of milliseconds ≥ 1, got ${statementMs}`);
    this.#statementMs = statementMs;
    this.#limits = opts.limits;
    this.#poolSize = opts.poolSize ?? 8;
    this.#pool = new pg.Pool({
      connectionString: opts.url,
      max: this.#poolSize,
      connectionTimeoutMillis: this.#attemptMs,
      idleTimeoutMillis: 10_000,
      options: `-c search_path=${this.schema}`,
      types: TYPES,
      application_name: "baton",
      // Idle pooled connections do not keep a finished CLI or hook process alive.
      allowExitOnIdle: true,
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_MS,
      // The server ends what a client gave up on: a statement past the bound, and a transaction
      // left open (a frozen or cut-off client holding row locks) longer than any statement of
      // ours may take to arrive (the largest blob at 1 ms per KiB).
      statement_timeout: statementMs,
      idle_in_transaction_session_timeout: statementMs + CLIENT_GRACE_MS + Math.ceil(this.blobMaxBytes / 1024),
      // Statements sent through the pool itself (the NOTIFY after a commit).
      query_timeout: statementMs + CLIENT_GRACE_MS,
    });
    // An idle client whose server went away reports here; the pool drops it and the next
    // transaction connects afresh (a restarted server is picked up without restarting us).
    this.#pool.on("error", () => undefined);
    this.#pool.on("connect", (client) => this.#born.set(client, this.#generation));
  }

  /** The limits on this call: its scope's (withStoreLimits), else this backend's. */
  #callLimits(): StoreCallLimits | undefined {
    return scopedStoreLimits() ?? this.#limits;
  }

  /**
   * One statement on `client`, answered within the statement bound plus a second's grace and
   * 1 ms per KiB it sends, and never past the caller's deadline; else a StoreTimeout (and a
   * statement due after the deadline is not sent). A client whose statement timed out is
   * unusable: its caller destroys it, never returns it to the pool.
   */
  #send: Send = (client, config, bytes = 0) => this.#sendWithin(client, config, this.#statementMs, bytes);

  #sendWithin(client: pg.ClientBase, config: pg.QueryConfig, boundMs: number, bytes = 0): Promise<pg.QueryResult> {
    let ms = boundMs + CLIENT_GRACE_MS + Math.floor(bytes / 1024);
    let limit: TimeLimit = "statement";
    const deadline = this.#callLimits()?.deadline;
    if (deadline !== undefined && deadline - Date.now() < ms) {
      ms = deadline - Date.now();
      limit = "deadline";
      if (ms <= 0) return Promise.reject(new StoreTimeout("statement", 0, "deadline", false));
    }
    return client.query({ ...config, query_timeout: ms } as pg.QueryConfig).catch((err: unknown) => {
      if (!readTimeout(err)) throw err;
      // Close it now: a statement sent after this one (a caller that swallowed the error) fails
      // at once instead of queueing behind an answer that may never come.
      destroySocket(client);
      this.#suspect();
      throw new StoreTimeout("statement", ms, limit, true, { cause: err });
    });
  }

  /** A statement timed out: drop the idle connections made before (when next checked out), and LISTEN again. */
  #suspect(): void {
    this.#generation++;
    if (this.#listenClient && !this.#closing) {
      this.#unlisten();
      // A wait that sleeps meanwhile is woken once LISTEN is back (#listen), to look again.
      if (this.#listeners.size > 0) setTimeout(() => void this.#listen(), 250).unref();
    }
  }

  /**
   * Give a client back to the pool, or end it (`broken`: its connection is unusable). A
   * statement that timed out closed its socket already (#sendWithin).
   */
  #release(client: pg.PoolClient, broken: boolean): void {
    client.release(broken ? true : undefined);
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
    // The connect timeout, or the caller's shorter wait, or its deadline.
    let wait = this.#connectTimeoutMs;
    let limit: TimeLimit = "connect";
    const limits = this.#callLimits();
    if (limits?.connectTimeoutMs !== undefined && limits.connectTimeoutMs < wait) {
      wait = Math.max(0, limits.connectTimeoutMs);
      limit = "caller";
    }
    if (limits?.deadline !== undefined && limits.deadline - Date.now() < wait) {
      wait = Math.max(0, limits.deadline - Date.now());
      limit = "deadline";
    }
    const deadline = Date.now() + wait;
    let refused = 0;
    for (let delay = 25; ; delay = Math.min(delay * 2, 500)) {
      try {
        const client = await this.#checkout(deadline - Date.now(), wait, limit);
        if ((this.#born.get(client) ?? this.#generation) < this.#generation) {
          // Made before a statement timed out: it may hang the same way. Drop it (its server
          // may never answer a goodbye: close the socket), take another.
          this.#release(client, true);
          destroySocket(client);
          continue;
        }
        // A checked-out client whose server dies emits 'error' beside the failed query's own
        // rejection; that rejection is what we report, so the event must not crash the process.
        if (!guarded.has(client)) {
          guarded.add(client);
          client.on("error", () => undefined);
        }
        return client;
      } catch (err) {
        if (err instanceof StoreTimeout) throw mapPgError(err, "connecting to PostgreSQL", this.location);
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
          // The pool's own attempt timed out (a server that takes the connection and never
          // answers): say which limit, as for the caller's.
          const timedOut = err instanceof Error && /due to connection timeout|timeout expired/i.test(err.message);
          throw mapPgError(
            timedOut ? new StoreTimeout("connection", wait, limit, false, { cause: err }) : err,
            "connecting to PostgreSQL",
            this.location,
          );
        }
        await sleep(isRefused ? 50 : delay * (0.5 + Math.random()));
      }
    }
  }

  /**
   * A client from the pool within `ms`: the pool's own attempt is bounded by #attemptMs; a
   * shorter time left is raced, and a client that comes after it is given back.
   */
  #checkout(ms: number, waitMs: number, limit: TimeLimit): Promise<pg.PoolClient> {
    if (ms >= this.#attemptMs) return this.#pool.connect();
    if (ms <= 0) return Promise.reject(new StoreTimeout("connection", waitMs, limit, false));
    const attempt = this.#pool.connect();
    return new Promise<pg.PoolClient>((resolve, reject) => {
      let late = false;
      const timer = setTimeout(() => {
        late = true;
        reject(new StoreTimeout("connection", waitMs, limit, false));
      }, ms);
      attempt.then(
        (client) => {
          clearTimeout(timer);
          if (late) client.release();
          else resolve(client);
        },
        (err: unknown) => {
          clearTimeout(timer);
          reject(err);
        },
      );
    });
  }

  async transaction<T>(mode: TxMode, fn: (tx: StoreTx) => Promise<T>, opts?: TxOptions): Promise<T> {
    // One statement needs no BEGIN/COMMIT: it commits by itself, in one round trip instead of
    // three. Relaxed durability would need SET LOCAL, hence a transaction block: a lone statement
    // commits fully instead (the contract lets relaxed wait; two round trips more cost more).
    const single = opts?.oneStatement === true;
    for (let attempt = 1; ; attempt++) {
      const client = await this.#connect();
      const ctx = new Ctx(client, mode === "write", single, this.#send);
      const tx = new PgTx(ctx, this.schema);
      let begun = false;
      /** BEGIN was sent: a failure in its own query (the SET LOCAL beside it) may leave an aborted transaction open. */
      let beginSent = false;
      let committing = false;
      try {
        if (single)
          committing = mode === "write"; // the statement is the commit
        else {
          // Relaxed durability for this transaction only (the commit returns before its WAL
          // flush), set in BEGIN's own round trip: a simple query may hold two statements.
          const relaxed = mode === "write" && opts?.durability === "relaxed";
          beginSent = true;
          await this.#send(client, {
            text: mode === "write" ? (relaxed ? "BEGIN; SET LOCAL synchronous_commit = off" : "BEGIN") : "BEGIN READ ONLY",
          });
          begun = true;
        }
        const result = await fn(tx);
        if (single && tx.pendingActions.length > 0)
          throw new BatonError("internal", "a one-statement transaction cannot run beforeCommit actions");
        for (const action of tx.pendingActions.splice(0)) action();
        if (!single) {
          committing = true;
          await this.#send(client, { text: "COMMIT" });
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
        runCommitted(tx.committedActions.splice(0));
        return result;
      } catch (err) {
        // A statement that timed out still occupies its connection: nothing more can go on it.
        const timedOut = err instanceof StoreTimeout;
        let broken = timedOut;
        // Also after a BEGIN whose own query failed: without a transaction ROLLBACK only warns, and
        // with one (BEGIN ran, the statement beside it failed) the pooled connection is freed of it.
        if ((begun || beginSent) && !committing && !timedOut) await this.#send(client, { text: "ROLLBACK" }).catch(() => (broken = true));
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
        // A COMMIT due after the caller's deadline was never sent either: the server rolls the
        // transaction back when its connection (destroyed below) closes.
        const notRun = (single || timedOut) && neverSent(err);
        const uncertain = committing && !notRun && (!single || retriable(err));
        this.#release(client, broken || uncertain || stalePlan || notRun);
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
        // landed, so retry. Not after a timeout: the server that did not answer would be waited
        // for again, the bound each time.
        if (!begun && (!committing || notRun) && retriable(err) && !timedOut && attempt < 5) {
          await sleep(25 * attempt);
          continue;
        }
        if (code !== undefined && SCHEMA_DRIFT.has(code)) {
          const newer = await this.#newerSchema(err);
          if (newer) throw newer;
        }
        if (uncertain && err instanceof StoreTimeout) {
          throw unavailable(
            err,
            `committing to PostgreSQL at ${this.location}: ${single ? "a statement that commits by itself" : "COMMIT"} got no answer within ${err.timeoutMs} ms, so its outcome is unknown; send the same request again with its idempotency key (event id). The server is stopped, frozen, unreachable or overloaded: check it (pg_isready); ${LIMIT_HINT[err.limit]}`,
            { timedOut: err.waited, timeoutMs: err.timeoutMs, limit: err.limit, outcome: "unknown" },
          );
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
      connectionTimeoutMillis: this.#attemptMs,
      // Idle for long stretches: keepalive notices a server gone with the network (then the
      // 'error' below reconnects and wakes every waiter).
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_MS,
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
      await client.query({
        text: `LISTEN ${pg.escapeIdentifier(this.schema)}`,
        query_timeout: this.#statementMs + CLIENT_GRACE_MS,
      } as pg.QueryConfig);
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
    return databaseClock((h) => this.#readServerClock(h), host, opts);
  }

  /**
   * The server's `clock_timestamp()` and when, on `host`, the query that read it was sent and how
   * long it took: timed around the query alone, after the connection is ready (a connect's
   * TLS and login would otherwise count as half the trip). Bounded like every statement.
   */
  async #readServerClock(host: () => Date): Promise<ServerClockReading> {
    const client = await this.#connect();
    let broken = false;
    try {
      const sent = performance.now();
      const hostMs = host().getTime();
      const r = await this.#send(client, { text: "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms" });
      return { serverMs: Number((r.rows[0] as { ms: number | string } | undefined)?.ms), hostMs, tripMs: performance.now() - sent };
    } catch (err) {
      broken = true;
      throw mapPgError(err, "reading the PostgreSQL server's clock", this.location);
    } finally {
      this.#release(client, broken);
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
    // Set when the connection cannot be given back: it failed, or a statement timed out (it
    // still occupies the connection: nothing more is sent on it).
    let broken = false;
    let stuck = false;
    const migrationMs = Math.max(MIGRATION_TIMEOUT_MS, this.#statementMs);
    const send = (text: string, values?: unknown[], long = false) =>
      this.#sendWithin(client, { text, ...(values ? { values } : {}) }, long ? migrationMs : this.#statementMs).catch((err: unknown) => {
        if (err instanceof StoreTimeout) stuck = broken = true;
        throw err;
      });
    try {
      const applied = async (): Promise<Set<number>> => {
        const r = await send(`SELECT version FROM ${pg.escapeIdentifier(this.schema)}.baton_migrations`).catch((err: { code?: string }) => {
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
      // A migration may rebuild a large table, and waits for another host's: the migration
      // bound on this connection while it migrates.
      await send(`SET statement_timeout = ${migrationMs}`);
      // Serialise every opener of this project (other processes, other hosts) while migrating.
      await send("SELECT pg_advisory_lock(hashtextextended($1, 0))", [`baton-migrate:${this.schema}`], true);
      const done: { version: number; name: string }[] = [];
      try {
        await send(`CREATE SCHEMA IF NOT EXISTS ${pg.escapeIdentifier(this.schema)}`, undefined, true);
        await send(
          "CREATE TABLE IF NOT EXISTS baton_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at text NOT NULL)",
          undefined,
          true,
        );
        for (const m of pending(await applied())) {
          await send("BEGIN");
          try {
            await send("INSERT INTO baton_migrations (version, name, applied_at) VALUES ($1, $2, $3)", [
              m.version,
              m.name,
              new Date().toISOString(),
            ]);
            await send(m.sql, undefined, true);
            await send("COMMIT", undefined, true);
          } catch (err) {
            if (!(err instanceof StoreTimeout)) await send("ROLLBACK").catch(() => undefined);
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
        // Then the bound again (RESET: the connection's own). A connection that cannot say so is
        // closed, which also ends the session's lock.
        if (stuck) broken = true;
        else {
          await send("SELECT pg_advisory_unlock(hashtextextended($1, 0))", [`baton-migrate:${this.schema}`]).catch(() => (broken = true));
          await send("RESET statement_timeout").catch(() => (broken = true));
        }
      }
      return { from, to: latest, applied: done };
    } catch (err) {
      broken = broken || retriable(err);
      throw err;
    } finally {
      this.#release(client, broken);
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

/**
 * Composition: `openBaton()` finds the workspace, picks the store, and wires the services
 * behind the public API (src/api.ts, implemented by src/baton.ts). Services that only some
 * commands need are loaded on first use, so `baton status` and the agent hooks never compile
 * checkpoints, lessons or the ledger unless they use them (docs/benchmarks.md, "hooks").
 */

import type { Baton, OpenBatonOptions, PostgresStoreOptions, SqliteStoreOptions, Store, StoreInfo } from "./api.js";
import type { Backend } from "./backend/contract.js";
import { createBaton } from "./baton.js";
import { BatonError } from "./errors.js";
import { loadPostgres } from "./pg-loader.js";
import { hostFacts, withHostId } from "./platform/process-facts.js";
import { describeStore, resolveStore } from "./platform/store-config.js";
import type { StoreCallLimits } from "./platform/store-limits.js";
import { resolveWorkspace } from "./platform/workspace.js";
import { Services } from "./service-set.js";

export { type Checkpointing, type Operations, Services } from "./service-set.js";

const SERVICES = new WeakMap<Baton, Services>();

/** The services behind an open Baton: for tests, benchmarks and the library's own wiring; not public API. */
export function servicesOf(baton: Baton): Services {
  const s = SERVICES.get(baton);
  if (!s) throw new BatonError("bad_input", "not a Baton opened by openBaton()");
  return s;
}

function envMs(name: string): number | undefined {
  const v = process.env[name];
  if (v === undefined || v.trim() === "") return undefined;
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 0) throw new BatonError("bad_input", `${name}=${v} is not a whole number ≥ 0`);
  return n;
}

const SQLITE_SYNCHRONOUS = { full: "FULL", relaxed: "NORMAL", none: "OFF" } as const;

/** `openBaton`'s options with a backend given directly: tests wrap one to inject faults. Not public. */
export interface InternalOpenOptions extends OpenBatonOptions {
  backend?: Backend;
  /** Limits on every call to a server store (a hook process's deadline: platform/store-limits.ts). */
  storeLimits?: StoreCallLimits;
}

/** A backend as the opaque store handle the public API hands out. */
function asStore(backend: Backend): Store {
  return backend as unknown as Store;
}

/** Open an embedded store on a file of your choosing (the driver is loaded by this call). */
export async function openSqliteStore(opts: SqliteStoreOptions): Promise<Store> {
  const { SqliteBackend } = await import("./backend/sqlite/sqlite-backend.js");
  return asStore(
    new SqliteBackend({
      path: opts.path,
      ...(opts.durability ? { synchronous: SQLITE_SYNCHRONOUS[opts.durability] } : {}),
      ...(opts.busyTimeoutMs !== undefined ? { busyTimeoutMs: opts.busyTimeoutMs } : {}),
    }),
  );
}

/** Open a project on a PostgreSQL server (the `pg` driver is loaded by this call), migrating its schema. */
export async function openPostgresStore(opts: PostgresStoreOptions): Promise<Store> {
  const { PostgresBackend } = await loadPostgres();
  return asStore(await PostgresBackend.open(opts));
}

/** Open a workspace (creating `.baton/` unless `create: false`) on the store it is configured for. */
/**
 * A PostgreSQL store's backend with the limits the caller and the environment set
 * (`BATON_STORE_TIMEOUT_MS`, `BATON_STORE_STATEMENT_TIMEOUT_MS`, `BATON_STORE_BLOB_MAX_BYTES`):
 * for a workspace configured for one, and for `baton init --store`'s first connection. The
 * driver is loaded only here, so the SQLite path never pays for it.
 */
export async function openPostgresBackend(
  url: string,
  project: string,
  opts: Pick<InternalOpenOptions, "storeTimeoutMs" | "storeStatementTimeoutMs" | "storeLimits"> = {},
): Promise<Backend> {
  const wait = opts.storeTimeoutMs ?? envMs("BATON_STORE_TIMEOUT_MS");
  const blobMax = envMs("BATON_STORE_BLOB_MAX_BYTES");
  const statementMs = opts.storeStatementTimeoutMs ?? envMs("BATON_STORE_STATEMENT_TIMEOUT_MS");
  if (statementMs === 0)
    throw new BatonError("bad_input", "the statement timeout (storeStatementTimeoutMs, BATON_STORE_STATEMENT_TIMEOUT_MS) must be ≥ 1 ms");
  const { PostgresBackend } = await loadPostgres();
  return PostgresBackend.open({
    url,
    project,
    ...(wait !== undefined ? { connectTimeoutMs: wait } : {}),
    ...(blobMax !== undefined ? { blobMaxBytes: blobMax } : {}),
    ...(statementMs !== undefined ? { statementTimeoutMs: statementMs } : {}),
    ...(opts.storeLimits ? { limits: opts.storeLimits } : {}),
  });
}

/** Every option openBaton knows: the compiler keeps this complete, and a caller's typo is refused. */
const OPEN_OPTIONS = {
  root: true,
  cwd: true,
  create: true,
  durability: true,
  busyTimeoutMs: true,
  storeTimeoutMs: true,
  storeStatementTimeoutMs: true,
  store: true,
  now: true,
  maxAttempts: true,
  defaultLeaseMs: true,
  checkpoints: true,
  processFacts: true,
  hostId: true,
  ledger: true,
  backend: true,
  storeLimits: true,
} as const satisfies Record<keyof InternalOpenOptions, true>;

export async function openBaton(opts: InternalOpenOptions = {}): Promise<Baton> {
  // A JavaScript caller's misspelt or removed option would otherwise be ignored silently.
  for (const key of Object.keys(opts)) {
    if (Object.hasOwn(OPEN_OPTIONS, key) || (opts as Record<string, unknown>)[key] === undefined) continue;
    throw new BatonError(
      "bad_input",
      `openBaton: unknown option "${key}" (the options are ${Object.keys(OPEN_OPTIONS).join(", ")}; see docs/api.md)`,
    );
  }
  // Checked before anything is opened: a bad host id is the caller's mistake, not the store's.
  const processFacts = opts.hostId !== undefined ? withHostId(opts.processFacts ?? hostFacts, opts.hostId) : opts.processFacts;
  const ws = resolveWorkspace({
    create: opts.create ?? true,
    ...(opts.root ? { root: opts.root } : {}),
    ...(opts.cwd ? { cwd: opts.cwd } : {}),
  });
  let backend = opts.backend ?? (opts.store as unknown as Backend | undefined);
  let store: StoreInfo = { kind: backend?.kind ?? "sqlite", location: backend ? "(given by the caller)" : ws.dbPath, source: "caller" };
  const choice = backend ? undefined : resolveStore(ws.dir);
  if (choice?.kind === "postgres") {
    backend = await openPostgresBackend(choice.url, choice.project, opts);
    store = describeStore(choice, ws.dbPath);
  } else if (!backend) {
    store = { kind: "sqlite", location: ws.dbPath, source: "default" };
    const { SqliteBackend } = await import("./backend/sqlite/sqlite-backend.js");
    backend = new SqliteBackend({
      path: ws.dbPath,
      ...(opts.durability ? { synchronous: SQLITE_SYNCHRONOUS[opts.durability] } : {}),
      ...(opts.busyTimeoutMs !== undefined ? { busyTimeoutMs: opts.busyTimeoutMs } : {}),
    });
  }
  if (backend.migration) store = { ...store, migration: backend.migration };
  // A clock given by the caller is used as it is (tests); else the store's clock, which on a
  // store shared by hosts is the database's, so hosts with skewed clocks agree on expiry.
  let now = opts.now ?? (() => new Date());
  if (!opts.now && backend.clock) {
    try {
      now = await backend.clock(() => new Date(), { resync: true });
    } catch (err) {
      await backend.close();
      throw err;
    }
  }
  const services = new Services(ws, backend, store, now, {
    ...(opts.maxAttempts !== undefined ? { maxAttempts: opts.maxAttempts } : {}),
    ...(opts.defaultLeaseMs !== undefined ? { defaultLeaseMs: opts.defaultLeaseMs } : {}),
    ...(opts.checkpoints ? { checkpoints: opts.checkpoints } : {}),
    ...(opts.durability ? { durability: opts.durability } : {}),
    ...(processFacts ? { processFacts } : {}),
    ...(opts.ledger ? { ledger: opts.ledger } : {}),
  });
  const baton = createBaton(services);
  SERVICES.set(baton, services);
  return baton;
}

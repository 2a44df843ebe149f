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
import { hostFacts, type ProcessFacts, withHostId } from "./platform/process-facts.js";
import { describeStore, resolveStore } from "./platform/store-config.js";
import type { StoreCallLimits } from "./platform/store-limits.js";
import { resolveWorkspace, type Workspace } from "./platform/workspace.js";
import { LaneService } from "./services/agents/lanes.js";
import type { SpiralService } from "./services/agents/spiral.js";
import { Journal } from "./services/journal/journal.js";
import { JournalWatcher } from "./services/journal/watch.js";
import { LedgerHealthTracker } from "./services/ledger/health.js";
import type { LedgerOptions, LedgerService } from "./services/ledger/ledger.js";
import type { LessonService } from "./services/lessons/lessons.js";
import { FlowRegistry } from "./services/session/flows.js";
import type { RunService } from "./services/session/runs.js";
import { StatusService } from "./services/session/status.js";
import type { TargetService } from "./services/session/targets.js";
import type { RunWatcher } from "./services/session/watch-run.js";
import type { ArtifactService } from "./services/time-travel/artifacts.js";
import type { CheckpointOptions, CheckpointService } from "./services/time-travel/checkpoints.js";
import type { RollbackService } from "./services/time-travel/rollback.js";
import type { LockService } from "./services/work/locks.js";
import { Queue } from "./services/work/queue.js";

export interface Checkpointing {
  cps: CheckpointService;
  rollback: RollbackService;
  artifacts: ArtifactService;
}

export interface Operations {
  locks: LockService;
  targets: TargetService;
  watcher: RunWatcher;
}

type ServiceOptions = Pick<OpenBatonOptions, "maxAttempts" | "defaultLeaseMs" | "durability" | "processFacts"> & {
  checkpoints?: CheckpointOptions;
  ledger?: LedgerOptions;
};

/**
 * The services of one open workspace. Internal: the public API is src/api.ts; tests and
 * benchmarks reach these through `servicesOf(baton)`.
 */
export class Services {
  readonly flows: FlowRegistry;
  readonly journal: Journal;
  readonly queue: Queue;
  readonly lanes: LaneService;
  readonly status: StatusService;
  readonly watcher: JournalWatcher;
  readonly ledgerHealth: LedgerHealthTracker;
  readonly processFacts: ProcessFacts | undefined;
  readonly #checkpointOpts: CheckpointOptions;
  readonly #ledgerOpts: LedgerOptions;
  #checkpointing: Promise<Checkpointing> | undefined;
  #learning: Promise<LessonService> | undefined;
  #spiraling: Promise<SpiralService> | undefined;
  #running: Promise<RunService> | undefined;
  #operating: Promise<Operations> | undefined;
  #ledger: Promise<LedgerService> | undefined;
  /** The ledger service once loaded, so a record after the first costs no promise hop. */
  ledgerLoaded: LedgerService | undefined;
  #closing: Promise<void> | undefined;

  constructor(
    readonly workspace: Workspace,
    readonly backend: Backend,
    readonly store: StoreInfo,
    readonly now: () => Date,
    opts: ServiceOptions = {},
  ) {
    this.processFacts = opts.processFacts;
    this.#ledgerOpts = opts.ledger ?? {};
    // Blob files and restored files are fsynced unless durability is "none": under "relaxed" a
    // later full commit can make a row durable that names a blob, which must be on disk by then.
    this.#checkpointOpts = { durable: (opts.durability ?? "full") !== "none", ...opts.checkpoints };
    this.ledgerHealth = new LedgerHealthTracker(workspace.dir, now);
    this.flows = new FlowRegistry(workspace.flowsDir);
    this.journal = new Journal(backend, this.flows, { now });
    this.queue = new Queue(backend, this.journal, {
      now,
      ...(opts.maxAttempts !== undefined ? { maxAttempts: opts.maxAttempts } : {}),
      ...(opts.defaultLeaseMs !== undefined ? { defaultLeaseMs: opts.defaultLeaseMs } : {}),
    });
    // Registered before anything appends: every turn's files reach the lane writes (services/agents/lanes.ts).
    this.lanes = new LaneService(backend, this.journal);
    this.status = new StatusService(this.journal, this.queue, workspace.root, now, backend, opts.processFacts, this.lanes);
    this.watcher = new JournalWatcher(backend);
  }

  get root(): string {
    return this.workspace.root;
  }

  /** Checkpoints, rollback and artifacts. */
  checkpointing(): Promise<Checkpointing> {
    this.#checkpointing ??= (async () => {
      const [{ CheckpointService }, { RollbackService }, { ArtifactService }] = await Promise.all([
        import("./services/time-travel/checkpoints.js"),
        import("./services/time-travel/rollback.js"),
        import("./services/time-travel/artifacts.js"),
      ]);
      // A shared store keeps every blob it can take: another host cannot read this one's files.
      const inline =
        this.backend.blobMaxBytes !== undefined && this.#checkpointOpts.inlineMaxBytes === undefined
          ? { inlineMaxBytes: this.backend.blobMaxBytes }
          : {};
      const facts = this.processFacts;
      const cps = new CheckpointService(this.backend, this.root, this.workspace.dir, {
        ...this.#checkpointOpts,
        ...inline,
        now: this.now,
        // Injected facts name a pretend host: its machine is theirs to say (none: the host name decides).
        ...(facts ? { host: () => facts.host(), machine: () => facts.machine?.() } : {}),
      });
      return {
        cps,
        rollback: new RollbackService(this.backend, this.journal, cps, { durable: this.#checkpointOpts.durable ?? true, now: this.now }),
        artifacts: new ArtifactService(this.backend, this.journal, cps, this.now),
      };
    })();
    return this.#checkpointing;
  }

  learning(): Promise<LessonService> {
    this.#learning ??= import("./services/lessons/lessons.js").then(
      (l) => new l.LessonService(this.backend, this.journal, this.root, this.now, undefined, this.processFacts),
    );
    return this.#learning;
  }

  // Apart from the lessons: an agent hook records a turn after every tool call, and loading the
  // lessons code with it cost ~1.3 ms per hook process (docs/benchmarks.md, "hooks").
  spiral(): Promise<SpiralService> {
    this.#spiraling ??= import("./services/agents/spiral.js").then(
      (s) => new s.SpiralService(this.journal, this.root, this.workspace.dir, this.now, this.backend),
    );
    return this.#spiraling;
  }

  /** Runs apart from locks and targets: status and every hook ask whether a run crashed. */
  runs(): Promise<RunService> {
    this.#running ??= import("./services/session/runs.js").then(
      (r) => new r.RunService(this.backend, this.journal, this.queue, { now: this.now, ...this.#facts() }),
    );
    return this.#running;
  }

  operations(): Promise<Operations> {
    this.#operating ??= Promise.all([
      import("./services/work/locks.js"),
      import("./services/session/targets.js"),
      import("./services/session/watch-run.js"),
    ]).then(([l, t, w]) => {
      const locks = new l.LockService(this.backend, { now: this.now, ...this.#facts() });
      return {
        locks,
        targets: new t.TargetService(this.journal, this.backend, this.now),
        watcher: new w.RunWatcher(this.backend, this.journal, locks, this.now),
      };
    });
    return this.#operating;
  }

  ledger(): Promise<LedgerService> {
    this.#ledger ??= import("./services/ledger/ledger.js").then((m) => {
      this.ledgerLoaded = new m.LedgerService(this.backend, this.ledgerHealth, this.now, this.#ledgerOpts);
      return this.ledgerLoaded;
    });
    return this.#ledger;
  }

  #facts(): { facts?: ProcessFacts } {
    return this.processFacts ? { facts: this.processFacts } : {};
  }

  /** Write what is queued (ledger records). */
  async flush(): Promise<void> {
    await (this.#ledger ?? Promise.resolve(undefined)).then((l) => l?.flush()).catch(() => undefined);
  }

  /** Ledger records already queued are written first. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= this.flush().then(() => this.backend.close());
    return this.#closing;
  }
}

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

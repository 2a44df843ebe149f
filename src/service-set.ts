/**
 * The services of one open workspace, made on first use: `baton status` and the agent hooks
 * never compile checkpoints, lessons or the ledger unless they use them. openBaton
 * (src/compose.ts) makes one; src/baton.ts answers the public API with it.
 */

import type { OpenBatonOptions, StoreInfo } from "./api.js";
import type { Backend } from "./backend/contract.js";
import type { ProcessFacts } from "./platform/process-facts.js";
import type { Workspace } from "./platform/workspace.js";
import { LaneService } from "./services/agents/lanes.js";
import type { SpiralService } from "./services/agents/spiral.js";
import { FlowRegistry } from "./services/flows.js";
import { Journal } from "./services/journal/journal.js";
import { JournalWatcher } from "./services/journal/watch.js";
import { LedgerHealthTracker } from "./services/ledger/health.js";
import type { LedgerOptions, LedgerService } from "./services/ledger/ledger.js";
import type { LessonService } from "./services/lessons/lessons.js";
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
  /**
   * How the records made on every tool call commit: the ledger's nodes and what the after-tool
   * hook records of a call that already ran (its turn, the files it wrote). `ledger.durability`
   * says; relaxed by default (docs/architecture.md, "SQLite (embedded default)": what waits for the disk).
   */
  readonly perCallDurability: "full" | "relaxed";
  #checkpointing: Promise<Checkpointing> | undefined;
  #learning: Promise<LessonService> | undefined;
  #spiraling: Promise<SpiralService> | undefined;
  /**
   * The spiral service once loaded: a turn recorded after the first asks for its write at once,
   * so it commits with the ledger node queued just before it (one commit, not two).
   */
  spiralLoaded: SpiralService | undefined;
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
    this.perCallDurability = this.#ledgerOpts.durability === "full" ? "full" : "relaxed";
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
    this.#spiraling ??= import("./services/agents/spiral.js").then((s) => {
      this.spiralLoaded = new s.SpiralService(this.journal, this.root, this.workspace.dir, this.now);
      return this.spiralLoaded;
    });
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

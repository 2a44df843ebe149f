/**
 * The public API (src/api.ts) over the services of one workspace (src/compose.ts): each
 * namespace hands its calls to the service that owns them. No logic lives here beyond
 * shaping a facet's event and refusing a printed placeholder as a value.
 */

import type {
  Agents,
  Artifacts,
  Baton,
  Checkpoints,
  Events,
  Facets,
  Flows,
  Health,
  Lanes,
  Ledger,
  Lessons,
  Locks,
  Runs,
  Sessions,
  Targets,
  Turns,
  Work,
} from "./api.js";
import { randomHex } from "./core/canonical.js";
import type { LedgerInput, LedgerNode } from "./core/ledger/nodes.js";
import { loadRedaction } from "./core/redaction/load.js";
import { refusePlaceholder } from "./core/shell.js";
import type { AppendResult, JsonObject } from "./core/types.js";
import { envSettings } from "./env-options.js";
import { badInput } from "./errors.js";
import type { Services } from "./service-set.js";
import { recordFiles } from "./services/files.js";
import { StateFiles } from "./services/session/state-file.js";

export function createBaton(s: Services): Baton {
  const { journal, queue, status } = s;
  const state = new StateFiles(journal, status, s.workspace.dir, s.now);
  const cp = () => s.checkpointing();
  const ops = () => s.operations();

  const sessions: Sessions = {
    start: (input) => journal.startSession(input),
    list: (opts = {}) => journal.listSessions(opts),
    read: (id) => journal.read(id),
    snapshot: async (id) => (await journal.read(id)).snapshot,
    resolve: (id) => journal.resolveSession(id),
    status: (opts = {}) => status.status(opts),
    resume: (id) => status.resume(id),
    async complete(id, opts = {}) {
      const r = await status.complete(id, opts);
      // Artifacts are kept until the session completes; their blobs go now unless still referenced.
      if (!r.alreadyComplete && (await journal.read(id)).snapshot.facets.artifacts?.length) await (await cp()).artifacts.release(id);
      return r;
    },
    async overview(ids) {
      const { sessionOverview } = await import("./services/session/overview.js");
      return sessionOverview(journal, (opts) => status.status(opts), ids);
    },
    async versions(id) {
      const { sessionVersions } = await import("./services/session/overview.js");
      // Namespaces defined below: called only once they all exist.
      return sessionVersions({
        newestLedgerNode: async () => (await s.ledger()).newestId(id),
        checkpoints: async () => (await cp()).cps.pinStates(id),
        work: () => queue.workVersion(id),
      });
    },
    rebuild: (id) => journal.rebuild(id),
    stateMarkdown: async (id) => (await state.render(id)).text,
    writeStateMarkdown: (id) => state.write(id),
    refreshStateMarkdown: (id) => state.refresh(id),
  };

  const events: Events = {
    append: (id, input, opts) => journal.append(id, input, opts),
    appendBatch: (id, inputs, opts) => journal.appendBatch(id, inputs, opts),
    find: (id, eventId) => journal.find(id, eventId),
    list: (id, opts) => journal.events(id, opts),
    async scan(id, opts) {
      const { scanEvents } = await import("./services/session/overview.js");
      return scanEvents(journal, id, opts);
    },
    async *exportJsonl(id) {
      for await (const row of journal.exportRows(id)) yield `${JSON.stringify(row)}\n`;
    },
    watch: (listener) => s.watcher.watch(listener),
    onStoreChange: (listener) => s.backend.onChange(listener),
  };

  const facet = (id: string, type: string, actor: string, data: Record<string, unknown>): Promise<AppendResult> =>
    journal.append(id, { type, actor, data: compact(data) });
  // Every method is async, so bad input rejects rather than throws.
  const facets: Facets = {
    addDecision: (id, d, actor = "agent") => facet(id, "decision:added", actor, { ...d }),
    addBlocker: (id, b, actor = "agent") => facet(id, "blocker:added", actor, { ...b, id: b.id ?? `blk-${randomHex(3)}` }),
    async resolveBlocker(id, blockerId, resolution, actor = "agent") {
      refusePlaceholder("resolution", resolution);
      return facet(id, "blocker:resolved", actor, { id: blockerId, resolution });
    },
    async bypassBlocker(id, blockerId, workaround, actor = "agent") {
      refusePlaceholder("workaround", workaround);
      return facet(id, "blocker:bypassed", actor, { id: blockerId, workaround });
    },
    async setPosition(id, p, actor = "agent") {
      if (Object.values(p).every((v) => v === undefined)) throw badInput("give at least one of phase, plan, task, wave, status");
      return facet(id, "position:set", actor, { ...p });
    },
    setProgress: (id, p, actor = "agent") => facet(id, "progress:set", actor, { ...p }),
    async recordResumeContext(id, r, actor = "agent", opts) {
      const files = recordFiles(s.root, r.files ?? []);
      const data = compact({
        filesModified: files.length ? files : undefined,
        keyImplementations: r.keyImplementations,
        openQuestions: r.openQuestions,
      });
      return journal.append(id, { ...(r.id !== undefined ? { id: r.id } : {}), type: "resume:updated", actor, data }, opts);
    },
    setContext: (id, values, actor = "agent") => journal.append(id, { type: "context:set", actor, data: values }),
  };

  const work: Work = {
    lease: (owner, req) => queue.lease(owner, req),
    waitFor: (owner, req) => queue.waitForWork(owner, req),
    heartbeat: (leaseId, opts) => queue.heartbeat(leaseId, opts),
    ack: (leaseId, result) => queue.ack(leaseId, result),
    nack: (leaseId, opts) => queue.nack(leaseId, opts),
    pending: (id) => queue.pending(id),
    release: (leaseId, opts) => queue.release(leaseId, opts),
    dead: (id) => queue.deadWork(id),
    retry: (itemId) => queue.retryDead(itemId),
  };

  const checkpoints: Checkpoints = {
    create: async (id, input = {}) => (await cp()).cps.create(id, input),
    list: async (id, opts = {}) => (await cp()).cps.list(id, opts),
    get: async (id) => (await cp()).cps.get(id),
    pin: async (id, pinned = true) => (await cp()).cps.pin(id, pinned),
    async diff(fromId, toId) {
      const [{ cps }, { diffCheckpoints }] = await Promise.all([cp(), import("./services/time-travel/checkpoint-diff.js")]);
      return diffCheckpoints(cps, fromId, toId);
    },
    rollback: async (id, input = {}) => (await cp()).rollback.rollback(id, input),
    collectGarbage: async (opts = {}) => (await cp()).cps.collect(opts),
  };

  const artifacts: Artifacts = {
    add: async (id, input) => (await cp()).artifacts.add(id, input),
    list: async (id) => (await cp()).artifacts.list(id),
    get: async (id, idOrName) => (await cp()).artifacts.get(id, idOrName),
  };

  const lessonEdits = () => import("./services/lessons/lesson-edit.js");
  const lessons: Lessons = {
    async add(input) {
      refusePlaceholder("lesson text", input.text);
      return (await s.learning()).add(input);
    },
    list: async (opts = {}) => (await s.learning()).list(opts),
    search: async (intent, opts = {}) => (await s.learning()).search(intent, opts),
    inject: async (intent, opts = {}) => (await s.learning()).inject(intent, opts),
    async remove(id, opts = {}) {
      if (opts.version !== undefined) return (await s.learning()).removeAt(id, opts.version);
      return (await s.learning()).remove(id);
    },
    edit: async (id, version, change) => (await s.learning()).edit(id, version, change),
    async versions() {
      const [{ lessonVersions }, { text }] = await Promise.all([lessonEdits(), lessons.file()]);
      return lessonVersions(text);
    },
    async file() {
      const { lessonsPath, readLessonsText } = await import("./services/lessons/lessons-file.js");
      const file = lessonsPath(s.root);
      return { file, text: readLessonsText(file) };
    },
    check: async () => (await s.learning()).check(),
  };

  const turns: Turns = {
    record(id, turn, opts) {
      const loaded = s.spiralLoaded;
      return loaded ? loaded.record(id, turn, opts) : s.spiral().then((svc) => svc.record(id, turn, opts));
    },
    async answerSpiralPause(id, answer) {
      const { answerSpiralPause } = await import("./services/agents/spiral-answer.js");
      return answerSpiralPause(
        { journal, rollback: (sid, to, lane) => checkpoints.rollback(sid, { to, actor: "user", ...(lane !== undefined ? { lane } : {}) }) },
        id,
        answer,
      );
    },
    unpause: async (id, opts = {}) => (await s.spiral()).unpause(id, opts),
  };

  const failed = async (err: unknown): Promise<undefined> => {
    // The ledger's own module did not load: the redaction engine may not have been loaded either.
    const redaction = await loadRedaction().catch(() => undefined);
    s.ledgerHealth.recordFailure(err, redaction?.redactText);
    return undefined;
  };
  const ledger: Ledger = {
    record(id: string, input: LedgerInput): Promise<LedgerNode | undefined> {
      try {
        const loaded = s.ledgerLoaded;
        if (loaded) return loaded.record(id, input);
        return s.ledger().then((svc) => svc.record(id, input), failed);
      } catch (err) {
        return failed(err);
      }
    },
    list: async (id, opts = {}) => (await s.ledger()).list(id, opts),
    node: async (nodeId) => (await s.ledger()).get(nodeId),
    async *export(opts = {}) {
      const svc = await s.ledger();
      if (opts.format === "otlp") for await (const r of svc.otlpRequests(opts.sessionId)) yield `${JSON.stringify(r)}\n`;
      else for await (const n of svc.nodes(opts.sessionId)) yield `${JSON.stringify(n)}\n`;
    },
    sendOtlp: async (opts) => (await s.ledger()).sendOtlp(opts),
    health: () => s.ledgerHealth.health(),
  };

  const runs: Runs = {
    start: async (id, r) => (await s.runs()).start(id, r),
    heartbeat: async (id, runId, opts = {}) => (await s.runs()).heartbeat(id, runId, opts),
    end: async (id, runId, r = {}, actor = "agent") => (await s.runs()).end(id, runId, r, actor),
    detectCrashed: async (opts = {}) => (await s.runs()).detectCrashed(opts),
  };

  const locks: Locks = {
    acquire: async (name, opts = {}) => (await ops()).locks.acquire(name, opts),
    heartbeat: async (name, epoch, opts = {}) => (await ops()).locks.heartbeat(name, epoch, opts),
    release: async (name, epoch) => (await ops()).locks.release(name, epoch),
    epochHeldBy: async (name, pid) => (await ops()).locks.epochHeldBy(name, pid),
    inspect: async (name) => (await ops()).locks.inspect(name),
    list: async () => (await ops()).locks.list(),
    append: async (name, epoch, id, input) =>
      (await ops()).locks.withLock(name, epoch, async (tx) => (await journal.appendInTx(tx, id, [input]))[0] as AppendResult),
  };

  const targets: Targets = {
    set: async (id, t, actor = "agent") => (await ops()).targets.set(id, t, actor),
    get: async (id) => (await ops()).targets.get(id),
    clear: async (id, reason, actor = "agent") => (await ops()).targets.clear(id, reason, actor),
    resolve: async (id, observed, opts = {}) => (await ops()).targets.resolve(id, observed, opts),
    watchTick: async (id) => (await ops()).watcher.tick(id),
    watchRun: async (id, opts = {}) => (await ops()).watcher.follow(id, opts),
  };

  const flows: Flows = {
    names: () => s.flows.names(),
    get: (name) => s.flows.get(name),
    reports: () => s.flows.reports(),
  };

  const health: Health = {
    async doctor(opts = {}) {
      const [{ runDoctor }, o, r] = await Promise.all([import("./services/doctor/doctor.js"), ops(), s.runs()]);
      return runDoctor(
        {
          backend: s.backend,
          journal,
          queue,
          locks: o.locks,
          runs: r,
          describe: (id) => status.describeSession(id),
          root: s.root,
          batonDir: s.workspace.dir,
          now: s.now,
          collectGarbage: () => checkpoints.collectGarbage(),
          ledgerHealth: async () => s.ledgerHealth.health(),
          treeSkips: async () => (await cp()).cps.treeScan().skipped,
          envSettings: () => envSettings(),
          checkpointFacts: async () => (await cp()).cps,
          wouldChange: async (id, to, lane) => (await cp()).rollback.wouldChange(id, to, lane !== undefined ? { lane } : {}),
        },
        opts,
      );
    },
  };

  // The use cases of agent hooks are built over this API itself (services/agents/hooks.ts).
  const agents: Agents = {
    async handle(event, opts = {}) {
      const { handleAgentEvent } = await import("./services/agents/hooks.js");
      // An after-tool hook records a ledger node and a turn: with their services loaded first,
      // their writes (and the files') are asked for at once and commit together (agents/tools.ts).
      // A failure to load either is the record's own to report (ledger health, the hook log).
      if (event.kind === "after_tool") await Promise.all([s.spiral(), s.ledger()]).catch(() => undefined);
      return handleAgentEvent(baton, event, opts, s.perCallDurability);
    },
  };

  const lanes: Lanes = {
    async list(id) {
      const snap = (await journal.read(id)).snapshot;
      return s.lanes.views(snap, s.now().getTime());
    },
    async claimsOn(id, lane, paths, known) {
      const snap = known?.sessionId === id ? known : (await journal.read(id)).snapshot;
      return s.lanes.claimsOn(snap, lane, paths, s.now().getTime());
    },
    async claimsOfOthers(id, lane) {
      const snap = (await journal.read(id)).snapshot;
      return s.lanes.claimsOfOthers(snap, lane, s.now().getTime());
    },
  };

  const baton: Baton = Object.freeze({
    root: s.root,
    workspace: Object.freeze({ root: s.workspace.root, dir: s.workspace.dir }),
    store: s.store,
    sessions,
    events,
    facets,
    work,
    checkpoints,
    artifacts,
    lessons,
    turns,
    ledger,
    runs,
    locks,
    targets,
    flows,
    health,
    agents,
    lanes,
    now: () => s.now(),
    flush: () => s.flush(),
    close: () => s.close(),
  });
  return baton;
}

function compact(o: Record<string, unknown>): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v as JsonObject[string];
  return out;
}

/**
 * The journal: sessions, append-only events, and the snapshot cache.
 *
 * Every append is one write transaction: validate → idempotency → flow transition → event +
 * snapshot + session row. Reads fold any events newer than the snapshot and never write;
 * only `rebuild` repairs a snapshot, and records that it did.
 *
 * Longer than ~400 lines on purpose: the append path and the per-process fold cache it keeps
 * (and must keep consistent with every transaction) are one unit. Row parsing and folding are
 * in rows.ts, repairs and export in repair.ts.
 */
import type { Backend, EventRow, SessionMove, SessionRow, SnapshotRow, StoreTx, TxOptions } from "../../backend/contract.js";
import { sessionKey } from "../../backend/contract.js";
import { copyJson, SESSION_ID, timeOrderedId } from "../../core/canonical.js";
import { isFacetEvent, validateFacetData } from "../../core/facets.js";
import { decide, type FlowDefinition, flowEvents, isTerminal, type TransitionDecision } from "../../core/flows/flow.js";
import { loadRedaction, redactionLoaded } from "../../core/redaction/load.js";
import { emptySnapshot, foldEvent } from "../../core/session/fold.js";
import { pathProblem } from "../../core/time-travel/paths.js";
import type {
  AppendOptions,
  AppendResult,
  Diagnostic,
  EventInput,
  EventOutcome,
  JournalEvent,
  JsonObject,
  Snapshot,
} from "../../core/types.js";
import { BatonError, badInput, isBatonError } from "../../errors.js";
import type { FlowRegistry } from "../flows.js";
import { exportRows, type RebuildResult, rebuildSession, type SnapshotCheck, verifySnapshot } from "./repair.js";
import {
  bodyHash,
  type Folded,
  findPrior,
  generateSessionId,
  keptIsCurrent,
  loadFolded,
  loadSnapshot,
  normalise,
  notFound,
  parseRow,
  snapshotRow,
  storedBodyHash,
} from "./rows.js";

const NONE: ReadonlySet<string> = new Set();

/**
 * The stored snapshot is written when the phase changes, and otherwise once every this many
 * events; reads fold the events after it, so a lagging snapshot costs a read a few folds and
 * saves every append a snapshot write (measured in docs/benchmarks.md).
 */
export const SNAPSHOT_EVERY = 64;
/** Sessions whose folded snapshot this process keeps between its own appends. */
const CACHED_SESSIONS = 64;

export interface StartSessionInput {
  flow: string;
  id?: string;
  title?: string;
  /** ISO-8601 deadline (external runs: a timeout before it is transient). */
  deadline?: string;
  actor?: string;
}

/** A read of one session: the snapshot plus diagnostics that reading noticed. */
export interface SessionView {
  session: SessionRow;
  flow: FlowDefinition;
  snapshot: Snapshot;
  /** Diagnostics from the read itself (e.g. a corrupt snapshot); never persisted by a read. */
  readDiagnostics: Diagnostic[];
}

export interface JournalOptions {
  now?: () => Date;
  /** Deliveries before a work item is dead-lettered. Default 5. */
  maxAttempts?: number;
}

/** Called for each appended event, inside the append's transaction (the queue's hook). */
export type AppendHook = (tx: StoreTx, flow: FlowDefinition, event: JournalEvent, outcome: EventOutcome) => Promise<void>;
/** Whether a hook would write anything for this event (pure: decided before the transaction). */
export type AppendHookActs = (flow: FlowDefinition, event: JournalEvent, outcome: EventOutcome) => boolean;

/** The events to append, decided on the session's state inside the append's write transaction. */
export type Decide = (snap: Readonly<Snapshot>, tx: StoreTx) => Promise<readonly EventInput[]>;

/** An append folded from a state this process kept: what to store, and what each input became. */
interface Fold {
  rows: EventRow[];
  results: AppendResult[];
  session: SessionMove;
  /** The snapshot to store with it, when it is due (phase changed, none stored, or SNAPSHOT_EVERY behind). */
  snapshot?: SnapshotRow;
}

export class Journal {
  readonly #backend: Backend;
  readonly #flows: FlowRegistry;
  readonly #now: () => Date;

  readonly #hooks: { run: AppendHook; acts: AppendHookActs }[] = [];
  /** The last append time as ISO text, by its milliseconds: Date's toISOString costs ~0.5 µs, and appends come in bursts. */
  #atMs = Number.NaN;
  #atText = "";
  /**
   * The folded snapshot of recently appended sessions. An entry is taken out while a write
   * transaction uses it and put back only after that transaction commits, so a rollback can
   * never leave a folded-but-uncommitted state behind; it is used only when its lastSeq still
   * equals the session's (no other process appended since).
   */
  readonly #folded = new Map<string, Folded>();
  /**
   * Per session, the request last queued, when the backend does not run requests in order
   * itself (`serialWrites` false; whether a commit can end unknown is `uncertainCommits`): one caller's appends and reads of a session keep the order
   * they were asked in (a read sees exactly the appends asked for before it).
   */
  readonly #order = new Map<string, Promise<unknown>>();

  constructor(backend: Backend, flows: FlowRegistry, opts: JournalOptions = {}) {
    this.#backend = backend;
    this.#flows = flows;
    this.#now = opts.now ?? (() => new Date());
  }

  /**
   * Run `hook` for every appended event inside the append's own transaction, so what it
   * writes (the queue's work items) commits or rolls back with the event. `acts` says, before
   * the transaction, whether it will write anything for an event (default: always): an append
   * no hook acts on can be a single statement, and `hook` runs only for the events it acts on.
   */
  addAppendHook(hook: AppendHook, acts: AppendHookActs = () => true): void {
    this.#hooks.push({ run: hook, acts });
  }

  /**
   * Append inside a transaction another service opened (the queue's ack journals its result so).
   * The folded state is kept once that transaction commits: the session's next read or append
   * in this process starts from it.
   */
  async appendInTx(
    tx: StoreTx,
    sessionId: string,
    inputs: readonly EventInput[],
    check?: (snap: Readonly<Snapshot>) => void,
  ): Promise<AppendResult[]> {
    const { results, folded } = await this.#appendIn(tx, sessionId, inputs, NONE, check);
    tx.afterCommit(() => {
      // A state this process kept since (another transaction that committed first) is not undone.
      const kept = this.#folded.get(sessionId);
      if (kept === undefined || kept.snap.lastSeq < folded.snap.lastSeq) this.#remember(sessionId, folded);
    });
    return results;
  }

  async #appendIn(
    tx: StoreTx,
    sessionId: string,
    given: readonly EventInput[] | Decide,
    fresh: ReadonlySet<string> = NONE,
    check?: (snap: Readonly<Snapshot>) => void,
  ): Promise<{ results: AppendResult[]; folded: Folded }> {
    let cached = this.#folded.get(sessionId);
    this.#folded.delete(sessionId);
    // An engine that runs one write transaction at a time (SQLite) folds from the state this
    // process kept and stores by a compare-and-set (insertEventsAt): the session is not read
    // first, a statement fewer per append. A state that is no longer the journal's changes
    // nothing, and the append below reads the session and folds again.
    const inputs = typeof given === "function" ? undefined : given;
    if (
      cached &&
      inputs &&
      !check &&
      this.#backend.capabilities.serialWrites &&
      !inputs.some((i) => i.id !== undefined && !fresh.has(i.id))
    ) {
      const stored = await this.#storeAt(tx, sessionId, cached, inputs, fresh);
      if (stored) return stored;
      cached = undefined; // folded into: not the journal's state any more
    }
    // The next seq is lastSeq + 1: writers of one session take turns on its row, which a write
    // transaction's getSession holds until it ends (other sessions run alongside). Checkpoints
    // and ledger nodes, whose seqs are not the journal's, take turns on the session's lockKey.
    const session = await tx.getSession(sessionId);
    if (!session) throw notFound(sessionId);
    const flow = await this.#flows.get(session.flow);
    const folded =
      cached && cached.snap.lastSeq === session.lastSeq && cached.snap.flow === session.flow ? cached : await loadFolded(tx, session, flow);
    folded.row = { phase: session.phase, status: session.status };
    // A refusal appends nothing. The state is not kept: read inside a transaction that has not
    // committed (with group commit, it holds other members' events), it may never be the journal's.
    check?.(folded.snap);
    const decided = inputs ?? (await (given as Decide)(folded.snap, tx));
    const results = await this.#appendInTx(tx, session, flow, folded, decided, fresh);
    return { results, folded };
  }

  #remember(sessionId: string, folded: Folded): void {
    this.#folded.delete(sessionId);
    this.#folded.set(sessionId, folded);
    if (this.#folded.size > CACHED_SESSIONS) this.#folded.delete(this.#folded.keys().next().value as string);
  }

  async startSession(input: StartSessionInput): Promise<Snapshot> {
    const flow = await this.#flows.get(input.flow);
    const id = input.id ?? generateSessionId(flow.name);
    if (!SESSION_ID.test(id))
      throw badInput(`session id "${id}" is invalid: use 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit`);
    if (input.title !== undefined && typeof input.title !== "string") throw badInput("a session's title must be a string");
    if (input.deadline !== undefined && Number.isNaN(Date.parse(input.deadline))) {
      throw badInput(`deadline "${input.deadline}" is not a date; use ISO-8601, e.g. 2026-01-31T18:00:00Z`);
    }
    const data: JsonObject = { flow: flow.name };
    // The title goes into the session's row as well as its first event: redacted for both.
    if (input.title !== undefined) data.title = await redactedTitle(input.title);
    if (input.deadline !== undefined) data.deadline = new Date(input.deadline).toISOString();
    return this.#backend
      .transaction("write", async (tx) => {
        await tx.lockKey(sessionKey(id));
        if (await tx.getSession(id))
          throw new BatonError("session_exists", `session "${id}" already exists; choose another --id`, { sessionId: id });
        const at = this.#now().toISOString();
        const row: SessionRow = {
          id,
          flow: flow.name,
          title: (data.title as string | undefined) ?? null,
          phase: flow.initial,
          status: "active",
          createdAt: at,
          updatedAt: at,
          lastSeq: 0,
        };
        await tx.insertSession(row);
        const folded: Folded = { snap: emptySnapshot(id, flow, at), storedSeq: 0, row: { phase: row.phase, status: row.status } };
        await this.#appendInTx(tx, row, flow, folded, [{ type: "session:started", actor: input.actor ?? "user", data }]);
        return folded;
      })
      .then((folded) => {
        this.#remember(id, folded);
        return copyJson(folded.snap);
      });
  }

  async listSessions(opts: { includeCompleted?: boolean } = {}): Promise<SessionRow[]> {
    return this.#backend.transaction("read", (tx) => tx.listSessions({ includeCompleted: opts.includeCompleted ?? false }));
  }

  /**
   * The session a command means: the one named, else the single active session. With none or
   * several active, the error lists what exists.
   */
  async resolveSession(sessionId?: string): Promise<string> {
    if (sessionId === "") throw badInput("the session id is empty: give one, or leave it out for the single active session");
    if (sessionId) return sessionId;
    const active = await this.listSessions();
    if (active.length === 1) return (active[0] as SessionRow).id;
    if (active.length === 0) {
      throw new BatonError(
        "not_found",
        "no active session; start one with `baton session start --flow <flow>`, or name one with --session",
        { sessions: [] },
      );
    }
    throw new BatonError(
      "ambiguous_session",
      `${active.length} sessions are active (${active.map((s) => s.id).join(", ")}); name one with --session <id>`,
      { sessions: active.map((s) => ({ sessionId: s.id, flow: s.flow, phase: s.phase, title: s.title })) },
    );
  }

  /** Append one event. See the module comment for the order of checks. */
  async append(sessionId: string, input: EventInput, opts?: AppendOptions): Promise<AppendResult> {
    const [result] = await this.appendBatch(sessionId, [input], opts);
    return result as AppendResult;
  }

  /**
   * Append several events to one session in one transaction: all are stored or none. Bulk
   * ingest pays one commit (one fsync) for the whole batch.
   */
  async appendBatch(sessionId: string, inputs: readonly EventInput[], opts?: AppendOptions): Promise<AppendResult[]> {
    if (inputs.length === 0) return [];
    const txOpts: TxOptions = opts?.durability === "relaxed" ? { durability: "relaxed" } : {};
    // A server store can lose the connection during COMMIT, leaving the outcome unknown. Every
    // event then carries its id from the start (fresh ones are not looked up the first time),
    // and the batch is re-sent once: what did commit comes back as duplicates, nothing twice.
    const remote = this.#backend.capabilities.uncertainCommits;
    const fresh = new Set<string>();
    const sent = remote
      ? inputs.map((i) => {
          if (i.id !== undefined) return i;
          const id = `ev_${timeOrderedId()}`;
          fresh.add(id);
          return { ...i, id };
        })
      : inputs;
    // What the last run of the lost attempt saw before its COMMIT: which caller ids were already
    // in the journal then (real duplicates, whatever the re-send finds).
    let seen: boolean[] | undefined;
    const full = (skip: ReadonlySet<string>) =>
      this.#backend.transaction(
        "write",
        async (tx) => {
          const o = await this.#appendIn(tx, sessionId, sent, skip);
          seen = o.results.map((r) => r.duplicate);
          return o;
        },
        txOpts,
      );
    const attempt = (skip: ReadonlySet<string>) => {
      const kept = this.#keptFor(sessionId, sent, skip);
      if (!kept) return full(skip); // asked at once: a serial engine keeps request order
      return this.#appendCached(sessionId, kept, sent, skip, txOpts, (r) => (seen = r.map((x) => x.duplicate))).then(
        (o) => o ?? full(skip),
      );
    };
    // Both attempts hold one place in the session's order: a read this caller asked for after
    // the append cannot run between the lost attempt and its re-send.
    const outcome = await this.#inOrder(sessionId, async () => {
      try {
        return await attempt(fresh);
      } catch (err) {
        if (!(remote && isBatonError(err, "storage_unavailable") && err.details.outcome === "unknown")) throw err;
        const first = seen;
        let again: Awaited<ReturnType<typeof attempt>>;
        try {
          again = await attempt(new Set());
        } catch (retryErr) {
          // Still unreachable: the first attempt may have committed. Say so, with the ids that
          // make a later re-send store each event at most once.
          throw outcomeUnknown(retryErr, sent);
        }
        asAskedOnce(again.results, first, fresh);
        return again;
      }
    });
    const { results, folded } = outcome;
    this.#remember(sessionId, folded); // committed: the folded state is now the journal's
    return results;
  }

  /**
   * The folded state kept for the session, taken for an append from it (ours while in use; kept
   * again only once committed), when one can be: only where this journal orders a session's
   * requests itself (#inOrder), since an engine that runs transactions in request order (SQLite)
   * must be asked at once, not after a fold, and has no round trips to save; and only when no
   * input has an id that must be looked up in the journal.
   */
  #keptFor(sessionId: string, inputs: readonly EventInput[], fresh: ReadonlySet<string>): Folded | undefined {
    if (this.#backend.capabilities.serialWrites) return undefined;
    const folded = this.#folded.get(sessionId);
    if (!folded || inputs.some((i) => i.id !== undefined && !fresh.has(i.id))) return undefined;
    this.#folded.delete(sessionId);
    return folded;
  }

  /**
   * The append from the folded state this process kept for the session, without reading it
   * first: the events are folded here and stored by a compare-and-set on the session's row
   * (`insertEventsAt`), which lands only if nobody appended since. When no append hook acts on
   * them, that is the whole transaction: one statement. Undefined when the fold refused (on a
   * state that may be old) or the session moved; the caller then appends the full way.
   */
  async #appendCached(
    sessionId: string,
    folded: Folded,
    inputs: readonly EventInput[],
    fresh: ReadonlySet<string>,
    txOpts: TxOptions,
    sending: (results: AppendResult[]) => void,
  ): Promise<{ results: AppendResult[]; folded: Folded } | undefined> {
    const expect = { lastSeq: folded.snap.lastSeq, flow: folded.snap.flow };
    const kept = await this.#foldKept(sessionId, folded, inputs, fresh);
    if (!kept) return undefined;
    const { flow, f } = kept;
    const acts = f.results.some((r) => !r.duplicate && this.#hooks.some((h) => h.acts(flow, r.event, r.outcome)));
    sending(f.results);
    if (!acts) {
      // No hook acted, so no waiter for work depends on it: other processes may hear of it late.
      const stored = await this.#backend.transaction("write", (tx) => tx.insertEventsAt(expect, f.rows, f.session, f.snapshot), {
        ...txOpts,
        oneStatement: true,
        lateNotice: true,
      });
      return stored ? { results: f.results, folded } : undefined;
    }
    return this.#backend.transaction(
      "write",
      async (tx) => {
        // Moved meanwhile: nothing was written, and the full append runs in this transaction.
        if (!(await tx.insertEventsAt(expect, f.rows, f.session, f.snapshot))) return this.#appendIn(tx, sessionId, inputs, fresh);
        await this.#runHooks(tx, flow, f.results);
        return { results: f.results, folded };
      },
      txOpts,
    );
  }

  /**
   * Inside a write transaction: fold `inputs` into the state this process kept and store them
   * only if the session is still at that state (insertEventsAt). Undefined, having written
   * nothing, when the fold refused (on a state that may be old) or the session moved.
   */
  async #storeAt(
    tx: StoreTx,
    sessionId: string,
    folded: Folded,
    inputs: readonly EventInput[],
    fresh: ReadonlySet<string>,
  ): Promise<{ results: AppendResult[]; folded: Folded } | undefined> {
    const expect = { lastSeq: folded.snap.lastSeq, flow: folded.snap.flow };
    const kept = await this.#foldKept(sessionId, folded, inputs, fresh);
    if (!kept || !(await tx.insertEventsAt(expect, kept.f.rows, kept.f.session, kept.f.snapshot))) return undefined;
    await this.#runHooks(tx, kept.flow, kept.f.results);
    return { results: kept.f.results, folded };
  }

  /** `inputs` folded into the state this process kept (mutated); undefined when the fold refused or stores nothing. */
  async #foldKept(
    sessionId: string,
    folded: Folded,
    inputs: readonly EventInput[],
    fresh: ReadonlySet<string>,
  ): Promise<{ flow: FlowDefinition; f: Fold } | undefined> {
    try {
      const flow = await this.#flows.get(folded.snap.flow);
      const f = await this.#fold(sessionId, flow, folded, inputs, fresh);
      return f.rows.length > 0 ? { flow, f } : undefined;
    } catch {
      return undefined; // decided on what this process kept: the full append decides for real
    }
  }

  /**
   * Append the events `decide` makes of the session's state, inside the write transaction that
   * stores them: no other writer can change the state between the decision and the append (two
   * agents' turns judged at once each see the other's). `after` reads what the caller needs of
   * the state the events leave, from the fold the append made: the session is not read again.
   * Both only read the state (it is the journal's own); `after`'s value is copied. Every event
   * `decide` makes carries its id, so where a server store loses the commit the whole decision
   * is taken once more on the state then, and what did commit comes back as duplicates.
   */
  async appendFrom<T>(
    sessionId: string,
    decide: Decide,
    after: (snap: Readonly<Snapshot>, flow: FlowDefinition) => T,
    opts?: AppendOptions,
  ): Promise<{ results: AppendResult[]; after: T }> {
    // The lost attempt's decision and what it saw (which events were already in the journal).
    let decided: readonly EventInput[] | undefined;
    let seen: boolean[] | undefined;
    const once = (how: Decide) =>
      this.#backend.transaction(
        "write",
        async (tx) => {
          const o = await this.#appendIn(tx, sessionId, how);
          seen = o.results.map((r) => r.duplicate);
          return { ...o, after: structuredClone(after(o.folded.snap, await this.#flows.get(o.folded.snap.flow))) };
        },
        opts?.durability === "relaxed" ? { durability: "relaxed" } : {},
      );
    const first: Decide = async (snap, tx) => {
      const inputs = await decide(snap, tx);
      const missing = inputs.findIndex((i) => i.id === undefined);
      if (missing >= 0)
        throw new BatonError("internal", `appendFrom: event ${missing + 1} of the decision has no id; nothing was appended`);
      decided = inputs;
      return inputs;
    };
    const outcome = await this.#inOrder(sessionId, async () => {
      try {
        return await once(first);
      } catch (err) {
        const lost =
          this.#backend.capabilities.uncertainCommits && isBatonError(err, "storage_unavailable") && err.details.outcome === "unknown";
        if (!lost || decided === undefined) throw err;
        // The same events again (their ids make it once): what committed comes back as duplicates.
        const sent = decided;
        const before = seen;
        let again: Awaited<ReturnType<typeof once>>;
        try {
          again = await once(async () => sent);
        } catch (retryErr) {
          throw outcomeUnknown(retryErr, sent);
        }
        asAskedOnce(again.results, before, NONE);
        return again;
      }
    });
    this.#remember(sessionId, outcome.folded); // committed: the folded state is now the journal's
    return { results: outcome.results, after: outcome.after };
  }

  /**
   * Append one event only if `check` accepts the session's state inside the same write
   * transaction (it throws to refuse, and nothing is appended): a decision made on a state
   * read earlier is re-checked where no other writer can change it meanwhile.
   */
  async appendIf(sessionId: string, input: EventInput, check: (snap: Readonly<Snapshot>) => void): Promise<AppendResult> {
    const { results, folded } = await this.#backend.transaction("write", (tx) => this.#appendIn(tx, sessionId, [input], NONE, check));
    this.#remember(sessionId, folded); // committed: the folded state is now the journal's
    return results[0] as AppendResult;
  }

  async #appendInTx(
    tx: StoreTx,
    session: SessionRow,
    flow: FlowDefinition,
    folded: Folded,
    inputs: readonly EventInput[],
    fresh: ReadonlySet<string> = NONE,
  ): Promise<AppendResult[]> {
    const f = await this.#fold(session.id, flow, folded, inputs, fresh, (id) => findPrior(tx, session.id, id));
    if (f.rows.length > 0) {
      await tx.insertEvents(f.rows, f.session);
      await this.#runHooks(tx, flow, f.results);
      if (f.snapshot) await tx.putSnapshot(f.snapshot);
    }
    return f.results;
  }

  async #runHooks(tx: StoreTx, flow: FlowDefinition, results: readonly AppendResult[]): Promise<void> {
    for (const r of results) {
      if (r.duplicate) continue;
      // A hook runs only for the events it acts on: most events cost it no await.
      for (const hook of this.#hooks) if (hook.acts(flow, r.event, r.outcome)) await hook.run(tx, flow, r.event, r.outcome);
    }
  }

  /**
   * Validate and fold `inputs` into `folded` (mutated): the rows to store, each input's result,
   * the session row after them and the snapshot when one is due. A caller id not in `fresh` is
   * looked up with `lookup` (the cached path has none: it never gets such ids).
   */
  async #fold(
    sessionId: string,
    flow: FlowDefinition,
    folded: Folded,
    inputs: readonly EventInput[],
    fresh: ReadonlySet<string>,
    lookup?: (id: string) => Promise<{ row: EventRow; result: AppendResult } | undefined>,
  ): Promise<Fold> {
    const snap = folded.snap;
    const phaseBefore = snap.phase;
    const rowBefore = folded.row;
    const results: AppendResult[] = [];
    const rows: EventRow[] = [];
    const inBatch = new Map<string, { row: EventRow; result: AppendResult }>();
    const now = this.#now();
    const at = this.#iso(now);
    const { redactJson } = redactionLoaded() ?? (await loadRedaction());
    for (const [index, input] of inputs.entries()) {
      const ev = normalise(input, index, inputs.length, redactJson);
      const actor = ev.actor ?? "user";
      const dataText = JSON.stringify(ev.data);
      // A generated id is fresh: only a caller-supplied id can repeat one in this batch or the
      // journal, so only such an event is hashed now (storedBodyHash works out the others').
      const hash = ev.id === undefined ? "" : bodyHash(ev.type, actor, ev.data, ev.revision, dataText);
      const id = ev.id ?? `ev_${timeOrderedId()}`;
      const prior = ev.id === undefined ? undefined : (inBatch.get(id) ?? (fresh.has(id) ? undefined : await lookup?.(id)));
      if (prior) {
        if (storedBodyHash(prior.row) !== hash) {
          throw new BatonError(
            "conflict",
            `event id "${id}" was already appended as seq ${prior.row.seq} with a different body; nothing was appended. Use a new id for a new event`,
            { sessionId, id, seq: prior.row.seq },
          );
        }
        results.push({ ...prior.result, duplicate: true, phase: snap.phase });
        continue;
      }
      const data = ev.data ?? {};
      // Flow events' data is merged into the context too (core/session/fold.ts).
      if (Object.hasOwn(data, "__proto__"))
        throw badInput(`${ev.type}: "__proto__" is not a data key (pick another name)`, { type: ev.type });
      let decision: TransitionDecision | undefined;
      if (isFacetEvent(ev.type)) {
        const problems = validateFacetData(ev.type, data);
        // Recorded files are read by every status: only the workspace's own (core/time-travel/paths.ts).
        if (ev.type === "resume:updated" && Array.isArray(data.filesModified))
          for (const f of data.filesModified as { path?: unknown }[]) {
            const p = pathProblem(f?.path);
            if (p) problems.push(`filesModified: ${JSON.stringify(f?.path)} ${p}; give paths relative to the workspace, inside it`);
          }
        if (problems.length > 0) throw badInput(`${ev.type}: ${problems.join("; ")}`, { type: ev.type, problems });
      } else {
        if (!flowEvents(flow).has(ev.type)) {
          throw badInput(`flow ${flow.name} has no event "${ev.type}"; its events: ${[...flowEvents(flow)].sort().join(", ")}`, {
            type: ev.type,
            flow: flow.name,
          });
        }
        decision = decide(flow, snap, { type: ev.type, data, ...(ev.revision !== undefined ? { revision: ev.revision } : {}) }, now);
        if (decision.kind === "invalid") {
          throw new BatonError("invalid_transition", `${decision.reason}; nothing was appended`, {
            sessionId,
            phase: decision.phase,
            event: ev.type,
            allowed: decision.allowed,
          });
        }
      }
      const seq = snap.lastSeq + 1;
      const event: JournalEvent = {
        sessionId,
        seq,
        id,
        type: ev.type,
        actor,
        data,
        at,
        ...(ev.revision !== undefined ? { revision: ev.revision } : {}),
      };
      // The state this process keeps folds a copy: the caller's data (the event it gets back, the
      // objects it passed in) may change after the append, and a read must not see that.
      const outcome: EventOutcome = foldEvent(flow, snap, { ...event, data: copyJson(data) }, decision);
      const row: EventRow = {
        sessionId,
        seq,
        id,
        type: ev.type,
        actor,
        data: dataText,
        revision: ev.revision ?? null,
        at,
        bodyHash: hash,
        outcome,
      };
      rows.push(row);
      const result: AppendResult = { event, duplicate: false, outcome, phase: snap.phase };
      if (ev.id !== undefined) inBatch.set(id, { row, result });
      results.push(result);
    }
    const f: Fold = {
      rows,
      results,
      session: {
        id: sessionId,
        phase: snap.phase,
        status: isTerminal(flow, snap.phase, snap.deadline, now) ? "completed" : "active",
        updatedAt: at,
        lastSeq: snap.lastSeq,
        ...(rowBefore ? { from: rowBefore } : {}),
      },
    };
    // Once stored, the row is where this fold leaves it (it is written exactly when it moves).
    if (rows.length > 0) folded.row = { phase: f.session.phase, status: f.session.status };
    if (rows.length > 0 && (snap.phase !== phaseBefore || folded.storedSeq === 0 || snap.lastSeq - folded.storedSeq >= SNAPSHOT_EVERY)) {
      f.snapshot = snapshotRow(snap);
      folded.storedSeq = snap.lastSeq;
      folded.stored = f.snapshot;
    }
    return f;
  }

  #iso(d: Date): string {
    const ms = d.getTime();
    if (ms !== this.#atMs) {
      this.#atText = d.toISOString();
      this.#atMs = ms;
    }
    return this.#atText;
  }

  /**
   * Read one session: the snapshot with newer events folded in. Never writes. A session this
   * process read or appended to is read from the state it kept (a copy), once the journal shows
   * nothing newer: the stored snapshot and the events after it are not parsed and folded again.
   */
  async read(sessionId: string): Promise<SessionView> {
    return this.#inOrder(sessionId, () => this.#read(sessionId));
  }

  #read(sessionId: string): Promise<SessionView> {
    return this.#backend.transaction("read", async (tx) => {
      const session = await tx.getSession(sessionId);
      if (!session) throw notFound(sessionId);
      const flow = await this.#flows.get(session.flow);
      const kept = this.#folded.get(sessionId);
      // An append takes the state out while it folds into it and puts it back once committed:
      // still there, at the seq checked, it was not touched meanwhile (the copy is taken at once).
      const current = kept !== undefined && (await keptIsCurrent(tx, session, kept));
      let snapshot: Snapshot;
      let readDiagnostics: Diagnostic[];
      if (current && this.#folded.get(sessionId) === kept && kept.snap.lastSeq === session.lastSeq) {
        snapshot = copyJson(kept.snap);
        readDiagnostics = [];
        this.#remember(sessionId, kept); // used last: kept longest
      } else {
        const loaded = await loadSnapshot(tx, session, flow);
        ({ snapshot, readDiagnostics } = loaded);
        // An active session's fold is kept for this process's next reads and appends (a server
        // answering hooks whose events other processes wrote; a list of finished sessions would
        // only push those out), unless an append of this process moved past it meanwhile (one in
        // flight took its state out and puts its own back once committed).
        const now = this.#folded.get(sessionId);
        if (
          loaded.stored !== undefined &&
          session.status === "active" &&
          (now === undefined || (now === kept && now.snap.lastSeq <= session.lastSeq))
        )
          this.#remember(sessionId, {
            snap: copyJson(snapshot),
            storedSeq: loaded.storedSeq,
            stored: loaded.stored,
            row: { phase: session.phase, status: session.status },
          });
      }
      const stored = await tx.listDiagnostics(sessionId, 20);
      for (const d of stored) readDiagnostics.push({ code: d.code, severity: d.severity, message: d.message, at: d.at });
      return { session, flow, snapshot, readDiagnostics };
    });
  }

  /** Events after `afterSeq`, in order. Unreadable rows are returned as diagnostics. */
  async events(
    sessionId: string,
    opts: { afterSeq?: number; limit?: number } = {},
  ): Promise<{ events: JournalEvent[]; corrupt: Diagnostic[] }> {
    return this.#inOrder(sessionId, () => this.#events(sessionId, opts));
  }

  /** The event appended with id `id`, if any (an idempotency key's first use); unreadable rows count as none. */
  async find(sessionId: string, id: string): Promise<JournalEvent | undefined> {
    return this.#inOrder(sessionId, () =>
      this.#backend.transaction("read", async (tx) => {
        const row = await tx.findEventById(sessionId, id);
        const parsed = row ? parseRow(row) : undefined;
        return parsed && "event" in parsed ? parsed.event : undefined;
      }),
    );
  }

  /** Run `work` after the session's earlier requests settle, where the backend does not order them. */
  #inOrder<T>(sessionId: string, work: () => Promise<T>): Promise<T> {
    if (this.#backend.capabilities.serialWrites) return work();
    const prev = this.#order.get(sessionId) ?? Promise.resolve();
    const next = prev.then(work, work);
    const tail = next.catch(() => undefined);
    this.#order.set(sessionId, tail);
    void tail.then(() => {
      if (this.#order.get(sessionId) === tail) this.#order.delete(sessionId);
    });
    return next;
  }

  #events(sessionId: string, opts: { afterSeq?: number; limit?: number }): Promise<{ events: JournalEvent[]; corrupt: Diagnostic[] }> {
    return this.#backend.transaction("read", async (tx) => {
      if (!(await tx.getSession(sessionId))) throw notFound(sessionId);
      const rows = await tx.readEvents(sessionId, opts.afterSeq ?? 0, opts.limit ?? 1_000);
      const events: JournalEvent[] = [];
      const corrupt: Diagnostic[] = [];
      for (const r of rows) {
        const parsed = parseRow(r);
        if ("problem" in parsed)
          corrupt.push({
            code: "corrupt_event",
            severity: "error",
            message: `journal row ${r.seq} is unreadable (${parsed.problem})`,
            seq: r.seq,
          });
        else events.push(parsed.event);
      }
      return { events, corrupt };
    });
  }

  /**
   * Refold sessions from their journals. A stored snapshot that disagrees with the journal is
   * replaced and a `snapshot_repaired` diagnostic recorded. Returns what it repaired.
   */
  async rebuild(sessionId?: string): Promise<RebuildResult[]> {
    const ids = sessionId ? [sessionId] : (await this.listSessions({ includeCompleted: true })).map((s) => s.id);
    const out: RebuildResult[] = [];
    for (const id of ids) {
      this.#folded.delete(id);
      out.push(await rebuildSession(this.#backend, this.#flows, id, this.#now));
      this.#folded.delete(id);
    }
    return out;
  }

  /** Refold a session and compare it with the stored snapshot, writing nothing (see repair.ts). */
  verifySnapshot(sessionId: string): Promise<SnapshotCheck> {
    return verifySnapshot(this.#backend, this.#flows, sessionId);
  }

  /** Every journal row of a session, in pages, for export. */
  exportRows(sessionId: string): AsyncGenerator<JournalEvent | { seq: number; corrupt: string }> {
    return exportRows(this.#backend, sessionId);
  }
}

/** A session title as the journal stores it: redacted, as every string of event data is. */
async function redactedTitle(title: string): Promise<string> {
  const { redactJson } = redactionLoaded() ?? (await loadRedaction());
  return (redactJson({ title }) as { title: string }).title;
}

/** A re-send after a lost commit that was lost too: its outcome is unknown, and these ids make a later re-send store it once. */
function outcomeUnknown(retryErr: unknown, sent: readonly EventInput[]): unknown {
  if (!isBatonError(retryErr, "storage_unavailable")) return retryErr;
  const ids = sent.map((e) => e.id as string);
  return new BatonError(
    "storage_unavailable",
    `${retryErr.message}. The connection was lost as the write committed, so it may have been stored: its outcome is unknown. Send it again with the same event id${ids.length > 1 ? "s" : ""} (${ids.join(", ")}) once the store is back: it is stored at most once`,
    { ...retryErr.details, outcome: "unknown", ids },
    { cause: retryErr },
  );
}

/**
 * The caller asked once: after a re-send, each event is a duplicate exactly when it was one
 * before the lost attempt (which, if it committed, makes the re-send see its own events again).
 */
function asAskedOnce(results: AppendResult[], first: readonly boolean[] | undefined, fresh: ReadonlySet<string>): void {
  if (first !== undefined && first.length === results.length) {
    results.forEach((r, i) => {
      r.duplicate = first[i] as boolean;
    });
  } else if (results.some((r) => r.duplicate && fresh.has(r.event.id))) {
    for (const r of results) r.duplicate = false;
  }
}

/**
 * Agent runs: one agent process working on a session. `run:started` / `run:ended` /
 * `run:crashed` are journal events (the history STATE.md shows); heartbeats go to the `runs`
 * table so a chatty agent does not flood the journal.
 *
 * A running run is crashed when its heartbeat is stale (last heartbeat + ttl has passed), or
 * its pid is dead on this host, or its pid was reused (core/locks.ts gives the proof; "this
 * host" is the host identity of platform/process-facts.ts, as for locks). Marking
 * it crashed is a write, done by `detectCrashed()` — an explicit step that status, resume and
 * doctor call — never by a read. In one transaction it appends `run:crashed` with the proof,
 * marks the row, and gives back the work the run had leased (leases owned by the run id, by
 * `cli:<pid>@<host identity>`, the owner `baton poll` uses by default, and, when its process is
 * dead here, by an older `baton poll`'s `cli:<pid>`) so the next agent gets it.
 */
import type { Backend, RunRow } from "../../backend/contract.js";
import { randomHex } from "../../core/canonical.js";
import { holderOfRow, type StaleProof, staleDecision } from "../../core/locks.js";
import type { AppendResult, JsonObject } from "../../core/types.js";
import { BatonError, badInput } from "../../errors.js";
import { factsAbout, hostFacts, identify, type ProcessFacts } from "../../platform/process-facts.js";
import type { Journal } from "../journal/journal.js";
import type { Queue } from "../work/queue.js";

export interface RunServiceOptions {
  now?: () => Date;
  facts?: ProcessFacts;
}

export interface RunStartInput {
  agent: string;
  runId?: string;
  /** The agent's process (default: this process). The run is crashed when it dies. */
  pid?: number;
  /** A heartbeat older than this marks the run crashed. Default 30 minutes. */
  ttlMs?: number;
  /** The lane (core/lanes.ts) the run works in: an agent session's, for runs its hooks start. */
  lane?: string;
  /**
   * With `lane`: start no run if the lane ended after this time (the store's clock), checked
   * where no other writer can end it meanwhile: the start was sent before the agent session's
   * end and reached Baton after it (an agent's hooks run without waiting). `conflict` then.
   */
  unlessLaneEndedAfter?: string;
}

export interface CrashedRun {
  sessionId: string;
  runId: string;
  agent: string;
  proof: StaleProof;
  evidence: string;
  /** False in a dry run (doctor without --fix): found, not marked. */
  marked: boolean;
  /** The journal seq of the `run:crashed` event. */
  seq?: number;
  /** Work the run had leased, given back: ready again, or dead-lettered on its last attempt. */
  releasedWork: { itemId: string; state: "ready" | "dead" }[];
}

export const DEFAULT_RUN_TTL_MS = 30 * 60 * 1000;
const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

export class RunService {
  readonly #backend: Backend;
  readonly #journal: Journal;
  readonly #queue: Queue;
  readonly #now: () => Date;
  readonly #facts: ProcessFacts;

  constructor(backend: Backend, journal: Journal, queue: Queue, opts: RunServiceOptions = {}) {
    this.#backend = backend;
    this.#journal = journal;
    this.#queue = queue;
    this.#now = opts.now ?? (() => new Date());
    this.#facts = opts.facts ?? hostFacts;
  }

  /**
   * `run:started` in the journal and the run's liveness row, in one transaction. Starting a run
   * id again (a caller retrying) returns the run already started, marked `duplicate`; with
   * another agent or pid it is `conflict`.
   */
  async start(sessionId: string, input: RunStartInput): Promise<{ runId: string; result: AppendResult; expiresAt: string }> {
    const runId = input.runId ?? `run-${randomHex(4)}`;
    if (!RUN_ID.test(runId)) throw badInput(`run id "${runId}" is invalid: 1-128 letters, digits, '.', '_', ':' or '-'`);
    const pid = input.pid ?? process.pid;
    if (!Number.isSafeInteger(pid) || pid <= 0) throw badInput(`the run's pid must be a positive whole number, got ${input.pid}`);
    const ttlMs = checkTtl(input.ttlMs);
    const id = identify(this.#facts, pid);
    return this.#backend.transaction("write", async (tx) => {
      const data: JsonObject = { runId, agent: input.agent, pid };
      data.host = id.host;
      if (input.lane !== undefined) data.lane = input.lane;
      const lane = input.lane;
      const sent = input.unlessLaneEndedAfter === undefined ? Number.NaN : Date.parse(input.unlessLaneEndedAfter);
      const [result] = await this.#journal.appendInTx(
        tx,
        sessionId,
        [{ id: `run:${runId}:started`, type: "run:started", actor: input.agent, data }],
        lane === undefined || Number.isNaN(sent)
          ? undefined
          : (snap) => {
              const l = snap.facets.lanes?.[lane];
              if (l?.status === "ended" && Date.parse(l.lastAt) > sent)
                throw new BatonError("conflict", `lane ${lane} ended at ${l.lastAt}, after this run's start was sent; no run started`, {
                  sessionId,
                  lane,
                  endedAt: l.lastAt,
                });
            },
      );
      if (result?.duplicate) {
        const row = await tx.runs.getRun(sessionId, runId);
        const expires = row ? Date.parse(row.heartbeatAt) + row.ttlMs : Date.parse(result.event.at) + ttlMs;
        return { runId, result, expiresAt: new Date(expires).toISOString() };
      }
      const at = (result as AppendResult).event.at;
      const now = this.#now();
      await tx.runs.insertRun({
        sessionId,
        runId,
        agent: input.agent,
        pid,
        host: id.host,
        hostId: id.hostId,
        startTime: id.startTime ?? null,
        startedAt: at,
        heartbeatAt: now.toISOString(),
        ttlMs,
        state: "running",
        endedAt: null,
      });
      return { runId, result: result as AppendResult, expiresAt: new Date(now.getTime() + ttlMs).toISOString() };
    });
  }

  /** Keep a run alive; `run_crashed` when it was already marked crashed (its work went back). */
  async heartbeat(
    sessionId: string,
    runId: string,
    opts: { ttlMs?: number } = {},
  ): Promise<{ runId: string; heartbeatAt: string; expiresAt: string }> {
    return this.#backend.transaction("write", async (tx) => {
      const row = await tx.runs.getRun(sessionId, runId);
      if (!row)
        throw new BatonError("not_found", `session ${sessionId} has no run "${runId}" started with \`baton run start\``, {
          sessionId,
          runId,
        });
      if (row.state === "crashed") {
        throw new BatonError(
          "run_crashed",
          `run ${runId} was marked crashed at ${row.endedAt} and its leased work was given back; start a new run (\`baton run start\`) and poll for work again`,
          { sessionId, runId, endedAt: row.endedAt },
        );
      }
      if (row.state === "ended") throw badInput(`run ${runId} already ended at ${row.endedAt}; start a new run`, { sessionId, runId });
      const now = this.#now();
      const ttlMs = opts.ttlMs === undefined ? row.ttlMs : checkTtl(opts.ttlMs);
      await tx.runs.heartbeatRun(sessionId, runId, now.toISOString(), ttlMs);
      return { runId, heartbeatAt: now.toISOString(), expiresAt: new Date(now.getTime() + ttlMs).toISOString() };
    });
  }

  /** `run:ended` and the row, in one transaction; `id` is the event's idempotency key (a caller retrying). */
  async end(
    sessionId: string,
    runId: string,
    r: { reason?: string; completedWork?: string; contextUsage?: number; id?: string },
    actor: string,
  ): Promise<AppendResult> {
    return this.#backend.transaction("write", async (tx) => {
      const data: JsonObject = { runId };
      if (r.reason !== undefined) data.reason = r.reason;
      if (r.completedWork !== undefined) data.completedWork = r.completedWork;
      if (r.contextUsage !== undefined) data.contextUsage = r.contextUsage;
      const [result] = await this.#journal.appendInTx(tx, sessionId, [
        { ...(r.id !== undefined ? { id: r.id } : {}), type: "run:ended", actor, data },
      ]);
      if (await tx.runs.getRun(sessionId, runId)) await tx.runs.setRunState(sessionId, runId, "ended", (result as AppendResult).event.at);
      return result as AppendResult;
    });
  }

  /**
   * Find running runs that are provably gone (stale heartbeat, dead or reused pid) and, unless
   * `dryRun`, mark each crashed and give back its work. Each run is re-checked inside its own
   * write transaction, so a heartbeat that arrived meanwhile wins.
   */
  async detectCrashed(opts: { sessionId?: string; dryRun?: boolean } = {}): Promise<CrashedRun[]> {
    const rows = await this.#backend.transaction("read", (tx) => tx.runs.runningRuns(opts.sessionId));
    const out: CrashedRun[] = [];
    for (const candidate of rows) {
      const first = this.#decide(candidate);
      if (!first.stale) continue;
      if (opts.dryRun) {
        out.push({ ...base(candidate), proof: first.proof, evidence: first.evidence, marked: false, releasedWork: [] });
        continue;
      }
      const marked = await this.#backend.transaction("write", async (tx) => {
        const row = await tx.runs.getRun(candidate.sessionId, candidate.runId);
        if (row?.state !== "running") return undefined;
        const d = this.#decide(row);
        if (!d.stale) return undefined;
        const [r] = await this.#journal.appendInTx(tx, row.sessionId, [
          { type: "run:crashed", actor: "system", data: { runId: row.runId, reason: `${d.proof}: ${d.evidence}` } },
        ]);
        const event = (r as AppendResult).event;
        await tx.runs.setRunState(row.sessionId, row.runId, "crashed", event.at);
        // Its leases: by the run id; by `baton poll`'s default owner on its host, on any proof
        // (the host in the owner keeps other hosts' agents of the same pid apart); and, when the
        // process is proven dead here, by the host-less owner an older `baton poll` used.
        const owners = [row.runId];
        if (row.pid !== null && row.hostId) owners.push(`cli:${row.pid}@${row.hostId}`);
        if (d.proof === "dead_pid" && row.pid !== null) owners.push(`cli:${row.pid}`);
        const releasedWork = await this.#queue.releaseOwnedBy(tx, owners, `its run ${row.runId} crashed (${d.proof})`);
        const c: CrashedRun = { ...base(row), proof: d.proof, evidence: d.evidence, marked: true, seq: event.seq, releasedWork };
        return c;
      });
      if (marked) out.push(marked);
    }
    return out;
  }

  #decide(row: RunRow) {
    const identity = holderOfRow(row);
    const expiresMs = Date.parse(row.heartbeatAt) + row.ttlMs;
    return staleDecision({ ...identity, expiresMs }, factsAbout(this.#facts, identity), this.#now().getTime());
  }
}

function base(r: RunRow): { sessionId: string; runId: string; agent: string } {
  return { sessionId: r.sessionId, runId: r.runId, agent: r.agent };
}

function checkTtl(ms: number | undefined): number {
  const v = ms ?? DEFAULT_RUN_TTL_MS;
  if (!Number.isInteger(v) || v < 1_000 || v > 7 * 24 * 60 * 60 * 1000)
    throw badInput(`the run ttl must be a whole number of milliseconds between 1000 and 604800000, got ${ms}`);
  return v;
}

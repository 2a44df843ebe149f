/**
 * The trajectory ledger: one redacted, bounded node per tool-call attempt (core/ledger/nodes.ts),
 * stored through the backend contract.
 *
 * **A ledger write never fails the tool call.** `record` never throws and never rejects: a node
 * that cannot be written resolves `undefined` and is counted (LedgerHealthTracker, shown by
 * the doctor through `baton.ledger.health()`).
 *
 * **Group commit.** Records are queued and written by one writer loop: a record arriving while a
 * write transaction is in flight joins the next one, so a burst of tool calls (a server, a
 * multi-tab agent) costs one commit per batch instead of one per node.
 *
 * **Durability.** By default ledger transactions are `relaxed` (contract.ts TxOptions): the
 * commit does not wait for its own fsync. A node survives a process crash at once and power
 * loss from the next journal append (whose fsync covers the WAL before it) or checkpoint on.
 * Journal appends keep their full durability unless asked otherwise (the after-tool hook's
 * turn, services/agents/tools.ts). `durability: "full"` makes each ledger commit
 * wait for its fsync as an append does (~0.3–0.5 ms here instead of ~0.05).
 *
 * **Caps**, enforced in each write transaction: nodes per session (never more than the cap;
 * the session's oldest tenth is pruned at once when it is reached, so most writes delete
 * nothing), bytes per node (shrunk in steps, core fields kept), total ledger bytes (the oldest
 * nodes of the whole ledger pruned, down to 90% of the cap).
 */
import type { Backend, LedgerNodeRow, StoreTx, TxOptions } from "../../backend/contract.js";
import { sessionKey } from "../../backend/contract.js";
import { randomHex } from "../../core/canonical.js";
import {
  fitNode,
  type LedgerInput,
  type LedgerLimits,
  type LedgerNode,
  type LedgerStatus,
  ledgerLimits,
  placeNode,
  type ShapedNode,
  shapeNode,
} from "../../core/ledger/nodes.js";
import { ledgerToOtlp, type OtlpRun, type OtlpTracesRequest, runKey } from "../../core/ledger/otlp.js";
import { redactText } from "../../core/redaction/redact.js";
import { BatonError } from "../../errors.js";
import type { LedgerHealthTracker } from "./health.js";

export interface LedgerOptions extends Partial<LedgerLimits> {
  /** `relaxed` (default): commits skip their own fsync (see above). `full`: each ledger commit is fsynced. */
  durability?: "relaxed" | "full";
}

export interface LedgerListOptions {
  status?: LedgerStatus;
  tool?: string;
  workflowId?: string;
  tabId?: string;
  /** Only the newest `limit` matching nodes (still oldest first). */
  limit?: number;
}

export interface OtlpSendResult {
  url: string;
  requests: number;
  spans: number;
}

interface Pending {
  sessionId: string;
  shaped: ShapedNode;
  resolve: (node: LedgerNode | undefined) => void;
}

/** A node that could not be placed, with the reason (counted as a failed write). */
class PlaceFailure {
  constructor(readonly reason: string) {}
}

declare const BATON_VERSION: string | undefined;
const VERSION = typeof BATON_VERSION === "string" ? BATON_VERSION : "0.0.0-dev";

const MAX_BATCH = 256;
const PAGE = 500;
/** Spans per OTLP request. */
export const OTLP_BATCH = 512;

export class LedgerService {
  readonly #backend: Backend;
  readonly #health: LedgerHealthTracker;
  readonly #now: () => Date;
  readonly #limits: LedgerLimits;
  readonly #tx: TxOptions;
  #pending: Pending[] = [];
  #writing: Promise<void> | undefined;
  /** Sessions seen to exist (a session row is never deleted), to skip the lookup. */
  readonly #sessions = new Set<string>();
  /** Generated node ids: a random per-process prefix and a counter (no randomness per node; in
   * order, so the id index grows at its end). */
  readonly #idPrefix = `ln-${randomHex(6)}`;
  #idCounter = 0;

  constructor(backend: Backend, health: LedgerHealthTracker, now: () => Date, opts: LedgerOptions = {}) {
    this.#backend = backend;
    this.#health = health;
    this.#now = now;
    const { durability, ...limits } = opts;
    this.#limits = ledgerLimits(limits);
    this.#tx = durability === "full" ? {} : { durability: "relaxed" };
  }

  get limits(): Readonly<LedgerLimits> {
    return this.#limits;
  }

  /**
   * Record one attempt. Resolves the stored node (recording a known nodeId again resolves the
   * stored one), or `undefined` when it could not be written; never rejects.
   */
  record(sessionId: string, input: LedgerInput): Promise<LedgerNode | undefined> {
    let shaped: ShapedNode;
    try {
      shaped = shapeNode(input, this.#now(), this.#limits);
    } catch (err) {
      this.#health.recordFailure(err, redactText);
      return Promise.resolve(undefined);
    }
    return new Promise((resolve) => {
      this.#pending.push({ sessionId, shaped, resolve });
      this.#writing ??= this.#drain();
    });
  }

  /** Resolves once every record queued so far is written (or counted as failed). */
  async flush(): Promise<void> {
    while (this.#writing) await this.#writing;
  }

  async #drain(): Promise<void> {
    try {
      while (this.#pending.length > 0) {
        const batch = this.#pending.splice(0, MAX_BATCH);
        let results: (LedgerNode | PlaceFailure)[];
        try {
          results = await this.#backend.transaction("write", (tx) => this.#placeAll(tx, batch), this.#tx);
        } catch (err) {
          if (batch.length === 1) results = [new PlaceFailure(describe(err))];
          else {
            // Try each alone, so one bad node does not take the batch with it.
            results = [];
            for (const p of batch) {
              try {
                results.push(...(await this.#backend.transaction("write", (tx) => this.#placeAll(tx, [p]), this.#tx)));
              } catch (e) {
                results.push(new PlaceFailure(describe(e)));
              }
            }
          }
        }
        batch.forEach((p, i) => {
          const r = results[i];
          if (r instanceof PlaceFailure || r === undefined) {
            this.#health.recordFailure(new Error(r?.reason ?? "not written"), redactText);
            p.resolve(undefined);
          } else p.resolve(r);
        });
      }
    } catch (err) {
      // Unreachable in practice (every step above catches); keep the promise contract anyway.
      for (const p of this.#pending.splice(0)) {
        this.#health.recordFailure(err, redactText);
        p.resolve(undefined);
      }
    } finally {
      this.#writing = undefined;
    }
  }

  async #placeAll(tx: StoreTx, batch: readonly Pending[]): Promise<(LedgerNode | PlaceFailure)[]> {
    const out: (LedgerNode | PlaceFailure)[] = [];
    for (const p of batch) out.push(await this.#place(tx, p));
    const totals = await tx.ledger.totals();
    if (totals.bytes > this.#limits.maxTotalBytes) await tx.ledger.pruneOldest(totals.bytes - Math.floor(this.#limits.maxTotalBytes * 0.9));
    return out;
  }

  async #place(tx: StoreTx, { sessionId, shaped }: Pending): Promise<LedgerNode | PlaceFailure> {
    if (!this.#sessions.has(sessionId)) {
      if (!(await tx.getSession(sessionId))) return new PlaceFailure(`no session ${sessionId}`);
      this.#sessions.add(sessionId);
    }
    if (shaped.nodeId !== undefined) {
      const existing = await tx.ledger.getNode(shaped.nodeId);
      if (existing) {
        return existing.sessionId === sessionId
          ? parseNode(existing)
          : new PlaceFailure(`node id ${shaped.nodeId} is already used by another session`);
      }
    }
    await tx.lockKey(sessionKey(sessionId)); // the next node seq, one writer of the session at a time
    const last = await tx.ledger.lastNode(sessionId);
    const onTarget = shaped.target === undefined ? undefined : await tx.ledger.lastOnTarget(sessionId, shaped.target);
    const placed = placeNode(sessionId, shaped.nodeId ?? `${this.#idPrefix}-${(this.#idCounter++).toString(36).padStart(6, "0")}`, shaped, {
      seq: (last?.seq ?? 0) + 1,
      ...(last ? { previous: { nodeId: last.nodeId, toolName: last.toolName } } : {}),
      ...(onTarget ? { lastOnTarget: { nodeId: onTarget.nodeId, status: onTarget.status as LedgerStatus } } : {}),
    });
    const { node, json, bytes } = fitNode(placed, this.#limits.maxNodeBytes);
    await tx.ledger.insertNode({
      nodeId: node.nodeId,
      sessionId,
      seq: node.seq,
      at: node.at,
      toolName: node.toolName,
      status: node.status,
      target: node.target ?? null,
      bytes,
      body: json,
    });
    // The session cap, pruned in steps: at seq cap+1, cap+1+step, … the oldest `step` go at once,
    // so the session holds between cap−step+1 and cap nodes and most records delete nothing.
    const cap = this.#limits.maxNodesPerSession;
    const step = Math.max(1, Math.ceil(cap / 10));
    if (node.seq > cap && (node.seq - cap - 1) % step === 0) await tx.ledger.pruneSession(sessionId, node.seq - cap + step - 1);
    return node;
  }

  /** A session's nodes, oldest first, filtered. */
  async list(sessionId: string, o: LedgerListOptions = {}): Promise<LedgerNode[]> {
    const out: LedgerNode[] = [];
    for await (const n of this.nodes(sessionId)) {
      if (o.status !== undefined && n.status !== o.status) continue;
      if (o.tool !== undefined && n.toolName !== o.tool) continue;
      if (o.workflowId !== undefined && n.workflowId !== o.workflowId) continue;
      if (o.tabId !== undefined && n.tabId !== o.tabId) continue;
      out.push(n);
    }
    return o.limit !== undefined && out.length > o.limit ? out.slice(out.length - o.limit) : out;
  }

  /** The id of the session's newest node (undefined: none), read alone: the others are not read. */
  async newestId(sessionId: string): Promise<string | undefined> {
    return (await this.#backend.transaction("read", (tx) => tx.ledger.lastNode(sessionId)))?.nodeId;
  }

  async get(nodeId: string): Promise<LedgerNode> {
    const row = await this.#backend.transaction("read", (tx) => tx.ledger.getNode(nodeId));
    if (!row) throw new BatonError("not_found", `no ledger node ${nodeId}; list them with \`baton ledger list\``, { nodeId });
    return parseNode(row);
  }

  /** Every node of one session (by seq) or of the whole ledger (by recording order), paged. */
  async *nodes(sessionId?: string): AsyncGenerator<LedgerNode> {
    let after = 0;
    for (;;) {
      const rows: LedgerNodeRow[] = await this.#backend.transaction("read", (tx) =>
        sessionId === undefined ? tx.ledger.allNodes(after, PAGE) : tx.ledger.sessionNodes(sessionId, after, PAGE),
      );
      for (const r of rows) yield parseNode(r);
      if (rows.length < PAGE) return;
      const last = rows[rows.length - 1] as LedgerNodeRow;
      after = sessionId === undefined ? last.no : last.seq;
    }
  }

  /**
   * OTLP/JSON requests of at most OTLP_BATCH spans each: the nodes' spans and, once per export,
   * an `invoke_agent` span for each run the nodes name (core/ledger/otlp.ts), read from the runs
   * table once per run.
   */
  async *otlpRequests(sessionId?: string): AsyncGenerator<OtlpTracesRequest> {
    const runs = new Map<string, OtlpRun>();
    const looked = new Set<string>();
    const sent = new Set<string>();
    const known = { runs, sent, now: this.#now().toISOString() };
    let batch: LedgerNode[] = [];
    /** Runs whose span goes in the current batch. */
    const fresh = new Set<string>();
    const runSpans = (key: string | undefined) => (key !== undefined && runs.has(key) && !sent.has(key) && !fresh.has(key) ? 1 : 0);
    for await (const n of this.nodes(sessionId)) {
      const key = n.runId === undefined ? undefined : runKey(n.sessionId, n.runId);
      if (key !== undefined && n.runId !== undefined && !looked.has(key)) {
        looked.add(key);
        const run = await this.#run(n.sessionId, n.runId);
        if (run) runs.set(key, run);
      }
      if (batch.length > 0 && batch.length + fresh.size + 1 + runSpans(key) > OTLP_BATCH) {
        yield ledgerToOtlp(batch, { version: VERSION }, known);
        batch = [];
        fresh.clear();
      }
      if (key !== undefined && runSpans(key) > 0) fresh.add(key);
      batch.push(n);
    }
    if (batch.length > 0) yield ledgerToOtlp(batch, { version: VERSION }, known);
  }

  /** A run as its span needs it, from the runs table (which keeps every run; a snapshot keeps the latest). */
  async #run(sessionId: string, runId: string): Promise<OtlpRun | undefined> {
    const r = await this.#backend.transaction("read", (tx) => tx.runs.getRun(sessionId, runId));
    if (!r) return undefined;
    return {
      runId: r.runId,
      agent: r.agent,
      started: r.startedAt,
      status: r.state,
      ...(r.endedAt !== null ? { ended: r.endedAt } : {}),
      ...(r.host !== null ? { host: r.host } : {}),
    };
  }

  /** POST the nodes as OTLP/JSON to `<endpoint>/v1/traces` (an endpoint already ending in /v1/traces is used as is). */
  async sendOtlp(o: {
    endpoint: string;
    headers?: Record<string, string>;
    sessionId?: string;
    timeoutMs?: number;
  }): Promise<OtlpSendResult> {
    const url = tracesUrl(o.endpoint);
    let requests = 0;
    let spans = 0;
    for await (const req of this.otlpRequests(o.sessionId)) {
      const n = req.resourceSpans[0]?.scopeSpans[0]?.spans.length ?? 0;
      let res: Response;
      try {
        res = await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json", ...o.headers },
          body: JSON.stringify(req),
          signal: AbortSignal.timeout(o.timeoutMs ?? 10_000),
        });
      } catch (err) {
        throw new BatonError(
          "export_failed",
          `cannot reach the OTLP endpoint ${url} (${describe(err)}); check that the collector runs and the URL is right`,
          { url, sent: spans },
          { cause: err },
        );
      }
      const body = await res.text().catch(() => "");
      if (!res.ok) {
        throw new BatonError(
          "export_failed",
          `the OTLP endpoint ${url} answered ${res.status}${body ? `: ${redactText(body).slice(0, 200)}` : ""}; check the endpoint and its headers`,
          { url, status: res.status, sent: spans },
        );
      }
      requests++;
      spans += n;
    }
    return { url, requests, spans };
  }
}

function tracesUrl(endpoint: string): string {
  let u: URL;
  try {
    u = new URL(endpoint);
  } catch {
    throw new BatonError("bad_input", `--endpoint ${endpoint} is not a URL; e.g. http://127.0.0.1:4318`);
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") throw new BatonError("bad_input", `--endpoint must be http(s), not ${u.protocol}`);
  if (!u.pathname.endsWith("/v1/traces")) u.pathname = `${u.pathname.replace(/\/+$/, "")}/v1/traces`;
  return u.toString();
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    const cause = (err as { cause?: { code?: unknown; message?: unknown } }).cause;
    const detail = cause && typeof cause === "object" && cause.code ? ` (${String(cause.code)})` : "";
    return `${typeof code === "string" ? `${code}: ` : ""}${err.message}${detail}`;
  }
  return String(err);
}

/** A stored node; a row whose JSON no longer parses is rebuilt from its columns. */
function parseNode(r: LedgerNodeRow): LedgerNode {
  try {
    return JSON.parse(r.body) as LedgerNode;
  } catch {
    return { nodeId: r.nodeId, sessionId: r.sessionId, seq: r.seq, at: r.at, toolName: r.toolName, status: r.status as LedgerStatus };
  }
}

/**
 * The delivery queue's shapes: what a caller gets (work items, leases, results, open and dead
 * work), and the pure conversions between them and the store's rows, beside the small checks
 * every transition shares. The transitions themselves are services/work/queue.ts.
 */
import type { EventRow, WorkItemRow } from "../../backend/contract.js";
import { randomHex } from "../../core/canonical.js";
import type { FlowDefinition } from "../../core/flows/flow.js";
import type { AppendResult, EventOutcome, JournalEvent, JsonObject } from "../../core/types.js";
import { BatonError, badInput, isBatonError } from "../../errors.js";

export interface WorkItem {
  itemId: string;
  sessionId: string;
  seq: number;
  kind: string;
  priority: number;
  event: JournalEvent;
}

export interface Lease {
  /** The fencing token of this delivery: ack, nack and heartbeat name it. */
  leaseId: string;
  /** 1 on first delivery, 2 on the first redelivery, ... */
  attempt: number;
  owner: string;
  expiresAt: string;
  item: WorkItem;
}

export interface LeaseRequest {
  sessionId?: string;
  kinds?: readonly string[];
  leaseMs?: number;
}

export interface AckResult {
  itemId: string;
  leaseId: string;
  /** The lease was already acked, or the item was already finished by a `doneBy` event. */
  duplicate: boolean;
  result?: AppendResult;
}

export interface ResultInput {
  type?: string;
  data?: JsonObject;
  actor?: string;
  id?: string;
}

/** An open work item as status shows it. */
export interface PendingWork {
  itemId: string;
  sessionId: string;
  seq: number;
  kind: string;
  priority: number;
  state: "ready" | "leased";
  attempts: number;
  /** The current lease, when leased: holder and expiry (`expired: true` once past it). */
  lease?: { leaseId: string; owner: string; expiresAt: string; expired: boolean };
  availableAt?: string;
}

/** The dead-letter diagnostic's message (for people: status asks the queue, never parses it). */
export function deadLetterMessage(item: Pick<WorkItemRow, "itemId" | "kind" | "seq" | "attempts">, why: string): string {
  return `work item ${item.itemId} (${item.kind}, seq ${item.seq}) was dead-lettered after ${item.attempts} deliveries: ${why}. Handle seq ${item.seq} by hand, then record the result with \`baton event\` (an event that finishes its kind, or any event with data {"handles": ${item.seq}}), or deliver it again with \`baton retry ${item.itemId}\``;
}

/** A dead-lettered item not handled since, as status shows it. */
export interface DeadItem {
  /** What `retryDead` takes. */
  itemId: string;
  kind: string;
  seq: number;
  /** When it was dead-lettered. */
  at: string;
  why: string;
}

/**
 * What an appended event does to the queue: the kinds of open work it finishes (its flow's
 * `doneBy`), the dead items its data names, and the work spec when it is work itself (only
 * when it moved or stayed: fenced and stale events make no work). Undefined: nothing.
 */
export function workOf(
  flow: FlowDefinition,
  event: JournalEvent,
  outcome: EventOutcome,
): { completes: string[]; seqs: number[]; spec: { priority: number } | undefined } | undefined {
  if (!flow.work || outcome === "stale") return undefined;
  const finishes = outcome === "moved" || outcome === "stayed" || outcome === "recorded";
  const completes = finishes
    ? Object.entries(flow.work)
        .filter(([, spec]) => spec.doneBy?.includes(event.type))
        .map(([kind]) => kind)
    : [];
  // Dead-lettered work is handled by what would have finished it, or by any event journaled
  // naming it (`{"handles": seq}`, whatever the phase: the way to close work whose kind has
  // no doneBy, or whose doneBy the phase no longer allows).
  const seqs = handledSeqs(event.data);
  const spec = outcome === "moved" || outcome === "stayed" ? flow.work[event.type] : undefined;
  return { completes, seqs, spec };
}

/** The seqs an event's data says it handles: `{"handles": 12}` or `{"handles": [12, 14]}`. */
function handledSeqs(data: JsonObject): number[] {
  const h = data.handles;
  const list = Array.isArray(h) ? h : [h];
  return list.filter((x): x is number => typeof x === "number" && Number.isSafeInteger(x));
}

/**
 * A fencing token: the time in milliseconds (base 36, fixed width) then 80 random bits. Ids
 * that grow with time land at the end of the leases index, so a commit of many leases touches
 * a few index pages instead of one random page per lease.
 */
export function newLeaseId(now: Date): string {
  return `lse_${now.getTime().toString(36).padStart(9, "0")}${randomHex(10)}`;
}

/** A dead-lettered item delivered again: back in the queue with fresh attempts. */
export interface RetryResult {
  itemId: string;
  state: "ready";
  kind: string;
  seq: number;
}

/** A nacked item: ready again at `availableAt`, or dead-lettered after its last attempt. */
export interface NackResult {
  itemId: string;
  state: "ready" | "dead";
  availableAt?: string;
}

/** A commit whose connection died before it answered: it may or may not have landed. */
export function unknownOutcome(err: unknown): boolean {
  return isBatonError(err, "storage_unavailable") && err.details.outcome === "unknown";
}

export function checkOwner(owner: string): void {
  if (typeof owner !== "string" || owner.trim() === "" || owner.length > 200)
    throw badInput("the lease owner must be a non-empty name of at most 200 characters");
}

export function unknownLease(leaseId: string): BatonError {
  return new BatonError("not_found", `no lease "${leaseId}"; poll for work to get a lease`, { leaseId });
}

/** The journal event a claimed item names (claimReady reads it with the claim). */
export function eventOf(item: WorkItemRow, row: EventRow | undefined): JournalEvent {
  if (!row || row.seq !== item.seq)
    throw new BatonError("internal", `work item ${item.itemId} names seq ${item.seq}, which is not in the journal`);
  let data: JsonObject = {};
  try {
    data = JSON.parse(row.data) as JsonObject;
  } catch {
    data = {}; // a corrupt row is reported by status; deliver what is known
  }
  const ev: JournalEvent = { sessionId: row.sessionId, seq: row.seq, id: row.id, type: row.type, actor: row.actor, data, at: row.at };
  if (row.revision !== null) ev.revision = row.revision;
  return ev;
}

export function toPending(r: WorkItemRow, nowMs: number): PendingWork {
  const p: PendingWork = {
    itemId: r.itemId,
    sessionId: r.sessionId,
    seq: r.seq,
    kind: r.kind,
    priority: r.priority,
    state: r.state as "ready" | "leased",
    attempts: r.attempts,
  };
  if (r.state === "leased" && r.leaseId && r.leaseOwner && r.leaseExpiresMs !== null) {
    p.lease = {
      leaseId: r.leaseId,
      owner: r.leaseOwner,
      expiresAt: new Date(r.leaseExpiresMs).toISOString(),
      expired: r.leaseExpiresMs <= nowMs,
    };
  }
  if (r.availableMs > nowMs) p.availableAt = new Date(r.availableMs).toISOString();
  return p;
}

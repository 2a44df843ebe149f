/**
 * The delivery queue: work for the agent, handed out under leases that only an ack ends.
 *
 * - Work items are created by a journal append hook, in the append's own transaction, for the
 *   events the flow marks as work; they end when a lease is acked (the agent's result is
 *   journaled in the same transaction) or when a `doneBy` event of the flow is appended.
 * - A lease id is a fencing token unique to one delivery. An ack with a lease whose item was
 *   since leased to someone else, or finished by someone else, is refused with `lease_lost`.
 * - Expired leases are redelivered; after `maxAttempts` deliveries an item is dead-lettered
 *   with a diagnostic. Everything lives in the database: a restart loses nothing.
 *
 * Longer than ~400 lines, a little: every transition of a work item (enqueue, lease, heartbeat, ack,
 * nack, release, expiry, dead letter, retry) is here, beside the fencing rule each one checks.
 * The shapes callers get and their conversions from rows are services/work/queue-items.ts; the
 * batching of concurrent claims and acks into shared statements is services/work/coalesce.ts.
 */
import type { Backend, StoreTx, WorkItemRow, WorkVersion } from "../../backend/contract.js";
import type { FlowDefinition } from "../../core/flows/flow.js";
import type { AppendResult, EventOutcome, JournalEvent } from "../../core/types.js";
import { BatonError, badInput } from "../../errors.js";
import type { Journal } from "../journal/journal.js";
import { ChangeWait } from "./change-wait.js";
import { Coalescer, type Outcome } from "./coalesce.js";
import {
  type AckResult,
  checkOwner,
  type DeadItem,
  deadLetterMessage,
  eventOf,
  type Lease,
  type LeaseRequest,
  type NackResult,
  newLeaseId,
  type PendingWork,
  type ResultInput,
  type RetryResult,
  toPending,
  unknownLease,
  unknownOutcome,
  workOf,
} from "./queue-items.js";

/** The longest reason a nack or release keeps. */
const MAX_REASON = 500;
/** The longest a nack may put an item off: later is no date a store keeps (JavaScript's end of time is 275,760 AD). */
const MAX_NACK_DELAY_MS = 10 * 365 * 24 * 60 * 60 * 1000;

export type {
  AckResult,
  DeadItem,
  Lease,
  LeaseRequest,
  NackResult,
  PendingWork,
  ResultInput,
  RetryResult,
  WorkItem,
} from "./queue-items.js";
export { deadLetterMessage } from "./queue-items.js";

export interface QueueOptions {
  now?: () => Date;
  /** Deliveries before dead-lettering. Default 5. */
  maxAttempts?: number;
  /** Lease length when the caller gives none. Default 60 000 ms. */
  defaultLeaseMs?: number;
}

const MIN_LEASE_MS = 50;

const MAX_LEASE_MS = 24 * 60 * 60 * 1000;

/** One caller's lease request, as the claim coalescer carries it. */
interface ClaimRequest {
  owner: string;
  leaseMs: number;
  sessionId?: string;
  kinds?: readonly string[];
}

/** Requests with the same filter share one claim. */
const filterKey = (r: LeaseRequest): string => JSON.stringify([r.sessionId ?? null, r.kinds?.length ? [...r.kinds].sort() : null]);

export class Queue {
  readonly #backend: Backend;
  readonly #journal: Journal;
  readonly #now: () => Date;
  readonly #maxAttempts: number;
  readonly #defaultLeaseMs: number;
  /**
   * Concurrent leases (per filter) and plain acks of this process go together: one statement
   * claims an item for each waiting lease, one finishes every waiting ack (measured on
   * PostgreSQL with 16 workers: docs/benchmarks.md). Each caller still gets its own item, lease
   * id and answer, only after the shared commit. Two such statements of a kind may be on their
   * way at once: while one waits for its commit's WAL flush, the next is already sent (16
   * workers: 1,360 against 1,170 items/s with one, mean of 6 runs each on a loaded machine).
   */
  readonly #claims = new Coalescer<ClaimRequest, Lease | undefined>((reqs) => this.#claim(reqs), { parallel: 2 });
  readonly #acks = new Coalescer<string, string | undefined>((ids) => this.#ackHeld(ids), { parallel: 2 });

  constructor(backend: Backend, journal: Journal, opts: QueueOptions = {}) {
    this.#backend = backend;
    this.#journal = journal;
    this.#now = opts.now ?? (() => new Date());
    this.#maxAttempts = opts.maxAttempts ?? 5;
    this.#defaultLeaseMs = opts.defaultLeaseMs ?? 60_000;
    journal.addAppendHook(
      (tx, flow, event, outcome) => this.#onAppend(tx, flow, event, outcome),
      (flow, event, outcome) => {
        const w = workOf(flow, event, outcome);
        return w !== undefined && (w.completes.length > 0 || w.seqs.length > 0 || w.spec !== undefined);
      },
    );
  }

  /** Enqueue work events; finish open items that this event completes. */
  async #onAppend(tx: StoreTx, flow: FlowDefinition, event: JournalEvent, outcome: EventOutcome): Promise<void> {
    const w = workOf(flow, event, outcome);
    if (!w) return;
    const { completes, seqs, spec } = w;
    if (completes.length > 0 || seqs.length > 0) await tx.queue.markDeadHandled(event.sessionId, { kinds: completes, seqs }, event.seq);
    if (outcome !== "moved" && outcome !== "stayed") return;
    if (completes.length > 0) {
      for (const item of await tx.queue.openItems(event.sessionId)) {
        if (!completes.includes(item.kind) || item.seq >= event.seq) continue;
        await tx.queue.setFinal(item.itemId, { state: "done", doneAt: event.at, doneBy: `event:${event.id}`, resultSeq: event.seq });
      }
    }
    if (!spec) return;
    await tx.queue.insertItem({
      itemId: `${event.sessionId}:${event.seq}`,
      sessionId: event.sessionId,
      seq: event.seq,
      kind: event.type,
      priority: spec.priority,
      state: "ready",
      attempts: 0,
      maxAttempts: this.#maxAttempts,
      availableMs: Date.parse(event.at),
      leaseId: null,
      leaseOwner: null,
      leaseExpiresMs: null,
      createdAt: event.at,
      doneAt: null,
      doneBy: null,
      resultSeq: null,
    });
  }

  /**
   * Lease the next ready item now (highest priority, then oldest), or undefined. Concurrent
   * calls with the same filter share one claim (see #claims).
   */
  async lease(owner: string, req: LeaseRequest = {}): Promise<Lease | undefined> {
    checkOwner(owner);
    const leaseMs = this.#leaseMs(req.leaseMs);
    return this.#claims.submit(filterKey(req), {
      owner,
      leaseMs,
      ...(req.sessionId ? { sessionId: req.sessionId } : {}),
      ...(req.kinds?.length ? { kinds: req.kinds } : {}),
    });
  }

  /**
   * Claim an item for each request (all of one filter). The claim is one statement that
   * commits by itself, told to nobody at once (no waiter waits for an item to be taken); when
   * some lease has expired, it claims nothing and a transaction returns the expired items
   * first (redelivery, dead letters) and then claims, as every lease did before.
   */
  async #claim(reqs: readonly ClaimRequest[]): Promise<Outcome<Lease | undefined>[]> {
    const first = reqs[0] as ClaimRequest;
    const now = this.#now();
    const leases = reqs.map((r) => ({ leaseId: newLeaseId(now), owner: r.owner, expiresMs: now.getTime() + r.leaseMs }));
    const filter = {
      nowMs: now.getTime(),
      ...(first.sessionId ? { sessionId: first.sessionId } : {}),
      ...(first.kinds ? { kinds: first.kinds } : {}),
    };
    const at = now.toISOString();
    const claim = () =>
      this.#backend.transaction("write", (tx) => tx.queue.claimReady({ ...filter, unlessExpired: true }, leases, at), {
        oneStatement: true,
        quiet: true,
      });
    let out: Awaited<ReturnType<typeof claim>>;
    try {
      out = await claim();
    } catch (err) {
      if (!unknownOutcome(err)) throw err;
      // The connection died while the claim ran. Had it committed, its items are leased to
      // nobody who knows and come back when those leases expire (as after a worker's death):
      // claim again under new lease ids.
      for (const l of leases) l.leaseId = newLeaseId(now);
      out = await claim();
    }
    if (out.expired) {
      out = await this.#backend.transaction("write", async (tx) => {
        await this.#expire(tx, now);
        return tx.queue.claimReady(filter, leases, at);
      });
    }
    return reqs.map((_, i) => {
      const claimed = out.claimed[i];
      if (!claimed) return { value: undefined };
      const l = leases[i] as (typeof leases)[number];
      const { item } = claimed;
      try {
        const event = eventOf(item, claimed.event);
        return {
          value: {
            leaseId: l.leaseId,
            attempt: item.attempts,
            owner: l.owner,
            expiresAt: new Date(l.expiresMs).toISOString(),
            item: { itemId: item.itemId, sessionId: item.sessionId, seq: item.seq, kind: item.kind, priority: item.priority, event },
          },
        };
      } catch (error) {
        // Its event is missing: this caller hears why; the item is redelivered after the lease.
        return { error };
      }
    });
  }

  /**
   * Long-poll: lease as soon as an item is ready, waiting up to `timeoutMs`. Wakes on this
   * process's appends at once and on other processes' commits within the backend's change
   * delay; it also wakes when a delayed item becomes available or a lease expires.
   */
  async waitForWork(owner: string, req: LeaseRequest & { timeoutMs: number; signal?: AbortSignal }): Promise<Lease | undefined> {
    if (!Number.isFinite(req.timeoutMs) || req.timeoutMs < 0) throw badInput("timeout must be a number of milliseconds ≥ 0");
    const deadline = Date.now() + req.timeoutMs;
    const waiter = new ChangeWait(this.#backend, req.signal);
    try {
      for (;;) {
        waiter.arm();
        const got = await this.lease(owner, req);
        if (got || Date.now() >= deadline || req.signal?.aborted) return got;
        // A commit while we looked (the changes since arm()) ends the sleep at once.
        const nextWake = await this.#backend.transaction("read", (tx) => tx.queue.nextWakeMs(this.#now().getTime()), {
          oneStatement: true,
        });
        const until = Math.min(deadline, nextWake !== undefined ? Date.now() + Math.max(1, nextWake - this.#now().getTime()) : deadline);
        await waiter.sleep(until - Date.now());
      }
    } finally {
      waiter.close();
    }
  }

  /** Extend a live lease. */
  async heartbeat(leaseId: string, opts: { leaseMs?: number } = {}): Promise<{ leaseId: string; expiresAt: string }> {
    const leaseMs = this.#leaseMs(opts.leaseMs);
    return this.#backend.transaction("write", async (tx) => {
      const now = this.#now();
      const { item } = await this.#ownedItem(tx, leaseId, now);
      const expiresMs = now.getTime() + leaseMs;
      if (item.state === "ready") {
        // Expired but not yet redelivered: nobody else holds it, so the holder may keep it.
        const lease = (await tx.queue.getLease(leaseId))!;
        await tx.queue.setLeased(item.itemId, { leaseId, owner: lease.owner, expiresMs, attempts: item.attempts });
        await tx.queue.setLeaseState(leaseId, "active");
      } else await tx.queue.extendLease(item.itemId, leaseId, expiresMs);
      return { leaseId, expiresAt: new Date(expiresMs).toISOString() };
    });
  }

  /**
   * Finish the leased item. With a result, the result event is appended to the session's
   * journal in the same transaction. Acking the same lease again returns the first outcome.
   */
  async ack(leaseId: string, result?: ResultInput): Promise<AckResult> {
    if (result !== undefined && (typeof result !== "object" || result === null)) throw badInput("the result must be an object");
    // A result that says nothing to journal is not silently taken for "no result" (data and actor dropped).
    if (result !== undefined && result.type === "")
      throw badInput("the result's type is empty: name the event to journal, or send no result");
    if (result !== undefined && result.type === undefined && (result.data !== undefined || result.actor !== undefined))
      throw badInput("the result's data and actor go with its event: give its type too");
    if (typeof leaseId !== "string" || leaseId === "") throw unknownLease(String(leaseId));
    if (!result?.type) {
      // Nothing to journal: the lease and its item are finished in one shared statement when
      // the lease still holds the item. Anything else (a repeat, a lost or unknown lease, an
      // item finished by a doneBy event) is decided below, as it always was.
      const itemId = await this.#acks.submit("", leaseId);
      if (itemId !== undefined) return { itemId, leaseId, duplicate: false };
    }
    return this.#backend.transaction("write", async (tx) => {
      const now = this.#now();
      const lease = await tx.queue.getLease(leaseId);
      if (!lease) throw unknownLease(leaseId);
      if (lease.state === "acked") return { itemId: lease.itemId, leaseId, duplicate: true };
      const item = await tx.queue.getItem(lease.itemId);
      if (!item) throw unknownLease(leaseId);
      if (item.state === "done" && item.doneBy?.startsWith("event:") && lease.state === "active") {
        // The agent recorded the result event itself (a doneBy event): the work is done.
        await tx.queue.setLeaseState(leaseId, "acked", item.resultSeq);
        return { itemId: item.itemId, leaseId, duplicate: true };
      }
      this.#assertHolder(item, lease.leaseId, lease.state, now);
      let appended: AppendResult | undefined;
      if (result?.type) {
        const [r] = await this.#journal.appendInTx(tx, item.sessionId, [
          {
            type: result.type,
            actor: result.actor ?? "agent",
            ...(result.data ? { data: result.data } : {}),
            // The lease id makes the result idempotent: a retried ack appends nothing new.
            id: result.id ?? `ack:${leaseId}`,
          },
        ]);
        appended = r;
      }
      // The result event may have finished the item itself (a doneBy event of the flow).
      const fresh = appended ? (await tx.queue.getItem(item.itemId))! : item;
      if (fresh.state !== "done") {
        await tx.queue.setFinal(item.itemId, {
          state: "done",
          doneAt: now.toISOString(),
          doneBy: `lease:${leaseId}`,
          resultSeq: appended?.event.seq ?? null,
        });
      }
      await tx.queue.setLeaseState(leaseId, "acked", appended?.event.seq ?? null);
      return { itemId: item.itemId, leaseId, duplicate: false, ...(appended ? { result: appended } : {}) };
    });
  }

  /** Finish the leases that still hold their items, in one statement; each caller gets its item id, or undefined. */
  async #ackHeld(leaseIds: readonly string[]): Promise<Outcome<string | undefined>[]> {
    const at = this.#now().toISOString();
    let done: { leaseId: string; itemId: string }[];
    try {
      done = await this.#backend.transaction("write", (tx) => tx.queue.ackHeld(leaseIds, at), { oneStatement: true, quiet: true });
    } catch (err) {
      if (!unknownOutcome(err)) throw err;
      done = []; // each goes the full way, which finds what landed (a lease acked: a duplicate)
    }
    const items = new Map(done.map((d) => [d.leaseId, d.itemId]));
    // A lease acked twice in one batch is finished once: the first caller gets it, the repeat
    // goes the long way and hears `duplicate`.
    return leaseIds.map((id) => {
      const itemId = items.get(id);
      items.delete(id);
      return { value: itemId };
    });
  }

  /** Give the item back (optionally not before `delayMs`); a failed attempt. */
  async nack(leaseId: string, opts: { delayMs?: number; reason?: string } = {}): Promise<NackResult> {
    const delayMs = opts.delayMs ?? 0;
    if (!Number.isFinite(delayMs) || delayMs < 0 || delayMs > MAX_NACK_DELAY_MS)
      throw badInput(`delay must be a number of milliseconds from 0 to ${MAX_NACK_DELAY_MS} (ten years), got ${delayMs}`);
    return this.#giveBack(leaseId, { delayMs, reason: opts.reason ?? "nacked on its last attempt", onlyLeased: false });
  }

  /**
   * A person gives leased work back (the dashboard's "Release"): a nack, but only while the lease
   * still holds its item as leased. A lease acked, released, delivered again or whose item
   * already went back to the queue on its own is `lease_lost`, and nothing changes: the page
   * that offered it was stale.
   */
  async release(leaseId: string, opts: { reason?: string } = {}): Promise<NackResult> {
    return this.#giveBack(leaseId, { delayMs: 0, reason: opts.reason ?? "released on its last attempt", onlyLeased: true });
  }

  async #giveBack(leaseId: string, o: { delayMs: number; reason: string; onlyLeased: boolean }): Promise<NackResult> {
    // Kept with the item and shown on the dashboard: a reason, not a document.
    if (typeof o.reason !== "string" || o.reason.length > MAX_REASON)
      throw badInput(`the reason must be text of at most ${MAX_REASON} characters`);
    return this.#backend.transaction("write", async (tx) => {
      const now = this.#now();
      const { item } = await this.#ownedItem(tx, leaseId, now);
      if (o.onlyLeased && item.state !== "leased")
        throw new BatonError(
          "lease_lost",
          `lease ${leaseId} no longer holds ${item.itemId}: it expired and the item is back in the queue`,
          {
            leaseId,
            itemId: item.itemId,
            itemState: item.state,
          },
        );
      await tx.queue.setLeaseState(leaseId, "released");
      if (item.attempts >= item.maxAttempts) {
        await this.#deadLetter(tx, item, now, o.reason);
        return { itemId: item.itemId, state: "dead" };
      }
      const availableMs = now.getTime() + o.delayMs;
      await tx.queue.setReady(item.itemId, availableMs);
      return { itemId: item.itemId, state: "ready", availableAt: new Date(availableMs).toISOString() };
    });
  }

  /**
   * Put a dead-lettered item back in the queue with fresh attempts (a person decided to try
   * again). Only an item that is still dead and that no event handled since: anything else is
   * `conflict` and nothing changes. Its old leases stay dead (a late ack is `lease_lost`).
   */
  async retryDead(itemId: string): Promise<RetryResult> {
    return this.#backend.transaction("write", async (tx) => {
      const item = await tx.queue.getItem(itemId);
      if (!item)
        throw new BatonError("not_found", `no work item "${itemId}"; \`baton status --json\` names dead-lettered work`, { itemId });
      if (item.state !== "dead" || !(await tx.queue.requeueDead(itemId, this.#now().getTime()))) {
        const why =
          item.state === "dead"
            ? "an event handled it since it was dead-lettered"
            : item.state === "done"
              ? "it was finished meanwhile"
              : "it is already back in the queue";
        throw new BatonError(
          "conflict",
          `work item ${itemId} (${item.kind}, seq ${item.seq}) cannot be retried: ${why}; nothing was changed`,
          {
            itemId,
            itemState: item.state,
          },
        );
      }
      return { itemId, state: "ready", kind: item.kind, seq: item.seq };
    });
  }

  /** What the dashboard's version tag of a session's work is made of (`QueueQueries.workVersion`, services/session/overview.ts). */
  workVersion(sessionId: string): Promise<WorkVersion> {
    return this.#backend.transaction("read", (tx) => tx.queue.workVersion(sessionId));
  }

  /** Open work, of one session or all, in delivery order. Never writes. */
  async pending(sessionId?: string): Promise<PendingWork[]> {
    const rows = await this.#backend.transaction("read", (tx) => tx.queue.openItems(sessionId));
    const nowMs = this.#now().getTime();
    return rows.map((r) => toPending(r, nowMs));
  }

  /**
   * Inside a write transaction: give back the work leased by these owners (a run found
   * crashed), as an expired lease would be: ready for the next agent, or dead-lettered when it
   * was on its last attempt. Their leases become `released`, so a late ack is `lease_lost`.
   */
  async releaseOwnedBy(tx: StoreTx, owners: readonly string[], why: string): Promise<{ itemId: string; state: "ready" | "dead" }[]> {
    const now = this.#now();
    const out: { itemId: string; state: "ready" | "dead" }[] = [];
    for (const item of await tx.queue.leasedBy(owners)) {
      if (item.leaseId) await tx.queue.setLeaseState(item.leaseId, "released");
      if (item.attempts >= item.maxAttempts) {
        await this.#deadLetter(tx, item, now, why);
        out.push({ itemId: item.itemId, state: "dead" });
      } else {
        await tx.queue.setReady(item.itemId, now.getTime());
        out.push({ itemId: item.itemId, state: "ready" });
      }
    }
    return out;
  }

  /** Return expired leases to ready now (the next lease would do it anyway); how many. */
  async reapExpired(): Promise<number> {
    return this.#backend.transaction("write", async (tx) => {
      const now = this.#now();
      const n = (await tx.queue.expiredLeases(now.getTime())).length;
      await this.#expire(tx, now);
      return n;
    });
  }

  /** A session's dead-lettered items that no event handled since, oldest first (at most `limit`). */
  async deadWork(sessionId: string, limit = 20): Promise<DeadItem[]> {
    const rows = await this.#backend.transaction("read", (tx) => tx.queue.deadUnhandled(sessionId, limit));
    return rows.map((r) => ({
      itemId: r.itemId,
      kind: r.kind,
      seq: r.seq,
      at: r.doneAt ?? r.createdAt,
      why: r.doneBy?.startsWith("dead:") ? r.doneBy.slice(5) : (r.doneBy ?? "dead-lettered"),
    }));
  }

  /** Redeliver expired leases; dead-letter items out of attempts. */
  async #expire(tx: StoreTx, now: Date): Promise<void> {
    for (const item of await tx.queue.expiredLeases(now.getTime())) {
      if (item.leaseId) await tx.queue.setLeaseState(item.leaseId, "expired");
      if (item.attempts >= item.maxAttempts) await this.#deadLetter(tx, item, now, `its lease expired on delivery ${item.attempts}`);
      else await tx.queue.setReady(item.itemId, now.getTime());
    }
  }

  async #deadLetter(tx: StoreTx, item: WorkItemRow, now: Date, why: string): Promise<void> {
    await tx.queue.setFinal(item.itemId, { state: "dead", doneAt: now.toISOString(), doneBy: `dead:${why}`, resultSeq: null });
    await tx.insertDiagnostic({
      sessionId: item.sessionId,
      code: "work_dead_lettered",
      severity: "error",
      message: deadLetterMessage(item, why),
      at: now.toISOString(),
    });
  }

  /** The item a lease still holds, or `lease_lost` / `not_found`. */
  async #ownedItem(tx: StoreTx, leaseId: string, now: Date): Promise<{ item: WorkItemRow }> {
    const lease = await tx.queue.getLease(leaseId);
    if (!lease) throw unknownLease(leaseId);
    const item = await tx.queue.getItem(lease.itemId);
    if (!item) throw unknownLease(leaseId);
    this.#assertHolder(item, leaseId, lease.state, now);
    return { item };
  }

  /**
   * A lease holds its item while it is the item's last lease and was neither released nor
   * acked: leased, or expired but not yet delivered to anyone else (the holder may still
   * finish; nobody else is working on it).
   */
  #assertHolder(item: WorkItemRow, leaseId: string, leaseState: string, now: Date): void {
    const last = item.leaseId === leaseId;
    if (last && (item.state === "leased" || (item.state === "ready" && (leaseState === "active" || leaseState === "expired")))) return;
    const why =
      item.state === "done"
        ? "the item was already finished by another delivery"
        : item.state === "dead"
          ? "the item was dead-lettered"
          : !last
            ? "its lease expired and the item was delivered again"
            : "the lease was released";
    throw new BatonError("lease_lost", `lease ${leaseId} no longer holds ${item.itemId}: ${why}. Poll again for current work`, {
      leaseId,
      itemId: item.itemId,
      itemState: item.state,
      at: now.toISOString(),
    });
  }

  #leaseMs(ms: number | undefined): number {
    const v = ms ?? this.#defaultLeaseMs;
    if (!Number.isInteger(v) || v < MIN_LEASE_MS || v > MAX_LEASE_MS) {
      throw badInput(`lease length must be a whole number of milliseconds between ${MIN_LEASE_MS} and ${MAX_LEASE_MS}, got ${ms}`);
    }
    return v;
  }
}

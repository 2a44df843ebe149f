/** The delivery queue's queries on SQLite (tables from migration 2). */
import type { EventRow, LeaseRow, LeaseState, QueueQueries, WorkItemRow, WorkVersion } from "../contract.js";
import { type RawWorkVersion, toWorkVersion, workVersionSql } from "../rows.js";
import { SESSION_LAST_SEQ } from "./sqlite-journal.js";
import type { Prepare } from "./sqlite-types.js";

interface RawItem {
  item_id: string;
  session_id: string;
  seq: number;
  kind: string;
  priority: number;
  state: WorkItemRow["state"];
  attempts: number;
  max_attempts: number;
  available_ms: number;
  lease_id: string | null;
  lease_owner: string | null;
  lease_expires_ms: number | null;
  created_at: string;
  done_at: string | null;
  done_by: string | null;
  result_seq: number | null;
}

const toItem = (r: RawItem): WorkItemRow => ({
  itemId: r.item_id,
  sessionId: r.session_id,
  seq: r.seq,
  kind: r.kind,
  priority: r.priority,
  state: r.state,
  attempts: r.attempts,
  maxAttempts: r.max_attempts,
  availableMs: r.available_ms,
  leaseId: r.lease_id,
  leaseOwner: r.lease_owner,
  leaseExpiresMs: r.lease_expires_ms,
  createdAt: r.created_at,
  doneAt: r.done_at,
  doneBy: r.done_by,
  resultSeq: r.result_seq,
});

export class SqliteQueueQueries implements QueueQueries {
  readonly #stmt: Prepare;
  constructor(stmt: Prepare) {
    this.#stmt = stmt;
  }
  async insertItem(r: WorkItemRow): Promise<void> {
    this.#stmt(
      `INSERT INTO work_items (item_id, session_id, seq, kind, priority, state, attempts, max_attempts, available_ms,
         lease_id, lease_owner, lease_expires_ms, created_at, done_at, done_by, result_seq)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      r.itemId,
      r.sessionId,
      r.seq,
      r.kind,
      r.priority,
      r.state,
      r.attempts,
      r.maxAttempts,
      r.availableMs,
      r.leaseId,
      r.leaseOwner,
      r.leaseExpiresMs,
      r.createdAt,
      r.doneAt,
      r.doneBy,
      r.resultSeq,
    );
  }
  async getItem(itemId: string): Promise<WorkItemRow | undefined> {
    const r = this.#stmt("SELECT * FROM work_items WHERE item_id = ?").get(itemId) as RawItem | undefined;
    return r && toItem(r);
  }
  async expiredLeases(nowMs: number): Promise<WorkItemRow[]> {
    const rows = this.#stmt("SELECT * FROM work_items WHERE state = 'leased' AND lease_expires_ms <= ? ORDER BY item_no").all(
      nowMs,
    ) as RawItem[];
    return rows.map(toItem);
  }
  async claimReady(
    o: { nowMs: number; sessionId?: string; kinds?: readonly string[]; unlessExpired?: boolean },
    leases: readonly { leaseId: string; owner: string; expiresMs: number }[],
    acquiredAt: string,
  ): Promise<{ claimed: { item: WorkItemRow; event: EventRow | undefined }[]; expired: boolean }> {
    if (
      o.unlessExpired &&
      this.#stmt("SELECT 1 FROM work_items WHERE state = 'leased' AND lease_expires_ms <= ? LIMIT 1").get(o.nowMs) !== undefined
    )
      return { claimed: [], expired: true };
    const claimed: { item: WorkItemRow; event: EventRow | undefined }[] = [];
    for (const l of leases) {
      const one = this.#claimOne(o, l, acquiredAt);
      if (!one) break;
      claimed.push(one);
    }
    return { claimed, expired: false };
  }
  #claimOne(
    o: { nowMs: number; sessionId?: string; kinds?: readonly string[] },
    l: { leaseId: string; owner: string; expiresMs: number },
    acquiredAt: string,
  ): { item: WorkItemRow; event: EventRow | undefined } | undefined {
    const kinds = o.kinds?.length ? JSON.stringify(o.kinds) : null;
    // Two statements, not `@session IS NULL OR …`: only a plain equality lets the planner walk
    // work_items_session_ready (one session's ready items, already in delivery order).
    const next = (
      o.sessionId === undefined
        ? this.#stmt(
            `SELECT item_id FROM work_items
             WHERE state = 'ready' AND available_ms <= @now
               AND (@kinds IS NULL OR kind IN (SELECT value FROM json_each(@kinds)))
             ORDER BY priority, item_no LIMIT 1`,
          ).get({ now: o.nowMs, kinds })
        : this.#stmt(
            `SELECT item_id FROM work_items
             WHERE session_id = @session AND state = 'ready' AND available_ms <= @now
               AND (@kinds IS NULL OR kind IN (SELECT value FROM json_each(@kinds)))
             ORDER BY priority, item_no LIMIT 1`,
          ).get({ now: o.nowMs, session: o.sessionId, kinds })
    ) as { item_id: string } | undefined;
    if (!next) return undefined;
    // Guarded by state: the claim is one compare-and-set, whatever ran between the two statements.
    const r = this.#stmt(
      `UPDATE work_items SET state = 'leased', lease_id = ?, lease_owner = ?, lease_expires_ms = ?, attempts = attempts + 1
       WHERE item_id = ? AND state = 'ready' RETURNING *`,
    ).get(l.leaseId, l.owner, l.expiresMs, next.item_id) as RawItem | undefined;
    if (!r) return undefined;
    const item = toItem(r);
    this.#insertLease({
      leaseId: l.leaseId,
      itemId: item.itemId,
      owner: l.owner,
      attempt: item.attempts,
      acquiredAt,
      state: "active",
      resultSeq: null,
    });
    const e = this.#stmt("SELECT * FROM events WHERE session_id = ? AND seq = ?").get(item.sessionId, item.seq) as
      | {
          session_id: string;
          seq: number;
          id: string;
          type: string;
          actor: string;
          data: string;
          revision: number | null;
          at: string;
          body_hash: string;
          outcome: string;
        }
      | undefined;
    return {
      item,
      event: e && {
        sessionId: e.session_id,
        seq: e.seq,
        id: e.id,
        type: e.type,
        actor: e.actor,
        data: e.data,
        revision: e.revision,
        at: e.at,
        bodyHash: e.body_hash,
        outcome: e.outcome,
      },
    };
  }
  async ackHeld(leaseIds: readonly string[], doneAt: string): Promise<{ leaseId: string; itemId: string }[]> {
    const out: { leaseId: string; itemId: string }[] = [];
    for (const leaseId of new Set(leaseIds)) {
      const r = this.#stmt(
        `UPDATE work_items SET state = 'done', done_at = @at, done_by = 'lease:' || @lease, result_seq = NULL, lease_expires_ms = NULL
         WHERE item_id = (SELECT item_id FROM leases WHERE lease_id = @lease AND state IN ('active', 'expired'))
           AND lease_id = @lease AND state IN ('leased', 'ready')
         RETURNING item_id`,
      ).get({ lease: leaseId, at: doneAt }) as { item_id: string } | undefined;
      if (!r) continue;
      this.#stmt("UPDATE leases SET state = 'acked' WHERE lease_id = ?").run(leaseId);
      out.push({ leaseId, itemId: r.item_id });
    }
    return out;
  }
  async nextWakeMs(nowMs: number): Promise<number | undefined> {
    const r = this.#stmt(
      `SELECT min(t) AS t FROM (
         SELECT min(available_ms) AS t FROM work_items WHERE state = 'ready' AND available_ms > @now
         UNION ALL SELECT min(lease_expires_ms) FROM work_items WHERE state = 'leased')`,
    ).get({ now: nowMs }) as { t: number | null };
    return r.t ?? undefined;
  }
  async workVersion(sessionId: string): Promise<WorkVersion> {
    // The id twice: for the dead items and for the session.
    return toWorkVersion(this.#stmt(workVersionSql("?", "?", SESSION_LAST_SEQ)).all(sessionId, sessionId) as RawWorkVersion[]);
  }
  async openItems(sessionId?: string): Promise<WorkItemRow[]> {
    const rows = (
      sessionId === undefined
        ? this.#stmt("SELECT * FROM work_items WHERE state IN ('ready', 'leased') ORDER BY priority, item_no").all()
        : this.#stmt("SELECT * FROM work_items WHERE session_id = ? AND state IN ('ready', 'leased') ORDER BY priority, item_no").all(
            sessionId,
          )
    ) as RawItem[];
    return rows.map(toItem);
  }
  async setLeased(itemId: string, l: { leaseId: string; owner: string; expiresMs: number; attempts: number }): Promise<void> {
    this.#stmt(
      "UPDATE work_items SET state = 'leased', lease_id = ?, lease_owner = ?, lease_expires_ms = ?, attempts = ? WHERE item_id = ?",
    ).run(l.leaseId, l.owner, l.expiresMs, l.attempts, itemId);
  }
  async extendLease(itemId: string, leaseId: string, expiresMs: number): Promise<void> {
    this.#stmt("UPDATE work_items SET lease_expires_ms = ? WHERE item_id = ? AND lease_id = ?").run(expiresMs, itemId, leaseId);
  }
  async setReady(itemId: string, availableMs: number): Promise<void> {
    this.#stmt(
      "UPDATE work_items SET state = 'ready', available_ms = ?, lease_owner = NULL, lease_expires_ms = NULL WHERE item_id = ?",
    ).run(availableMs, itemId);
  }
  async setFinal(itemId: string, f: { state: "done" | "dead"; doneAt: string; doneBy: string; resultSeq: number | null }): Promise<void> {
    this.#stmt("UPDATE work_items SET state = ?, done_at = ?, done_by = ?, result_seq = ?, lease_expires_ms = NULL WHERE item_id = ?").run(
      f.state,
      f.doneAt,
      f.doneBy,
      f.resultSeq,
      itemId,
    );
  }
  async requeueDead(itemId: string, availableMs: number): Promise<boolean> {
    const r = this.#stmt(
      `UPDATE work_items SET state = 'ready', attempts = 0, available_ms = ?, lease_id = NULL, lease_owner = NULL, lease_expires_ms = NULL,
         done_at = NULL, done_by = NULL, result_seq = NULL
       WHERE item_id = ? AND state = 'dead' AND handled_seq IS NULL`,
    ).run(availableMs, itemId);
    return r.changes === 1;
  }
  async insertLease(r: LeaseRow): Promise<void> {
    this.#insertLease(r);
  }
  #insertLease(r: LeaseRow): void {
    this.#stmt("INSERT INTO leases (lease_id, item_id, owner, attempt, acquired_at, state, result_seq) VALUES (?, ?, ?, ?, ?, ?, ?)").run(
      r.leaseId,
      r.itemId,
      r.owner,
      r.attempt,
      r.acquiredAt,
      r.state,
      r.resultSeq,
    );
  }
  async getLease(leaseId: string): Promise<LeaseRow | undefined> {
    const r = this.#stmt("SELECT * FROM leases WHERE lease_id = ?").get(leaseId) as
      | {
          lease_id: string;
          item_id: string;
          owner: string;
          attempt: number;
          acquired_at: string;
          state: LeaseState;
          result_seq: number | null;
        }
      | undefined;
    return (
      r && {
        leaseId: r.lease_id,
        itemId: r.item_id,
        owner: r.owner,
        attempt: r.attempt,
        acquiredAt: r.acquired_at,
        state: r.state,
        resultSeq: r.result_seq,
      }
    );
  }
  async leasedBy(owners: readonly string[]): Promise<WorkItemRow[]> {
    if (owners.length === 0) return [];
    const rows = this.#stmt(
      "SELECT * FROM work_items WHERE state = 'leased' AND lease_owner IN (SELECT value FROM json_each(?)) ORDER BY priority, item_no",
    ).all(JSON.stringify(owners)) as RawItem[];
    return rows.map(toItem);
  }
  async setLeaseState(leaseId: string, state: LeaseState, resultSeq: number | null = null): Promise<void> {
    this.#stmt("UPDATE leases SET state = ?, result_seq = coalesce(?, result_seq) WHERE lease_id = ?").run(state, resultSeq, leaseId);
  }
  async deadUnhandled(sessionId: string, limit: number): Promise<WorkItemRow[]> {
    const rows = this.#stmt(
      "SELECT * FROM work_items WHERE session_id = ? AND state = 'dead' AND handled_seq IS NULL ORDER BY item_no LIMIT ?",
    ).all(sessionId, limit) as RawItem[];
    return rows.map(toItem);
  }
  async markDeadHandled(
    sessionId: string,
    match: { kinds: readonly string[]; seqs: readonly number[] },
    handledSeq: number,
  ): Promise<void> {
    this.#stmt(
      `UPDATE work_items SET handled_seq = @handled
       WHERE session_id = @session AND state = 'dead' AND handled_seq IS NULL AND seq < @handled
         AND (kind IN (SELECT value FROM json_each(@kinds)) OR seq IN (SELECT value FROM json_each(@seqs)))`,
    ).run({ handled: handledSeq, session: sessionId, kinds: JSON.stringify(match.kinds), seqs: JSON.stringify(match.seqs) });
  }
}

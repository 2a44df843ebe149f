/**
 * The delivery queue's queries on PostgreSQL. A claim is one statement: the first ready item
 * no other claimer holds (`FOR UPDATE SKIP LOCKED`), updated and returned, so N workers never
 * wait on each other and never get the same item.
 */
import type { EventRow, LeaseRow, LeaseState, QueueQueries, WorkItemRow, WorkVersion } from "../contract.js";
import { type RawWorkVersion, toWorkVersion, workVersionSql } from "../rows.js";
import { held, type PgCtx } from "./pg-types.js";

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

/** The claimed item's event, joined in (null when the journal row is missing). */
interface RawEventCols {
  ev_id: string | null;
  ev_type: string | null;
  ev_actor: string | null;
  ev_data: string | null;
  ev_revision: number | null;
  ev_at: string | null;
  ev_body_hash: string | null;
  ev_outcome: string | null;
  ev_seq: number | null;
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

/**
 * The claim, as one statement. `x`: whether the caller wants expired leases returned first and
 * some exist (then nothing is claimed). `p`: up to $5 ready items in delivery order that no
 * other claimer holds, numbered. `c`: the k-th is leased under the k-th requested lease, read
 * from the lease arrays by subscript (joining an `unnest` of them instead re-ran it for every
 * item: 16 × 16 rows per claim of 16). `l`: the lease rows. Then each claimed item with its
 * event; one row with a null claim_no when nothing was claimed, so `expired` always comes
 * back. One text per filter shape, not
 * `$n IS NULL OR …`: a prepared statement's generic plan cannot tell those apart, and with
 * them it sorted every ready item on each claim instead of walking an index in order
 * (work_items_ready, or work_items_session_open for one session).
 */
const claimSql = (session: boolean, kinds: boolean) => `
  WITH x AS (
    SELECT $6::boolean AND EXISTS (SELECT 1 FROM work_items WHERE state = 'leased' AND lease_expires_ms <= $4) AS expired),
  p AS (
    SELECT item_no, (row_number() OVER (ORDER BY priority, item_no))::int AS n FROM (
      SELECT item_no, priority FROM work_items
      WHERE state = 'ready' AND available_ms <= $4${session ? " AND session_id = $8" : ""}${kinds ? ` AND kind = ANY ($${session ? 9 : 8}::text[])` : ""}
        AND NOT (SELECT expired FROM x)
      ORDER BY priority, item_no LIMIT $5 FOR UPDATE SKIP LOCKED) s),
  c AS (
    UPDATE work_items w SET state = 'leased', lease_id = ($1::text[])[p.n], lease_owner = ($2::text[])[p.n],
      lease_expires_ms = ($3::bigint[])[p.n], attempts = w.attempts + 1
    FROM p WHERE w.item_no = p.item_no
    RETURNING w.*, p.n AS claim_no),
  l AS (
    INSERT INTO leases (lease_id, item_id, owner, attempt, acquired_at, state, result_seq)
    SELECT lease_id, item_id, lease_owner, attempts, $7, 'active', NULL FROM c)
  SELECT x.expired, c.*, e.id AS ev_id, e.type AS ev_type, e.actor AS ev_actor, e.data AS ev_data, e.revision AS ev_revision,
         e.at AS ev_at, e.body_hash AS ev_body_hash, e.outcome AS ev_outcome, e.seq AS ev_seq
  FROM x LEFT JOIN c ON true LEFT JOIN events e ON e.session_id = c.session_id AND e.seq = c.seq
  ORDER BY c.claim_no`;
/** By [session filter][kinds filter]. */
const CLAIM_SQL = [
  [claimSql(false, false), claimSql(false, true)],
  [claimSql(true, false), claimSql(true, true)],
] as const;

/**
 * The ack of held leases, as one statement. `l`: the leases still open, locked in lease-id
 * order (as one ack at a time would lock its lease before its item; under READ COMMITTED a row
 * changed meanwhile is re-read and re-checked), each looked up by its key. `f`: their items,
 * when each lease is still the item's last and the item leased or ready (expired, not
 * delivered again), finished. `a`: those leases acked.
 *
 * Per key, not `lease_id = ANY ($1)`: a prepared statement keeps the plan it made while the
 * table was small, and that one was planned as a scan of every lease on a young table and kept
 * as it grew (0.03 ms per ack at 80 leases, 0.6 ms at 3,800, in one run of 4,000 items); a
 * probe per key takes the index at any size. `LIMIT $3` (the number of keys, so it drops none)
 * makes the planner count on few keys, so `f` also finds the items by index rather than by a
 * hash of every open item.
 */
const ACK_HELD_SQL = `
  WITH l AS (
    SELECT x.lease_id, x.item_id FROM (SELECT DISTINCT k FROM unnest($1::text[]) AS k ORDER BY k LIMIT $3) AS k
    CROSS JOIN LATERAL (
      SELECT leases.lease_id, leases.item_id FROM leases
      WHERE leases.lease_id = k.k AND leases.state IN ('active', 'expired') FOR UPDATE) AS x),
  f AS (
    UPDATE work_items w SET state = 'done', done_at = $2, done_by = 'lease:' || l.lease_id, result_seq = NULL, lease_expires_ms = NULL
    FROM l WHERE w.item_id = l.item_id AND w.lease_id = l.lease_id AND w.state IN ('leased', 'ready')
    RETURNING l.lease_id, w.item_id),
  a AS (UPDATE leases SET state = 'acked' FROM f WHERE leases.lease_id = f.lease_id)
  SELECT lease_id, item_id FROM f`;

export class PgQueueQueries implements QueueQueries {
  readonly #c: PgCtx;
  constructor(c: PgCtx) {
    this.#c = c;
  }
  async insertItem(r: WorkItemRow): Promise<void> {
    await this.#c.run(
      `INSERT INTO work_items (item_id, session_id, seq, kind, priority, state, attempts, max_attempts, available_ms,
         lease_id, lease_owner, lease_expires_ms, created_at, done_at, done_by, result_seq)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
      [
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
      ],
    );
  }
  async getItem(itemId: string): Promise<WorkItemRow | undefined> {
    const [r] = await this.#c.rows<RawItem>(`SELECT * FROM work_items WHERE item_id = $1${held(this.#c)}`, [itemId]);
    return r && toItem(r);
  }
  async expiredLeases(nowMs: number): Promise<WorkItemRow[]> {
    const rows = await this.#c.rows<RawItem>(
      `SELECT * FROM work_items WHERE state = 'leased' AND lease_expires_ms <= $1 ORDER BY item_no${this.#c.write ? " FOR UPDATE SKIP LOCKED" : ""}`,
      [nowMs],
    );
    return rows.map(toItem);
  }
  async claimReady(
    o: { nowMs: number; sessionId?: string; kinds?: readonly string[]; unlessExpired?: boolean },
    leases: readonly { leaseId: string; owner: string; expiresMs: number }[],
    acquiredAt: string,
  ): Promise<{ claimed: { item: WorkItemRow; event: EventRow | undefined }[]; expired: boolean }> {
    if (leases.length === 0) return { claimed: [], expired: false };
    // One round trip: look for expired leases, claim one ready item per lease (the k-th in
    // delivery order goes to the k-th lease), record the leases, read the events.
    const kinds = o.kinds?.length ? [[...o.kinds]] : [];
    const session = o.sessionId === undefined ? [] : [o.sessionId];
    const sql = CLAIM_SQL[o.sessionId === undefined ? 0 : 1][kinds.length === 0 ? 0 : 1];
    const rows = await this.#c.rows<RawItem & RawEventCols & { expired: boolean; claim_no: number | null }>(
      sql,
      [
        leases.map((l) => l.leaseId),
        leases.map((l) => l.owner),
        leases.map((l) => l.expiresMs),
        o.nowMs,
        leases.length,
        o.unlessExpired === true,
        acquiredAt,
        ...session,
        ...kinds,
      ],
      // It always returns a row (the expired flag): only a claim is a change. Counted as one
      // whatever was asked, every parked waiter re-claimed about every 100 ms, woken by its own
      // empty claims' notices.
      false,
    );
    const claimed = rows
      .filter((r) => r.claim_no !== null)
      .map((r) => {
        const item = toItem(r);
        const event: EventRow | undefined =
          r.ev_id === null
            ? undefined
            : {
                sessionId: item.sessionId,
                seq: r.ev_seq as number,
                id: r.ev_id,
                type: r.ev_type as string,
                actor: r.ev_actor as string,
                data: r.ev_data as string,
                revision: r.ev_revision,
                at: r.ev_at as string,
                bodyHash: r.ev_body_hash as string,
                outcome: r.ev_outcome as string,
              };
        return { item, event };
      });
    if (claimed.length > 0) this.#c.noteChange();
    return { claimed, expired: rows[0]?.expired === true };
  }
  async ackHeld(leaseIds: readonly string[], doneAt: string): Promise<{ leaseId: string; itemId: string }[]> {
    if (leaseIds.length === 0) return [];
    const rows = await this.#c.rows<{ lease_id: string; item_id: string }>(ACK_HELD_SQL, [[...leaseIds], doneAt, leaseIds.length], true);
    return rows.map((r) => ({ leaseId: r.lease_id, itemId: r.item_id }));
  }
  async nextWakeMs(nowMs: number): Promise<number | undefined> {
    const [r] = await this.#c.rows<{ t: number | null }>(
      `SELECT least((SELECT min(available_ms) FROM work_items WHERE state = 'ready' AND available_ms > $1),
                    (SELECT min(lease_expires_ms) FROM work_items WHERE state = 'leased')) AS t`,
      [nowMs],
    );
    return r?.t ?? undefined;
  }
  async workVersion(sessionId: string): Promise<WorkVersion> {
    // One statement: READ COMMITTED gives each statement its own snapshot, and parts read in
    // two could make a state that never was, which a later one could equal.
    return toWorkVersion(await this.#c.rows<RawWorkVersion>(workVersionSql("$1"), [sessionId]));
  }
  async openItems(sessionId?: string): Promise<WorkItemRow[]> {
    const rows =
      sessionId === undefined
        ? await this.#c.rows<RawItem>(
            `SELECT * FROM work_items WHERE state IN ('ready', 'leased') ORDER BY priority, item_no${held(this.#c)}`,
          )
        : await this.#c.rows<RawItem>(
            `SELECT * FROM work_items WHERE session_id = $1 AND state IN ('ready', 'leased') ORDER BY priority, item_no${held(this.#c)}`,
            [sessionId],
          );
    return rows.map(toItem);
  }
  async setLeased(itemId: string, l: { leaseId: string; owner: string; expiresMs: number; attempts: number }): Promise<void> {
    await this.#c.run(
      "UPDATE work_items SET state = 'leased', lease_id = $1, lease_owner = $2, lease_expires_ms = $3, attempts = $4 WHERE item_id = $5",
      [l.leaseId, l.owner, l.expiresMs, l.attempts, itemId],
    );
  }
  async extendLease(itemId: string, leaseId: string, expiresMs: number): Promise<void> {
    await this.#c.run("UPDATE work_items SET lease_expires_ms = $1 WHERE item_id = $2 AND lease_id = $3", [expiresMs, itemId, leaseId]);
  }
  async setReady(itemId: string, availableMs: number): Promise<void> {
    await this.#c.run(
      "UPDATE work_items SET state = 'ready', available_ms = $1, lease_owner = NULL, lease_expires_ms = NULL WHERE item_id = $2",
      [availableMs, itemId],
    );
  }
  async setFinal(itemId: string, f: { state: "done" | "dead"; doneAt: string; doneBy: string; resultSeq: number | null }): Promise<void> {
    await this.#c.run(
      "UPDATE work_items SET state = $1, done_at = $2, done_by = $3, result_seq = $4, lease_expires_ms = NULL WHERE item_id = $5",
      [f.state, f.doneAt, f.doneBy, f.resultSeq, itemId],
    );
  }
  async requeueDead(itemId: string, availableMs: number): Promise<boolean> {
    const changed = await this.#c.run(
      `UPDATE work_items SET state = 'ready', attempts = 0, available_ms = $1, lease_id = NULL, lease_owner = NULL, lease_expires_ms = NULL,
         done_at = NULL, done_by = NULL, result_seq = NULL
       WHERE item_id = $2 AND state = 'dead' AND handled_seq IS NULL`,
      [availableMs, itemId],
    );
    return changed === 1;
  }
  async insertLease(r: LeaseRow): Promise<void> {
    await this.#c.run(
      "INSERT INTO leases (lease_id, item_id, owner, attempt, acquired_at, state, result_seq) VALUES ($1, $2, $3, $4, $5, $6, $7)",
      [r.leaseId, r.itemId, r.owner, r.attempt, r.acquiredAt, r.state, r.resultSeq],
    );
  }
  async getLease(leaseId: string): Promise<LeaseRow | undefined> {
    const [r] = await this.#c.rows<{
      lease_id: string;
      item_id: string;
      owner: string;
      attempt: number;
      acquired_at: string;
      state: LeaseState;
      result_seq: number | null;
    }>(`SELECT * FROM leases WHERE lease_id = $1${held(this.#c)}`, [leaseId]);
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
    const rows = await this.#c.rows<RawItem>(
      `SELECT * FROM work_items WHERE state = 'leased' AND lease_owner = ANY ($1) ORDER BY priority, item_no${held(this.#c)}`,
      [[...owners]],
    );
    return rows.map(toItem);
  }
  async deadUnhandled(sessionId: string, limit: number): Promise<WorkItemRow[]> {
    const rows = await this.#c.rows<RawItem>(
      "SELECT * FROM work_items WHERE session_id = $1 AND state = 'dead' AND handled_seq IS NULL ORDER BY item_no LIMIT $2",
      [sessionId, limit],
    );
    return rows.map(toItem);
  }
  async markDeadHandled(
    sessionId: string,
    match: { kinds: readonly string[]; seqs: readonly number[] },
    handledSeq: number,
  ): Promise<void> {
    await this.#c.run(
      `UPDATE work_items SET handled_seq = $1
       WHERE session_id = $2 AND state = 'dead' AND handled_seq IS NULL AND seq < $1 AND (kind = ANY ($3) OR seq = ANY ($4))`,
      [handledSeq, sessionId, [...match.kinds], [...match.seqs]],
    );
  }
  async setLeaseState(leaseId: string, state: LeaseState, resultSeq: number | null = null): Promise<void> {
    await this.#c.run("UPDATE leases SET state = $1, result_seq = coalesce($2, result_seq) WHERE lease_id = $3", [
      state,
      resultSeq,
      leaseId,
    ]);
  }
}

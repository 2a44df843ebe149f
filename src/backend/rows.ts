/**
 * Row shapes shared by the SQLite and PostgreSQL backends: both store the same columns under
 * the same names, so each table's raw row and its mapping to the contract's row live once.
 */
import type { EventRow, LockRow, SessionRow, WorkVersion } from "./contract.js";

export interface RawLock {
  name: string;
  epoch: number;
  state: LockRow["state"];
  owner: string;
  pid: number | null;
  host: string | null;
  host_id: string | null;
  start_time: string | null;
  run_id: string | null;
  acquired_at: string;
  heartbeat_at: string;
  expires_ms: number;
  ttl_ms: number;
  released_at: string | null;
  release_reason: string | null;
}

export const toLock = (r: RawLock): LockRow => ({
  name: r.name,
  epoch: r.epoch,
  state: r.state,
  owner: r.owner,
  pid: r.pid,
  host: r.host,
  hostId: r.host_id,
  startTime: r.start_time,
  runId: r.run_id,
  acquiredAt: r.acquired_at,
  heartbeatAt: r.heartbeat_at,
  expiresMs: r.expires_ms,
  ttlMs: r.ttl_ms,
  releasedAt: r.released_at,
  releaseReason: r.release_reason,
});

export interface RawSession {
  id: string;
  flow: string;
  title: string | null;
  phase: string;
  status: "active" | "completed";
  created_at: string;
  updated_at: string;
  last_seq: number;
}
export interface RawEvent {
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

export const toSession = (r: RawSession): SessionRow => ({
  id: r.id,
  flow: r.flow,
  title: r.title,
  phase: r.phase,
  status: r.status,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  lastSeq: r.last_seq,
});
export const toEvent = (r: RawEvent): EventRow => ({
  sessionId: r.session_id,
  seq: r.seq,
  id: r.id,
  type: r.type,
  actor: r.actor,
  data: r.data,
  revision: r.revision,
  at: r.at,
  bodyHash: r.body_hash,
  outcome: r.outcome,
});

/**
 * A row of `workVersion`'s statement: the session's last seq and its dead items' figures, and an
 * open item, or nulls in its columns when none is open.
 */
export interface RawWorkVersion {
  lastSeq: number;
  deadCount: number;
  deadLeases: number;
  lastDeadAt: string | null;
  itemId: string | null;
  state: string | null;
  attempts: number | null;
  leaseId: string | null;
  leaseExpiresMs: number | null;
  availableMs: number | null;
  leases: number | null;
}

export const toWorkVersion = (rows: readonly RawWorkVersion[]): WorkVersion => {
  const first = rows[0];
  return {
    lastSeq: first?.lastSeq ?? null,
    open: rows.flatMap((r) =>
      r.itemId === null
        ? []
        : [
            {
              itemId: r.itemId,
              state: r.state as string,
              attempts: r.attempts as number,
              leaseId: r.leaseId,
              leaseExpiresMs: r.leaseExpiresMs,
              availableMs: r.availableMs as number,
              leases: r.leases as number,
            },
          ],
    ),
    dead: { count: first?.deadCount ?? 0, leases: first?.deadLeases ?? 0, lastAt: first?.lastDeadAt ?? null },
  };
};

/**
 * `workVersion`'s statement, `pDead` standing for the session's id where its dead items are read
 * and `p` where its row is (each engine writes its own parameters: `$1` twice, or `?` and `?`
 * bound to the same id, in that order): one snapshot of the session's row, its open items and
 * its dead ones. The dead items' count, leases and newest death are read once, into a
 * materialized row joined to every open item's. Read by scalar subqueries beside each open item
 * they were read again for each (100 open items beside 5,000 handled dead ones: 81 ms on
 * SQLite), and PostgreSQL's generic plan for a prepared statement, which expects one open item,
 * reads a derived table that is not materialized again for each too. `lastSeq` is the session's
 * last seq as the engine reads it (SQLite: from its events, SESSION_LAST_SEQ).
 */
export const workVersionSql = (p: string, pDead: string = p, lastSeq = "s.last_seq"): string => `
  WITH dd AS MATERIALIZED (
    SELECT count(DISTINCT d.item_id) AS dead_count, count(l.item_id) AS dead_leases, max(d.done_at) AS last_dead_at
      FROM work_items d LEFT JOIN leases l ON l.item_id = d.item_id
     WHERE d.session_id = ${pDead} AND d.state = 'dead' AND d.handled_seq IS NULL)
  SELECT ${lastSeq} AS "lastSeq", dd.dead_count AS "deadCount", dd.dead_leases AS "deadLeases", dd.last_dead_at AS "lastDeadAt",
         w.item_id AS "itemId", w.state AS "state", w.attempts AS "attempts", w.lease_id AS "leaseId",
         w.lease_expires_ms AS "leaseExpiresMs", w.available_ms AS "availableMs",
         (SELECT count(*) FROM leases l WHERE l.item_id = w.item_id) AS "leases"
  FROM sessions s
  CROSS JOIN dd
  LEFT JOIN work_items w ON w.session_id = s.id AND w.state IN ('ready', 'leased')
  WHERE s.id = ${p}
  ORDER BY w.priority, w.item_no`;

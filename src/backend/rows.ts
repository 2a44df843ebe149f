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

/** A row of `workVersion`'s statement: the session's last seq, and an open item or (none open) nulls. */
export type RawWorkVersion = { lastSeq: number; itemId: string | null } & Omit<WorkVersion["open"][number], "itemId">;

export const toWorkVersion = (rows: readonly RawWorkVersion[]): WorkVersion => ({
  lastSeq: rows[0]?.lastSeq ?? null,
  open: rows.flatMap((r) =>
    r.itemId === null
      ? []
      : [
          {
            itemId: r.itemId,
            state: r.state,
            attempts: r.attempts,
            leaseId: r.leaseId,
            leaseExpiresMs: r.leaseExpiresMs,
            leases: r.leases,
          },
        ],
  ),
});

/** Named locks and agent runs on SQLite (tables from migration 6; the holder's host identity from 17). */
import type { LockQueries, LockRow, RunQueries, RunRow, RunState } from "../contract.js";
import { type RawLock, toLock } from "../rows.js";
import type { Prepare } from "./sqlite-types.js";

export class SqliteLockQueries implements LockQueries {
  readonly #stmt: Prepare;
  constructor(stmt: Prepare) {
    this.#stmt = stmt;
  }
  async getLock(name: string): Promise<LockRow | undefined> {
    const r = this.#stmt("SELECT * FROM locks WHERE name = ?").get(name) as RawLock | undefined;
    return r && toLock(r);
  }
  async listLocks(): Promise<LockRow[]> {
    return (this.#stmt("SELECT * FROM locks ORDER BY name").all() as RawLock[]).map(toLock);
  }
  async acquireLock(r: LockRow, prevEpoch: number | null): Promise<boolean> {
    const args = [
      r.name,
      r.epoch,
      r.state,
      r.owner,
      r.pid,
      r.host,
      r.hostId,
      r.startTime,
      r.runId,
      r.acquiredAt,
      r.heartbeatAt,
      r.expiresMs,
      r.ttlMs,
      r.releasedAt,
      r.releaseReason,
    ];
    if (prevEpoch === null) {
      return (
        this.#stmt(
          `INSERT INTO locks (name, epoch, state, owner, pid, host, host_id, start_time, run_id, acquired_at, heartbeat_at,
             expires_ms, ttl_ms, released_at, release_reason)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING`,
        ).run(...args).changes > 0
      );
    }
    // Replace only the row this acquisition read: a newer epoch means someone else won.
    const replaced = this.#stmt(
      `UPDATE locks SET epoch = ?, state = ?, owner = ?, pid = ?, host = ?, host_id = ?, start_time = ?, run_id = ?, acquired_at = ?,
         heartbeat_at = ?, expires_ms = ?, ttl_ms = ?, released_at = ?, release_reason = ?
       WHERE name = ? AND epoch = ?`,
    ).run(...args.slice(1), r.name, prevEpoch);
    return replaced.changes > 0;
  }
  async heartbeatLock(name: string, epoch: number, heartbeatAt: string, expiresMs: number, ttlMs: number): Promise<boolean> {
    const r = this.#stmt(
      "UPDATE locks SET heartbeat_at = ?, expires_ms = ?, ttl_ms = ? WHERE name = ? AND epoch = ? AND state = 'held'",
    ).run(heartbeatAt, expiresMs, ttlMs, name, epoch);
    return r.changes > 0;
  }
  async freeLock(name: string, epoch: number, at: string, reason: string): Promise<boolean> {
    const r = this.#stmt(
      "UPDATE locks SET state = 'free', released_at = ?, release_reason = ? WHERE name = ? AND epoch = ? AND state = 'held'",
    ).run(at, reason, name, epoch);
    return r.changes > 0;
  }
}

interface RawRun {
  session_id: string;
  run_id: string;
  agent: string;
  pid: number | null;
  host: string | null;
  host_id: string | null;
  start_time: string | null;
  started_at: string;
  heartbeat_at: string;
  ttl_ms: number;
  state: RunState;
  ended_at: string | null;
}

const toRun = (r: RawRun): RunRow => ({
  sessionId: r.session_id,
  runId: r.run_id,
  agent: r.agent,
  pid: r.pid,
  host: r.host,
  hostId: r.host_id,
  startTime: r.start_time,
  startedAt: r.started_at,
  heartbeatAt: r.heartbeat_at,
  ttlMs: r.ttl_ms,
  state: r.state,
  endedAt: r.ended_at,
});

export class SqliteRunQueries implements RunQueries {
  readonly #stmt: Prepare;
  constructor(stmt: Prepare) {
    this.#stmt = stmt;
  }
  async insertRun(r: RunRow): Promise<void> {
    this.#stmt(
      `INSERT OR REPLACE INTO runs (session_id, run_id, agent, pid, host, host_id, start_time, started_at, heartbeat_at, ttl_ms, state, ended_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(r.sessionId, r.runId, r.agent, r.pid, r.host, r.hostId, r.startTime, r.startedAt, r.heartbeatAt, r.ttlMs, r.state, r.endedAt);
  }
  async getRun(sessionId: string, runId: string): Promise<RunRow | undefined> {
    const r = this.#stmt("SELECT * FROM runs WHERE session_id = ? AND run_id = ?").get(sessionId, runId) as RawRun | undefined;
    return r && toRun(r);
  }
  async runningRuns(sessionId?: string): Promise<RunRow[]> {
    const rows = this.#stmt(
      "SELECT * FROM runs WHERE state = 'running' AND (@session IS NULL OR session_id = @session) ORDER BY started_at, run_id",
    ).all({ session: sessionId ?? null }) as RawRun[];
    return rows.map(toRun);
  }
  async heartbeatRun(sessionId: string, runId: string, at: string, ttlMs: number): Promise<boolean> {
    const r = this.#stmt("UPDATE runs SET heartbeat_at = ?, ttl_ms = ? WHERE session_id = ? AND run_id = ? AND state = 'running'").run(
      at,
      ttlMs,
      sessionId,
      runId,
    );
    return r.changes > 0;
  }
  async setRunState(sessionId: string, runId: string, state: RunState, endedAt: string): Promise<void> {
    this.#stmt("UPDATE runs SET state = ?, ended_at = ? WHERE session_id = ? AND run_id = ?").run(state, endedAt, sessionId, runId);
  }
}

/** Named locks (fencing epochs, acquisition as compare-and-set) and agent runs on PostgreSQL. */
import type { LockQueries, LockRow, RunQueries, RunRow, RunState } from "../contract.js";
import { type RawLock, toLock } from "../rows.js";
import { held, type PgCtx } from "./pg-types.js";

export class PgLockQueries implements LockQueries {
  readonly #c: PgCtx;
  constructor(c: PgCtx) {
    this.#c = c;
  }
  async getLock(name: string): Promise<LockRow | undefined> {
    const [r] = await this.#c.rows<RawLock>(`SELECT * FROM locks WHERE name = $1${held(this.#c)}`, [name]);
    return r && toLock(r);
  }
  async listLocks(): Promise<LockRow[]> {
    return (await this.#c.rows<RawLock>('SELECT * FROM locks ORDER BY name COLLATE "C"')).map(toLock);
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
        (await this.#c.run(
          `INSERT INTO locks (name, epoch, state, owner, pid, host, host_id, start_time, run_id, acquired_at, heartbeat_at,
             expires_ms, ttl_ms, released_at, release_reason)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) ON CONFLICT (name) DO NOTHING`,
          args,
        )) > 0
      );
    }
    return (
      (await this.#c.run(
        `UPDATE locks SET epoch = $2, state = $3, owner = $4, pid = $5, host = $6, host_id = $7, start_time = $8, run_id = $9,
           acquired_at = $10, heartbeat_at = $11, expires_ms = $12, ttl_ms = $13, released_at = $14, release_reason = $15
         WHERE name = $1 AND epoch = $16`,
        [...args, prevEpoch],
      )) > 0
    );
  }
  async heartbeatLock(name: string, epoch: number, heartbeatAt: string, expiresMs: number, ttlMs: number): Promise<boolean> {
    return (
      (await this.#c.run(
        "UPDATE locks SET heartbeat_at = $1, expires_ms = $2, ttl_ms = $3 WHERE name = $4 AND epoch = $5 AND state = 'held'",
        [heartbeatAt, expiresMs, ttlMs, name, epoch],
      )) > 0
    );
  }
  async freeLock(name: string, epoch: number, at: string, reason: string): Promise<boolean> {
    return (
      (await this.#c.run(
        "UPDATE locks SET state = 'free', released_at = $1, release_reason = $2 WHERE name = $3 AND epoch = $4 AND state = 'held'",
        [at, reason, name, epoch],
      )) > 0
    );
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

export class PgRunQueries implements RunQueries {
  readonly #c: PgCtx;
  constructor(c: PgCtx) {
    this.#c = c;
  }
  async insertRun(r: RunRow): Promise<void> {
    await this.#c.run(
      `INSERT INTO runs (session_id, run_id, agent, pid, host, host_id, start_time, started_at, heartbeat_at, ttl_ms, state, ended_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
       ON CONFLICT (session_id, run_id) DO UPDATE SET agent = excluded.agent, pid = excluded.pid, host = excluded.host,
         host_id = excluded.host_id, start_time = excluded.start_time, started_at = excluded.started_at, heartbeat_at = excluded.heartbeat_at,
         ttl_ms = excluded.ttl_ms, state = excluded.state, ended_at = excluded.ended_at`,
      [r.sessionId, r.runId, r.agent, r.pid, r.host, r.hostId, r.startTime, r.startedAt, r.heartbeatAt, r.ttlMs, r.state, r.endedAt],
    );
  }
  async getRun(sessionId: string, runId: string): Promise<RunRow | undefined> {
    const [r] = await this.#c.rows<RawRun>(`SELECT * FROM runs WHERE session_id = $1 AND run_id = $2${held(this.#c)}`, [sessionId, runId]);
    return r && toRun(r);
  }
  async runningRuns(sessionId?: string): Promise<RunRow[]> {
    const rows = await this.#c.rows<RawRun>(
      "SELECT * FROM runs WHERE state = 'running' AND ($1::text IS NULL OR session_id = $1) ORDER BY started_at, run_id COLLATE \"C\"",
      [sessionId ?? null],
    );
    return rows.map(toRun);
  }
  async heartbeatRun(sessionId: string, runId: string, at: string, ttlMs: number): Promise<boolean> {
    return (
      (await this.#c.run("UPDATE runs SET heartbeat_at = $1, ttl_ms = $2 WHERE session_id = $3 AND run_id = $4 AND state = 'running'", [
        at,
        ttlMs,
        sessionId,
        runId,
      ])) > 0
    );
  }
  async setRunState(sessionId: string, runId: string, state: RunState, endedAt: string): Promise<void> {
    await this.#c.run("UPDATE runs SET state = $1, ended_at = $2 WHERE session_id = $3 AND run_id = $4", [
      state,
      endedAt,
      sessionId,
      runId,
    ]);
  }
}

/** The lane writes' queries on PostgreSQL (contract.ts LaneQueries; services/agents/lanes.ts). */
import type { LaneQueries, LaneWriteRow } from "../contract.js";
import type { PgCtx } from "./pg-types.js";

interface RawWrite {
  session_id: string;
  path: string;
  lane: string;
  at: string;
  hash: string;
}

const toWrite = (r: RawWrite): LaneWriteRow => ({ sessionId: r.session_id, path: r.path, lane: r.lane, at: r.at, hash: r.hash });

export class PgLaneQueries implements LaneQueries {
  readonly #c: PgCtx;
  constructor(c: PgCtx) {
    this.#c = c;
  }
  async putWrites(rows: readonly LaneWriteRow[]): Promise<void> {
    if (rows.length === 0) return;
    // One statement for the turn's files (a write transaction's round trips are its cost here).
    await this.#c.run(
      `INSERT INTO lane_writes (session_id, path, lane, at, hash)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[])
       ON CONFLICT (session_id, path, lane) DO UPDATE SET at = excluded.at, hash = excluded.hash`,
      [rows.map((r) => r.sessionId), rows.map((r) => r.path), rows.map((r) => r.lane), rows.map((r) => r.at), rows.map((r) => r.hash)],
    );
  }
  async writesOn(sessionId: string, paths: readonly string[]): Promise<LaneWriteRow[]> {
    if (paths.length === 0) return [];
    const rows = await this.#c.rows<RawWrite>(
      `SELECT * FROM lane_writes WHERE session_id = $1 AND path = ANY($2::text[]) ORDER BY path COLLATE "C", lane COLLATE "C"`,
      [sessionId, paths],
    );
    return rows.map(toWrite);
  }
  async laneWrites(sessionId: string, lane: string, since: string, limit: number): Promise<LaneWriteRow[]> {
    const rows = await this.#c.rows<RawWrite>(
      `SELECT * FROM lane_writes WHERE session_id = $1 AND lane = $2 AND at >= $3 ORDER BY at DESC, path COLLATE "C" LIMIT $4`,
      [sessionId, lane, since, limit],
    );
    return rows.map(toWrite);
  }
  async countWrites(sessionId: string, lane: string, since: string): Promise<number> {
    const [r] = await this.#c.rows<{ n: string }>(
      "SELECT count(*) AS n FROM lane_writes WHERE session_id = $1 AND lane = $2 AND at >= $3",
      [sessionId, lane, since],
    );
    return Number(r?.n ?? 0);
  }
  async overlapping(sessionId: string, lanes: readonly string[], since: string, limit: number): Promise<LaneWriteRow[]> {
    if (lanes.length < 2) return [];
    const rows = await this.#c.rows<RawWrite>(
      `SELECT * FROM lane_writes WHERE session_id = $1 AND at >= $2 AND lane = ANY($3::text[]) AND path IN (
         SELECT path FROM lane_writes WHERE session_id = $1 AND at >= $2 AND lane = ANY($3::text[])
         GROUP BY path HAVING count(*) > 1 ORDER BY path LIMIT $4)
       ORDER BY path, lane`,
      [sessionId, since, lanes, limit],
    );
    return rows.map(toWrite);
  }
  async dropLane(sessionId: string, lane: string): Promise<number> {
    return this.#c.run("DELETE FROM lane_writes WHERE session_id = $1 AND (lane = $2 OR left(lane, length($2) + 1) = $2 || '/')", [
      sessionId,
      lane,
    ]);
  }
}

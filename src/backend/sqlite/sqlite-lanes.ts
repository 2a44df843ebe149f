/** The lane writes' queries on SQLite (contract.ts LaneQueries; services/agents/lanes.ts). */
import type { LaneQueries, LaneWriteRow } from "../contract.js";
import type { Prepare } from "./sqlite-types.js";

interface RawWrite {
  session_id: string;
  path: string;
  lane: string;
  at: string;
  hash: string;
}

const toWrite = (r: RawWrite): LaneWriteRow => ({ sessionId: r.session_id, path: r.path, lane: r.lane, at: r.at, hash: r.hash });

/** Paths per `writesOn` statement (SQLite's bound-parameter limit is far above it). */
const CHUNK = 200;

export class SqliteLaneQueries implements LaneQueries {
  readonly #stmt: Prepare;
  constructor(stmt: Prepare) {
    this.#stmt = stmt;
  }
  async putWrites(rows: readonly LaneWriteRow[]): Promise<void> {
    const q = this.#stmt(
      `INSERT INTO lane_writes (session_id, path, lane, at, hash) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (session_id, path, lane) DO UPDATE SET at = excluded.at, hash = excluded.hash`,
    );
    for (const r of rows) q.run(r.sessionId, r.path, r.lane, r.at, r.hash);
  }
  async writesOn(sessionId: string, paths: readonly string[]): Promise<LaneWriteRow[]> {
    const out: LaneWriteRow[] = [];
    for (let i = 0; i < paths.length; i += CHUNK) {
      const part = paths.slice(i, i + CHUNK);
      const rows = this.#stmt(
        `SELECT * FROM lane_writes WHERE session_id = ? AND path IN (${part.map(() => "?").join(", ")}) ORDER BY path, lane`,
      ).all(sessionId, ...part) as RawWrite[];
      for (const r of rows) out.push(toWrite(r));
    }
    return out;
  }
  async laneWrites(sessionId: string, lane: string, since: string, limit: number): Promise<LaneWriteRow[]> {
    const rows = this.#stmt("SELECT * FROM lane_writes WHERE session_id = ? AND lane = ? AND at >= ? ORDER BY at DESC, path LIMIT ?").all(
      sessionId,
      lane,
      since,
      limit,
    ) as RawWrite[];
    return rows.map(toWrite);
  }
  async countWrites(sessionId: string, lane: string, since: string): Promise<number> {
    const r = this.#stmt("SELECT count(*) AS n FROM lane_writes WHERE session_id = ? AND lane = ? AND at >= ?").get(
      sessionId,
      lane,
      since,
    ) as {
      n: number;
    };
    return r.n;
  }
  async overlapping(sessionId: string, lanes: readonly string[], since: string, limit: number): Promise<LaneWriteRow[]> {
    if (lanes.length < 2) return [];
    const list = lanes.map(() => "?").join(", ");
    const rows = this.#stmt(
      `SELECT * FROM lane_writes WHERE session_id = ? AND at >= ? AND lane IN (${list}) AND path IN (
         SELECT path FROM lane_writes WHERE session_id = ? AND at >= ? AND lane IN (${list})
         GROUP BY path HAVING count(*) > 1 ORDER BY path LIMIT ?)
       ORDER BY path, lane`,
    ).all(sessionId, since, ...lanes, sessionId, since, ...lanes, limit) as RawWrite[];
    return rows.map(toWrite);
  }
  async dropLane(sessionId: string, lane: string): Promise<number> {
    return this.#stmt(
      "DELETE FROM lane_writes WHERE session_id = @s AND (lane = @lane OR substr(lane, 1, length(@lane) + 1) = @lane || '/')",
    ).run({ s: sessionId, lane }).changes;
  }
}

/**
 * Checkpoint queries on SQLite: checkpoints and their manifest runs, the references that keep
 * blobs alive, the blob collector's epoch, the whole-tree stat cache (one per workspace scope),
 * session artifacts, and the small blobs themselves (`blobs`: hash, when stored, stored form).
 *
 * Storage only: the lanes, which runs a checkpoint opens and closes, and which runs pruning
 * deletes are decided in services/time-travel/manifests.ts (contract.ts, CheckpointQueries). One writer at
 * a time holds the write lock, so every point read here already holds its row.
 */
import type {
  ArtifactRow,
  CheckpointFileRow,
  CheckpointQueries,
  CheckpointRow,
  ManifestRunRow,
  RunWindow,
  SkippedPath,
  StatCacheRow,
} from "../contract.js";
import type { Prepare } from "./sqlite-types.js";

interface RawCheckpoint {
  id: string;
  session_id: string;
  seq: number;
  kind: CheckpointRow["kind"];
  lane: string | null;
  run_id: string | null;
  turn: number | null;
  tool_name: string | null;
  parent: string | null;
  label: string | null;
  pinned: number;
  pin_changes: number;
  restores: string | null;
  created_at: string;
  pruned_at: string | null;
  file_count: number;
  skipped: string | null;
  host: string | null;
  workspace: string | null;
  machine: string | null;
  agent_lane: string | null;
  outside_rules: string | null;
}

const toCheckpoint = (r: RawCheckpoint): CheckpointRow => ({
  id: r.id,
  sessionId: r.session_id,
  seq: r.seq,
  kind: r.kind,
  lane: r.lane ?? r.id,
  runId: r.run_id,
  turn: r.turn,
  toolName: r.tool_name,
  parent: r.parent,
  label: r.label,
  pinned: r.pinned === 1,
  pinChanges: r.pin_changes,
  restores: r.restores,
  createdAt: r.created_at,
  prunedAt: r.pruned_at,
  fileCount: r.file_count,
  ...(r.skipped !== null ? { skipped: JSON.parse(r.skipped) as SkippedPath[] } : {}),
  host: r.host,
  workspace: r.workspace,
  machine: r.machine,
  agentLane: r.agent_lane,
  outsideRules: r.outside_rules ?? null,
});

/**
 * A hash (@h) is referenced by a run (every run in the table holds a live checkpoint), or by an
 * artifact of a session still active.
 */
const REFERENCED = `
  EXISTS (SELECT 1 FROM manifest_runs WHERE hash = @h)
  OR EXISTS (SELECT 1 FROM artifacts a JOIN sessions s ON s.id = a.session_id WHERE a.hash = @h AND s.status = 'active')`;

export class SqliteCheckpointQueries implements CheckpointQueries {
  readonly #stmt: Prepare;

  constructor(stmt: Prepare) {
    this.#stmt = stmt;
  }

  async insertCheckpoint(r: CheckpointRow): Promise<void> {
    this.#stmt(
      `INSERT INTO checkpoints (id, session_id, seq, kind, run_id, turn, tool_name, parent, label, pinned, restores, created_at, pruned_at, file_count, lane, skipped, host, workspace, machine, agent_lane, outside_rules)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      r.id,
      r.sessionId,
      r.seq,
      r.kind,
      r.runId,
      r.turn,
      r.toolName,
      r.parent,
      r.label,
      r.pinned ? 1 : 0,
      r.restores,
      r.createdAt,
      r.prunedAt,
      r.fileCount,
      r.lane,
      r.skipped !== undefined && r.skipped.length > 0 ? JSON.stringify(r.skipped) : null,
      r.host ?? null,
      r.workspace ?? null,
      r.machine ?? null,
      r.agentLane ?? null,
      r.outsideRules ?? null,
    );
  }

  async getCheckpoint(id: string): Promise<CheckpointRow | undefined> {
    const r = this.#stmt("SELECT * FROM checkpoints WHERE id = ?").get(id) as RawCheckpoint | undefined;
    return r && toCheckpoint(r);
  }

  async listCheckpoints(sessionId: string, idPrefix?: string): Promise<CheckpointRow[]> {
    return this.#list(sessionId, "", idPrefix);
  }

  async liveCheckpoints(sessionId: string, idPrefix?: string): Promise<CheckpointRow[]> {
    return this.#list(sessionId, " AND pruned_at IS NULL", idPrefix);
  }

  /** A session's checkpoints (`live`: a further condition), those whose id starts with `idPrefix` if given, oldest first. */
  #list(sessionId: string, live: string, idPrefix: string | undefined): CheckpointRow[] {
    const prefix = idPrefix === undefined ? "" : " AND substr(id, 1, length(?)) = ?";
    const args = idPrefix === undefined ? [sessionId] : [sessionId, idPrefix, idPrefix];
    const rows = this.#stmt(`SELECT * FROM checkpoints WHERE session_id = ?${live}${prefix} ORDER BY seq`).all(...args);
    return (rows as RawCheckpoint[]).map(toCheckpoint);
  }

  async lastGoodCheckpoint(sessionId: string, at: string, agentLane?: string): Promise<string | undefined> {
    // Walks checkpoints_live from the newest: the first match ends the scan.
    const r = (
      agentLane === undefined
        ? this.#stmt(
            `SELECT id FROM checkpoints WHERE session_id = ? AND pruned_at IS NULL AND kind != 'safety' AND created_at <= ?
             ORDER BY seq DESC LIMIT 1`,
          ).get(sessionId, at)
        : this.#stmt(
            `SELECT id FROM checkpoints WHERE session_id = @s AND pruned_at IS NULL AND kind != 'safety' AND created_at <= @at
               AND (agent_lane = @lane OR substr(agent_lane, 1, length(@lane) + 1) = @lane || '/')
             ORDER BY seq DESC LIMIT 1`,
          ).get({ s: sessionId, at, lane: agentLane })
    ) as { id: string } | undefined;
    return r?.id;
  }

  async lastCheckpoint(sessionId: string): Promise<CheckpointRow | undefined> {
    const r = this.#stmt("SELECT * FROM checkpoints WHERE session_id = ? ORDER BY seq DESC LIMIT 1").get(sessionId) as
      | RawCheckpoint
      | undefined;
    return r && toCheckpoint(r);
  }

  async laneHead(lane: string): Promise<CheckpointRow | undefined> {
    const r = this.#stmt("SELECT * FROM checkpoints WHERE lane = ? ORDER BY seq DESC LIMIT 1").get(lane) as RawCheckpoint | undefined;
    return r && toCheckpoint(r);
  }

  async lastLiveInLane(lane: string): Promise<CheckpointRow | undefined> {
    const r = this.#stmt("SELECT * FROM checkpoints WHERE lane = ? AND pruned_at IS NULL ORDER BY seq DESC LIMIT 1").get(lane) as
      | RawCheckpoint
      | undefined;
    return r && toCheckpoint(r);
  }

  async liveNeighbours(lane: string, seq: number): Promise<{ before: number | null; after: number | null }> {
    return this.#stmt(
      `SELECT (SELECT max(seq) FROM checkpoints WHERE lane = @lane AND pruned_at IS NULL AND seq < @s) AS before,
              (SELECT min(seq) FROM checkpoints WHERE lane = @lane AND pruned_at IS NULL AND seq > @s) AS after`,
    ).get({ lane, s: seq }) as { before: number | null; after: number | null };
  }

  async retentionCandidates(sessionId: string, retain: number): Promise<string[]> {
    const rows = this.#stmt(
      "SELECT id FROM checkpoints WHERE session_id = ? AND pruned_at IS NULL AND pinned = 0 ORDER BY seq DESC LIMIT -1 OFFSET ?",
    ).all(sessionId, retain) as { id: string }[];
    return rows.map((r) => r.id).reverse();
  }

  async setPinned(id: string, pinned: boolean): Promise<boolean> {
    // Counted only when the pin changes: pinning a pinned checkpoint is no new state.
    const sql = pinned
      ? "UPDATE checkpoints SET pinned = 1, pin_changes = pin_changes + (pinned = 0) WHERE id = ? AND pruned_at IS NULL"
      : "UPDATE checkpoints SET pinned = 0, pin_changes = pin_changes + (pinned = 1) WHERE id = ?";
    return this.#stmt(sql).run(id).changes > 0;
  }

  async markPruned(id: string, at: string): Promise<boolean> {
    return (
      this.#stmt("UPDATE checkpoints SET pruned_at = ?, outside_rules = NULL WHERE id = ? AND pruned_at IS NULL AND pinned = 0").run(at, id)
        .changes > 0
    );
  }

  async openRuns(lane: string): Promise<ManifestRunRow[]> {
    return this.#stmt(
      `SELECT path, from_seq AS "from", until_seq AS "until", state, hash, mode, size, note FROM manifest_runs
       WHERE lane = ? AND until_seq IS NULL`,
    ).all(lane) as ManifestRunRow[];
  }

  async runsAt(lane: string, seq: number): Promise<CheckpointFileRow[]> {
    return this.#stmt(
      `SELECT path, state, hash, mode, size, note FROM manifest_runs
       WHERE lane = ? AND from_seq <= ? AND (until_seq IS NULL OR until_seq > ?) ORDER BY path`,
    ).all(lane, seq, seq) as CheckpointFileRow[];
  }

  async insertRuns(lane: string, runs: readonly ManifestRunRow[]): Promise<void> {
    const q = this.#stmt(
      "INSERT INTO manifest_runs (lane, path, from_seq, until_seq, state, hash, mode, size, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    );
    for (const r of runs) q.run(lane, r.path, r.from, r.until, r.state, r.hash, r.mode, r.size, r.note);
  }

  async closeRuns(lane: string, ends: readonly { path: string; from: number }[], until: number): Promise<void> {
    const q = this.#stmt("UPDATE manifest_runs SET until_seq = ? WHERE lane = ? AND path = ? AND from_seq = ?");
    for (const e of ends) q.run(until, lane, e.path, e.from);
  }

  async deleteRuns(lane: string, w: RunWindow): Promise<string[]> {
    const dead = (
      w.endsBy !== null
        ? // Runs that end after `holding` but no later than `endsBy` (the index on closed runs finds them).
          this.#stmt(
            `DELETE FROM manifest_runs WHERE lane = @lane AND until_seq IS NOT NULL AND until_seq > @s AND until_seq <= @n
             AND from_seq <= @s AND from_seq > @p RETURNING hash`,
          ).all({ lane, s: w.holding, p: w.fromAfter, n: w.endsBy })
        : this.#stmt(
            `DELETE FROM manifest_runs WHERE lane = @lane AND from_seq <= @s AND from_seq > @p
             AND (until_seq IS NULL OR until_seq > @s) RETURNING hash`,
          ).all({ lane, s: w.holding, p: w.fromAfter })
    ) as { hash: string | null }[];
    return [...new Set(dead.flatMap((r) => (r.hash ? [r.hash] : [])))];
  }

  async reserveCollector(): Promise<void> {
    // One writer at a time holds the write lock: there is nothing to upgrade.
  }

  async unreferenced(hashes: readonly string[]): Promise<string[]> {
    const q = this.#stmt(`SELECT ${REFERENCED} AS used`);
    return [...new Set(hashes)].filter((h) => (q.get({ h }) as { used: number }).used === 0);
  }

  async referencedHashes(opts: { sharedOnly?: boolean } = {}): Promise<string[]> {
    const rows = this.#stmt(
      `SELECT DISTINCT hash FROM manifest_runs WHERE hash IS NOT NULL${opts.sharedOnly ? " AND note IS NOT 'local'" : ""}
       UNION
       SELECT a.hash FROM artifacts a JOIN sessions s ON s.id = a.session_id WHERE s.status = 'active'`,
    ).all() as { hash: string }[];
    return rows.map((r) => r.hash);
  }

  async localHashes(host: string, workspace: string): Promise<string[]> {
    const rows = this.#stmt(
      `SELECT DISTINCT r.hash FROM manifest_runs r JOIN checkpoints c ON c.lane = r.lane AND c.pruned_at IS NULL
         AND c.seq >= r.from_seq AND (r.until_seq IS NULL OR c.seq < r.until_seq)
       WHERE r.note = 'local' AND r.hash IS NOT NULL AND c.host = ? AND c.workspace = ?`,
    ).all(host, workspace) as { hash: string }[];
    return rows.map((r) => r.hash);
  }

  async storedFileRuns(): Promise<{ path: string; hash: string; sessionId: string }[]> {
    return this.#stmt(
      `SELECT DISTINCT r.path, r.hash, c.session_id AS sessionId FROM manifest_runs r
       JOIN blobs b ON b.hash = r.hash JOIN checkpoints c ON c.lane = r.lane AND c.seq = r.from_seq
       WHERE r.note IS NOT 'local'`,
    ).all() as { path: string; hash: string; sessionId: string }[];
  }

  async blobEpoch(): Promise<number> {
    return (this.#stmt("SELECT blob_epoch AS v FROM checkpoint_meta WHERE id = 1").get() as { v: number } | undefined)?.v ?? 0;
  }

  async bumpBlobEpoch(): Promise<void> {
    this.#stmt("UPDATE checkpoint_meta SET blob_epoch = blob_epoch + 1 WHERE id = 1").run();
  }

  async statCacheGeneration(scope: string): Promise<number> {
    return (this.#stmt("SELECT generation AS v FROM stat_scopes WHERE scope = ?").get(scope) as { v: number } | undefined)?.v ?? 0;
  }

  async bumpStatCacheGeneration(scope: string, usedMs: number): Promise<void> {
    this.#stmt(
      `INSERT INTO stat_scopes (scope, generation, used_ms) VALUES (?, 1, ?)
       ON CONFLICT (scope) DO UPDATE SET generation = generation + 1, used_ms = excluded.used_ms`,
    ).run(scope, usedMs);
  }

  async touchStatScope(scope: string, usedMs: number, ifBefore: number): Promise<void> {
    this.#stmt("UPDATE stat_scopes SET used_ms = ? WHERE scope = ? AND used_ms < ?").run(usedMs, scope, ifBefore);
  }

  async statCache(scope: string): Promise<StatCacheRow[]> {
    return this.#stmt(
      `SELECT path, size, mtime_ms AS mtimeMs, ctime_ms AS ctimeMs, ino, mode, hash, checked_ms AS checkedMs
       FROM stat_cache WHERE scope = ?`,
    ).all(scope) as StatCacheRow[];
  }

  async putStatCache(scope: string, rows: readonly StatCacheRow[]): Promise<void> {
    const q = this.#stmt(
      "INSERT OR REPLACE INTO stat_cache (scope, path, size, mtime_ms, ctime_ms, ino, mode, hash, checked_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    );
    for (const r of rows) q.run(scope, r.path, r.size, r.mtimeMs, r.ctimeMs, r.ino, r.mode, r.hash, r.checkedMs);
  }

  async deleteStatCache(scope: string, paths: readonly string[]): Promise<void> {
    const q = this.#stmt("DELETE FROM stat_cache WHERE scope = ? AND path = ?");
    for (const p of paths) q.run(scope, p);
  }

  async forgetStatCacheHashes(hashes: readonly string[]): Promise<void> {
    const q = this.#stmt("DELETE FROM stat_cache WHERE hash = ? RETURNING scope");
    const scopes = new Set<string>();
    for (const h of hashes) for (const r of q.all(h) as { scope: string }[]) scopes.add(r.scope);
    const bump = this.#stmt("UPDATE stat_scopes SET generation = generation + 1 WHERE scope = ?");
    for (const s of scopes) bump.run(s);
  }

  async dropStatScopes(beforeMs: number): Promise<number> {
    const gone = this.#stmt("DELETE FROM stat_scopes WHERE used_ms < ? RETURNING scope").all(beforeMs) as { scope: string }[];
    const q = this.#stmt("DELETE FROM stat_cache WHERE scope = ?");
    for (const g of gone) q.run(g.scope);
    return gone.length;
  }

  async insertArtifact(r: ArtifactRow): Promise<void> {
    this.#stmt(
      "INSERT INTO artifacts (id, session_id, name, hash, size, media_type, label, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    ).run(r.id, r.sessionId, r.name, r.hash, r.size, r.mediaType, r.label, r.createdAt);
  }

  async listArtifacts(sessionId: string): Promise<ArtifactRow[]> {
    return this.#stmt(
      `SELECT id, session_id AS sessionId, name, hash, size, media_type AS mediaType, label, created_at AS createdAt
       FROM artifacts WHERE session_id = ? ORDER BY created_at, rowid`,
    ).all(sessionId) as ArtifactRow[];
  }

  async putBlob(hash: string, data: Uint8Array, storedMs: number): Promise<boolean> {
    if (
      this.#stmt("INSERT INTO blobs (hash, stored_ms, data) VALUES (?, ?, ?) ON CONFLICT (hash) DO NOTHING").run(hash, storedMs, data)
        .changes > 0
    )
      return true;
    // Stored already: not rewritten, but its stored time moves forward, so an old orphan a
    // checkpoint is about to name gets a fresh grace period from `baton gc`.
    this.#stmt("UPDATE blobs SET stored_ms = ? WHERE hash = ? AND stored_ms < ?").run(storedMs, hash, storedMs);
    return false;
  }

  async getBlob(hash: string): Promise<Uint8Array | undefined> {
    return (this.#stmt("SELECT data FROM blobs WHERE hash = ?").get(hash) as { data: Uint8Array } | undefined)?.data;
  }

  async inlineBlobs(hashes: readonly string[]): Promise<string[]> {
    const q = this.#stmt("SELECT 1 AS one FROM blobs WHERE hash = ?");
    return [...new Set(hashes)].filter((h) => q.get(h) !== undefined);
  }

  async deleteBlobs(hashes: readonly string[]): Promise<string[]> {
    const q = this.#stmt("DELETE FROM blobs WHERE hash = ?");
    return [...new Set(hashes)].filter((h) => q.run(h).changes > 0);
  }

  async listBlobs(): Promise<{ hash: string; storedMs: number }[]> {
    return this.#stmt("SELECT hash, stored_ms AS storedMs FROM blobs").all() as { hash: string; storedMs: number }[];
  }
}

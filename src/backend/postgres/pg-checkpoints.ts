/**
 * Checkpoint queries on PostgreSQL: checkpoints and their manifest runs (the same rows as
 * SQLite's: services/time-travel/manifests.ts decides them), session artifacts, the whole-tree stat cache
 * (one per workspace scope), and every blob as bytea deduplicated by hash.
 *
 * The blob collector's lock is the checkpoint_meta row: `unreferenced` takes it FOR UPDATE
 * before looking, and every query that can add a reference to a blob takes it FOR SHARE first
 * in a write transaction, so no checkpoint commits a reference between the collector's look and
 * its delete (contract.ts, CheckpointQueries.unreferenced). A transaction that will collect takes
 * it FOR UPDATE first (`reserveCollector`): upgrading from SHARE deadlocks with a twin.
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
import type { PgCtx } from "./pg-types.js";

interface RawCheckpoint {
  id: string;
  session_id: string;
  seq: number;
  kind: CheckpointRow["kind"];
  lane: string;
  run_id: string | null;
  turn: number | null;
  tool_name: string | null;
  parent: string | null;
  label: string | null;
  pinned: boolean;
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
  lane: r.lane,
  runId: r.run_id,
  turn: r.turn,
  toolName: r.tool_name,
  parent: r.parent,
  label: r.label,
  pinned: r.pinned,
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

export class PgCheckpointQueries implements CheckpointQueries {
  readonly #c: PgCtx;
  constructor(c: PgCtx) {
    this.#c = c;
  }

  /** In a write transaction, hold off the collector before naming or storing a blob. */
  async #referencing(): Promise<void> {
    if (this.#c.write) await this.#c.collectorLock("share");
  }

  async insertCheckpoint(r: CheckpointRow): Promise<void> {
    await this.#referencing();
    await this.#c.run(
      `INSERT INTO checkpoints (id, session_id, seq, kind, run_id, turn, tool_name, parent, label, pinned, restores, created_at, pruned_at, file_count, skipped, host, workspace, machine, lane, agent_lane, outside_rules)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)`,
      [
        r.id,
        r.sessionId,
        r.seq,
        r.kind,
        r.runId,
        r.turn,
        r.toolName,
        r.parent,
        r.label,
        r.pinned,
        r.restores,
        r.createdAt,
        r.prunedAt,
        r.fileCount,
        r.skipped !== undefined && r.skipped.length > 0 ? JSON.stringify(r.skipped) : null,
        r.host ?? null,
        r.workspace ?? null,
        r.machine ?? null,
        r.lane,
        r.agentLane ?? null,
        r.outsideRules ?? null,
      ],
    );
  }

  async getCheckpoint(id: string): Promise<CheckpointRow | undefined> {
    const [r] = await this.#c.rows<RawCheckpoint>("SELECT * FROM checkpoints WHERE id = $1", [id]);
    return r && toCheckpoint(r);
  }
  async listCheckpoints(sessionId: string, idPrefix?: string): Promise<CheckpointRow[]> {
    return this.#list(sessionId, "", idPrefix);
  }
  async liveCheckpoints(sessionId: string, idPrefix?: string): Promise<CheckpointRow[]> {
    return this.#list(sessionId, " AND pruned_at IS NULL", idPrefix);
  }
  /** A session's checkpoints (`live`: a further condition), those whose id starts with `idPrefix` if given, oldest first. */
  async #list(sessionId: string, live: string, idPrefix: string | undefined): Promise<CheckpointRow[]> {
    const prefix = idPrefix === undefined ? "" : " AND starts_with(id, $2)";
    const args = idPrefix === undefined ? [sessionId] : [sessionId, idPrefix];
    const rows = await this.#c.rows<RawCheckpoint>(`SELECT * FROM checkpoints WHERE session_id = $1${live}${prefix} ORDER BY seq`, args);
    return rows.map(toCheckpoint);
  }
  async lastCheckpoint(sessionId: string): Promise<CheckpointRow | undefined> {
    const [r] = await this.#c.rows<RawCheckpoint>("SELECT * FROM checkpoints WHERE session_id = $1 ORDER BY seq DESC LIMIT 1", [sessionId]);
    return r && toCheckpoint(r);
  }
  async lastGoodCheckpoint(sessionId: string, at: string, agentLane?: string): Promise<string | undefined> {
    const [r] = await this.#c.rows<{ id: string }>(
      agentLane === undefined
        ? `SELECT id FROM checkpoints WHERE session_id = $1 AND pruned_at IS NULL AND kind <> 'safety' AND created_at <= $2
           ORDER BY seq DESC LIMIT 1`
        : `SELECT id FROM checkpoints WHERE session_id = $1 AND pruned_at IS NULL AND kind <> 'safety' AND created_at <= $2
             AND (agent_lane = $3 OR left(agent_lane, length($3) + 1) = $3 || '/')
           ORDER BY seq DESC LIMIT 1`,
      agentLane === undefined ? [sessionId, at] : [sessionId, at, agentLane],
    );
    return r?.id;
  }
  async laneHead(lane: string): Promise<CheckpointRow | undefined> {
    const [r] = await this.#c.rows<RawCheckpoint>("SELECT * FROM checkpoints WHERE lane = $1 ORDER BY seq DESC LIMIT 1", [lane]);
    return r && toCheckpoint(r);
  }
  async lastLiveInLane(lane: string): Promise<CheckpointRow | undefined> {
    const [r] = await this.#c.rows<RawCheckpoint>(
      "SELECT * FROM checkpoints WHERE lane = $1 AND pruned_at IS NULL ORDER BY seq DESC LIMIT 1",
      [lane],
    );
    return r && toCheckpoint(r);
  }
  async liveNeighbours(lane: string, seq: number): Promise<{ before: number | null; after: number | null }> {
    const [r] = await this.#c.rows<{ before: number | null; after: number | null }>(
      `SELECT (SELECT max(seq) FROM checkpoints WHERE lane = $1 AND pruned_at IS NULL AND seq < $2) AS before,
              (SELECT min(seq) FROM checkpoints WHERE lane = $1 AND pruned_at IS NULL AND seq > $2) AS after`,
      [lane, seq],
    );
    return r ?? { before: null, after: null };
  }
  async retentionCandidates(sessionId: string, retain: number): Promise<string[]> {
    const rows = await this.#c.rows<{ id: string }>(
      "SELECT id FROM checkpoints WHERE session_id = $1 AND pruned_at IS NULL AND NOT pinned ORDER BY seq DESC OFFSET $2",
      [sessionId, retain],
    );
    return rows.map((r) => r.id).reverse();
  }
  async setPinned(id: string, pinned: boolean): Promise<boolean> {
    // READ COMMITTED: an UPDATE that waited for a concurrent writer re-checks its WHERE on the row that writer left.
    // Counted only when the pin changes: pinning a pinned checkpoint is no new state.
    const sql = pinned
      ? "UPDATE checkpoints SET pinned = true, pin_changes = pin_changes + CASE WHEN pinned THEN 0 ELSE 1 END WHERE id = $1 AND pruned_at IS NULL"
      : "UPDATE checkpoints SET pinned = false, pin_changes = pin_changes + CASE WHEN pinned THEN 1 ELSE 0 END WHERE id = $1";
    return (await this.#c.run(sql, [id])) > 0;
  }
  async markPruned(id: string, at: string): Promise<boolean> {
    return (
      (await this.#c.run("UPDATE checkpoints SET pruned_at = $1, outside_rules = NULL WHERE id = $2 AND pruned_at IS NULL AND NOT pinned", [
        at,
        id,
      ])) > 0
    );
  }
  async openRuns(lane: string): Promise<ManifestRunRow[]> {
    return this.#c.rows<ManifestRunRow>(
      `SELECT path, from_seq AS "from", until_seq AS "until", state, hash, mode, size, note FROM manifest_runs
       WHERE lane = $1 AND until_seq IS NULL`,
      [lane],
    );
  }
  async runsAt(lane: string, seq: number): Promise<CheckpointFileRow[]> {
    return this.#c.rows<CheckpointFileRow>(
      `SELECT path, state, hash, mode, size, note FROM manifest_runs
       WHERE lane = $1 AND from_seq <= $2 AND (until_seq IS NULL OR until_seq > $2) ORDER BY path`,
      [lane, seq],
    );
  }
  async insertRuns(lane: string, runs: readonly ManifestRunRow[]): Promise<void> {
    if (runs.length === 0) return;
    await this.#referencing();
    // Batches of 5,000 rows: one statement per batch, whatever the tree's size.
    for (let i = 0; i < runs.length; i += 5000) {
      const part = runs.slice(i, i + 5000);
      await this.#c.run(
        `INSERT INTO manifest_runs (lane, path, from_seq, until_seq, state, hash, mode, size, note)
         SELECT $1, * FROM unnest($2::text[], $3::bigint[], $4::bigint[], $5::text[], $6::text[], $7::integer[], $8::bigint[], $9::text[])`,
        [
          lane,
          part.map((r) => r.path),
          part.map((r) => r.from),
          part.map((r) => r.until),
          part.map((r) => r.state),
          part.map((r) => r.hash),
          part.map((r) => r.mode),
          part.map((r) => r.size),
          part.map((r) => r.note),
        ],
      );
    }
  }
  async closeRuns(lane: string, ends: readonly { path: string; from: number }[], until: number): Promise<void> {
    for (let i = 0; i < ends.length; i += 5000) {
      const part = ends.slice(i, i + 5000);
      await this.#c.run(
        `UPDATE manifest_runs m SET until_seq = $2 FROM unnest($3::text[], $4::bigint[]) AS e(path, from_seq)
         WHERE m.lane = $1 AND m.path = e.path AND m.from_seq = e.from_seq`,
        [lane, until, part.map((e) => e.path), part.map((e) => e.from)],
      );
    }
  }
  async deleteRuns(lane: string, w: RunWindow): Promise<string[]> {
    const dead = await this.#c.rows<{ hash: string | null }>(
      `DELETE FROM manifest_runs WHERE lane = $1 AND from_seq <= $2 AND from_seq > $3
       AND (until_seq IS NULL OR until_seq > $2) AND ($4::bigint IS NULL OR until_seq <= $4) RETURNING hash`,
      [lane, w.holding, w.fromAfter, w.endsBy],
      true,
    );
    return [...new Set(dead.flatMap((r) => (r.hash ? [r.hash] : [])))];
  }
  async reserveCollector(): Promise<void> {
    if (this.#c.write) await this.#c.collectorLock("exclusive");
  }
  async unreferenced(hashes: readonly string[]): Promise<string[]> {
    const wanted = [...new Set(hashes)];
    if (wanted.length === 0) return []; // nothing to collect: no reason to block other writers
    if (this.#c.write) await this.#c.collectorLock("exclusive");
    const rows = await this.#c.rows<{ h: string }>(
      `SELECT h FROM unnest($1::text[]) h
       WHERE NOT EXISTS (SELECT 1 FROM manifest_runs WHERE hash = h)
         AND NOT EXISTS (SELECT 1 FROM artifacts a JOIN sessions s ON s.id = a.session_id WHERE a.hash = h AND s.status = 'active')`,
      [wanted],
    );
    const out = new Set(rows.map((r) => r.h));
    return wanted.filter((h) => out.has(h));
  }
  async referencedHashes(opts: { sharedOnly?: boolean } = {}): Promise<string[]> {
    const rows = await this.#c.rows<{ hash: string }>(
      `SELECT DISTINCT hash FROM manifest_runs WHERE hash IS NOT NULL${opts.sharedOnly ? " AND note IS DISTINCT FROM 'local'" : ""}
       UNION
       SELECT a.hash FROM artifacts a JOIN sessions s ON s.id = a.session_id WHERE s.status = 'active'`,
    );
    return rows.map((r) => r.hash);
  }
  async localHashes(host: string, workspace: string): Promise<string[]> {
    const rows = await this.#c.rows<{ hash: string }>(
      `SELECT DISTINCT r.hash FROM manifest_runs r JOIN checkpoints c ON c.lane = r.lane AND c.pruned_at IS NULL
         AND c.seq >= r.from_seq AND (r.until_seq IS NULL OR c.seq < r.until_seq)
       WHERE r.note = 'local' AND r.hash IS NOT NULL AND c.host = $1 AND c.workspace = $2`,
      [host, workspace],
    );
    return rows.map((r) => r.hash);
  }
  async storedFileRuns(): Promise<{ path: string; hash: string; sessionId: string }[]> {
    return this.#c.rows<{ path: string; hash: string; sessionId: string }>(
      `SELECT DISTINCT r.path, r.hash, c.session_id AS "sessionId" FROM manifest_runs r
       JOIN blobs b ON b.hash = r.hash JOIN checkpoints c ON c.lane = r.lane AND c.seq = r.from_seq
       WHERE r.note IS DISTINCT FROM 'local'`,
    );
  }
  async blobEpoch(): Promise<number> {
    await this.#referencing();
    const [r] = await this.#c.rows<{ v: number }>("SELECT blob_epoch AS v FROM checkpoint_meta WHERE id = 1");
    return r?.v ?? 0;
  }
  async bumpBlobEpoch(): Promise<void> {
    await this.#c.run("UPDATE checkpoint_meta SET blob_epoch = blob_epoch + 1 WHERE id = 1");
  }
  async statCacheGeneration(scope: string): Promise<number> {
    const [r] = await this.#c.rows<{ v: number }>("SELECT generation AS v FROM stat_scopes WHERE scope = $1", [scope]);
    return r?.v ?? 0;
  }
  async bumpStatCacheGeneration(scope: string, usedMs: number): Promise<void> {
    await this.#c.run(
      `INSERT INTO stat_scopes (scope, generation, used_ms) VALUES ($1, 1, $2)
       ON CONFLICT (scope) DO UPDATE SET generation = stat_scopes.generation + 1, used_ms = excluded.used_ms`,
      [scope, usedMs],
    );
  }
  async touchStatScope(scope: string, usedMs: number, ifBefore: number): Promise<void> {
    await this.#c.run("UPDATE stat_scopes SET used_ms = $2 WHERE scope = $1 AND used_ms < $3", [scope, usedMs, ifBefore]);
  }
  async statCache(scope: string): Promise<StatCacheRow[]> {
    return this.#c.rows<StatCacheRow>(
      `SELECT path, size, mtime_ms AS "mtimeMs", ctime_ms AS "ctimeMs", ino, mode, hash, checked_ms AS "checkedMs"
       FROM stat_cache WHERE scope = $1`,
      [scope],
    );
  }
  async putStatCache(scope: string, rows: readonly StatCacheRow[]): Promise<void> {
    for (let i = 0; i < rows.length; i += 5000) {
      const part = rows.slice(i, i + 5000);
      await this.#c.run(
        `INSERT INTO stat_cache (scope, path, size, mtime_ms, ctime_ms, ino, mode, hash, checked_ms)
         SELECT $1, * FROM unnest($2::text[], $3::bigint[], $4::float8[], $5::float8[], $6::float8[], $7::integer[], $8::text[], $9::float8[])
         ON CONFLICT (scope, path) DO UPDATE SET size = excluded.size, mtime_ms = excluded.mtime_ms, ctime_ms = excluded.ctime_ms,
           ino = excluded.ino, mode = excluded.mode, hash = excluded.hash, checked_ms = excluded.checked_ms`,
        [
          scope,
          part.map((r) => r.path),
          part.map((r) => r.size),
          part.map((r) => r.mtimeMs),
          part.map((r) => r.ctimeMs),
          part.map((r) => r.ino),
          part.map((r) => r.mode),
          part.map((r) => r.hash),
          part.map((r) => r.checkedMs),
        ],
      );
    }
  }
  async deleteStatCache(scope: string, paths: readonly string[]): Promise<void> {
    if (paths.length > 0) await this.#c.run("DELETE FROM stat_cache WHERE scope = $1 AND path = ANY ($2)", [scope, [...paths]]);
  }
  async forgetStatCacheHashes(hashes: readonly string[]): Promise<void> {
    if (hashes.length === 0) return;
    const gone = await this.#c.rows<{ scope: string }>("DELETE FROM stat_cache WHERE hash = ANY ($1) RETURNING scope", [[...hashes]], true);
    const scopes = [...new Set(gone.map((r) => r.scope))];
    if (scopes.length > 0) await this.#c.run("UPDATE stat_scopes SET generation = generation + 1 WHERE scope = ANY ($1)", [scopes]);
  }
  async dropStatScopes(beforeMs: number): Promise<number> {
    const gone = await this.#c.rows<{ scope: string }>("DELETE FROM stat_scopes WHERE used_ms < $1 RETURNING scope", [beforeMs], true);
    if (gone.length > 0) await this.#c.run("DELETE FROM stat_cache WHERE scope = ANY ($1)", [gone.map((g) => g.scope)]);
    return gone.length;
  }
  async insertArtifact(r: ArtifactRow): Promise<void> {
    await this.#referencing();
    await this.#c.run(
      "INSERT INTO artifacts (id, session_id, name, hash, size, media_type, label, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
      [r.id, r.sessionId, r.name, r.hash, r.size, r.mediaType, r.label, r.createdAt],
    );
  }
  async listArtifacts(sessionId: string): Promise<ArtifactRow[]> {
    return this.#c.rows<ArtifactRow>(
      `SELECT id, session_id AS "sessionId", name, hash, size, media_type AS "mediaType", label, created_at AS "createdAt"
       FROM artifacts WHERE session_id = $1 ORDER BY created_at, no`,
      [sessionId],
    );
  }
  async putBlob(hash: string, data: Uint8Array, storedMs: number): Promise<boolean> {
    await this.#referencing();
    // A blob stored already is not rewritten, but its stored time moves forward: an old orphan
    // a checkpoint is about to name gets a fresh grace period from `baton gc`. `xmax = 0`
    // tells an inserted row from an updated one; the WHERE skips a write that changes nothing.
    const [r] = await this.#c.rows<{ inserted: boolean }>(
      `INSERT INTO blobs (hash, stored_ms, data) VALUES ($1, $2, $3)
       ON CONFLICT (hash) DO UPDATE SET stored_ms = GREATEST(blobs.stored_ms, excluded.stored_ms) WHERE blobs.stored_ms < excluded.stored_ms
       RETURNING (xmax = 0) AS inserted`,
      [hash, storedMs, Buffer.from(data.buffer, data.byteOffset, data.byteLength)],
      true,
    );
    return r?.inserted === true;
  }
  async getBlob(hash: string): Promise<Uint8Array | undefined> {
    const [r] = await this.#c.rows<{ data: Buffer }>("SELECT data FROM blobs WHERE hash = $1", [hash]);
    return r?.data;
  }
  async inlineBlobs(hashes: readonly string[]): Promise<string[]> {
    await this.#referencing();
    const wanted = [...new Set(hashes)];
    if (wanted.length === 0) return [];
    const found = new Set(
      (await this.#c.rows<{ hash: string }>("SELECT hash FROM blobs WHERE hash = ANY ($1)", [wanted])).map((r) => r.hash),
    );
    return wanted.filter((h) => found.has(h));
  }
  async deleteBlobs(hashes: readonly string[]): Promise<string[]> {
    const wanted = [...new Set(hashes)];
    if (wanted.length === 0) return [];
    const gone = new Set(
      (await this.#c.rows<{ hash: string }>("DELETE FROM blobs WHERE hash = ANY ($1) RETURNING hash", [wanted], true)).map((r) => r.hash),
    );
    return wanted.filter((h) => gone.has(h));
  }
  async listBlobs(): Promise<{ hash: string; storedMs: number }[]> {
    return this.#c.rows<{ hash: string; storedMs: number }>(`SELECT hash, stored_ms AS "storedMs" FROM blobs`);
  }
}

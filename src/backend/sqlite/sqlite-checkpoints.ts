/**
 * Checkpoint queries on SQLite: checkpoints and their files, the references that keep blobs
 * alive, the blob collector's epoch, the whole-tree stat cache, session artifacts, and the
 * small blobs themselves (`blobs`: hash, when stored, stored form).
 *
 * A checkpoint's files are stored as **runs** (`manifest_runs`): a path whose entry (state,
 * hash, mode, size, note) stayed the same from checkpoint seq `from_seq` up to, not including,
 * `until_seq` (NULL: still the same in the lane's newest checkpoint). Each session's tree
 * checkpoints share one lane (`tree:<session>`), so a tree checkpoint writes rows only for the
 * paths that changed since the lane's previous one: 2,000 files with 3 changed cost 3 new runs
 * and 3 closed ones, wherever the files are (docs/benchmarks.md). Targeted and safety
 * checkpoints, and those recorded before runs existed, are a lane of their own, named by their
 * id. A checkpoint's files are the runs of its lane that contain its seq.
 *
 * Runs are deleted as soon as no live checkpoint of their lane falls inside them, so every run
 * in the table is referenced and a blob is alive while a run or an active session's artifact
 * names it. Pruning checkpoint `s` of a tree lane, with `p` and `n` the nearest live
 * checkpoints of the lane before and after it, kills exactly the runs that contain `s` but
 * neither `p` nor `n` (a run is an interval: one that held a live checkpoint further out would
 * hold `p` or `n` too).
 */
import type { ArtifactRow, CheckpointFileRow, CheckpointQueries, CheckpointRow, SkippedPath, StatCacheRow } from "../contract.js";
import type { Prepare } from "./sqlite-types.js";

/** A lane's open run of one path: the entry and the seq it has held since. */
interface OpenRun {
  from: number;
  state: CheckpointFileRow["state"];
  hash: string | null;
  mode: number | null;
  size: number | null;
  note: string | null;
}

/** The open runs of a lane as of its newest checkpoint, kept per process (see #openRuns). */
interface LaneMemo {
  checkpointId: string;
  runs: Map<string, OpenRun>;
}

/** Lanes whose open runs a process keeps in memory (a server serving several sessions). */
const MEMO_LANES = 8;

const treeLane = (sessionId: string) => `tree:${sessionId}`;

const sameEntry = (o: OpenRun, f: CheckpointFileRow) =>
  o.state === f.state && o.hash === f.hash && o.mode === f.mode && o.size === f.size && o.note === f.note;

interface RawCheckpoint {
  id: string;
  session_id: string;
  seq: number;
  kind: CheckpointRow["kind"];
  run_id: string | null;
  turn: number | null;
  tool_name: string | null;
  parent: string | null;
  label: string | null;
  pinned: number;
  restores: string | null;
  created_at: string;
  pruned_at: string | null;
  file_count: number;
  skipped: string | null;
  host: string | null;
  workspace: string | null;
  machine: string | null;
}

const toCheckpoint = (r: RawCheckpoint): CheckpointRow => ({
  id: r.id,
  sessionId: r.session_id,
  seq: r.seq,
  kind: r.kind,
  runId: r.run_id,
  turn: r.turn,
  toolName: r.tool_name,
  parent: r.parent,
  label: r.label,
  pinned: r.pinned === 1,
  restores: r.restores,
  createdAt: r.created_at,
  prunedAt: r.pruned_at,
  fileCount: r.file_count,
  ...(r.skipped !== null ? { skipped: JSON.parse(r.skipped) as SkippedPath[] } : {}),
  host: r.host,
  workspace: r.workspace,
  machine: r.machine,
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
  /**
   * Per lane, its open runs as this process last wrote them, keyed by the checkpoint that left
   * them so. They are still the table's while that checkpoint is the lane's newest and live:
   * only a newer checkpoint of the lane closes or opens runs, and pruning deletes only runs
   * holding no live checkpoint, which an open run of a live newest checkpoint always holds.
   */
  readonly #lanes = new Map<string, LaneMemo>();

  constructor(stmt: Prepare) {
    this.#stmt = stmt;
  }

  async insertCheckpoint(r: CheckpointRow, files: readonly CheckpointFileRow[]): Promise<void> {
    this.#insert(r, files);
  }

  /** Synchronous (an async function's loops are not optimised in place): one pass over every file of a tree. */
  #insert(r: CheckpointRow, files: readonly CheckpointFileRow[]): void {
    const lane = r.kind === "tree" ? treeLane(r.sessionId) : null;
    const open = lane === null ? undefined : this.#openRuns(lane);
    if (lane !== null) this.#lanes.delete(lane); // rebuilt below; a failure part-way must not leave it half-updated
    this.#stmt(
      `INSERT INTO checkpoints (id, session_id, seq, kind, run_id, turn, tool_name, parent, label, pinned, restores, created_at, pruned_at, file_count, lane, skipped, host, workspace, machine)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
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
      lane,
      r.skipped !== undefined && r.skipped.length > 0 ? JSON.stringify(r.skipped) : null,
      r.host ?? null,
      r.workspace ?? null,
      r.machine ?? null,
    );
    const insert = this.#stmt(
      "INSERT INTO manifest_runs (lane, path, from_seq, until_seq, state, hash, mode, size, note) VALUES (?, ?, ?, NULL, ?, ?, ?, ?, ?)",
    );
    if (lane === null || open === undefined) {
      for (const f of files) insert.run(r.id, f.path, r.seq, f.state, f.hash, f.mode, f.size, f.note);
      return;
    }
    const close = this.#stmt("UPDATE manifest_runs SET until_seq = ? WHERE lane = ? AND path = ? AND from_seq = ?");
    const before = open.size;
    let matched = 0;
    for (const f of files) {
      const o = open.get(f.path);
      if (o !== undefined) {
        matched++;
        if (sameEntry(o, f)) continue;
        close.run(r.seq, lane, f.path, o.from);
      }
      insert.run(lane, f.path, r.seq, f.state, f.hash, f.mode, f.size, f.note);
      open.set(f.path, { from: r.seq, state: f.state, hash: f.hash, mode: f.mode, size: f.size, note: f.note });
    }
    if (matched < before) {
      // Paths gone since the lane's previous checkpoint: their runs end here.
      const now = new Set(files.map((f) => f.path));
      for (const [path, o] of open) {
        if (now.has(path)) continue;
        close.run(r.seq, lane, path, o.from);
        open.delete(path);
      }
    }
    if (this.#lanes.size >= MEMO_LANES) this.#lanes.delete(this.#lanes.keys().next().value as string);
    this.#lanes.set(lane, { checkpointId: r.id, runs: open });
  }

  /** The lane's open runs: this process's copy when it is still the table's, else read (call before adding a checkpoint to the lane). */
  #openRuns(lane: string): Map<string, OpenRun> {
    const newest = this.#stmt("SELECT id, pruned_at FROM checkpoints WHERE lane = ? ORDER BY seq DESC LIMIT 1").get(lane) as
      | { id: string; pruned_at: string | null }
      | undefined;
    const memo = this.#lanes.get(lane);
    if (memo && newest && newest.id === memo.checkpointId && newest.pruned_at === null) return memo.runs;
    const rows = this.#stmt(
      "SELECT path, from_seq AS 'from', state, hash, mode, size, note FROM manifest_runs WHERE lane = ? AND until_seq IS NULL",
    ).all(lane) as (OpenRun & { path: string })[];
    const runs = new Map<string, OpenRun>();
    for (const { path, ...o } of rows) runs.set(path, o);
    return runs;
  }

  async getCheckpoint(id: string): Promise<CheckpointRow | undefined> {
    const r = this.#stmt("SELECT * FROM checkpoints WHERE id = ?").get(id) as RawCheckpoint | undefined;
    return r && toCheckpoint(r);
  }

  async listCheckpoints(sessionId: string): Promise<CheckpointRow[]> {
    return (this.#stmt("SELECT * FROM checkpoints WHERE session_id = ? ORDER BY seq").all(sessionId) as RawCheckpoint[]).map(toCheckpoint);
  }

  async liveCheckpoints(sessionId: string): Promise<CheckpointRow[]> {
    return (
      this.#stmt("SELECT * FROM checkpoints WHERE session_id = ? AND pruned_at IS NULL ORDER BY seq").all(sessionId) as RawCheckpoint[]
    ).map(toCheckpoint);
  }

  async lastGoodCheckpoint(sessionId: string, at: string): Promise<string | undefined> {
    // Walks checkpoints_live from the newest: the first match ends the scan.
    const r = this.#stmt(
      `SELECT id FROM checkpoints WHERE session_id = ? AND pruned_at IS NULL AND kind != 'safety' AND created_at <= ?
       ORDER BY seq DESC LIMIT 1`,
    ).get(sessionId, at) as { id: string } | undefined;
    return r?.id;
  }

  async lastCheckpoint(sessionId: string): Promise<CheckpointRow | undefined> {
    const r = this.#stmt("SELECT * FROM checkpoints WHERE session_id = ? ORDER BY seq DESC LIMIT 1").get(sessionId) as
      | RawCheckpoint
      | undefined;
    return r && toCheckpoint(r);
  }

  async lastTreeCheckpoint(sessionId: string): Promise<CheckpointRow | undefined> {
    const r = this.#stmt("SELECT * FROM checkpoints WHERE lane = ? AND pruned_at IS NULL ORDER BY seq DESC LIMIT 1").get(
      treeLane(sessionId),
    ) as RawCheckpoint | undefined;
    return r && toCheckpoint(r);
  }

  async retentionCandidates(sessionId: string, retain: number): Promise<string[]> {
    const rows = this.#stmt(
      "SELECT id FROM checkpoints WHERE session_id = ? AND pruned_at IS NULL AND pinned = 0 ORDER BY seq DESC LIMIT -1 OFFSET ?",
    ).all(sessionId, retain) as { id: string }[];
    return rows.map((r) => r.id).reverse();
  }

  async checkpointFiles(id: string): Promise<CheckpointFileRow[]> {
    const c = this.#stmt("SELECT seq, coalesce(lane, id) AS lane FROM checkpoints WHERE id = ? AND pruned_at IS NULL").get(id) as
      | { seq: number; lane: string }
      | undefined;
    if (!c) return [];
    return this.#stmt(
      `SELECT path, state, hash, mode, size, note FROM manifest_runs
       WHERE lane = ? AND from_seq <= ? AND (until_seq IS NULL OR until_seq > ?) ORDER BY path`,
    ).all(c.lane, c.seq, c.seq) as CheckpointFileRow[];
  }

  async setPinned(id: string, pinned: boolean): Promise<void> {
    this.#stmt("UPDATE checkpoints SET pinned = ? WHERE id = ?").run(pinned ? 1 : 0, id);
  }

  async pruneCheckpoint(id: string, at: string): Promise<string[]> {
    const c = this.#stmt("SELECT seq, lane FROM checkpoints WHERE id = ? AND pruned_at IS NULL").get(id) as
      | { seq: number; lane: string | null }
      | undefined;
    if (!c) return [];
    this.#stmt("UPDATE checkpoints SET pruned_at = ? WHERE id = ?").run(at, id);
    let dead: { hash: string | null }[];
    if (c.lane === null) {
      dead = this.#stmt("DELETE FROM manifest_runs WHERE lane = ? RETURNING hash").all(id) as { hash: string | null }[];
    } else {
      const near = this.#stmt(
        `SELECT (SELECT max(seq) FROM checkpoints WHERE lane = @lane AND pruned_at IS NULL AND seq < @s) AS p,
                (SELECT min(seq) FROM checkpoints WHERE lane = @lane AND pruned_at IS NULL AND seq > @s) AS n`,
      ).get({ lane: c.lane, s: c.seq }) as { p: number | null; n: number | null };
      const args = { lane: c.lane, s: c.seq, p: near.p ?? -1, n: near.n };
      dead = (
        near.n !== null
          ? // Runs that end after s but no later than the next live checkpoint n (the index on closed runs finds them).
            this.#stmt(
              `DELETE FROM manifest_runs WHERE lane = @lane AND until_seq IS NOT NULL AND until_seq > @s AND until_seq <= @n
               AND from_seq <= @s AND from_seq > @p RETURNING hash`,
            ).all(args)
          : // No live checkpoint after s: every run holding s dies unless it began by p.
            this.#stmt(
              `DELETE FROM manifest_runs WHERE lane = @lane AND from_seq <= @s AND from_seq > @p
               AND (until_seq IS NULL OR until_seq > @s) RETURNING hash`,
            ).all({ lane: args.lane, s: args.s, p: args.p })
      ) as { hash: string | null }[];
    }
    return [...new Set(dead.flatMap((r) => (r.hash ? [r.hash] : [])))];
  }

  async reserveCollector(): Promise<void> {
    // One writer at a time holds the write lock: there is nothing to upgrade.
  }

  async unreferenced(hashes: readonly string[]): Promise<string[]> {
    const q = this.#stmt(`SELECT ${REFERENCED} AS used`);
    return [...new Set(hashes)].filter((h) => (q.get({ h }) as { used: number }).used === 0);
  }

  async referencedHashes(): Promise<string[]> {
    const rows = this.#stmt(
      `SELECT DISTINCT hash FROM manifest_runs WHERE hash IS NOT NULL
       UNION
       SELECT a.hash FROM artifacts a JOIN sessions s ON s.id = a.session_id WHERE s.status = 'active'`,
    ).all() as { hash: string }[];
    return rows.map((r) => r.hash);
  }

  async blobEpoch(): Promise<number> {
    return (this.#stmt("SELECT blob_epoch AS v FROM checkpoint_meta WHERE id = 1").get() as { v: number } | undefined)?.v ?? 0;
  }

  async bumpBlobEpoch(): Promise<void> {
    this.#stmt("UPDATE checkpoint_meta SET blob_epoch = blob_epoch + 1 WHERE id = 1").run();
  }

  async statCacheGeneration(): Promise<number> {
    return (this.#stmt("SELECT stat_generation AS v FROM checkpoint_meta WHERE id = 1").get() as { v: number } | undefined)?.v ?? 0;
  }

  async bumpStatCacheGeneration(): Promise<void> {
    this.#stmt("UPDATE checkpoint_meta SET stat_generation = stat_generation + 1 WHERE id = 1").run();
  }

  async statCache(): Promise<StatCacheRow[]> {
    return this.#stmt(
      "SELECT path, size, mtime_ms AS mtimeMs, ctime_ms AS ctimeMs, ino, mode, hash, checked_ms AS checkedMs FROM stat_cache",
    ).all() as StatCacheRow[];
  }

  async putStatCache(rows: readonly StatCacheRow[]): Promise<void> {
    const q = this.#stmt(
      "INSERT OR REPLACE INTO stat_cache (path, size, mtime_ms, ctime_ms, ino, mode, hash, checked_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    );
    for (const r of rows) q.run(r.path, r.size, r.mtimeMs, r.ctimeMs, r.ino, r.mode, r.hash, r.checkedMs);
  }

  async deleteStatCache(paths: readonly string[]): Promise<void> {
    const q = this.#stmt("DELETE FROM stat_cache WHERE path = ?");
    for (const p of paths) q.run(p);
  }

  async forgetStatCacheHashes(hashes: readonly string[]): Promise<void> {
    const q = this.#stmt("DELETE FROM stat_cache WHERE hash = ?");
    let changed = 0;
    for (const h of hashes) changed += q.run(h).changes;
    if (changed > 0) await this.bumpStatCacheGeneration();
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
    return (
      this.#stmt("INSERT INTO blobs (hash, stored_ms, data) VALUES (?, ?, ?) ON CONFLICT (hash) DO NOTHING").run(hash, storedMs, data)
        .changes > 0
    );
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

/**
 * Checkpoint queries on SQLite: checkpoints and their files, the references that keep blobs
 * alive, the blob collector's epoch, the whole-tree stat cache, and session artifacts.
 *
 * A checkpoint's files are stored as content-addressed chunks, one per directory (a directory
 * of more than CHUNK_MAX files is spread over 16 chunks by a hash of the file name, so adding
 * a file rewrites one of them): consecutive whole-tree checkpoints share every chunk but the
 * few whose directory changed. 2,000 files in 40 directories with 3 changed files cost 3 new
 * chunks and 40 chunk references instead of 2,000 rows (docs/benchmarks.md).
 */
import { checksum, sha256 } from "../../core/canonical.js";
import type { ArtifactRow, CheckpointFileRow, CheckpointQueries, CheckpointRow, StatCacheRow } from "../contract.js";
import type { Prepare } from "./sqlite-types.js";

const CHUNK_MAX = 256;

/** A chunk entry: [path, state, hash, mode, size, note]. */
type Entry = [string, CheckpointFileRow["state"], string | null, number | null, number | null, string | null];

const byPath = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);

function dirOf(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash < 0 ? "" : path.slice(0, slash);
}

/** Group a manifest into chunks, deterministically: equal directories give equal chunks. */
function toChunks(files: readonly CheckpointFileRow[]): { hash: string; body: string; blobs: string[] }[] {
  const perDir = new Map<string, number>();
  for (const f of files) perDir.set(dirOf(f.path), (perDir.get(dirOf(f.path)) ?? 0) + 1);
  const groups = new Map<string, Entry[]>();
  for (const f of [...files].sort(byPath)) {
    const dir = dirOf(f.path);
    const key = (perDir.get(dir) ?? 0) > CHUNK_MAX ? `${dir}\u0000${checksum(f.path).slice(-1)}` : dir;
    let g = groups.get(key);
    if (!g) {
      g = [];
      groups.set(key, g);
    }
    g.push([f.path, f.state, f.hash, f.mode, f.size, f.note]);
  }
  return [...groups.keys()].sort().map((k) => {
    const entries = groups.get(k) as Entry[];
    const body = JSON.stringify(entries);
    return { hash: sha256(body), body, blobs: [...new Set(entries.flatMap((e) => (e[2] ? [e[2]] : [])))] };
  });
}

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
});

/**
 * A hash (@h) is referenced by a chunk (a chunk exists only while a live checkpoint uses it),
 * or by an artifact of a session still active.
 */
const REFERENCED = `
  EXISTS (SELECT 1 FROM chunk_blobs WHERE blob = @h)
  OR EXISTS (SELECT 1 FROM artifacts a JOIN sessions s ON s.id = a.session_id WHERE a.hash = @h AND s.status = 'active')`;

export class SqliteCheckpointQueries implements CheckpointQueries {
  readonly #stmt: Prepare;
  constructor(stmt: Prepare) {
    this.#stmt = stmt;
  }

  async insertCheckpoint(r: CheckpointRow, files: readonly CheckpointFileRow[]): Promise<void> {
    this.#stmt(
      `INSERT INTO checkpoints (id, session_id, seq, kind, run_id, turn, tool_name, parent, label, pinned, restores, created_at, pruned_at, file_count)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
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
    );
    const chunk = this.#stmt("INSERT OR IGNORE INTO manifest_chunks (hash, body) VALUES (?, ?)");
    const blob = this.#stmt("INSERT OR IGNORE INTO chunk_blobs (chunk, blob) VALUES (?, ?)");
    const ref = this.#stmt("INSERT INTO checkpoint_chunks (checkpoint_id, idx, chunk) VALUES (?, ?, ?)");
    for (const [idx, c] of toChunks(files).entries()) {
      if (chunk.run(c.hash, c.body).changes > 0) for (const b of c.blobs) blob.run(c.hash, b);
      ref.run(r.id, idx, c.hash);
    }
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

  async lastCheckpoint(sessionId: string): Promise<CheckpointRow | undefined> {
    const r = this.#stmt("SELECT * FROM checkpoints WHERE session_id = ? ORDER BY seq DESC LIMIT 1").get(sessionId) as
      | RawCheckpoint
      | undefined;
    return r && toCheckpoint(r);
  }

  async retentionCandidates(sessionId: string, retain: number): Promise<string[]> {
    const rows = this.#stmt(
      "SELECT id FROM checkpoints WHERE session_id = ? AND pruned_at IS NULL AND pinned = 0 ORDER BY seq DESC LIMIT -1 OFFSET ?",
    ).all(sessionId, retain) as { id: string }[];
    return rows.map((r) => r.id).reverse();
  }

  async checkpointFiles(id: string): Promise<CheckpointFileRow[]> {
    const rows = this.#stmt(
      "SELECT m.body AS body FROM checkpoint_chunks c JOIN manifest_chunks m ON m.hash = c.chunk WHERE c.checkpoint_id = ? ORDER BY c.idx",
    ).all(id) as { body: string }[];
    const out: CheckpointFileRow[] = [];
    for (const r of rows) {
      for (const [path, state, hash, mode, size, note] of JSON.parse(r.body) as Entry[]) out.push({ path, state, hash, mode, size, note });
    }
    return out.sort(byPath);
  }

  async setPinned(id: string, pinned: boolean): Promise<void> {
    this.#stmt("UPDATE checkpoints SET pinned = ? WHERE id = ?").run(pinned ? 1 : 0, id);
  }

  async pruneCheckpoint(id: string, at: string): Promise<string[]> {
    this.#stmt("UPDATE checkpoints SET pruned_at = ? WHERE id = ? AND pruned_at IS NULL").run(at, id);
    const chunks = this.#stmt("SELECT DISTINCT chunk FROM checkpoint_chunks WHERE checkpoint_id = ?").all(id) as { chunk: string }[];
    this.#stmt("DELETE FROM checkpoint_chunks WHERE checkpoint_id = ?").run(id);
    const used = this.#stmt("SELECT EXISTS (SELECT 1 FROM checkpoint_chunks WHERE chunk = ?) AS used");
    const blobsOf = this.#stmt("SELECT blob FROM chunk_blobs WHERE chunk = ?");
    const candidates: string[] = [];
    for (const { chunk } of chunks) {
      if ((used.get(chunk) as { used: number }).used) continue;
      for (const r of blobsOf.all(chunk) as { blob: string }[]) candidates.push(r.blob);
      this.#stmt("DELETE FROM chunk_blobs WHERE chunk = ?").run(chunk);
      this.#stmt("DELETE FROM manifest_chunks WHERE hash = ?").run(chunk);
    }
    return candidates;
  }

  async unreferenced(hashes: readonly string[]): Promise<string[]> {
    const q = this.#stmt(`SELECT ${REFERENCED} AS used`);
    return [...new Set(hashes)].filter((h) => (q.get({ h }) as { used: number }).used === 0);
  }

  async referencedHashes(): Promise<string[]> {
    const rows = this.#stmt(
      `SELECT DISTINCT blob AS hash FROM chunk_blobs
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
}

/**
 * Taking, listing, pinning and pruning checkpoints; collecting blobs nothing references.
 *
 * A checkpoint's file contents go to the blob store first (fsynced, directories fsynced), then
 * one write transaction records the checkpoint, updates the stat cache and applies retention.
 * Blobs are deleted only inside a write transaction that has just found them unreferenced, and
 * that transaction bumps the blob epoch: a whole-tree checkpoint that trusted the stat cache
 * while a collection ran sees the epoch change and starts again, so it never commits a
 * reference to a blob that was deleted under it.
 */
import { closeSync, constants, fstatSync, openSync, readFileSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Backend, CheckpointFileRow, CheckpointRow, StatCacheRow, StoreTx } from "../backend/contract.js";
import { randomHex, sha256 } from "../core/canonical.js";
import type { Checkpoint, CheckpointFile, CheckpointInfo, CheckpointKind } from "../core/checkpoints.js";
import { BatonError, badInput } from "../errors.js";
import { BlobStore } from "./blobs.js";
import { workspaceRelative } from "./files.js";
import { checkPath, readCurrent, unsafePath } from "./safe-fs.js";
import { type TreeFile, walkTree } from "./tree-scan.js";

export interface CheckpointOptions {
  /** Checkpoints kept per session, pinned ones aside. Default 100. */
  retain?: number;
  /** Extra gitignore-style patterns a whole-tree checkpoint leaves out. */
  exclude?: readonly string[];
  /** Files larger than this are recorded as skipped, not stored. Default 64 MiB. */
  maxFileBytes?: number;
  /** fsync blobs and restored files (default true; false matches synchronous=NORMAL). */
  durable?: boolean;
}

export interface CheckpointInput {
  /** Targeted: the files about to be written (workspace-relative, or absolute inside it). */
  files?: readonly string[];
  /** Whole tree (the default when no files are given). */
  all?: boolean;
  label?: string;
  toolName?: string;
  turn?: number;
  runId?: string;
  pinned?: boolean;
}

export interface CheckpointResult {
  checkpoint: Checkpoint;
  /** Checkpoints retention pruned to make room. */
  pruned: string[];
  /** Whole tree: files read (new or changed) vs trusted from the stat cache; blobs newly stored. */
  stats: { files: number; read: number; cached: number; blobsStored: number };
}

/**
 * A cache entry is trusted when every stat field agrees and the file's mtime is strictly older
 * than the scan that hashed it, as the filesystem's own clock tells it: each whole-tree scan
 * first touches `.baton/stat-clock` and reads back its mtime. A write landing in the same
 * timestamp tick as the scan (coarse kernel clocks, 1-2 s granularity on old filesystems)
 * makes the entry "racy" and the file is read again next time. Git's racy-clean rule.
 */
const CLOCK_FILE = "stat-clock";
const MAX_RETRIES = 3;

class EpochChanged extends Error {}

export function toInfo(r: CheckpointRow): CheckpointInfo {
  const c: CheckpointInfo = {
    id: r.id,
    sessionId: r.sessionId,
    seq: r.seq,
    kind: r.kind,
    pinned: r.pinned,
    createdAt: r.createdAt,
    fileCount: r.fileCount,
  };
  if (r.runId !== null) c.runId = r.runId;
  if (r.turn !== null) c.turn = r.turn;
  if (r.toolName !== null) c.toolName = r.toolName;
  if (r.parent !== null) c.parent = r.parent;
  if (r.label !== null) c.label = r.label;
  if (r.restores !== null) c.restores = r.restores;
  if (r.prunedAt !== null) c.prunedAt = r.prunedAt;
  return c;
}

export function toFile(r: CheckpointFileRow): CheckpointFile {
  if (r.state === "file") return { path: r.path, hash: r.hash ?? "", mode: r.mode ?? 0o644, size: r.size ?? 0 };
  if (r.state === "absent") return { path: r.path, absent: true };
  return { path: r.path, skipped: r.note ?? "not stored" };
}

function toRow(f: CheckpointFile): CheckpointFileRow {
  if ("hash" in f) return { path: f.path, state: "file", hash: f.hash, mode: f.mode, size: f.size, note: null };
  if ("absent" in f) return { path: f.path, state: "absent", hash: null, mode: null, size: null, note: null };
  return { path: f.path, state: "skipped", hash: null, mode: null, size: null, note: f.skipped };
}

export class CheckpointService {
  readonly #backend: Backend;
  readonly #root: string;
  readonly #now: () => Date;
  readonly blobs: BlobStore;
  readonly retain: number;
  readonly #exclude: readonly string[];
  readonly #maxFileBytes: number;
  /**
   * This process's copy of the stat cache, valid while the store's generation is unchanged: a
   * long-lived process (server, MCP, library) skips re-reading thousands of rows per checkpoint.
   */
  #statMemo: { generation: number; cache: Map<string, StatCacheRow> } | undefined;

  constructor(backend: Backend, root: string, batonDir: string, opts: CheckpointOptions & { now?: () => Date } = {}) {
    this.#backend = backend;
    this.#root = root;
    this.#now = opts.now ?? (() => new Date());
    this.blobs = new BlobStore(join(batonDir, "blobs"), { durable: opts.durable ?? true });
    const config = readCheckpointConfig(batonDir);
    this.retain = opts.retain ?? config.retain ?? 100;
    if (!Number.isInteger(this.retain) || this.retain < 1)
      throw badInput(`checkpoint retention must be a whole number ≥ 1, got ${this.retain}`);
    this.#exclude = [...(config.exclude ?? []), ...(opts.exclude ?? [])];
    this.#maxFileBytes = opts.maxFileBytes ?? config.maxFileBytes ?? 64 * 1024 * 1024;
  }

  get root(): string {
    return this.#root;
  }

  /** Workspace-relative, safe form of a path a caller gave (relative to the root, or absolute inside it). */
  relPath(p: string): string {
    const rel = workspaceRelative(this.#root, p);
    if (!rel) throw unsafePath(p, `is outside the workspace ${this.#root}`);
    checkPath(rel);
    return rel;
  }

  /** Now, by the filesystem's clock (the mtime of a file just written); -Infinity (trust nothing) if it cannot be read. */
  #fsClock(): number {
    const file = join(this.blobs.dir, "..", CLOCK_FILE);
    try {
      writeFileSync(file, "");
      return statSync(file).mtimeMs;
    } catch {
      return Number.NEGATIVE_INFINITY;
    }
  }

  /**
   * Store the current content of `files` (a tool just wrote them) as blobs before any checkpoint
   * names them, so the next checkpoint that covers them finds them stored and only refers to
   * them. Nothing else changes: until a checkpoint takes it, such a blob is an orphan like any
   * other (gc sweeps orphans past their grace period, and a checkpoint that finds its blobs
   * collected meanwhile retries). Paths outside the workspace, or not regular files, are
   * skipped. Returns how many blobs were new.
   */
  storeAhead(files: readonly string[]): number {
    let created = 0;
    for (const p of files) {
      let rel: string;
      try {
        rel = this.relPath(p);
      } catch {
        continue;
      }
      const cur = readCurrent(this.#root, rel, this.#maxFileBytes);
      if (cur.kind === "file" && this.blobs.put(cur.content).created) created++;
    }
    this.blobs.sync();
    return created;
  }

  /**
   * `storeAhead` for every file a whole-tree checkpoint would read now (a shell command may
   * have changed any): the files whose size, times, inode or mode differ from the stat cache.
   * Reads only; the checkpoint itself still walks the tree and decides. Returns how many blobs
   * were new.
   */
  async storeAheadTree(): Promise<number> {
    const cache = await this.#backend.transaction("read", async (tx) => {
      const generation = await tx.checkpoints.statCacheGeneration();
      const memo = this.#statMemo;
      return memo?.generation === generation ? memo.cache : new Map((await tx.checkpoints.statCache()).map((r) => [r.path, r]));
    });
    let created = 0;
    for (const f of walkTree(this.#root, { exclude: this.#exclude }).files) {
      if (unchanged(cache.get(f.path), f) || f.size > this.#maxFileBytes) continue;
      const content = readRegular(join(this.#root, f.path));
      if (content !== undefined && this.blobs.put(content.data).created) created++;
    }
    this.blobs.sync();
    return created;
  }

  /** The paths a whole-tree checkpoint would cover now. */
  treePaths(): string[] {
    return walkTree(this.#root, { exclude: this.#exclude }).files.map((f) => f.path);
  }

  async create(sessionId: string, input: CheckpointInput = {}): Promise<CheckpointResult> {
    if (input.files && input.files.length > 0 && input.all) throw badInput("give either --files or --all, not both");
    if (input.turn !== undefined && (!Number.isSafeInteger(input.turn) || input.turn < 0))
      throw badInput("turn must be a whole number ≥ 0");
    if (input.files && input.files.length > 0) {
      const paths = [...new Set(input.files.map((p) => this.relPath(p)))];
      return this.#targeted(sessionId, "targeted", paths, input);
    }
    return this.#tree(sessionId, input);
  }

  /** A safety checkpoint of `paths`, taken by a rollback before it restores `restores`. */
  safety(sessionId: string, paths: readonly string[], restores: string, protect: readonly string[]): Promise<CheckpointResult> {
    return this.#targeted(sessionId, "safety", paths, { label: `before rolling back to ${restores}` }, restores, protect);
  }

  async #targeted(
    sessionId: string,
    kind: CheckpointKind,
    paths: readonly string[],
    input: CheckpointInput,
    restores?: string,
    protect: readonly string[] = [],
  ): Promise<CheckpointResult> {
    const files: CheckpointFile[] = [];
    let stored = 0;
    for (const path of paths) {
      const cur = readCurrent(this.#root, path, this.#maxFileBytes);
      if (cur.kind === "absent") files.push({ path, absent: true });
      else if (cur.kind === "other") files.push({ path, skipped: cur.what });
      else {
        const put = this.blobs.put(cur.content);
        if (put.created) stored++;
        files.push({ path, hash: put.hash, mode: cur.mode, size: cur.size });
      }
    }
    this.blobs.sync();
    files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    const hashes = files.flatMap((f) => ("hash" in f ? [f.hash] : []));
    const result = await this.#commit(sessionId, kind, files, input, { restores, protect }, async () => {
      // Under the write lock no collection runs: the blobs we stored or deduplicated must still be there.
      for (const h of hashes) if (!this.blobs.has(h)) throw new EpochChanged();
    });
    return { ...result, stats: { files: files.length, read: paths.length, cached: 0, blobsStored: stored } };
  }

  async #tree(sessionId: string, input: CheckpointInput): Promise<CheckpointResult> {
    for (let attempt = 1; ; attempt++) {
      const { epoch, generation, cache } = await this.#backend.transaction("read", async (tx) => {
        const generation = await tx.checkpoints.statCacheGeneration();
        const memo = this.#statMemo;
        return {
          epoch: await tx.checkpoints.blobEpoch(),
          generation,
          cache: memo?.generation === generation ? memo.cache : new Map((await tx.checkpoints.statCache()).map((r) => [r.path, r])),
        };
      });
      this.#statMemo = undefined; // rebuilt below once this checkpoint commits
      const clockMs = this.#fsClock();
      const scan = walkTree(this.#root, { exclude: this.#exclude });
      const files: CheckpointFile[] = [];
      const fresh: StatCacheRow[] = [];
      let read = 0;
      let stored = 0;
      let known = 0;
      for (const f of scan.files) {
        const c = cache.get(f.path);
        if (c) known++;
        if (c && unchanged(c, f)) {
          files.push({ path: f.path, hash: c.hash, mode: f.mode, size: f.size });
          continue;
        }
        if (f.size > this.#maxFileBytes) {
          files.push({ path: f.path, skipped: `larger than ${this.#maxFileBytes} bytes` });
          continue;
        }
        const content = readRegular(join(this.#root, f.path));
        if (content === undefined) continue; // vanished or replaced while walking
        read++;
        const put = this.blobs.put(content.data);
        if (put.created) stored++;
        files.push({ path: f.path, hash: put.hash, mode: f.mode, size: content.data.byteLength });
        fresh.push({ ...content.stat, path: f.path, hash: put.hash, checkedMs: clockMs });
      }
      this.blobs.sync();
      let vanished: string[] = [];
      if (known < cache.size) {
        const seen = new Set(scan.files.map((f) => f.path));
        vanished = [...cache.keys()].filter((p) => !seen.has(p));
      }
      try {
        let expected = -1;
        const result = await this.#commit(
          sessionId,
          "tree",
          files,
          input,
          {},
          async (tx) => {
            if ((await tx.checkpoints.blobEpoch()) !== epoch) throw new EpochChanged();
            const before = await tx.checkpoints.statCacheGeneration();
            if (fresh.length > 0 || vanished.length > 0) {
              await tx.checkpoints.putStatCache(fresh);
              await tx.checkpoints.deleteStatCache(vanished);
              await tx.checkpoints.bumpStatCacheGeneration();
            }
            // Our copy stays valid only if nobody else changed the cache since we read it.
            if (before === generation) expected = before + (fresh.length > 0 || vanished.length > 0 ? 1 : 0);
          },
          async (tx) => {
            if (expected < 0 || (await tx.checkpoints.statCacheGeneration()) !== expected) return; // retention forgot entries
            for (const p of vanished) cache.delete(p);
            for (const r of fresh) cache.set(r.path, r);
            this.#statMemo = { generation: expected, cache };
          },
        );
        return { ...result, stats: { files: files.length, read, cached: files.length - read, blobsStored: stored } };
      } catch (err) {
        if (!(err instanceof EpochChanged) || attempt >= MAX_RETRIES) throw err instanceof EpochChanged ? busy() : err;
      }
    }
  }

  async #commit(
    sessionId: string,
    kind: CheckpointKind,
    files: CheckpointFile[],
    input: CheckpointInput,
    extra: { restores?: string | undefined; protect?: readonly string[] },
    check: (tx: StoreTx) => Promise<void>,
    after?: (tx: StoreTx) => Promise<void>,
  ): Promise<Omit<CheckpointResult, "stats">> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#backend.transaction("write", async (tx) => {
          if (!(await tx.getSession(sessionId))) {
            throw new BatonError("not_found", `no session "${sessionId}"; run \`baton session list --all\` to see the sessions`, {
              sessionId,
            });
          }
          await check(tx);
          const q = tx.checkpoints;
          const last = await q.lastCheckpoint(sessionId);
          const row: CheckpointRow = {
            id: `cp-${randomHex(5)}`,
            sessionId,
            seq: (last?.seq ?? 0) + 1,
            kind,
            runId: input.runId ?? null,
            turn: input.turn ?? null,
            toolName: input.toolName ?? null,
            parent: last?.id ?? null,
            label: input.label ?? null,
            pinned: input.pinned ?? false,
            restores: extra.restores ?? null,
            createdAt: this.#now().toISOString(),
            prunedAt: null,
            fileCount: files.length,
          };
          await q.insertCheckpoint(row, files.map(toRow));
          const pruned = await this.#applyRetention(tx, sessionId, new Set([row.id, ...(extra.protect ?? [])]));
          await after?.(tx);
          return { checkpoint: { ...toInfo(row), files }, pruned };
        });
      } catch (err) {
        // Targeted: a blob vanished before we took the lock; store it again and retry.
        if (!(err instanceof EpochChanged) || kind === "tree" || attempt >= MAX_RETRIES) throw err;
        for (const f of files) {
          if ("hash" in f && !this.blobs.has(f.hash)) {
            const cur = readCurrent(this.#root, f.path, this.#maxFileBytes);
            if (cur.kind !== "file" || sha256(cur.content) !== f.hash) throw busy();
            this.blobs.put(cur.content, f.hash);
          }
        }
        this.blobs.sync();
      }
    }
  }

  /** Prune the oldest unpinned checkpoints beyond the limit; delete blobs nothing references any more. */
  async #applyRetention(tx: StoreTx, sessionId: string, protect: ReadonlySet<string>): Promise<string[]> {
    // Protected checkpoints (the new one, a rollback's range) count toward the limit but are never pruned.
    const victims = (await tx.checkpoints.retentionCandidates(sessionId, this.retain)).filter((id) => !protect.has(id));
    if (victims.length === 0) return [];
    const hashes: string[] = [];
    const at = this.#now().toISOString();
    for (const id of victims) hashes.push(...(await tx.checkpoints.pruneCheckpoint(id, at)));
    await this.#deleteBlobs(tx, await tx.checkpoints.unreferenced(hashes));
    return victims;
  }

  /** Inside a write transaction: forget and delete blobs found unreferenced. */
  async #deleteBlobs(tx: StoreTx, hashes: readonly string[]): Promise<number> {
    if (hashes.length === 0) return 0;
    await tx.checkpoints.bumpBlobEpoch();
    await tx.checkpoints.forgetStatCacheHashes(hashes);
    return this.blobs.remove(hashes);
  }

  /** Delete, now, the blobs among `hashes` that nothing references (e.g. a completed session's artifacts). */
  async release(hashes: readonly string[]): Promise<number> {
    return this.#backend.transaction("write", async (tx) => this.#deleteBlobs(tx, await tx.checkpoints.unreferenced(hashes)));
  }

  /**
   * Sweep the whole store: delete blobs no live checkpoint or active session's artifact
   * references, and temp files of interrupted writes, when older than `graceMs` (a checkpoint
   * in progress in another process has stored blobs it has not committed yet). Stat cache
   * entries whose blob is gone are forgotten.
   */
  async collect(opts: { graceMs?: number } = {}): Promise<{ blobsRemoved: number; tempsRemoved: number; blobsKept: number }> {
    const grace = opts.graceMs ?? 60 * 60 * 1000;
    return this.#backend.transaction("write", async (tx) => {
      const now = Date.now();
      const referenced = new Set(await tx.checkpoints.referencedHashes());
      const { hashes, temps } = this.blobs.list();
      const doomed = hashes.filter((b) => !referenced.has(b.hash) && now - b.mtimeMs > grace).map((b) => b.hash);
      const removed = await this.#deleteBlobs(tx, doomed);
      const onDisk = new Set(hashes.map((b) => b.hash));
      const gone = [...new Set((await tx.checkpoints.statCache()).map((r) => r.hash))].filter((h) => !onDisk.has(h));
      await tx.checkpoints.forgetStatCacheHashes(gone);
      let tempsRemoved = 0;
      for (const t of temps) {
        if (now - t.mtimeMs <= grace) continue;
        try {
          unlinkSync(t.path);
          tempsRemoved++;
        } catch {
          // raced with its writer or another sweep
        }
      }
      return { blobsRemoved: removed, tempsRemoved, blobsKept: hashes.length - removed };
    });
  }

  async list(sessionId: string, opts: { includePruned?: boolean } = {}): Promise<CheckpointInfo[]> {
    return this.#backend.transaction("read", async (tx) => {
      if (!(await tx.getSession(sessionId))) throw new BatonError("not_found", `no session "${sessionId}"`, { sessionId });
      const rows = opts.includePruned ? await tx.checkpoints.listCheckpoints(sessionId) : await tx.checkpoints.liveCheckpoints(sessionId);
      return rows.map(toInfo);
    });
  }

  async get(id: string): Promise<Checkpoint> {
    return this.#backend.transaction("read", async (tx) => {
      const row = await tx.checkpoints.getCheckpoint(id);
      if (!row) throw new BatonError("no_snapshot", `no checkpoint "${id}"; list them with \`baton checkpoints\``, { checkpointId: id });
      return { ...toInfo(row), files: (await tx.checkpoints.checkpointFiles(id)).map(toFile) };
    });
  }

  async pin(id: string, pinned: boolean): Promise<CheckpointInfo> {
    return this.#backend.transaction("write", async (tx) => {
      const row = await tx.checkpoints.getCheckpoint(id);
      if (!row) throw new BatonError("no_snapshot", `no checkpoint "${id}"; list them with \`baton checkpoints\``, { checkpointId: id });
      if (row.prunedAt !== null && pinned) {
        throw new BatonError("snapshot_expired", `checkpoint ${id} was pruned at ${row.prunedAt}; it cannot be pinned any more`, {
          checkpointId: id,
        });
      }
      await tx.checkpoints.setPinned(id, pinned);
      return toInfo({ ...row, pinned });
    });
  }
}

/**
 * `.baton/config.json` `{"checkpoints": {"retain": 100, "exclude": ["*.log"], "maxFileBytes": …}}`.
 * Options given to openBaton (and BATON_CHECKPOINT_RETAIN) win over it. A bad value is
 * `bad_input` naming the file and key: checkpoints must not silently use other settings.
 */
function readCheckpointConfig(batonDir: string): Omit<CheckpointOptions, "durable"> {
  const file = join(batonDir, "config.json");
  let config: unknown;
  try {
    config = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw badInput(`${file} is not readable JSON (${(err as Error).message}); fix or remove it`);
  }
  const c = (config as { checkpoints?: unknown } | null)?.checkpoints;
  if (c === undefined) return {};
  const bad = (key: string, want: string) => badInput(`${file}: checkpoints.${key} must be ${want}`);
  if (typeof c !== "object" || c === null || Array.isArray(c)) throw bad("", "an object");
  const { retain, exclude, maxFileBytes } = c as Record<string, unknown>;
  const out: Omit<CheckpointOptions, "durable"> = {};
  if (retain !== undefined) {
    if (!Number.isInteger(retain) || (retain as number) < 1) throw bad("retain", "a whole number ≥ 1");
    out.retain = retain as number;
  }
  if (exclude !== undefined) {
    if (!Array.isArray(exclude) || !exclude.every((x) => typeof x === "string")) throw bad("exclude", "a list of gitignore patterns");
    out.exclude = exclude;
  }
  if (maxFileBytes !== undefined) {
    if (!Number.isInteger(maxFileBytes) || (maxFileBytes as number) < 0) throw bad("maxFileBytes", "a whole number of bytes");
    out.maxFileBytes = maxFileBytes as number;
  }
  return out;
}

/** Whether the stat cache's row still describes the file as walked (then its hash is the file's). */
function unchanged(c: StatCacheRow | undefined, f: TreeFile): boolean {
  return (
    c !== undefined &&
    c.size === f.size &&
    c.mtimeMs === f.mtimeMs &&
    c.ctimeMs === f.ctimeMs &&
    c.ino === f.ino &&
    c.mode === f.mode &&
    f.mtimeMs < c.checkedMs
  );
}

/** A regular file's bytes and stat, opened without following links; undefined if it vanished or changed type. */
function readRegular(abs: string): { data: Buffer; stat: Omit<StatCacheRow, "path" | "hash" | "checkedMs"> } | undefined {
  let fd: number;
  try {
    fd = openSync(abs, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return undefined;
    const data = readFileSync(fd);
    return { data, stat: { size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino, mode: st.mode & 0o777 } };
  } finally {
    closeSync(fd);
  }
}

function busy(): BatonError {
  return new BatonError(
    "storage_busy",
    "blobs were being collected by another process while this checkpoint ran, three times in a row; retry the checkpoint",
  );
}

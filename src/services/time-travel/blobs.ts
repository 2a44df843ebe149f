/**
 * The content-addressed blob store. A blob is named by the sha256 of its content, so equal
 * content is stored once. Its stored form is one byte of method (`D` deflate, `R` raw, for
 * content that does not shrink, e.g. PNG screenshots) and the payload. A read inflates and
 * re-hashes: a blob that does not match its name is `blob_corrupt`, never returned.
 *
 * Two places hold blobs. Content up to INLINE_MAX_BYTES lives in SQLite (`blobs` table), written
 * inside the same write transaction that records the checkpoint or artifact naming it: the
 * commit's one fsync makes blob and reference durable together. Larger content lives in files,
 * `.baton/blobs/<2 hex>/<62 hex>`: written to a temp file in the blob's directory, fsynced
 * (when durable) and renamed into place before the transaction that references it, the
 * directory fsynced once per checkpoint. Files written before the database held blobs stay
 * where they are: reads and the dedup check look in both places. Which blobs are still needed
 * is decided in SQLite (services/time-travel/checkpoints.ts).
 *
 * Longer than ~400 lines, a little: both places, the packing and the sweep of unfinished writes are one
 * store, read together.
 */
import { closeSync, constants, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, unlinkSync, utimesSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { Backend, CheckpointQueries, StoreTx } from "../../backend/contract.js";
import { sha256 } from "../../core/canonical.js";
import { BatonError } from "../../errors.js";
import { entryKind } from "../../platform/private-files.js";
import { fsyncDir, ioError, unsafePath } from "../../platform/safe-fs.js";
import { writeFileWhole } from "../../platform/whole-file.js";

type Zlib = typeof import("node:zlib");
let zlib: Zlib | undefined;
/** node:zlib is loaded on first use: status (which only checks blobs exist) never pays for it. */
function z(): Zlib {
  zlib ??= createRequire(import.meta.url)("node:zlib") as Zlib;
  return zlib;
}

const HASH = /^[0-9a-f]{64}$/;
const NONE: ReadonlySet<string> = new Set();
/** Temp files of a blob write that never finished (`<hash>.<pid>-<hex>.tmp`; `.tmp-*` from before). */
const TMP = /^\.tmp-|\.tmp$/;
/** Content smaller than this is stored raw: deflate's header costs more than it saves. */
const MIN_DEFLATE = 64;

/**
 * Content up to this size is stored inside SQLite, larger content as a file. Nearly every
 * source file, lockfile and screenshot is below it, so a checkpoint costs one fsync (the
 * commit's) instead of one per new blob plus one per shard directory. Above it the fsyncs
 * saved are small next to writing the content itself, while inline storage would write it
 * twice (the WAL, then the database), keep it in the write transaction's memory and hold the
 * write lock longer.
 */
export const INLINE_MAX_BYTES = 1024 * 1024;

/** The stored form of `content`: one method byte, then the payload (deflated when that saves 5%). */
export function packBlob(content: Uint8Array): Buffer {
  if (content.byteLength >= MIN_DEFLATE) {
    const deflated = z().deflateRawSync(content, { level: 1 });
    if (deflated.byteLength < content.byteLength * 0.95) {
      const out = Buffer.allocUnsafe(deflated.byteLength + 1);
      out[0] = 0x44; // D
      out.set(deflated, 1);
      return out;
    }
  }
  const out = Buffer.allocUnsafe(content.byteLength + 1);
  out[0] = 0x52; // R
  out.set(content, 1);
  return out;
}

/** Where a blob was read from, for messages: a file, or the database. */
export type BlobPlace = { file: string } | { db: string };

/**
 * The content of a stored blob, verified against `hash`; `blob_corrupt` when it does not decode or
 * match. `size`: the content's length when known, so a blob that inflates past it stops there.
 */
export function unpackBlob(hash: string, raw: Uint8Array, place: BlobPlace, size?: number): Buffer {
  const bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  let content: Buffer;
  try {
    if (bytes[0] === 0x52) content = bytes.subarray(1);
    else if (bytes[0] === 0x44)
      content = z().inflateRawSync(bytes.subarray(1), size === undefined ? undefined : { maxOutputLength: Math.max(1, size) });
    else throw new Error(bytes.byteLength === 0 ? "it is empty" : `unknown storage method byte ${bytes[0]}`);
  } catch (err) {
    throw corrupt(hash, place, (err as Error).message);
  }
  const actual = sha256(content);
  if (actual !== hash) throw corrupt(hash, place, `its content hashes to ${actual}`);
  return content;
}

function checkName(hash: string): void {
  if (!HASH.test(hash)) throw new BatonError("blob_corrupt", `"${hash}" is not a sha256 blob name`, { hash });
}

/** Where the blob for `hash` lives (whether or not it exists). */
export function blobFile(blobsDir: string, hash: string): string {
  return join(blobsDir, hash.slice(0, 2), hash.slice(2));
}

/**
 * Which of `hashes` neither place holds: a blob is a file under `.baton/blobs/` or a row of the
 * database (small ones, and every shared one on a shared store). Status (an artifact's blob) and
 * doctor (every blob a live checkpoint names) ask the question this one way.
 */
export async function missingBlobs(tx: StoreTx, blobsDir: string, hashes: Iterable<string>): Promise<string[]> {
  const notFiles = [...new Set(hashes)].filter((h) => entryKind(blobFile(blobsDir, h)) !== "file");
  if (notFiles.length === 0) return [];
  const rows = new Set(await tx.checkpoints.inlineBlobs(notFiles));
  return notFiles.filter((h) => !rows.has(h));
}

export interface PutResult {
  hash: string;
  size: number;
  /** False when the blob already existed (deduplicated). */
  created: boolean;
}

/** The file half of the store: `.baton/blobs/<2 hex>/<62 hex>`. */
export class BlobStore {
  readonly dir: string;
  readonly #durable: boolean;
  /** Directories that gained a blob since the last `sync()`. */
  readonly #dirty = new Set<string>();
  /** Whether a shard directory was created since the last `sync()` (then the store's own directory changed too). */
  #newShard = false;
  #newRoot = false;
  /** Blobs this store has written or read back whole: what `put` finds there needs no second look. */
  readonly #verified = new Set<string>();

  constructor(dir: string, opts: { durable?: boolean } = {}) {
    this.dir = dir;
    this.#durable = opts.durable ?? true;
  }

  path(hash: string): string {
    return blobFile(this.dir, hash);
  }

  has(hash: string): boolean {
    return entryKind(this.path(hash)) === "file";
  }

  /**
   * Store `content` (whose sha256 is `hash`, when the caller already computed it). An existing
   * blob is not rewritten once it is read back as this content (once per store); its mtime is
   * refreshed so a concurrent sweep's grace period covers it. Anything else there is replaced: a
   * damaged blob, or one a repository planted under the name of a large file it ships (its hash
   * is public), which would otherwise stand for this content in every checkpoint, unrestorable.
   */
  put(content: Uint8Array, hash = sha256(content)): PutResult {
    const file = this.path(hash);
    const dir = join(this.dir, hash.slice(0, 2));
    // A shard that is a link (a repository can commit `.baton/blobs/ab -> …`) would take the
    // file's contents out of the workspace: refused. A blob that is a link is written over.
    const shard = entryKind(dir);
    if (shard !== undefined && shard !== "dir") throw unsafePath(dir, "is a symbolic link or not a folder");
    const there = entryKind(file);
    if (there === "file" && this.#holds(file, hash, content.byteLength)) {
      try {
        const now = new Date();
        utimesSync(file, now, now);
      } catch {
        // a read-only store still deduplicates
      }
      return { hash, size: content.byteLength, created: false };
    }
    if (there === "dir") {
      // A folder where the blob goes (never Baton's: a repository's, or a damaged store's) would fail every checkpoint of this content.
      try {
        rmSync(file, { recursive: true, force: true });
      } catch (err) {
        throw ioError(`cannot replace ${file}, a folder where a blob goes`, err);
      }
    }
    const packed = packBlob(content);
    try {
      const created = mkdirSync(dir, { recursive: true, mode: 0o700 });
      if (created !== undefined) {
        this.#newShard = true;
        if (created === this.dir) this.#newRoot = true;
      }
      // private: a blob is a file's contents, verbatim; the directory is fsynced in sync(), batched
      writeFileWhole(file, packed, { durable: this.#durable, syncDir: false });
    } catch (err) {
      throw ioError(`cannot store a blob in ${dir}`, err);
    }
    this.#verified.add(hash);
    this.#dirty.add(dir);
    return { hash, size: content.byteLength, created: true };
  }

  /**
   * Whether the blob file at `file` holds `size` bytes hashing to `hash`. A stored form is at most
   * the content and one byte, so a larger file is not it, unread. One Baton wrote is private
   * (0600, whatever the umask); one a checkout made (git writes 0644) is read back whole, once per
   * store, before it stands for this content.
   */
  #holds(file: string, hash: string, size: number): boolean {
    if (this.#verified.has(hash)) return true;
    let st: ReturnType<typeof lstatSync>;
    try {
      st = lstatSync(file);
    } catch {
      return false;
    }
    if (!st.isFile() || st.size > size + 1) return false;
    if (process.platform !== "win32" && (st.mode & 0o077) === 0) return true;
    try {
      if (unpackBlob(hash, readNoFollow(file), { file }, size).byteLength !== size) return false;
    } catch {
      return false;
    }
    this.#verified.add(hash);
    return true;
  }

  /** fsync the directories that gained blobs, so their new names survive a power loss. Call before committing references. */
  sync(): void {
    if (!this.#durable) {
      this.#dirty.clear();
      this.#newShard = false;
      this.#newRoot = false;
      return;
    }
    for (const dir of this.#dirty) fsyncDir(dir);
    if (this.#newShard) fsyncDir(this.dir);
    if (this.#newRoot) fsyncDir(dirname(this.dir));
    this.#dirty.clear();
    this.#newShard = false;
    this.#newRoot = false;
  }

  /** The content of `hash`, verified against it. */
  get(hash: string): Buffer {
    checkName(hash);
    const file = this.path(hash);
    let raw: Buffer;
    // Never through a link (a shard or a blob a repository committed as one): then it is missing.
    if (entryKind(join(this.dir, hash.slice(0, 2))) !== "dir" || entryKind(file) !== "file") throw missing(hash, { path: file });
    try {
      raw = readNoFollow(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT" || (err as NodeJS.ErrnoException).code === "ELOOP")
        throw missing(hash, { path: file });
      throw ioError(`cannot read blob ${file}`, err);
    }
    const content = unpackBlob(hash, raw, { file });
    this.#verified.add(hash);
    return content;
  }

  /** Delete blobs (missing ones are fine). Returns how many files were deleted. */
  remove(hashes: Iterable<string>): number {
    let n = 0;
    for (const h of hashes) {
      if (entryKind(join(this.dir, h.slice(0, 2))) !== "dir") continue; // never through a linked shard
      try {
        unlinkSync(this.path(h));
        n++;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw ioError(`cannot delete blob ${h}`, err);
      }
    }
    return n;
  }

  /** Every blob on disk, and temp files left by an interrupted write, with their mtimes. */
  list(): { hashes: { hash: string; mtimeMs: number }[]; temps: { path: string; mtimeMs: number }[] } {
    const hashes: { hash: string; mtimeMs: number }[] = [];
    const temps: { path: string; mtimeMs: number }[] = [];
    let shards: string[];
    try {
      shards = readdirSync(this.dir, { withFileTypes: true })
        .filter((d) => d.isDirectory()) // a linked shard is not the store's
        .map((d) => d.name);
    } catch {
      return { hashes, temps };
    }
    for (const shard of shards) {
      if (!/^[0-9a-f]{2}$/.test(shard)) continue;
      let names: string[];
      try {
        names = readdirSync(join(this.dir, shard));
      } catch {
        continue;
      }
      for (const name of names) {
        const p = join(this.dir, shard, name);
        let mtimeMs: number;
        try {
          const st = lstatSync(p);
          if (!st.isFile()) continue; // a link is not a blob (nor a temp file of one)
          mtimeMs = st.mtimeMs;
        } catch {
          continue;
        }
        if (TMP.test(name)) temps.push({ path: p, mtimeMs });
        else if (HASH.test(shard + name)) hashes.push({ hash: shard + name, mtimeMs });
      }
    }
    return { hashes, temps };
  }
}

/**
 * A blob made ready outside any transaction: hashed, and packed (small content) or written to
 * its file (large content). `Blobs.commit` finishes it inside the write transaction that
 * references it.
 */
export interface StagedBlob {
  readonly hash: string;
  readonly size: number;
  /** Inline: the stored form (undefined once a caller stored it ahead and let go of it). */
  packed: Buffer | undefined;
  /** Whether it lives in the database (else in a file). */
  readonly inline: boolean;
  /** A file kept in this workspace's store whatever its size (a private file on a shared store). */
  readonly local: boolean;
  /** File: whether staging created the file. */
  readonly fileCreated: boolean;
}

/** What `commit` found: stored now, already stored (in either place), or (a file) gone since it was staged. */
export type CommitOutcome = "stored" | "present" | "gone";

/** Both halves of the store: rows of the `blobs` table for small content, files for large. */
export class Blobs {
  readonly files: BlobStore;
  readonly inlineMaxBytes: number;
  readonly #backend: Backend;
  /** The store, as messages name it (its file, or its URL and schema). */
  readonly #storeName: string;
  /** The store is shared across hosts: a blob other hosts need must be in it, not only in a file here. */
  readonly #shared: boolean;
  /** This workspace, as messages about its private files' blobs name it (host and root). */
  readonly #here: () => string;

  constructor(
    backend: Backend,
    dir: string,
    opts: { durable?: boolean; inlineMaxBytes?: number; shared?: boolean; here?: () => string } = {},
  ) {
    this.#backend = backend;
    this.files = new BlobStore(dir, { durable: opts.durable ?? true });
    this.inlineMaxBytes = opts.inlineMaxBytes ?? INLINE_MAX_BYTES;
    this.#storeName = backend.location ?? `the ${backend.kind} store`;
    this.#shared = opts.shared ?? false;
    this.#here = opts.here ?? (() => dirname(dirname(dir)));
  }

  /**
   * Hash and pack small content; write large content to its file now (call `sync()` before
   * committing). `local`: a file here whatever its size, never a row of the store.
   */
  stage(content: Uint8Array, hash = sha256(content), local = false): StagedBlob {
    if (content.byteLength <= this.inlineMaxBytes && !local) {
      return { hash, size: content.byteLength, packed: packBlob(content), inline: true, local: false, fileCreated: false };
    }
    const put = this.files.put(content, hash);
    return { hash, size: content.byteLength, packed: undefined, inline: false, local, fileCreated: put.created };
  }

  /** fsync the file store's directories that gained blobs (before committing references to them). */
  sync(): void {
    this.files.sync();
  }

  /**
   * Inside the write transaction that references `s`: store an inline blob unless it is
   * stored already, in the database or (written before blobs moved there) as a file. Under
   * the write lock no collection runs, so what is present now is present at the commit.
   */
  async commit(q: CheckpointQueries, s: StagedBlob, nowMs = Date.now()): Promise<CommitOutcome> {
    if (!s.inline) return this.files.has(s.hash) ? "present" : "gone";
    // A file here dedups only for this host: on a shared store the others need the row.
    const here = !this.#shared && this.files.has(s.hash);
    if (s.packed === undefined) return (await q.inlineBlobs([s.hash])).length > 0 || here ? "present" : "gone";
    if (here) return "present";
    return (await q.putBlob(s.hash, s.packed, nowMs)) ? "stored" : "present";
  }

  /** The content of `hash`, verified: `blob_missing` when neither place has it, `blob_corrupt` when it does not match. */
  async read(hash: string): Promise<Buffer> {
    return (await this.readMany([hash])).get(hash) as Buffer;
  }

  /**
   * The verified content of each of `hashes` (one read transaction for the inline ones).
   * `local`: the hashes of private files' entries (`CheckpointFile.local`), whose blobs only
   * this workspace's files hold: a missing one says so, rather than blame the store.
   */
  async readMany(hashes: readonly string[], local: ReadonlySet<string> = NONE): Promise<Map<string, Buffer>> {
    const wanted = [...new Set(hashes)];
    for (const h of wanted) checkName(h);
    const out = new Map<string, Buffer>();
    if (wanted.length === 0) return out;
    const rows = await this.#backend.transaction("read", async (tx) => {
      const found = new Map<string, Uint8Array>();
      for (const h of wanted) {
        const raw = await tx.checkpoints.getBlob(h);
        if (raw !== undefined) found.set(h, raw);
      }
      return found;
    });
    for (const h of wanted) {
      const raw = rows.get(h);
      out.set(h, raw !== undefined ? unpackBlob(h, raw, { db: this.#storeName }) : this.#fileOrMissing(h, local.has(h)));
    }
    return out;
  }

  #fileOrMissing(hash: string, local: boolean): Buffer {
    try {
      return this.files.get(hash);
    } catch (err) {
      if (!(err instanceof BatonError && err.code === "blob_missing")) throw err;
      const path = this.files.path(hash);
      if (!local) throw missing(hash, { path, db: this.#storeName });
      throw new BatonError(
        "blob_missing",
        `blob ${hash} of a private file is missing from ${path}: private files' content is kept only in the workspace that checkpointed it (${this.#here()}), never in the shared store, so nothing else holds it; the checkpoints that name it cannot restore that file (restore the others with \`--files\`)`,
        { hash, path, local: true },
      );
    }
  }

  /** Which of `hashes` are stored, in either place. */
  async present(hashes: readonly string[]): Promise<Set<string>> {
    const wanted = [...new Set(hashes)];
    if (wanted.length === 0) return new Set();
    const inline = new Set(await this.#backend.transaction("read", (tx) => tx.checkpoints.inlineBlobs(wanted)));
    for (const h of wanted) if (!inline.has(h) && HASH.test(h) && this.files.has(h)) inline.add(h);
    return inline;
  }

  /**
   * Inside a transaction: whether every one of `hashes` is stored, in either place. In a write
   * transaction the collector's lock is then held (`inlineBlobs` takes it shared), so what is
   * present now is present at the commit.
   */
  async allPresent(q: CheckpointQueries, hashes: readonly string[]): Promise<boolean> {
    const wanted = [...new Set(hashes)];
    if (wanted.length === 0) return true;
    const inline = new Set(await q.inlineBlobs(wanted));
    return wanted.every((h) => inline.has(h) || this.files.has(h));
  }

  /**
   * Inside a write transaction: delete `hashes` from both places. Rows go with the transaction;
   * files are unlinked just before it commits (StoreTx.beforeCommit), still under the write
   * lock, so a transaction that rolls back leaves every file its rows name. Returns how many
   * blobs go.
   */
  async remove(tx: StoreTx, hashes: readonly string[]): Promise<number> {
    const inline = new Set(await tx.checkpoints.deleteBlobs(hashes));
    const files = hashes.filter((h) => HASH.test(h) && this.files.has(h));
    if (files.length > 0) tx.beforeCommit(() => void this.files.remove(files));
    return inline.size + files.filter((h) => !inline.has(h)).length;
  }

  /** Every stored blob (both places, each hash once) with when it was stored, and the file store's temp files. */
  async list(q: CheckpointQueries): Promise<{ hashes: { hash: string; mtimeMs: number }[]; temps: { path: string; mtimeMs: number }[] }> {
    const { hashes, temps } = this.files.list();
    const seen = new Set(hashes.map((h) => h.hash));
    for (const b of await q.listBlobs()) if (!seen.has(b.hash)) hashes.push({ hash: b.hash, mtimeMs: b.storedMs });
    return { hashes, temps };
  }
}

function corrupt(hash: string, place: BlobPlace, why: string): BatonError {
  const fix =
    "file" in place
      ? `Delete ${place.file} and take a new checkpoint`
      : `It is a row of the store ${place.db}; take a new checkpoint, and run \`baton doctor\` to check the store`;
  return new BatonError(
    "blob_corrupt",
    `blob ${hash} is corrupt (${why}); it was not used. ${fix}; the checkpoints that name it cannot be restored`,
    "file" in place ? { hash, path: place.file } : { hash, database: place.db },
  );
}

function missing(hash: string, where: { path: string; db?: string }): BatonError {
  return new BatonError(
    "blob_missing",
    `blob ${hash} is missing (${where.db !== undefined ? `neither the store ${where.db} nor ${where.path} holds it` : `${where.path} does not exist`}); the checkpoint or artifact that names it cannot be restored. Take a new checkpoint, and run \`baton doctor\` to see what else is missing`,
    { hash, path: where.path },
  );
}

/** A regular file's bytes, opened without following a link at the end (ELOOP when it is one). */
function readNoFollow(file: string): Buffer {
  const fd = openSync(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  try {
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

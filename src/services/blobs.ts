/**
 * The content-addressed blob store: `.baton/blobs/<2 hex>/<62 hex>`, named by the sha256 of the
 * content. Equal content is stored once. Each blob is one byte of method (`D` deflate, `R` raw,
 * for content that does not shrink, e.g. PNG screenshots) and the payload. A read inflates and
 * re-hashes: a blob that does not match its name is `blob_corrupt`, never returned.
 *
 * Writes go to a temp file in the blob's directory, are fsynced (when durable), and renamed
 * into place, so a blob is either absent or complete. Which blobs are still needed is decided
 * in SQLite (services/checkpoints.ts); this module only stores, reads and deletes files.
 */
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeSync,
} from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { randomHex, sha256 } from "../core/canonical.js";
import { BatonError } from "../errors.js";

type Zlib = typeof import("node:zlib");
let zlib: Zlib | undefined;
/** node:zlib is loaded on first use: status (which only checks blobs exist) never pays for it. */
function z(): Zlib {
  zlib ??= createRequire(import.meta.url)("node:zlib") as Zlib;
  return zlib;
}

const HASH = /^[0-9a-f]{64}$/;
const TMP = /^\.tmp-/;
/** Content smaller than this is stored raw: deflate's header costs more than it saves. */
const MIN_DEFLATE = 64;

/** Where the blob for `hash` lives (whether or not it exists). */
export function blobFile(blobsDir: string, hash: string): string {
  return join(blobsDir, hash.slice(0, 2), hash.slice(2));
}

export interface PutResult {
  hash: string;
  size: number;
  /** False when the blob already existed (deduplicated). */
  created: boolean;
}

export class BlobStore {
  readonly dir: string;
  readonly #durable: boolean;
  /** Directories that gained a blob since the last `sync()`. */
  readonly #dirty = new Set<string>();
  /** Whether a shard directory was created since the last `sync()` (then the store's own directory changed too). */
  #newShard = false;
  #newRoot = false;

  constructor(dir: string, opts: { durable?: boolean } = {}) {
    this.dir = dir;
    this.#durable = opts.durable ?? true;
  }

  path(hash: string): string {
    return blobFile(this.dir, hash);
  }

  has(hash: string): boolean {
    return existsSync(this.path(hash));
  }

  /**
   * Store `content` (whose sha256 is `hash`, when the caller already computed it). An existing
   * blob is not rewritten; its mtime is refreshed so a concurrent sweep's grace period covers it.
   */
  put(content: Uint8Array, hash = sha256(content)): PutResult {
    const file = this.path(hash);
    if (existsSync(file)) {
      try {
        const now = new Date();
        utimesSync(file, now, now);
      } catch {
        // a read-only store still deduplicates
      }
      return { hash, size: content.byteLength, created: false };
    }
    const dir = join(this.dir, hash.slice(0, 2));
    let packed: Uint8Array = content;
    let method = 0x52; // R
    if (content.byteLength >= MIN_DEFLATE) {
      const deflated = z().deflateRawSync(content, { level: 1 });
      if (deflated.byteLength < content.byteLength * 0.95) {
        packed = deflated;
        method = 0x44; // D
      }
    }
    try {
      const created = mkdirSync(dir, { recursive: true });
      if (created !== undefined) {
        this.#newShard = true;
        if (created === this.dir) this.#newRoot = true;
      }
      const tmp = join(dir, `.tmp-${process.pid}-${randomHex(6)}`);
      const fd = openSync(tmp, "wx", 0o644);
      try {
        writeSync(fd, Uint8Array.of(method));
        writeSync(fd, packed);
        if (this.#durable) fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(tmp, file);
    } catch (err) {
      throw ioError(`cannot store a blob in ${dir}`, err);
    }
    this.#dirty.add(dir);
    return { hash, size: content.byteLength, created: true };
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
    if (!HASH.test(hash)) throw new BatonError("blob_corrupt", `"${hash}" is not a sha256 blob name`, { hash });
    const file = this.path(hash);
    let raw: Buffer;
    try {
      raw = readFileSync(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") {
        throw new BatonError(
          "blob_missing",
          `blob ${hash} is missing from ${this.dir}; the checkpoint or artifact that names it cannot be restored. Take a new checkpoint`,
          { hash, path: file },
        );
      }
      throw ioError(`cannot read blob ${file}`, err);
    }
    let content: Buffer;
    try {
      if (raw[0] === 0x52) content = raw.subarray(1);
      else if (raw[0] === 0x44) content = z().inflateRawSync(raw.subarray(1));
      else throw new Error(`unknown storage method byte ${raw[0]}`);
    } catch (err) {
      throw corrupt(hash, file, (err as Error).message);
    }
    const actual = sha256(content);
    if (actual !== hash) throw corrupt(hash, file, `its content hashes to ${actual}`);
    return content;
  }

  /** Delete blobs (missing ones are fine). */
  remove(hashes: Iterable<string>): number {
    let n = 0;
    for (const h of hashes) {
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
      shards = readdirSync(this.dir);
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
          mtimeMs = statSync(p).mtimeMs;
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

function corrupt(hash: string, file: string, why: string): BatonError {
  return new BatonError(
    "blob_corrupt",
    `blob ${hash} is corrupt (${why}); it was not used. Delete ${file} and take a new checkpoint; the checkpoints that name it cannot be restored`,
    { hash, path: file },
  );
}

function ioError(what: string, err: unknown): BatonError {
  const code = (err as NodeJS.ErrnoException).code;
  return new BatonError(
    code === "EACCES" || code === "EPERM" || code === "EROFS" ? "workspace_unwritable" : "io_error",
    `${what}: ${(err as Error).message}`,
    { errno: code },
    { cause: err },
  );
}

export function fsyncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch (err) {
    // Some filesystems refuse fsync on a directory (EINVAL/EISDIR); the rename is still atomic.
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== "EINVAL" && code !== "EISDIR" && code !== "EPERM" && code !== "EBADF") throw ioError(`cannot fsync ${dir}`, err);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

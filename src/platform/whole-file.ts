/**
 * Writing a file whole or not at all, for files Baton owns outside the workspace tree's
 * restore discipline (`.baton/server.json`, `server.key`, the ledger's health file, blobs, an
 * agent's settings file outside the workspace). Inside the workspace, where the supervised agent
 * can swap a directory for a link, files go through safe-fs's `atomicWrite` instead.
 *
 * The one durability policy: the content goes to a temp file in the target's directory
 * (O_EXCL, owner-only until it is in place), is fsynced when `durable`, then renamed over the
 * target (or, `exclusive`, linked: fails when the target exists, like O_EXCL), and the
 * directory is fsynced when `durable` (unless the caller batches that, `syncDir: false`). A
 * failure at any step removes the temp file and is a typed error (`io_error`, or
 * `workspace_unwritable` for permissions); a half-written target is never left behind.
 */
import { closeSync, fchmodSync, fsyncSync, linkSync, openSync, readdirSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { randomHex } from "../core/canonical.js";
import { processAlive } from "./process-facts.js";
import { fsyncDir, ioError } from "./safe-fs.js";

export interface WholeFileOptions {
  /** The file's permission bits once in place (default 0o600: private). */
  mode?: number;
  /** fsync the file and its directory (default true). */
  durable?: boolean;
  /** Fail (return false) when the file exists instead of replacing it. */
  exclusive?: boolean;
  /** fsync the directory here (default: when durable); false when the caller fsyncs it later, batched. */
  syncDir?: boolean;
  /**
   * First remove this file's temp files left by writers that are gone (a process killed between
   * writing its temp file and renaming it). For the few files of `.baton/` written now and then;
   * blobs, written by the thousand, have their own sweep (services/time-travel/blobs.ts).
   */
  sweep?: boolean;
}

/** Write `content` to `file` whole. Returns false only for `exclusive` when the file exists. */
export function writeFileWhole(file: string, content: string | Uint8Array, o: WholeFileOptions = {}): boolean {
  const durable = o.durable ?? true;
  const tmp = `${file}.${process.pid}-${randomHex(6)}.tmp`;
  let fd: number | undefined;
  try {
    if (o.sweep) sweepTemps(file);
    fd = openSync(tmp, "wx", 0o600);
    const bytes = typeof content === "string" ? Buffer.from(content) : content;
    // A full disk can take part of a write: keep writing until every byte is down.
    for (let done = 0; done < bytes.byteLength; ) done += writeSync(fd, bytes, done, bytes.byteLength - done);
    if (o.mode !== undefined && (o.mode & 0o777) !== 0o600) fchmodSync(fd, o.mode & 0o777);
    if (durable) fsyncSync(fd);
    const f = fd;
    fd = undefined;
    closeSync(f); // a failing close (EIO on a network filesystem) is the write failing
    if (o.exclusive) {
      try {
        linkSync(tmp, file);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
        throw err;
      }
    } else renameSync(tmp, file);
    if (durable && (o.syncDir ?? true)) fsyncDir(dirname(file));
    return true;
  } catch (err) {
    throw ioError(`cannot write ${file}`, err, file);
  } finally {
    if (fd !== undefined) {
      try {
        closeSync(fd);
      } catch {
        // already failing: the error above is the one to report
      }
    }
    try {
      unlinkSync(tmp); // after a link (the temp name is left over) or a failure; renamed otherwise
    } catch {
      // renamed into place, or never created
    }
  }
}

/** A temp file of `writeFileWhole`: the target's name, the writer's pid, 12 hex digits. */
const TEMP = /^(.+)\.(\d+)-[0-9a-f]{12}\.tmp$/;

/**
 * Remove the temp files of `file` whose writer is no longer alive. A live writer's (this
 * process's included) are left alone: it is between its write and its rename. A pid reused
 * since by another process keeps its file until that process ends too.
 */
function sweepTemps(file: string): void {
  const dir = dirname(file);
  const name = basename(file);
  for (const entry of readdirSync(dir)) {
    const m = TEMP.exec(entry);
    if (m === null || m[1] !== name || processAlive(Number(m[2]))) continue;
    try {
      unlinkSync(join(dir, entry));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err; // another sweeper took it first
    }
  }
}

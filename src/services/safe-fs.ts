/**
 * File operations that never leave the workspace and never follow a symbolic link, for
 * checkpoints and restores. Every path is first checked by core/paths.ts; then each parent
 * directory is lstat'ed from the root down (a symlink or a non-directory is refused), files are
 * opened with O_NOFOLLOW, and writes go to a temp file in the same directory (O_EXCL), are
 * fsynced, renamed over the target and the directory fsynced: a restore killed at any moment
 * leaves each file wholly old or wholly new.
 *
 * Not covered: another process swapping a directory for a symlink between our lstat and the
 * rename (a race Node cannot close without openat). The parents are re-checked just before
 * each rename to narrow it.
 */
import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  type Stats,
  unlinkSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { randomHex } from "../core/canonical.js";
import { pathProblem } from "../core/paths.js";
import { BatonError } from "../errors.js";
import { fsyncDir } from "./blobs.js";

/** Temp files a restore writes beside its target (`.baton-restore-<pid>-<hex>.tmp`); a tree walk ignores them. */
export const RESTORE_TEMP = /^\.baton-restore-(\d+)-[0-9a-f]+\.tmp$/;

export function unsafePath(path: string, why: string): BatonError {
  return new BatonError(
    "unsafe_path",
    `refusing path ${JSON.stringify(path)}: it ${why}. Baton only reads and restores files inside the workspace, never through a symbolic link`,
    { path, reason: why },
  );
}

/** Throws `unsafe_path` unless `rel` is a safe workspace-relative path. */
export function checkPath(rel: string): void {
  const problem = pathProblem(rel);
  if (problem) throw unsafePath(rel, problem);
}

function lstatMaybe(p: string): Stats | undefined {
  try {
    return lstatSync(p);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw err;
  }
}

/**
 * The absolute directory holding `rel`, after lstat'ing each parent from the root down.
 * Missing parents are created when `create`, else the result is undefined.
 */
export function safeParentDir(root: string, rel: string, create: boolean): string | undefined {
  checkPath(rel);
  const segments = rel.split("/");
  let dir = root;
  for (let i = 0; i < segments.length - 1; i++) {
    dir = join(dir, segments[i] as string);
    const st = lstatMaybe(dir);
    if (!st) {
      if (!create) return undefined;
      mkdirSync(dir);
      continue;
    }
    if (st.isSymbolicLink()) throw unsafePath(rel, `passes through the symbolic link ${segments.slice(0, i + 1).join("/")}`);
    if (!st.isDirectory()) throw unsafePath(rel, `passes through ${segments.slice(0, i + 1).join("/")}, which is not a directory`);
  }
  return dir;
}

export type Current = { kind: "file"; content: Buffer; mode: number; size: number } | { kind: "absent" } | { kind: "other"; what: string };

/** What is at `rel` now, read without following links; a file over `maxBytes` is `other`. */
export function readCurrent(root: string, rel: string, maxBytes = Number.POSITIVE_INFINITY): Current {
  const dir = safeParentDir(root, rel, false);
  if (dir === undefined) return { kind: "absent" };
  const abs = join(root, rel);
  const st = lstatMaybe(abs);
  if (!st) return { kind: "absent" };
  if (st.isSymbolicLink()) return { kind: "other", what: "a symbolic link" };
  if (st.isDirectory()) return { kind: "other", what: "a directory" };
  if (!st.isFile()) return { kind: "other", what: "not a regular file" };
  if (st.size > maxBytes) return { kind: "other", what: `larger than ${maxBytes} bytes` };
  const fd = openSync(abs, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const content = readFileSync(fd);
    const mode = fstatSync(fd).mode & 0o777;
    return { kind: "file", content, mode, size: content.byteLength };
  } finally {
    closeSync(fd);
  }
}

/** A restore's content written (and fsynced) beside its target, not yet renamed over it. */
export interface PreparedWrite {
  rel: string;
  dir: string;
  tmp: string;
}

/** Write `content` to a temp file in `rel`'s directory (created if missing, every parent lstat'ed). */
export function prepareWrite(root: string, rel: string, content: Uint8Array, mode: number, durable: boolean): PreparedWrite {
  const dir = safeParentDir(root, rel, true) as string;
  if (lstatMaybe(join(root, rel))?.isDirectory()) throw unsafePath(rel, "is now a directory");
  const tmp = join(dir, `.baton-restore-${process.pid}-${randomHex(6)}.tmp`);
  const fd = openSync(tmp, "wx", 0o600); // O_EXCL: never opens an existing file or link
  try {
    writeSync(fd, content);
    fchmodSync(fd, mode & 0o777);
    if (durable) fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    discardWrite({ rel, dir, tmp });
    throw err;
  }
  closeSync(fd);
  return { rel, dir, tmp };
}

/** Rename a prepared write over its target: the file is wholly old before, wholly new after. */
export function commitWrite(root: string, w: PreparedWrite): void {
  try {
    safeParentDir(root, w.rel, false); // re-check: nothing became a link meanwhile
    renameSync(w.tmp, join(root, w.rel));
  } catch (err) {
    discardWrite(w);
    throw err;
  }
}

export function discardWrite(w: PreparedWrite): void {
  try {
    unlinkSync(w.tmp);
  } catch {
    // already gone
  }
}

/** Replace (or create) the file at `rel` atomically with `content` and `mode`. */
export function atomicWrite(root: string, rel: string, content: Uint8Array, mode: number, durable: boolean): void {
  const w = prepareWrite(root, rel, content, mode, durable);
  commitWrite(root, w);
  if (durable) fsyncDir(w.dir);
}

/** Remove the file (or symlink: the link, never its target) at `rel`. Returns whether something was removed. */
export function safeRemove(root: string, rel: string, durable: boolean): boolean {
  const dir = safeParentDir(root, rel, false);
  if (dir === undefined) return false;
  const target = join(root, rel);
  const st = lstatMaybe(target);
  if (!st) return false;
  if (st.isDirectory()) throw unsafePath(rel, "is now a directory");
  unlinkSync(target);
  if (durable) fsyncDir(dir);
  return true;
}

/**
 * Remove restore temp files left in `dirs` by a rollback whose process died (SIGKILL): the
 * temp name carries the writer's pid, and only dead writers' files are removed.
 */
export function removeDeadTemps(root: string, dirs: Iterable<string>): number {
  let n = 0;
  for (const dir of dirs) {
    let names: string[];
    try {
      names = readdirSync(dir === "" ? root : join(root, dir));
    } catch {
      continue;
    }
    for (const name of names) {
      const m = RESTORE_TEMP.exec(name);
      if (!m || processAlive(Number(m[1]))) continue;
      try {
        unlinkSync(join(root, dir, name));
        n++;
      } catch {
        // gone already
      }
    }
  }
  return n;
}

function processAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

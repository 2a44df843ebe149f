/**
 * File operations that never leave the workspace and never follow a symbolic link, for
 * checkpoints and restores. Every path is first checked by core/time-travel/paths.ts. Writes go to a temp
 * file in the same directory (O_EXCL), are fsynced, renamed over the target and the directory
 * fsynced: a restore killed at any moment leaves each file wholly old or wholly new.
 *
 * **Race-free on Linux.** The agent being supervised runs shell commands in the workspace and
 * can swap a directory for a symbolic link while a restore runs. On Linux every directory is
 * reached one component at a time, each opened with O_DIRECTORY | O_NOFOLLOW relative to the
 * descriptor of its parent (through `/proc/self/fd/<fd>/<name>`, which resolves the parent by
 * descriptor, not by path), and every create, rename, unlink and stat happens relative to the
 * directory's descriptor: the directory a file lands in is the one that was checked, whatever
 * the path names a moment later. A write prepared in one directory is renamed only if walking
 * the path again reaches that same directory (device and inode). Elsewhere each parent is
 * lstat'ed from the root down and re-checked before each rename, which narrows the race but
 * cannot close it (docs/architecture.md says which platforms get which guarantee).
 *
 * Longer than ~400 lines on purpose: every operation that walks the workspace by descriptor is
 * here, so the one rule that keeps restores inside it is reviewed in one file.
 */

import { isUtf8 } from "node:buffer";
import {
  closeSync,
  constants,
  type Dirent,
  existsSync,
  fchmodSync,
  fstatSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  type Stats,
  unlinkSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { randomHex } from "../core/canonical.js";
import { pathProblem } from "../core/time-travel/paths.js";
import { BatonError } from "../errors.js";
import { processAlive } from "./process-facts.js";

/** Temp files a restore writes beside its target (`.baton-restore-<pid>-<hex>.tmp`); a tree walk ignores them. */
export const RESTORE_TEMP = /^\.baton-restore-(\d+)-[0-9a-f]+\.tmp$/;

/** Whether directories can be pinned by descriptor (Linux's /proc/self/fd). */
export const RACE_FREE = process.platform === "linux" && existsSync("/proc/self/fd");

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

/**
 * A filesystem error met while reading or restoring `rel`, as a typed error: the tree changed
 * under the restore (a link or a file where a directory was, a directory that vanished) is
 * `unsafe_path`; permissions are `workspace_unwritable`; the rest (a full disk, EIO) `io_error`.
 */
export function fsError(rel: string, err: unknown): BatonError {
  if (err instanceof BatonError) return err;
  const code = (err as NodeJS.ErrnoException).code ?? "";
  const msg = (err as Error).message;
  switch (code) {
    case "ELOOP":
    case "ENOTDIR":
    case "EISDIR":
    case "EEXIST":
    case "ENOENT":
    case "ENOTEMPTY":
      return unsafePath(rel, `changed while Baton read or restored it (${code}): a directory was swapped for a link or a file, or removed`);
    case "ENAMETOOLONG":
      return unsafePath(rel, "has a name longer than the file system allows (ENAMETOOLONG)");
    case "EACCES":
    case "EPERM":
    case "EROFS":
      return new BatonError("workspace_unwritable", `cannot write ${JSON.stringify(rel)}: ${msg}; check the workspace's permissions`, {
        path: rel,
        errno: code,
      });
    default:
      return new BatonError(
        "io_error",
        `file system failure on ${JSON.stringify(rel)}: ${msg}`,
        { path: rel, errno: code },
        { cause: err },
      );
  }
}

/** A directory of the workspace, reached without following a link: name its entries with `at`. */
interface DirHandle {
  /** A path that names `name` inside exactly this directory. */
  at(name: string): string;
  /** Device and inode, to recognise the directory again. */
  id: string;
  /** The directory's absolute path, for messages and later path-based sweeps. */
  path: string;
  fsync(): void;
  close(): void;
}

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/**
 * The directory holding `rel`. Missing parents are created when `create`, else the result is
 * undefined, as it is for a regular file on the way (nothing can be under it). A link on the
 * way is `unsafe_path`, and so is any other non-directory, or a file when creating.
 */
function openParent(root: string, rel: string, create: boolean, dirMode = 0o777): DirHandle | undefined {
  checkPath(rel);
  const segments = rel.split("/");
  const parents = segments.slice(0, -1);
  if (!RACE_FREE) {
    const dir = safeParentDir(root, rel, create, true, dirMode);
    if (dir === undefined) return undefined;
    const st = lstatSync(dir);
    return { at: (name) => join(dir, name), id: `${st.dev}:${st.ino}`, path: dir, fsync: () => fsyncDir(dir), close: () => undefined };
  }
  let fd = openSync(root, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    for (let i = 0; i < parents.length; i++) {
      const next = `/proc/self/fd/${fd}/${parents[i]}`;
      let child: number;
      try {
        child = openSync(next, DIR_FLAGS);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        const where = parents.slice(0, i + 1).join("/");
        if (code === "ENOENT" && !create) {
          closeSync(fd);
          return undefined;
        }
        if (code === "ENOENT") {
          try {
            mkdirSync(next, dirMode);
          } catch (e) {
            if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
          }
          child = openSync(next, DIR_FLAGS); // a link swapped in after mkdir: ELOOP, refused below
        } else if (code === "ENOTDIR" && !create && lstatMaybe(next)?.isFile() === true) {
          // A regular file on the way: nothing can be under it, as if the parent were missing
          // (anything else, a FIFO or a device, is unsafe_path below, as safeParentDir says).
          closeSync(fd);
          return undefined;
        } else if (code === "ELOOP" || code === "ENOTDIR") {
          throw isLink(next)
            ? unsafePath(rel, `passes through the symbolic link ${where}`)
            : unsafePath(rel, `passes through ${where}, which is not a directory`);
        } else throw err;
      }
      closeSync(fd);
      fd = child;
    }
  } catch (err) {
    closeSync(fd);
    throw fsError(rel, err);
  }
  const st = fstatSync(fd);
  const dirFd = fd;
  return {
    at: (name) => `/proc/self/fd/${dirFd}/${name}`,
    id: `${st.dev}:${st.ino}`,
    path: join(root, ...parents),
    fsync: () => {
      try {
        fsyncSync(dirFd);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code !== "EINVAL" && code !== "EISDIR" && code !== "EPERM" && code !== "EBADF") throw fsError(rel, err);
      }
    },
    close: () => closeSync(dirFd),
  };
}

function isLink(p: string): boolean {
  return lstatMaybe(p)?.isSymbolicLink() === true;
}

/** Run `fn` with the directory holding `rel` (undefined: a parent is missing and `create` is off). */
function inParent<T>(root: string, rel: string, create: boolean, fn: (d: DirHandle, name: string) => T, dirMode?: number): T | undefined {
  const d = openParent(root, rel, create, dirMode);
  if (d === undefined) return undefined;
  try {
    return fn(d, rel.slice(rel.lastIndexOf("/") + 1));
  } catch (err) {
    throw fsError(rel, err);
  } finally {
    d.close();
  }
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
 * The absolute directory holding `rel`, after lstat'ing each parent from the root down (the
 * fallback where directories cannot be pinned). Missing parents are created when `create`.
 * A regular file on the way is `unsafe_path`, or, with `fileMeansNone` and not creating,
 * undefined (nothing can be under it), as openParent answers.
 */
export function safeParentDir(root: string, rel: string, create: boolean, fileMeansNone = false, dirMode = 0o777): string | undefined {
  checkPath(rel);
  const segments = rel.split("/");
  let dir = root;
  for (let i = 0; i < segments.length - 1; i++) {
    dir = join(dir, segments[i] as string);
    const st = lstatMaybe(dir);
    if (!st) {
      if (!create) return undefined;
      mkdirSync(dir, dirMode);
      continue;
    }
    if (st.isSymbolicLink()) throw unsafePath(rel, `passes through the symbolic link ${segments.slice(0, i + 1).join("/")}`);
    if (st.isFile() && fileMeansNone && !create) return undefined; // nothing can be under a regular file
    if (!st.isDirectory()) throw unsafePath(rel, `passes through ${segments.slice(0, i + 1).join("/")}, which is not a directory`);
  }
  return dir;
}

export type Current = { kind: "file"; content: Buffer; mode: number; size: number } | { kind: "absent" } | { kind: "other"; what: string };

/**
 * What a checkpoint says of a file whose name on disk is not valid UTF-8: Node hands such a name
 * over with U+FFFD for each bad byte, a name no call can open again, so it is never stored (and
 * never taken for absent: a rollback then leaves it alone).
 */
export const NOT_UTF8 = "a name that is not valid UTF-8 (checkpoints keep UTF-8 names only: rename it to keep it)";

/** The entries of `dir` whose real names are not valid UTF-8, as Node decodes them (U+FFFD for each bad byte). */
export function notUtf8Names(dir: string): Set<string> {
  const out = new Set<string>();
  try {
    for (const b of readdirSync(dir, { encoding: "buffer" })) if (!isUtf8(b)) out.add(b.toString());
  } catch {
    // unreadable: nothing known
  }
  return out;
}

/** `cur`, unless it is absent only because a name on the way to `rel` is not valid UTF-8. */
function orNotUtf8<T extends { kind: string }>(root: string, rel: string, cur: T): T | { kind: "other"; what: string } {
  if (cur.kind !== "absent" || !rel.includes("\uFFFD")) return cur;
  let dir = root;
  for (const segment of rel.split("/")) {
    if (segment.includes("\uFFFD") && notUtf8Names(dir).has(segment)) return { kind: "other", what: NOT_UTF8 };
    dir = join(dir, segment);
  }
  return cur;
}

/** What is at `rel` now, read without following links; a file over `maxBytes` is `other`. */
export function readCurrent(root: string, rel: string, maxBytes = Number.POSITIVE_INFINITY): Current {
  const cur = inParent(root, rel, false, (d, name): Current => {
    const st = lstatMaybe(d.at(name));
    if (!st) return { kind: "absent" };
    if (st.isSymbolicLink()) return { kind: "other", what: "a symbolic link" };
    if (st.isDirectory()) return { kind: "other", what: "a directory" };
    if (!st.isFile()) return { kind: "other", what: "not a regular file" };
    if (st.size > maxBytes) return { kind: "other", what: `larger than ${maxBytes} bytes` };
    let fd: number;
    try {
      fd = openSync(d.at(name), READ_NO_FOLLOW);
    } catch (err) {
      const code = deniedCode(err);
      if (code === undefined) throw err;
      return { kind: "other", what: `${UNREADABLE_TO_YOU} (${code})` }; // a container's root-owned output: not stored, not changed
    }
    try {
      const content = readFileSync(fd);
      const mode = fstatSync(fd).mode & 0o777;
      return { kind: "file", content, mode, size: content.byteLength };
    } finally {
      closeSync(fd);
    }
  });
  return orNotUtf8(root, rel, cur ?? { kind: "absent" });
}

/** How readCurrent names a file this user may not read. */
export const UNREADABLE_TO_YOU = "unreadable to you";

/** How a workspace file is opened to be read: never through a link, never waiting on a FIFO. */
export const READ_NO_FOLLOW = constants.O_RDONLY | constants.O_NOFOLLOW | (constants.O_NONBLOCK ?? 0);

/** The code of an open refused for a permission (the file is there; this user may not read it), else undefined. */
export function deniedCode(err: unknown): "EACCES" | "EPERM" | undefined {
  const code = (err as NodeJS.ErrnoException).code;
  return code === "EACCES" || code === "EPERM" ? code : undefined;
}

/** Whether this process may read the file at `rel` (opened and closed at once, without following a link or blocking). */
export function canRead(root: string, rel: string): boolean {
  return (
    inParent(root, rel, false, (d, name) => {
      try {
        closeSync(openSync(d.at(name), READ_NO_FOLLOW));
        return true;
      } catch (err) {
        if (deniedCode(err) !== undefined) return false;
        throw err;
      }
    }) ?? false
  );
}

/** What is at `rel` now, as readCurrent says, without reading a file's content (a removal needs none). */
export type CurrentStat = { kind: "file"; mode: number; size: number } | { kind: "absent" } | { kind: "other"; what: string };

export function statCurrent(root: string, rel: string): CurrentStat {
  const cur = inParent(root, rel, false, (d, name): CurrentStat => {
    const st = lstatMaybe(d.at(name));
    if (!st) return { kind: "absent" };
    if (st.isSymbolicLink()) return { kind: "other", what: "a symbolic link" };
    if (st.isDirectory()) return { kind: "other", what: "a directory" };
    if (!st.isFile()) return { kind: "other", what: "not a regular file" };
    return { kind: "file", mode: st.mode & 0o777, size: st.size };
  });
  return orNotUtf8(root, rel, cur ?? { kind: "absent" });
}

/**
 * Whether `rel`'s own name, exactly, is an entry of its directory (listed through the pinned
 * directory, each directory once per `memo`). On a case-insensitive file system `Readme.md`
 * finds `README.md`'s file: unlinking it by the other name would delete that file.
 */
export function hasExactName(root: string, rel: string, memo = new Map<string, ReadonlySet<string>>()): boolean {
  const slash = rel.lastIndexOf("/");
  const dir = slash < 0 ? "" : rel.slice(0, slash);
  let names = memo.get(dir);
  if (names === undefined) {
    names = inParent(root, rel, false, (d) => new Set(readdirSync(d.at("")))) ?? new Set<string>();
    memo.set(dir, names);
  }
  return names.has(rel.slice(slash + 1));
}

/** A restore's content written (and fsynced) beside its target, not yet renamed over it. */
export interface PreparedWrite {
  rel: string;
  /** The directory's absolute path (for sweeps) and identity (the rename must land there). */
  dir: string;
  dirId: string;
  tmpName: string;
}

/**
 * Write `content` to a temp file in `rel`'s directory (created if missing, with `dirMode` before
 * the umask: 0o700 under `.baton/`, the default for a workspace's own files; reached without links).
 */
export function prepareWrite(
  root: string,
  rel: string,
  content: Uint8Array,
  mode: number,
  durable: boolean,
  dirMode?: number,
): PreparedWrite {
  return inParent(
    root,
    rel,
    true,
    (d, name) => {
      if (lstatMaybe(d.at(name))?.isDirectory()) throw unsafePath(rel, "is now a directory");
      const tmpName = `.baton-restore-${process.pid}-${randomHex(6)}.tmp`;
      // O_EXCL | O_NOFOLLOW: never opens an existing file or link.
      const fd = openSync(d.at(tmpName), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
      try {
        writeSync(fd, content);
        fchmodSync(fd, mode & 0o777);
        if (durable) fsyncSync(fd);
      } catch (err) {
        closeSync(fd);
        unlinkQuiet(d.at(tmpName));
        throw err;
      }
      closeSync(fd);
      return { rel, dir: d.path, dirId: d.id, tmpName };
    },
    dirMode,
  ) as PreparedWrite;
}

/**
 * Rename a prepared write over its target: the file is wholly old before, wholly new after.
 * Walking the path again must reach the directory the temp file was written in; anything else
 * (it was swapped, moved or replaced meanwhile) is `unsafe_path` and nothing is renamed.
 */
export function commitWrite(root: string, w: PreparedWrite): void {
  const done = inParent(root, w.rel, false, (d, name) => {
    if (d.id !== w.dirId) throw unsafePath(w.rel, "is in a directory that was replaced while Baton restored it");
    try {
      renameSync(d.at(w.tmpName), d.at(name));
    } catch (err) {
      unlinkQuiet(d.at(w.tmpName));
      throw err;
    }
    return true;
  });
  if (!done) throw unsafePath(w.rel, "is in a directory that was removed while Baton restored it");
}

/** Remove a prepared write's temp file, if its directory is still the one it was written in. */
export function discardWrite(root: string, w: PreparedWrite): void {
  try {
    inParent(root, w.rel, false, (d) => {
      if (d.id === w.dirId) unlinkQuiet(d.at(w.tmpName));
    });
  } catch {
    // the directory changed: the temp file stays for removeDeadTemps, never an unlink elsewhere
  }
}

function unlinkQuiet(p: string): void {
  try {
    unlinkSync(p);
  } catch {
    // already gone
  }
}

/** Replace (or create) the file at `rel` atomically with `content` and `mode`. */
export function atomicWrite(root: string, rel: string, content: Uint8Array, mode: number, durable: boolean, dirMode?: number): void {
  const w = prepareWrite(root, rel, content, mode, durable, dirMode);
  commitWrite(root, w);
  if (durable) fsyncDir(w.dir);
}

/** Remove the file (or symlink: the link, never its target) at `rel`. Returns whether something was removed. */
export function safeRemove(root: string, rel: string, durable: boolean): boolean {
  return (
    inParent(root, rel, false, (d, name) => {
      const st = lstatMaybe(d.at(name));
      if (!st) return false;
      if (st.isDirectory()) throw unsafePath(rel, "is now a directory");
      unlinkSync(d.at(name));
      if (durable) d.fsync();
      return true;
    }) ?? false
  );
}

/**
 * Remove restore temp files left in `dirs` by a rollback whose process died (SIGKILL): the
 * temp name carries the writer's pid, and only dead writers' files are removed.
 */
export function removeDeadTemps(root: string, dirs: Iterable<string>): number {
  let n = 0;
  for (const dir of dirs) {
    try {
      // The directory is reached as a restore reaches it (never through a link); "x" stands for
      // any entry in it.
      n +=
        inParent(root, dir === "" ? "x" : `${dir}/x`, false, (d) => {
          let removed = 0;
          for (const name of readdirSync(d.at(""))) {
            const m = RESTORE_TEMP.exec(name);
            if (!m || processAlive(Number(m[1]))) continue;
            try {
              unlinkSync(d.at(name));
              removed++;
            } catch {
              // gone already
            }
          }
          return removed;
        }) ?? 0;
    } catch {
      // the directory is gone or changed: nothing of ours to sweep there
    }
  }
  return n;
}

/**
 * The first proper ancestor of `rel` that is a regular file now (lstat, no link followed), if
 * any. `memo` keeps what each ancestor is across calls (a large restore shares its parents).
 */
export function fileAncestor(root: string, rel: string, memo = new Map<string, "dir" | "file" | "none">()): string | undefined {
  const segments = rel.split("/");
  for (let i = 1; i < segments.length; i++) {
    const a = segments.slice(0, i).join("/");
    let kind = memo.get(a);
    if (kind === undefined) {
      const st = lstatMaybe(join(root, a));
      kind = st?.isDirectory() ? "dir" : st?.isFile() ? "file" : "none";
      memo.set(a, kind);
    }
    if (kind !== "dir") return kind === "file" ? a : undefined;
  }
  return undefined;
}

/** The directory `rel`'s entries, read through its pinned handle (undefined when it is not there). */
function listDir(root: string, rel: string): Dirent[] | undefined {
  return inParent(root, `${rel}/x`, false, (d) => readdirSync(d.at(""), { withFileTypes: true }));
}

/**
 * What is under the directory `rel`: its regular files (workspace-relative) and whether
 * anything else is there (a link, a socket, ...), subdirectories walked, no link followed.
 */
export function filesUnder(root: string, rel: string): { files: string[]; other: boolean } {
  const out = { files: [] as string[], other: false };
  for (const e of listDir(root, rel) ?? []) {
    const p = `${rel}/${e.name}`;
    if (e.isDirectory()) {
      const sub = filesUnder(root, p);
      out.files.push(...sub.files);
      out.other ||= sub.other;
    } else if (e.isFile()) out.files.push(p);
    else out.other = true;
  }
  return out;
}

/**
 * Remove the directory `rel` and the empty directories under it, deepest first, each through
 * its parent's pinned handle. Anything else found there (a file that appeared meanwhile) is
 * `unsafe_path`: nothing but empty directories is ever removed.
 */
export function removeEmptyTree(root: string, rel: string): void {
  for (const e of listDir(root, rel) ?? []) {
    if (!e.isDirectory()) throw unsafePath(`${rel}/${e.name}`, "appeared while Baton restored a file over its directory");
    removeEmptyTree(root, `${rel}/${e.name}`);
  }
  inParent(root, rel, false, (d, name) => {
    if (lstatMaybe(d.at(name))?.isDirectory()) rmdirSync(d.at(name)); // ENOTEMPTY: typed by inParent
  });
}

/** A filesystem error outside the workspace tree (a blob, a directory fsync), as a typed error. */
export function ioError(what: string, err: unknown, path?: string): BatonError {
  if (err instanceof BatonError) return err;
  const code = (err as NodeJS.ErrnoException).code;
  return new BatonError(
    code === "EACCES" || code === "EPERM" || code === "EROFS" ? "workspace_unwritable" : "io_error",
    `${what}: ${(err as Error).message}`,
    { errno: code, ...(path !== undefined ? { path } : {}) },
    { cause: err },
  );
}

/** fsync a directory, so a rename or a new entry in it survives a crash. */
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

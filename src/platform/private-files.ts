/**
 * `.baton/` is private to its owner: the directory 0700 and everything in it 0600 (directories
 * 0700), whatever the umask. It holds checkpoint blobs (file contents, verbatim: a checkpointed
 * `.env` is in there) and the journal, so a 0644 database would let every local user read them.
 *
 * - On creation and on every open, `.baton/` itself and its top-level entries (the database,
 *   its WAL and shared-memory files, server files, logs/, blobs/, sessions/) are tightened: a
 *   handful of `lstat` calls, cheap enough for every CLI start. Files created later inherit
 *   privacy from their creators (SQLite gives the WAL the database's mode; blobs, logs and
 *   server files are created 0600).
 * - `looseModes` walks the whole tree (bounded) for `baton doctor`, which reports what is loose
 *   and tightens it under `--fix`.
 *
 * Skipped on Windows, where POSIX modes do not govern access.
 */
import { chmodSync, constants, lstatSync, mkdirSync, openSync, readdirSync } from "node:fs";
import { join } from "node:path";

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;
/** O_NOFOLLOW where the platform has it (not Windows). */
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;

const posix = process.platform !== "win32";

/** The mode an entry should have, or undefined when it is fine (or not a file or directory). */
function wanted(mode: number, isDir: boolean): number | undefined {
  if ((mode & 0o077) === 0) return undefined;
  return isDir ? PRIVATE_DIR_MODE : PRIVATE_FILE_MODE;
}

/** chmod `path` to private if group or others have any access; never follows a link. Returns whether it changed. */
function tightenOne(path: string): boolean {
  const st = lstatSync(path);
  if (st.isSymbolicLink() || !(st.isFile() || st.isDirectory())) return false;
  const want = wanted(st.mode & 0o777, st.isDirectory());
  if (want === undefined) return false;
  // Keep the owner's own bits (an owner-read-only file stays read-only), drop group and others.
  chmodSync(path, st.isDirectory() ? (st.mode & 0o700) | 0o700 : st.mode & 0o700 || want);
  return true;
}

/**
 * Tighten `.baton/` and its top-level entries. Best effort: a file that vanished or cannot be
 * changed (another owner) is left for `baton doctor` to report.
 */
export function tightenBatonDir(batonDir: string): void {
  if (!posix) return;
  try {
    tightenOne(batonDir);
    for (const name of readdirSync(batonDir)) {
      try {
        tightenOne(join(batonDir, name));
      } catch {
        // vanished or not ours: doctor reports it
      }
    }
  } catch {
    // .baton/ unreadable: opening the database reports it with a typed error
  }
}

export interface LooseEntry {
  /** Relative to `.baton/`. */
  path: string;
  /** The mode found, e.g. "644". */
  mode: string;
  kind: "file" | "dir";
}

/** Entries under `.baton/` (itself included, as ".") that group or others can access; at most `limit` visited. */
export function looseModes(batonDir: string, limit = 50_000): { loose: LooseEntry[]; visited: number; truncated: boolean } {
  const loose: LooseEntry[] = [];
  let visited = 0;
  if (!posix) return { loose, visited, truncated: false };
  const visit = (abs: string, rel: string): boolean => {
    if (visited >= limit) return false;
    visited++;
    let st: ReturnType<typeof lstatSync>;
    try {
      st = lstatSync(abs);
    } catch {
      return true;
    }
    if (st.isSymbolicLink()) return true;
    const isDir = st.isDirectory();
    if ((isDir || st.isFile()) && wanted(st.mode & 0o777, isDir) !== undefined)
      loose.push({ path: rel, mode: (st.mode & 0o777).toString(8), kind: isDir ? "dir" : "file" });
    if (!isDir) return true;
    let names: string[];
    try {
      names = readdirSync(abs);
    } catch {
      return true;
    }
    for (const n of names) if (!visit(join(abs, n), rel === "." ? n : `${rel}/${n}`)) return false;
    return true;
  };
  const complete = visit(batonDir, ".");
  return { loose, visited, truncated: !complete };
}

/** Tighten every loose entry `looseModes` found; returns how many changed. */
export function tightenAll(batonDir: string, entries: readonly LooseEntry[]): number {
  let n = 0;
  for (const e of entries) if (tightenOne(e.path === "." ? batonDir : join(batonDir, e.path))) n++;
  return n;
}

/**
 * What is at `path` itself, never following a link: a regular file, a folder, a symbolic link,
 * something else, or nothing (undefined, also when it cannot be looked at).
 */
export function entryKind(path: string): "file" | "dir" | "link" | "other" | undefined {
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(path);
  } catch {
    return undefined;
  }
  return st.isFile() ? "file" : st.isDirectory() ? "dir" : st.isSymbolicLink() ? "link" : "other";
}

/**
 * `.baton/<sub>/` for Baton's own files (logs/, hooks/), made private when missing; undefined
 * when `.baton/` or `<sub>` is a symbolic link, or not a folder. A repository can commit such a
 * link (`.baton/logs -> ~/somewhere`): nothing Baton writes follows one out of the workspace.
 */
export function privateSubdir(batonDir: string, sub: string): string | undefined {
  if (entryKind(batonDir) !== "dir") return undefined;
  const dir = join(batonDir, sub);
  try {
    mkdirSync(dir, { mode: PRIVATE_DIR_MODE });
  } catch {
    // there already (checked below), or not makeable (not a folder below)
  }
  return entryKind(dir) === "dir" ? dir : undefined;
}

/** Open `file` (in a `privateSubdir`) for appending, created 0600, never through a symbolic link. */
export function openPrivateAppend(file: string): number {
  return openSync(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | NOFOLLOW, PRIVATE_FILE_MODE);
}

/** Create or empty `file` (in `.baton/`), 0600, never through a symbolic link: its mtime is now. */
export function touchPrivate(file: string): number {
  return openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | NOFOLLOW, PRIVATE_FILE_MODE);
}

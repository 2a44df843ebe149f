/** Reading and atomically writing LESSONS.md at the workspace root. */
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { checksum, randomHex } from "../core/canonical.js";
import { BatonError } from "../errors.js";

export const LESSONS_FILE = "LESSONS.md";

export function lessonsPath(root: string): string {
  return join(root, LESSONS_FILE);
}

/** The file's text, or undefined when there is none. */
export function readLessonsText(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    throw new BatonError(
      "io_error",
      `cannot read ${path} (${code ?? (err as Error).message}); check that it is a readable file`,
      { path },
      { cause: err },
    );
  }
}

/**
 * The hash the search index is keyed by: the absent file and an empty one index alike. A
 * checksum, not sha256: the index is a cache of the user's own file (no adversary), and every
 * search hashes the file, so sha256 would load node:crypto (~3 ms) into each agent hook that
 * offers lessons (docs/benchmarks.md, "hooks").
 */
export function lessonsHash(text: string | undefined): string {
  return checksum(text ?? "");
}

/**
 * Replace the file atomically: write a temp file beside it, fsync it, rename it over, fsync the
 * directory. A reader (or an editor) sees the old text or the new, never a torn one.
 */
export function writeLessonsText(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.${randomHex(4)}.tmp`;
  try {
    const fd = openSync(tmp, "w", 0o644);
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw new BatonError(
      "io_error",
      `cannot write ${path}: ${(err as Error).message}; check the workspace's permissions and free space`,
      { path },
      { cause: err },
    );
  }
  try {
    const dir = openSync(dirname(path), "r");
    try {
      fsyncSync(dir);
    } finally {
      closeSync(dir);
    }
  } catch {
    // Directories cannot be fsynced on every platform (Windows); the rename itself is atomic.
  }
}

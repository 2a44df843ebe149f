/** Reading and atomically writing LESSONS.md at the workspace root. */
import { readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { checksum } from "../core/canonical.js";
import { BatonError } from "../errors.js";
import { atomicWrite } from "./safe-fs.js";

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
 * Replace the file atomically: a temp file beside it (O_EXCL, never through a link), fsynced,
 * renamed over it, the directory fsynced. A reader (or an editor) sees the old text or the new,
 * never a torn one; a link put where the file or its temp file would be is replaced, never
 * written through (services/safe-fs.ts).
 */
export function writeLessonsText(path: string, text: string): void {
  atomicWrite(dirname(path), basename(path), Buffer.from(text), 0o644, true);
}

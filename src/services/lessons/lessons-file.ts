/**
 * Reading LESSONS.md at the workspace root, and changing it safely while other processes (and
 * the human, in an editor) may change it too.
 *
 * The file is the truth and is written outside any store transaction: a transaction may be
 * re-run (PostgreSQL, after a deadlock), and a write inside one would be done twice (a re-run
 * would find its own lesson and refuse it as a conflict, or add it again). Two safeguards
 * instead:
 *
 * - **Baton writers take turns** on a named lock in the store (services/work/locks.ts), held only
 *   around the file write, never inside a transaction: `lessons-md:<hash of host and path>`, so
 *   hosts sharing a store each lock their own file. A writer that dies holding it is reclaimed
 *   at once (its pid is dead on this host); one stopped past the lock's TTL is taken over, and
 *   before it writes it checks it still holds the lock (`lock_lost` otherwise).
 * - **Compare before replacing**: the new text is written to a temp file beside LESSONS.md
 *   (fsynced), the file is read again, and the temp file is renamed over it only if the file is
 *   still exactly what the change was computed from. A hand edit in between is never
 *   overwritten: the change is computed again from the new text (an edit whose lesson changed
 *   is refused as `conflict` by the change itself).
 *
 * Once the rename is done the change is made, and every reader sees it: what fails after it is
 * never reported as the write failing (the caller would retry a change already made). An fsync
 * of the directory that fails then is still an I/O error, the rename's durability unknown: it
 * is returned as a warning with the result, naming the error, never dropped. So is a lock that
 * could not be released (the next writer waits for its TTL). A change that fails keeps its own
 * error, whatever the release does.
 */
import { basename, dirname, join } from "node:path";
import { checksum } from "../../core/canonical.js";
import { BatonError } from "../../errors.js";
import { atomicWrite, commitWrite, discardWrite, fsyncDir, prepareWrite } from "../../platform/safe-fs.js";
import { NotASettingsFile, readSettingsBytes, SETTINGS_MAX_BYTES } from "../../platform/settings-text.js";
import type { LockService } from "../work/locks.js";

export const LESSONS_FILE = "LESSONS.md";

export function lessonsPath(root: string): string {
  return join(root, LESSONS_FILE);
}

/**
 * The file's text, or undefined when there is none. A repository may ship LESSONS.md as anything:
 * it is read only as a regular file (not through a link, which could name a private file whose
 * text the next write would then copy into the repository, nor a FIFO or /dev/zero, which would
 * hang or exhaust every hook that offers lessons), of at most SETTINGS_MAX_BYTES.
 */
export function readLessonsText(path: string): string | undefined {
  let bytes: Buffer | undefined;
  try {
    bytes = readSettingsBytes(path, SETTINGS_MAX_BYTES, { follow: false });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ELOOP" || err instanceof NotASettingsFile)
      throw new BatonError(
        "unsafe_path",
        `${path} is ${code === "ELOOP" ? "a symbolic link" : (err as NotASettingsFile).why}: lessons are read and written only in a regular file of at most ${SETTINGS_MAX_BYTES} bytes; replace it with one`,
        { path },
      );
    throw new BatonError(
      "io_error",
      `cannot read ${path} (${code ?? (err as Error).message}); check that it is a readable file`,
      { path },
      { cause: err },
    );
  }
  return bytes?.toString("utf8");
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
 * written through (platform/safe-fs.ts).
 */
export function writeLessonsText(path: string, text: string): void {
  atomicWrite(dirname(path), basename(path), Buffer.from(text), 0o644, true);
}

/** How long a writer holds the file's lock without a heartbeat, and how long another waits for it. */
const LOCK_TTL_MS = 30_000;
const LOCK_WAIT_MS = 20_000;
/** Hand edits landing between a writer's read and its rename, in a row, before it gives up. */
const MAX_ATTEMPTS = 5;

/** What a change makes of the file's text: the new text, and what to tell the caller. */
export type LessonsChange<T> = (text: string | undefined) => { text: string; result: T };

export class LessonsFile {
  readonly path: string;
  readonly #locks: () => Promise<LockService>;
  readonly #host: () => string;
  readonly #read: (file: string) => string | undefined;
  readonly #syncDir: (dir: string) => void;

  /** `read` reads LESSONS.md (tests inject one that changes the file between reads); `syncDir` fsyncs its directory. */
  constructor(path: string, locks: () => Promise<LockService>, host: () => string, read = readLessonsText, syncDir = fsyncDir) {
    this.path = path;
    this.#locks = locks;
    this.#host = host;
    this.#read = read;
    this.#syncDir = syncDir;
  }

  read(): string | undefined {
    return this.#read(this.path);
  }

  /** The lock Baton's writers of this file take turns on (a hash: a path need not be a valid lock name). */
  get lockName(): string {
    return `lessons-md:${checksum(`${this.#host()}:${this.path}`)}`;
  }

  /**
   * Apply `change` to the file as it is now, under the writers' lock, outside any transaction.
   * `change` may run more than once (after a hand edit) and may throw to refuse: nothing is
   * written then, nor when it returns the text unchanged. Returns its result, the file's text,
   * and what went wrong after the file was written (`warnings`).
   */
  async update<T>(change: LessonsChange<T>): Promise<{ result: T; text: string; warnings: string[] }> {
    const locks = await this.#locks();
    const name = this.lockName;
    const grant = await locks.acquire(name, { owner: "LESSONS.md writer", ttlMs: LOCK_TTL_MS, waitMs: LOCK_WAIT_MS });
    const done = await this.#write(change, locks, name, grant.epoch).catch(async (err: unknown) => {
      // The change's own error is the answer; a release failing too (the store down) is secondary.
      await locks.release(name, grant.epoch).catch(() => undefined);
      throw err;
    });
    try {
      await locks.release(name, grant.epoch);
    } catch (err) {
      // Taken over after we were paused past its TTL: the new holder has it, nothing to free.
      if (!(err instanceof BatonError && err.code === "lock_lost"))
        done.warnings.push(
          `the LESSONS.md writers' lock "${name}" was not released (${err instanceof BatonError ? err.code : "internal"}: ${(err as Error).message}); the next writer waits until it expires (${LOCK_TTL_MS / 1000} s)`,
        );
    }
    return done;
  }

  async #write<T>(
    change: LessonsChange<T>,
    locks: LockService,
    name: string,
    epoch: number,
  ): Promise<{ result: T; text: string; warnings: string[] }> {
    const took = Date.now();
    const root = dirname(this.path);
    const rel = basename(this.path);
    for (let attempt = 1; ; attempt++) {
      const before = this.#read(this.path);
      const { text, result } = change(before);
      if (text === before) return { result, text, warnings: [] };
      const w = prepareWrite(root, rel, Buffer.from(text), 0o644, true);
      try {
        // Paused past half the lock's life (a stopped process): make sure it is still ours.
        if (Date.now() - took > LOCK_TTL_MS / 2) await locks.heartbeat(name, epoch);
        if (this.#read(this.path) !== before) {
          discardWrite(root, w);
          if (attempt >= MAX_ATTEMPTS) throw busy(this.path);
          continue; // edited by hand meanwhile: compute the change again from the new text
        }
        commitWrite(root, w);
      } catch (err) {
        discardWrite(root, w);
        throw err;
      }
      try {
        this.#syncDir(w.dir);
      } catch (err) {
        const what = err instanceof BatonError ? `${err.code}: ${err.message}` : String(err);
        return {
          result,
          text,
          warnings: [
            `${this.path} was written, but its directory could not be fsynced (${what}): a power loss could still undo the change; check the disk`,
          ],
        };
      }
      return { result, text, warnings: [] };
    }
  }
}

function busy(path: string): BatonError {
  return new BatonError(
    "storage_busy",
    `${path} kept changing while Baton wrote to it (${MAX_ATTEMPTS} times in a row); nothing was written: save it in your editor and try again`,
    { path },
  );
}

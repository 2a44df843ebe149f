/**
 * A command's `--out` file (`baton export`, `baton ledger export`, `baton artifact get`): opened
 * before anything is read, private to its owner (0600: an export holds the project's journal).
 * A path that cannot be opened is the user's to fix (`bad_input`), a disk that fails while
 * writing an `io_error`; never Node's unhandled stream error, and never a wait on a pipe nothing
 * reads.
 */
import { closeSync, constants, createWriteStream, existsSync, fchmodSync, fstatSync, ftruncateSync, openSync, statSync } from "node:fs";
import { BatonError, badInput } from "../errors.js";

/** Errors of the disk rather than of the path the user gave. */
const DISK = new Set(["EIO", "ENOSPC", "EDQUOT", "EROFS"]);

function cannotOpen(path: string, err: unknown): BatonError {
  if (err instanceof BatonError) return err;
  const code = (err as NodeJS.ErrnoException).code ?? "error";
  if (DISK.has(code)) return new BatonError("io_error", `cannot write ${path} (${code})`, { path, errno: code }, { cause: err });
  return badInput(`cannot write ${path} (${code}): give a file in a folder that exists and that you can write to`, { path, errno: code });
}

/**
 * `path` opened to be written from its start. A named pipe only when something reads it (a probe
 * that does not wait: `--out /dev/stdout | …` and `--out >(…)` work, a pipe nobody reads is
 * refused rather than waited on). A regular file is emptied only once it is open, so a file that
 * cannot be opened is left as it was, and made 0600 when it is the user's own (a file of another
 * owner the user may write, or a filesystem without modes, keeps its mode).
 */
export function openOutFile(path: string): number {
  let fd: number;
  try {
    // Never waits: a named pipe nothing reads is ENXIO at once (O_NONBLOCK means nothing to a
    // regular file).
    fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_NONBLOCK, 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENXIO" && statSync(path, { throwIfNoEntry: false })?.isFIFO())
      throw badInput(`cannot write ${path}: it is a named pipe nothing reads (without --out the output goes to stdout)`, { path });
    throw cannotOpen(path, err);
  }
  try {
    const st = fstatSync(fd);
    if (st.isFile()) {
      if ((st.mode & 0o077) !== 0 && st.uid === process.getuid?.()) {
        try {
          fchmodSync(fd, 0o600);
        } catch {
          // a filesystem without modes: written as it allows
        }
      }
      ftruncateSync(fd, 0);
      return fd;
    }
    // A pipe or a device: written through a descriptor that waits for a slow reader, opened while
    // the first still holds the pipe (the reader never sees an end between the two) and, where
    // /proc has it, through the first one's file rather than the path again.
    const again = existsSync(`/proc/self/fd/${fd}`) ? `/proc/self/fd/${fd}` : path;
    const blocking = openSync(again, constants.O_WRONLY);
    closeSync(fd);
    return blocking;
  } catch (err) {
    closeSync(fd);
    throw cannotOpen(path, err);
  }
}

/** Write `lines` to `path` (created or emptied); the number of lines written. */
export async function writeLinesTo(path: string, lines: AsyncIterable<string>): Promise<number> {
  const fd = openOutFile(path);
  const sink = createWriteStream("", { fd });
  let failed: Error | undefined;
  sink.on("error", (err) => {
    failed ??= err;
  });
  let n = 0;
  try {
    for await (const line of lines) {
      n++;
      if (failed) break;
      if (!sink.write(line) && !sink.closed) await new Promise<void>((resolve) => sink.once("drain", resolve).once("close", resolve));
    }
  } finally {
    // Closed once written or failed: a failure of the last writes (a full disk) is known by then.
    if (!sink.closed)
      await new Promise<void>((resolve) => {
        sink.once("close", resolve);
        sink.end();
      });
  }
  if (failed) throw new BatonError("io_error", `cannot write ${path}: ${failed.message}`, { path }, { cause: failed });
  return n;
}

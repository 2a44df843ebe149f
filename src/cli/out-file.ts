/**
 * A command's `--out` file (`baton export`, `baton ledger export`): opened before anything is
 * read, private to its owner (0600: an export holds the project's journal), written line by line.
 * A path that cannot be opened is the user's to fix (`bad_input`), a disk that fails while
 * writing an `io_error`; never Node's unhandled stream error.
 */
import { createWriteStream, fchmodSync, fstatSync, openSync, statSync } from "node:fs";
import { BatonError, badInput } from "../errors.js";

/** Errors of the disk rather than of the path the user gave. */
const DISK = new Set(["EIO", "ENOSPC", "EDQUOT", "EROFS"]);

/** Write `lines` to `path` (created or truncated); the number of lines written. */
export async function writeLinesTo(path: string, lines: AsyncIterable<string>): Promise<number> {
  let fd: number;
  try {
    // A FIFO would block the open until something reads it: --out writes a file (stdout is the pipe).
    if (statSync(path, { throwIfNoEntry: false })?.isFIFO())
      throw badInput(`cannot write ${path}: it is a named pipe; --out writes a file (without --out the lines go to stdout)`, { path });
    fd = openSync(path, "w", 0o600);
    // A file that was there keeps its mode through an open: the export is private all the same.
    if (fstatSync(fd).isFile()) fchmodSync(fd, 0o600);
  } catch (err) {
    if (err instanceof BatonError) throw err;
    const code = (err as NodeJS.ErrnoException).code ?? "error";
    if (DISK.has(code)) throw new BatonError("io_error", `cannot write ${path} (${code})`, { path, errno: code }, { cause: err });
    throw badInput(`cannot write ${path} (${code}): give a file in a folder that exists and that you can write to`, {
      path,
      errno: code,
    });
  }
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

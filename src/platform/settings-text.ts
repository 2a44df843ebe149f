/**
 * Reading a settings file a repository may ship (an agent's settings, `.baton/config.json`):
 * opened without blocking and checked to be a regular file of bounded size on the open
 * descriptor, so a committed link to `/dev/stdin`, a FIFO or `/dev/zero` cannot hang or exhaust
 * the command that reads it. A link to a regular file is followed (settings kept as dotfiles).
 */
import { isUtf8 } from "node:buffer";
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";

/** More than any settings file holds. */
export const SETTINGS_MAX_BYTES = 8 * 1024 * 1024;

const READ_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;

/** NotASettingsFile's `why` for anything but a regular file (a FIFO, a device, a folder). */
export const NOT_REGULAR = "not a regular file";

/** A settings file that is there but cannot be read as one (not a regular file, too large), with why. */
export class NotASettingsFile extends Error {
  constructor(
    readonly file: string,
    readonly why: string,
  ) {
    super(`${file}: ${why}`);
    this.name = "NotASettingsFile";
  }
}

/**
 * The file's bytes; undefined when it does not exist. Throws NotASettingsFile for anything that
 * is not a regular file of at most `maxBytes`, and the driver's error for any other failure
 * (ELOOP for a link at the end, with `follow: false`: git's files, which git reads as they are).
 */
export function readSettingsBytes(file: string, maxBytes = SETTINGS_MAX_BYTES, opts: { follow?: boolean } = {}): Buffer | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(file, READ_FLAGS | (opts.follow === false ? NOFOLLOW : 0));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw err;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new NotASettingsFile(file, NOT_REGULAR);
    if (st.size > maxBytes) throw new NotASettingsFile(file, `${st.size} bytes, over the ${maxBytes}-byte limit`);
    return readBounded(fd, file, st.size, maxBytes);
  } finally {
    closeSync(fd);
  }
}

/**
 * At most `maxBytes` of an open file, whatever its size said: a file under /proc says 0 and may
 * never end (`/proc/self/pagemap`), so reading to its end could hang or exhaust the process.
 */
function readBounded(fd: number, file: string, size: number, maxBytes: number): Buffer {
  let buf = Buffer.allocUnsafe(Math.min(maxBytes + 1, Math.max(size + 1, 4096)));
  let got = 0;
  for (;;) {
    if (got === buf.length) {
      if (got > maxBytes) throw new NotASettingsFile(file, `over the ${maxBytes}-byte limit`);
      const bigger = Buffer.allocUnsafe(Math.min(maxBytes + 1, buf.length * 2));
      buf.copy(bigger, 0, 0, got);
      buf = bigger;
    }
    const n = readSync(fd, buf, got, buf.length - got, null);
    if (n === 0) return buf.subarray(0, got);
    got += n;
  }
}

/** readSettingsBytes as UTF-8 text. */
export function readSettingsText(file: string, maxBytes = SETTINGS_MAX_BYTES, opts: { follow?: boolean } = {}): string | undefined {
  return readSettingsBytes(file, maxBytes, opts)?.toString("utf8");
}

/**
 * readSettingsText for a file Baton rewrites: every byte that is not Baton's must stay, so a file
 * that is not valid UTF-8 is refused (NotASettingsFile), never decoded with U+FFFD in place of its
 * bytes and written back so.
 */
export function readSettingsTextToEdit(file: string, maxBytes = SETTINGS_MAX_BYTES): string | undefined {
  const bytes = readSettingsBytes(file, maxBytes);
  if (bytes === undefined || isUtf8(bytes)) return bytes?.toString("utf8");
  const text = bytes.toString("utf8");
  // The first U+FFFD stands for the first bad byte unless the file spells U+FFFD itself there.
  const i = text.indexOf("\uFFFD");
  const at = Buffer.byteLength(text.slice(0, i));
  const real = bytes[at] === 0xef && bytes[at + 1] === 0xbf && bytes[at + 2] === 0xbd;
  const where = real ? "" : ` (line ${text.slice(0, i).split("\n").length})`;
  throw new NotASettingsFile(
    file,
    `not valid UTF-8${where}, which Baton cannot rewrite without changing bytes that are not its own: fix it by hand`,
  );
}

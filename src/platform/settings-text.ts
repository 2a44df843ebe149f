/**
 * Reading a settings file a repository may ship (an agent's settings, `.baton/config.json`):
 * opened without blocking and checked to be a regular file of bounded size on the open
 * descriptor, so a committed link to `/dev/stdin`, a FIFO or `/dev/zero` cannot hang or exhaust
 * the command that reads it. A link to a regular file is followed (settings kept as dotfiles).
 */
import { closeSync, constants, fstatSync, openSync, readFileSync } from "node:fs";

/** More than any settings file holds. */
export const SETTINGS_MAX_BYTES = 8 * 1024 * 1024;

const READ_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;

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
    if (!st.isFile()) throw new NotASettingsFile(file, "not a regular file");
    if (st.size > maxBytes) throw new NotASettingsFile(file, `${st.size} bytes, over the ${maxBytes}-byte limit`);
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** readSettingsBytes as UTF-8 text. */
export function readSettingsText(file: string, maxBytes = SETTINGS_MAX_BYTES, opts: { follow?: boolean } = {}): string | undefined {
  return readSettingsBytes(file, maxBytes, opts)?.toString("utf8");
}

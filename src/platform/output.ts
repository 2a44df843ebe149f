/**
 * Writing to stdout/stderr without touching `process.stdout`: creating that stream loads
 * Node's stream machinery, ~7 ms of a hook's start-up (measured with --cpu-prof). Output is
 * written synchronously to the file descriptor instead, retrying while a non-blocking pipe
 * is full.
 *
 * Every command's stdout goes through here, so this is where a reader that stops early
 * (`baton export | head -1`) is handled, once: the write that meets the closed pipe (EPIPE, or
 * ECONNRESET for a socket) throws `StdoutClosed`, which ends the command where it is, and the
 * error reporter turns it into a quiet exit 0, as a shell pipeline expects (a C program would
 * die of SIGPIPE, which Node ignores). A closed stderr is dropped silently: there is nowhere left to say anything.
 */
import { writeSync } from "node:fs";

const pause = new Int32Array(new SharedArrayBuffer(4));

/** The reader closed stdout: the output ends here. Not a failure (exit 0, nothing printed). */
export class StdoutClosed extends Error {
  constructor() {
    super("stdout was closed by its reader");
    this.name = "StdoutClosed";
  }
}

let stdoutClosed = false;

/**
 * Whether `err` (or an error it wraps) is the end of stdout. Only the cause chain counts: a
 * real failure after the pipe closed (a storage error) is still a failure, reported on stderr.
 */
export function endedByClosedStdout(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) if (e instanceof StdoutClosed) return true;
  return false;
}

/** Whether the reader has closed stdout (whatever is said now goes to stderr). */
export function stdoutIsClosed(): boolean {
  return stdoutClosed;
}

function writeAll(fd: number, data: Uint8Array): void {
  let buf = data;
  while (buf.byteLength > 0) {
    try {
      const n = writeSync(fd, buf);
      buf = buf.subarray(n);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // EPIPE from a pipe; ECONNRESET when stdout is a socket (a parent that spawned us with a socketpair).
      if (code === "EPIPE" || code === "ECONNRESET") {
        if (fd !== 1) return;
        stdoutClosed = true;
        throw new StdoutClosed();
      }
      if (code !== "EAGAIN") throw err;
      Atomics.wait(pause, 0, 0, 1);
    }
  }
}

export function writeStdout(text: string): void {
  writeStdoutBytes(Buffer.from(text, "utf8"));
}

/** Raw bytes (an artifact may be binary). */
export function writeStdoutBytes(data: Uint8Array): void {
  if (stdoutClosed) throw new StdoutClosed();
  writeAll(1, data);
}

export function writeStderr(text: string): void {
  writeAll(2, Buffer.from(text, "utf8"));
}

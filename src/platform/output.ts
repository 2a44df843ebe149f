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
import { coloured } from "./colour.js";

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

/** Human text on stderr: messages carry paths and text from agents and repositories, so it goes through terminalText. */
export function writeStderr(text: string): void {
  writeStderrRaw(terminalText(text, coloured(2)));
}

/** As it is: only for text whose every control sequence is Baton's own (a progress line's redraw). */
export function writeStderrRaw(text: string): void {
  writeAll(2, Buffer.from(text, "utf8"));
}

/** Human text on stdout (a command's rendering), through terminalText. */
export function writeHuman(text: string): void {
  writeStdout(terminalText(text, coloured(1)));
}

/**
 * What a terminal could act on rather than show: C0 controls but tab and line feed (a carriage
 * return overwrites the line it ends, unless a line feed follows: a CRLF file's diff), escape sequences, DEL, C1 controls (U+009B is a CSI on
 * some terminals) and the bidirectional overrides and isolates that reorder what is shown. The
 * colours Baton paints itself (platform/colour.ts) are the only sequences kept.
 */
const TERMINAL_UNSAFE = /\x1b\[(?:1|2|22|3[12369])m|\r(?!\n)|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;
const TERMINAL_UNSAFE_UNCOLOURED = /\r(?!\n)|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;

/**
 * `text` with every character a terminal would act on shown instead as an escape (`\x1b`,
 * `\u202e`): a title, a file name or a lesson an agent or a repository wrote cannot clear the
 * screen, set the clipboard (OSC 52), retitle the window or make one line look like another.
 */
export function terminalText(text: string, colour: boolean): string {
  // Without colour there are no sequences of Baton's own to keep: a foreign one is shown, whatever it is.
  return text.replace(colour ? TERMINAL_UNSAFE : TERMINAL_UNSAFE_UNCOLOURED, (c) => {
    if (c.length > 1) return c;
    const n = c.charCodeAt(0);
    return n < 0x100 ? `\\x${n.toString(16).padStart(2, "0")}` : `\\u${n.toString(16)}`;
  });
}

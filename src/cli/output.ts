/**
 * Writing to stdout/stderr without touching `process.stdout`: creating that stream loads
 * Node's stream machinery, ~7 ms of a hook's start-up (measured with --cpu-prof). Output is
 * written synchronously to the file descriptor instead, retrying while a non-blocking pipe
 * is full.
 */
import { writeSync } from "node:fs";

const pause = new Int32Array(new SharedArrayBuffer(4));

function writeAll(fd: number, text: string): void {
  let buf = Buffer.from(text, "utf8");
  while (buf.length > 0) {
    try {
      const n = writeSync(fd, buf);
      buf = buf.subarray(n);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EAGAIN") throw err;
      Atomics.wait(pause, 0, 0, 1);
    }
  }
}

export function writeStdout(text: string): void {
  writeAll(1, text);
}

export function writeStderr(text: string): void {
  writeAll(2, text);
}

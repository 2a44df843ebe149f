/**
 * Colour for human output, as git and gh decide it: on when the stream is a terminal (and
 * `TERM` is not `dumb`), off under `NO_COLOR` (any non-empty value), and `FORCE_COLOR` wins
 * over both (`0` or `false` forces it off, anything else on). JSON output is never coloured.
 *
 * `node:tty` costs ~10 ms to load (it brings `net`), so it is loaded only when a human
 * rendering asks, never on the JSON or hook paths.
 */
import { createRequire } from "node:module";

export type Style = "red" | "green" | "yellow" | "cyan" | "bold" | "dim";

const SGR: Record<Style, readonly [number, number]> = {
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  cyan: [36, 39],
  bold: [1, 22],
  dim: [2, 22],
};

/** Whether output to `fd` (1 stdout, 2 stderr) is coloured. */
export function colourOn(fd: 1 | 2, env: NodeJS.ProcessEnv = process.env): boolean {
  const force = env.FORCE_COLOR;
  if (force !== undefined) return force !== "0" && force !== "false";
  if (env.NO_COLOR) return false;
  return isTerminal(fd, env);
}

/** Whether `fd` is a terminal that understands escape sequences (not `TERM=dumb`). */
export function isTerminal(fd: 1 | 2, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.TERM === "dumb") return false;
  const { isatty } = createRequire(import.meta.url)("node:tty") as typeof import("node:tty");
  return isatty(fd);
}

export type Paint = (style: Style, text: string) => string;

/** A painter for one stream: styles text when colour is on for it, else returns it as it is. */
export function painter(on: boolean): Paint {
  return on ? (style, text) => (text === "" ? text : `\x1b[${SGR[style][0]}m${text}\x1b[${SGR[style][1]}m`) : (_style, text) => text;
}

const decided: { 1?: boolean; 2?: boolean } = {};
let stdoutPaint: Paint | undefined;
let stderrPaint: Paint | undefined;

/** Whether stdout (1) or stderr (2) is coloured, decided once per process. */
export function coloured(fd: 1 | 2): boolean {
  decided[fd] ??= colourOn(fd);
  return decided[fd];
}

/** The painter for stdout (decided once per process). */
export function paintStdout(): Paint {
  stdoutPaint ??= painter(coloured(1));
  return stdoutPaint;
}

/** The painter for stderr (decided once per process). */
export function paintStderr(): Paint {
  stderrPaint ??= painter(coloured(2));
  return stderrPaint;
}

/** A line painted without its CR (a CRLF file's), which stays at the end, before the line feed. */
function crlf(paint: Paint, style: Style, line: string): string {
  return line.endsWith("\r") ? `${paint(style, line.slice(0, -1))}\r` : paint(style, line);
}

/**
 * A unified diff with its file headers bold, hunk headers cyan, added lines green and removed
 * red. A hunk's lines are counted from its header, so a removed line that itself starts with
 * `--` stays a removed line, and the next file's `---` header is a header again.
 */
export function paintDiff(diff: string, paint: Paint): string {
  let oldLeft = 0;
  let newLeft = 0;
  return diff
    .split("\n")
    .map((l) => {
      if (oldLeft > 0 || newLeft > 0) {
        if (l.startsWith("-")) oldLeft--;
        else if (l.startsWith("+")) newLeft--;
        else if (!l.startsWith("\\")) {
          oldLeft--;
          newLeft--;
        }
        return l.startsWith("+") ? crlf(paint, "green", l) : l.startsWith("-") ? crlf(paint, "red", l) : l;
      }
      const hunk = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/.exec(l);
      if (hunk) {
        oldLeft = Number(hunk[1] ?? 1);
        newLeft = Number(hunk[2] ?? 1);
        return paint("cyan", l);
      }
      return l.startsWith("+++") || l.startsWith("---") ? paint("bold", l) : l;
    })
    .join("\n");
}

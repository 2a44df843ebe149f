/**
 * A progress line on stderr for work that takes a while (a whole-tree checkpoint of a large
 * tree, a big rollback): shown only to a person at a terminal (stderr is one; not under --json
 * or --quiet), only once the work has run for PROGRESS_AFTER_MS (`BATON_PROGRESS_AFTER_MS`
 * changes it: 0 at once, a large value never), redrawn at most every
 * REDRAW_MS, and erased when the work ends so the result stands alone. Everything is
 * synchronous: the work reports from inside loops that never yield.
 */
import { coloured, isTerminal } from "../platform/colour.js";
import { terminalText, writeStderrRaw } from "../platform/output.js";
import type { Ctx } from "./context.js";

export const PROGRESS_AFTER_MS = 400;
const REDRAW_MS = 100;

export interface Progress {
  /**
   * Say where the work is (the text is built only when it will be shown). A new `phase` is
   * drawn at once, without waiting for the next redraw.
   */
  update(text: () => string, phase?: string): void;
  /** The work ended: erase the line if one was drawn. */
  end(): void;
}

const SILENT: Progress = { update: () => undefined, end: () => undefined };

/** A progress line for `ctx`'s command, or a silent one when nobody would see it. */
export function progress(ctx: Ctx, o: { now?: () => number; write?: (s: string) => void; tty?: boolean } = {}): Progress {
  if (ctx.json || ctx.quiet) return SILENT;
  const tty = o.tty ?? isTerminal(2);
  if (!tty) return SILENT;
  const now = o.now ?? Date.now;
  const write = o.write ?? writeStderrRaw;
  const setting = Number(process.env.BATON_PROGRESS_AFTER_MS);
  const after = process.env.BATON_PROGRESS_AFTER_MS && setting >= 0 ? setting : PROGRESS_AFTER_MS;
  const start = now();
  let drawn = 0;
  let shown = false;
  let drawnPhase: string | undefined;
  return {
    update(text, phase) {
      const t = now();
      if (t - start < after || (t - drawn < REDRAW_MS && phase === drawnPhase)) return;
      drawn = t;
      drawnPhase = phase;
      shown = true;
      write(`\r\x1b[K${terminalText(text(), coloured(2))}`);
    },
    end() {
      if (shown) write("\r\x1b[K");
      shown = false;
    },
  };
}

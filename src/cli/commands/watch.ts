/** `baton watch`: follow an external-run session until it is terminal, one line per tick. */

import { writeHuman, writeStdout } from "../../platform/output.js";
import type { WatchLine } from "../../services/session/watch-run.js";
import { type Ctx, parseIntOption } from "../context.js";

function human(l: WatchLine): string {
  const warn = (l.warnings ?? []).map((w) => `\n  warning (${w.code}): ${w.message}`).join("");
  switch (l.type) {
    case "start":
      return `Watching ${l.sessionId} (${l.flow}, phase ${l.phase}${l.deadline ? `, deadline ${l.deadline}` : ""}) every ${l.intervalMs} ms`;
    case "terminal":
      return `${l.at} ${l.phase}: terminal (${l.reason})`;
    case "stopped":
      return `${l.at} stopped (${l.reason}) in ${l.phase}`;
    default:
      return `${l.at} ${l.phase}${warn}`;
  }
}

export async function watch(ctx: Ctx, id: string | undefined, o: { session?: string; interval?: string }): Promise<void> {
  const b = await ctx.open();
  const sid = await b.sessions.resolve(id ?? o.session);
  const intervalMs = parseIntOption(o.interval, "--interval", 10);
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    const last = await b.targets.watchRun(sid, {
      ...(intervalMs !== undefined ? { intervalMs } : {}),
      signal: stop.signal,
      // --quiet: no ticks (the exit code says how the run ended).
      onLine: (l) => (ctx.json ? writeStdout(`${JSON.stringify(l)}\n`) : ctx.quiet ? undefined : writeHuman(`${human(l)}\n`)),
    });
    if (last.type === "stopped") process.exitCode = 130;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

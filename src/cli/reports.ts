/**
 * What `baton status` and `baton resume` report, from an open Baton: the command computes it in
 * its own process (commands/journal.ts), or the workspace's running server does for it
 * (server/cli-route.ts, asked by ask.ts) and the command prints the server's JSON as its own.
 * One function each, so the two answers cannot drift apart.
 */
import { join } from "node:path";
import type { Baton } from "../api.js";
import { configTrust } from "../platform/config-file.js";
import { BATON_DIR } from "../platform/workspace.js";

export interface StatusOptions {
  all?: boolean;
  session?: string;
}

/** `baton status`: runs provably gone are marked crashed first (an explicit write step), then the report. */
export async function statusReport(b: Baton, o: StatusOptions) {
  const crashed = await b.runs.detectCrashed(o.session ? { sessionId: o.session } : {});
  const report = await b.sessions.status({ ...(o.all ? { all: true } : {}), ...(o.session ? { sessionId: o.session } : {}) });
  const config = configTrust(join(b.root, BATON_DIR));
  return {
    report,
    crashed,
    config,
    json: {
      ...report,
      ...(crashed.length > 0 ? { crashedRuns: crashed } : {}),
      store: b.store,
      ...(config.state !== "absent" ? { config } : {}),
    },
  };
}

/** `baton resume` of one session (resolved from `id`, `--session` or the only active one), after an unpause if any. */
export async function resumeReport(b: Baton, sessionId: string, unpause?: { unpaused: boolean }) {
  const crashed = await b.runs.detectCrashed({ sessionId });
  const report = await b.sessions.resume(sessionId);
  return { ...report, ...(unpause ? { unpaused: unpause.unpaused } : {}), ...(crashed.length > 0 ? { crashedRuns: crashed } : {}) };
}

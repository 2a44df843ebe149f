/**
 * The process entry of `baton hook <agent> <Event>` (dist/hook.cjs, which bin/baton.cjs loads
 * instead of dist/cli.cjs for hooks). Agents start it on every tool call, so it is small: it
 * reads the payload, translates it (front.ts), answers what needs no workspace, and hands the
 * rest to the workspace's running server (client.ts) when `.baton/server.json` names one of
 * this build that is proven to be the process that wrote it.
 *
 * Everything else goes to the in-process path (run.ts in dist/cli.cjs) with the payload, the
 * request id and the deadline: no server, a server of another build, a server that refused or
 * broke off (a blind retry: every step is keyed, core/hooks/keys.ts), hooks configured `off`,
 * an unknown agent or an unreadable payload (both reported there as they always were).
 */
import { BUILD } from "../core/build.js";
import { isNoop } from "../core/hooks/types.js";
import { readConfigFile } from "../platform/config-file.js";
import { writeStdout } from "../platform/output.js";
import { provenServer } from "../platform/server-file.js";
import { describeStore, resolveStore, storeIdentity } from "../platform/store-config.js";
import { askServer } from "./client.js";
import {
  adapterFor,
  agentPid,
  debugLine,
  hookDeadline,
  newRequestId,
  parseEvent,
  parseHookArgs,
  readStdin,
  stdoutOf,
  workspaceFor,
} from "./front.js";
import { hookServerMode } from "./policy.js";

/** What entry.ts hands to the in-process path (cli/entry.ts reads it). */
export interface HookHandoff {
  text: string;
  /** Made here and used by every attempt at this hook. */
  requestId: string;
  /** Why the server did not answer (BATON_HOOK_DEBUG says it). */
  reason: string;
}

export const HANDOFF = Symbol.for("baton.hookHandoff");

function handOff(h: HookHandoff): void {
  (globalThis as Record<symbol, unknown>)[HANDOFF] = h;
  // bin/baton.cjs provides a loader with a code cache; without it, a plain require.
  const load = (globalThis as Record<symbol, ((file: string) => void) | undefined>)[Symbol.for("baton.load")];
  if (load) load(`${__dirname}/cli.cjs`);
  else require("./cli.cjs");
}

function answer(stdout: string): void {
  try {
    if (stdout) writeStdout(stdout);
  } catch {
    // the agent closed the pipe
  }
  process.exit(0);
}

async function main(): Promise<void> {
  const args = parseHookArgs(process.argv.slice(3));
  const adapter = adapterFor(args.agent);
  const requestId = newRequestId();
  if (!adapter) return handOff({ text: "", requestId, reason: "unknown agent" });
  const text = readStdin();
  let ev: ReturnType<typeof parseEvent>;
  try {
    ev = parseEvent(adapter, args.native, text, process.cwd());
  } catch {
    return handOff({ text, requestId, reason: "unreadable payload" });
  }
  // Nothing to do, or not a Baton project: the same answer the in-process path gives.
  if (isNoop(ev)) return answer(stdoutOf(adapter.passThrough(args.native)));
  const ws = workspaceFor(args.root, ev.cwd);
  if (!ws) return answer(stdoutOf(adapter.passThrough(args.native)));
  if (!args.native) return handOff({ text, requestId, reason: "no event named on the command line" });
  // .baton/config.json is read once, for the server mode and the store; a file that cannot be
  // read is left to each of them to judge (hookServerMode: off; the store: reported in-process).
  let config: Record<string, unknown> | undefined;
  try {
    config = readConfigFile(ws.dir);
  } catch {
    config = undefined;
  }
  if (hookServerMode(ws.dir, config) === "off") return handOff({ text, requestId, reason: "hooks.server is off" });
  const info = provenServer(ws.dir);
  if (!info) return handOff({ text, requestId, reason: "no server" });
  // A server of another build may read the event differently: it is not used (and a
  // session-start or prompt hook replaces it once it has answered, autostart.ts).
  if (info.version !== BUILD) return handOff({ text, requestId, reason: `the server is build ${info.version ?? "unknown"}, not ${BUILD}` });
  // The store this process would open: the server answers only for the same one (on a
  // PostgreSQL store, its pool then spares this process a connection and a login).
  let store: string;
  try {
    store = storeIdentity(describeStore(resolveStore(ws.dir, process.env, config), ws.dbPath));
  } catch {
    return handOff({ text, requestId, reason: "the store configuration cannot be read" }); // reported in-process, as always
  }
  const r = await askServer(info, {
    event: ev,
    root: ws.root,
    agentPid: agentPid(),
    requestId,
    deadline: hookDeadline(adapter, ev.native),
    store,
  });
  if (r.kind === "retry") return handOff({ text, requestId, reason: r.reason });
  debugLine(`answered by the server (pid ${info.pid})`);
  return answer(stdoutOf(adapter.render(ev, r.response)));
}

void main();

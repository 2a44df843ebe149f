/**
 * One hook, server first: the payload translated (front.ts), what needs no workspace answered,
 * and the rest handed to the workspace's running server (client.ts) when `.baton/server.json`
 * names one of this build that is proven to be the process that wrote it. Everything else is
 * a hand-off to the in-process path (run.ts) with the payload, the request id and the reason.
 *
 * Shared by the hook process (entry.ts, once per process) and the relay (relay.ts, once per
 * call): each call reads the workspace, its config, server.json and the store afresh, as a new
 * hook process would.
 */
import { basename, resolve } from "node:path";
import { BUILD } from "../core/build.js";
import { type AgentAdapter, type HookEvent, isNoop } from "../core/hooks/types.js";
import { envSettings } from "../env-options.js";
import { readConfigFile } from "../platform/config-file.js";
import { type Connection, open } from "../platform/loopback.js";
import { batonProgramName, movedAgentConfig, realOr } from "../platform/moved-config.js";
import { provenServer, type ServerInfo } from "../platform/server-file.js";
import { describeStore, resolveStore, storeIdentity } from "../platform/store-config.js";
import type { Workspace } from "../platform/workspace.js";
import { askServer, CLIENT_TIMEOUTS, type HookRequest, validServer } from "./client.js";
import { adapterFor, agentPid, debugLine, type HookArgs, hookDeadline, parseEvent, stdoutOf, workspaceFor } from "./front.js";
import { hookServerMode } from "./policy.js";

/** What entry.ts hands to the in-process path (cli/entry.ts reads it). */
export interface HookHandoff {
  text: string;
  /** Made here and used by every attempt at this hook. */
  requestId: string;
  /** Why the server did not answer (BATON_HOOK_DEBUG says it). */
  reason: string;
}

/** For the server's route of hook clients (server/hook-client-route.ts), which judges hooks by these rules. */
export { findAgentPid, stdoutOf } from "./front.js";

export type FirstOutcome = { kind: "answer"; stdout: string } | { kind: "handoff"; handoff: HookHandoff };

/**
 * The hook's answer from here or from the server, or the hand-off to the in-process path.
 * `startedAt`: when the hook was received (the deadline counts from it); the process's start when
 * omitted. `cwd`: where the hook runs (the payload's own cwd comes first).
 */
export async function serverFirst(args: HookArgs, text: string, requestId: string, cwd: string, startedAt?: number): Promise<FirstOutcome> {
  const handOff = (reason: string): FirstOutcome => ({ kind: "handoff", handoff: { text, requestId, reason } });
  // A server of this build, proven, is connected to as soon as the settings are known: it wakes
  // and sets the connection up while this process does the rest (loopback.ts `open`). A server
  // of another build may read the event differently: it is not used (and a session-start or
  // prompt hook replaces it once it has answered, autostart.ts).
  let info: ServerInfo | undefined;
  let conn: Connection | undefined;
  try {
    const side = { env: process.env, cwd, agentPid, ...(startedAt !== undefined ? { startedAt } : {}) };
    const p = prepareHook(args, text, requestId, side, (ws, settings) => {
      if (args.serverSilent) return "the server did not answer the shell's hook client within a second";
      info = provenServer(ws.dir);
      if (!info) return "no server";
      if (info.version !== BUILD) return `the server is build ${info.version ?? "unknown"}, not ${BUILD}`;
      if (info.settings !== settings) return `the server runs with other settings (${info.settings ?? "unknown"}, not ${settings})`;
      if (validServer(info)) conn = open(info.port);
      return undefined;
    });
    if (p.kind === "answer") return p;
    if (p.kind === "handoff") return handOff(p.reason);
    if (!info) return handOff("no server");
    const r = await askServer(info, p.req, CLIENT_TIMEOUTS, conn);
    if (r.kind === "retry") return handOff(r.reason);
    debugLine(`answered by the server (pid ${info.pid})`);
    return { kind: "answer", stdout: stdoutOf(p.adapter.render(p.ev, r.response)) };
  } finally {
    conn?.destroy();
  }
}

/** The process a hook runs in, as the checks below see it. */
export interface HookSide {
  /** Its environment: the settings, store and moved agent folders it names. */
  env: NodeJS.ProcessEnv;
  /** Its working directory (the payload's own cwd comes first). */
  cwd: string;
  /** The agent's process (front.ts `agentPid`), asked only when needed. */
  agentPid: () => number;
  /** When the hook was received (the deadline counts from it); the process's start when omitted. */
  startedAt?: number;
}

export type Prepared =
  | { kind: "answer"; stdout: string }
  | { kind: "handoff"; reason: string }
  | { kind: "request"; adapter: AgentAdapter; ev: HookEvent; req: HookRequest & { settings: string } };

/**
 * What a hook hands the workspace's server (`request`), the answer when it needs no workspace,
 * or why it is answered in a process of its own (`handoff`). The one set of rules for a hook
 * process and for the server's route of hook clients that start no Node
 * (server/hook-client-route.ts), which judges with the client's environment. `onSettings` is
 * called once the workspace and the settings are known, before the rest of the checks (the hook
 * process proves its server there, opens its connection to it, and stops at a reason not to).
 */
export function prepareHook(
  args: HookArgs,
  text: string,
  requestId: string,
  side: HookSide,
  onSettings?: (ws: Workspace, settings: string) => string | undefined,
): Prepared {
  const handOff = (reason: string): Prepared => ({ kind: "handoff", reason });
  const adapter = adapterFor(args.agent);
  if (!adapter) return handOff("unknown agent");
  let ev: ReturnType<typeof parseEvent>;
  try {
    ev = parseEvent(adapter, args.native, text, side.cwd);
  } catch {
    return handOff("unreadable payload");
  }
  // Nothing to do, or not a Baton project: the same answer the in-process path gives.
  const passThrough: Prepared = { kind: "answer", stdout: stdoutOf(adapter.passThrough(args.native)) };
  if (isNoop(ev)) return passThrough;
  const ws = workspaceFor(args.root, ev.cwd, ev, side.agentPid);
  if (!ws) return passThrough;
  if (!args.native) return handOff("no event named on the command line");
  // .baton/config.json is read once, for the server mode and the store; a file that cannot be
  // read is left to each of them to judge (hookServerMode: off; the store: reported in-process).
  let config: Record<string, unknown> | undefined;
  try {
    config = readConfigFile(ws.dir);
  } catch {
    config = undefined;
  }
  if (hookServerMode(ws.dir, config, side.env) === "off") return handOff("hooks.server is off");
  // The settings its environment gives this process: a server started with others is not
  // asked (server.json says which it has; it would refuse).
  let settings: string;
  try {
    settings = envSettings(side.env);
  } catch {
    return handOff("a setting in the environment cannot be read"); // reported in-process, as always
  }
  const stop = onSettings?.(ws, settings);
  if (stop !== undefined) return handOff(stop);
  // The write-tool guard judges a `baton` in PATH and a configuration a variable moved by the
  // environment it runs in: the server's is not the agent's, so such a write is judged here.
  if (ev.kind === "before_tool" && ev.tool.kind === "write") {
    const files = ev.tool.files.map((f) => resolve(ev.cwd, f));
    const moved = movedAgentConfig(ws.root, side.env);
    const judgedHere = (f: string) => batonProgramName.test(basename(f)) || moved(f);
    if (
      files.some((f) => {
        if (judgedHere(f)) return true;
        const real = realOr(f);
        return real !== f && judgedHere(real);
      })
    )
      return handOff("a write the agent's environment decides");
  }
  // The store this process would open: the server answers only for the same one (on a
  // PostgreSQL store, its pool then spares this process a connection and a login).
  let store: string;
  try {
    store = storeIdentity(describeStore(resolveStore(ws.dir, side.env, config), ws.dbPath));
  } catch {
    return handOff("the store configuration cannot be read"); // reported in-process, as always
  }
  const req = {
    event: ev,
    root: ws.root,
    agentPid: side.agentPid(),
    requestId,
    deadline: hookDeadline(adapter, ev.native, side.startedAt, side.env),
    store,
    settings,
  };
  return { kind: "request", adapter, ev, req };
}

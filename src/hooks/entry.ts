/**
 * The process entry of `baton hook <agent> <Event>` (dist/hook.cjs, which bin/baton.cjs loads
 * instead of dist/cli.cjs for hooks). Agents start it on every tool call, so it is small: it
 * reads the payload, answers what needs no workspace, and hands the rest to the workspace's
 * running server (client.ts) when one is listed in `.baton/server.json`.
 *
 * Everything else goes to the in-process path (run.ts in dist/cli.cjs), with the payload it
 * already read: no server, the server refused or did not take the hook, hooks configured `off`,
 * an unknown agent or an unreadable payload (both reported there as they always were).
 */
import { writeStdout } from "../cli/output.js";
import { provenServer } from "../services/server-file.js";
import { describeStore, resolveStore, storeIdentity } from "../services/store-config.js";
import { askServer } from "./client.js";
import { adapterFor, agentPid, parseEvent, parseHookArgs, readStdin, stdoutOf, workspaceFor } from "./front.js";
import { hookServerMode } from "./policy.js";
import { isNoop } from "./types.js";

/** What entry.ts hands to the in-process path (cli/entry.ts reads it). */
export interface HookHandoff {
  text: string;
  lost?: { code: string; message: string };
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
  if (!adapter) return handOff({ text: "" });
  const text = readStdin();
  let ev: ReturnType<typeof parseEvent>;
  try {
    ev = parseEvent(adapter, args.native, text, process.cwd());
  } catch {
    return handOff({ text });
  }
  // Nothing to do, or not a Baton project: the same answer the in-process path gives.
  if (isNoop(ev)) return answer(stdoutOf(adapter.passThrough(args.native)));
  const ws = workspaceFor(args.root, ev.cwd);
  if (!ws) return answer(stdoutOf(adapter.passThrough(args.native)));
  const info = args.native && hookServerMode(ws.dir) !== "off" ? provenServer(ws.dir) : undefined;
  if (!info) return handOff({ text });
  // The store this process would open: the server answers only for the same one (on a
  // PostgreSQL store, its pool then spares this process a connection and a login).
  let store: string;
  try {
    store = storeIdentity(describeStore(resolveStore(ws.dir), ws.dbPath));
  } catch {
    return handOff({ text }); // a broken store configuration: reported in-process, as always
  }
  const r = await askServer(info, ws, {
    agent: adapter.agent,
    native: args.native,
    text,
    cwd: process.cwd(),
    agentPid: agentPid(),
    store,
  });
  if (r.kind === "answered") return answer(r.stdout);
  if (r.kind === "lost")
    return handOff({ text, lost: { code: "server_unreachable", message: `baton server pid ${info.pid}: ${r.reason}` } });
  return handOff({ text });
}

void main();

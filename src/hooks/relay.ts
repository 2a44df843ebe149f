/**
 * `baton hook <agent> --relay`: one long-lived process that answers many hooks, for an agent
 * that loads Baton as a plugin into its own process (OpenCode, hooks/opencode-plugin.ts) and
 * would otherwise start a process for every tool call. It talks JSON lines: it first writes
 * `{"relay":1}` (the plugin then knows this baton is a relay; an older baton says nothing and
 * the plugin starts a process per hook instead), then reads `{id, event, payload}` lines on
 * stdin and writes `{id, answer}` lines on stdout, `answer` being what `baton hook <agent>
 * <event>` prints for that payload (`{}` when it prints nothing).
 *
 * Each call goes exactly the way a hook process goes: the workspace, its config, server.json
 * and the store are read afresh (server-first.ts), the server is asked first with a new request
 * id and a deadline counted from when the call arrived, and the rest is answered here through
 * the in-process path (run.ts in dist/cli.cjs, loaded on first need), failures logged to the
 * workspace's hook log. Calls answered by a server run side by side; calls answered here run
 * one at a time (one SQLite writer per process, as in separate hook processes).
 *
 * It ends when stdin closes (the agent is gone), once the calls under way are answered. When
 * its own bundles change on disk (Baton upgraded or rebuilt), it answers the next call
 * `{id, restart: true}`, takes no more, and the plugin sends that call to a new relay: what
 * runs is always the installed Baton. A line it cannot read gets `{id, error}`.
 */
import { type Stats, statSync } from "node:fs";
import { dirname, isAbsolute } from "node:path";
import { workingDir } from "../platform/workspace.js";
import { debugLine, type HookArgs, newRequestId, workspaceFor } from "./front.js";
import type { answerHook, logHookFailure } from "./run.js";
import { serverFirst } from "./server-first.js";

/** What dist/cli.cjs hands a relay: run.ts's in-process answer and its hook log (kept out of this bundle, dist/hook.cjs). */
interface InProcess {
  answerHook: typeof answerHook;
  logHookFailure: typeof logHookFailure;
}

/** The global through which dist/cli.cjs hands run.ts's answerHook and hook log to a relay (cli/entry.ts). */
export const RELAY = Symbol.for("baton.hookRelay");

interface Call {
  id: string | number;
  event: string;
  payload: Record<string, unknown>;
}

/** A line as a call, or why it is not one. */
export function readCall(line: string): Call | { id: string | number | null; error: string } {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return { id: null, error: "the line is not JSON" };
  }
  if (v === null || typeof v !== "object" || Array.isArray(v)) return { id: null, error: "the line is not an object" };
  const o = v as Record<string, unknown>;
  const id = typeof o.id === "string" || (typeof o.id === "number" && Number.isFinite(o.id)) ? o.id : null;
  if (id === null) return { id: null, error: "the call has no id (a string or a number)" };
  if (typeof o.event !== "string" || o.event === "" || o.event.startsWith("-")) return { id, error: "the call names no event" };
  if (o.payload === null || typeof o.payload !== "object" || Array.isArray(o.payload))
    return { id, error: "the call's payload is not an object" };
  return { id, event: o.event, payload: o.payload as Record<string, unknown> };
}

/** What the hook process prints, as the answer object: `{}` for nothing (or for what is not JSON). */
function answerOf(stdout: string): unknown {
  const text = stdout.trim();
  if (text === "") return {};
  try {
    return JSON.parse(text);
  } catch {
    return {};
  }
}

function fileStamp(file: string): string {
  let s: Stats;
  try {
    s = statSync(file);
  } catch {
    return "gone";
  }
  return `${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}`;
}

export async function runRelay(args: HookArgs, cliBundle: string): Promise<void> {
  const bundles = [`${dirname(cliBundle)}/hook.cjs`, cliBundle];
  const stamp = () => bundles.map(fileStamp).join("|");
  const started = stamp();
  let inFlight = 0;
  let ended = false;
  let retired = false;
  let loaded: Promise<InProcess> | undefined;
  let here: Promise<unknown> = Promise.resolve();
  // The folder the relay started in, read once: a call's own folder is its payload's `cwd` (a
  // user plugin's relay serves every project of its agent, and this folder may be removed).
  const startDir = workingDir() ?? "/";
  const cwdOf = (call: Call) => (typeof call.payload.cwd === "string" && isAbsolute(call.payload.cwd) ? call.payload.cwd : startDir);

  const write = (o: unknown) => {
    try {
      process.stdout.write(`${JSON.stringify(o)}\n`);
    } catch {
      // the agent is gone: stdin closes next
    }
  };
  const maybeExit = () => {
    // After the last answer is out: a pipe's write may still be under way (macOS).
    if (ended && inFlight === 0) process.stdout.write("", () => process.exit(0));
  };
  /** run.ts's answerHook and hook log from dist/cli.cjs, loaded once (its code cache as for a hook process). */
  const inProcess = (): Promise<InProcess> => {
    loaded ??= new Promise<InProcess>((resolve) => {
      (globalThis as Record<symbol, unknown>)[RELAY] = resolve;
      const load = (globalThis as Record<symbol, ((file: string) => void) | undefined>)[Symbol.for("baton.load")];
      if (load) load(cliBundle);
      else require(cliBundle);
    }).catch((err: unknown) => {
      loaded = undefined; // the next call tries again
      throw err;
    });
    return loaded;
  };
  const argvFor = (event: string) => [args.agent as string, event, ...(args.root ? ["--root", args.root] : [])];

  const answer = async (call: Call, startedAt: number): Promise<unknown> => {
    const text = JSON.stringify(call.payload);
    const requestId = newRequestId();
    const cwd = cwdOf(call);
    const r = await serverFirst({ ...args, native: call.event }, text, requestId, cwd, startedAt);
    if (r.kind === "answer") return answerOf(r.stdout);
    // One in-process answer at a time: two SQLite connections of one thread would wait on each other.
    const turn = here.then(async () => {
      const { answerHook } = await inProcess();
      const a = await answerHook(argvFor(call.event), {
        input: r.handoff.text,
        cwd,
        startedAt,
        requestId: r.handoff.requestId,
        reason: `${r.handoff.reason} (relay)`,
        ...(process.argv[1] ? { launcher: process.argv[1] } : {}),
      });
      write({ id: call.id, answer: answerOf(a.out) });
      // The workspace closed (and the server started) after the answer, before the next call opens it.
      await a.after?.();
    });
    here = turn.catch(() => undefined);
    await turn;
    return undefined;
  };

  const take = (line: string) => {
    if (line.trim() === "") return;
    const startedAt = Date.now();
    const call = readCall(line);
    if ("error" in call) return write(call);
    if (retired || stamp() !== started) {
      // Baton changed under this process: the call goes to a new relay, running the new Baton.
      retired = true;
      debugLine("the relay's bundles changed: it takes no more calls");
      return write({ id: call.id, restart: true });
    }
    inFlight++;
    answer(call, startedAt)
      .then((a) => {
        if (a !== undefined) write({ id: call.id, answer: a });
      })
      .catch(async (err: unknown) => {
        // The agent goes on (as when a hook process fails), and the workspace's hook log says why.
        write({ id: call.id, answer: {} });
        debugLine(`relay call ${JSON.stringify(call.id)} failed: ${err instanceof Error ? err.message : String(err)}`);
        try {
          const ws = workspaceFor(args.root, cwdOf(call));
          if (ws) await (await inProcess()).logHookFailure(ws.dir, args.agent as string, call.event, err);
        } catch {
          // no workspace to log in
        }
      })
      .finally(() => {
        inFlight--;
        maybeExit();
      });
  };

  process.stdout.on("error", () => undefined);
  write({ relay: 1 });
  // The start of a line not ended yet, in the chunks it came in: only a new chunk is searched
  // for its end (searching all that came so far, chunk after chunk, made a long line quadratic).
  let parts: string[] = [];
  process.stdin.setEncoding("utf8");
  process.stdin.on("data", (chunk: string) => {
    let from = 0;
    for (let i = chunk.indexOf("\n"); i >= 0; i = chunk.indexOf("\n", from)) {
      parts.push(chunk.slice(from, i));
      take(parts.join(""));
      parts = [];
      from = i + 1;
    }
    if (from < chunk.length) parts.push(chunk.slice(from));
  });
  process.stdin.on("end", () => {
    const rest = parts.join("");
    parts = [];
    if (rest !== "") take(rest);
    ended = true;
    maybeExit();
  });
  process.stdin.on("error", () => {
    ended = true;
    maybeExit();
  });
}

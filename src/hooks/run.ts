/**
 * `baton hook <claude|codex|gemini|qwen|copilot|cline> <Event>` in its own process: the path a hook takes when no
 * server answers it (entry.ts tries the workspace's server first; see docs/integrations.md).
 * Reads the agent's JSON from stdin (or takes it from entry.ts, which already read it), answers
 * on stdout in the agent's own format, exits 0.
 *
 * It fails open: anything Baton cannot do (a broken workspace, a corrupt or locked database, an
 * unexpected payload) is logged to `.baton/logs/hooks.log` (the doctor reports it) and answered
 * with the agent's "continue" form, so Baton never stands between the agent and its tool. The
 * only refusal is a deliberate one: a spiral pause denying an edit.
 *
 * Start-up is the budget (the agent waits for this process on every tool call; see
 * docs/benchmarks.md "hooks"): reached from the fast path in cli/entry.ts without commander,
 * stdin read with readFileSync(0) (no streams), output written to the file descriptor, and
 * Baton opened only once there is a workspace to act on. It answers through the same API as the
 * server (`baton.agents.handle`), with the request id entry.ts made when it tried the server
 * first: a step the server committed before it broke off is found by its key, not repeated.
 */
import type { Baton } from "../api.js";
import { HOOK_AGENT_LIST } from "../core/hooks/config.js";
import { isNoop } from "../core/hooks/types.js";
import { envOptions } from "../env-options.js";
import { BatonError, isBatonError } from "../errors.js";
import { writeStderr, writeStdout } from "../platform/output.js";
import { HOOK_STORE_CONNECT_MS } from "../platform/store-limits.js";
import { workingDir } from "../platform/workspace.js";
import {
  adapterFor,
  agentPid,
  debugLine,
  hookDeadline,
  logHookFailure,
  newRequestId,
  parseEvent,
  parseHookArgs,
  readStdin,
  stdoutOf,
  workspaceFor,
} from "./front.js";

export { adapterFor, agentPid } from "./front.js";
/** For a relay (relay.ts), which logs a failed call through this bundle. */
export { logHookFailure };

/** How long a hook waits for another process's write lock before giving up (and failing open). */
const HOOK_BUSY_TIMEOUT_MS = 5_000;

export interface RunHookOptions {
  /** Exit the process as soon as the answer is written (the CLI). */
  exit?: boolean;
  /** The payload, when the caller already read stdin (entry.ts). */
  input?: string;
  /** The request id entry.ts made (and sent to a server that did not answer): the same keys, so nothing is done twice. */
  requestId?: string;
  /** Why the hook is answered here and not by the server (BATON_HOOK_DEBUG says it). */
  reason?: string;
  /** The script that runs `baton` (bin/baton.cjs): lets session-start and prompt hooks start a server. */
  launcher?: string;
}

/**
 * argv: `<agent> <Event> [--root <dir>]`. Never throws; the exit code is always 0.
 */
export async function runHook(argv: readonly string[], opts: RunHookOptions = {}): Promise<void> {
  process.exitCode = 0;
  const r = await answerHook(argv, { ...opts, input: opts.input ?? readStdin(), cwd: workingDir() ?? "/", keepOpen: opts.exit === true });
  writeOut(r.out);
  await r.after?.();
  // Every write is committed (and fsynced): exit without closing SQLite. Closing the last
  // connection checkpoints the WAL into the database and deletes it (two fsyncs), and the next
  // hook process recreates it (two more): ~10-15 ms of each hook on the benchmark machine.
  // The WAL stays valid for the next process, and SQLite's auto-checkpoint keeps it bounded.
  if (opts.exit) process.exit(0);
}

export interface AnswerHookOptions extends Omit<RunHookOptions, "exit" | "input"> {
  input: string;
  /** Where the hook runs (a payload's own cwd comes first). */
  cwd: string;
  /** When the hook was received: its deadline counts from it (the process's start when omitted). */
  startedAt?: number;
  /** Leave the workspace open (the process exits right after). */
  keepOpen?: boolean;
}

/**
 * The hook's answer (the text the hook process prints, without the newline) and what to do once
 * it is given (close the workspace, start the server). Used by runHook and, once per call, by the relay (relay.ts), so
 * that several hooks may be answered at once in one process. Never throws.
 */
export async function answerHook(argv: readonly string[], opts: AnswerHookOptions): Promise<{ out: string; after?: () => Promise<void> }> {
  const args = parseHookArgs(argv);
  const adapter = adapterFor(args.agent);
  if (!adapter) {
    writeStderr(`baton hook: unknown agent "${args.agent ?? ""}"; use ${HOOK_AGENT_LIST}\n`);
    return { out: "" };
  }
  const { native, root } = args;
  let out = adapter.passThrough(native);
  let ev: ReturnType<typeof parseEvent>;
  try {
    ev = parseEvent(adapter, native, opts.input, opts.cwd);
  } catch (err) {
    // A payload we cannot read: log where we can, let the agent go on.
    const here = workspaceFor(root, opts.cwd);
    // Logged with a code of Baton's (doctor counts failures by code), not the parser's SyntaxError.
    // A SyntaxError is the payload's (not JSON, or past the bounds); anything else is Baton's own failure.
    const why = isBatonError(err)
      ? err
      : err instanceof SyntaxError
        ? new BatonError("bad_input", `the agent's payload could not be read: ${err.message}`)
        : new BatonError("internal", `reading the agent's payload failed: ${(err as Error).message}`);
    if (here) await logHookFailure(here.dir, adapter.agent, native, why);
    return { out };
  }
  if (isNoop(ev)) return { out };
  const ws = workspaceFor(root, ev.cwd, ev);
  if (!ws) return { out }; // not a Baton project: nothing to record

  let baton: Baton | undefined;
  try {
    const { openBaton } = await import("../compose.js");
    const deadline = hookDeadline(adapter, ev.native, opts.startedAt ?? args.startedAt);
    baton = await openBaton({
      root: ws.root,
      create: false,
      busyTimeoutMs: HOOK_BUSY_TIMEOUT_MS,
      // A server store (PostgreSQL): a second to reach it, and no statement past the deadline.
      storeTimeoutMs: HOOK_STORE_CONNECT_MS,
      storeLimits: { deadline },
      ...withoutNotes(envOptions()),
    });
    const response = await baton.agents.handle(ev, {
      agentPid: agentPid(),
      requestId: opts.requestId ?? args.requestId ?? newRequestId(),
      deadline,
    });
    out = adapter.render(ev, response);
  } catch (err) {
    await logHookFailure(ws.dir, adapter.agent, native, err);
    out = adapter.passThrough(native);
    // A workspace Baton refuses to open (its .baton/ reached through a link a repository may
    // have committed) is never supervised, and its log is not written either: the user is told
    // at each session start and prompt, where the agent shows Baton's messages, else through
    // the model (Cline CLI, Copilot CLI and OpenCode show hooks' messages only to the model).
    if (baton === undefined && isBatonError(err, "unsafe_path") && (ev.kind === "session_start" || ev.kind === "prompt")) {
      const off = `Baton is off in this workspace: ${err.message}`;
      out = adapter.render(ev, { userMessage: off, context: `${off} Tell the user.` });
    }
  }
  debugLine(`answered in this process (${opts.reason ?? "run directly"})`);
  const launcher = opts.launcher;
  const startServer = launcher !== undefined && (ev.kind === "session_start" || ev.kind === "prompt");
  if (opts.keepOpen && !startServer) return { out };
  return {
    out,
    // After the answer: the agent is not kept waiting for the workspace's close or the server's start.
    after: async () => {
      if (!opts.keepOpen) {
        try {
          await baton?.close();
        } catch (err) {
          await logHookFailure(ws.dir, adapter.agent, native, err);
        }
      }
      if (startServer) {
        const { maybeStartServer } = await import("./autostart.js");
        maybeStartServer(ws, launcher);
      }
    },
  };
}

function writeOut(out: string): void {
  try {
    const text = stdoutOf(out);
    if (text) writeStdout(text);
  } catch {
    // the agent closed the pipe
  }
}

/** The options without the deprecation notes: a hook prints nothing but its answer. */
function withoutNotes({ deprecated: _, ...options }: ReturnType<typeof envOptions>) {
  return options;
}

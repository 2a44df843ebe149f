/**
 * The front of a hook process, shared by both ways of answering it: the hand-off to a running
 * server (entry.ts, dist/hook.cjs) and the in-process path (run.ts). It reads the command line
 * and the payload and translates the payload into the neutral event (the agent's adapter,
 * core/hooks/), without opening the workspace; it also makes what every attempt at this hook
 * shares: the request id (the key of its prompt and session-start steps) and the deadline.
 *
 * Kept small on purpose: dist/hook.cjs is this, the adapters and the server client, loaded on
 * every tool call (docs/benchmarks.md, "Agent hooks").
 */
import { readFileSync, writeSync } from "node:fs";
import { jsonBoundsProblem } from "../core/canonical.js";
import { adapterFor } from "../core/hooks/adapters.js";
import type { AgentAdapter, HookEvent } from "../core/hooks/types.js";
import { readProcArgs, readProcStat } from "../platform/process-facts.js";
import { agentProcessMark, agentSessionMark, findWorkspace, type Workspace, workspaceAt } from "../platform/workspace.js";
import { codexCallOutcome } from "./codex-transcript.js";

export { adapterFor };

const SHELLS = new Set(["sh", "bash", "dash", "zsh", "fish", "ksh", "mksh", "ash"]);
/**
 * The time a hook keeps between its deadline and the agent's timeout: enough to answer (and to
 * retry a step in its own process after a server that broke off) before the agent gives up on
 * the hook and runs the tool. A quarter of the timeout when that is less (Codex's 3 s SessionEnd).
 */
const DEADLINE_MARGIN_MS = 15_000;

export interface HookArgs {
  /** The agent named on the command line (`claude`), as given. */
  agent: string | undefined;
  /** The event named on the command line (`PreToolUse`); "" when none was given. */
  native: string;
  /** `--root` or BATON_ROOT. */
  root: string | undefined;
  /**
   * `--started-at=<ms since the epoch>`: when the hook was received, if before this process
   * started (the shell's hook client, bin/baton.cjs, passes it when it hands the hook on): its
   * deadline counts from then. At most a minute back; anything else is ignored.
   */
  startedAt?: number;
  /** `--request-id=<id>`: the id the shell's hook client sent the server with, so a step it took is found by its key. */
  requestId?: string;
  /**
   * `--server-silent`: the shell's hook client sent this hook to the workspace's server, which
   * did not answer within its second (hung, or busy): not asked again, which would cost the hook
   * another second. The request id keys whatever the server did meanwhile.
   */
  serverSilent?: boolean;
}

/** Options of the hook's command line that are not the agent's words (`startsThisHook` leaves them out). */
const HANDED_ON = /^--(?:started-at=|request-id=|server-silent$)/;

/** argv: `<agent> <Event> [--root <dir>] [--started-at=<ms>] [--request-id=<id>] [--server-silent]`. */
export function parseHookArgs(argv: readonly string[]): HookArgs {
  const positional: string[] = [];
  let root = process.env.BATON_ROOT || undefined;
  let startedAt: number | undefined;
  let requestId: string | undefined;
  let serverSilent = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === "--root") root = argv[++i];
    else if (a.startsWith("--root=")) root = a.slice(7);
    else if (a.startsWith("--started-at=")) {
      const t = Number(a.slice(13));
      const now = Date.now();
      if (Number.isSafeInteger(t) && t <= now && t >= now - 60_000) startedAt = t;
    } else if (a.startsWith("--request-id=")) {
      const id = a.slice(13);
      if (/^[A-Za-z0-9_-]{8,80}$/.test(id)) requestId = id;
    } else if (a === "--server-silent") serverSilent = true;
    else if (!a.startsWith("-")) positional.push(a);
  }
  return {
    agent: positional[0],
    native: positional[1] ?? "",
    root,
    ...(startedAt !== undefined ? { startedAt } : {}),
    ...(requestId !== undefined ? { requestId } : {}),
    ...(serverSilent ? { serverSilent } : {}),
  };
}

/** The payload on stdin; "" when there is none (a manual run). */
export function readStdin(): string {
  try {
    return readFileSync(0, "utf8");
  } catch {
    return "";
  }
}

/**
 * The payload as the adapter's neutral event; throws on a payload that is not JSON. What the
 * adapter needs beyond the payload (Codex's session transcript) is read here, in the edge.
 */
export function parseEvent(adapter: AgentAdapter, native: string, text: string, cwd: string): HookEvent {
  const parsed: unknown = text.trim() ? JSON.parse(text) : {};
  const problem = jsonBoundsProblem(parsed);
  if (problem) throw new SyntaxError(`the hook payload: ${problem}`);
  const payload = parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  return adapter.parse(native, payload, cwd, { codexCallOutcome });
}

/**
 * The hook's workspace: the explicit root (if it is one), else the one at or above `cwd` where
 * this agent session's hooks record (`ev`: its mark), else the nearest. A session that follows a
 * `/clear` (a new id in the same agent process) also takes the one the process's sessions started
 * in: only then, since one process (a plugin's relay, an app server) may serve several projects.
 * None when a relative root or cwd cannot be resolved (the working directory was removed).
 */
export function workspaceFor(
  root: string | undefined,
  cwd: string,
  ev?: HookEvent,
  pidOfAgent: () => number = agentPid,
): Workspace | undefined {
  try {
    if (!root) {
      if (ev === undefined) return findWorkspace(cwd);
      const cleared = ev.kind === "session_start" && ev.source === "clear";
      return findWorkspace(cwd, [agentSessionMark(ev.agent, ev.agentSessionId), cleared ? agentProcessMark(pidOfAgent()) : undefined]);
    }
    const ws = workspaceAt(root);
    return findWorkspace(ws.root)?.root === ws.root ? ws : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The agent's process: the first ancestor that is not there only to start this hook. Skipped: a
 * shell the agent ran the hook command in (`sh -c …`, gone a moment later) and a launcher whose
 * command line ends with this hook's own words (`npm exec agent-baton hook claude PreToolUse`
 * under npx, a Volta shim, a wrapper script without `exec`, `timeout 30 baton hook …`): a run
 * that named one of those would be found dead after the hook and marked crashed. Linux only
 * (/proc); elsewhere the parent.
 */
let agentPidFound: number | undefined;

export function agentPid(): number {
  agentPidFound ??= findAgentPid(
    process.ppid,
    process.argv.slice(2).filter((a) => !HANDED_ON.test(a)),
  );
  return agentPidFound;
}

/** Exported for tests: `from` is where the walk starts, `words` this hook's arguments (`hook claude PreToolUse`). */
export function findAgentPid(from: number, words: readonly string[]): number {
  const own = words.join(" ");
  let pid = from;
  for (let i = 0; i < 8; i++) {
    const stat = readProcStat(pid);
    if (!stat || !Number.isSafeInteger(stat.ppid) || stat.ppid <= 1) return pid;
    if (!SHELLS.has(stat.comm) && !startsThisHook(pid, own)) return pid;
    pid = stat.ppid;
  }
  return pid;
}

function startsThisHook(pid: number, own: string): boolean {
  if (own === "") return false;
  const line = readProcArgs(pid)
    ?.argv.filter((a) => a !== "")
    .join(" ");
  return line !== undefined && (line === own || line.endsWith(` ${own}`));
}

/** A request id, unique enough within one workspace (no node:crypto on the hook's path). */
export function newRequestId(): string {
  return `${process.pid.toString(36)}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 12)}`;
}

/**
 * When this hook's steps that must precede the agent's next action (the checkpoint before a
 * tool, a rollback from a prompt) must be committed by: the agent's timeout for the hook,
 * counted from this process's start (or from `startedAt`), less a margin. The timeout is the one `baton hooks
 * install` writes, or BATON_HOOK_TIMEOUT_MS for hooks whose timeout was changed by hand.
 */
export function hookDeadline(adapter: AgentAdapter, native: string, startedAt?: number, env: NodeJS.ProcessEnv = process.env): number {
  const set = Number(env.BATON_HOOK_TIMEOUT_MS);
  const timeout = Number.isFinite(set) && set > 0 ? set : adapter.timeoutMs(native);
  // The process's start from its uptime: the `performance` global would load perf_hooks (~1.5 ms).
  // A relay (relay.ts) counts from when it received the call instead.
  const started = startedAt ?? Date.now() - process.uptime() * 1000;
  return Math.round(started + timeout - Math.min(DEADLINE_MARGIN_MS, timeout / 4));
}

/** What the hook process prints for an answer: the answer and a newline, or nothing. */
export function stdoutOf(out: string): string {
  return out ? `${out}\n` : "";
}

/** With BATON_HOOK_DEBUG set: say on stderr how the hook was answered (agents show a hook's stderr only in their debug views). */
export function debugLine(text: string): void {
  if (!process.env.BATON_HOOK_DEBUG) return;
  try {
    writeSync(2, `baton hook: ${text}\n`);
  } catch {
    // nowhere to say it
  }
}

/** Append a failure to the workspace's hook log. Never throws. */
export async function logHookFailure(batonDir: string, agent: string, event: string, err: unknown): Promise<void> {
  try {
    const { appendHookFailure } = await import("../platform/hook-log.js");
    appendHookFailure(batonDir, { agent, event, error: err });
  } catch {
    // nothing more to do: the agent goes on
  }
}

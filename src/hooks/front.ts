/**
 * The front of a hook process, shared by both ways of answering it: the hand-off to a running
 * server (entry.ts, dist/hook.cjs) and the in-process path (run.ts). It reads the command line
 * and the payload and decides what the hook is about, without opening the workspace: the
 * agent's adapter, the neutral event, and the workspace it belongs to.
 *
 * Kept small on purpose: dist/hook.cjs is this, the adapters and the server client, loaded on
 * every tool call (docs/benchmarks.md, "Agent hooks").
 */
import { readFileSync } from "node:fs";
import { jsonBoundsProblem } from "../core/canonical.js";
import { readProcStat } from "../services/process-facts.js";
import { findWorkspace, type Workspace, workspaceAt } from "../services/workspace.js";
import { claude } from "./claude.js";
import { codex } from "./codex.js";
import { gemini } from "./gemini.js";
import type { AgentAdapter, HookEvent } from "./types.js";

const ADAPTERS: Record<string, AgentAdapter> = { claude, codex, gemini };
const SHELLS = new Set(["sh", "bash", "dash", "zsh", "fish", "ksh", "mksh", "ash"]);

export function adapterFor(agent: string | undefined): AgentAdapter | undefined {
  return agent === undefined ? undefined : ADAPTERS[agent.toLowerCase()];
}

export interface HookArgs {
  /** The agent named on the command line (`claude`), as given. */
  agent: string | undefined;
  /** The event named on the command line (`PreToolUse`); "" when none was given. */
  native: string;
  /** `--root` or BATON_ROOT. */
  root: string | undefined;
}

/** argv: `<agent> <Event> [--root <dir>]`. */
export function parseHookArgs(argv: readonly string[]): HookArgs {
  const positional: string[] = [];
  let root = process.env.BATON_ROOT || undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === "--root") root = argv[++i];
    else if (a.startsWith("--root=")) root = a.slice(7);
    else if (!a.startsWith("-")) positional.push(a);
  }
  return { agent: positional[0], native: positional[1] ?? "", root };
}

/** The payload on stdin; "" when there is none (a manual run). */
export function readStdin(): string {
  try {
    return readFileSync(0, "utf8");
  } catch {
    return "";
  }
}

/** The payload as the adapter's neutral event; throws on a payload that is not JSON. */
export function parseEvent(adapter: AgentAdapter, native: string, text: string, cwd: string): HookEvent {
  const parsed: unknown = text.trim() ? JSON.parse(text) : {};
  const problem = jsonBoundsProblem(parsed);
  if (problem) throw new SyntaxError(`the hook payload: ${problem}`);
  const payload = parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  return adapter.parse(native, payload, cwd);
}

/** The hook's workspace: the explicit root (if it is one), else the nearest at or above `cwd`. */
export function workspaceFor(root: string | undefined, cwd: string): Workspace | undefined {
  if (!root) return findWorkspace(cwd);
  const ws = workspaceAt(root);
  return findWorkspace(ws.root)?.root === ws.root ? ws : undefined;
}

/**
 * The agent's process: this process's parent, or, when that is a shell the agent ran the hook
 * command in (`sh -c …`, gone a moment later), the shell's parent. Linux only (/proc); elsewhere
 * the parent.
 */
export function agentPid(): number {
  let pid = process.ppid;
  for (let i = 0; i < 4; i++) {
    const stat = readProcStat(pid);
    if (!stat || !SHELLS.has(stat.comm) || !Number.isSafeInteger(stat.ppid) || stat.ppid <= 1) return pid;
    pid = stat.ppid;
  }
  return pid;
}

/** What the hook process prints for an answer: the answer and a newline, or nothing. */
export function stdoutOf(out: string): string {
  return out ? `${out}\n` : "";
}

/** Append a failure to the workspace's hook log. Never throws. */
export async function logHookFailure(batonDir: string, agent: string, event: string, err: unknown): Promise<void> {
  try {
    const { appendHookFailure } = await import("../services/hook-log.js");
    appendHookFailure(batonDir, { agent, event, error: err });
  } catch {
    // nothing more to do: the agent goes on
  }
}

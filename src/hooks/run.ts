/**
 * `baton hook <claude|codex|gemini> <Event>`: the process an agent starts on each hook. Reads
 * the agent's JSON from stdin, answers on stdout in the agent's own format, exits 0.
 *
 * It fails open: anything Baton cannot do (a broken workspace, a corrupt or locked database, an
 * unexpected payload) is logged to `.baton/logs/hooks.log` (the doctor reports it) and answered
 * with the agent's "continue" form, so Baton never stands between the agent and its tool. The
 * only refusal is a deliberate one: a spiral pause denying an edit.
 *
 * Start-up is the budget (the agent waits for this process on every tool call; see
 * docs/benchmarks.md "hooks"): reached from the fast path in cli/entry.ts without commander,
 * stdin read with readFileSync(0) (no streams), output written to the file descriptor, and the
 * Baton facade and handler imported only once there is a workspace to act on.
 */
import { readFileSync } from "node:fs";
import type { Baton } from "../baton.js";
import { writeStderr, writeStdout } from "../cli/output.js";
import { findWorkspace, type Workspace, workspaceAt } from "../services/workspace.js";
import { claude } from "./claude.js";
import { codex } from "./codex.js";
import { gemini } from "./gemini.js";
import { type AgentAdapter, type HookEvent, isNoop } from "./types.js";

const ADAPTERS: Record<string, AgentAdapter> = { claude, codex, gemini };
/** How long a hook waits for another process's write lock before giving up (and failing open). */
const HOOK_BUSY_TIMEOUT_MS = 5_000;
const SHELLS = new Set(["sh", "bash", "dash", "zsh", "fish", "ksh", "mksh", "ash"]);

export function adapterFor(agent: string | undefined): AgentAdapter | undefined {
  return agent === undefined ? undefined : ADAPTERS[agent.toLowerCase()];
}

/**
 * The agent's process: this process's parent, or, when that is a shell the agent ran the hook
 * command in (`sh -c …`, gone a moment later), the shell's parent. Linux only (/proc); elsewhere
 * the parent.
 */
export function agentPid(): number {
  let pid = process.ppid;
  for (let i = 0; i < 4; i++) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    } catch {
      return pid;
    }
    const close = stat.lastIndexOf(")");
    const comm = stat.slice(stat.indexOf("(") + 1, close);
    const parent = Number(stat.slice(close + 2).split(" ")[1]);
    if (!SHELLS.has(comm) || !Number.isSafeInteger(parent) || parent <= 1) return pid;
    pid = parent;
  }
  return pid;
}

function workspaceFor(root: string | undefined, cwd: string): Workspace | undefined {
  if (!root) return findWorkspace(cwd);
  const ws = workspaceAt(root);
  return findWorkspace(ws.root)?.root === ws.root ? ws : undefined;
}

async function logFailure(batonDir: string, agent: string, event: string, err: unknown): Promise<void> {
  try {
    const { appendHookFailure } = await import("../services/hook-log.js");
    appendHookFailure(batonDir, { agent, event, error: err });
  } catch {
    // nothing more to do: the agent goes on
  }
}

/**
 * argv: `<agent> <Event> [--root <dir>]`. Never throws; the exit code is always 0. With `exit`
 * (the CLI) the process exits as soon as the answer is written.
 */
export async function runHook(argv: readonly string[], { exit = false }: { exit?: boolean } = {}): Promise<void> {
  process.exitCode = 0;
  const positional: string[] = [];
  let root = process.env.BATON_ROOT || undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === "--root") root = argv[++i];
    else if (a.startsWith("--root=")) root = a.slice(7);
    else if (!a.startsWith("-")) positional.push(a);
  }
  const adapter = adapterFor(positional[0]);
  if (!adapter) {
    writeStderr(`baton hook: unknown agent "${positional[0] ?? ""}"; use claude, codex or gemini\n`);
    return;
  }
  const native = positional[1] ?? "";
  let out = adapter.passThrough(native);
  let ev: HookEvent;
  try {
    let text = "";
    try {
      text = readFileSync(0, "utf8");
    } catch {
      // no stdin (a manual run): an empty payload
    }
    const parsed: unknown = text.trim() ? JSON.parse(text) : {};
    const payload = parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
    ev = adapter.parse(native, payload, process.cwd());
  } catch (err) {
    // A payload we cannot read: log where we can, let the agent go on.
    const here = workspaceFor(root, process.cwd());
    if (here) await logFailure(here.dir, adapter.agent, native, err);
    return writeOut(out);
  }
  if (isNoop(ev)) return writeOut(out);
  const ws = workspaceFor(root, ev.cwd);
  if (!ws) return writeOut(out); // not a Baton project: nothing to record

  let baton: Baton | undefined;
  try {
    const [{ openBaton }, { handleHook }] = await Promise.all([import("../baton.js"), import("./handler.js")]);
    baton = await openBaton({
      root: ws.root,
      create: false,
      busyTimeoutMs: HOOK_BUSY_TIMEOUT_MS,
      ...(process.env.BATON_SYNCHRONOUS === "NORMAL" || process.env.BATON_SYNCHRONOUS === "OFF"
        ? { synchronous: process.env.BATON_SYNCHRONOUS }
        : {}),
    });
    const response = await handleHook(baton, ev, { label: adapter.label, contextLimit: adapter.contextLimit, agentPid: agentPid() });
    out = adapter.render(ev, response);
  } catch (err) {
    await logFailure(ws.dir, adapter.agent, native, err);
    out = adapter.passThrough(native);
  }
  writeOut(out);
  if (exit) {
    // Every write above is committed (and fsynced): exit without closing SQLite. Closing the last
    // connection checkpoints the WAL into the database and deletes it (two fsyncs), and the next
    // hook process recreates it (two more): ~10-15 ms of each hook on the benchmark machine.
    // The WAL stays valid for the next process, and SQLite's auto-checkpoint keeps it bounded.
    process.exit(0);
  }
  try {
    await baton?.close();
  } catch (err) {
    await logFailure(ws.dir, adapter.agent, native, err);
  }
}

function writeOut(out: string): void {
  try {
    if (out) writeStdout(`${out}\n`);
  } catch {
    // the agent closed the pipe
  }
}

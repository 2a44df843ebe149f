/**
 * Cline CLI's hook contract, read from the pinned CLI (`cline` 3.0.65, whose agent runtime is
 * @cline/core 0.0.86: `hooks/hook-file-config`, `hooks/hook-file-hooks`, `hooks/subprocess`) and
 * checked against payloads captured from it (test/fixtures/agents/cline/):
 *
 * - Configuration: one executable per hook type, named `<Type>` or `<Type>.<ext>` (`.sh`, `.js`,
 *   `.py` …), in `<workspace>/.clinerules/hooks/`, `<workspace>/.cline/hooks/`,
 *   `$CLINE_DIR/hooks/` (default `~/.cline/hooks/`) and `~/Documents/Cline/Hooks/`. Every file of
 *   a type runs (a user's `PreToolUse` beside Baton's `PreToolUse.sh`), by its shebang, else by
 *   its extension (no extension: bash). There is no switch that turns them off (`cline -y`
 *   runs them too). PreCompact is a type it lists but never fires.
 * - stdin: `taskId` (the run's conversation, `conv_…`), `sessionContext.rootSessionId` (the
 *   session `cline history` lists and `--id` resumes), `workspaceRoots`, `timestamp` (ISO),
 *   `hookName` (agent_start, tool_call …), `agent_id` and `parent_agent_id` (set inside a
 *   subagent). TaskStart/TaskResume `taskStart`/`taskResume`; UserPromptSubmit
 *   `userPromptSubmit.prompt`; PreToolUse `tool_call: {id, name, input}`; PostToolUse
 *   `tool_result: {id, name, input, output, error?}`; TaskComplete `turn.outputText`.
 * - Tools: `editor` (`path`; creates a missing file or replaces `old_text`), `apply_patch` (GPT
 *   models, instead of editor: the patch in `input`), `run_commands` (`commands`, a list);
 *   `read_files`, `search_codebase`, `fetch_web_content` read. A command that exits non-zero is
 *   a `run_commands` result whose entry has `success: false` and `error` (the call itself
 *   "succeeds").
 * - stdout: JSON (or the last `HOOK_CONTROL\t<json>` line). Only PreToolUse and PostToolUse are
 *   awaited: `{"cancel": true, "errorMessage": "…"}` from PreToolUse stops the whole run before
 *   the call (the model is not asked again), `{"contextModification": "…"}` is appended to the
 *   model's context. TaskStart, TaskResume, UserPromptSubmit, TaskComplete, TaskCancel,
 *   TaskError and SessionShutdown run detached, their output ignored (Cline CLI's own
 *   `blockingRunStartHooks` is off). `cline "…"` (act mode, headless) and a prompt over ACP
 *   (`cline --acp`) fire no UserPromptSubmit; `cline -y` fires it only for its own follow-up
 *   messages. A cancelled task (ACP's `session/cancel`, Baton's cancel; SIGINT when the hook
 *   starts before the process ends) fires SessionShutdown, not TaskCancel; a task whose model
 *   requests fail fires TaskError (`error`).
 * - Headless, a session takes further prompts only over ACP: each is a run (TaskStart …
 *   TaskComplete) with the same `taskId` and `rootSessionId`, so the same lane.
 */

import { shellQuote } from "../shell.js";
import { patchFiles } from "./apply-patch.js";
import { clipContext } from "./claude.js";
import type { HookGroupSpec } from "./config.js";
import {
  type AgentAdapter,
  type HookEvent,
  type HookResponse,
  obj,
  type PayloadReader,
  parsePayload,
  str,
  type ToolCall,
} from "./types.js";

const CONTEXT_LIMIT = 50_000;
/** Cline CLI waits this long for a hook file it awaits (its `toolCallTimeoutMs` default). */
const TIMEOUT_MS = 120_000;
const WRITE_TOOLS = new Set(["editor"]);
const SHELL_TOOLS = new Set(["run_commands"]);

/** The hook types Baton installs, each one file (PreCompact is never fired by Cline CLI 3.0). */
export const CLINE_HOOK_TYPES = [
  "TaskStart",
  "TaskResume",
  "UserPromptSubmit",
  "PreToolUse",
  "PostToolUse",
  "TaskComplete",
  "TaskCancel",
  "TaskError",
  "SessionShutdown",
] as const;

/**
 * What a hook file committed with the project runs before Baton: on a teammate's machine without
 * `baton` on PATH the hook does nothing (exit 0, no output) instead of failing every call.
 */
export const CLINE_PATH_GUARD = "command -v baton >/dev/null 2>&1 || exit 0";

function call(p: Record<string, unknown>): Record<string, unknown> {
  return obj(p.tool_call ?? p.tool_result);
}

/**
 * The commands of a `run_commands` call as one shell text, in every shape Cline CLI's input
 * schema takes (@cline/core 0.0.86): `{commands}` as a list or one string, `{cmd}` or
 * `{command}` likewise, or the input itself as a string or a list; each entry a command line or
 * `{command, args}` (a program run without a shell: quoted here as a shell would need). The
 * guard reads this text for Baton commands, so no shape Cline runs may read as none.
 */
function commandsOf(input: unknown): string | undefined {
  const one = (x: unknown): string | undefined => {
    if (typeof x === "string") return x;
    const o = obj(x);
    const program = str(o.command) ?? str(o.cmd);
    if (program === undefined) return undefined;
    const args = Array.isArray(o.args) ? o.args.map((a) => shellQuote(String(a))) : [];
    return [shellQuote(program), ...args].join(" ");
  };
  const list = (v: unknown): string[] | undefined => {
    if (typeof v === "string") return [v];
    if (Array.isArray(v)) return v.map(one).filter((c): c is string => c !== undefined);
    return undefined;
  };
  const a = obj(input);
  const lines =
    list(input) ?? list(a.commands) ?? list(a.cmd) ?? list(a.command) ?? (one(a) !== undefined ? [one(a) as string] : undefined);
  return lines && lines.length > 0 ? lines.join("\n") : undefined;
}

function toolCall(p: Record<string, unknown>): ToolCall {
  const c = call(p);
  const name = str(c.name) ?? "unknown";
  const input = c.input ?? {};
  const args = obj(input);
  const callId = str(c.id);
  const base = { name, input, ...(callId ? { callId } : {}) };
  if (WRITE_TOOLS.has(name)) {
    const file = str(args.path);
    return { ...base, kind: "write", files: file ? [file] : [] };
  }
  if (name === "apply_patch") {
    const patch = typeof input === "string" ? input : str(args.input);
    return { ...base, kind: "write", ...patchFiles(patch) };
  }
  if (SHELL_TOOLS.has(name)) {
    const command = commandsOf(input);
    return { ...base, kind: "shell", files: [], ...(command !== undefined ? { command } : {}) };
  }
  return { ...base, kind: "other", files: [] };
}

/** The failure a PostToolUse reports: the call's `error`, else a command (or result entry) with `success: false`. */
function failure(p: Record<string, unknown>): string | undefined {
  const r = obj(p.tool_result);
  const error = str(r.error);
  if (error !== undefined) return error.slice(0, 2_000);
  const entries = Array.isArray(r.output) ? r.output : [r.output];
  const failed = entries.map(obj).filter((e) => e.success === false);
  if (failed.length === 0) return undefined;
  return failed
    .map((e) => [str(e.query), str(e.result), str(e.error)].filter((x) => x !== undefined && x !== "").join("\n"))
    .join("\n")
    .slice(0, 2_000);
}

const READER: PayloadReader = {
  agent: "cline",
  events: {
    TaskStart: "session_start",
    TaskResume: "session_start",
    UserPromptSubmit: "prompt",
    PreToolUse: "before_tool",
    PostToolUse: "after_tool",
    TaskComplete: "stop",
    TaskCancel: "stop",
    TaskError: "stop",
    SessionShutdown: "session_end",
  },
  toolCall,
  failure,
  output: (p) => obj(p.tool_result).output,
};

/**
 * Cline CLI's payloads in the shape parsePayload reads: the session (what `--id` resumes) as the
 * agent's session id, else the task; `agent_id` only inside a subagent (the main agent sends its
 * own too); the workspace root as cwd.
 */
function normalised(native: string, p: Record<string, unknown>): Record<string, unknown> {
  const { agent_id: agentId, ...rest } = p;
  const session = str(obj(p.sessionContext).rootSessionId) ?? str(p.taskId);
  const roots = Array.isArray(p.workspaceRoots) ? p.workspaceRoots : [];
  const cwd = typeof roots[0] === "string" ? roots[0] : undefined;
  const sub = typeof p.parent_agent_id === "string" && p.parent_agent_id !== "" ? str(agentId) : undefined;
  return {
    ...rest,
    ...(session !== undefined ? { session_id: session } : {}),
    ...(cwd !== undefined ? { cwd } : {}),
    ...(sub !== undefined ? { agent_id: sub } : {}),
    ...(native === "TaskResume" ? { source: "resume" } : native === "TaskStart" ? { source: "startup" } : {}),
    prompt: str(obj(p.userPromptSubmit).prompt),
  };
}

function render(event: HookEvent, r: HookResponse): string {
  if (event.kind === "before_tool" && r.deny) return JSON.stringify({ cancel: true, errorMessage: r.deny.reason });
  if (r.context && (event.kind === "before_tool" || event.kind === "after_tool"))
    return JSON.stringify({ contextModification: clipContext(r.context, CONTEXT_LIMIT) });
  return "";
}

export const cline: AgentAdapter = {
  agent: "cline",
  label: "Cline CLI",
  contextLimit: CONTEXT_LIMIT,

  parse: (native, p, cwd, io) => parsePayload(READER, native, normalised(native, p), cwd, io),

  render,

  timeoutMs: () => TIMEOUT_MS,

  passThrough() {
    return "";
  },

  hookSpecs(command) {
    return CLINE_HOOK_TYPES.map(
      (event): HookGroupSpec => ({ event, handler: { type: "command", command: `${command} hook cline ${event}` } }),
    );
  },
};

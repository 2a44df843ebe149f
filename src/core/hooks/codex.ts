/**
 * Codex's hook contract (https://developers.openai.com/codex/hooks; the wire schemas are
 * openai/codex `codex-rs/hooks/schema/generated/*.command.{input,output}.schema.json`). It
 * follows Claude Code's envelope:
 *
 * - stdin: `session_id`, `cwd`, `hook_event_name`, `model`, `turn_id`, … SessionStart has
 *   `source` (startup | resume | clear | compact), UserPromptSubmit `prompt`, PreToolUse and
 *   PostToolUse `tool_name`, `tool_input`, `tool_use_id` (PostToolUse also `tool_response`),
 *   PreCompact and PostCompact `trigger` (manual | auto); SessionEnd `reason` (since 0.145).
 * - PostToolUse's `tool_response` for a shell call is the bare output, without its exit code:
 *   whether it failed is read from the session transcript (`transcript_path`).
 * - Shell tools arrive as `tool_name: "Bash"` with `tool_input.command`; file edits as
 *   `apply_patch`, whose raw patch body is `tool_input.command` (openai/codex#18391).
 * - stdout: `hookSpecificOutput.additionalContext` (SessionStart, UserPromptSubmit,
 *   PostToolUse), `hookSpecificOutput.permissionDecision: "deny"` + `permissionDecisionReason`
 *   (PreToolUse), `systemMessage` for the user.
 */
import { isPatch, patchFiles } from "./apply-patch.js";
import { CLAUDE_EVENTS, renderClaudeStyle } from "./claude.js";
import { hookGroup } from "./config.js";
import { type AgentAdapter, obj, type PayloadIO, parsePayload, str, type ToolCall, toolBase } from "./types.js";

const CONTEXT_LIMIT = 10_000;
const TIMEOUT_S = 60;
const SESSION_END_TIMEOUT_S = 3;
const SHELL_TOOLS = new Set(["Bash", "shell", "exec", "exec_command", "local_shell", "unified_exec", "container.exec"]);

/** The patch body of an apply_patch call, whichever field carries it. */
function patchText(args: Record<string, unknown>, input: unknown): string | undefined {
  if (typeof input === "string") return input;
  return str(args.command) ?? str(args.patch) ?? str(args.input);
}

function commandText(args: Record<string, unknown>): string | undefined {
  const c = args.command ?? args.cmd;
  if (typeof c === "string") return c;
  if (Array.isArray(c) && c.every((x) => typeof x === "string")) return c.join(" ");
  return undefined;
}

function toolCall(p: Record<string, unknown>): ToolCall {
  const { base, args } = toolBase(p);
  const { name, input } = base;
  if (name === "apply_patch") {
    const patch = patchText(args, input);
    return { ...base, kind: "write", ...patchFiles(patch) };
  }
  if (SHELL_TOOLS.has(name)) {
    const command = commandText(args);
    // Older builds run apply_patch through the shell tool: still a write of known files.
    if (command !== undefined && isPatch(command)) return { ...base, kind: "write", ...patchFiles(command), command };
    return { ...base, kind: "shell", files: [], ...(command !== undefined ? { command } : {}) };
  }
  return { ...base, kind: "other", files: [] };
}

/** Codex reports a tool's result as text or an object; a non-zero exit or an error field is a failure. */
export function codexFailure(response: unknown): string | undefined {
  if (typeof response === "string") {
    const m = /^(?:Exit code|exit_code|Process exited with code):?\s*(-?\d+)/im.exec(response);
    return m && m[1] !== "0" ? response.slice(0, 2_000) : undefined;
  }
  const r = obj(response);
  const code = r.exit_code ?? r.exitCode;
  if (typeof code === "number" && code !== 0) return str(r.stderr) || str(r.output) || `exit code ${code}`;
  if (r.success === false) return str(r.error) || str(r.output) || "the tool call failed";
  const err = r.error;
  if (typeof err === "string" && err) return err;
  if (err && typeof err === "object") return str(obj(err).message) ?? JSON.stringify(err);
  return undefined;
}

/**
 * A shell or apply_patch call's failure: Codex sends the output alone, so the exit code comes
 * from the session transcript, which the edge reads (hooks/codex-transcript.ts).
 */
function callFailure(p: Record<string, unknown>, io: PayloadIO): string | undefined {
  const name = str(p.tool_name) ?? "";
  if (!SHELL_TOOLS.has(name) && name !== "apply_patch") return undefined;
  const outcome = io.codexCallOutcome?.(p.transcript_path, p.tool_use_id);
  if (!outcome) return undefined;
  const failed = (outcome.exitCode !== undefined && outcome.exitCode !== 0) || outcome.status === "failed";
  if (!failed) return undefined;
  const output = (str(p.tool_response) ?? "").trim().slice(0, 2_000);
  const code = outcome.exitCode !== undefined ? `exit code ${outcome.exitCode}` : "failed";
  return output ? `${output}\n(${code})` : code;
}

/** Claude Code's event names; a failed call comes as PostToolUse (there is no PostToolUseFailure). */
const { PostToolUseFailure: _failure, ...CODEX_EVENTS } = CLAUDE_EVENTS;

export const codex: AgentAdapter = {
  agent: "codex",
  label: "Codex",
  contextLimit: CONTEXT_LIMIT,

  parse: (native, p, cwd, io) =>
    parsePayload(
      {
        agent: "codex",
        events: CODEX_EVENTS,
        toolCall,
        failure: (q, pio) => codexFailure(q.tool_response) ?? callFailure(q, pio),
      },
      native,
      p,
      cwd,
      io,
    ),

  render(event, r) {
    return renderClaudeStyle(event, r, CONTEXT_LIMIT);
  },

  timeoutMs: (native) => (native === "SessionEnd" ? SESSION_END_TIMEOUT_S : TIMEOUT_S) * 1000,

  passThrough() {
    return "";
  },

  hookSpecs(command) {
    // Codex clamps SessionEnd's timeout to 3 s (and warns about a longer one).
    const h = hookGroup(command, "codex", (event) => ({ timeout: event === "SessionEnd" ? SESSION_END_TIMEOUT_S : TIMEOUT_S }));
    return [
      h("SessionStart"),
      h("UserPromptSubmit"),
      h("PreToolUse", "apply_patch|Bash|shell|exec|exec_command|local_shell"),
      h("PostToolUse"),
      h("PreCompact"),
      h("PostCompact"),
      h("Stop"),
      h("SessionEnd"),
    ];
  },
};

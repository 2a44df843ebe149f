/**
 * Qwen Code's hook contract, read from the pinned CLI (@qwen-code/qwen-code 0.24, its bundle's
 * `packages/core/src/hooks/`: hookEventHandler.ts, hookRunner.ts, hook-timeout.ts, types.ts) and
 * checked against captured payloads (test/fixtures/agents/qwen/). It is Claude Code's, with
 * Qwen Code's own tool names:
 *
 * - stdin: `session_id`, `transcript_path`, `cwd`, `hook_event_name`, `timestamp`,
 *   `permission_mode`, and `agent_id` in the hooks fired inside a subagent. SessionStart has
 *   `source` (startup | resume | clear | compact; `compact` after a compaction), UserPromptSubmit
 *   `prompt` (also fired, empty, for each request that returns tool results: ignored),
 *   PreToolUse / PostToolUse / PostToolUseFailure `tool_name`, `tool_input`,
 *   `tool_use_id` (PostToolUse also `tool_response`: `{llmContent, returnDisplay}`;
 *   PostToolUseFailure `error`), PreCompact `trigger` (manual | auto; once a compaction is
 *   attempted, which may still fail), PostCompact `trigger` (after one that succeeded), Stop, or
 *   StopFailure (`error`) for a turn an API error or the CLI's loop detection ended, SessionEnd
 *   `reason` (the interactive CLI only: `qwen -p` ends without it).
 * - A shell command that exits non-zero is a failed call: PostToolUseFailure, whose `error` is
 *   the command's result text (`Command: …`, `Output: …`, `Exit Code: 1`, …).
 * - Tools: `write_file` and `edit` (`file_path`), `notebook_edit` (`notebook_path`),
 *   `run_shell_command` (`command`).
 * - stdout: Claude Code's envelope. `hookSpecificOutput.permissionDecision: "deny"` with
 *   `permissionDecisionReason` refuses a PreToolUse call (the reason is the tool's error for the
 *   model); `hookSpecificOutput.additionalContext` reaches the model on SessionStart (in the
 *   system instruction), UserPromptSubmit (after the prompt), PreToolUse, PostToolUse and
 *   PostToolUseFailure (beside the result), with `<` and `>` escaped; `systemMessage` is shown
 *   to the user. No output lets everything proceed.
 * - `timeout` is in seconds (0.24 reads a value of 1000 or more as the old milliseconds).
 */

import { CLAUDE_EVENTS, renderClaudeStyle } from "./claude.js";
import { hookGroup } from "./config.js";
import { type AgentAdapter, type HookEvent, type NeutralKind, obj, parsePayload, str, type ToolCall, toolBase } from "./types.js";

const CONTEXT_LIMIT = 10_000;
/** Seconds (Qwen Code's unit since 0.24). A first whole-tree checkpoint of a large repository reads every file. */
const TIMEOUT_S = 60;
const WRITE_TOOLS = new Set(["write_file", "edit", "notebook_edit"]);
const SHELL_TOOLS = new Set(["run_shell_command"]);

function toolCall(p: Record<string, unknown>): ToolCall {
  const { base, args } = toolBase(p);
  const { name } = base;
  if (WRITE_TOOLS.has(name)) {
    const file = str(args.file_path) ?? str(args.notebook_path);
    return { ...base, kind: "write", files: file ? [file] : [] };
  }
  if (SHELL_TOOLS.has(name)) {
    const command = str(args.command);
    return { ...base, kind: "shell", files: [], ...(command !== undefined ? { command } : {}) };
  }
  return { ...base, kind: "other", files: [] };
}

/**
 * Claude Code's event names, and StopFailure: a turn that an API error or Qwen Code's own loop
 * detection ended fires it instead of Stop (after the CLI has exited, in headless runs), and it
 * ends the turn's run the same way.
 */
const QWEN_EVENTS: Readonly<Record<string, NeutralKind>> = Object.freeze({ ...CLAUDE_EVENTS, StopFailure: "stop" });

/**
 * Qwen Code fires UserPromptSubmit for every request of a turn, the ones that carry tool results
 * back with `prompt: ""`: only one with words is the user's (it also has `submitted_prompt`).
 */
function userPromptsOnly(ev: HookEvent): HookEvent {
  if (ev.kind !== "prompt" || ev.prompt.trim() !== "") return ev;
  const { prompt: _, kind: __, ...base } = ev;
  return { ...base, kind: "ignored" };
}

export const qwen: AgentAdapter = {
  agent: "qwen",
  label: "Qwen Code",
  contextLimit: CONTEXT_LIMIT,

  parse: (native, p, cwd, io) =>
    userPromptsOnly(
      parsePayload(
        {
          agent: "qwen",
          events: QWEN_EVENTS,
          toolCall,
          // What the model sees of a call's result (`returnDisplay` is the terminal's view of it).
          output: (q) => obj(q.tool_response).llmContent ?? q.tool_response,
        },
        native,
        p,
        cwd,
        io,
      ),
    ),

  render(event, r) {
    return renderClaudeStyle(event, r, CONTEXT_LIMIT);
  },

  timeoutMs: () => TIMEOUT_S * 1000,

  passThrough() {
    return "";
  },

  hookSpecs(command) {
    const h = hookGroup(command, "qwen", () => ({ timeout: TIMEOUT_S }));
    return [
      h("SessionStart"),
      h("UserPromptSubmit"),
      h("PreToolUse", "write_file|edit|notebook_edit|run_shell_command"),
      h("PostToolUse"),
      h("PostToolUseFailure"),
      h("PreCompact"),
      h("PostCompact"),
      h("Stop"),
      h("StopFailure"),
      h("SessionEnd"),
    ];
  },
};

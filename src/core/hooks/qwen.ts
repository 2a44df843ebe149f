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

import { claudeStyleAdapter } from "./claude.js";
import { type AgentAdapter, type HookEvent, obj } from "./types.js";

/**
 * Qwen Code fires UserPromptSubmit for every request of a turn, the ones that carry tool results
 * back with `prompt: ""`: only one with words is the user's (it also has `submitted_prompt`).
 */
function userPromptsOnly(ev: HookEvent): HookEvent {
  if (ev.kind !== "prompt" || ev.prompt.trim() !== "") return ev;
  const { prompt: _, kind: __, ...base } = ev;
  return { ...base, kind: "ignored" };
}

/**
 * A failed shell command's result names its process group (`Process Group PGID: 41234`, or
 * `(none)` once the group is gone) and background processes: bookkeeping of the moment, not
 * the failure, and it differs from one run of the same failing command to the next, which would
 * make one failure look like two (fingerprints, the spiral detector, lessons).
 */
function withoutProcessBookkeeping(ev: HookEvent): HookEvent {
  if (ev.kind !== "after_tool" || ev.error === undefined) return ev;
  const error = ev.error.replace(/^(?:Process Group PGID|Background PIDs):.*(?:\r?\n|$)/gm, "").trimEnd();
  return error === ev.error ? ev : { ...ev, error };
}

export const qwen: AgentAdapter = claudeStyleAdapter({
  agent: "qwen",
  label: "Qwen Code",
  writeTools: ["write_file", "edit", "notebook_edit"],
  shellTools: ["run_shell_command"],
  // What the model sees of a call's result (`returnDisplay` is the terminal's view of it).
  output: (q) => obj(q.tool_response).llmContent ?? q.tool_response,
  refine: (ev) => withoutProcessBookkeeping(userPromptsOnly(ev)),
});

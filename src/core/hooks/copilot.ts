/**
 * GitHub Copilot CLI's hook contract, read from the pinned CLI (@github/copilot 1.0.102: its
 * `copilot help config`, `help environment`, changelog.json, and the hook runner's behaviour) and
 * checked against payloads captured from it (test/fixtures/agents/copilot/):
 *
 * - Configuration: `.github/hooks/*.json` at the repository's root (the project's; loaded only
 *   in a trusted folder) and `$COPILOT_HOME/hooks/*.json` (the user's), each
 *   `{"version": 1, "hooks": {"<event>": [{"type": "command", "bash": "…", "timeoutSec": N}]}}`.
 * - stdin (camelCase event names): `sessionId`, `timestamp` (ms since the epoch), `cwd`, and the
 *   event's fields. sessionStart `source` (new | resume | startup) and `initialPrompt`;
 *   userPromptSubmitted `prompt`; preToolUse `toolName`, `toolArgs` (an object); postToolUse
 *   `toolResult: {resultType, textResultForLlm}`; postToolUseFailure (a tool that threw, e.g.
 *   an edit of a missing file) `error`; preCompact `trigger` (manual | auto) and
 *   `transcriptPath`, fired only when a compaction starts, and nothing after it; agentStop
 *   `stopReason` (each turn ends); sessionEnd `reason` (`complete`: `copilot -p` fires it once
 *   per run). No call id: `timestamp` tells one invocation of an identical call from the next.
 * - A shell command that exits non-zero is a postToolUse like any other; its
 *   `textResultForLlm` ends `<shellId: N completed with exit code C>` (N counts the session's
 *   shells, so it differs on every run of the same command).
 * - Tools: `create` and `edit` (`path`), `bash` (`command`); `view`, `grep`, `glob` read. For
 *   the GPT-5 models it offers `apply_patch` (freeform) instead of create and edit: `toolArgs` is
 *   then the patch itself, a string.
 * - stdout, flat: `{"permissionDecision": "deny", "permissionDecisionReason": "…"}` refuses a
 *   preToolUse call (the model reads `Denied by preToolUse hook: <reason>` as its result);
 *   `additionalContext` reaches the model from sessionStart (a user message before the first
 *   prompt), userPromptSubmitted (a `<system_reminder>` after the prompt), preToolUse (a user
 *   message after the result), postToolUse and postToolUseFailure (after the result). No output
 *   lets everything proceed. A preToolUse hook that fails (exit 127: `baton` missing) DENIES the
 *   call: see COPILOT_PATH_GUARD.
 * - A subagent's hooks (the `task` tool) carry its own `sessionId` and `agentId`, with
 *   `agentType` and `parentAgentId`: see subagentOf.
 */

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

const CONTEXT_LIMIT = 10_000;
/** Seconds (`timeoutSec`). A first whole-tree checkpoint of a large repository reads every file. */
const TIMEOUT_S = 60;
const WRITE_TOOLS = new Set(["create", "edit"]);
// `write_bash` sends input to a running shell, `powershell` is the shell on Windows: both run
// anything a command can.
const SHELL_TOOLS = new Set(["bash", "write_bash", "powershell"]);

/**
 * What a hook in a committed file runs before Baton: Copilot CLI denies every tool call whose
 * preToolUse hook fails, so on a teammate's machine without Baton on PATH the hooks do nothing
 * (exit 0) instead of blocking the agent.
 */
export const COPILOT_PATH_GUARD = "command -v baton >/dev/null 2>&1 || exit 0; ";

function toolCall(p: Record<string, unknown>): ToolCall {
  const name = str(p.toolName) ?? "unknown";
  const raw = p.toolArgs ?? {};
  // toolArgs may come as the JSON text of the arguments; only apply_patch's is the patch itself.
  const input = typeof raw === "string" && name !== "apply_patch" ? parseArgs(raw) : raw;
  const args = obj(input);
  const base = { name, input };
  if (WRITE_TOOLS.has(name)) {
    const file = str(args.path);
    return { ...base, kind: "write", files: file ? [file] : [] };
  }
  if (name === "apply_patch") {
    const patch = typeof input === "string" ? input : (str(args.input) ?? str(args.patch));
    return { ...base, kind: "write", ...patchFiles(patch) };
  }
  if (SHELL_TOOLS.has(name)) {
    const command = str(args.command) ?? str(args.input);
    return { ...base, kind: "shell", files: [], ...(command !== undefined ? { command } : {}) };
  }
  return { ...base, kind: "other", files: [] };
}

function parseArgs(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { text };
  }
}

const SHELL_END = /\n?<shellId: [^>\s]+ completed with exit code (-?\d+)>\s*$/;

/** What the model sees of a result, without the shell's running number (the same command gives the same text). */
function output(p: Record<string, unknown>): unknown {
  const r = obj(p.toolResult);
  const text = str(r.textResultForLlm);
  if (text === undefined) return p.toolResult;
  return text.replace(SHELL_END, (_, code: string) => `\n<completed with exit code ${code}>`);
}

/**
 * A tool result's `resultType` is `success`, `failure`, `timeout`, `denied` or `rejected` (its
 * SDK's ToolResultType). Since 1.0 postToolUse follows only successful calls (its changelog), but
 * a call refused by a hook (Baton's own spiral pause among them) or by the user never ran: were
 * one reported, it is neither a failure (each refusal would feed the spiral it answers) nor a
 * success to record, so it is ignored.
 */
const REFUSED = new Set(["denied", "rejected"]);

function refused(p: Record<string, unknown>): boolean {
  const type = str(obj(p.toolResult).resultType);
  return type !== undefined && REFUSED.has(type);
}

function failure(p: Record<string, unknown>): string | undefined {
  const r = obj(p.toolResult);
  const type = str(r.resultType);
  const text = str(r.textResultForLlm) ?? "";
  if (type !== undefined && type !== "success") return (text || `the tool call ended: ${type}`).slice(0, 2_000);
  const code = SHELL_END.exec(text)?.[1];
  if (code === undefined || code === "0") return undefined;
  return `${text.replace(SHELL_END, "").slice(0, 2_000)}\nExit Code: ${code}`;
}

const READER: PayloadReader = {
  agent: "copilot",
  events: {
    sessionStart: "session_start",
    userPromptSubmitted: "prompt",
    preToolUse: "before_tool",
    postToolUse: "after_tool",
    postToolUseFailure: "after_tool_failure",
    preCompact: "pre_compact",
    agentStop: "stop",
    sessionEnd: "session_end",
  },
  toolCall,
  failure,
  output,
};

/**
 * Copilot CLI's payloads in the shape parsePayload reads: its camelCase fields, its sources
 * (`new` is a new session), its millisecond timestamp as the send time.
 */
function normalised(p: Record<string, unknown>): Record<string, unknown> {
  const source = str(p.source);
  const at = typeof p.timestamp === "number" ? String(p.timestamp) : str(p.timestamp);
  const sub = subagentOf(p);
  return {
    ...p,
    session_id: sub ? sub.parent : p.sessionId,
    ...(sub ? { agent_id: sub.id } : {}),
    ...(at !== undefined ? { timestamp: at } : {}),
    ...(source !== undefined ? { source: source === "new" ? "startup" : source } : {}),
  };
}

/**
 * A subagent (its `task` tool) runs as an agent session of its own, and its hooks say so:
 * `agentId` (its session id), `agentType` and `parentAgentId` (the session that started it).
 * Its calls go to its parent's lane family, as Claude Code's subagents' do.
 */
function subagentOf(p: Record<string, unknown>): { parent: string; id: string } | undefined {
  const parent = str(p.parentAgentId);
  const id = str(p.agentId) ?? str(p.sessionId);
  return parent !== undefined && parent !== "" && id !== undefined && id !== "" && id !== parent ? { parent, id } : undefined;
}

/**
 * What a subagent's hooks are beside its tool calls: its userPromptSubmitted is the instruction
 * its parent gave it ("undo that" there is no user asking for a rollback), its agentStop the end
 * of its own work, not of the parent's turn: nothing for Baton.
 */
function subagentEvent(ev: HookEvent): HookEvent {
  if (ev.subagentId === undefined || ev.kind === "before_tool" || ev.kind === "after_tool") return ev;
  return { agent: ev.agent, native: ev.native, cwd: ev.cwd, kind: "ignored" };
}

/** Copilot CLI sends nothing after a compaction, and fires preCompact only for one that starts. */
function announced(ev: HookEvent): HookEvent {
  return ev.kind === "pre_compact" ? { ...ev, announced: true } : ev;
}

function render(event: HookEvent, r: HookResponse): string {
  if (event.kind === "before_tool" && r.deny)
    return JSON.stringify({ permissionDecision: "deny", permissionDecisionReason: r.deny.reason });
  if (
    r.context &&
    (event.kind === "session_start" || event.kind === "prompt" || event.kind === "before_tool" || event.kind === "after_tool")
  )
    return JSON.stringify({ additionalContext: clipContext(r.context, CONTEXT_LIMIT) });
  return "";
}

export const copilot: AgentAdapter = {
  agent: "copilot",
  label: "Copilot CLI",
  contextLimit: CONTEXT_LIMIT,

  parse: (native, p, cwd, io) => {
    const ev = subagentEvent(announced(parsePayload(READER, native, normalised(p), cwd, io)));
    return ev.kind === "after_tool" && refused(p) ? { agent: ev.agent, native: ev.native, cwd: ev.cwd, kind: "ignored" } : ev;
  },

  render,

  timeoutMs: () => TIMEOUT_S * 1000,

  passThrough() {
    return "";
  },

  hookSpecs(command) {
    // A committed file runs `baton` from PATH: guarded, so a machine without it is not blocked.
    const guard = command === "baton" ? COPILOT_PATH_GUARD : "";
    const h = (event: string, matcher?: string): HookGroupSpec => ({
      event,
      flat: true,
      ...(matcher !== undefined ? { matcher } : {}),
      handler: { type: "command", command: `${guard}${command} hook copilot ${event}`, timeoutSec: TIMEOUT_S },
    });
    return [
      h("sessionStart"),
      h("userPromptSubmitted"),
      // A matcher must match the whole tool name: reads and searches start no process.
      h("preToolUse", "create|edit|apply_patch|bash|write_bash|powershell"),
      h("postToolUse"),
      h("postToolUseFailure"),
      h("preCompact"),
      h("agentStop"),
      h("sessionEnd"),
    ];
  },
};

/**
 * OpenCode's side of Baton's hooks. OpenCode (opencode-ai 1.18.33) runs no hook commands: it
 * loads in-process plugins (JS/TS modules in `.opencode/plugins/` or
 * `$XDG_CONFIG_HOME/opencode/plugins/`, or npm packages named in opencode.json "plugin"). Baton's
 * plugin (hooks/opencode-plugin.ts writes it) turns the plugin hooks below into `baton hook
 * opencode <event>` with a JSON payload on stdin, exactly as the other agents' command hooks do,
 * and turns the answer (this file's `render`: `{"deny": …, "context": …}`) into what OpenCode
 * lets a plugin do. The contract, read from @opencode-ai/plugin 1.18.33 (`Hooks`) and runs of
 * the pinned CLI (payloads in test/fixtures/agents/opencode/):
 *
 * - `tool.execute.before` (input `{tool, sessionID, callID}`, output `{args}`): a plugin that
 *   throws refuses the call, and the model reads the error's message as the tool's result. Tools:
 *   `write`, `edit` (`filePath`), `apply_patch` (`patchText`, for GPT models), `bash` (`command`);
 *   `read`, `glob`, `grep`, `list`, `task` … do not write.
 * - `tool.execute.after` (input with `args`, output `{title, output, metadata}`): fired for a call
 *   that returned; `bash` reports its exit code in `metadata.exit`. The plugin may change
 *   `output.output`: Baton's context for the call is appended to the result the model reads. A
 *   call that threw (an edit whose old text is not there) fires no after hook: the plugin sees it
 *   as a tool part in the `error` state (`message.part.updated`) and sends `tool.execute.error`.
 * - `chat.message` (input `{sessionID, messageID, agent, model}`, output `{message, parts}`): the
 *   user's message before it is saved. Parts the plugin adds (a synthetic text part) are saved
 *   with it and reach the model: Baton's session context and prompt answers go there.
 * - Sessions: the `event` hook sees `session.created` (`info.parentID` for a subagent's child
 *   session), `session.idle` (the turn ended), `session.compacted`; the plugin sends
 *   `session.created` with `source` "startup" for a session OpenCode announced, "resume" for one
 *   it first meets at a prompt (`opencode run --session`), "compact" after `session.compacted`
 *   (whose context the plugin adds to the system prompt until the next prompt).
 *   `experimental.session.compacting` fires before a compaction. `dispose` (OpenCode shuts the
 *   project's instance down: `opencode run` ends) ends every session the plugin saw.
 * - Every payload: `session_id` (OpenCode's `sessionID`; a subagent's child session sends its
 *   top session's, and its own as `agent_id`: a lane below its parent's), `cwd` (the plugin's
 *   directory).
 */

import { patchFiles } from "./apply-patch.js";
import { clipContext } from "./claude.js";
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
/** How long the plugin waits for one `baton hook` process (a first checkpoint of a large tree reads every file). */
const TIMEOUT_MS = 60_000;
const WRITE_TOOLS = new Set(["write", "edit", "multiedit"]);

/** The plugin's event names, each one OpenCode's hook or event it comes from. */
/**
 * The first line of every plugin Baton writes, and of the one the npm package ships
 * (plugins/opencode/baton.js): the write-tool guard knows the plugin by it, wherever it is.
 */
export const OPENCODE_PLUGIN_MARK = "// Baton's OpenCode plugin, written by `baton hooks install opencode` (agent-baton).";

export const OPENCODE_EVENTS = [
  "session.created",
  "chat.message",
  "tool.execute.before",
  "tool.execute.after",
  "tool.execute.error",
  "experimental.session.compacting",
  "session.compacted",
  "session.idle",
  "dispose",
] as const;

function toolCall(p: Record<string, unknown>): ToolCall {
  const name = str(p.tool) ?? "unknown";
  const input = p.args ?? {};
  const args = obj(input);
  const callId = str(p.call_id);
  const base = { name, input, ...(callId ? { callId } : {}) };
  if (WRITE_TOOLS.has(name)) {
    const file = str(args.filePath);
    return { ...base, kind: "write", files: file ? [file] : [] };
  }
  if (name === "apply_patch" || name === "patch") {
    const patch = str(args.patchText);
    return { ...base, kind: "write", ...patchFiles(patch) };
  }
  if (name === "bash") {
    const command = str(args.command);
    return { ...base, kind: "shell", files: [], ...(command !== undefined ? { command } : {}) };
  }
  return { ...base, kind: "other", files: [] };
}

/** A shell command that exited non-zero (`metadata.exit`): its output and code. */
function failure(p: Record<string, unknown>): string | undefined {
  const exit = obj(p.metadata).exit;
  if (typeof exit !== "number" || exit === 0) return undefined;
  const text = str(p.output) ?? "";
  return `${text.slice(0, 2_000)}\nExit Code: ${exit}`;
}

const READER: PayloadReader = {
  agent: "opencode",
  events: {
    "session.created": "session_start",
    "chat.message": "prompt",
    "tool.execute.before": "before_tool",
    "tool.execute.after": "after_tool",
    "tool.execute.error": "after_tool_failure",
    "experimental.session.compacting": "pre_compact",
    "session.compacted": "post_compact",
    "session.idle": "stop",
    dispose: "session_end",
  },
  toolCall,
  failure,
  output: (p) => p.output,
};

/**
 * `opencode run "undo that"` sends the prompt `"undo that"`: it quotes each of its message
 * arguments that holds a space. The user's words are what is inside.
 */
function unquoted(p: Record<string, unknown>): Record<string, unknown> {
  const prompt = str(p.prompt);
  const m = prompt === undefined ? null : /^"([^"]*)"$/.exec(prompt.trim());
  return m ? { ...p, prompt: m[1] } : p;
}

function render(event: HookEvent, r: HookResponse): string {
  if (event.kind === "before_tool" && r.deny) return JSON.stringify({ deny: r.deny.reason });
  if (
    r.context &&
    (event.kind === "session_start" || event.kind === "prompt" || event.kind === "before_tool" || event.kind === "after_tool")
  )
    return JSON.stringify({ context: clipContext(r.context, CONTEXT_LIMIT) });
  return "";
}

export const opencode: AgentAdapter = {
  agent: "opencode",
  label: "OpenCode",
  contextLimit: CONTEXT_LIMIT,

  parse: (native, p, cwd, io) => parsePayload(READER, native, unquoted(p), cwd, io),

  render,

  timeoutMs: () => TIMEOUT_MS,

  passThrough() {
    return "";
  },

  /** The plugin's events, for status; the plugin file itself is what install writes (hooks/opencode-plugin.ts). */
  hookSpecs(command) {
    return OPENCODE_EVENTS.map((event) => ({ event, handler: { type: "command" as const, command: `${command} hook opencode ${event}` } }));
  },
};

/**
 * Gemini CLI's hook contract (https://geminicli.com/docs/hooks/reference; google-gemini/gemini-cli
 * `docs/hooks/reference.md`): JSON on stdin with `session_id`, `cwd`, `hook_event_name`,
 * `timestamp` and the event's fields; only the final JSON on stdout, exit 0.
 *
 * - SessionStart (`source`: startup | resume | clear): `hookSpecificOutput.additionalContext`.
 * - BeforeAgent (`prompt`): `hookSpecificOutput.additionalContext` is appended to the prompt.
 * - BeforeTool (`tool_name`, `tool_input`): `decision: "deny"` with `reason` (sent to the
 *   model as the tool's error) refuses the call. Tools: `write_file` and `replace`
 *   (`file_path`), `run_shell_command` (`command`).
 * - AfterTool (`tool_response`: `{llmContent, returnDisplay, error?}`):
 *   `hookSpecificOutput.additionalContext` is appended to the result. A shell command that
 *   exits non-zero has no `error`: its `llmContent` ends with `Exit Code: N`.
 * - PreCompress (`trigger`: manual | auto; "auto" before every model request, whether or not
 *   it compresses, and matchers match the trigger exactly), AfterAgent (each turn ends),
 *   SessionEnd (`reason`).
 * - `systemMessage` is shown to the user; `{}` lets everything proceed.
 */

import { clipContext } from "./claude.js";
import { hookGroup } from "./config.js";
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
/** Milliseconds (Gemini CLI's unit). */
const TIMEOUT_MS = 60_000;
const WRITE_TOOLS = new Set(["write_file", "replace"]);
const SHELL_TOOLS = new Set(["run_shell_command"]);

function toolCall(p: Record<string, unknown>): ToolCall {
  const name = str(p.tool_name) ?? "unknown";
  const input = p.tool_input ?? {};
  const args = obj(input);
  const base = { name, input };
  if (WRITE_TOOLS.has(name)) {
    const file = str(args.file_path) ?? str(args.absolute_path) ?? str(args.path);
    return { ...base, kind: "write", files: file ? [file] : [] };
  }
  if (SHELL_TOOLS.has(name)) {
    const command = str(args.command);
    return { ...base, kind: "shell", files: [], ...(command !== undefined ? { command } : {}) };
  }
  return { ...base, kind: "other", files: [] };
}

/** The text of `llmContent`: a string, a part, or a list of parts. */
function contentText(v: unknown): string {
  if (typeof v === "string") return v;
  if (Array.isArray(v)) return v.map(contentText).join("\n");
  return str(obj(v).text) ?? "";
}

/**
 * `run_shell_command` reports how a command ended in its result text, not as an error. Gemini CLI
 * 0.61 (`packages/core/src/tools/shell.ts`) builds it as `Output: <output>`, then one line each,
 * only when it applies, `Error: …`, `Exit Code: <n>` (non-zero), `Signal: <signal>`,
 * `Background PIDs: …`, `Process Group PGID: <pid>`, and wraps it in
 * `<untrusted_context>\n…\n</untrusted_context>`; a command cancelled (by the user, or its
 * timeout) reads `Command was … cancelled …` instead. The output itself may end with a line like
 * `Exit Code: 1`: when `returnDisplay` is the output (a plain string, as in headless runs) the
 * trailer is exactly what follows it; otherwise the trailer lines are read from the end.
 */
const TRAILER =
  /^((?:\nError: [^\n]*)?)(?:\nExit Code: (-?\d+|\(none\)))?(?:\nSignal: ([^\n]+))?(?:\nBackground PIDs: [^\n]*)?(?:\nProcess Group PGID: [^\n]*)?$/;
const TRAILER_LINES =
  /((?:\nError: [^\n]*)?)(?:\nExit Code: (-?\d+|\(none\)))?(?:\nSignal: ([^\n]+))?(?:\nBackground PIDs: [^\n]*)?(?:\nProcess Group PGID: [^\n]*)?$/;
const CANCELLED = /^Command was (?:automatically cancelled because it exceeded the timeout|cancelled by user)/;

function unwrap(text: string): string {
  const m = /^\s*<untrusted_context>\n([\s\S]*)\n<\/untrusted_context>\s*$/.exec(text);
  return m ? (m[1] as string) : text;
}

function shellFailure(text: string, display: unknown): string | undefined {
  const body = unwrap(text);
  if (CANCELLED.test(body)) return body.slice(0, 2_000);
  if (!body.startsWith("Output: ")) return undefined;
  const output = typeof display === "string" && body.startsWith(`Output: ${display}\n`) ? display : undefined;
  const m = output !== undefined ? TRAILER.exec(body.slice(`Output: ${output}`.length)) : TRAILER_LINES.exec(body);
  if (!m) return undefined;
  const [trailer, error, code, signal] = m as unknown as [string, string, string | undefined, string | undefined];
  if (!error && (code === undefined || code === "0" || code === "(none)") && signal === undefined) return undefined;
  // Without the process-group and background lines (a new pid each run would change the
  // failure's fingerprint, and the spiral detector looks for the same failure).
  const head = output !== undefined ? `Output: ${output}` : body.slice(0, body.length - trailer.length);
  const tail = [error.trim(), code !== undefined ? `Exit Code: ${code}` : "", signal !== undefined ? `Signal: ${signal}` : ""];
  return [head, ...tail]
    .filter((l) => l !== "")
    .join("\n")
    .trim()
    .slice(-2_000);
}

function failure(response: unknown): string | undefined {
  const r = obj(response);
  const err = r.error;
  if (typeof err === "string" && err) return err;
  if (err && typeof err === "object") return str(obj(err).message) ?? JSON.stringify(err);
  return shellFailure(contentText(r.llmContent), r.returnDisplay);
}

function render(event: HookEvent, r: HookResponse): string {
  const out: Record<string, unknown> = {};
  if (r.userMessage) out.systemMessage = r.userMessage;
  if (event.kind === "before_tool" && r.deny) {
    out.decision = "deny";
    out.reason = r.deny.reason;
  } else if (r.context && (event.kind === "session_start" || event.kind === "prompt" || event.kind === "after_tool")) {
    out.hookSpecificOutput = { hookEventName: event.native, additionalContext: clipContext(r.context, CONTEXT_LIMIT) };
  }
  return JSON.stringify(out);
}

const READER: PayloadReader = {
  agent: "gemini",
  events: {
    SessionStart: "session_start",
    BeforeAgent: "prompt",
    BeforeTool: "before_tool",
    AfterTool: "after_tool",
    PreCompress: "pre_compact",
    AfterAgent: "stop",
    SessionEnd: "session_end",
  },
  toolCall,
  failure: (q) => failure(q.tool_response),
  output: (q) => obj(q.tool_response).llmContent ?? q.tool_response,
};

/**
 * Gemini CLI 0.61 fires PreCompress (trigger "auto") before every model request, before it
 * decides whether to compress, and sends nothing afterwards; so "auto" may or may not be a
 * compaction: it keeps STATE.md current (written only when the journal changed since) and notes
 * nothing. "manual" (/compress) is one that follows: STATE.md and the journal's note.
 */
function preCompress(ev: HookEvent): HookEvent {
  if (ev.kind !== "pre_compact") return ev;
  return ev.trigger === "manual" ? { ...ev, announced: true } : { ...ev, ifChanged: true };
}

export const gemini: AgentAdapter = {
  agent: "gemini",
  label: "Gemini CLI",
  contextLimit: CONTEXT_LIMIT,

  parse: (native, p, cwd, io) => preCompress(parsePayload(READER, native, p, cwd, io)),

  render,

  timeoutMs: () => TIMEOUT_MS,

  passThrough() {
    return "{}";
  },

  hookSpecs(command) {
    const h = hookGroup(command, "gemini", (event) => ({
      name: `baton-${event.replace(/[A-Z]/g, (c, i: number) => (i ? "-" : "") + c.toLowerCase())}`,
      timeout: TIMEOUT_MS,
      description: "Baton: durable session state, checkpoints and rollback",
    }));
    return [
      h("SessionStart"),
      h("BeforeAgent"),
      h("BeforeTool", "write_file|replace|run_shell_command"),
      h("AfterTool", "*"),
      // Both triggers: "manual" is a compaction; "auto" fires before every model request and
      // only keeps STATE.md current (see preCompress).
      h("PreCompress"),
      h("AfterAgent"),
      h("SessionEnd"),
    ];
  },
};

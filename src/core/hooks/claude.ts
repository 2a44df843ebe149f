/**
 * Claude Code's hook contract (https://code.claude.com/docs/en/hooks): JSON on stdin with
 * `session_id`, `cwd`, `hook_event_name` and the event's fields; JSON on stdout with exit 0.
 *
 * - SessionStart (`source`: startup | resume | clear | compact), UserPromptSubmit (`prompt`),
 *   PostToolUse, PostToolUseFailure: `hookSpecificOutput.additionalContext` goes to the model
 *   (at most 10,000 characters); `systemMessage` is shown to the user.
 * - PreToolUse (`tool_name`, `tool_input`, `tool_use_id`): `hookSpecificOutput.permissionDecision:
 *   "deny"` with `permissionDecisionReason` refuses the call and tells the model why; without a
 *   decision, `additionalContext` reaches the model beside the tool's result (2.1.9+; Codex takes
 *   it the same way, and rejects a plain "allow").
 * - PostToolUse has `tool_response`; PostToolUseFailure has `error` (and `is_interrupt`).
 * - PreCompact and PostCompact (`trigger`: manual | auto), Stop (each response ends) or
 *   StopFailure (`error`; a turn an API error ended), SessionEnd (`reason`). SubagentStop is not installed: a subagent's tool calls already reach
 *   Pre/PostToolUse with the parent's session id, and its end is not the session's.
 * - Exit 0 with no output lets everything proceed; that is Baton's answer when it fails.
 */
import { type HookAgent, type HookGroupSpec, hookGroup, nativeHookPath } from "./config.js";
import {
  type AgentAdapter,
  type HookEvent,
  type HookResponse,
  type NeutralKind,
  type PayloadReader,
  parsePayload,
  str,
  type ToolCall,
  toolBase,
} from "./types.js";

export const CLAUDE_CONTEXT_LIMIT = 10_000;
/** Seconds (Claude Code's unit). A first whole-tree checkpoint of a large repository reads every file. */
const TIMEOUT_S = 60;
/** Claude Code's first version with PreSkillShellCommand. */
const SKILL_SHELL_SINCE = "2.1.332";

/** An agent that speaks Claude Code's hook contract with its own tool and event names (Qwen Code). */
export interface ClaudeStyle {
  agent: HookAgent;
  label: string;
  /** Tools that write the file named by `file_path` (or `notebook_path`). */
  writeTools: readonly string[];
  /** Tools that run `command` in a shell. */
  shellTools: readonly string[];
  /** Event names beyond Claude Code's. */
  events?: Readonly<Record<string, NeutralKind>>;
  /** What the model sees of a call's result. Default: `tool_response`. */
  output?: PayloadReader["output"];
  /** A last look at a parsed event (e.g. to ignore one the agent fires for its own reasons). */
  refine?: (ev: HookEvent) => HookEvent;
  /**
   * The event fired before a shell command that a skill's or a custom command's own text runs
   * (Claude Code 2.1.332+: PreSkillShellCommand, with `tool_name`, `tool_input.command` and
   * `tool_use_id` as PreToolUse has them): read as a shell tool's before-hook, installed after
   * PreToolUse with the shell tools' matcher. No after-hook follows it.
   */
  skillShellEvent?: string;
}

/** An adapter for an agent of Claude Code's hook contract. */
export function claudeStyleAdapter(s: ClaudeStyle): AgentAdapter {
  const writes = new Set(s.writeTools);
  const shells = new Set(s.shellTools);
  const toolCall = (p: Record<string, unknown>): ToolCall => {
    const { base, args } = toolBase(p);
    const { name } = base;
    if (writes.has(name)) {
      const file = str(args.file_path) ?? str(args.notebook_path);
      return { ...base, kind: "write", files: file ? [file] : [] };
    }
    if (shells.has(name)) {
      const command = str(args.command);
      return { ...base, kind: "shell", files: [], ...(command !== undefined ? { command } : {}) };
    }
    return { ...base, kind: "other", files: [] };
  };
  const reader: PayloadReader = {
    agent: s.agent,
    events: Object.freeze({
      ...CLAUDE_EVENTS,
      ...STOP_FAILURE,
      ...s.events,
      ...(s.skillShellEvent ? { [s.skillShellEvent]: "before_tool" as const } : {}),
    }),
    toolCall,
    ...(s.output ? { output: s.output } : {}),
  };
  const refine = s.refine ?? ((ev: HookEvent) => ev);
  // One command run's shell lines (`<run id>:preamble-<n>`) all wait for every hook, then run
  // together: one checkpoint before them, under the run's id, not one per line.
  const oneRun = (ev: HookEvent): HookEvent =>
    ev.kind === "before_tool" && ev.native === s.skillShellEvent && ev.tool.callId !== undefined
      ? { ...ev, tool: { ...ev.tool, callId: ev.tool.callId.replace(/:preamble-\d+$/, "") } }
      : ev;
  const matcher = [...s.writeTools, ...s.shellTools].join("|");
  return {
    agent: s.agent,
    label: s.label,
    contextLimit: CLAUDE_CONTEXT_LIMIT,
    parse: (native, p, cwd, io) => withTranscript(oneRun(refine(parsePayload(reader, native, p, cwd, io))), p),
    render: (event, r) => renderClaudeStyle(event, r, CLAUDE_CONTEXT_LIMIT),
    timeoutMs: () => TIMEOUT_S * 1000,
    passThrough: () => "",
    hookSpecs(command) {
      const h = hookGroup(command, s.agent, () => ({ timeout: TIMEOUT_S }));
      return CLAUDE_STYLE_HOOKS.flatMap((e) => {
        if (e !== "PreToolUse") return [h(e)];
        if (!s.skillShellEvent) return [h(e, matcher)];
        return [h(e, matcher), { ...h(s.skillShellEvent, s.shellTools.join("|")), since: SKILL_SHELL_SINCE }];
      });
    },
  };
}

/** A prompt, stop or before-tool event with the session's transcript, when the payload names one (absolute, `.jsonl`). */
function withTranscript(ev: HookEvent, p: Record<string, unknown>): HookEvent {
  const t = p.transcript_path;
  const kinds = ev.kind === "prompt" || ev.kind === "stop" || ev.kind === "before_tool";
  if (!kinds || typeof t !== "string" || !t.startsWith("/") || !t.endsWith(".jsonl")) return ev;
  return { ...ev, transcriptPath: t };
}

/** The envelope Claude Code and Codex share: hookSpecificOutput for context and deny, systemMessage for the user. */
export function renderClaudeStyle(event: HookEvent, r: HookResponse, limit: number): string {
  const out: Record<string, unknown> = {};
  if (r.userMessage) out.systemMessage = r.userMessage;
  if (event.kind === "before_tool" && r.deny) {
    out.hookSpecificOutput = {
      hookEventName: event.native,
      permissionDecision: "deny",
      permissionDecisionReason: r.deny.reason,
    };
  } else if (
    r.context &&
    (event.kind === "session_start" || event.kind === "prompt" || event.kind === "after_tool" || event.kind === "before_tool")
  ) {
    out.hookSpecificOutput = { hookEventName: event.native, additionalContext: clipContext(r.context, limit) };
  }
  return Object.keys(out).length > 0 ? JSON.stringify(out) : "";
}

export function clipContext(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit - 1)}…`;
}

/** Claude Code's event names (Codex uses the same, without PostToolUseFailure). */
export const CLAUDE_EVENTS: Readonly<Record<string, NeutralKind>> = Object.freeze({
  SessionStart: "session_start",
  UserPromptSubmit: "prompt",
  PreToolUse: "before_tool",
  PostToolUse: "after_tool",
  PostToolUseFailure: "after_tool_failure",
  PreCompact: "pre_compact",
  PostCompact: "post_compact",
  Stop: "stop",
  SessionEnd: "session_end",
});

/**
 * StopFailure: a turn an API error ended (Claude Code: `error`, `last_assistant_message`; Qwen
 * Code also when its own loop detection ends one) fires it instead of Stop. It ends the turn's run
 * the same way, or the lane would stay "working" with its claims. Not in CLAUDE_EVENTS, which
 * Codex shares and which has no such event.
 */
const STOP_FAILURE: Readonly<Record<string, NeutralKind>> = Object.freeze({ StopFailure: "stop" });

/** The hook events an agent of this contract gets, in order; PreToolUse is matched to its write and shell tools. */
const CLAUDE_STYLE_HOOKS: readonly string[] = [
  "SessionStart",
  "UserPromptSubmit",
  "PreToolUse",
  "PostToolUse",
  "PostToolUseFailure",
  "PreCompact",
  "PostCompact",
  "Stop",
  "StopFailure",
  "SessionEnd",
];

/**
 * The per-call events Claude Code sends over HTTP with `baton hooks install claude --http`: the
 * workspace's server answers them (server/native-hook-route.ts) without a process per call. The
 * others stay command hooks: Claude Code runs no HTTP hook on SessionStart, that hook starts the
 * server, and UserPromptSubmit and Stop report the calls whose HTTP hook got no answer.
 */
export const CLAUDE_HTTP_EVENTS: readonly string[] = Object.freeze(["PreToolUse", "PostToolUse", "PostToolUseFailure"]);

/** The workspace's server as Claude Code's HTTP hooks reach it. */
export interface HookServerAddress {
  port: number;
  token: string;
}

/** Claude Code's hooks with the per-call ones over HTTP to the server at `server` (the rest run `command`). */
export function claudeHttpHookSpecs(command: string, server: HookServerAddress): HookGroupSpec[] {
  return claude.hookSpecs(command).map((spec) =>
    CLAUDE_HTTP_EVENTS.includes(spec.event)
      ? {
          ...spec,
          handler: {
            type: "http",
            command: `http://127.0.0.1:${server.port}${nativeHookPath("claude", spec.event)}`,
            headers: { Authorization: `Bearer ${server.token}` },
            timeout: TIMEOUT_S,
          },
        }
      : spec,
  );
}

export const claude: AgentAdapter = claudeStyleAdapter({
  agent: "claude",
  label: "Claude Code",
  writeTools: ["Write", "Edit", "MultiEdit", "NotebookEdit"],
  shellTools: ["Bash"],
  // A skill's or custom command's `!`-line runs in a shell without a PreToolUse: a repository's
  // own `.claude/commands/*.md` can change files, or run `baton hooks uninstall`, that way.
  // Installed only for 2.1.332 or later (HookGroupSpec `since`).
  skillShellEvent: "PreSkillShellCommand",
});

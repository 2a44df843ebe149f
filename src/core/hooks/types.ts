/**
 * The neutral shape of agent hooks. Each agent's adapter (claude.ts, codex.ts, gemini.ts)
 * turns the agent's stdin JSON into a `HookEvent` and a `HookResponse` back into the agent's
 * own output; the use cases (services/agents/hooks.ts, `baton.agents.handle`) see only these
 * types. Pure: what an adapter needs from outside the payload (Codex's session transcript) is
 * read by the edge and handed in as `PayloadIO`.
 */
import type { HookAgent, HookGroupSpec } from "./config.js";

export type { HookAgent };

/** What a tool does to the workspace, as far as Baton needs to know before it runs. */
export type ToolKind = "write" | "shell" | "other";

export interface ToolCall {
  /** The agent's own tool name (`Edit`, `apply_patch`, `run_shell_command`). */
  name: string;
  kind: ToolKind;
  /** Files the call will write (write tools), as the agent gave them: absolute or relative to `cwd`. */
  files: string[];
  /**
   * Of `files`, those the call removes before it writes them, if it ever does (an apply_patch's
   * Delete, or the file a Move renames): a link among them is removed itself, so the file it
   * leads to is not written.
   */
  unlinked?: string[];
  /** The call's arguments as the agent sent them. */
  input: unknown;
  /** The shell command (shell tools). */
  command?: string;
  /** The agent's id for this call, when it gives one (pairs the before and after hooks). */
  callId?: string;
}

/** What an adapter needs from outside the payload, read by the edge (core does no I/O). */
export interface PayloadIO {
  /** How a Codex call ended, from the session transcript its payload names (hooks/codex-transcript.ts). */
  codexCallOutcome?(transcriptPath: unknown, callId: unknown): { status?: string; exitCode?: number } | undefined;
}

interface Base {
  agent: HookAgent;
  /** The event name the agent used (`PreToolUse`, `BeforeTool`). */
  native: string;
  /** The agent's session id, when it sends one. */
  agentSessionId?: string;
  /** A subagent's id, in the hooks fired inside it (Claude Code's `agent_id`): its own lane (core/lanes.ts). */
  subagentId?: string;
  /** The agent's working directory (from the payload, else the process's). */
  cwd: string;
  /**
   * The agent's session transcript (Claude Code's `transcript_path`), on prompt and stop events:
   * where the calls whose HTTP hook got no answer are found (services/agents/unanswered.ts); on
   * before-tool events: where its configuration folder is (services/agents/tools.ts).
   */
  transcriptPath?: string;
  /**
   * When the agent sent the hook, as it says (Gemini CLI's `timestamp`). Gemini CLI sends no
   * call id: this tells one invocation of an identical call from the next.
   */
  sentAt?: string;
}

export type SessionSource = "startup" | "resume" | "compact" | "clear";

export type HookEvent = Base &
  (
    | { kind: "session_start"; source: SessionSource }
    | { kind: "prompt"; prompt: string }
    | { kind: "before_tool"; tool: ToolCall }
    | { kind: "after_tool"; tool: ToolCall; status: "success" | "error"; error?: string; output?: unknown }
    /**
     * The agent is about to compact its context. `announced`: the agent sends no event after a
     * compaction, and this hook only fires when one follows (Gemini CLI's manual /compress).
     * `ifChanged`: the agent may be about to compact, or not (Gemini CLI's "auto", before every
     * model request): STATE.md is refreshed only when the journal changed, and nothing is noted.
     */
    | { kind: "pre_compact"; trigger?: string; announced?: boolean; ifChanged?: boolean }
    /** The agent compacted its context (Claude Code and Codex PostCompact). */
    | { kind: "post_compact"; trigger?: string }
    /**
     * The agent's turn ended (`sessionEnd: false`) or its session ended. `backgroundWork`: the
     * turn ended with a subagent the agent runs in the background still at work (Claude Code's
     * `background_tasks`), which goes on writing files and will wake the session again: its run
     * is not over.
     */
    | { kind: "stop"; sessionEnd: boolean; reason?: string; backgroundWork?: boolean }
    /** An event Baton does not act on (answered with the agent's "continue" form). */
    | { kind: "ignored" }
  );

export interface HookResponse {
  /** Text for the model's context (additionalContext). */
  context?: string;
  /** Text shown to the user (systemMessage). */
  userMessage?: string;
  /** Refuse the tool call: the reason goes to the model. Only a spiral pause does this. */
  deny?: { reason: string };
}

export interface AgentAdapter {
  agent: HookAgent;
  /** Shown in session titles and run records: "Claude Code", "Codex", "Gemini CLI". */
  label: string;
  /** The most context text the agent takes from one hook. */
  contextLimit: number;
  /** The agent's stdin JSON for `native` (the event named on the command line) as a neutral event. */
  parse(native: string, payload: Record<string, unknown>, cwd: string, io?: PayloadIO): HookEvent;
  /** The agent's stdout for a response; "" prints nothing. */
  render(event: HookEvent, response: HookResponse): string;
  /** What to print when Baton itself failed or has nothing to say: let the agent continue. */
  passThrough(native: string): string;
  /** The hook configuration the installer writes, with `command` as the launcher prefix. */
  hookSpecs(command: string): HookGroupSpec[];
  /** How long the agent waits for the hook of event `native` as installed (`hookSpecs`), in ms. */
  timeoutMs(native: string): number;
}

export const SESSION_SOURCES: readonly SessionSource[] = ["startup", "resume", "compact", "clear"];

/** What an agent's event name means; `after_tool_failure` is a separate failure event (Claude Code). */
export type NeutralKind =
  | "session_start"
  | "prompt"
  | "before_tool"
  | "after_tool"
  | "after_tool_failure"
  | "pre_compact"
  | "post_compact"
  | "stop"
  | "session_end";

/** How one agent's payloads read: its event names, its tool calls, and how it reports a failed tool. */
export interface PayloadReader {
  agent: HookAgent;
  events: Readonly<Record<string, NeutralKind>>;
  toolCall(p: Record<string, unknown>): ToolCall;
  /** The failure an after-tool payload reports, or undefined for a success. Default: none. */
  failure?(p: Record<string, unknown>, io: PayloadIO): string | undefined;
  /** The tool's output in an after-tool payload. Default: `tool_response`. */
  output?(p: Record<string, unknown>): unknown;
}

/** An agent's stdin JSON for `native` (the event named on the command line) as a neutral event. */
export function parsePayload(
  reader: PayloadReader,
  native: string,
  p: Record<string, unknown>,
  cwd: string,
  io: PayloadIO = {},
): HookEvent {
  const name = native || str(p.hook_event_name) || "";
  const agentSessionId = str(p.session_id);
  const subagentId = str(p.agent_id);
  const sentAt = str(p.timestamp);
  const base = {
    agent: reader.agent,
    native: name,
    cwd: str(p.cwd) ?? cwd,
    ...(agentSessionId ? { agentSessionId } : {}),
    ...(subagentId ? { subagentId } : {}),
    ...(sentAt ? { sentAt } : {}),
  };
  switch (reader.events[name]) {
    case "session_start": {
      // Claude Code's `fork` (`--resume <id> --fork-session`): a new agent session that carries
      // on an earlier conversation, which its context already holds: a resume, for Baton.
      const s = (p.source === "fork" ? "resume" : str(p.source)) as SessionSource | undefined;
      return { ...base, kind: "session_start", source: s && SESSION_SOURCES.includes(s) ? s : "startup" };
    }
    case "prompt":
      return { ...base, kind: "prompt", prompt: str(p.prompt) ?? "" };
    case "before_tool":
      return { ...base, kind: "before_tool", tool: reader.toolCall(p) };
    case "after_tool": {
      const output = reader.output ? reader.output(p) : p.tool_response;
      // Whether the call failed is worked out only where it is used (for Codex it reads the
      // session transcript): not by an event that turns out to have nothing to do.
      let failure: { error: string | undefined } | undefined;
      const error = () => {
        failure ??= { error: reader.failure?.(p, io) };
        return failure.error;
      };
      const ev = { ...base, kind: "after_tool", tool: reader.toolCall(p), output } as HookEvent & { kind: "after_tool" };
      return Object.defineProperties(ev, {
        status: { get: () => (error() !== undefined ? "error" : "success"), enumerable: true },
        error: { get: error, enumerable: true },
      });
    }
    case "after_tool_failure":
      return { ...base, kind: "after_tool", tool: reader.toolCall(p), status: "error", error: str(p.error) ?? "the tool call failed" };
    case "pre_compact":
    case "post_compact": {
      const trigger = str(p.trigger);
      return { ...base, kind: reader.events[name] as "pre_compact" | "post_compact", ...(trigger ? { trigger } : {}) };
    }
    case "stop": {
      const inFlight = Array.isArray(p.background_tasks) && p.background_tasks.some(isAgentAtWork);
      return { ...base, kind: "stop", sessionEnd: false, ...(inFlight ? { backgroundWork: true } : {}) };
    }
    case "session_end": {
      const reason = str(p.reason);
      return { ...base, kind: "stop", sessionEnd: true, ...(reason ? { reason } : {}) };
    }
    default:
      return { ...base, kind: "ignored" };
  }
}

/** The kinds of Claude Code's background tasks that are agents at work (its `background_tasks[].type`). */
const AGENT_TASKS: ReadonlySet<string> = new Set(["subagent", "workflow"]);
const DONE = /^(?:completed|failed|killed|cancell?ed|stopped|error)$/i;

/**
 * Whether an entry of a Stop's `background_tasks` is an agent still at work: Claude Code's
 * `{type: "subagent" | "workflow", status}`, Qwen Code's `{agent_type, status}` (no type). Not a
 * background shell: a dev server left running would keep the run open for hours.
 */
function isAgentAtWork(t: unknown): boolean {
  if (t === null || typeof t !== "object") return false;
  const e = t as { type?: unknown; agent_type?: unknown; status?: unknown };
  const agent = typeof e.type === "string" ? AGENT_TASKS.has(e.type) : typeof e.agent_type === "string" && e.agent_type !== "";
  return agent && !(typeof e.status === "string" && DONE.test(e.status));
}

/** Whether Baton has nothing to do for this event (so the workspace is not even opened). */
export function isNoop(ev: HookEvent): boolean {
  return (
    ev.kind === "ignored" ||
    (ev.kind === "before_tool" && (ev.tool.kind === "other" || (ev.tool.kind === "write" && ev.tool.files.length === 0)))
  );
}

/** A string field of an unknown payload. */
export function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

export function obj(v: unknown): Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/** What Claude Code and Codex send of every tool call (`tool_name`, `tool_input`, `tool_use_id`), and the input as an object. */
export function toolBase(p: Record<string, unknown>): {
  base: { name: string; input: unknown; callId?: string };
  args: Record<string, unknown>;
} {
  const name = str(p.tool_name) ?? "unknown";
  const input = p.tool_input ?? {};
  const callId = str(p.tool_use_id);
  return { base: { name, input, ...(callId ? { callId } : {}) }, args: obj(input) };
}

/** How one hook is answered (`baton.agents.handle`). */
export interface AgentHookOptions {
  /** The agent's process, the pid of the runs hooks start. Default: this process's parent. */
  agentPid?: number;
  /**
   * The key of this hook's prompt, session-start and compaction steps: made once by the hook
   * process and sent with every attempt, so a retried hook acts once. Default: a fresh one (a
   * repeat acts again). Tool hooks are keyed by the agent's call id.
   */
  requestId?: string;
  /**
   * Steps meant to precede the agent's next action (the checkpoint before a tool, a rollback
   * from a prompt) are cancelled rather than committed after this time (ms since the epoch).
   * Default: none.
   */
  deadline?: number;
}

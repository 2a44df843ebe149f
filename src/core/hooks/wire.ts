/**
 * A hook as the hook process hands it to the workspace's server (`POST /v1/hooks/:agent/:event`,
 * docs/http-api.md): the neutral event the process translated, with what the use case needs
 * from the process, and the neutral response back. Checked field by field here, so a request
 * from anything but a Baton hook process of this build changes nothing.
 */
import { HOOK_AGENT_LIST, HOOK_AGENTS, type HookAgent } from "./config.js";
import { type HookEvent, type HookResponse, SESSION_SOURCES, type SessionSource, type ToolCall, type ToolKind } from "./types.js";

/** What a hook process sends besides the event. */
export interface HookRequestFields {
  /** The hook's workspace root (absolute). */
  root: string;
  /** The agent's process, whose runs the hooks start. */
  agentPid: number;
  /** Made once by the hook process, sent with every attempt: the key of its prompt, session-start and compaction steps. */
  requestId: string;
  /** When a step meant to precede the agent's next action must be committed by (ms since the epoch). */
  deadline: number;
}

const AGENTS: readonly string[] = HOOK_AGENTS;
const KINDS: readonly string[] = ["write", "shell", "other"];
const REQUEST_ID = /^[A-Za-z0-9_-]{8,80}$/;

export function isRequestId(v: unknown): v is string {
  return typeof v === "string" && REQUEST_ID.test(v);
}

class WireError extends Error {}

function fail(what: string): never {
  throw new WireError(what);
}

function o(v: unknown, what: string): Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : fail(`${what} must be an object`);
}

function s(v: unknown, what: string, max = 1_000_000): string {
  return typeof v === "string" && v.length <= max ? v : fail(`${what} must be a string`);
}

function optS(r: Record<string, unknown>, key: string, what: string, max?: number): Record<string, string> {
  return r[key] === undefined ? {} : { [key]: s(r[key], `${what}.${key}`, max) };
}

function optB(r: Record<string, unknown>, key: string, what: string): Record<string, boolean> {
  if (r[key] === undefined) return {};
  return typeof r[key] === "boolean" ? { [key]: r[key] as boolean } : fail(`${what}.${key} must be true or false`);
}

function tool(v: unknown): ToolCall {
  const t = o(v, "event.tool");
  const kind = s(t.kind, "event.tool.kind");
  if (!KINDS.includes(kind)) fail(`event.tool.kind must be one of ${KINDS.join(", ")}`);
  const strings = (v: unknown) => Array.isArray(v) && v.every((f) => typeof f === "string");
  if (!strings(t.files)) fail("event.tool.files must be a list of strings");
  if (t.unlinked !== undefined && !strings(t.unlinked)) fail("event.tool.unlinked must be a list of strings");
  return {
    name: s(t.name, "event.tool.name", 1_000),
    kind: kind as ToolKind,
    files: t.files as string[],
    ...(t.unlinked !== undefined ? { unlinked: t.unlinked as string[] } : {}),
    input: t.input ?? {},
    ...optS(t, "command", "event.tool"),
    ...optS(t, "callId", "event.tool", 1_000),
  };
}

/** The neutral event in a request body; throws an Error saying what is wrong. */
export function readHookEvent(v: unknown): HookEvent {
  try {
    const e = o(v, "event");
    const agent = s(e.agent, "event.agent");
    if (!AGENTS.includes(agent)) fail(`event.agent must be ${HOOK_AGENT_LIST}`);
    const cwd = s(e.cwd, "event.cwd", 4_096);
    if (!cwd.startsWith("/") && !/^[A-Za-z]:[\\/]/.test(cwd)) fail("event.cwd must be an absolute path");
    const base = {
      agent: agent as HookAgent,
      native: s(e.native, "event.native", 100),
      cwd,
      ...optS(e, "agentSessionId", "event", 1_000),
      ...optS(e, "subagentId", "event", 1_000),
      ...optS(e, "sentAt", "event", 100),
      ...optS(e, "transcriptPath", "event", 4_096),
    };
    switch (e.kind) {
      case "session_start": {
        const source = s(e.source, "event.source");
        if (!(SESSION_SOURCES as readonly string[]).includes(source)) fail(`event.source must be one of ${SESSION_SOURCES.join(", ")}`);
        return { ...base, kind: "session_start", source: source as SessionSource };
      }
      case "prompt":
        return { ...base, kind: "prompt", prompt: s(e.prompt, "event.prompt") };
      case "before_tool":
        return { ...base, kind: "before_tool", tool: tool(e.tool) };
      case "after_tool": {
        if (e.status !== "success" && e.status !== "error") fail("event.status must be success or error");
        return {
          ...base,
          kind: "after_tool",
          tool: tool(e.tool),
          status: e.status,
          ...optS(e, "error", "event"),
          ...(e.output !== undefined ? { output: e.output } : {}),
        };
      }
      case "pre_compact":
        return {
          ...base,
          kind: "pre_compact",
          ...optS(e, "trigger", "event", 100),
          ...optB(e, "announced", "event"),
          ...optB(e, "ifChanged", "event"),
        };
      case "post_compact":
        return { ...base, kind: "post_compact", ...optS(e, "trigger", "event", 100) };
      case "stop":
        if (typeof e.sessionEnd !== "boolean") fail("event.sessionEnd must be true or false");
        return {
          ...base,
          kind: "stop",
          sessionEnd: e.sessionEnd,
          ...optS(e, "reason", "event", 1_000),
          ...optB(e, "backgroundWork", "event"),
        };
      case "ignored":
        return { ...base, kind: "ignored" };
      default:
        return fail("event.kind must be session_start, prompt, before_tool, after_tool, pre_compact, post_compact, stop or ignored");
    }
  } catch (err) {
    if (err instanceof WireError) throw new Error(err.message);
    throw err;
  }
}

/** The response in the server's answer, or undefined when it is not one. */
export function readHookResponse(v: unknown): HookResponse | undefined {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return undefined;
  const r = v as Record<string, unknown>;
  const out: HookResponse = {};
  if (r.context !== undefined) {
    if (typeof r.context !== "string") return undefined;
    out.context = r.context;
  }
  if (r.userMessage !== undefined) {
    if (typeof r.userMessage !== "string") return undefined;
    out.userMessage = r.userMessage;
  }
  if (r.deny !== undefined) {
    const d = r.deny as { reason?: unknown } | null;
    if (typeof d !== "object" || d === null || typeof d.reason !== "string") return undefined;
    out.deny = { reason: d.reason };
  }
  return out;
}

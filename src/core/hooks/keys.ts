/**
 * Idempotency keys of the steps a hook takes, derived from the agent's own ids so that a hook
 * answered twice (by the server, then by its own process after the answer was lost) acts once:
 * the journal's, the checkpoint table's and the ledger's dedup of these ids is the claim.
 *
 * - A tool call: the agent session and the agent's call id (Claude Code's and Codex's
 *   `tool_use_id`). The id comes from the model's answer, and a model server may number calls
 *   per conversation: two agent sessions in one checkout can send the same one. Gemini CLI sends
 *   none: then the agent session, tool and arguments (the same in the call's before and after
 *   hooks), and for one invocation also the time the agent sent it (two identical calls in a
 *   row are two calls).
 * - A prompt, a session start, a compaction: the request id the hook process makes once and
 *   sends with every attempt.
 *
 * The checkpoint a before-tool hook takes gets an id from its call's key, so the after-tool
 * hook (another process) finds it by computing the same id: no hand-off file.
 */
import { canonicalJson, sha256 } from "../canonical.js";
import type { HookEvent, ToolCall } from "./types.js";

/** The arguments of a call, hashed: the spiral detector's call signature, and part of Gemini CLI's call key. */
export function argsHash(input: unknown): string {
  return sha256(canonicalJson(input ?? null)).slice(0, 16);
}

const SAFE_ID = /^[A-Za-z0-9._:-]{1,100}$/;

/** The agent's call id when it can be part of other ids as it is. */
export function safeCallId(tool: ToolCall): string | undefined {
  return tool.callId !== undefined && SAFE_ID.test(tool.callId) ? tool.callId : undefined;
}

/**
 * One tool call, the same in its before and after hooks: the agent session's call id. Without a
 * call id, the agent session and the subagent that made it (Copilot CLI's subagents share their
 * parent's session id here): two subagents running the same call at once are two calls.
 */
export function callKey(ev: HookEvent, tool: ToolCall): string {
  if (tool.callId !== undefined)
    return ev.agentSessionId === undefined
      ? `${ev.agent}\u0000id\u0000${tool.callId}` // as every id was before sessions scoped them
      : `${ev.agent}\u0000id\u0000${ev.agentSessionId}\u0000${tool.callId}`;
  const who = `${ev.agentSessionId ?? ""}${ev.subagentId !== undefined ? `/${ev.subagentId}` : ""}`;
  return `${ev.agent}\u0000args\u0000${who}\u0000${tool.name}\u0000${argsHash(tool.input)}`;
}

/**
 * One hook invocation about a tool call: the call key, and, without a call id, when the agent
 * sent it. Undefined when nothing tells two identical calls apart (no call id, no time).
 */
export function invocationKey(ev: HookEvent, tool: ToolCall): string | undefined {
  if (tool.callId !== undefined) return callKey(ev, tool);
  return ev.sentAt !== undefined ? `${callKey(ev, tool)}\u0000${ev.sentAt}` : undefined;
}

function hex(...parts: string[]): string {
  return sha256(parts.join("\u0000"));
}

/**
 * The checkpoint a before-tool hook takes for `tool` in session `sessionId`: its `id`, and the
 * `prefix` every checkpoint of this call key starts with. With a call id they are the same; for
 * Gemini CLI the id adds the invocation, and the after-tool hook takes the newest checkpoint
 * with the prefix (the call before it).
 */
export function callCheckpoint(sessionId: string, ev: HookEvent, tool: ToolCall): { id: string; prefix: string } {
  const key = callKey(ev, tool);
  if (tool.callId !== undefined) {
    const id = `cp-${hex(sessionId, key).slice(0, 10)}`;
    return { id, prefix: id };
  }
  const prefix = `cp-${hex(sessionId, key).slice(0, 6)}`;
  return { id: `${prefix}${hex(sessionId, key, ev.sentAt ?? "").slice(0, 4)}`, prefix };
}

/**
 * The agent's call id as part of an id, with a short hash of the agent session before it (one
 * session's `call_1` is not another's); undefined when the call id cannot be part of one.
 */
function scopedCallId(ev: HookEvent, tool: ToolCall): string | undefined {
  const safe = safeCallId(tool);
  if (safe === undefined) return undefined;
  return ev.agentSessionId === undefined ? safe : `${hex(ev.agentSessionId).slice(0, 8)}_${safe}`;
}

/** The turn id of an after-tool hook (undefined: nothing identifies the invocation, a fresh id is made). */
export function turnId(ev: HookEvent, tool: ToolCall): string | undefined {
  const safe = scopedCallId(ev, tool);
  if (safe !== undefined) return `turn_${ev.agent}_${safe}`;
  const key = invocationKey(ev, tool);
  return key === undefined ? undefined : `turn_${ev.agent}_${hex(key).slice(0, 20)}`;
}

/** The ledger node id of an after-tool hook (undefined: the ledger makes one). */
export function ledgerNodeId(ev: HookEvent, tool: ToolCall): string | undefined {
  const safe = scopedCallId(ev, tool);
  if (safe !== undefined) return `${ev.agent}:${safe}`;
  const key = invocationKey(ev, tool);
  return key === undefined ? undefined : `${ev.agent}:${hex(key).slice(0, 20)}`;
}

/** An id for a step of the request `requestId` (a prompt, a session start): `<what>_<hash>`. */
export function requestStepId(what: string, ev: HookEvent, requestId: string): string {
  return `${what}_${hex(ev.agent, requestId).slice(0, 20)}`;
}

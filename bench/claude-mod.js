/**
 * A Claude Code hooks module (a "mod", Claude Code 2.1.287+) that does what Baton's HTTP hooks
 * do, from inside Claude Code's own process: for each write or shell call it POSTs a PreToolUse
 * payload to the workspace's server (`POST /v1/agent-hooks/claude/PreToolUse`, the route the
 * HTTP hooks use), runs the tool unless the answer denies it, then POSTs the PostToolUse. Used
 * only by bench/agents-http.mjs (the `mod` set-up), which writes it into a plugin directory with
 * the server's address and token in place of the two placeholders; not an installed integration.
 */
const BASE = "__BASE__";
const TOKEN = "__TOKEN__";

function payload(sessionId, cwd, event, e, extra) {
  const { tool, tool_use_id, ...input } = e;
  return JSON.stringify({ session_id: sessionId, cwd, hook_event_name: event, tool_name: tool, tool_input: input, tool_use_id, ...extra });
}

async function post(fetch, event, body) {
  const r = await fetch(`${BASE}/${event}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` },
    body,
  });
  // $.http.fetch answers {status, text, ...}: the body already read.
  if (r.status !== 200) throw new Error(`Baton's server answered ${event} with ${r.status}: ${r.text}`);
  return JSON.parse(r.text || "{}");
}

// The session's id and folder, asked once per session: each ask is a hop from the module's
// worker to Claude Code and back (about 1 ms a call for the two, bench/agents-http.mjs).
let session;

export function register(on) {
  // biome-ignore lint/correctness/noUnusedFunctionParameters: a hook's first parameter is always $
  on("session.start", async ($, e, next) => {
    session = undefined;
    return next(e);
  });
  on("tool.call", { tool: /^(Write|Edit|MultiEdit|NotebookEdit|Bash)$/ }, async ($, e, next) => {
    session ??= { id: await $.session.id(), cwd: await $.session.cwd() };
    const { id: sessionId, cwd } = session;
    const before = await post((u, i) => $.http.fetch(u, i), "PreToolUse", payload(sessionId, cwd, "PreToolUse", e, {}));
    const decision = before.hookSpecificOutput;
    if (decision?.permissionDecision === "deny") return { deny: decision.permissionDecisionReason };
    const out = await next(e);
    await post((u, i) => $.http.fetch(u, i), "PostToolUse", payload(sessionId, cwd, "PostToolUse", e, { tool_response: out?.result }));
    return out;
  });
}

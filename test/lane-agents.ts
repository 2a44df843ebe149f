/**
 * Agent sessions played in-process against a real workspace: each call builds the payload the
 * real CLI sends (field for field as in test/fixtures/hooks/, captured from Claude Code, Codex
 * and Qwen Code), parses it with that agent's adapter and hands it to `baton.agents.handle`, as the
 * hook route does. A write runs only when the before-tool hook lets it through.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { ADAPTERS } from "../src/core/hooks/adapters.js";
import type { HookResponse } from "../src/core/hooks/types.js";
import type { Baton } from "../src/index.js";

let calls = 0;

export interface AgentSession {
  lane: string;
  start(source?: string): Promise<HookResponse>;
  prompt(text: string): Promise<HookResponse>;
  /** Write `content` to `path` as the agent's write tool does; `denied` when a hook refused it (the file is untouched). */
  /** `call`: the agent's call id (default: a new one; the same one again is the same hook answered twice). */
  write(path: string, content: string, call?: string): Promise<{ denied?: string; context?: string; after: HookResponse }>;
  /** A shell command (`run` does its effect on disk) that fails when `fail` is given. */
  bash(command: string, o?: { fail?: string; run?: () => void }): Promise<{ denied?: string; after?: HookResponse }>;
  /**
   * The turn's end. `background`: the ids of subagents still at work in the background (Claude
   * Code's `background_tasks`, as Claude Code 2.1 sends it when its Agent tool runs one).
   */
  stop(o?: { background?: string[] }): Promise<void>;
  /** The agent session's end. */
  end(): Promise<void>;
}

/**
 * One Claude Code (`claude`), Codex (`codex`) or Qwen Code (`qwen`) session in `root`;
 * `subagent` makes the hooks carry the `agent_id` of those fired inside a subagent.
 */
export function agentSession(
  b: Baton,
  root: string,
  agent: "claude" | "codex" | "qwen",
  sessionId: string,
  o: { agentPid?: number; subagent?: string } = {},
): AgentSession {
  const adapter = ADAPTERS[agent];
  const pid = o.agentPid ?? process.pid;
  const common = (event: string) => ({
    session_id: sessionId,
    transcript_path:
      agent === "claude"
        ? `/home/dev/.claude/projects/-work-app/${sessionId}.jsonl`
        : agent === "qwen"
          ? `/home/dev/.qwen/projects/-work-app/chats/${sessionId}.jsonl`
          : null,
    cwd: root,
    hook_event_name: event,
    ...(agent === "codex" ? { model: "gpt-5-codex", turn_id: "turn-1" } : {}),
    ...(agent === "qwen" ? { timestamp: new Date().toISOString() } : {}),
    permission_mode: "default",
    ...(o.subagent ? { agent_id: o.subagent, agent_type: "general-purpose" } : {}),
  });
  const handle = (event: string, payload: Record<string, unknown>) =>
    b.agents.handle(adapter.parse(event, { ...common(event), ...payload }, root), { agentPid: pid, requestId: `req-${++calls}` });
  const writeInput = (path: string, content: string) =>
    agent === "claude"
      ? { tool_name: "Write", tool_input: { file_path: join(root, path), content } }
      : agent === "qwen"
        ? { tool_name: "write_file", tool_input: { file_path: join(root, path), content } }
        : {
            tool_name: "apply_patch",
            tool_input: { command: `*** Begin Patch\n*** Add File: ${path}\n+${content.trimEnd()}\n*** End Patch\n` },
          };
  const shellInput = (command: string) =>
    agent === "qwen"
      ? { tool_name: "run_shell_command", tool_input: { command, is_background: false } }
      : { tool_name: "Bash", tool_input: { command } };
  return {
    lane: `${agent}:${sessionId}${o.subagent ? `/${o.subagent}` : ""}`,
    start: (source = "startup") => handle("SessionStart", { source }),
    prompt: (prompt) => handle("UserPromptSubmit", { prompt }),
    async write(path, content, call = `toolu_${++calls}`) {
      const input = { ...writeInput(path, content), tool_use_id: call };
      const pre = await handle("PreToolUse", input);
      if (pre.deny) return { denied: pre.deny.reason, after: {} };
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), content);
      const response =
        agent === "claude"
          ? { type: "create", filePath: join(root, path), content }
          : agent === "qwen"
            ? { llmContent: `Successfully created and wrote to new file: ${join(root, path)}.`, returnDisplay: "" }
            : "Success. Updated the following files:\nA x\n";
      const after = await handle("PostToolUse", { ...input, tool_response: response });
      return { ...(pre.context ? { context: pre.context } : {}), after };
    },
    async bash(command, x = {}) {
      const call = `toolu_${++calls}`;
      const input = { ...shellInput(command), tool_use_id: call };
      const pre = await handle("PreToolUse", input);
      if (pre.deny) return { denied: pre.deny.reason };
      x.run?.();
      if (x.fail !== undefined && (agent === "claude" || agent === "qwen")) {
        return { after: await handle("PostToolUseFailure", { ...input, error: x.fail, is_interrupt: false }) };
      }
      return { after: await handle("PostToolUse", { ...input, tool_response: { stdout: "", stderr: x.fail ?? "", interrupted: false } }) };
    },
    async stop(x = {}) {
      const background = (x.background ?? []).map((id) => ({
        id,
        type: "subagent",
        status: "running",
        description: "a helper's step",
        agent_type: "general-purpose",
      }));
      await handle("Stop", {
        stop_hook_active: false,
        last_assistant_message: "done",
        ...(agent === "claude" ? { background_tasks: background, session_crons: [] } : {}),
      });
    },
    async end() {
      await handle("SessionEnd", { reason: "other" });
    },
  };
}

/**
 * One scenario per agent, replayed through real \`baton hook\` processes by the hook server tests:
 * checkpoints then rollback, a spiral and its deny, "undo that", compaction, resume, the end.
 * A step's \`effect\` is the tool's own edit between its before and after hooks.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Step } from "./hook-helpers.js";

export const APP = 'export function app() {\n  return redirect("/login");\n}\n';

/** One scenario per agent: checkpoints then rollback, a spiral and its deny, "undo that". */
export const SCENARIOS: Record<string, Step[]> = {
  claude: [
    { agent: "claude", fixture: "session-start-startup" },
    { agent: "claude", fixture: "user-prompt" },
    { agent: "claude", fixture: "pre-read" },
    { agent: "claude", fixture: "post-read", vars: { call: "toolu_r1" } },
    { agent: "claude", fixture: "pre-edit", effect: (r) => writeFileSync(join(r, "src/app.ts"), "edited by the agent\n") },
    { agent: "claude", fixture: "post-edit" },
    // A subagent's write: its hooks carry `agent_id` (its own lane inside the session's).
    {
      agent: "claude",
      fixture: "subagent-pre-write",
      effect: (r) => writeFileSync(join(r, "src/helper.ts"), "export const helper = 1;\n"),
    },
    { agent: "claude", fixture: "subagent-post-write" },
    { agent: "claude", fixture: "pre-bash", effect: (r) => writeFileSync(join(r, "generated.txt"), "made by the shell\n") },
    { agent: "claude", fixture: "post-bash" },
    { agent: "claude", fixture: "user-prompt-undo" },
    { agent: "claude", fixture: "user-prompt-undo" },
    ...["toolu_t1", "toolu_t2", "toolu_t3"].flatMap((call) => [
      { agent: "claude", fixture: "pre-bash-test", vars: { call } },
      { agent: "claude", fixture: "post-bash-failure", vars: { call } },
    ]),
    { agent: "claude", fixture: "pre-edit" },
    { agent: "claude", fixture: "user-prompt-undo" },
    { agent: "claude", fixture: "pre-compact" },
    { agent: "claude", fixture: "post-compact" },
    { agent: "claude", fixture: "session-start-resume" },
    { agent: "claude", fixture: "stop" },
    { agent: "claude", fixture: "session-end" },
  ],
  codex: [
    { agent: "codex", fixture: "session-start-startup" },
    {
      agent: "codex",
      fixture: "pre-apply-patch",
      effect: (r) => {
        writeFileSync(join(r, "src/app.ts"), APP.replace("/login", "/signup"));
        writeFileSync(join(r, "src/signup.ts"), 'export const signup = () => "signup";\n');
      },
    },
    { agent: "codex", fixture: "post-apply-patch" },
    { agent: "codex", fixture: "pre-bash", effect: (r) => writeFileSync(join(r, "README.md"), "changed by the shell\n") },
    { agent: "codex", fixture: "post-bash" },
    { agent: "codex", fixture: "post-bash-failure", vars: { call: "call_test_1" } },
    { agent: "codex", fixture: "user-prompt-rollback" },
    { agent: "codex", fixture: "session-start-resume" },
    { agent: "codex", fixture: "stop" },
    { agent: "codex", fixture: "post-compact" },
    { agent: "codex", fixture: "session-end" },
  ],
  gemini: [
    { agent: "gemini", fixture: "session-start-startup" },
    { agent: "gemini", fixture: "before-agent" },
    {
      agent: "gemini",
      fixture: "before-write-file",
      effect: (r) => writeFileSync(join(r, "README.md"), "# App\n\nRewritten by the agent.\n"),
    },
    { agent: "gemini", fixture: "after-write-file" },
    { agent: "gemini", fixture: "before-agent-undo" },
    { agent: "gemini", fixture: "after-shell-error" },
    { agent: "gemini", fixture: "after-shell-error" },
    { agent: "gemini", fixture: "after-shell-error" },
    { agent: "gemini", fixture: "before-write-file" },
    { agent: "gemini", fixture: "pre-compress" },
    { agent: "gemini", fixture: "pre-compress-manual" },
    { agent: "gemini", fixture: "after-agent" },
    { agent: "gemini", fixture: "session-end" },
  ],
  qwen: [
    { agent: "qwen", fixture: "session-start-startup" },
    { agent: "qwen", fixture: "user-prompt" },
    { agent: "qwen", fixture: "pre-edit", effect: (r) => writeFileSync(join(r, "src/app.ts"), "edited by the agent\n") },
    { agent: "qwen", fixture: "post-edit" },
    // A subagent's write: its hooks carry `agent_id` (its own lane inside the session's).
    {
      agent: "qwen",
      fixture: "subagent-pre-write",
      effect: (r) => writeFileSync(join(r, "src/helper.ts"), "export const helper = 1;\n"),
    },
    { agent: "qwen", fixture: "subagent-post-write" },
    { agent: "qwen", fixture: "pre-shell", effect: (r) => writeFileSync(join(r, "generated.txt"), "made by the shell\n") },
    { agent: "qwen", fixture: "post-shell" },
    { agent: "qwen", fixture: "user-prompt-undo" },
    ...["toolu_t1", "toolu_t2", "toolu_t3"].flatMap((call) => [
      { agent: "qwen", fixture: "pre-shell-test", vars: { call } },
      { agent: "qwen", fixture: "post-shell-failure", vars: { call } },
    ]),
    { agent: "qwen", fixture: "pre-edit" },
    { agent: "qwen", fixture: "user-prompt-undo" },
    { agent: "qwen", fixture: "pre-compact" },
    { agent: "qwen", fixture: "post-compact" },
    { agent: "qwen", fixture: "session-start-compact" },
    { agent: "qwen", fixture: "stop-failure" },
    { agent: "qwen", fixture: "session-end" },
  ],
};

// Copilot CLI's payloads do not name their event: the hook's command line does.
const copilot = (fixture: string, event: string, more: Partial<Step> = {}): Step => ({ agent: "copilot", fixture, event, ...more });
SCENARIOS.copilot = [
  copilot("session-start-startup", "sessionStart"),
  copilot("user-prompt", "userPromptSubmitted"),
  copilot("pre-edit", "preToolUse", { effect: (r) => writeFileSync(join(r, "src/app.ts"), "edited by the agent\n") }),
  copilot("post-edit", "postToolUse"),
  copilot("pre-bash", "preToolUse", { effect: (r) => writeFileSync(join(r, "generated.txt"), "made by the shell\n") }),
  copilot("post-bash", "postToolUse"),
  copilot("user-prompt-undo", "userPromptSubmitted"),
  ...["1", "2", "3"].flatMap((call) => [
    copilot("pre-bash-test", "preToolUse", { vars: { call } }),
    copilot("post-bash-failure", "postToolUse", { vars: { call } }),
  ]),
  copilot("pre-edit", "preToolUse"),
  copilot("user-prompt-undo", "userPromptSubmitted"),
  copilot("pre-compact", "preCompact"),
  copilot("session-start-resume", "sessionStart"),
  copilot("agent-stop", "agentStop"),
  copilot("session-end", "sessionEnd"),
];

// OpenCode: the payloads Baton's plugin sends (src/hooks/opencode-plugin.ts), its event names.
const opencode = (fixture: string, event: string, more: Partial<Step> = {}): Step => ({ agent: "opencode", fixture, event, ...more });
SCENARIOS.opencode = [
  opencode("session-start-startup", "session.created"),
  opencode("user-prompt", "chat.message"),
  opencode("pre-edit", "tool.execute.before", { effect: (r) => writeFileSync(join(r, "src/app.ts"), "edited by the agent\n") }),
  opencode("post-edit", "tool.execute.after"),
  opencode("pre-bash", "tool.execute.before", { effect: (r) => writeFileSync(join(r, "generated.txt"), "made by the shell\n") }),
  opencode("post-bash", "tool.execute.after"),
  opencode("user-prompt-undo", "chat.message", { vars: { call: "u1" } }),
  ...["1", "2", "3"].flatMap((call) => [
    opencode("pre-bash-test", "tool.execute.before", { vars: { call } }),
    opencode("post-bash-failure", "tool.execute.after", { vars: { call } }),
  ]),
  opencode("pre-edit", "tool.execute.before", { vars: { call: "4" } }),
  opencode("user-prompt-undo", "chat.message", { vars: { call: "u2" } }),
  opencode("pre-compact", "experimental.session.compacting"),
  opencode("post-compact", "session.compacted"),
  opencode("session-start-compact", "session.created"),
  opencode("session-start-resume", "session.created"),
  opencode("session-idle", "session.idle"),
  opencode("dispose", "dispose"),
];

export const FILES = { "src/app.ts": APP, "README.md": "# App\n" };

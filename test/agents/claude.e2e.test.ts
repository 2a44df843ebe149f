/** Claude Code (the real CLI from npm) driven through Baton's hooks by the scripted model. */
import { agentSuite } from "./suite.js";

agentSuite({
  agent: "claude",
  async setup(p) {
    const r = p.baton(["hooks", "install", "claude", "--command", "baton"]);
    if (r.code !== 0) throw new Error(`baton hooks install claude: ${r.stderr}`);
  },
  compact: { prompt: "/compact" },
  args(prompt, resume) {
    return [
      "-p",
      prompt,
      "--output-format",
      "stream-json",
      "--verbose",
      "--dangerously-skip-permissions",
      ...(resume ? ["--resume", resume] : []),
    ];
  },
  env(url) {
    return {
      ANTHROPIC_BASE_URL: url,
      ANTHROPIC_API_KEY: "sk-ant-e2e",
      // Claude Code refuses --dangerously-skip-permissions as root outside a sandbox.
      IS_SANDBOX: "1",
      DISABLE_TELEMETRY: "1",
      DISABLE_AUTOUPDATER: "1",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    };
  },
  sessionId(run) {
    return run.events.find((e) => e.type === "system" && e.session_id)?.session_id;
  },
});

/** Codex (the real CLI from npm) driven through Baton's hooks by the scripted model. */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { trustCodexHooks } from "./codex-trust.js";
import { agentSuite } from "./suite.js";

agentSuite({
  agent: "codex",
  async setup(p, cli, url) {
    const codexHome = p.env.CODEX_HOME as string;
    mkdirSync(codexHome, { recursive: true });
    // A model Codex knows (so it is offered apply_patch as a freeform tool), served by the mock;
    // the project trusted, so its .codex/hooks.json loads.
    writeFileSync(
      join(codexHome, "config.toml"),
      [
        'model = "gpt-5.5"',
        'model_provider = "mock"',
        "model_auto_compact_token_limit = 5000",
        "[model_providers.mock]",
        'name = "mock"',
        `base_url = "${url}/v1"`,
        'wire_api = "responses"',
        'env_key = "MOCK_API_KEY"',
        `[projects.${JSON.stringify(p.root)}]`,
        'trust_level = "trusted"',
        "",
      ].join("\n"),
    );
    const r = p.baton(["hooks", "install", "codex", "--command", "baton"]);
    if (r.code !== 0) throw new Error(`baton hooks install codex: ${r.stderr}`);
    await trustCodexHooks(cli, p.root, p.env);
  },
  // Codex compacts by itself past model_auto_compact_token_limit (config.toml above).
  compact: { prompt: "Carry on.", inputTokens: 9_000 },
  args(prompt, resume) {
    const flags = ["--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--json"];
    return resume ? ["exec", ...flags, "resume", resume, prompt] : ["exec", ...flags, prompt];
  },
  env() {
    return { MOCK_API_KEY: "sk-e2e" };
  },
  sessionId(run) {
    return run.events.find((e) => e.type === "thread.started")?.thread_id;
  },
  readIsShell: true,
});

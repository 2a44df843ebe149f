/**
 * How to run each real agent headless against the mock model: its configuration in the private
 * HOME, its command line, its environment, where its session id is. Shared by the e2e suite
 * (suite.ts) and the benchmark (bench/agents.mjs); no test framework here.
 */
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { listCodexHooks, trustCodexHooks } from "./codex-trust.js";
import type { AgentRun, Project } from "./harness.js";
import { type AgentName, agentCli, REPO } from "./install.js";
import type { MockModel, Step } from "./mock-model.js";
import { type LocalRegistry, localRegistry } from "./npm-registry.js";

export interface Driver {
  agent: AgentName;
  /** The agent's own configuration in the private HOME (the model server, trust of the project). */
  configure(p: Project, modelUrl: string): void;
  /** After the hooks are installed: what the agent asks of a user before it runs them (Codex: trust each). */
  /** Trust hooks a user added by hand (the benchmark's bare `true` hooks), as `/hooks` would. */
  trustHooks?(p: Project, cli: string, all?: boolean): Promise<void>;
  /** Fail unless the agent itself reports every hook Baton installed as one it will run. */
  expectHooksTrusted?(p: Project, cli: string): Promise<void>;
  /** Arguments for a headless turn; `resume` is the agent's session id of an earlier turn. */
  args(prompt: string, resume?: string): string[];
  env(modelUrl: string): Record<string, string>;
  /** The agent's session id, from its JSON output. */
  sessionId(run: AgentRun): string | undefined;
  /**
   * How to make the agent compact its context in a resumed turn: a prompt (Claude Code's
   * `/compact`), or answers that report a context this large (the agent compacts by itself).
   */
  compact: { prompt: string; inputTokens?: number; steps?: Step[] };
  /** The agent reads files through its shell tool (so a read is checkpointed like a shell command). */
  readIsShell?: boolean;
  /** Agent notices that are not about Baton (matched lines are ignored by the warnings check). */
  benign?: RegExp[];
  /** The agent edits only a file it has read in the session (Qwen Code): the script reads each file first. */
  readsBeforeEdit?: boolean;
  /** How the user asks for two steps back when the agent keeps `/rollback` for itself (Qwen Code: its /rewind). Default "/rollback 2". */
  rollbackTwo?: string;
  /** Uninstall after the runs, which must remove the settings file install created (Qwen Code rewrites a settings file it loads that lacks its "$version"). */
  checkUninstall?: boolean;
  /** The variable the agent's shell tool names its session by (`baton rollback` run there steps back in its lane). */
  shellSessionEnv?: string;
  /** The agent's own guard against identical tool calls, which ends the run with an error (Qwen Code's loop detection). */
  loopGuard?: RegExp;
  /** The agent sends no event after a compaction (Copilot CLI): no SessionStart "compact" to look for. */
  noEventAfterCompact?: boolean;
  /** Installed events the headless CLI never fires, each with where it does (docs/integrations.md). */
  headlessNeverFires?: Record<string, string>;
  /** Installed events the script does not provoke, each with where they are checked instead. */
  unscripted?: Record<string, string>;
  /** Baton as the agent's own plugin or extension, installed with the agent's own commands. */
  plugin?: PluginRoute;
}

export interface PluginRoute {
  /** Install from `source` (the package's plugin files) as a user would; answers the hooks file the agent loads. */
  install(p: Project, cli: string, source: string): string | Promise<string>;
  /** Remove it with the agent's own command. */
  uninstall(p: Project, cli: string): void;
  /** The name the agent gives the model for a tool of the plugin's MCP server; absent: the plugin carries none, and why. */
  mcpTool: ((tool: string) => string) | { none: string };
}

/** The files the npm package ships for the plugin and the extension (package.json "files"), copied out of the checkout. */
export function pluginSource(p: Project): string {
  const dir = join(p.base, "baton-package");
  for (const rel of [".claude-plugin", join(".github", "plugin"), "plugins", "gemini-extension.json", "hooks"])
    cpSync(join(REPO, rel), join(dir, rel), { recursive: true });
  return dir;
}

/** The agent's own command, in the project, with the project's HOME; fails loudly. */
function agentCommand(p: Project, cli: string, args: string[], input?: string): string {
  const r = spawnSync(cli, args, {
    cwd: p.root,
    env: p.env,
    encoding: "utf8",
    timeout: 120_000,
    killSignal: "SIGKILL",
    input: input ?? "",
  });
  if (r.status !== 0) throw new Error(`${cli} ${args.join(" ")} exited ${r.status ?? r.signal}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

export const claude: Driver = {
  agent: "claude",
  configure() {},
  unscripted: {
    StopFailure:
      "only a turn an API error ends fires it: captured from this CLI against a model answering 400 (test/fixtures/agents/claude/StopFailure.json), read by test/hooks-payloads.test.ts and test/hooks.int.test.ts",
    PreSkillShellCommand:
      "fired only before a shell line of a skill's or custom command's own text: test/agents/claude-skill-shell.e2e.test.ts runs one (test/fixtures/hooks/claude/real-pre-skill-shell-command.json)",
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
  plugin: {
    install(p, cli, source) {
      // The CLI's own check of the manifests (a failure exits non-zero).
      agentCommand(p, cli, ["plugin", "validate", source]);
      agentCommand(p, cli, ["plugin", "validate", join(source, "plugins", "claude-code")]);
      // `/plugin marketplace add` and `/plugin install` in a session; the same from the shell.
      agentCommand(p, cli, ["plugin", "marketplace", "add", source]);
      agentCommand(p, cli, ["plugin", "install", "baton@agent-baton"]);
      const listed: any[] = JSON.parse(agentCommand(p, cli, ["plugin", "list", "--json"]));
      const baton = listed.find((x) => x.id === "baton@agent-baton");
      if (!baton?.enabled) throw new Error(`claude plugin list: baton@agent-baton is not enabled: ${JSON.stringify(listed)}`);
      return join(baton.installPath, "hooks", "hooks.json");
    },
    uninstall(p, cli) {
      agentCommand(p, cli, ["plugin", "uninstall", "baton@agent-baton"]);
    },
    // Listed to the model among its deferred tools (found through ToolSearch).
    mcpTool: (tool) => `mcp__plugin_baton_baton__${tool}`,
  },
};

/** One headless Claude Code turn in `p`, the mock model playing `steps`; throws unless Claude Code exits 0. */
export async function claudeTurn(
  p: Project,
  mock: MockModel,
  cli: string,
  url: string,
  prompt: string,
  steps: Step[],
  resume?: string,
): Promise<AgentRun> {
  mock.play(steps, p.root);
  const r = await p.run(cli, claude.args(prompt, resume), claude.env(url));
  if (r.code !== 0) throw new Error(`claude exited ${r.code}\n${r.stdout.slice(-3000)}\n${r.stderr.slice(-3000)}`);
  return r;
}

export const codex: Driver = {
  agent: "codex",
  configure(p, url) {
    const codexHome = p.env.CODEX_HOME as string;
    mkdirSync(codexHome, { recursive: true });
    // A model Codex knows (so it is offered apply_patch as a freeform tool), served by the mock;
    // auto-compaction past 5,000 tokens; the project trusted, so its .codex/hooks.json loads.
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
  },
  async trustHooks(p, cli, all) {
    await trustCodexHooks(cli, p.root, p.env, all);
  },
  async expectHooksTrusted(p, cli) {
    // `baton hooks install codex` records the trust itself: Codex's own hooks/list must agree.
    const hooks = (await listCodexHooks(cli, p.root, p.env)).filter((h) => /\bhook codex\b/.test(h.command ?? ""));
    if (hooks.length === 0) throw new Error("codex hooks/list shows none of Baton's hooks after `baton hooks install codex`");
    const untrusted = hooks.filter((h) => h.trustStatus !== "trusted");
    if (untrusted.length > 0)
      throw new Error(`Codex would skip hooks Baton installed: ${untrusted.map((h) => `${h.key} (${h.trustStatus})`).join(", ")}`);
  },
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
};

export const gemini: Driver = {
  agent: "gemini",
  configure(p) {
    mkdirSync(join(p.home, ".gemini"), { recursive: true });
    writeFileSync(
      join(p.home, ".gemini", "settings.json"),
      `${JSON.stringify({ security: { auth: { selectedType: "gemini-api-key" } } }, null, 2)}\n`,
    );
    // The folder trusted as a user trusts it (the CLI's prompt writes this file), so that
    // `baton doctor` in the user's own shell sees it too; Gemini CLI loads a project's hooks only
    // in a trusted folder.
    writeFileSync(join(p.home, ".gemini", "trustedFolders.json"), `${JSON.stringify({ [p.root]: "TRUST_FOLDER" }, null, 2)}\n`);
  },
  // Gemini CLI compresses by itself before a request once the last one used more than half the
  // model's context window: two requests in the turn, the first reporting a large prompt.
  compact: {
    prompt: "Carry on.",
    inputTokens: 900_000,
    steps: [
      { op: "read", path: "a.txt" },
      { op: "text", text: "Carried on." },
    ],
  },
  args(prompt, resume) {
    return ["-p", prompt, "--yolo", "--output-format", "stream-json", ...(resume ? ["--resume", resume] : [])];
  },
  env(url) {
    return { GOOGLE_GEMINI_BASE_URL: url, GEMINI_API_KEY: "e2e-key" };
  },
  sessionId(run) {
    return run.events.find((e) => e.type === "init")?.session_id;
  },
  // Gemini CLI's own notice, once, the first time it meets a project's hooks (it then records
  // them as trusted): not about Baton's configuration.
  benign: [/project-level hooks have been detected/],
  plugin: {
    install(p, cli, source) {
      agentCommand(p, cli, ["extensions", "validate", source]);
      // Gemini CLI asks whether to trust the folder it installs from: the user answers yes.
      agentCommand(p, cli, ["extensions", "install", source, "--consent"], "y\n");
      return join(p.home, ".gemini", "extensions", "baton", "hooks", "hooks.json");
    },
    uninstall(p, cli) {
      agentCommand(p, cli, ["extensions", "uninstall", "baton"]);
    },
    mcpTool: (tool) => `mcp_baton_${tool}`,
  },
};

export const qwen: Driver = {
  agent: "qwen",
  configure(p) {
    // Qwen Code stamps "$version" into a settings file that lacks it (rewriting the file).
    mkdirSync(join(p.home, ".qwen"), { recursive: true });
    writeFileSync(
      join(p.home, ".qwen", "settings.json"),
      `${JSON.stringify({ $version: 4, general: { disableAutoUpdate: true, disableUpdateNag: true } }, null, 2)}\n`,
    );
  },
  // Qwen Code compresses by itself before a request once the last one used most of the model's
  // context window (262,144 tokens for a model it does not know): two requests in the turn, the
  // first reporting a large prompt, as does the summary request (so the compression is found to
  // shrink the context); the turn's last answer reports a small one, or the resumed session
  // would start by compressing again. (`/compress` on a history this short is refused as "not
  // beneficial", and the turn fails.)
  compact: {
    prompt: "Carry on.",
    inputTokens: 900_000,
    steps: [
      { op: "read", path: "a.txt" },
      { op: "text", text: "Carried on.", inputTokens: 10 },
    ],
  },
  args(prompt, resume) {
    return ["-p", prompt, "--yolo", "--output-format", "stream-json", ...(resume ? ["--resume", resume] : [])];
  },
  env(url) {
    // An OpenAI-compatible endpoint (Chat Completions): the three variables select it without a
    // settings file.
    return {
      OPENAI_BASE_URL: `${url}/v1`,
      OPENAI_API_KEY: "sk-e2e",
      OPENAI_MODEL: "qwen-e2e",
      // Its notice that --yolo runs tools outside a sandbox, on every run.
      QWEN_CODE_SUPPRESS_YOLO_WARNING: "1",
    };
  },
  readsBeforeEdit: true,
  shellSessionEnv: "QWEN_CODE_SESSION_ID",
  checkUninstall: true,
  // `/rollback` is Qwen Code's own command (an alias of its /rewind): the prompt never reaches a hook.
  rollbackTwo: "roll back 2 steps",
  // Qwen Code's always-on loop detection stops the run (exit 1) a few identical calls in: after
  // Baton's pause (the third), which the suite checks.
  loopGuard: /Loop detection halted the run/,
  headlessNeverFires: { SessionEnd: "fired when the interactive CLI exits or clears (/clear, /quit); `qwen -p` ends without it" },
  sessionId(run) {
    return run.events.find((e) => e.session_id)?.session_id;
  },
};

export const copilot: Driver = {
  agent: "copilot",
  configure(p) {
    // The folder trusted as the CLI's trust prompt records it: a project's .github/hooks/ load
    // only in a trusted folder, `copilot -p` included.
    mkdirSync(join(p.home, ".copilot"), { recursive: true });
    writeFileSync(join(p.home, ".copilot", "config.json"), `${JSON.stringify({ trustedFolders: [p.root] }, null, 2)}\n`);
  },
  // `/compact` in a resumed `copilot -p` compacts (preCompact "manual") and sends nothing after.
  compact: { prompt: "/compact" },
  noEventAfterCompact: true,
  args(prompt, resume) {
    return ["-p", prompt, "--allow-all-tools", "--output-format", "json", ...(resume ? [`--resume=${resume}`] : [])];
  },
  env(url) {
    // Its own provider (BYOK) over Chat Completions, and no GitHub sign-in, telemetry or update.
    return {
      COPILOT_OFFLINE: "true",
      COPILOT_PROVIDER_BASE_URL: `${url}/v1`,
      COPILOT_PROVIDER_API_KEY: "sk-e2e",
      COPILOT_MODEL: "gpt-4.1",
      COPILOT_AUTO_UPDATE: "false",
    };
  },
  shellSessionEnv: "COPILOT_AGENT_SESSION_ID",
  checkUninstall: true,
  plugin: {
    install(p, cli, source) {
      // A plugin's hooks need no folder trust: the folder configure() trusted is untrusted again,
      // so every check of the suite runs in an untrusted folder.
      writeFileSync(join(p.home, ".copilot", "config.json"), "{}\n");
      // `copilot plugin marketplace add` of the package's files (a local directory: Copilot CLI
      // reads .github/plugin/marketplace.json and loads the plugin live from it), then install.
      agentCommand(p, cli, ["plugin", "marketplace", "add", source]);
      agentCommand(p, cli, ["plugin", "install", "baton@agent-baton"]);
      const listed: any[] = JSON.parse(agentCommand(p, cli, ["plugin", "list", "--json"]));
      const baton = listed.find((x) => x.name === "baton" && x.marketplace === "agent-baton");
      if (!baton?.enabled) throw new Error(`copilot plugin list: baton@agent-baton is not enabled: ${JSON.stringify(listed)}`);
      return join(source, "plugins", "copilot-cli", "hooks", "hooks.json");
    },
    uninstall(p, cli) {
      // A live plugin's uninstall only turns it off (the marketplace keeps listing it): the
      // marketplace goes too, as a user done with Baton removes it.
      agentCommand(p, cli, ["plugin", "uninstall", "baton@agent-baton"]);
      agentCommand(p, cli, ["plugin", "marketplace", "remove", "agent-baton"]);
    },
    mcpTool: {
      none: "Copilot CLI starts a plugin's MCP server in the plugin's own directory and tells it nothing of the project (no working directory, variable or MCP roots): the plugin carries no MCP server",
    },
  },
  unscripted: {
    postToolUseFailure:
      "only a tool call that throws fires it (an edit of a missing file; a shell command that exits non-zero is a postToolUse): captured from this CLI (test/fixtures/hooks/copilot/post-tool-use-failure.json), read by test/hooks-payloads.test.ts",
  },
  sessionId(run) {
    return run.events.find((e) => e.type === "result" && e.sessionId)?.sessionId;
  },
};

/** The registry each project's OpenCode installs agent-baton from (the npm plugin route). */
const registries = new Map<Project, LocalRegistry>();

/** Stop the registries still serving (a test that failed before the plugin's uninstall). */
export async function stopRegistries(): Promise<void> {
  for (const [p, registry] of [...registries]) {
    registries.delete(p);
    await registry.stop();
  }
}

/** OpenCode's directories in the private HOME (it reads XDG_* before HOME). */
function opencodeDirs(home: string): Record<string, string> {
  return {
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_DATA_HOME: join(home, ".local", "share"),
    XDG_CACHE_HOME: join(home, ".cache"),
    XDG_STATE_HOME: join(home, ".local", "state"),
  };
}

export const opencode: Driver = {
  agent: "opencode",
  configure(p, url) {
    // A provider of its own over Chat Completions (its built-in @ai-sdk/openai-compatible, no
    // install), a model it does not know (so no GPT tools), and a small context window so that a
    // large reported prompt makes it compact by itself.
    const dir = join(p.home, ".config", "opencode");
    mkdirSync(dir, { recursive: true });
    const config = {
      $schema: "https://opencode.ai/config.json",
      autoupdate: false,
      share: "disabled",
      provider: {
        mock: {
          npm: "@ai-sdk/openai-compatible",
          name: "Mock",
          options: { baseURL: `${url}/v1`, apiKey: "sk-e2e" },
          models: { "mock-model": { name: "Mock", limit: { context: 100_000, output: 4_000 } } },
        },
      },
      model: "mock/mock-model",
      small_model: "mock/mock-model",
    };
    writeFileSync(join(dir, "opencode.json"), `${JSON.stringify(config, null, 2)}\n`);
    Object.assign(p.env, opencodeDirs(p.home));
  },
  // OpenCode compacts by itself once a request reports more than its model's context window;
  // after it, a synthetic "continue" turn goes on.
  compact: {
    prompt: "Carry on.",
    inputTokens: 900_000,
    steps: [
      { op: "read", path: "a.txt" },
      { op: "text", text: "Carried on.", inputTokens: 10 },
    ],
  },
  args(prompt, resume) {
    // One message argument per word: `opencode run` quotes an argument that holds a space.
    return ["run", "--format", "json", "--auto", "-m", "mock/mock-model", ...(resume ? ["--session", resume] : []), ...prompt.split(" ")];
  },
  env() {
    // No models.dev fetch, no update check, no sharing; its own cwd (it reads PWD).
    return {
      OPENCODE_DISABLE_MODELS_FETCH: "1",
      OPENCODE_DISABLE_AUTOUPDATE: "1",
      OPENCODE_DISABLE_SHARE: "1",
      OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
      OPENCODE_DISABLE_CLAUDE_CODE: "1",
    };
  },
  // Set by Baton's plugin (its shell.env hook): OpenCode names no session to its shell itself.
  shellSessionEnv: "BATON_OPENCODE_SESSION_ID",
  plugin: {
    async install(p, cli) {
      // agent-baton from a registry served by the test (this checkout, packed), named as a
      // user's ~/.npmrc or environment names one: OpenCode's installer reads npm's configuration.
      const registry = await localRegistry();
      registries.set(p, registry);
      p.env.npm_config_registry = registry.url;
      const r = await p.run(cli, ["plugin", "agent-baton"], opencode.env(""));
      if (r.code !== 0) throw new Error(`opencode plugin agent-baton exited ${r.code}\n${r.stdout}\n${r.stderr}`);
      const pkg = join(p.home, ".cache", "opencode", "packages", "agent-baton@latest", "node_modules", "agent-baton");
      // OpenCode installs with scripts off: better-sqlite3 is there but never built, and the plugin needs none of it.
      if (!existsSync(join(pkg, "..", "better-sqlite3", "package.json")) || existsSync(join(pkg, "..", "better-sqlite3", "build")))
        throw new Error(`OpenCode's install of agent-baton is not the unbuilt one expected: ${registry.requests.join(", ")}`);
      // From the test's registry, this checkout's plugin.
      const version = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")).version;
      if (!registry.requests.includes(`GET /-/agent-baton/${version}.tgz`))
        throw new Error(`agent-baton did not come from the test's registry: ${registry.requests.join(", ")}`);
      const module = join(pkg, "plugins", "opencode", "baton.js");
      if (readFileSync(module, "utf8") !== readFileSync(join(REPO, "plugins", "opencode", "baton.js"), "utf8"))
        throw new Error(`${module} is not this checkout's plugin`);
      return module;
    },
    uninstall(p) {
      // OpenCode has no command that removes a plugin: the user takes the entry out of the list
      // `opencode plugin` wrote (the project's .opencode/opencode.json(c)).
      for (const name of ["opencode.jsonc", "opencode.json"]) {
        const file = join(p.root, ".opencode", name);
        if (!existsSync(file)) continue;
        const config = JSON.parse(readFileSync(file, "utf8"));
        config.plugin = (config.plugin as string[]).filter((s) => s !== "agent-baton");
        writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`);
      }
      const registry = registries.get(p);
      registries.delete(p);
      void registry?.stop();
    },
    mcpTool: { none: 'an OpenCode plugin module carries no MCP server (OpenCode reads MCP servers from opencode.json\'s "mcp")' },
  },
  checkUninstall: true,
  unscripted: {
    "tool.execute.error":
      "only a tool call that throws sends it (an edit whose old text is not there; a shell command that exits non-zero is a tool.execute.after): OpenCode's error part captured from this CLI (test/fixtures/hooks/opencode/tool-part-error.json), read by test/hooks-payloads.test.ts and sent through the plugin by test/opencode-plugin.int.test.ts",
  },
  sessionId(run) {
    return run.events.find((e) => typeof e.sessionID === "string")?.sessionID;
  },
};

/**
 * Cline CLI 3.0.65: `cline --json "…"` runs one task headless (act mode, tools auto-approved);
 * it resumes a task (`--id`) only in its interactive TUI (the CLI turns `--id` into the TUI and
 * drops the prompt), so it has its own e2e story (cline.e2e.test.ts) rather than the shared
 * suite's resumed processes: headless tasks, and one session of several prompts over ACP
 * (`clineAcp` below).
 */
export const cline: Driver = {
  agent: "cline",
  configure(p, url) {
    // Its telemetry opt-out (global-settings.json under $CLINE_DIR/data/settings) and its
    // provider: an OpenAI-compatible endpoint, with a model name that is not GPT's (a GPT model
    // is given apply_patch instead of its editor tool).
    const settings = join(p.home, ".cline", "data", "settings");
    mkdirSync(settings, { recursive: true });
    writeFileSync(join(settings, "global-settings.json"), `${JSON.stringify({ telemetryOptOut: true }, null, 2)}\n`);
    agentCommand(p, agentCli("cline"), ["auth", "-p", "openai-compatible", "-k", "sk-e2e", "-m", "claude-sonnet-4-5", "-b", `${url}/v1`]);
  },
  compact: { prompt: "" },
  args(prompt, resume) {
    if (resume) throw new Error("Cline CLI resumes a task only in its interactive TUI");
    return ["--json", prompt];
  },
  env() {
    // Its directory is ~/.cline in the private HOME; no update check.
    return { CLINE_NO_AUTO_UPDATE: "1" };
  },
  headlessNeverFires: {
    UserPromptSubmit:
      'fired for a message typed into the interactive TUI; `cline "…"` and ACP prompts fire none, `cline -y` only for its own follow-up messages',
    TaskResume: "fired when a task is resumed (`cline --id`, the interactive TUI only)",
    TaskCancel:
      "a cancelled task (ACP's session/cancel, Baton's cancel, SIGINT) fires SessionShutdown or nothing instead (cline.e2e.test.ts provokes each)",
  },
  unscripted: {
    TaskError: "fired when a task's model requests fail: provoked over ACP in cline.e2e.test.ts (fixture TaskError.json)",
  },
  sessionId() {
    return undefined;
  },
};

/**
 * Cline CLI's Agent Client Protocol mode (`cline --acp`, JSON-RPC on stdio; acp.ts): the one
 * headless way to give a Cline session a second prompt. Every prompt of the ACP session is a run
 * of the same task (one `taskId` and `rootSessionId`: one Baton lane). It signs in from the
 * environment (CLINE_API_KEY, CLINE_PROVIDER) with the provider `cline auth` saved (its base URL),
 * but starts on the provider's default model (`gpt-4o`, given apply_patch instead of editor):
 * `session/set_model` picks the model `configure` named, before the first prompt.
 */
export const clineAcp = {
  args: ["--acp"],
  env(): Record<string, string> {
    return { CLINE_NO_AUTO_UPDATE: "1", CLINE_PROVIDER: "openai-compatible", CLINE_API_KEY: "sk-e2e" };
  },
  model: "claude-sonnet-4-5",
};

export const DRIVERS: Record<AgentName, Driver> = { claude, codex, gemini, qwen, copilot, opencode, cline };

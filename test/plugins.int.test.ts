/**
 * Baton installed as Claude Code's or Copilot CLI's plugin or Gemini CLI's extension, as each agent's own files
 * record it (the layout the pinned CLIs write: test/agents/*-plugin.e2e.test.ts installs them
 * for real): `baton hooks status` and `baton doctor` see it, say when it will not run (disabled,
 * an untrusted Gemini CLI folder, no `baton` on PATH), and warn when Baton's hooks are also in a
 * settings file (every hook would run twice). And the plugins' launcher, run as the agents run it.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { claude } from "../src/core/hooks/claude.js";
import { copilot } from "../src/core/hooks/copilot.js";
import { CLI, cleanupDirs, cli, REPO, tempDir } from "./helpers.js";
import { serve } from "./server-helpers.js";

afterEach(() => cleanupDirs());

function batonBin(): string {
  const bin = tempDir("baton-bin-");
  writeFileSync(join(bin, "baton"), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} "$@"\n`);
  chmodSync(join(bin, "baton"), 0o755);
  return bin;
}

function writeJson(file: string, value: unknown): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
}

interface Setup {
  root: string;
  home: string;
  env: Record<string, string>;
}

function setup(): Setup {
  const root = tempDir("baton-plugin-root-");
  const home = tempDir("baton-plugin-home-");
  // The suite's stand-ins (test/setup.ts) before node's folder, where `npm -g` puts a developer's `claude`.
  const path = [batonBin(), process.env.TEST_AGENT_STANDINS, dirname(process.execPath), "/usr/bin", "/bin"].filter((d) => d !== undefined);
  const env = { HOME: home, PATH: path.join(":"), BATON_HOOK_SERVER: "off" };
  expect(cli(["init", "--root", root], { env }).code).toBe(0);
  return { root, home, env };
}

/** What `claude plugin marketplace add <path>` and `claude plugin install baton@agent-baton` leave in ~/.claude. */
function claudePlugin(s: Setup, o: { enabled?: boolean; scope?: "user" | "project" } = {}): string {
  const installPath = join(s.home, ".claude", "plugins", "cache", "agent-baton", "baton", "0.1.0");
  cpSync(join(REPO, "plugins", "claude-code"), installPath, { recursive: true });
  const entry = { scope: o.scope ?? "user", installPath, version: "0.1.0", ...(o.scope === "project" ? { projectPath: s.root } : {}) };
  writeJson(join(s.home, ".claude", "plugins", "installed_plugins.json"), { version: 2, plugins: { "baton@agent-baton": [entry] } });
  const settings = o.scope === "project" ? join(s.root, ".claude", "settings.json") : join(s.home, ".claude", "settings.json");
  writeJson(settings, { enabledPlugins: { "baton@agent-baton": o.enabled ?? true } });
  return join(installPath, "hooks", "hooks.json");
}

/** What `gemini extensions install <path>` (or `link`) leaves in ~/.gemini. */
function geminiExtension(s: Setup, o: { link?: boolean; trusted?: boolean; overrides?: string[] } = {}): string {
  const dir = join(s.home, ".gemini", "extensions", "baton");
  const source = tempDir("baton-ext-src-");
  for (const rel of ["gemini-extension.json", "hooks"]) cpSync(join(REPO, rel), join(o.link ? source : dir, rel), { recursive: true });
  writeJson(join(dir, ".gemini-extension-install.json"), { source, type: o.link ? "link" : "local" });
  writeJson(join(s.home, ".gemini", "extensions", "extension-enablement.json"), { baton: { overrides: o.overrides ?? [`${s.home}/*`] } });
  if (o.trusted !== false) writeJson(join(s.home, ".gemini", "trustedFolders.json"), { [s.root]: "TRUST_FOLDER" });
  return join(o.link ? source : dir, "hooks", "hooks.json");
}

/**
 * What Copilot CLI 1.0.102 records: `copilot plugin marketplace add <dir>` and `copilot plugin
 * install baton@agent-baton` (loaded live from the directory: settings.json only), or a copied
 * install (a GitHub marketplace's, or a direct one: config.json's `installedPlugins`).
 */
function copilotPlugin(s: Setup, o: { copied?: "marketplace" | "direct"; enabled?: boolean } = {}): string {
  const home = join(s.home, ".copilot");
  if (o.copied) {
    const market = o.copied === "marketplace" ? "agent-baton" : "";
    const dir = join(home, "installed-plugins", market || "_direct", o.copied === "marketplace" ? "baton" : "copilot-cli");
    cpSync(join(REPO, "plugins", "copilot-cli"), dir, { recursive: true });
    const entry = { name: "baton", marketplace: market, version: "0.1.0", cache_path: dir, enabled: o.enabled ?? true };
    mkdirSync(home, { recursive: true });
    writeFileSync(
      join(home, "config.json"),
      `// User settings belong in settings.json.\n// This file is managed automatically.\n${JSON.stringify({ installedPlugins: [entry] }, null, 2)}\n`,
    );
    if (market) writeJson(join(home, "settings.json"), { enabledPlugins: { "baton@agent-baton": o.enabled ?? true } });
    return join(dir, "hooks", "hooks.json");
  }
  const source = tempDir("baton-copilot-market-");
  for (const rel of [join(".github", "plugin"), join("plugins", "copilot-cli")])
    cpSync(join(REPO, rel), join(source, rel), { recursive: true });
  writeJson(join(home, "settings.json"), {
    extraKnownMarketplaces: { "agent-baton": { source: { source: "directory", path: source } } },
    enabledPlugins: { "baton@agent-baton": o.enabled ?? true },
  });
  return join(source, "plugins", "copilot-cli", "hooks", "hooks.json");
}

function status(s: Setup, agent: string): any[] {
  const r = cli(["hooks", "status", agent, "--root", s.root, "--json"], { env: s.env });
  expect(r.code, r.stderr).toBe(0);
  return r.json().hooks;
}

function doctorFindings(s: Setup): any[] {
  return cli(["doctor", "--root", s.root, "--json"], { env: s.env })
    .json()
    .findings.filter((f: any) => /^hooks_/.test(f.code));
}

describe("Claude Code's plugin", () => {
  it("is seen by `baton hooks status` (every hook, will run) and `baton doctor` has nothing to say", () => {
    const s = setup();
    const file = claudePlugin(s);
    const routes = status(s, "claude").filter((x) => x.route);
    expect(routes).toEqual([
      expect.objectContaining({ route: "plugin", id: "baton@agent-baton", scope: "user", file, enabled: true, missing: [], willRun: true }),
    ]);
    expect(routes[0].installed).toHaveLength(claude.hookSpecs("baton").filter((s) => s.since === undefined).length);
    expect(routes[0].notes[0]).toContain("claude plugin uninstall baton@agent-baton");
    expect(doctorFindings(s)).toEqual([]);
    const text = cli(["hooks", "status", "claude", "--root", s.root], { env: s.env }).stdout;
    expect(text).toMatch(/claude \(plugin baton@agent-baton, user\) .*hooks\.json: installed/);
  });

  it("installed also in a settings file: install says so, status marks both, doctor warns that every hook runs twice", () => {
    const s = setup();
    claudePlugin(s);
    const r = cli(["hooks", "install", "claude", "--root", s.root, "--json"], { env: s.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().notes).toContainEqual(expect.stringContaining("runs each hook twice"));
    const list = status(s, "claude");
    expect(list.filter((x) => x.twice).map((x) => x.route ?? "file")).toEqual(["file", "plugin"]);
    const findings = doctorFindings(s);
    expect(findings).toEqual([expect.objectContaining({ code: "hooks_installed_twice", severity: "warning" })]);
    expect(findings[0].fix).toContain("claude plugin uninstall baton@agent-baton");
    // Taking out one route ends the warning; the plugin is the agent's to remove.
    const u = cli(["hooks", "uninstall", "claude", "--root", s.root, "--json"], { env: s.env });
    expect(u.code, u.stderr).toBe(0);
    expect(u.json().notes).toContainEqual(expect.stringContaining("`claude plugin uninstall baton@agent-baton` does"));
    expect(doctorFindings(s)).toEqual([]);
  });

  it("disabled, or installed for another project: not counted as running, nor twice", () => {
    const s = setup();
    claudePlugin(s, { enabled: false });
    expect(cli(["hooks", "install", "claude", "--root", s.root], { env: s.env }).code).toBe(0);
    const plugin = status(s, "claude").find((x) => x.route);
    expect(plugin).toMatchObject({ enabled: false, willRun: false });
    expect(plugin.twice).toBeUndefined();
    expect(plugin.remaining).toEqual([expect.stringContaining("claude plugin enable baton@agent-baton")]);

    const other = setup();
    claudePlugin(other, { scope: "project" });
    const elsewhere = setup();
    cpSync(join(other.home, ".claude"), join(elsewhere.home, ".claude"), { recursive: true });
    expect(status(elsewhere, "claude").filter((x) => x.route)).toEqual([]);
    expect(status(other, "claude").filter((x) => x.route)).toEqual([expect.objectContaining({ scope: "project", shared: true })]);
  });

  it("installed for the user and for this project: one plugin, as Claude Code loads it once", () => {
    const s = setup();
    claudePlugin(s, { scope: "project" });
    const file = join(s.home, ".claude", "plugins", "installed_plugins.json");
    const records = JSON.parse(readFileSync(file, "utf8"));
    const [project] = records.plugins["baton@agent-baton"];
    records.plugins["baton@agent-baton"] = [{ ...project, scope: "user", projectPath: undefined }, project];
    writeJson(file, records);
    expect(status(s, "claude").filter((x) => x.route)).toEqual([expect.objectContaining({ scope: "project", enabled: true })]);
  });

  it("without `baton` on PATH: status and doctor say the plugin cannot run Baton, and how to install it", () => {
    const s = setup();
    claudePlugin(s);
    const env = { ...s.env, PATH: `${dirname(process.execPath)}:/usr/bin:/bin` };
    const plugin = cli(["hooks", "status", "claude", "--root", s.root, "--json"], { env })
      .json()
      .hooks.find((x: any) => x.route);
    expect(plugin.willRun).toBe(false);
    expect(plugin.remaining).toEqual([expect.stringContaining("npm install --global agent-baton")]);
    const findings = cli(["doctor", "--root", s.root, "--json"], { env }).json().findings;
    expect(findings).toContainEqual(expect.objectContaining({ code: "hooks_not_running", fix: expect.stringContaining("agent-baton") }));
  });
});

describe("Gemini CLI's extension", () => {
  it("installed or linked, in a trusted folder: seen by status, nothing for doctor", () => {
    for (const link of [false, true]) {
      const s = setup();
      const file = geminiExtension(s, { link });
      expect(status(s, "gemini").filter((x) => x.route)).toEqual([
        expect.objectContaining({ route: "extension", id: "baton", file, enabled: true, missing: [], willRun: true }),
      ]);
      expect(doctorFindings(s)).toEqual([]);
    }
  });

  it("the folder's trust is still checked: an untrusted folder is `hooks_not_running`", () => {
    const s = setup();
    geminiExtension(s, { trusted: false });
    const ext = status(s, "gemini").find((x) => x.route);
    expect(ext.willRun).toBe(false);
    expect(ext.remaining).toEqual([expect.stringContaining("trusted folder")]);
    expect(doctorFindings(s)).toEqual([expect.objectContaining({ code: "hooks_not_running" })]);
  });

  it("disabled for this folder (`gemini extensions disable`): not running, and a settings install is not twice", () => {
    const s = setup();
    geminiExtension(s, { overrides: [`${s.home}/*`, `!${s.root}/*`] });
    expect(cli(["hooks", "install", "gemini", "--root", s.root], { env: s.env }).code).toBe(0);
    const list = status(s, "gemini");
    expect(list.find((x) => x.route)).toMatchObject({ enabled: false, willRun: false });
    expect(list.some((x) => x.twice)).toBe(false);
  });

  it("with Baton's hooks also in .gemini/settings.json: doctor warns they run twice", () => {
    const s = setup();
    geminiExtension(s);
    expect(cli(["hooks", "install", "gemini", "--root", s.root], { env: s.env }).code).toBe(0);
    expect(doctorFindings(s)).toEqual([
      expect.objectContaining({ code: "hooks_installed_twice", fix: expect.stringContaining("gemini extensions uninstall baton") }),
    ]);
  });
});

describe("Copilot CLI's plugin", () => {
  it("from a local marketplace (live), a GitHub marketplace or a direct install (copied): seen by status, nothing for doctor", () => {
    for (const copied of [undefined, "marketplace", "direct"] as const) {
      const s = setup();
      const file = copilotPlugin(s, { ...(copied ? { copied } : {}) });
      const id = copied === "direct" ? "baton" : "baton@agent-baton";
      const routes = status(s, "copilot").filter((x) => x.route);
      expect(routes, String(copied)).toEqual([
        expect.objectContaining({ route: "plugin", id, scope: "user", file, enabled: true, missing: [], willRun: true }),
      ]);
      expect(routes[0].installed).toHaveLength(copilot.hookSpecs("baton").length);
      expect(routes[0].notes[0]).toContain(`copilot plugin uninstall ${id}`);
      // What the plugin cannot carry is said where it is listed.
      expect(routes[0].limits).toContainEqual(expect.stringContaining("carries no MCP server"));
      // No folder trust asked: Copilot CLI runs a plugin's hooks in any folder.
      expect(doctorFindings(s)).toEqual([]);
    }
  });

  it("disabled (`copilot plugin disable`, or a live plugin's uninstall): not running, and a settings install is not twice", () => {
    for (const copied of [undefined, "marketplace", "direct"] as const) {
      const s = setup();
      copilotPlugin(s, { ...(copied ? { copied } : {}), enabled: false });
      expect(cli(["hooks", "install", "copilot", "--user", "--root", s.root], { env: s.env }).code).toBe(0);
      const list = status(s, "copilot");
      const plugin = list.find((x) => x.route);
      expect(plugin, String(copied)).toMatchObject({ enabled: false, willRun: false });
      expect(plugin.remaining).toEqual([expect.stringContaining("copilot plugin enable baton")]);
      // Only a live plugin's uninstall leaves it installed (disabled): removing its marketplace removes it.
      if (copied === undefined) expect(plugin.remaining[0]).toContain("copilot plugin marketplace remove agent-baton");
      else expect(plugin.remaining[0]).not.toContain("marketplace remove");
      expect(list.some((x) => x.twice)).toBe(false);
    }
  });

  it("a repository's own settings that turn the plugin off are applied in a trusted folder: status and doctor say so", () => {
    const s = setup();
    copilotPlugin(s);
    writeJson(join(s.root, ".github", "copilot", "settings.json"), { enabledPlugins: { "baton@agent-baton": false } });
    // Untrusted: Copilot CLI reads no repository settings, and the plugin runs.
    expect(status(s, "copilot").find((x) => x.route)).toMatchObject({ enabled: true, willRun: true });
    writeJson(join(s.home, ".copilot", "config.json"), { trustedFolders: [s.root] });
    const plugin = status(s, "copilot").find((x) => x.route);
    expect(plugin).toMatchObject({ enabled: false, willRun: false });
    expect(plugin.remaining).toEqual([expect.stringContaining(join(s.root, ".github", "copilot", "settings.json"))]);
    expect(doctorFindings(s)).toEqual([expect.objectContaining({ code: "hooks_not_running" })]);
    // The local file comes later and decides; turned off there, it is named.
    writeJson(join(s.root, ".github", "copilot", "settings.local.json"), { enabledPlugins: { "baton@agent-baton": true } });
    expect(status(s, "copilot").find((x) => x.route)).toMatchObject({ enabled: true, willRun: true });
    writeJson(join(s.root, ".github", "copilot", "settings.json"), { enabledPlugins: { "baton@agent-baton": true } });
    writeJson(join(s.root, ".github", "copilot", "settings.local.json"), { enabledPlugins: { "baton@agent-baton": false } });
    expect(status(s, "copilot").find((x) => x.route).remaining).toEqual([expect.stringContaining("settings.local.json")]);
    // The repository's `true` undoes its own `false`, never the user's: disabled by the user, it stays so.
    const settings = join(s.home, ".copilot", "settings.json");
    const user = JSON.parse(readFileSync(settings, "utf8"));
    writeJson(settings, { ...user, enabledPlugins: { "baton@agent-baton": false } });
    writeJson(join(s.root, ".github", "copilot", "settings.json"), { enabledPlugins: { "baton@agent-baton": false } });
    writeJson(join(s.root, ".github", "copilot", "settings.local.json"), { enabledPlugins: { "baton@agent-baton": true } });
    expect(status(s, "copilot").find((x) => x.route)).toMatchObject({ enabled: false, willRun: false });
  });

  it("with Baton's hooks also in a hooks file: install says so, doctor warns they run twice, uninstall names Copilot's command", () => {
    const s = setup();
    copilotPlugin(s);
    const r = cli(["hooks", "install", "copilot", "--user", "--root", s.root, "--json"], { env: s.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().notes).toContainEqual(expect.stringContaining("runs each hook twice"));
    expect(doctorFindings(s)).toEqual([
      expect.objectContaining({
        code: "hooks_installed_twice",
        fix: expect.stringContaining("copilot plugin uninstall baton@agent-baton"),
      }),
    ]);
    const u = cli(["hooks", "uninstall", "copilot", "--user", "--root", s.root, "--json"], { env: s.env });
    expect(u.code, u.stderr).toBe(0);
    expect(u.json().notes).toContainEqual(expect.stringContaining("`copilot plugin uninstall baton@agent-baton` does"));
    expect(doctorFindings(s)).toEqual([]);
  });

  it("`disableAllHooks` in Copilot CLI's settings turns the plugin's hooks off too: status and doctor say so", () => {
    const s = setup();
    copilotPlugin(s);
    const settings = join(s.home, ".copilot", "settings.json");
    writeJson(settings, { ...JSON.parse(readFileSync(settings, "utf8")), disableAllHooks: true });
    const plugin = status(s, "copilot").find((x) => x.route);
    expect(plugin).toMatchObject({ enabled: true, willRun: false });
    expect(plugin.remaining).toEqual([expect.stringContaining("disableAllHooks")]);
    expect(doctorFindings(s)).toEqual([expect.objectContaining({ code: "hooks_not_running" })]);
  });

  it("another plugin of the marketplace, or one without Baton's hooks, is not Baton's", () => {
    const s = setup();
    copilotPlugin(s, { copied: "direct" });
    const hooks = join(s.home, ".copilot", "installed-plugins", "_direct", "copilot-cli", "hooks", "hooks.json");
    writeJson(hooks, { version: 1, hooks: { sessionStart: [{ type: "command", bash: "echo hi" }] } });
    expect(status(s, "copilot").filter((x) => x.route)).toEqual([]);
  });
});

/** A Claude Code PreToolUse Write of `file` answered by Baton: whether it is denied. */
function writeDenied(s: Setup, file: string, env: Record<string, string> = {}, more: Record<string, unknown> = {}): boolean {
  const r = cli(["hook", "claude", "PreToolUse", "--root", s.root], {
    cwd: s.root,
    env: { ...s.env, ...env },
    input: JSON.stringify({
      cwd: s.root,
      session_id: "s1",
      hook_event_name: "PreToolUse",
      tool_name: "Write",
      tool_input: { file_path: file, content: "exit 0" },
      tool_use_id: `toolu_${file.length}_${Object.keys(env).join("")}${Object.keys(more).join("")}`,
      ...more,
    }),
  });
  expect(r.code, r.stderr).toBe(0);
  return r.stdout.includes('"permissionDecision":"deny"');
}

describe("the supervised agent cannot remove Baton's plugin or extension", () => {
  it("its shell command `claude plugin uninstall baton@…` or `gemini extensions disable baton` is denied, as `baton hooks uninstall` is", () => {
    const s = setup();
    const hook = (agent: string, event: string, payload: object) => {
      const r = cli(["hook", agent, event, "--root", s.root], {
        cwd: s.root,
        env: s.env,
        input: JSON.stringify({ cwd: s.root, ...payload }),
      });
      expect(r.code, r.stderr).toBe(0);
      return r.stdout;
    };
    const claudeBash = (command: string) =>
      hook("claude", "PreToolUse", {
        session_id: "s1",
        hook_event_name: "PreToolUse",
        tool_name: "Bash",
        tool_input: { command },
        tool_use_id: `toolu_${command.length}`,
      });
    const geminiShell = (command: string) =>
      hook("gemini", "BeforeTool", {
        session_id: "g1",
        hook_event_name: "BeforeTool",
        tool_name: "run_shell_command",
        tool_input: { command },
      });
    expect(claudeBash("claude plugin uninstall baton@agent-baton")).toContain('"permissionDecision":"deny"');
    expect(claudeBash("claude plugin disable baton@agent-baton")).toContain("user's decision");
    expect(geminiShell("gemini extensions disable baton")).toContain('"decision":"deny"');
    // Anything else goes ahead.
    expect(claudeBash("claude plugin list")).not.toContain("deny");
    expect(geminiShell("gemini extensions list")).not.toContain("deny");
  });
});

describe("the plugins' launcher (hooks/baton)", () => {
  const launcher = join(REPO, "hooks", "baton");
  const run = (args: string[], path: string, input = "{}") =>
    spawnSync("sh", [launcher, ...args], { encoding: "utf8", input, env: { PATH: path, HOME: tempDir("baton-home-") } });

  it("runs the `baton` on PATH with the hook's arguments and stdin", () => {
    const bin = tempDir("fake-baton-");
    writeFileSync(join(bin, "baton"), '#!/bin/sh\necho "args: $*"; cat\nexit 3\n');
    chmodSync(join(bin, "baton"), 0o755);
    const r = run(["hook", "claude", "PreToolUse"], `${bin}:/usr/bin:/bin`, '{"tool_name":"Write"}');
    expect(r.stdout).toBe('args: hook claude PreToolUse\n{"tool_name":"Write"}');
    expect(r.status).toBe(3);
  });

  it("without Baton: the session's first hook says how to install it (a non-blocking failure), the others pass silently, the MCP server fails", () => {
    const start = run(["hook", "claude", "SessionStart"], "/usr/bin:/bin");
    expect(start.status).toBe(1);
    expect(start.stderr).toContain("npm install --global agent-baton");
    for (const event of ["PreToolUse", "BeforeTool", "PostToolUse", "Stop"]) {
      const r = run(["hook", "gemini", event], "/usr/bin:/bin");
      expect([r.status, r.stdout, r.stderr]).toEqual([0, "", ""]);
    }
    // Copilot CLI denies a tool call whose preToolUse hook fails: each of its hooks passes, silently.
    for (const event of ["sessionStart", "preToolUse", "postToolUse", "agentStop"]) {
      const r = run(["hook", "copilot", event], "/usr/bin:/bin");
      expect([r.status, r.stdout, r.stderr]).toEqual([0, "", ""]);
    }
    // Its own directory on PATH (the script is named baton): it never runs itself.
    const self = run(["hook", "claude", "SessionStart"], `${join(REPO, "hooks")}:/usr/bin:/bin`);
    expect([self.status, self.stderr]).toEqual([1, expect.stringContaining("npm install --global agent-baton")]);
    const mcp = run(["mcp"], "/usr/bin:/bin");
    expect(mcp.status).toBe(127);
    expect(mcp.stderr).toContain("npm install --global agent-baton");
  });

  it("a write tool may not change Baton's plugin files where an agent loads them live, nor an agent's moved configuration", () => {
    const s = setup();
    // A local marketplace's copy of the plugin (Copilot CLI loads it live), and one inside an installed package.
    const market = tempDir("baton-live-market-");
    for (const rel of [join(".github", "plugin"), join("plugins", "copilot-cli"), join("plugins", "claude-code"), "hooks"])
      cpSync(join(REPO, rel), join(market, rel), { recursive: true });
    cpSync(join(REPO, "gemini-extension.json"), join(market, "gemini-extension.json"));
    const moved = tempDir("baton-copilot-home-");
    const write = (file: string, env: Record<string, string> = {}) => writeDenied(s, file, env);
    for (const file of [
      join(market, "plugins", "copilot-cli", "hooks", "hooks.json"),
      join(market, "plugins", "copilot-cli", "hooks", "baton"),
      join(market, "plugins", "copilot-cli", "plugin.json"),
      join(market, "plugins", "claude-code", ".claude-plugin", "plugin.json"),
      join(market, ".github", "plugin", "marketplace.json"),
      join(market, "gemini-extension.json"),
      join(market, "hooks", "hooks.json"),
      join(s.home, "lib", "node_modules", "agent-baton", "dist", "hook.cjs"),
    ])
      expect(write(file), file).toBe(true);
    expect(write(join(moved, "settings.json"), { COPILOT_HOME: moved })).toBe(true);
    expect(write(join(moved, "installed-plugins", "x", "hooks.json"), { COPILOT_HOME: moved })).toBe(true);
    // Another hooks.json, another launcher-named file, or the moved directory without its variable: written as usual.
    const other = tempDir("baton-other-");
    writeJson(join(other, "hooks", "hooks.json"), { hooks: { sessionStart: [{ type: "command", bash: "echo hi" }] } });
    writeFileSync(join(other, "baton"), "#!/bin/sh\necho mine\n");
    for (const file of [join(other, "hooks", "hooks.json"), join(other, "baton"), join(moved, "settings.json")])
      expect(write(file), file).toBe(false);
  });

  it("nor OpenCode's npm plugin: the opencode.json(c) that lists agent-baton, nor the installed module in OpenCode's cache", () => {
    const s = setup();
    const write = (file: string) => writeDenied(s, file);
    // `opencode plugin agent-baton` (project) and `--global` (user) write these lists.
    writeFileSync(join(s.root, "opencode.json"), `${JSON.stringify({ plugin: ["agent-baton"] })}\n`);
    mkdirSync(join(s.root, ".opencode"), { recursive: true });
    writeFileSync(join(s.root, ".opencode", "opencode.jsonc"), '{\n  // ours\n  "plugin": [["agent-baton@0.1.0", {}],],\n}\n');
    const user = join(s.home, ".config", "opencode");
    mkdirSync(user, { recursive: true });
    writeFileSync(join(user, "opencode.json"), `${JSON.stringify({ plugin: ["other-plugin", "agent-baton@latest"] })}\n`);
    writeFileSync(join(user, "config.json"), `${JSON.stringify({ plugin: ["agent-baton"] })}\n`);
    // What OpenCode's npm install leaves in its cache: the package's plugin module (its exports["./server"]).
    const cached = join(s.home, ".cache", "opencode", "packages", "agent-baton@latest", "node_modules", "agent-baton");
    mkdirSync(join(cached, "plugins", "opencode"), { recursive: true });
    cpSync(join(REPO, "plugins", "opencode", "baton.js"), join(cached, "plugins", "opencode", "baton.js"));
    // Elsewhere, a copy of the plugin module is known by its first line.
    const elsewhere = tempDir("baton-oc-copy-");
    cpSync(join(REPO, "plugins", "opencode", "baton.js"), join(elsewhere, "baton.js"));
    for (const file of [
      join(s.root, "opencode.json"),
      join(s.root, ".opencode", "opencode.jsonc"),
      join(user, "opencode.json"),
      join(user, "config.json"),
      join(cached, "plugins", "opencode", "baton.js"),
      join(cached, "package.json"),
      join(elsewhere, "baton.js"),
    ])
      expect(write(file), file).toBe(true);
    // A configuration without Baton's package, another package of a like name, another baton.js: written as usual.
    const other = tempDir("baton-oc-other-");
    writeFileSync(join(other, "opencode.json"), `${JSON.stringify({ plugin: ["agent-baton-extra", "@x/agent-baton"] })}\n`);
    writeFileSync(join(other, "baton.js"), "export const mine = 1;\n");
    writeFileSync(join(other, "config.json"), `${JSON.stringify({ plugin: ["agent-baton"] })}\n`);
    for (const file of [join(other, "opencode.json"), join(other, "baton.js"), join(other, "opencode.jsonc"), join(other, "config.json")])
      expect(write(file), file).toBe(false);
  });

  it("nor an agent's configuration wherever its variable moves it, Codex's launcher, a `baton` in PATH, or a guarded file through a link", async () => {
    const s = setup();
    const write = (file: string, env: Record<string, string> = {}) => writeDenied(s, file, env);
    const moved = tempDir("baton-moved-");
    const cases: [string, string, boolean][] = [
      ["CODEX_HOME", "hooks.json", true],
      ["CODEX_HOME", "config.toml", true],
      ["CODEX_HOME", join("baton", "baton"), true],
      ["QWEN_HOME", "settings.json", true],
      ["CLINE_DIR", join("hooks", "PreToolUse.sh"), true],
      ["CLINE_DIR", join("plugins", "x", "index.js"), true],
      ["CLINE_DIR", "settings.json", false],
      // Cline CLI loads agent plugins from the home's .agents/plugins; a repository's own is its own.
      ["HOME", join(".agents", "plugins", "x", "plugin.json"), true],
      ["CLAUDE_CONFIG_DIR", "settings.json", true],
      ["CLAUDE_CONFIG_DIR", join("plugins", "x", "hooks.json"), true],
      ["GEMINI_CLI_TRUSTED_FOLDERS_PATH", "", true],
      ["OPENCODE_CONFIG", "", true],
      ["CODEX_HOME", "notes.md", false],
    ];
    for (const [name, rel, denied] of cases) expect(write(join(moved, rel), { [name]: moved }), `${name} ${rel}`).toBe(denied);
    expect(write(join(s.home, ".agents", "plugins", "x", "index.js"))).toBe(true);
    // The same folders on a case-insensitive file system (macOS).
    expect(write(join(s.home, ".Agents", "Plugins", "x", "index.js"))).toBe(true);
    expect(write(join(moved, "Hooks", "PreToolUse.sh"), { CLINE_DIR: moved })).toBe(true);
    expect(write(join(s.root, ".agents", "plugins", "marketplace.json"))).toBe(false);
    // Codex's user hooks run this launcher, in its default place too.
    expect(write(join(s.home, ".codex", "baton", "baton"))).toBe(true);
    // A `baton` in one of PATH's folders is what every committed hook and plugin launcher runs.
    const bin = tempDir("baton-bin-");
    expect(write(join(bin, "baton"), { PATH: `${bin}:${s.env.PATH}` })).toBe(true);
    expect(write(join(bin, "baton"))).toBe(false);
    // A link of another name to Baton's plugin hooks is the file it leads to.
    const market = tempDir("baton-live-market-");
    cpSync(join(REPO, "plugins", "copilot-cli"), join(market, "copilot-cli"), { recursive: true });
    symlinkSync(join(market, "copilot-cli", "hooks", "hooks.json"), join(bin, "innocent.json"));
    expect(write(join(bin, "innocent.json"))).toBe(true);
    // A link to a settings file that does not exist yet (writing it would create it), and to a baton in PATH.
    symlinkSync(join(s.home, ".claude", "settings.local.json"), join(bin, "notes.json"));
    expect(write(join(bin, "notes.json"))).toBe(true);
    const other = tempDir("baton-bin-");
    writeFileSync(join(other, "baton"), "#!/bin/sh\n");
    symlinkSync(join(other, "baton"), join(bin, "tool"));
    expect(write(join(bin, "tool"), { PATH: `${other}:${s.env.PATH}` })).toBe(true);
    // Answered by the workspace's server, whose environment is not the agent's: still denied.
    const server = await serve(s.root, [], s.env);
    try {
      expect(write(join(moved, "settings.json"), { COPILOT_HOME: moved, BATON_HOOK_SERVER: "use" })).toBe(true);
      // The server's PATH is not the agent's: a baton in the agent's PATH is judged in the hook's process.
      expect(write(join(other, "baton"), { PATH: `${other}:${s.env.PATH}`, BATON_HOOK_SERVER: "use" })).toBe(true);
      expect(write(join(moved, "notes.md"), { COPILOT_HOME: moved, BATON_HOOK_SERVER: "use" })).toBe(false);
      // Through a link to it, and with the variable naming the folder another way.
      symlinkSync(join(moved, "settings.json"), join(bin, "moved-settings.json"));
      expect(write(join(bin, "moved-settings.json"), { COPILOT_HOME: moved, BATON_HOOK_SERVER: "use" })).toBe(true);
      expect(write(join(moved, "settings.json"), { COPILOT_HOME: `${moved}/./`, BATON_HOOK_SERVER: "use" })).toBe(true);
      // Claude Code's HTTP hooks have no process of the agent's: where CLAUDE_CONFIG_DIR moved its
      // configuration, the transcript's path says (the server judges the write without the variable).
      const transcript = { transcript_path: join(moved, "projects", "-work-app", "s1.jsonl") };
      expect(writeDenied(s, join(moved, "settings.local.json"), { BATON_HOOK_SERVER: "use" }, transcript)).toBe(true);
      expect(writeDenied(s, join(moved, "notes.md"), { BATON_HOOK_SERVER: "use" }, transcript)).toBe(false);
    } finally {
      await server.stop();
    }
  }, 120_000);
});

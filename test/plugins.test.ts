/**
 * The Claude Code and Copilot CLI plugins and the Gemini CLI extension in the repository: their hooks are exactly
 * what `baton hooks install` installs (so the two routes cannot drift), their manifests name
 * the package's version, both launchers are the same script, and the npm package ships them.
 * BATON_PLUGIN_FILES=write rewrites the hooks files from the adapters.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { ADAPTERS } from "../src/core/hooks/adapters.js";
import { listBatonHooks } from "../src/core/hooks/config.js";
import { opencodePluginText } from "../src/hooks/opencode-plugin.js";
import { PLUGIN_AGENTS, PLUGIN_LAUNCHERS, PLUGIN_ROUTES, pluginHooks } from "../src/hooks/plugins.js";
import { isBatonPluginFile } from "../src/platform/plugin-files.js";

const REPO = join(import.meta.dirname, "..");
const json = (rel: string) => JSON.parse(readFileSync(join(REPO, rel), "utf8"));
const VERSION = json("package.json").version;

describe.each(PLUGIN_AGENTS)("the %s plugin", (agent) => {
  const dir = PLUGIN_ROUTES[agent].dir;
  const hooksFile = join(dir, "hooks", "hooks.json");

  test("its hooks.json holds exactly the hooks `baton hooks install` writes, run by its launcher", () => {
    const expected = `${JSON.stringify(pluginHooks(agent), null, 2)}\n`;
    if (process.env.BATON_PLUGIN_FILES === "write") writeFileSync(join(REPO, hooksFile), expected);
    expect(readFileSync(join(REPO, hooksFile), "utf8")).toBe(expected);
    // The same events, matchers and commands (past the launcher) as a settings-file install.
    const installed = listBatonHooks(json(hooksFile).hooks, agent);
    // A launcher other than a bare `baton` (Copilot CLI's PATH guard is for that one).
    // Not an event newer than some of the agent's versions (`since`: a settings-file install judges those).
    const specs = ADAPTERS[agent].hookSpecs("/launcher").filter((s) => s.since === undefined);
    expect(installed.map((h) => [h.event, h.matcher, h.command.replace(PLUGIN_LAUNCHERS[agent], "/launcher")])).toEqual(
      specs.map((s) => [s.event, s.matcher, s.handler.command]),
    );
  });

  test("its launcher is the one script, executable", () => {
    const launcher = join(REPO, dir, "hooks", "baton");
    expect(readFileSync(launcher, "utf8")).toBe(readFileSync(join(REPO, "hooks", "baton"), "utf8"));
    expect(statSync(launcher).mode & 0o111).not.toBe(0);
    // The write-tool guard knows it by its opening comment, wherever it is (platform/plugin-files.ts).
    expect(isBatonPluginFile(launcher)).toBe(true);
    expect(isBatonPluginFile(join(REPO, hooksFile))).toBe(true);
  });
});

test("OpenCode's npm plugin entry, exports.server, is the plugin a committed `baton hooks install opencode` writes", () => {
  const pkg = json("package.json");
  const entry = pkg.exports["./server"];
  expect(entry).toBe("./plugins/opencode/baton.js");
  const file = join(REPO, entry);
  if (process.env.BATON_PLUGIN_FILES === "write") writeFileSync(file, opencodePluginText(["baton"]));
  expect(readFileSync(file, "utf8")).toBe(opencodePluginText(["baton"]));
  // OpenCode imports exports["./server"] before main: never Baton's library (better-sqlite3).
  expect(readFileSync(file, "utf8")).not.toMatch(/from "(?!node:)/);
  expect(isBatonPluginFile(file)).toBe(true);
});

test("the manifests name the package's version and the MCP server runs `baton mcp` through the launcher", () => {
  const claude = json("plugins/claude-code/.claude-plugin/plugin.json");
  const gemini = json("gemini-extension.json");
  const copilot = json("plugins/copilot-cli/plugin.json");
  expect(claude.version).toBe(VERSION);
  expect(gemini.version).toBe(VERSION);
  expect(copilot.version).toBe(VERSION);
  // Copilot CLI starts a plugin's MCP server in the plugin's directory, told nothing of the
  // project (no working directory, variable or MCP roots): it could not find the workspace.
  expect(copilot.mcpServers).toBeUndefined();
  expect(existsSync(join(REPO, "plugins/copilot-cli/.mcp.json"))).toBe(false);
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the agent's variable, expanded by the agent
  expect(claude.mcpServers.baton).toEqual({ command: "sh", args: ["${CLAUDE_PLUGIN_ROOT}/hooks/baton", "mcp"] });
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the agent's variable, expanded by the agent
  expect(gemini.mcpServers.baton).toEqual({ command: "sh", args: ["${extensionPath}${/}hooks${/}baton", "mcp"] });
  const market = json(".claude-plugin/marketplace.json");
  expect(market.plugins.map((p: { name: string; source: string }) => [p.name, p.source])).toEqual([["baton", "./plugins/claude-code"]]);
  // Copilot CLI reads .github/plugin/marketplace.json before .claude-plugin/marketplace.json.
  const copilotMarket = json(".github/plugin/marketplace.json");
  expect(copilotMarket.name).toBe(market.name);
  expect(copilotMarket.plugins.map((p: { name: string; source: string }) => [p.name, p.source])).toEqual([
    ["baton", "./plugins/copilot-cli"],
  ]);
});

test("the npm package ships the plugins and the extension", () => {
  const r = spawnSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: REPO, encoding: "utf8", timeout: 120_000 });
  expect(r.status, r.stderr).toBe(0);
  const files = new Set<string>(JSON.parse(r.stdout)[0].files.map((f: { path: string }) => f.path));
  for (const f of [
    ".claude-plugin/marketplace.json",
    ".github/plugin/marketplace.json",
    "plugins/copilot-cli/plugin.json",
    "plugins/copilot-cli/hooks/hooks.json",
    "plugins/copilot-cli/hooks/baton",
    "plugins/claude-code/.claude-plugin/plugin.json",
    "plugins/claude-code/hooks/hooks.json",
    "plugins/claude-code/hooks/baton",
    "gemini-extension.json",
    "hooks/hooks.json",
    "hooks/baton",
    "plugins/opencode/baton.js",
  ])
    expect(files.has(f), f).toBe(true);
});

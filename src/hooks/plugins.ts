/**
 * Baton packaged the way each agent installs extensions: a Claude Code plugin
 * (`plugins/claude-code/`, listed by the marketplace `.claude-plugin/marketplace.json`), a
 * GitHub Copilot CLI plugin (`plugins/copilot-cli/`, listed by `.github/plugin/marketplace.json`)
 * and a Gemini CLI extension (the repository root: `gemini-extension.json`, `hooks/hooks.json`).
 *
 * Their hooks are the ones `baton hooks install` writes (the same events, matchers and time
 * limits, from the adapters' `hookSpecs`), run through the plugin's own launcher script
 * (`hooks/baton`: the `baton` on PATH, and a clear message once per session without one).
 * `pluginHooks` is what the committed files must hold (test/plugins.test.ts keeps them equal).
 */
import { readdirSync, realpathSync } from "node:fs";
import { join, resolve } from "node:path";
import { ADAPTERS } from "../core/hooks/adapters.js";
import { addBatonHooks, type HookAgent, listBatonHooks } from "../core/hooks/config.js";
import type { JsonObject } from "../core/types.js";
import { userHome } from "../platform/home.js";
import { jsonFile } from "./agent-setup.js";
import { claudeConfigDir } from "./claude-setup.js";
import { copilotConfigFile, copilotHome, copilotTrusts, gitTop } from "./copilot-setup.js";
import type { HookScope } from "./places.js";
import type { SetupPlace } from "./readiness.js";
import { settingsObjectAt } from "./settings-object.js";

/** The agents Baton ships a plugin or an extension for. */
export type PluginAgent = Extract<HookAgent, "claude" | "gemini" | "copilot">;
export const PLUGIN_AGENTS: readonly PluginAgent[] = Object.freeze(["claude", "gemini", "copilot"]);

/** What the agent calls it, and where it is in the repository (and the npm package). */
export const PLUGIN_ROUTES: Readonly<Record<PluginAgent, { kind: "plugin" | "extension"; dir: string }>> = {
  claude: { kind: "plugin", dir: "plugins/claude-code" },
  gemini: { kind: "extension", dir: "." },
  copilot: { kind: "plugin", dir: "plugins/copilot-cli" },
};

/** The launcher each plugin's hooks run, through the agent's own variable for the plugin's directory. */
export const PLUGIN_LAUNCHERS: Readonly<Record<PluginAgent, string>> = {
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the agent's variable, expanded by the agent
  claude: 'sh "${CLAUDE_PLUGIN_ROOT}/hooks/baton"',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the agent's variable, expanded by the agent
  gemini: 'sh "${extensionPath}/hooks/baton"',
  // Copilot CLI expands no variable in a hook's command: it gives the hook's process the plugin's
  // directory as COPILOT_PLUGIN_ROOT (and PLUGIN_ROOT, CLAUDE_PLUGIN_ROOT), which the shell expands.
  copilot: 'sh "$COPILOT_PLUGIN_ROOT/hooks/baton"',
};

/**
 * What the plugin route cannot carry, beyond the agent's own limits (`baton hooks status` lists
 * them with the plugin). Copilot CLI 1.0.102 starts a plugin's MCP server in the plugin's own
 * directory (a `cwd` outside it is replaced by it), with no variable, argument or MCP root that
 * names the project, so `baton mcp` there could not find the workspace: the plugin has none.
 */
export const PLUGIN_LIMITS: Readonly<Record<PluginAgent, readonly string[]>> = {
  claude: [],
  gemini: [],
  copilot: [
    "Copilot CLI's plugin carries no MCP server: Copilot CLI starts a plugin's MCP server in the plugin's own directory and tells it nothing of the project, so it could not find the workspace. Register Baton's with `copilot mcp add baton -- baton mcp`.",
  ],
};

/** The `hooks/hooks.json` of the agent's plugin: `{ "hooks": { … } }` (Copilot CLI's with its `"version": 1`). */
export function pluginHooks(agent: PluginAgent): JsonObject {
  // Not an event newer than some of the agent's versions: a version without it may skip the file.
  const specs = ADAPTERS[agent].hookSpecs(PLUGIN_LAUNCHERS[agent]).filter((s) => s.since === undefined);
  const hooks = addBatonHooks(undefined, specs, agent);
  return agent === "copilot" ? { version: 1, hooks } : { hooks };
}

/** Baton installed as an agent's plugin or extension, as the agent's own files record it. */
export interface PluginInstall {
  agent: PluginAgent;
  /** The agent's name for it: `baton@agent-baton` (Claude Code, Copilot CLI), `baton` (Gemini CLI). */
  id: string;
  /** Where it applies: the user's (every project) or this project's (Claude Code's project and local scopes). */
  scope: HookScope;
  shared: boolean;
  /** The directory the agent loads it from. */
  dir: string;
  /** Its `hooks/hooks.json`. */
  hooksFile: string;
  /** The hooks it holds (the file's `hooks` value). */
  hooks: unknown;
  /** The agent runs it in this project (Claude Code, Copilot CLI: `enabledPlugins`; Gemini CLI: its extension enablement). */
  enabled: boolean;
  /** The repository's own settings file that turns it off here (Copilot CLI, in a trusted folder). */
  disabledBy?: string;
  /** Loaded live from a local marketplace's directory (Copilot CLI): its uninstall only disables it. */
  live?: boolean;
}

function dirs(parent: string): string[] {
  try {
    return readdirSync(parent, { withFileTypes: true })
      .filter((d) => d.isDirectory() || d.isSymbolicLink())
      .map((d) => join(parent, d.name));
  } catch {
    return [];
  }
}

function same(a: string, b: string): boolean {
  const r = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return resolve(p);
    }
  };
  return r(a) === r(b);
}

/**
 * Claude Code: `<config>/plugins/installed_plugins.json` lists each install (`scope` user,
 * project or local, with its `projectPath`) and the directory it loads it from; the plugin is
 * on where the merged `enabledPlugins` (user settings, then the project's, then the local file)
 * says true. Baton's plugin is the one whose hooks.json holds Baton's hooks, whatever its name.
 */
function claudePlugins(o: SetupPlace): PluginInstall[] {
  const config = claudeConfigDir(o);
  const installed = jsonFile(join(config, "plugins", "installed_plugins.json"))?.plugins;
  if (installed === null || typeof installed !== "object" || Array.isArray(installed)) return [];
  const enabled: Record<string, unknown> = {};
  for (const f of [join(config, "settings.json"), join(o.root, ".claude", "settings.json"), join(o.root, ".claude", "settings.local.json")])
    Object.assign(enabled, (jsonFile(f)?.enabledPlugins as JsonObject | undefined) ?? {});
  const out: PluginInstall[] = [];
  for (const [id, entries] of Object.entries(installed)) {
    for (const e of Array.isArray(entries) ? entries : []) {
      const entry = e as JsonObject;
      if (typeof entry.installPath !== "string") continue;
      const scope = entry.scope === "project" || entry.scope === "local" ? "project" : "user";
      if (scope === "project" && (typeof entry.projectPath !== "string" || !same(entry.projectPath, o.root))) continue;
      const hooksFile = join(entry.installPath, "hooks", "hooks.json");
      const hooks = jsonFile(hooksFile)?.hooks;
      if (listBatonHooks(hooks, "claude").length === 0) continue;
      // Installed for the user and for this project too: Claude Code loads it once.
      const earlier = out.findIndex((x) => x.id === id);
      if (earlier >= 0 && scope === "user") continue;
      if (earlier >= 0) out.splice(earlier, 1);
      out.push({
        agent: "claude",
        id,
        scope,
        shared: entry.scope === "project",
        dir: entry.installPath,
        hooksFile,
        hooks,
        enabled: enabled[id] === true,
      });
    }
  }
  return out;
}

/** Gemini CLI's extension enablement: on unless a rule of `extension-enablement.json` matching the folder says off (the last match wins). */
function geminiEnabled(rules: unknown, folder: string): boolean {
  const overrides = (rules as JsonObject | undefined)?.overrides;
  let on = true;
  const path = `${resolve(folder).replace(/\\/g, "/").replace(/\/?$/, "/")}`;
  for (const rule of Array.isArray(overrides) ? overrides : []) {
    if (typeof rule !== "string") continue;
    const off = rule.startsWith("!");
    let base = off ? rule.slice(1) : rule;
    const subdirs = base.endsWith("*");
    if (subdirs) base = base.slice(0, -1);
    base = base.replace(/\\/g, "/");
    if (!base.startsWith("/")) base = `/${base}`;
    if (!base.endsWith("/")) base = `${base}/`;
    if (path === base || (subdirs && path.startsWith(base))) on = !off;
  }
  return on;
}

/**
 * Gemini CLI: each directory of `~/.gemini/extensions/` is an extension (a linked one names its
 * source in `.gemini-extension-install.json`), its hooks in `hooks/hooks.json`; enablement is
 * `~/.gemini/extensions/extension-enablement.json`.
 */
function geminiExtensions(o: SetupPlace): PluginInstall[] {
  const base = join(o.home ?? userHome(), ".gemini", "extensions");
  const enablement = jsonFile(join(base, "extension-enablement.json")) ?? {};
  const out: PluginInstall[] = [];
  for (const installed of dirs(base)) {
    const meta = jsonFile(join(installed, ".gemini-extension-install.json"));
    const dir = meta?.type === "link" && typeof meta.source === "string" ? meta.source : installed;
    const name = jsonFile(join(dir, "gemini-extension.json"))?.name;
    if (typeof name !== "string") continue;
    const hooksFile = join(dir, "hooks", "hooks.json");
    const hooks = jsonFile(hooksFile)?.hooks;
    if (listBatonHooks(hooks, "gemini").length === 0) continue;
    out.push({
      agent: "gemini",
      id: name,
      scope: "user",
      shared: false,
      dir,
      hooksFile,
      hooks,
      enabled: geminiEnabled(enablement[name], o.root),
    });
  }
  return out;
}

/** A plugin directory's hooks file as Copilot CLI finds it: the manifest's `hooks` path, else `hooks.json`, else `hooks/hooks.json`. */
function copilotHooksFile(dir: string): string {
  for (const m of ["plugin.json", join(".github", "plugin", "plugin.json"), join(".claude-plugin", "plugin.json")]) {
    const manifest = jsonFile(join(dir, m));
    if (manifest === undefined) continue;
    if (typeof manifest.hooks === "string") return resolve(dir, manifest.hooks);
    break;
  }
  const top = join(dir, "hooks.json");
  return jsonFile(top) !== undefined ? top : join(dir, "hooks", "hooks.json");
}

/** The directory of `plugin` in the marketplace at `root` (its `.github/plugin/marketplace.json` first, as Copilot CLI reads it). */
function marketplacePluginDir(root: string, plugin: string): string | undefined {
  for (const m of [
    join(".plugin", "marketplace.json"),
    join(".github", "plugin", "marketplace.json"),
    join(".claude-plugin", "marketplace.json"),
  ]) {
    const market = jsonFile(join(root, m));
    if (market === undefined) continue;
    const plugins = Array.isArray(market.plugins) ? market.plugins : [];
    const entry = plugins.find((p) => (p as JsonObject | null)?.name === plugin) as JsonObject | undefined;
    // A relative source (Baton's); a GitHub or URL source is copied at install, into config.json's records.
    return typeof entry?.source === "string" ? resolve(root, entry.source) : undefined;
  }
  return undefined;
}

/**
 * GitHub Copilot CLI (1.0.102, as its `copilot plugin` commands record installs): a copied
 * install (a GitHub marketplace's plugin, or a direct install) is an entry of `installedPlugins`
 * in `$COPILOT_HOME/config.json` (`name`, `marketplace`, `cache_path`, `enabled`); a plugin of a
 * marketplace on a local directory is loaded live from it, recorded only in
 * `$COPILOT_HOME/settings.json`: its marketplace in `extraKnownMarketplaces` (`source.path`).
 * A marketplace plugin is on where `enabledPlugins["<name>@<marketplace>"]` of settings.json says
 * so (`copilot plugin uninstall` of a live plugin only sets it false), a direct one where its
 * entry's `enabled` is not false. Plugins apply to every folder, trusted or not.
 */
function copilotPlugins(o: SetupPlace): PluginInstall[] {
  const home = copilotHome(o);
  const settings = settingsObjectAt(join(home, "settings.json")) ?? {};
  const enabledPlugins = (settings.enabledPlugins as JsonObject | undefined) ?? {};
  const found: { id: string; dir: string; enabled: boolean; live?: boolean; disabledBy?: string; userEnabled?: boolean }[] = [];
  const installed = settingsObjectAt(join(home, "config.json"))?.installedPlugins;
  for (const e of Array.isArray(installed) ? installed : []) {
    const entry = e as JsonObject;
    if (typeof entry?.name !== "string" || typeof entry.cache_path !== "string") continue;
    const market = typeof entry.marketplace === "string" && entry.marketplace !== "" ? entry.marketplace : undefined;
    const id = market ? `${entry.name}@${market}` : entry.name;
    const on = market && typeof enabledPlugins[id] === "boolean" ? enabledPlugins[id] === true : entry.enabled !== false;
    found.push({ id, dir: entry.cache_path, enabled: on });
  }
  const markets = (settings.extraKnownMarketplaces as JsonObject | undefined) ?? {};
  for (const [id, on] of Object.entries(enabledPlugins)) {
    const at = id.lastIndexOf("@");
    if (at <= 0 || found.some((f) => f.id === id)) continue;
    const source = ((markets[id.slice(at + 1)] as JsonObject | undefined)?.source as JsonObject | undefined) ?? {};
    if (source.source !== "directory" || typeof source.path !== "string") continue;
    const dir = marketplacePluginDir(source.path, id.slice(0, at));
    if (dir !== undefined) found.push({ id, dir, enabled: on === true, live: true });
  }
  // In a trusted folder the repository's settings overlay the user's: a repository can turn a
  // plugin off there (`enabledPlugins`), the user's own included.
  for (const f of found) f.userEnabled = f.enabled;
  const repo = gitTop(o.root) ?? o.root;
  if (copilotTrusts(settingsObjectAt(copilotConfigFile(o)), repo))
    for (const file of [join(repo, ".github", "copilot", "settings.json"), join(repo, ".github", "copilot", "settings.local.json")]) {
      // In Copilot CLI's order: the later file decides. A repository's `true` is taken only
      // against the other repository file's `false` (never said to turn on what the user turned off).
      const overlay = settingsObjectAt(file)?.enabledPlugins as JsonObject | undefined;
      for (const f of found) {
        if (overlay?.[f.id] === false) {
          f.enabled = false;
          f.disabledBy = file;
        } else if (overlay?.[f.id] === true && f.disabledBy !== undefined) {
          f.enabled = f.userEnabled === true;
          delete f.disabledBy;
        }
      }
    }
  const out: PluginInstall[] = [];
  for (const f of found) {
    const hooksFile = copilotHooksFile(f.dir);
    const hooks = jsonFile(hooksFile)?.hooks;
    if (listBatonHooks(hooks, "copilot").length === 0) continue;
    out.push({
      agent: "copilot",
      id: f.id,
      scope: "user",
      shared: false,
      dir: f.dir,
      hooksFile,
      hooks,
      enabled: f.enabled,
      ...(f.disabledBy !== undefined ? { disabledBy: f.disabledBy } : {}),
      ...(f.live ? { live: true } : {}),
    });
  }
  return out;
}

/** Baton's plugin (Claude Code, Copilot CLI) and extension (Gemini CLI) as installed for the project at `o.root`. */
export function pluginInstalls(agent: HookAgent, o: Omit<SetupPlace, "scope">): PluginInstall[] {
  const place = { ...o, scope: "user" as const };
  if (agent === "claude") return claudePlugins(place);
  if (agent === "gemini") return geminiExtensions(place);
  if (agent === "copilot") return copilotPlugins(place);
  return [];
}

/** The agent's own command that removes it. */
export function pluginUninstall(p: PluginInstall): string {
  if (p.agent === "claude") return `claude plugin uninstall ${p.id}`;
  if (p.agent === "copilot") return `copilot plugin uninstall ${p.id}`;
  return `gemini extensions uninstall ${p.id}`;
}

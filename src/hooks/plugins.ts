/**
 * Baton packaged the way each agent installs extensions: a Claude Code plugin
 * (`plugins/claude-code/`, listed by the marketplace `.claude-plugin/marketplace.json`) and a
 * Gemini CLI extension (the repository root: `gemini-extension.json`, `hooks/hooks.json`).
 *
 * Their hooks are the ones `baton hooks install` writes (the same events, matchers and time
 * limits, from the adapters' `hookSpecs`), run through the plugin's own launcher script
 * (`hooks/baton`: the `baton` on PATH, and a clear message once per session without one).
 * `pluginHooks` is what the committed files must hold (test/plugins.test.ts keeps them equal).
 */
import { readdirSync, realpathSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { ADAPTERS } from "../core/hooks/adapters.js";
import { addBatonHooks, type HookAgent, listBatonHooks } from "../core/hooks/config.js";
import type { JsonObject } from "../core/types.js";
import { jsonFile } from "./agent-setup.js";
import { claudeConfigDir } from "./claude-setup.js";
import type { HookScope } from "./places.js";
import type { SetupPlace } from "./readiness.js";

/** The agents Baton ships a plugin or an extension for. */
export type PluginAgent = Extract<HookAgent, "claude" | "gemini">;
export const PLUGIN_AGENTS: readonly PluginAgent[] = Object.freeze(["claude", "gemini"]);

/** What the agent calls it, and where it is in the repository (and the npm package). */
export const PLUGIN_ROUTES: Readonly<Record<PluginAgent, { kind: "plugin" | "extension"; dir: string }>> = {
  claude: { kind: "plugin", dir: "plugins/claude-code" },
  gemini: { kind: "extension", dir: "." },
};

/** The launcher each plugin's hooks run, through the agent's own variable for the plugin's directory. */
export const PLUGIN_LAUNCHERS: Readonly<Record<PluginAgent, string>> = {
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the agent's variable, expanded by the agent
  claude: 'sh "${CLAUDE_PLUGIN_ROOT}/hooks/baton"',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the agent's variable, expanded by the agent
  gemini: 'sh "${extensionPath}/hooks/baton"',
};

/** The `hooks/hooks.json` of the agent's plugin: `{ "hooks": { … } }`. */
export function pluginHooks(agent: PluginAgent): JsonObject {
  return { hooks: addBatonHooks(undefined, ADAPTERS[agent].hookSpecs(PLUGIN_LAUNCHERS[agent]), agent) };
}

/** Baton installed as an agent's plugin or extension, as the agent's own files record it. */
export interface PluginInstall {
  agent: PluginAgent;
  /** The agent's name for it: `baton@agent-baton` (Claude Code), `baton` (Gemini CLI). */
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
  /** The agent runs it in this project (Claude Code: `enabledPlugins`; Gemini CLI: its extension enablement). */
  enabled: boolean;
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
  const base = join(o.home ?? homedir(), ".gemini", "extensions");
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

/** Baton's plugin (Claude Code) and extension (Gemini CLI) as installed for the project at `o.root`. */
export function pluginInstalls(agent: HookAgent, o: Omit<SetupPlace, "scope">): PluginInstall[] {
  const place = { ...o, scope: "user" as const };
  if (agent === "claude") return claudePlugins(place);
  if (agent === "gemini") return geminiExtensions(place);
  return [];
}

/** The agent's own command that removes it. */
export function pluginUninstall(p: PluginInstall): string {
  return p.agent === "claude" ? `claude plugin uninstall ${p.id}` : `gemini extensions uninstall ${p.id}`;
}

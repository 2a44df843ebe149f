/**
 * Baton's own plugin and extension files wherever they are (hooks/plugins.ts): a local
 * marketplace's plugin or a linked extension is loaded live from its directory, often a global
 * npm install of agent-baton the user can write to, or a checkout. A write tool that changes one
 * (empties hooks.json, turns the launcher into `exit 0`) switches supervision off from the next
 * session, so the write-tool guard refuses them by what they hold, not by where they are. The
 * agents' configuration moved by environment variables (moved-config.ts) is guarded as its
 * default places are (core/hooks/baton-command.ts), as is a `baton` in PATH (what every
 * committed hook and plugin launcher runs); a link is judged by where it leads, a dangling one
 * included. Those two rules read the hook's environment: such a write is judged in the hook's
 * own process, not by the server, whose environment is not the agent's (hooks/server-first.ts).
 */
import { basename, delimiter, dirname, isAbsolute, join, resolve } from "node:path";
import { isSupervisionFile } from "../core/hooks/baton-command.js";
import { listBatonHooks } from "../core/hooks/config.js";
import { OPENCODE_PLUGIN_MARK } from "../core/hooks/opencode.js";
import { batonProgramName, movedAgentConfig, realOr } from "./moved-config.js";
import { listsBatonNpmPlugin } from "./opencode-npm.js";
import { readSettingsText } from "./settings-text.js";

/** The comment every plugin's launcher (`hooks/baton`) opens with. */
export const LAUNCHER_MARK = "# Runs Baton for its ";

const PLUGIN_AGENTS = ["claude", "gemini", "copilot"] as const;

function text(file: string, max = 1024 * 1024): string | undefined {
  try {
    return readSettingsText(file, max);
  } catch {
    return undefined;
  }
}

function json(file: string): Record<string, unknown> | undefined {
  const t = text(file);
  if (t === undefined) return undefined;
  try {
    const v = JSON.parse(t) as unknown;
    return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function holdsBatonHooks(hooksFile: string): boolean {
  const hooks = json(hooksFile)?.hooks;
  return PLUGIN_AGENTS.some((a) => listBatonHooks(hooks, a).length > 0);
}

/**
 * Whether `file` is one of Baton's plugin or extension files as it is now: a `hooks.json` holding
 * Baton's hooks, a plugin's launcher, the manifest beside (or above) such a hooks file, or Baton's
 * marketplace, OpenCode's plugin module (Baton's mark on its first line: the npm package's
 * plugins/opencode/baton.js, installed in OpenCode's cache), or an opencode.json(c) whose "plugin"
 * list names Baton's npm package. Only those names are read, each bounded and without blocking.
 */
export function isBatonPluginFile(file: string): boolean {
  const name = basename(file);
  const dir = dirname(file);
  switch (name) {
    case "hooks.json":
      return holdsBatonHooks(file);
    case "baton":
      return (text(file, 64 * 1024) ?? "").split("\n", 3).some((l) => l.startsWith(LAUNCHER_MARK));
    case "plugin.json":
    case "gemini-extension.json":
      // Copilot CLI's and Gemini CLI's manifests sit at the plugin's root, Claude Code's in `.claude-plugin/`.
      return holdsBatonHooks(join(dir, "hooks", "hooks.json")) || holdsBatonHooks(join(dir, "..", "hooks", "hooks.json"));
    case "marketplace.json":
      return json(file)?.name === "agent-baton";
    case "baton.js":
      return (text(file, 64 * 1024) ?? "").split("\n", 1)[0] === OPENCODE_PLUGIN_MARK;
    case "opencode.json":
    case "opencode.jsonc":
      return listsBatonNpmPlugin(file);
    case "config.json":
      // OpenCode's user folder also reads its older name.
      return basename(dir) === "opencode" && listsBatonNpmPlugin(file);
    default:
      return false;
  }
}

/** Whether `file` would be run as `baton` by a hook or a plugin's launcher: a program of that name in one of PATH's absolute folders. */
export function isBatonOnPath(file: string, env: NodeJS.ProcessEnv = process.env): boolean {
  if (!batonProgramName.test(basename(file))) return false;
  const dir = dirname(file);
  return (env.PATH ?? "").split(delimiter).some((d) => isAbsolute(d) && (resolve(d) === dir || realOr(d) === realOr(dir)));
}

/**
 * A file a write tool may not change (the supervision guard, services/agents/tools.ts): by its
 * name and by where its links lead (a link, or the npm bin of a guarded file), an agent's
 * supervision files (core/hooks/baton-command.ts) where they are or where a variable moved
 * them, Baton's plugin files wherever they are, and a `baton` in PATH.
 */
export function isGuardedWrite(file: string, root: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const real = realOr(file);
  const moved = movedAgentConfig(root, env);
  return [file, real].some((p) => isBatonOnPath(p, env) || isSupervisionFile(p) || moved(p) || isBatonPluginFile(p));
}

/**
 * What OpenCode (opencode-ai 1.18.33) needs before it loads Baton's plugin, read from its
 * shipped CLI and runs of it. Nothing here is the installer's to do.
 *
 * - It loads every `.js`/`.ts` module in `.opencode/plugins/` (and `plugin/`) of the project and
 *   of its user folder (`$XDG_CONFIG_HOME/opencode`, else `~/.config/opencode`) at start, with no
 *   trust prompt.
 * - `opencode --pure` (or `OPENCODE_PURE` in its environment) loads no plugins but its own;
 *   `OPENCODE_DISABLE_PROJECT_CONFIG` skips the project's `.opencode/` folder.
 * - An npm plugin (platform/opencode-npm.ts) is listed in an `opencode.json(c)`: `opencode plugin
 *   <spec>` writes the list in `<git root>/.opencode/`, `--global` in its user folder; OpenCode also
 *   reads the project's own `opencode.json(c)`. It installs the package into its cache folder
 *   (`$XDG_CACHE_HOME/opencode`, else `~/.cache/opencode`), under `packages/<spec>` (a bare name
 *   as `<name>@latest`), and loads it from there from then on.
 */
import { realpathSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { userHome } from "../platform/home.js";
import { OPENCODE_CONFIG_NAMES, OPENCODE_NPM_PACKAGE } from "../platform/opencode-npm.js";
import type { Readiness, SetupPlace } from "./readiness.js";

/** OpenCode's user folder: `$XDG_CONFIG_HOME/opencode`, else `~/.config/opencode`. */
export function opencodeConfigDir(o: { home?: string; env?: NodeJS.ProcessEnv; root: string }): string {
  const xdg = (o.env ?? process.env).XDG_CONFIG_HOME;
  if (xdg && isAbsolute(xdg)) return join(xdg, "opencode");
  return join(o.home ?? userHome(), ".config", "opencode");
}

/** OpenCode's cache folder: `$XDG_CACHE_HOME/opencode`, else `~/.cache/opencode`. */
export function opencodeCacheDir(o: { home?: string; env?: NodeJS.ProcessEnv }): string {
  const xdg = (o.env ?? process.env).XDG_CACHE_HOME;
  if (xdg && isAbsolute(xdg)) return join(xdg, "opencode");
  return join(o.home ?? userHome(), ".cache", "opencode");
}

/** Where OpenCode's npm install of Baton's package for `spec` is (there or not yet). */
export function opencodeNpmPackageDir(o: { home?: string; env?: NodeJS.ProcessEnv }, spec: string): string {
  const folder = spec === OPENCODE_NPM_PACKAGE ? `${spec}@latest` : spec;
  return join(opencodeCacheDir(o), "packages", folder, "node_modules", OPENCODE_NPM_PACKAGE);
}

/** The configuration files OpenCode reads at a place that may list an npm plugin, in the order it prefers them. */
export function opencodeConfigFiles(o: SetupPlace): string[] {
  if (o.scope === "project")
    return [join(o.root, ".opencode"), o.root].flatMap((dir) => OPENCODE_CONFIG_NAMES.map((name) => join(dir, name)));
  // The user's folder also holds an older name, and OPENCODE_CONFIG names one more file.
  const extra = (o.env ?? process.env).OPENCODE_CONFIG;
  return [
    ...[...OPENCODE_CONFIG_NAMES, "config.json"].map((name) => join(opencodeConfigDir(o), name)),
    ...(extra && isAbsolute(extra) ? [extra] : []),
  ];
}

/** Where Baton's plugin goes. */
export function opencodePluginFile(o: SetupPlace): string {
  return o.scope === "user" ? join(opencodeConfigDir(o), "plugins", "baton.js") : join(o.root, ".opencode", "plugins", "baton.js");
}

/**
 * What the plugin runs, as words: `baton` from PATH for a committed plugin, else this Node and
 * this baton's entry by absolute path (`command`: the words `--command` gave).
 */
export function opencodeLauncher(shared: boolean, command: string[] | undefined, argv1 = process.argv[1]): string[] {
  if (command !== undefined && command.length > 0) return command;
  if (shared || !argv1 || !/baton(?:\.c?js)?$/.test(argv1)) return ["baton"];
  let entry = argv1;
  try {
    entry = realpathSync(argv1);
  } catch {
    // as given
  }
  return [process.execPath, resolve(entry)];
}

function truthy(v: string | undefined): boolean {
  return v !== undefined && v !== "" && v !== "0" && v.toLowerCase() !== "false";
}

/** Whether OpenCode will load the plugin at this place, as far as this environment tells. */
export function opencodeReadiness(o: SetupPlace): Readiness {
  const env = o.env ?? process.env;
  const remaining: string[] = [];
  if (truthy(env.OPENCODE_PURE))
    remaining.push("OPENCODE_PURE is set here: OpenCode loads no plugins but its own (as with --pure). Unset it.");
  if (o.scope === "project" && truthy(env.OPENCODE_DISABLE_PROJECT_CONFIG))
    remaining.push(
      "OPENCODE_DISABLE_PROJECT_CONFIG is set here: OpenCode skips the project's .opencode/ folder and its plugins. Unset it, or install with --user.",
    );
  return { willRun: remaining.length === 0, remaining };
}

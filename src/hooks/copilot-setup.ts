/**
 * What GitHub Copilot CLI needs before it runs the hooks Baton installed (the pinned CLI,
 * @github/copilot 1.0.102: `copilot help config`, `copilot help environment`, its changelog, and
 * runs of it). Nothing here is the installer's to do: trusting a folder is the user's step.
 *
 * - A project's `.github/hooks/` loads only in a trusted folder, in `copilot -p` too: one listed
 *   (or under one listed) in `trustedFolders` of `$COPILOT_HOME/config.json` (which the CLI's
 *   trust prompt writes; `~/.copilot` by default), or a run with `--trust-folder` (that run only)
 *   or with `COPILOT_ALLOW_ALL=true` exactly in its environment. The user's own hooks
 *   (`$COPILOT_HOME/hooks/`) load in every folder.
 * - It reads `.github/hooks/` at the git repository's root (or the folder it starts in, outside
 *   one): a project whose Baton root is below its repository's root is not where it looks.
 * - `"disableAllHooks": true` in a settings file it reads (`$COPILOT_HOME/settings.json` or
 *   config.json, `.github/copilot/settings.json` or `settings.local.json` at the repository's
 *   root) turns every hook off, the user's hooks too.
 */
import { spawnSync } from "node:child_process";
import { realpathSync } from "node:fs";
import { isAbsolute, join, resolve, sep } from "node:path";
import type { JsonObject } from "../core/types.js";
import { userHome } from "../platform/home.js";
import type { Readiness, SetupPlace } from "./readiness.js";
import { settingsObjectAt } from "./settings-object.js";

/** Copilot CLI's directory: `$COPILOT_HOME`, else `~/.copilot`. */
export function copilotHome(o: { home?: string; env?: NodeJS.ProcessEnv; root: string }): string {
  const dir = (o.env ?? process.env).COPILOT_HOME;
  if (dir) return isAbsolute(dir) ? dir : resolve(o.root, dir);
  return join(o.home ?? userHome(), ".copilot");
}

/** The file whose `trustedFolders` Copilot CLI's trust prompt writes. */
export function copilotConfigFile(o: SetupPlace): string {
  return join(copilotHome(o), "config.json");
}

export function spellings(p: string): string[] {
  const a = resolve(p);
  let b = a;
  try {
    b = realpathSync(a);
  } catch {
    // as given
  }
  return a === b ? [a] : [b, a];
}

function within(dir: string, p: string): boolean {
  const d = resolve(dir);
  return p === d || p.startsWith(d.endsWith(sep) ? d : `${d}${sep}`);
}

/** Whether `trustedFolders` (config.json) trusts `folder`: it or a folder above it is listed. */
export function copilotTrusts(config: JsonObject | undefined, folder: string): boolean {
  const list = config?.trustedFolders;
  if (!Array.isArray(list)) return false;
  return spellings(folder).some((f) => list.some((t) => typeof t === "string" && t !== "" && within(t, f)));
}

/** The git repository's root above `root`, when there is one (the repository's fsmonitor off: its config starts no program). */
export function gitTop(root: string): string | undefined {
  try {
    const r = spawnSync("git", ["-c", "core.fsmonitor=false", "-C", root, "rev-parse", "--show-toplevel"], {
      encoding: "utf8",
      timeout: 5_000,
    });
    return r.status === 0 && r.stdout.trim() !== "" ? r.stdout.trim() : undefined;
  } catch {
    return undefined;
  }
}

/** Whether Copilot CLI will run the hooks at this place, and what remains. */
export function copilotReadiness(o: SetupPlace): Readiness {
  const home = copilotHome(o);
  const configFile = copilotConfigFile(o);
  const remaining: string[] = [];
  // The repository's settings are read at its root, as its .github/hooks/ are (whichever scope
  // installed the hooks: a repository can turn the user's off too).
  const top = gitTop(o.root);
  const repo = top ?? o.root;
  const files = [
    join(home, "settings.json"),
    configFile,
    join(repo, ".github", "copilot", "settings.json"),
    join(repo, ".github", "copilot", "settings.local.json"),
  ];
  const off = files.find((f) => settingsObjectAt(f)?.disableAllHooks === true);
  if (off) remaining.push(`Copilot CLI runs no hooks while ${off} sets "disableAllHooks": true: remove it, or set it to false.`);
  if (o.scope === "project" && top !== undefined && spellings(top)[0] !== spellings(o.root)[0])
    remaining.push(
      `Copilot CLI reads .github/hooks/ at the repository's root, ${top}, not in ${o.root}: install from the repository's root (\`baton hooks install copilot --root ${top}\`), or with --user.`,
    );
  if (o.scope === "project" && !copilotTrusts(settingsObjectAt(configFile), o.root))
    remaining.push(
      `Copilot CLI loads ${join(o.root, ".github", "hooks")} only in a trusted folder: run \`copilot\` in ${o.root} once and trust the folder, or add ${JSON.stringify(spellings(o.root)[0])} to "trustedFolders" in ${configFile}.`,
    );
  return { willRun: remaining.length === 0, remaining, ...(o.scope === "project" ? { trustFile: configFile } : {}) };
}

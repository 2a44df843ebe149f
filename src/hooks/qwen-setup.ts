import { platform } from "node:os";
import { dirname, isAbsolute, join, parse as parsePath, resolve, sep } from "node:path";
import type { JsonObject } from "../core/types.js";
import { userHome } from "../platform/home.js";
import type { Readiness, SetupPlace } from "./readiness.js";
import { settingsObjectAt } from "./settings-object.js";

/**
 * Qwen Code's user directory: `$QWEN_HOME` (a leading `~` is the home directory, a relative path
 * is taken from where Qwen Code starts: here, the project), else `~/.qwen`.
 */
export function qwenHome(o: { home?: string; env?: NodeJS.ProcessEnv; root: string }): string {
  const home = o.home ?? userHome();
  const dir = (o.env ?? process.env).QWEN_HOME;
  if (!dir) return join(home, ".qwen");
  if (dir === "~" || dir.startsWith("~/")) return join(home, dir.slice(1));
  return isAbsolute(dir) ? dir : resolve(o.root, dir);
}

function systemSettingsFile(env: NodeJS.ProcessEnv): string {
  if (env.QWEN_CODE_SYSTEM_SETTINGS_PATH) return env.QWEN_CODE_SYSTEM_SETTINGS_PATH;
  if (platform() === "darwin") return "/Library/Application Support/QwenCode/settings.json";
  if (platform() === "win32") return "C:\\ProgramData\\qwen-code\\settings.json";
  return "/etc/qwen-code/settings.json";
}

function systemDefaultsFile(env: NodeJS.ProcessEnv): string {
  return env.QWEN_CODE_SYSTEM_DEFAULTS_PATH || join(dirname(systemSettingsFile(env)), "system-defaults.json");
}

/** Qwen Code's trust file: `QWEN_CODE_TRUSTED_FOLDERS_PATH`, else `$QWEN_HOME/trustedFolders.json`. */
export function qwenTrustedFoldersFile(o: SetupPlace): string {
  const env = o.env ?? process.env;
  return env.QWEN_CODE_TRUSTED_FOLDERS_PATH || join(qwenHome(o), "trustedFolders.json");
}

function depth(p: string): number {
  return p.slice(parsePath(p).root.length).split(sep).filter(Boolean).length;
}

function within(dir: string, p: string): boolean {
  return p === dir || p.startsWith(dir.endsWith(sep) ? dir : `${dir}${sep}`);
}

/** Qwen Code's verdict for a folder from trustedFolders.json: true, false, or undefined (no rule). */
export function qwenFolderTrust(rules: JsonObject, folder: string): boolean | undefined {
  const at = resolve(folder);
  let best = -1;
  let verdict: boolean | undefined;
  for (const [rule, level] of Object.entries(rules)) {
    if (level !== "TRUST_FOLDER" && level !== "TRUST_PARENT" && level !== "DO_NOT_TRUST") continue;
    const base = resolve(level === "TRUST_PARENT" ? dirname(rule) : rule);
    if (!within(base, at)) continue;
    const d = depth(base);
    const trusted = level !== "DO_NOT_TRUST";
    if (d > best || (d === best && !trusted)) {
      best = d;
      verdict = trusted;
    }
  }
  return verdict;
}

/** Whether Qwen Code will run hooks from `settings` (the file installed into) at this place, and what remains. */
export function qwenReadiness(o: SetupPlace, settings: JsonObject, spellings: (p: string) => string[]): Readiness {
  const env = o.env ?? process.env;
  const userFile = join(qwenHome(o), "settings.json");
  const projectFile = join(o.root, ".qwen", "settings.json");
  const system = settingsObjectAt(systemSettingsFile(env));
  const user = o.scope === "user" ? settings : settingsObjectAt(userFile);
  const project = o.scope === "project" ? settings : settingsObjectAt(projectFile);
  const remaining: string[] = [];
  // The first file that sets it decides, in Qwen Code's order of precedence.
  const layers: [string, JsonObject | undefined][] = [
    [systemSettingsFile(env), system],
    [projectFile, project],
    [userFile, user],
    [systemDefaultsFile(env), settingsObjectAt(systemDefaultsFile(env))],
  ];
  const deciding = layers.find(([, s]) => typeof s?.disableAllHooks === "boolean");
  if (deciding?.[1]?.disableAllHooks === true)
    remaining.push(`Qwen Code runs no hooks while ${deciding[0]} sets "disableAllHooks": true: remove it, or set it to false.`);
  const trustFile = qwenTrustedFoldersFile(o);
  const folderTrust = (s: JsonObject | undefined) =>
    ((s?.security as JsonObject | undefined)?.folderTrust as JsonObject | undefined)?.enabled;
  const trustOn = [system, user].map(folderTrust).find((v) => typeof v === "boolean") === true;
  if (o.scope === "project" && trustOn) {
    const rules = settingsObjectAt(trustFile) ?? {};
    if (!spellings(o.root).some((r) => qwenFolderTrust(rules, r) === true))
      remaining.push(
        `Qwen Code loads a project's hooks only in a trusted folder while folder trust is on (security.folderTrust.enabled): run \`qwen\` in ${o.root} and trust the folder, or add ${JSON.stringify(spellings(o.root)[0])}: "TRUST_FOLDER" to ${trustFile}.`,
      );
  }
  return { willRun: remaining.length === 0, remaining, ...(trustOn ? { trustFile } : {}) };
}

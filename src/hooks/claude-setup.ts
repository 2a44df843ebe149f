/**
 * Whether Claude Code runs the hooks of its settings files and plugins at a place. Its
 * `disableAllHooks` turns them all off (2.1.332: "the hooks defined in settings files and by
 * installed plugins"), and it is read from Claude Code's settings in their order of precedence,
 * the first file that sets it deciding: the managed settings (`/etc/claude-code/` on Linux,
 * `/Library/Application Support/ClaudeCode/` on macOS), the project's local file, the project's
 * `.claude/settings.json`, the user's. A cloned repository can commit it in
 * `.claude/settings.json`, switching off the user's own Baton hooks too: status and doctor say so.
 * Managed settings can also allow only managed hooks (`allowManagedHooksOnly`).
 */
import { spawnSync } from "node:child_process";
import { platform } from "node:os";
import { join } from "node:path";
import { execArgs, handlerCommand, isBatonCommand } from "../core/hooks/config.js";
import type { JsonObject } from "../core/types.js";
import { userHome } from "../platform/home.js";
import type { Readiness, SetupPlace } from "./readiness.js";
import { settingsObjectAt } from "./settings-object.js";

/** Claude Code's user directory: `$CLAUDE_CONFIG_DIR` when set, else `~/.claude`. */
export function claudeConfigDir(o: { home?: string; env?: NodeJS.ProcessEnv }): string {
  return (o.env ?? process.env).CLAUDE_CONFIG_DIR?.trim() || join(o.home ?? userHome(), ".claude");
}

function managedDir(): string {
  return platform() === "darwin" ? "/Library/Application Support/ClaudeCode" : "/etc/claude-code";
}

/** Claude Code's settings files at a place, in its order of precedence, each with what it holds. */
function claudeLayers(o: SetupPlace): (readonly [string, JsonObject | undefined])[] {
  const managed = join(managedDir(), "managed-settings.json");
  const user = join(claudeConfigDir(o), "settings.json");
  return [managed, join(o.root, ".claude", "settings.local.json"), join(o.root, ".claude", "settings.json"), user].map(
    (file) => [file, settingsObjectAt(file)] as const,
  );
}

/**
 * Why Claude Code would block HTTP hooks to `urls`, if it would: `allowedHttpHookUrls`, merged
 * across its settings files, lists the URL patterns HTTP hooks may reach (`*` a wildcard); when
 * any file sets it, a URL no pattern matches is blocked, and an empty list blocks them all.
 */
export function httpHooksBlocked(o: SetupPlace, urls: readonly string[]): string | undefined {
  const setting = claudeLayers(o).filter(([, v]) => Array.isArray(v?.allowedHttpHookUrls));
  if (setting.length === 0) return undefined;
  const patterns = setting.flatMap(([, v]) =>
    ((v?.allowedHttpHookUrls ?? []) as unknown[]).filter((p): p is string => typeof p === "string"),
  );
  const matches = (url: string, p: string) =>
    p === "*" ||
    new RegExp(
      `^${p
        .split("*")
        .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
        .join(".*")}$`,
    ).test(url);
  const blocked = urls.find((u) => !patterns.some((p) => matches(u, p)));
  if (blocked === undefined) return undefined;
  return `Claude Code blocks HTTP hooks to ${blocked}: "allowedHttpHookUrls" in ${setting.map(([f]) => f).join(", ")} allows ${patterns.length === 0 ? "none" : patterns.map((p) => JSON.stringify(p)).join(", ")}. Add "http://127.0.0.1:*/*" there, or install without --http.`;
}

/**
 * `settings`: the file Baton's hooks are in, when its exec-form entries (written for a Claude
 * Code of CLAUDE_EXEC_FORM or later) are to be checked against the `claude` on PATH: an older one
 * runs their `command` without its `args`, and every hook fails.
 */
export function claudeReadiness(o: SetupPlace, settings?: JsonObject): Readiness {
  const layers = claudeLayers(o);
  const managed = layers[0]?.[0] as string;
  const remaining: string[] = [];
  const deciding = layers.find(([, s]) => typeof s?.disableAllHooks === "boolean");
  if (deciding?.[1]?.disableAllHooks === true)
    remaining.push(
      deciding[0] === managed
        ? `Claude Code runs no hooks while its managed settings (${managed}) set "disableAllHooks": true: ask whoever manages this machine.`
        : `Claude Code runs no hooks while ${deciding[0]} sets "disableAllHooks": true: remove it, or set it to false${deciding[0] === layers[2]?.[0] ? ` (or set "disableAllHooks": false in ${layers[1]?.[0]}, which comes first)` : ""}.`,
    );
  else if (layers[0]?.[1]?.allowManagedHooksOnly === true)
    remaining.push(
      `Claude Code runs only managed hooks while ${managed} sets "allowManagedHooksOnly": true: ask whoever manages this machine.`,
    );
  if (settings !== undefined && hasExecForm(settings)) {
    const version = claudeVersion(o.env ?? process.env);
    if (version !== undefined && !versionAtLeast(version, CLAUDE_EXEC_FORM))
      remaining.push(
        `Claude Code here is ${version}, which runs a hook's "command" without its "args" (exec form, ${CLAUDE_EXEC_FORM} and later), so Baton's hooks fail: upgrade Claude Code, or run \`baton hooks install claude${o.scope === "user" ? " --user" : ""}\` again for the form this one runs.`,
      );
  }
  return { willRun: remaining.length === 0, remaining };
}

/** Claude Code's first version with exec-form command hooks (`args`: no shell between it and the hook). */
export const CLAUDE_EXEC_FORM = "2.1.139";

function hasExecForm(settings: JsonObject): boolean {
  const hooks = settings.hooks;
  if (hooks === null || typeof hooks !== "object" || Array.isArray(hooks)) return false;
  return Object.values(hooks).some(
    (groups) =>
      Array.isArray(groups) &&
      groups.some((g) => {
        const handlers = (g as JsonObject | null)?.hooks;
        return (
          Array.isArray(handlers) &&
          handlers.some((h) => {
            const handler = h as JsonObject;
            return (
              handler !== null &&
              typeof handler === "object" &&
              execArgs(handler) !== undefined &&
              isBatonCommand(handlerCommand(handler, "claude"), "claude")
            );
          })
        );
      }),
  );
}

/**
 * The version `claude --version` reports where `env`'s PATH finds it (`2.1.332 (Claude Code)`),
 * or undefined when none answers within 10 s. Asked by the install (which entries, and in which
 * form) and by status and doctor where a file holds exec-form entries; an answer is kept a
 * minute per PATH (an install asks twice; a long-lived server's doctor sees an upgrade).
 */
export function claudeVersion(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const key = env.PATH ?? "";
  const kept = versions.get(key);
  if (kept !== undefined && Date.now() - kept.at < 60_000) return kept.version;
  const r = spawnSync("claude", ["--version"], {
    env,
    encoding: "utf8",
    timeout: 10_000,
    killSignal: "SIGKILL",
    stdio: ["ignore", "pipe", "ignore"],
  });
  const version = r.status === 0 ? /^\s*(\d+\.\d+\.\d+)/.exec(r.stdout)?.[1] : undefined;
  versions.set(key, { version, at: Date.now() });
  return version;
}

const versions = new Map<string, { version: string | undefined; at: number }>();

/** Whether dotted version `v` is `min` or later. */
export function versionAtLeast(v: string, min: string): boolean {
  const a = v.split(".").map(Number);
  const b = min.split(".").map(Number);
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d > 0;
  }
  return true;
}

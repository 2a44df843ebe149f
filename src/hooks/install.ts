/**
 * `baton hooks install|uninstall|status`: Baton's entries in each agent's own hook
 * configuration. The merge itself is pure (core/hook-config.ts); this file reads and writes
 * the files:
 *
 * | agent       | --project (default)              | --user                                   |
 * | ----------- | -------------------------------- | ---------------------------------------- |
 * | Claude Code | `<root>/.claude/settings.json`   | `~/.claude/settings.json`                |
 * | Codex       | `<root>/.codex/hooks.json`       | `$CODEX_HOME/hooks.json` (`~/.codex`)    |
 * | Gemini CLI  | `<root>/.gemini/settings.json`   | `~/.gemini/settings.json`                |
 *
 * Files are parsed leniently (comments and trailing commas, as Gemini CLI allows) and only
 * the `hooks` value is rewritten (jsonc-parser `modify`), so comments and every other key
 * stay as they were. Before a change the previous text is copied to `<file>.baton.bak`; the
 * new text is written to a temp file and renamed over the old one. A file that held nothing
 * but Baton's hooks is removed by uninstall.
 */
import { copyFileSync, existsSync, lstatSync, readFileSync, realpathSync, unlinkSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import { type HookAgent, type HookGroupSpec, type InstalledHook, installInto, listBatonHooks, uninstallFrom } from "../core/hook-config.js";
import { ADAPTERS } from "../core/hooks/adapters.js";
import type { JsonObject } from "../core/types.js";
import { BatonError, badInput } from "../errors.js";
import { atomicWrite, safeParentDir } from "../platform/safe-fs.js";
import {
  acknowledgeGeminiHooks,
  codexShim,
  forgetGeminiHooks,
  inspectCodexShim,
  type Readiness,
  readiness,
  removeUnusedCodexShim,
  shellWords,
  trustCodexHooks,
  untrustCodexHooks,
  writeCodexShim,
  writeText,
} from "./agent-setup.js";

export type HookScope = "project" | "user";
export const HOOK_AGENTS: readonly HookAgent[] = ["claude", "codex", "gemini"];
export const BACKUP_SUFFIX = ".baton.bak";

export interface HookPlaceOptions {
  scope: HookScope;
  /** Project root (for --project). */
  root: string;
  /** Home directory (for --user). Default: the user's. */
  home?: string;
  env?: NodeJS.ProcessEnv;
}

export interface InstallResult extends Readiness {
  agent: HookAgent;
  scope: HookScope;
  file: string;
  /** False when the file already held exactly these hooks (nothing written). */
  changed: boolean;
  /** The previous text, kept before the change. */
  backup?: string;
  hooks: InstalledHook[];
  notes: string[];
}

export interface UninstallResult {
  agent: HookAgent;
  scope: HookScope;
  file: string;
  changed: boolean;
  /** Baton handlers removed. */
  removed: number;
  backup?: string;
  /** The file held nothing else and was removed. */
  deleted: boolean;
}

export interface HookStatus extends Partial<Readiness> {
  agent: HookAgent;
  scope: HookScope;
  file: string;
  exists: boolean;
  installed: InstalledHook[];
  /** Events Baton installs that the file lacks (all of them when not installed). */
  missing: string[];
  /** The hooks run a baton entry (an absolute path) that no longer exists: install again. */
  stale: boolean;
  notes: string[];
  /** Codex: the launcher script the hooks run is not the one install wrote (install again). */
  launcherModified?: boolean;
  /** The file could not be read or parsed. */
  problem?: string;
}

export function isHookAgent(v: string): v is HookAgent {
  return (HOOK_AGENTS as readonly string[]).includes(v);
}

export function hookConfigFile(agent: HookAgent, o: HookPlaceOptions): string {
  const home = o.home ?? homedir();
  const env = o.env ?? process.env;
  if (agent === "claude") return o.scope === "user" ? join(home, ".claude", "settings.json") : join(o.root, ".claude", "settings.json");
  if (agent === "codex")
    return o.scope === "user" ? join(env.CODEX_HOME || join(home, ".codex"), "hooks.json") : join(o.root, ".codex", "hooks.json");
  return o.scope === "user" ? join(home, ".gemini", "settings.json") : join(o.root, ".gemini", "settings.json");
}

function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(s) ? s : `"${s.replace(/(["\\$`])/g, "\\$1")}"`;
}

/**
 * The launcher written into the hooks: this Node and this baton's entry by absolute path (no
 * PATH lookup, no npx: a hook runs on every tool call). `--command baton` writes a portable one.
 */
export function defaultLauncher(argv1 = process.argv[1]): string {
  if (argv1 && /baton(?:\.c?js)?$/.test(argv1)) {
    let entry = argv1;
    try {
      entry = realpathSync(argv1);
    } catch {
      // keep it as given
    }
    return `${shellQuote(process.execPath)} ${shellQuote(entry)}`;
  }
  return "baton";
}

export function hookSpecs(agent: HookAgent, launcher: string): HookGroupSpec[] {
  return ADAPTERS[agent].hookSpecs(launcher);
}

interface Loaded {
  text: string | undefined;
  settings: JsonObject;
}

async function jsonc() {
  return import("jsonc-parser");
}

async function load(file: string): Promise<Loaded> {
  let text: string | undefined;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { text: undefined, settings: {} };
    throw new BatonError("io_error", `cannot read ${file}: ${(err as Error).message}`, { path: file }, { cause: err });
  }
  if (text.trim() === "") return { text, settings: {} };
  const { parse, printParseErrorCode } = await jsonc();
  const errors: import("jsonc-parser").ParseError[] = [];
  const value: unknown = parse(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length > 0) {
    const e = errors[0] as import("jsonc-parser").ParseError;
    const line = text.slice(0, e.offset).split("\n").length;
    throw badInput(`${file} is not valid JSON (${printParseErrorCode(e.error)} at line ${line}); fix it by hand: Baton changed nothing`, {
      path: file,
    });
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw badInput(`${file} does not hold a JSON object; fix it by hand: Baton changed nothing`, { path: file });
  return { text, settings: value as JsonObject };
}

function indentOf(text: string): { insertSpaces: boolean; tabSize: number } {
  const m = /\n([ \t]+)\S/.exec(text);
  if (m?.[1]?.startsWith("\t")) return { insertSpaces: false, tabSize: 1 };
  return { insertSpaces: true, tabSize: m?.[1] ? Math.min(8, m[1].length) : 2 };
}

/** The new text: only `hooks` rewritten when the file exists, else a fresh file. */
async function withHooks(text: string | undefined, hooks: unknown): Promise<string> {
  if (text === undefined || text.trim() === "") return `${JSON.stringify(hooks === undefined ? {} : { hooks }, null, 2)}\n`;
  const { modify, applyEdits } = await jsonc();
  const edits = modify(text, ["hooks"], hooks, { formattingOptions: { ...indentOf(text), eol: text.includes("\r\n") ? "\r\n" : "\n" } });
  return applyEdits(text, edits);
}

/** The settings file's path inside the workspace, for a project install; undefined elsewhere. */
function workspaceRel(file: string, o: HookPlaceOptions): string | undefined {
  const rel = relative(o.root, file).split(sep).join("/");
  return o.scope === "project" && rel !== "" && !rel.startsWith("../") && !isAbsolute(rel) ? rel : undefined;
}

/**
 * Before reading, backing up or writing a project's settings file: no directory on the way may
 * be a link (the agent can make `.claude` one that points outside the workspace).
 */
function checkPlace(file: string, o: HookPlaceOptions): void {
  const rel = workspaceRel(file, o);
  if (rel !== undefined) safeParentDir(o.root, rel, false);
}

function writeAtomic(file: string, text: string, o: HookPlaceOptions): void {
  // A new file gets the mode the user's umask gives any new file (0644, or 0600 under umask 077).
  const newMode = 0o666 & ~process.umask();
  const rel = workspaceRel(file, o);
  if (rel === undefined) {
    // The user's own settings (~/.claude/settings.json, often a link into a dotfiles repository):
    // written to the file the link points to, so the link stays, with that file's mode.
    writeText(file, text, newMode);
    return;
  }
  // Inside the workspace, where the agent can swap a directory for a link: written the way a
  // restore writes (never through a link in any component; platform/safe-fs.ts). A link in the
  // settings file's own place is replaced by a regular file; its mode is never the link's.
  const st = lstatSync(file, { throwIfNoEntry: false });
  atomicWrite(o.root, rel, Buffer.from(text), st?.isFile() ? st.mode & 0o777 : newMode, true);
}

function backup(file: string, existed: boolean): string | undefined {
  if (!existed) return undefined;
  const to = `${file}${BACKUP_SUFFIX}`;
  try {
    copyFileSync(file, to);
  } catch (err) {
    throw new BatonError(
      "io_error",
      `cannot back up ${file} to ${to}: ${(err as Error).message}; nothing was changed`,
      { path: file },
      { cause: err },
    );
  }
  return to;
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function notesFor(agent: HookAgent, settings: JsonObject): string[] {
  const notes: string[] = [];
  if (agent === "codex")
    notes.push(
      "Codex runs hooks when its hooks feature is on (the default in current builds; older builds need `[features] codex_hooks = true` in config.toml).",
    );
  if (agent === "gemini") {
    const tools = settings.tools as JsonObject | undefined;
    const hc = settings.hooksConfig as JsonObject | undefined;
    if (tools?.enableHooks !== false && hc?.enabled !== false)
      notes.push("Gemini CLI runs hooks while its hooks system is enabled (/settings → Advanced → Enable Hooks System).");
  }
  return notes;
}

export async function installHooks(agent: HookAgent, o: HookPlaceOptions & { launcher?: string }): Promise<InstallResult> {
  const file = hookConfigFile(agent, o);
  checkPlace(file, o);
  const { text, settings } = await load(file);
  let launcher = o.launcher;
  if (launcher === undefined) {
    launcher = defaultLauncher();
    // Codex trusts an entry by its command: a command naming this Node and this baton would be
    // untrusted again after every upgrade, so Codex's hooks run a launcher at a fixed place.
    if (agent === "codex" && launcher !== "baton") launcher = shellQuote(writeCodexShim(o, launcher));
  }
  let next: JsonObject;
  try {
    next = installInto(settings, hookSpecs(agent, launcher), agent);
  } catch (err) {
    throw badInput(`${file}: ${(err as Error).message}; fix it by hand: Baton changed nothing`, { path: file });
  }
  const notes = notesFor(agent, settings);
  let changed = false;
  let saved: string | undefined;
  if (text === undefined || !sameJson(next.hooks, settings.hooks)) {
    const newText = await withHooks(text, next.hooks);
    saved = backup(file, text !== undefined);
    writeAtomic(file, newText, o);
    changed = true;
  }
  if (agent === "codex") {
    const t = trustCodexHooks(o, next.hooks, settings.hooks);
    if (t.problem) notes.push(t.problem);
    else if (t.changed) notes.push(`Recorded Codex's trust of Baton's hooks in ${t.file} (as Codex's /hooks does).`);
  }
  if (agent === "gemini") acknowledgeGeminiHooks(o, next.hooks);
  return {
    agent,
    scope: o.scope,
    file,
    changed,
    ...(saved ? { backup: saved } : {}),
    hooks: listBatonHooks(next.hooks, agent),
    notes,
    ...readiness(agent, o, next),
  };
}

export async function uninstallHooks(agent: HookAgent, o: HookPlaceOptions): Promise<UninstallResult> {
  const file = hookConfigFile(agent, o);
  checkPlace(file, o);
  const { text, settings } = await load(file);
  const base: UninstallResult = { agent, scope: o.scope, file, changed: false, removed: 0, deleted: false };
  if (text === undefined) return base;
  let r: { settings: JsonObject; removed: number };
  try {
    r = uninstallFrom(settings, agent);
  } catch (err) {
    throw badInput(`${file}: ${(err as Error).message}; fix it by hand: Baton changed nothing`, { path: file });
  }
  if (r.removed === 0) return base;
  if (agent === "codex") untrustCodexHooks(o, settings.hooks, r.settings.hooks);
  if (agent === "gemini") forgetGeminiHooks(o, settings.hooks);
  const saved = backup(file, true);
  let deleted = false;
  if (Object.keys(r.settings).length === 0) {
    try {
      unlinkSync(file);
    } catch (err) {
      throw new BatonError("io_error", `cannot remove ${file}: ${(err as Error).message}`, { path: file }, { cause: err });
    }
    deleted = true;
  } else writeAtomic(file, await withHooks(text, r.settings.hooks), o);
  // The launcher is shared by every place installed with this CODEX_HOME: it goes with the last.
  if (agent === "codex") removeUnusedCodexShim(o);
  return { ...base, changed: true, removed: r.removed, deleted, ...(saved ? { backup: saved } : {}) };
}

/** The baton entry a hook command runs, when it names one by absolute path. */
function launcherPath(command: string): string | undefined {
  const words = shellWords(command);
  const at = words?.indexOf("hook") ?? -1;
  const entry = at > 0 ? words?.[at - 1] : undefined;
  return entry !== undefined && /^\/.*baton(?:\.c?js)?$/.test(entry) ? entry : undefined;
}

export async function hooksStatus(
  o: Omit<HookPlaceOptions, "scope"> & { agents?: readonly HookAgent[]; launcher?: string },
): Promise<HookStatus[]> {
  const out: HookStatus[] = [];
  const launcher = o.launcher ?? "baton";
  for (const agent of o.agents ?? HOOK_AGENTS) {
    const expected = hookSpecs(agent, launcher);
    for (const scope of ["project", "user"] as const) {
      const file = hookConfigFile(agent, { ...o, scope });
      const s: HookStatus = { agent, scope, file, exists: existsSync(file), installed: [], missing: [], stale: false, notes: [] };
      try {
        const { settings } = await load(file);
        s.installed = listBatonHooks(settings.hooks, agent);
        s.missing = expected.filter((e) => !s.installed.some((i) => i.event === e.event)).map((e) => e.event);
        let modified: string | undefined;
        s.stale = s.installed.some((i) => {
          const entry = launcherPath(i.command);
          if (entry === undefined) return false;
          if (!existsSync(entry)) return true;
          if (agent !== "codex" || resolve(entry) !== codexShim({ ...o, scope })) return false;
          // Codex's launcher script: exactly what install wrote, and the baton it runs exists.
          const shim = inspectCodexShim(entry);
          if (shim === "modified") modified = entry;
          return shim !== undefined && shim !== "modified" && (!existsSync(shim.node) || !existsSync(shim.entry));
        });
        if (s.installed.length > 0) {
          s.notes = notesFor(agent, settings);
          Object.assign(s, readiness(agent, { ...o, scope }, settings));
          if (modified !== undefined) {
            s.launcherModified = true;
            s.willRun = false;
            s.remaining = [
              `launcher modified: ${modified} is not the script Baton wrote, so Baton's hooks may not run: re-run \`baton hooks install codex${scope === "user" ? " --user" : ""}\`.`,
              ...(s.remaining ?? []),
            ];
          }
          if (s.stale) {
            s.willRun = false;
            s.remaining = [
              `The baton these hooks run is gone: run \`baton hooks install ${agent}${scope === "user" ? " --user" : ""}\` again.`,
              ...(s.remaining ?? []),
            ];
          }
        }
      } catch (err) {
        s.problem = (err as Error).message;
      }
      out.push(s);
    }
  }
  return out;
}

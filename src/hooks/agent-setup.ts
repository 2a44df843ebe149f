/**
 * What else an agent needs before it runs the hooks Baton installed, and the part of it that is
 * the installer's to do.
 *
 * - Codex runs a hooks.json entry only when `$CODEX_HOME/config.toml` trusts that exact entry
 *   (hooks/codex-trust.ts), and reads a project's `.codex/` only in a trusted project
 *   (`[projects."<root>"] trust_level = "trusted"`). The user asked for Baton's hooks by running
 *   `baton hooks install codex`, so the installer records their trust the way Codex's `/hooks`
 *   does; trusting a whole project (its config, MCP servers, …) stays the user's step.
 * - Codex's trust covers the command string, so the command must not change when Baton is
 *   reinstalled from another path or Node is upgraded: it runs `$CODEX_HOME/baton/baton`, a
 *   short script the installer rewrites with the current Node and baton.
 * - Gemini CLI loads hooks (user and project alike) only in a trusted folder: a rule in
 *   `~/.gemini/trustedFolders.json` (`{"<path>": "TRUST_FOLDER" | "TRUST_PARENT" |
 *   "DO_NOT_TRUST"}`, longest matching path wins, TRUST_PARENT trusts the rule's parent), else
 *   `security.folderTrust.enabled: false` in `~/.gemini/settings.json`, else
 *   `GEMINI_CLI_TRUST_WORKSPACE=true` in its environment. Trusting a folder is the user's step.
 *   The first time it loads new project hooks it warns about them and records them in
 *   `~/.gemini/trusted_hooks.json` (`{"<project root>": ["<name>:<command>", …]}`); the installer
 *   records Baton's there, so the user is not warned about hooks they just installed.
 * - Qwen Code: qwen-setup.ts (its hooks switch and folder trust; nothing for the installer to do).
 * - Copilot CLI: copilot-setup.ts (its folder trust and hooks switch; nothing for the installer to do).
 * - Cline CLI: cline-readiness.ts (where it reads a project's hook files); its files: cline-setup.ts.
 *
 * Longer than ~400 lines, a little: each agent's trust files are read and written here together,
 * because the installer and `baton hooks status` must agree on every agent at once.
 */
import { existsSync, mkdirSync, realpathSync, rmdirSync, statSync, unlinkSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { type HookAgent, isBatonCommand, launcherNodeEntry, NODE_WORD } from "../core/hooks/config.js";
import type { JsonObject } from "../core/types.js";
import { BatonError, isBatonError } from "../errors.js";
import { userHome } from "../platform/home.js";
import { atomicWrite, ioError } from "../platform/safe-fs.js";
import { NotASettingsFile, readSettingsText, readSettingsTextToEdit } from "../platform/settings-text.js";
import { claudeReadiness } from "./claude-setup.js";
import { clineReadiness } from "./cline-readiness.js";
import { type CodexHookEntry, codexHookEntries, codexProjectTrust, codexTrustedHashes, trustOf, withCodexTrust } from "./codex-trust.js";
import { copilotReadiness } from "./copilot-setup.js";
import { opencodeReadiness } from "./opencode-setup.js";
import { qwenReadiness } from "./qwen-setup.js";
import type { Readiness, SetupPlace } from "./readiness.js";

export type { Readiness, SetupPlace } from "./readiness.js";

function homeOf(o: SetupPlace): string {
  return o.home ?? userHome();
}

export function codexHome(o: SetupPlace): string {
  const env = o.env ?? process.env;
  return resolve(env.CODEX_HOME || join(homeOf(o), ".codex"));
}

/** The file's text; `edit`: to be rewritten, so it must be valid UTF-8 (readSettingsTextToEdit). */
function readText(file: string, edit = false): string | undefined {
  try {
    return edit ? readSettingsTextToEdit(file) : readSettingsText(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    if (err instanceof NotASettingsFile) throw new BatonError("bad_input", `${err.message}; Baton changed nothing`, { path: file });
    throw new BatonError("io_error", `cannot read ${file}: ${(err as Error).message}`, { path: file }, { cause: err });
  }
}

/**
 * Written durably (temp file in the same directory, fsync, rename, directory fsync; the temp file
 * is removed on failure) to the file a link points to, so a linked config.toml (dotfiles) stays
 * a link; an existing file's mode is kept (config.toml may hold secrets: 0600).
 */
export function writeText(file: string, text: string, newMode = 0o644): void {
  let target = real(file);
  let mode = newMode;
  try {
    mode = statSync(target).mode & 0o777;
  } catch {
    // a new file
  }
  try {
    mkdirSync(dirname(target), { recursive: true });
    target = join(real(dirname(target)), basename(target));
    atomicWrite(dirname(target), basename(target), Buffer.from(text), mode, true);
  } catch (err) {
    throw ioError(`cannot write ${file}`, err, file); // permissions: workspace_unwritable
  }
}

/** config.toml as it was before Baton first changed it; later changes keep that copy. */
function backupOnce(file: string, text: string): void {
  const bak = `${file}.baton.bak`;
  if (text !== "" && !existsSync(bak)) writeText(bak, text, statSync(real(file)).mode & 0o777);
}

function real(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

/** The paths an agent may know a directory by: as given and with links resolved. */
function spellings(p: string): string[] {
  const a = resolve(p);
  const b = real(a);
  return a === b ? [a] : [b, a];
}

// Codex

/** The hook launcher Codex's entries run: stable across reinstalls, so their trust survives. */
export function codexShim(o: SetupPlace): string {
  return join(codexHome(o), "baton", "baton");
}

/**
 * The launcher script that runs `launcher` (this Node and this baton, each quoted). Codex runs a
 * hook's command with `bash -c`, so a shell script here would be a second shell start on every
 * hook: when the launcher is a Node and a baton entry, the script is a Node script instead,
 * started by the kernel from its `#!` line, with a package.json beside it (codexShimPackage) so
 * Node reads it as CommonJS whatever package.json lies above `$CODEX_HOME`. `process.argv[1]` is
 * set to the entry, so the hook sees what `exec <node> <entry>` gave it. A Node whose path a `#!`
 * line cannot hold (a space or control character, or more than the 124 bytes older kernels
 * leave) gets the shell script, and so does a baton that is a shell script itself (`<entry>
 * --node=<node>`): it answers most hooks without Node, which costs far more than the extra shell.
 */
export function codexShimText(launcher: string): string {
  const words = shellWords(launcher);
  const [node, entry] = words ?? [];
  // `<entry> --node=<node>`, a baton that is a shell script too: the shell form, so the hook reaches it.
  if (words?.length === 2 && node !== undefined && entry !== undefined && !entry.startsWith(NODE_WORD) && shebangSafe(node))
    return nodeShimText(node, entry);
  return shShimText(launcher);
}

/** The package.json beside a Node-form launcher: the script is CommonJS (it has no extension). */
export const codexShimPackage = '{ "type": "commonjs" }\n';

function shebangSafe(node: string): boolean {
  return /^\/[^\s\x00-\x1f\x7f]+$/.test(node) && Buffer.byteLength(node) <= 124;
}

function nodeShimText(node: string, entry: string): string {
  return [
    `#!${node}`,
    "// Written by `baton hooks install codex`: Codex trusts a hook by its command, so the command",
    "// names this file, which stays put; installing again rewrites the first line and the entry.",
    "// A Node script, so no shell starts between Codex's and Node.",
    `const entry = ${JSON.stringify(entry)};`,
    "process.argv[1] = entry;",
    "require(entry);",
    "",
  ].join("\n");
}

/** The shell form, which installs before the Node form wrote (still run, and still recognised). */
function shShimText(launcher: string): string {
  return [
    "#!/bin/sh",
    "# Written by `baton hooks install codex`: Codex trusts a hook by its command, so the command",
    "# names this file, which stays put; installing again rewrites the line below.",
    `exec ${launcher} "$@"`,
    "",
  ].join("\n");
}

/** (Re)write the launcher script so it runs `launcher` (this Node and this baton), and its package.json. */
export function writeCodexShim(o: SetupPlace, launcher: string): string {
  const file = codexShim(o);
  const text = codexShimText(launcher);
  const pkg = readText(shimPackage(file));
  if (!text.startsWith("#!/bin/sh\n") && pkg !== codexShimPackage) writeText(shimPackage(file), codexShimPackage);
  if (readText(file) !== text) writeText(file, text, 0o755);
  // The shell form needs none: the Node form's own goes once it is replaced (another file stays: not Baton's).
  if (text.startsWith("#!/bin/sh\n") && pkg === codexShimPackage) unlinkSync(shimPackage(file));
  return file;
}

function shimPackage(shim: string): string {
  return join(dirname(shim), "package.json");
}

/** Each hooks.json path Codex may key trust by for this place. */
function codexHooksFiles(o: SetupPlace): string[] {
  return o.scope === "user" ? [join(codexHome(o), "hooks.json")] : spellings(o.root).map((r) => join(r, ".codex", "hooks.json"));
}

function batonEntries(o: SetupPlace, hooks: unknown): CodexHookEntry[] {
  return codexHooksFiles(o).flatMap((f) => codexHookEntries(f, hooks, (c) => isBatonCommand(c, "codex")));
}

function allEntries(o: SetupPlace, hooks: unknown): CodexHookEntry[] {
  return codexHooksFiles(o).flatMap((f) => codexHookEntries(f, hooks, () => true));
}

/** The hooks.json path a trust key names (the key is `<path>:<event>:<group>:<handler>`). */
function keyFile(key: string): string {
  return key.split(":").slice(0, -3).join(":");
}

/**
 * The trust of the user's own handlers whose index changed between `previous` and `hooks`
 * (Codex keys trust by group and handler index): each moved handler the user had trusted at its
 * old key is trusted at its new key, with the very hash the user trusted (the hash covers the
 * whole entry, so it matches only the same hook), and old keys no handler holds any more are
 * forgotten. A handler the user had not trusted stays untrusted.
 */
function movedUserTrust(o: SetupPlace, hooks: unknown, previous: unknown, trusted: Map<string, string>) {
  const theirs = (c: string) => !isBatonCommand(c, "codex");
  const before = codexHooksFiles(o).flatMap((f) => codexHookEntries(f, previous, theirs));
  const after = codexHooksFiles(o).flatMap((f) => codexHookEntries(f, hooks, theirs));
  const now = new Set(allEntries(o, hooks).map((e) => e.key));
  const wasTrusted = new Set(before.filter((e) => trusted.get(e.key) === e.hash).map((e) => `${keyFile(e.key)}\0${e.hash}`));
  const set = after.filter((e) => trusted.get(e.key) !== e.hash && wasTrusted.has(`${keyFile(e.key)}\0${e.hash}`));
  const drop = before.filter((e) => trusted.get(e.key) === e.hash && !now.has(e.key)).map((e) => e.key);
  return { set, drop };
}

/** Throws, before install writes anything, when Codex's config.toml is there but cannot be rewritten (trustCodexHooks would refuse it after hooks.json was written). */
export function checkCodexConfig(o: SetupPlace): void {
  readText(join(codexHome(o), "config.toml"), true);
}

/**
 * Trust Baton's handlers in `hooks` (and forget `previous` ones that are gone), carrying the
 * user's trust of handlers whose index moved. Returns the config.toml path, or a note when the
 * file defines hooks in a form Baton does not edit.
 */
export function trustCodexHooks(o: SetupPlace, hooks: unknown, previous: unknown): { file: string; changed: boolean; problem?: string } {
  const file = join(codexHome(o), "config.toml");
  const text = readText(file, true) ?? "";
  const moved = movedUserTrust(o, hooks, previous, codexTrustedHashes(text));
  const entries = [...batonEntries(o, hooks), ...moved.set];
  const drop = [...batonEntries(o, previous).map((e) => e.key), ...moved.drop];
  const next = withCodexTrust(text, entries, drop);
  if (next === undefined)
    return {
      file,
      changed: false,
      problem: `${file} defines "hooks" in a form Baton does not edit (another form, or a trust key written inline or twice); trust Baton's hooks in Codex's /hooks`,
    };
  if (next === text) return { file, changed: false };
  backupOnce(file, text);
  writeText(file, next, 0o600);
  return { file, changed: true };
}

function codexReadiness(o: SetupPlace, hooks: unknown): Readiness {
  const file = join(codexHome(o), "config.toml");
  const toml = readText(file) ?? "";
  const trusted = codexTrustedHashes(toml);
  // One spelling of the path is enough for Codex; report the first (links resolved).
  const first = codexHooksFiles(o)[0] as string;
  const entries = codexHookEntries(first, hooks, (c) => isBatonCommand(c, "codex"));
  const alt = batonEntries(o, hooks);
  const trust = entries.map((e) => {
    const others = alt.filter((a) => a.event === e.event && a.key.endsWith(e.key.slice(first.length)));
    const status = others.some((a) => trustOf(a, trusted) === "trusted") ? "trusted" : trustOf(e, trusted);
    return { event: e.event, key: e.key, status };
  });
  const remaining: string[] = [];
  const bad = trust.filter((t) => t.status !== "trusted");
  if (bad.length > 0)
    remaining.push(
      `Codex skips hooks it has not trusted (${bad.map((t) => `${t.event}: ${t.status}`).join(", ")}): run \`baton hooks install codex${o.scope === "user" ? " --user" : ""}\` again (it records their trust in ${file}), or trust them in Codex's /hooks.`,
    );
  if (o.scope === "project") {
    const projects = codexProjectTrust(toml);
    const roots = spellings(o.root);
    const level = roots.map((r) => projects.get(r)).find((v) => v !== undefined);
    if (level !== "trusted")
      remaining.push(
        `Codex reads ${join(o.root, ".codex", "hooks.json")} only in a trusted project: start \`codex\` in ${o.root} once and trust it, or add to ${file}:\n[projects.${JSON.stringify(roots[0])}]\ntrust_level = "trusted"`,
      );
  }
  return { willRun: remaining.length === 0, remaining, trust, trustFile: file };
}

/** Forget the trust of Baton's handlers in `previous` (after an uninstall left `hooks`), keeping the user's. */
export function untrustCodexHooks(o: SetupPlace, previous: unknown, hooks: unknown): void {
  const file = join(codexHome(o), "config.toml");
  const text = readText(file, true);
  if (text === undefined) return;
  const moved = movedUserTrust(o, hooks, previous, codexTrustedHashes(text));
  const next = withCodexTrust(text, moved.set, [...batonEntries(o, previous).map((e) => e.key), ...moved.drop]);
  if (next === undefined || next === text) return;
  backupOnce(file, text);
  writeText(file, next);
}

/**
 * After an uninstall: remove the launcher when no hooks.json Baton can know of still runs it
 * (the user's, this project's, and each one config.toml holds trust for: every project
 * installed with this CODEX_HOME shares it). Returns whether it was removed.
 */
export function removeUnusedCodexShim(o: SetupPlace): boolean {
  const shim = codexShim(o);
  if (!existsSync(shim)) return false;
  const files = new Set([join(codexHome(o), "hooks.json"), ...codexHooksFiles({ ...o, scope: "project" })]);
  for (const key of codexTrustedHashes(readText(join(codexHome(o), "config.toml")) ?? "").keys()) files.add(keyFile(key));
  const spelled = [shim, JSON.stringify(shim).slice(1, -1)];
  for (const f of files) {
    let text: string | undefined;
    try {
      text = readText(f);
    } catch {
      return false; // cannot tell: keep it
    }
    if (text !== undefined && spelled.some((s) => text.includes(s))) return false;
  }
  try {
    unlinkSync(shim);
    if (readText(shimPackage(shim)) === codexShimPackage) unlinkSync(shimPackage(shim));
    rmdirSync(dirname(shim));
  } catch {
    // the directory holds something else, or is gone already
  }
  return !existsSync(shim);
}

// Gemini CLI

function geminiTrustedFoldersFile(o: SetupPlace): string {
  const env = o.env ?? process.env;
  return env.GEMINI_CLI_TRUSTED_FOLDERS_PATH || join(homeOf(o), ".gemini", "trustedFolders.json");
}

export function jsonFile(file: string): JsonObject | undefined {
  const text = readText(file);
  if (text === undefined) return undefined;
  try {
    // Gemini CLI strips comments from these files; Baton only needs the plain ones.
    const v = JSON.parse(text.replace(/^\s*\/\/.*$/gm, "")) as unknown;
    return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as JsonObject) : undefined;
  } catch {
    return undefined;
  }
}

function within(dir: string, p: string): boolean {
  return p === dir || p.startsWith(dir.endsWith("/") ? dir : `${dir}/`);
}

/** Gemini CLI's verdict for a folder from trustedFolders.json: true, false, or undefined (no rule). */
export function geminiFolderTrust(rules: JsonObject, folder: string): boolean | undefined {
  const at = real(resolve(folder));
  let best = -1;
  let level: unknown;
  for (const [rule, v] of Object.entries(rules)) {
    const base = real(resolve(v === "TRUST_PARENT" ? dirname(rule) : rule));
    if (within(base, at) && rule.length > best) {
      best = rule.length;
      level = v;
    }
  }
  if (level === "DO_NOT_TRUST") return false;
  return level === "TRUST_FOLDER" || level === "TRUST_PARENT" ? true : undefined;
}

function geminiReadiness(o: SetupPlace, settings: JsonObject): Readiness {
  const remaining: string[] = [];
  const tools = settings.tools as JsonObject | undefined;
  const hc = settings.hooksConfig as JsonObject | undefined;
  if (tools?.enableHooks === false || hc?.enabled === false)
    remaining.push("Turn Gemini CLI's hooks system back on: this settings file sets tools.enableHooks or hooksConfig.enabled to false.");
  const file = geminiTrustedFoldersFile(o);
  const user = jsonFile(join(homeOf(o), ".gemini", "settings.json"));
  const folderTrustOff = ((user?.security as JsonObject | undefined)?.folderTrust as JsonObject | undefined)?.enabled === false;
  // The variable Gemini CLI reads, when it is set where Baton runs too (a shell profile, CI).
  const fromEnv = (o.env ?? process.env).GEMINI_CLI_TRUST_WORKSPACE;
  const trusted =
    fromEnv === "true" || (fromEnv !== "false" && (folderTrustOff || geminiFolderTrust(jsonFile(file) ?? {}, o.root) === true));
  if (!trusted)
    remaining.push(
      `Gemini CLI runs hooks only in a trusted folder: run \`gemini\` in ${o.root} and trust the folder, or add ${JSON.stringify(spellings(o.root)[0])}: "TRUST_FOLDER" to ${file} (headless runs can set GEMINI_CLI_TRUST_WORKSPACE=true instead).`,
    );
  return { willRun: remaining.length === 0, remaining, trustFile: file };
}

/** Gemini CLI's trusted_hooks.json key (`<name>:<command>`) of each of Baton's handlers in `hooks`. */
function geminiHookKeys(hooks: unknown): string[] {
  const keys: string[] = [];
  if (hooks === null || typeof hooks !== "object") return keys;
  for (const groups of Object.values(hooks as Record<string, unknown>)) {
    if (!Array.isArray(groups)) continue;
    for (const g of groups)
      for (const h of ((g as JsonObject)?.hooks as JsonObject[] | undefined) ?? [])
        if (h?.type === "command" && isBatonCommand(h.command, "gemini"))
          keys.push(`${typeof h.name === "string" ? h.name : ""}:${h.command}`);
  }
  return keys;
}

function geminiTrustedHooksFile(o: SetupPlace): string {
  return join(homeOf(o), ".gemini", "trusted_hooks.json");
}

/**
 * `~/.gemini/trusted_hooks.json` read to be rewritten: every project's entries must come back, so
 * a file that is not valid UTF-8 holding a JSON object is refused (`bad_input`), never taken for
 * an empty one (a trailing comma would have erased every other project's entries).
 */
function trustedHooksToEdit(file: string): JsonObject {
  const text = readText(file, true);
  if (text === undefined) return {};
  let v: unknown;
  try {
    // Gemini CLI reads this file with plain JSON.parse; whole-line comments (a hand edit) are let through.
    v = JSON.parse(text.replace(/^\s*\/\/.*$/gm, ""));
  } catch {
    v = undefined;
  }
  if (v === null || typeof v !== "object" || Array.isArray(v))
    throw new BatonError(
      "bad_input",
      `${file} is not a JSON object Baton can rewrite without losing what it holds; fix it by hand (Gemini CLI recreates it when it is gone): Baton changed nothing`,
      { path: file },
    );
  return v as JsonObject;
}

/** Throws, before install or uninstall writes anything, when Gemini CLI's trusted_hooks.json cannot be rewritten. */
export function checkGeminiTrustedHooks(o: SetupPlace): void {
  if (o.scope === "project") trustedHooksToEdit(geminiTrustedHooksFile(o));
}

/**
 * Record Baton's project hooks as seen in `~/.gemini/trusted_hooks.json`, as Gemini CLI does
 * itself after warning about new project hooks: the user installed these.
 */
export function acknowledgeGeminiHooks(o: SetupPlace, hooks: unknown): void {
  if (o.scope !== "project") return;
  const keys = geminiHookKeys(hooks);
  if (keys.length === 0) return;
  const file = geminiTrustedHooksFile(o);
  const all = trustedHooksToEdit(file);
  let changed = false;
  for (const root of spellings(o.root)) {
    const list = Array.isArray(all[root]) ? (all[root] as unknown[]).filter((x): x is string => typeof x === "string") : [];
    const next = [...new Set([...list, ...keys])];
    if (next.length !== list.length) {
      all[root] = next;
      changed = true;
    }
  }
  if (changed) writeText(file, `${JSON.stringify(all, null, 2)}\n`);
}

/**
 * Forget Baton's project hooks in `~/.gemini/trusted_hooks.json` (after an uninstall). A file Baton
 * cannot rewrite whole is left as it is (Gemini CLI reads a broken one as empty): the note says so.
 */
export function forgetGeminiHooks(o: SetupPlace, previous: unknown): string | undefined {
  if (o.scope !== "project") return undefined;
  const keys = new Set(geminiHookKeys(previous));
  if (keys.size === 0) return undefined;
  const file = geminiTrustedHooksFile(o);
  if (!existsSync(file)) return undefined;
  let all: JsonObject;
  try {
    all = trustedHooksToEdit(file);
  } catch (err) {
    if (!isBatonError(err, "bad_input")) throw err;
    return `${file} was left as it is (${err.message.split(";")[0]}): Baton's acknowledged hooks are still listed there for ${o.root}`;
  }
  let changed = false;
  for (const root of spellings(o.root)) {
    if (!Array.isArray(all[root])) continue;
    const list = all[root] as unknown[];
    const next = list.filter((x) => typeof x !== "string" || !keys.has(x));
    if (next.length === list.length) continue;
    changed = true;
    if (next.length === 0) delete all[root];
    else all[root] = next as JsonObject[keyof JsonObject];
  }
  if (changed) writeText(file, `${JSON.stringify(all, null, 2)}\n`);
  return undefined;
}

/** Whether the agent will run the installed hooks, and what remains for the user. */
export function readiness(agent: HookAgent, o: SetupPlace, settings: JsonObject): Readiness {
  if (agent === "codex") return codexReadiness(o, settings.hooks);
  if (agent === "gemini") return geminiReadiness(o, settings);
  if (agent === "qwen") return qwenReadiness(o, settings, spellings);
  if (agent === "copilot") return copilotReadiness(o);
  if (agent === "opencode") return opencodeReadiness(o);
  if (agent === "cline") return clineReadiness(o);
  return claudeReadiness(o, settings);
}

/**
 * The words of a POSIX shell command line as the shell splits them (double and single quotes,
 * backslash escapes); undefined for anything else (expansions, operators), which Baton never writes.
 */
export function shellWords(line: string): string[] | undefined {
  const out: string[] = [];
  const re = /\s*(?:"((?:[^"\\$`]|\\.)*)"|'([^']*)'|((?:[^\s"'\\$`;&|<>()]|\\.)+))(?=\s|$)/y;
  let at = 0;
  while (at < line.length) {
    if (line.slice(at).trim() === "") break;
    re.lastIndex = at;
    const m = re.exec(line);
    if (!m) return undefined;
    if (m[2] !== undefined) out.push(m[2]);
    else out.push(((m[1] ?? m[3]) as string).replace(/\\(.)/g, "$1"));
    at = re.lastIndex;
  }
  return out;
}

/**
 * What the Codex launcher at `shim` runs: its Node and baton entry when the script is exactly
 * what `writeCodexShim` writes, `modified` otherwise (Codex's trust covers the hook's command,
 * not this script, so a changed script would switch supervision off unseen), undefined when
 * there is no file.
 */
export function inspectCodexShim(shim: string): { node: string; entry: string; words: string[] } | "modified" | undefined {
  const text = readText(shim);
  if (text === undefined) return undefined;
  const words = shimWords(text);
  const named = words?.length === 2 ? launcherNodeEntry(words) : undefined;
  if (named === undefined) return "modified";
  const { node, entry } = named;
  if (!/^\//.test(node) || !/^node(?:js)?[\d.]*$/.test(node.split("/").pop() as string)) return "modified";
  if (!/^\/.*baton(?:\.c?js)?$/.test(entry) || resolve(entry) === resolve(shim)) return "modified";
  // The Node form is CommonJS only by its package.json: without it, one above could make it a module.
  if (!text.startsWith("#!/bin/sh\n") && readText(shimPackage(shim)) !== codexShimPackage) return "modified";
  return { node, entry, words: words as string[] };
}

/** The launcher's words when the script is exactly one codexShimText writes (either form). */
function shimWords(text: string): string[] | undefined {
  if (text.startsWith("#!/bin/sh\n")) {
    const line = /^exec (.*) "\$@"$/m.exec(text)?.[1];
    return line !== undefined && text === shShimText(line) ? shellWords(line) : undefined;
  }
  const node = /^#!(\S+)\n/.exec(text)?.[1];
  const entry = /^const entry = ("(?:[^"\\\n]|\\.)*");$/m.exec(text)?.[1];
  if (node === undefined || entry === undefined || !shebangSafe(node)) return undefined;
  let path: unknown;
  try {
    path = JSON.parse(entry);
  } catch {
    return undefined;
  }
  return typeof path === "string" && text === nodeShimText(node, path) ? [node, path] : undefined;
}

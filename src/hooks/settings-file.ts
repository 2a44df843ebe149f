/**
 * An agent's settings file as the installer reads, writes and backs it up (install.ts decides
 * what goes in it).
 *
 * - Read leniently (comments and trailing commas, as Gemini CLI allows); a file that is not a
 *   JSON object is refused with the line, and Baton changes nothing.
 * - Changed in place (json-text.ts): every byte that is not Baton's stays.
 * - Before the first install into an existing file its text goes to `<file>.baton.bak`, with
 *   the file's mode; uninstall gives that text back byte for byte when installing the file's
 *   current Baton entries into it gives the file as it is (nothing else changed since). By value
 *   alone it could not: an empty `hooks` that Baton filled looks, once emptied, like none.
 * - Inside the workspace nothing is read, backed up or written through a link (the agent can
 *   make `.claude` one); the user's own files are written through their link (dotfiles).
 */
import { lstatSync, readlinkSync, statSync } from "node:fs";
import { isAbsolute, relative, sep } from "node:path";
import { type ParseError, parse, printParseErrorCode } from "jsonc-parser";
import { jsonTextDepth, SETTINGS_TEXT_DEPTH } from "../core/canonical.js";
import { type HookAgent, type HookGroupSpec, handlerCommand, installInto, isBatonCommand } from "../core/hooks/config.js";
import type { JsonObject } from "../core/types.js";
import { BatonError, badInput } from "../errors.js";
import { atomicWrite, safeParentDir } from "../platform/safe-fs.js";
import { NotASettingsFile, readSettingsText, readSettingsTextToEdit, SETTINGS_MAX_BYTES } from "../platform/settings-text.js";
import { writeText } from "./agent-setup.js";
import { freshJson, rewriteJson } from "./json-text.js";
import type { HookPlaceOptions } from "./places.js";

export const BACKUP_SUFFIX = ".baton.bak";

export interface Loaded {
  text: string | undefined;
  settings: JsonObject;
}

function parseSettings(text: string, file: string): JsonObject {
  if (text.trim() === "") return {};
  if (jsonTextDepth(text) > SETTINGS_TEXT_DEPTH)
    throw badInput(`${file} nests deeper than ${SETTINGS_TEXT_DEPTH} levels; fix it by hand: Baton changed nothing`, { path: file });
  const errors: ParseError[] = [];
  const value: unknown = parse(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length > 0) {
    const e = errors[0] as ParseError;
    const line = text.slice(0, e.offset).split("\n").length;
    throw badInput(`${file} is not valid JSON (${printParseErrorCode(e.error)} at line ${line}); fix it by hand: Baton changed nothing`, {
      path: file,
    });
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw badInput(`${file} does not hold a JSON object; fix it by hand: Baton changed nothing`, { path: file });
  return value as JsonObject;
}

/** The file's text; `edit`: to be rewritten, so it must be valid UTF-8 (readSettingsTextToEdit). */
export function readIfFile(file: string, edit = false): string | undefined {
  try {
    return edit ? readSettingsTextToEdit(file) : readSettingsText(file);
  } catch (err) {
    if (err instanceof NotASettingsFile) throw badInput(`${err.message}; Baton changed nothing`, { path: file });
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new BatonError("io_error", `cannot read ${file}: ${(err as Error).message}`, { path: file }, { cause: err });
  }
}

export function load(file: string, edit = false): Loaded {
  const text = readIfFile(file, edit);
  return text === undefined ? { text, settings: {} } : { text, settings: parseSettings(text, file) };
}

/**
 * Keys an agent adds to a settings file it loads when they are missing, by rewriting the file:
 * Qwen Code 0.24 stamps `"$version": 4` (packages/cli/src/config/settings.ts, SETTINGS_VERSION).
 * Copilot CLI's hook files carry `"version": 1` (the format's version, which it reads).
 * A file install creates holds them already, so the agent leaves it as Baton wrote it (a
 * committed file does not change on every teammate's first run), and uninstall removes a file
 * install created that holds nothing else (a later agent may have stamped a newer value).
 */
const AGENT_OWN_KEYS: Readonly<Partial<Record<HookAgent, JsonObject>>> = { qwen: { $version: 4 }, copilot: { version: 1 } };

/** The text install makes of `text` (undefined: no file) with `specs`, and the settings it holds. */
export function installedText(text: string | undefined, settings: JsonObject, specs: readonly HookGroupSpec[], agent: HookAgent) {
  const next = installInto(settings, specs, agent);
  const fresh = () => freshJson({ ...AGENT_OWN_KEYS[agent], hooks: next.hooks ?? {} });
  return { next, text: text === undefined || text.trim() === "" ? fresh() : rewriteJson(text, next) };
}

/**
 * Baton's groups in `hooks` as the specs that would write them (in the file's order), so
 * uninstall can tell whether the file is exactly what installing them made of the backup.
 */
function specsIn(hooks: unknown, agent: HookAgent): HookGroupSpec[] {
  const specs: HookGroupSpec[] = [];
  if (hooks === null || typeof hooks !== "object" || Array.isArray(hooks)) return specs;
  for (const [event, groups] of Object.entries(hooks as JsonObject)) {
    if (!Array.isArray(groups)) continue;
    for (const g of groups as JsonObject[]) {
      if (g !== null && typeof g === "object" && !Array.isArray(g.hooks) && isBatonCommand(handlerCommand(g), agent)) {
        const handler: HookGroupSpec["handler"] = { type: "command", command: String(handlerCommand(g)) };
        if (typeof g.timeoutSec === "number") handler.timeoutSec = g.timeoutSec;
        specs.push({ event, flat: true, ...(typeof g.matcher === "string" ? { matcher: g.matcher } : {}), handler });
        continue;
      }
      const handlers = Array.isArray(g?.hooks) ? (g.hooks as JsonObject[]) : [];
      for (const h of handlers) {
        if (h === null || typeof h !== "object" || !isBatonCommand(handlerCommand(h, agent), agent)) continue;
        specs.push({
          event,
          ...(typeof g.matcher === "string" ? { matcher: g.matcher } : {}),
          handler: h as unknown as HookGroupSpec["handler"],
        });
      }
    }
  }
  return specs;
}

/** The settings file's path inside the workspace, for a project install; undefined elsewhere. */
function workspaceRel(file: string, o: HookPlaceOptions): string | undefined {
  const rel = relative(o.root, file).split(sep).join("/");
  return o.scope === "project" && rel !== "" && !rel.startsWith("../") && !isAbsolute(rel) ? rel : undefined;
}

/**
 * Before reading, backing up or writing a project's settings file: no directory on the way may
 * be a link (the agent can make `.claude` one that points outside the workspace), nor the file
 * itself. A repository can commit `.gemini/settings.json -> ~/.docker/config.json`: editing it
 * would copy that file's content, credentials and all, into a file the team commits and into its
 * backup. (A user's own settings file may be a link into a dotfiles repository: that is `--user`.)
 */
export function checkPlace(file: string, o: HookPlaceOptions): void {
  const rel = workspaceRel(file, o);
  if (rel === undefined) return;
  safeParentDir(o.root, rel, false);
  let link: string | undefined;
  try {
    if (lstatSync(file).isSymbolicLink()) link = readlinkSync(file);
  } catch {
    link = undefined; // not there yet, or gone meanwhile: the read or the write says so
  }
  if (link !== undefined)
    throw badInput(
      `${file} is a symbolic link (to ${JSON.stringify(link.length > 200 ? `${link.slice(0, 200)}…` : link)}): Baton edits a project's settings file only as a file of the project, since the content of what the link points to would be copied into it and into its backup, where git can commit it. Replace the link with a file of its own (or remove it), then run the command again. Baton changed nothing`,
      { path: file },
    );
}

export function writeAtomic(file: string, text: string, o: HookPlaceOptions, mode?: number): void {
  // A new file gets the mode the user's umask gives any new file (0644, or 0600 under umask 077).
  const newMode = mode ?? 0o666 & ~process.umask();
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

/** `<file>.baton.bak` with `text` (the file before Baton's hooks), with the file's own mode. */
export function backup(file: string, text: string, o: HookPlaceOptions): string {
  const to = `${file}${BACKUP_SUFFIX}`;
  let mode: number | undefined;
  try {
    // A link's own mode is 0777: the backup takes the mode of the file it names, at most 0644's
    // permissions for others (it holds settings `uninstall` restores).
    const st = lstatSync(file);
    mode = (st.isSymbolicLink() ? statSync(file).mode : st.mode) & 0o777 & ~0o022;
  } catch {
    // written with a new file's mode
  }
  try {
    writeAtomic(to, text, o, mode);
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

/** The backup's text, when it is a regular file of settings size (never read through a link, nor waiting on a FIFO). */
function backupText(file: string): string | undefined {
  try {
    return readSettingsText(`${file}${BACKUP_SUFFIX}`, SETTINGS_MAX_BYTES, { follow: false });
  } catch {
    return undefined;
  }
}

/**
 * The file's text once Baton's entries are out (undefined: remove the file). When nothing but
 * Baton's hooks changed since install, that is the backup byte for byte, or no file when install
 * created it: installing the file's Baton entries into the backup gives the file as it is.
 * Otherwise only Baton's entries are taken out; a file left holding `{}` (or only the agent's
 * own stamp, AGENT_OWN_KEYS) that was not there before install goes.
 */
export function afterUninstall(
  file: string,
  text: string,
  settings: JsonObject,
  remaining: JsonObject,
  agent: HookAgent,
): { text: string | undefined; restored: boolean } {
  const specs = specsIn(settings.hooks, agent);
  const before = backupText(file);
  if (before !== undefined && installedFrom(before, file, specs, agent) === text) return { text: before, restored: true };
  if (installedText(undefined, {}, specs, agent).text === text) return { text: undefined, restored: false };
  const rest = rewriteJson(text, remaining);
  if (before !== undefined) return { text: rest, restored: false };
  // Install created the file: it goes when nothing is left but the agent's own stamp.
  const own = Object.keys(AGENT_OWN_KEYS[agent] ?? {});
  const bare = rewriteJson(rest, Object.fromEntries(Object.entries(remaining).filter(([k]) => !own.includes(k))));
  return { text: bare.replace(/\s/g, "") === "{}" ? undefined : rest, restored: false };
}

/** The text installing `specs` into the backup's text gives (undefined when the backup is not a settings file). */
function installedFrom(before: string, file: string, specs: readonly HookGroupSpec[], agent: HookAgent): string | undefined {
  try {
    return installedText(before, parseSettings(before, file), specs, agent).text;
  } catch {
    return undefined;
  }
}

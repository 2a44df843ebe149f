/**
 * The user's global ignore file, as git finds it: `core.excludesFile` from the system and the
 * user's git configuration (`/etc/gitconfig`, `$XDG_CONFIG_HOME/git/config`, `~/.gitconfig`,
 * with their `include` and `includeIf "gitdir:…"` / `"onbranch:…"` files), else
 * `$XDG_CONFIG_HOME/git/ignore`. Git applies it below every other ignore rule; whole-tree
 * checkpoints do too (`tree-rules.ts`).
 *
 * The repository's own configuration (`.git/config`) is not read: a repository shipped with
 * its `.git` would otherwise name any file on the machine to be read, and stored, as rules.
 * An `includeIf "hasconfig:remote.*.url:…"` is not evaluated: its file is read only to see that
 * git would not refuse it, and its values are not taken. The system configuration is
 * `/etc/gitconfig` (where Debian's and most builds of git keep it; `GIT_CONFIG_SYSTEM` names
 * another). A configuration git would refuse (a line it cannot parse, an include that is a
 * folder) gives no ignore file, as git gives no answer. Glob conditions are matched as git
 * matches them (`wildmatch.ts`).
 */
import { dirname, isAbsolute, join, resolve } from "node:path";
import type { GitRepo } from "./git-repo.js";
import { realOr } from "./moved-config.js";
import { NotASettingsFile, readSettingsText } from "./settings-text.js";
import { wildmatch } from "./wildmatch.js";

/** Git's own limit on nested includes. */
const MAX_INCLUDE_DEPTH = 10;
/** More than any git configuration file holds. */
const CONFIG_MAX_BYTES = 1024 * 1024;

/** The environment git reads its configuration's places from. */
export interface GitEnv {
  HOME?: string;
  XDG_CONFIG_HOME?: string;
  GIT_CONFIG_GLOBAL?: string;
  GIT_CONFIG_SYSTEM?: string;
  GIT_CONFIG_NOSYSTEM?: string;
}

/**
 * The path of the global ignore file git would read for the repository `repo` (undefined
 * outside one, or when git would read none: `core.excludesFile` set empty, no home folder).
 * The file may not exist.
 */
export function globalExcludesFile(repo: GitRepo | undefined, env: GitEnv = process.env): string | undefined {
  if (repo === undefined) return undefined;
  const home = env.HOME || undefined;
  const xdg = env.XDG_CONFIG_HOME ? env.XDG_CONFIG_HOME : home && join(home, ".config");
  const files: string[] = [];
  if (!truthy(env.GIT_CONFIG_NOSYSTEM) && env.GIT_CONFIG_SYSTEM !== "") files.push(env.GIT_CONFIG_SYSTEM ?? "/etc/gitconfig");
  if (env.GIT_CONFIG_GLOBAL !== undefined) {
    if (env.GIT_CONFIG_GLOBAL !== "") files.push(env.GIT_CONFIG_GLOBAL);
  } else {
    if (xdg) files.push(join(xdg, "git", "config"));
    if (home) files.push(join(home, ".gitconfig"));
  }
  const ctx: Ctx = { repo, home, found: { set: false, value: undefined } };
  for (const file of files) if (!readConfig(file, ctx, 0)) return undefined;
  const { set, value } = ctx.found;
  if (!set) return xdg ? join(xdg, "git", "ignore") : undefined;
  if (!value) return undefined;
  return interpolate(value, home, repo.top);
}

interface Ctx {
  /** Read as git reads a `hasconfig:remote.*.url:` include whatever its condition: its values are not taken. */
  parseOnly?: boolean;
  repo: GitRepo;
  home: string | undefined;
  /** The last `core.excludesFile` read, if any was. */
  found: { set: boolean; value: string | undefined };
}

function truthy(v: string | undefined): boolean {
  return v !== undefined && /^(1|true|yes|on)$/i.test(v.trim());
}

/** `~/` is the home folder; a relative path is the repository's top's (git runs there). */
function interpolate(path: string, home: string | undefined, top: string): string | undefined {
  let p = path;
  if (p === "~" || p.startsWith("~/")) {
    if (!home) return undefined;
    p = home + p.slice(1);
  } else if (p.startsWith("~")) return undefined; // another user's home: not read
  if (p.startsWith("%(prefix)/")) return undefined;
  return isAbsolute(p) ? p : resolve(top, p);
}

/** Reads one configuration file into `ctx.found`; false when git would refuse it (so it would give no answer). */
function readConfig(file: string, ctx: Ctx, depth: number): boolean {
  let text: string | undefined;
  try {
    text = readSettingsText(file, CONFIG_MAX_BYTES);
  } catch (err) {
    // A folder (`path = ~`), a FIFO, one too large: an error to git. One it may not read: git
    // passes over the user's and the system's, and stops at an include.
    return !(err instanceof NotASettingsFile) && depth === 0 && (err as NodeJS.ErrnoException).code === "EACCES";
  }
  if (text === undefined) return true; // none there: git reads none
  if (depth > MAX_INCLUDE_DEPTH) return false; // counted for files there only, as git counts
  const entries = parseConfig(text);
  if (entries === undefined) return false;
  for (const e of entries) {
    if (e.name === "core.excludesfile") {
      if (ctx.parseOnly) continue;
      if (e.value === undefined) return false; // no value: an error to git, wherever it stands
      ctx.found = { set: true, value: e.value };
      continue;
    }
    // Read for its values, or (`hasconfig:`, whose condition is not evaluated) only to see that git would not refuse it.
    let into = ctx;
    if (e.name !== "include.path") {
      const cond = /^includeif\.(.*)\.path$/s.exec(e.name)?.[1];
      if (cond === undefined) continue;
      // Git reads a `hasconfig:remote.*.url:` include to check it names no remote, whatever the condition.
      if (cond.startsWith("hasconfig:remote.*.url:")) into = { ...ctx, parseOnly: true };
      else if (!conditionHolds(cond, file, ctx)) continue;
    }
    if (e.value === undefined) return false; // `path` with no value: an error to git
    if (e.value === "") continue;
    const target = includePath(e.value, file, ctx.home);
    if (target !== undefined && !readConfig(target, into, depth + 1)) return false;
  }
  return true;
}

/** An include's path: `~/` the home folder, relative to the folder of the file that names it. */
function includePath(value: string, from: string, home: string | undefined): string | undefined {
  if (value === "~" || value.startsWith("~/")) return home ? home + value.slice(1) : undefined;
  if (value.startsWith("~") || value.startsWith("%(prefix)/")) return undefined;
  return isAbsolute(value) ? value : resolve(dirname(from), value);
}

/** Whether git would read the file of `[includeIf "<cond>"]`, found in `file`. */
function conditionHolds(cond: string, file: string, ctx: Ctx): boolean {
  const m = /^(gitdir|gitdir\/i|onbranch):(.*)$/s.exec(cond);
  if (!m) return false;
  const kind = m[1] as string;
  let pattern = m[2] as string;
  if (kind === "onbranch") {
    const branch = currentBranch(ctx.repo);
    if (branch === undefined) return false;
    if (pattern.endsWith("/")) pattern += "**";
    return wildmatch(pattern, branch, false);
  }
  const icase = kind === "gitdir/i";
  // As git: `~/` expanded; `./` the including file's folder (matched literally); a relative
  // pattern may start anywhere (`**/`); a trailing `/` matches everything under it.
  let literal = 0;
  if (pattern === "~" || pattern.startsWith("~/")) {
    if (!ctx.home) return false;
    pattern = ctx.home + pattern.slice(1);
  }
  if (pattern.startsWith("./")) {
    const dir = dirname(realOr(file));
    pattern = dir + pattern.slice(1);
    literal = dir.length + 1;
  } else if (!pattern.startsWith("/")) pattern = `**/${pattern}`;
  if (pattern.endsWith("/")) pattern += "**";
  const gitDir = ctx.repo.gitDir;
  const head = pattern.slice(0, literal);
  const rest = pattern.slice(literal);
  for (const text of [realOr(gitDir), resolve(gitDir)]) {
    const start = text.slice(0, literal);
    if (icase ? start.toLowerCase() !== head.toLowerCase() : start !== head) continue;
    if (wildmatch(rest, text.slice(literal), icase)) return true;
  }
  return false;
}

/** The branch HEAD names (`ref: refs/heads/<name>`), or undefined when HEAD is detached or unreadable. */
function currentBranch(repo: GitRepo): string | undefined {
  let text: string | undefined;
  try {
    text = readSettingsText(join(repo.gitDir, "HEAD"), 4096, { follow: false });
  } catch {
    return undefined;
  }
  const m = /^ref: refs\/heads\/(.+?)\r?\n?$/.exec(text ?? "");
  // A reftable repository's HEAD names `.invalid`: its real branch is in the table, not read here.
  return m?.[1] === ".invalid" ? undefined : m?.[1];
}

/** One `key = value` line of a configuration file: its variable's name as git forms it (`section.key`, `section.<sub>.key`), and its value. */
export interface ConfigEntry {
  /** Section and key lower-cased; a `[section "sub"]` subsection as written. */
  name: string;
  /** Undefined for a key with no `=` (a boolean true). */
  value: string | undefined;
}

const isKeyChar = (c: string | undefined): boolean => c !== undefined && /[A-Za-z0-9-]/.test(c);
/** Git's own notion of a space (not `\v` or `\f`). */
const isSpace = (c: string | undefined): boolean => c === " " || c === "\t" || c === "\r" || c === "\n";

/**
 * A git configuration file's entries, in order, as git's parser reads them (comments, quotes,
 * escapes, continuation lines, `[section "sub"]` and `[section.sub]`); undefined for a file
 * git would refuse.
 */
export function parseConfig(input: string): ConfigEntry[] | undefined {
  const s = input.replace(/\r\n/g, "\n");
  const out: ConfigEntry[] = [];
  let i = s.charCodeAt(0) === 0xfeff ? 1 : 0;
  let stem = ""; // a key before any section is git's too (named without one)
  for (;;) {
    const c = s[i];
    if (c === undefined) return out;
    if (isSpace(c)) {
      i++;
      continue;
    }
    if (c === "#" || c === ";") {
      while (i < s.length && s[i] !== "\n") i++;
      continue;
    }
    if (c === "[") {
      i++;
      const header = sectionHeader(s, i);
      if (header === undefined) return undefined;
      stem = header.stem;
      i = header.end;
      continue;
    }
    if (!/[A-Za-z]/.test(c)) return undefined;
    let key = "";
    while (isKeyChar(s[i])) key += s[i++];
    while (s[i] === " " || s[i] === "\t") i++;
    if (s[i] === "\n" || s[i] === undefined) {
      out.push({ name: named(stem, key), value: undefined });
      continue;
    }
    if (s[i++] !== "=") return undefined;
    const parsed = parseValue(s, i);
    if (parsed === undefined) return undefined;
    out.push({ name: named(stem, key), value: parsed.value });
    i = parsed.end;
  }
}

const named = (stem: string, key: string): string => (stem === "" ? key.toLowerCase() : `${stem}.${key.toLowerCase()}`);

/** A `[section]`, `[section.sub]` or `[section "sub"]` header from after its `[`: the variables' stem, and where the header ends. */
function sectionHeader(s: string, start: number): { stem: string; end: number } | undefined {
  let i = start;
  let name = "";
  while (isKeyChar(s[i]) || s[i] === ".") name += s[i++];
  if (s[i] === "]") return name === "" ? undefined : { stem: name.toLowerCase(), end: i + 1 };
  if (!isSpace(s[i])) return undefined;
  while (isSpace(s[i])) if (s[i++] === "\n") return undefined;
  if (s[i++] !== '"') return undefined;
  let sub = "";
  for (;;) {
    let d = s[i++];
    if (d === undefined || d === "\n") return undefined;
    if (d === '"') break;
    if (d === "\\") {
      d = s[i++];
      if (d === undefined || d === "\n") return undefined;
    }
    sub += d;
  }
  if (s[i] !== "]") return undefined;
  return { stem: `${name.toLowerCase()}.${sub}`, end: i + 1 };
}

/** A value from `start` to its line's end: git's quoting, escapes and whitespace rules. */
function parseValue(s: string, start: number): { value: string; end: number } | undefined {
  let value = "";
  let quote = false;
  let comment = false;
  let space = 0;
  let i = start;
  for (;;) {
    const c = s[i++];
    if (c === undefined || c === "\n") {
      if (quote) return undefined;
      return { value, end: i };
    }
    if (comment) continue;
    if ((c === " " || c === "\t" || c === "\r") && !quote) {
      if (value.length > 0) space++;
      continue;
    }
    if (!quote && (c === ";" || c === "#")) {
      comment = true;
      continue;
    }
    value += " ".repeat(space);
    space = 0;
    if (c === "\\") {
      const e = s[i++];
      if (e === "\n") continue;
      if (e === "t") value += "\t";
      else if (e === "b") value += "\b";
      else if (e === "n") value += "\n";
      else if (e === "\\" || e === '"') value += e;
      else return undefined;
      continue;
    }
    if (c === '"') {
      quote = !quote;
      continue;
    }
    value += c;
  }
}

/**
 * The rules a whole-tree checkpoint takes or leaves out a path by: the ignore rules (each
 * directory's `.gitignore`, the sources of `tree-sources.ts`: `.git/info/exclude`, the user's
 * global ignore file, the workspace's `.batonignore`), which leave
 * out untracked files only, as in git; the configured excludes, which leave out anything; and
 * Baton's own LESSONS.md. The walk (`tree-scan.ts`) and a rollback's coverage question
 * (`coversWith`: would a walk have taken this path?) judge with the same functions.
 *
 * The `ignore` package implements gitignore matching (negations, anchoring, directory-only
 * patterns, escaping) as git does; each `.gitignore` gets its own matcher relative to its
 * directory, and the deepest one with an opinion decides, as in git. Where the package's answer
 * and git's part (a folder taken back by a deeper rule: `saysOf`), git's is taken; the property
 * test in test/walk-vs-git.int.test.ts holds the walk to `git ls-files` over random trees.
 */
import ignore, { type Ignore } from "ignore";
import { MAX_PATH_LENGTH } from "../../core/time-travel/paths.js";
import { readTracked, type Tracked } from "../../platform/git-index.js";
import { gitRepo } from "../../platform/git-repo.js";
import { RESTORE_TEMP } from "../../platform/safe-fs.js";
import { type RootSources, readNoFollow, rootSources } from "./tree-sources.js";

/** Names a stored path may not contain (core/time-travel/paths.ts): control characters, backslashes. */
export const UNSAFE_NAME = /[\x00-\x1f\\]/;

interface Rules {
  /** Directory the matcher's patterns are relative to ("" for the root). */
  base: string;
  /** What goes before a path relative to `base` for these patterns: the workspace's path from the folder of a repository's rules above it, else "". */
  prefix: string;
  ig: Ignore;
  /** The patterns, one a line (for `saysOf`). */
  text: string;
  /** The patterns as matchers of a path itself (built when first needed: `saysOf`). */
  alone?: Alone;
}

/**
 * A rule file's patterns as matchers that answer for a path itself, never for its folders: a
 * pattern negated on its own never ignores a folder, so a negated matcher's `unignored` says
 * that some pattern matches the path. Its positive and its negative patterns each in one; each
 * pattern on its own (last first) only for a path both kinds match, where the last one decides.
 */
interface Alone {
  lines: string[];
  positive: Ignore;
  negative: Ignore;
  each?: { negative: boolean; ig: Ignore }[];
}

function rulesOf(base: string, prefix: string, text: string): Rules {
  return { base, prefix, ig: ignore().add(text), text };
}

/**
 * The matchers that apply inside one directory: its parent's plus its own `.gitignore`, and the
 * decisions already taken with them (path, with a trailing slash for a directory → ignored).
 * A chain is reused by the next scan only while its parent chain is the same object and its
 * `.gitignore` has the same text, so a cached decision always comes from the same patterns.
 */
export interface Chain {
  parent: Chain | undefined;
  /** The directory's own `.gitignore` (or, for the root, every root source), undefined when it has none. */
  text: string | undefined;
  rules: Rules[];
  /** The configured excludes: they leave a path out even when git tracks it, and no negation elsewhere takes it back. */
  excludes: Ignore | undefined;
  /**
   * The directory is itself ignored, walked only for the tracked files in it: everything
   * untracked in it is ignored, and its `.gitignore` files are not read (git reads none there,
   * so no negation in one takes a file back).
   */
  ignored: boolean;
  /** `.batonignore` takes Baton's own LESSONS.md back in (otherwise nothing does: no `.gitignore` negation, no index). */
  ownIn: boolean;
  decisions: Map<string, Decision>;
}

/** A question put to git's index while listing a directory: the path, whether it is a folder, the answer. */
export type Asked = [rel: string, isDir: boolean, tracked: boolean];

function isTracked(tracked: Tracked | undefined, rel: string, isDir: boolean): boolean {
  if (tracked === undefined || rel === OWN_FILE) return false;
  return isDir ? tracked.under(rel) : tracked.file(rel);
}

/** What the rules say of a path: taken, ignored (left out unless git tracks it), or excluded (always left out). */
const TAKEN = 0;
const IGNORED = 1;
const EXCLUDED = 2;
type Decision = typeof TAKEN | typeof IGNORED | typeof EXCLUDED;

/**
 * The root's chain from its sources (`rootSources`): the configured excludes, on their own;
 * then, least to most precedence, Baton's own files with `.batonignore`, the user's global
 * ignore file, the repository's `info/exclude`, and the `.gitignore` files above the
 * workspace (top first), as git orders them. The repository's
 * rules are left out when they ignore the workspace itself (a scratch folder in a repository, a
 * home folder whose dotfiles repository ignores `*`): they are not the workspace's rules then.
 */
export function chainFrom(sources: RootSources, chains: Map<string, Chain>): Chain {
  const text = JSON.stringify(sources);
  const cached = chains.get("\u0000root");
  if (cached?.text === text) return cached;
  const rules: Rules[] = [rulesOf("", "", `${OWN_FILES}\n${sources.batonignore}`)];
  const repo: Rules[] = [sources.globalExclude, sources.infoExclude, ...sources.above]
    .filter((r) => r.text.trim() !== "")
    .map((r) => rulesOf("", r.prefix, r.text));
  if (!ignoresItself(repo)) rules.push(...repo);
  const excludes = sources.exclude.trim() === "" ? undefined : ignore().add(sources.exclude);
  const ownIn = !says(ignore().add(OWN_FILES).add(sources.batonignore), OWN_FILE).ignored;
  const chain: Chain = { parent: undefined, text, rules, excludes, ignored: false, ownIn, decisions: new Map() };
  chains.set("\u0000root", chain);
  return chain;
}

/**
 * Whether a repository's rules ignore the workspace's own folder, or any file directly in it
 * (an allow-list: `*`, then only folders taken back): then they are not rules for the
 * workspace's files, but the repository's way of leaving it out. Judged as git walks: each
 * folder from the top down to the workspace by the rules that apply there (the global ignore
 * file, `info/exclude`, the `.gitignore` of each folder above it), the deepest with an opinion
 * deciding, then a plain file in the workspace.
 */
function ignoresItself(repo: readonly Rules[]): boolean {
  const parts = (r: Rules) => r.prefix.split("/").filter(Boolean);
  const n = Math.max(0, ...repo.map((r) => parts(r).length)); // the global and repository rules name the whole way
  const judged = (sub: (r: Rules) => string | undefined): boolean => {
    for (let i = repo.length - 1; i >= 0; i--) {
      const path = sub(repo[i] as Rules);
      if (path === undefined) continue;
      const t = saysOf(repo[i] as Rules, path);
      if (t.ignored) return true;
      if (t.unignored) return false;
    }
    return false;
  };
  for (let k = 1; k <= n; k++) {
    // A rule file `depth` folders below the top applies to the folder k levels down when it is above it.
    const level = (r: Rules): string | undefined => {
      const p = parts(r);
      const depth = n - p.length;
      return depth < k ? `${p.slice(0, k - depth).join("/")}/` : undefined;
    };
    if (judged(level)) return true;
  }
  return n > 0 && judged((r) => `${r.prefix}${PROBE}`);
}

/** A plain name only a pattern for every file matches. */
const PROBE = "baton-probe-7f3a9c";

/**
 * Whether the directory `dirRel`, in the directory whose chain is `parent`, is ignored (so it
 * is walked only for what git tracks in it, and its own `.gitignore` is not to be read).
 */
export function dirIgnored(parent: Chain, dirRel: string): boolean {
  return dirRel !== "" && (parent.ignored || decision(parent, dirRel, true) === IGNORED);
}

/**
 * The chain inside `dirRel`, whose parent chain is `parent` and whose own `.gitignore` reads
 * `text` (none inside an ignored directory: see `dirIgnored`).
 */
export function dirChain(dirRel: string, parent: Chain, text: string | undefined, chains: Map<string, Chain>): Chain {
  const ignored = dirIgnored(parent, dirRel);
  if (ignored) text = undefined;
  const cached = chains.get(dirRel);
  if (cached && cached.parent === parent && cached.text === text && cached.ignored === ignored) return cached;
  const rules = text === undefined ? parent.rules : [...parent.rules, rulesOf(dirRel, "", text)];
  const chain: Chain = { parent, text, rules, excludes: parent.excludes, ignored, ownIn: parent.ownIn, decisions: new Map() };
  chains.set(dirRel, chain);
  return chain;
}

/** Whether a matcher says `rel` is ignored (a directory gets a trailing slash); false for a name it cannot express (e.g. "..."). */
function says(ig: Ignore, sub: string): { ignored: boolean; unignored: boolean } {
  try {
    return ig.test(sub);
  } catch {
    return { ignored: false, unignored: false };
  }
}

const NEITHER = { ignored: false, unignored: false };
const IGNORES = { ignored: true, unignored: false };
const TAKES_BACK = { ignored: false, unignored: true };

/**
 * What one rule file says of `sub` itself, as git asks it. The `ignore` package answers for a
 * path whose folder the same patterns ignore with the folder's answer (a file in an excluded
 * folder cannot be taken back): git's answer only where the walk stopped at that folder. A walk
 * that got here had the folder taken back by rules of more precedence (a deeper `.gitignore`'s
 * `!b/` under the root's `a/b/`, a `.gitignore` over `info/exclude`), and git then judges the
 * path by the patterns that match it alone (as for the folders above the workspace, when
 * `ignoresItself` finds the workspace's folder taken).
 */
function saysOf(r: Rules, sub: string): { ignored: boolean; unignored: boolean } {
  const t = says(r.ig, sub);
  if (!t.ignored) return t;
  const cut = sub.lastIndexOf("/", sub.length - 2);
  if (cut < 0 || !says(r.ig, sub.slice(0, cut + 1)).ignored) return t;
  if (r.alone === undefined) {
    const lines = patternsOf(r.text);
    r.alone = {
      lines,
      positive: ignore().add(lines.filter((l) => !l.startsWith("!")).map((l) => `!${l}`)),
      negative: ignore().add(lines.filter((l) => l.startsWith("!"))),
    };
  }
  const a = r.alone;
  const positive = says(a.positive, sub).unignored;
  if (positive !== says(a.negative, sub).unignored) return positive ? IGNORES : TAKES_BACK;
  if (!positive) return NEITHER;
  a.each ??= a.lines.map((l) => ({ negative: l.startsWith("!"), ig: ignore().add(l.startsWith("!") ? l : `!${l}`) })).reverse();
  for (const p of a.each) if (says(p.ig, sub).unignored) return p.negative ? TAKES_BACK : IGNORES;
  return NEITHER;
}

/** A rule file's pattern lines, as the `ignore` package reads them: no byte order mark, blank lines or comments. */
function patternsOf(text: string): string[] {
  return text
    .replace(/^\uFEFF/, "")
    .split(/\r?\n/)
    .filter((line) => line.trim() !== "" && !line.startsWith("#"));
}

/** Excluded when a configured exclude matches; else ignored when the deepest matcher with an opinion ignores `rel`. */
function decide(chain: Chain, rel: string, isDir: boolean): Decision {
  if (chain.excludes && says(chain.excludes, isDir ? `${rel}/` : rel).ignored) return EXCLUDED;
  if (rel === OWN_FILE && !isDir && !chain.ownIn) return EXCLUDED;
  if (chain.ignored) return IGNORED;
  const rules = chain.rules;
  for (let i = rules.length - 1; i >= 0; i--) {
    const r = rules[i] as Rules;
    const t = saysOf(r, r.prefix + (r.base === "" ? rel : rel.slice(r.base.length + 1)) + (isDir ? "/" : ""));
    if (t.ignored) return IGNORED;
    if (t.unignored) return TAKEN;
  }
  return TAKEN;
}

/**
 * Whether a whole-tree walk leaves `rel` out: excluded, or ignored and not tracked by git (a
 * folder holding a tracked file is walked; Baton's own LESSONS.md is not taken for being
 * tracked, only by a `.batonignore` negation). Each question put to git goes into `asked`.
 */
export function leftOut(chain: Chain, rel: string, isDir: boolean, tracked: Tracked | undefined, asked?: Asked[]): boolean {
  const d = decision(chain, rel, isDir);
  if (d === TAKEN) return false;
  if (d === EXCLUDED) return true;
  // Asked even when the index is unknown: a listing made then is made again once it is known.
  const t = isTracked(tracked, rel, isDir);
  asked?.push([rel, isDir, t]);
  return !t;
}

function decision(chain: Chain, rel: string, isDir: boolean): Decision {
  const key = isDir ? `${rel}/` : rel;
  let d = chain.decisions.get(key);
  if (d === undefined) {
    d = decide(chain, rel, isDir);
    chain.decisions.set(key, d);
  }
  return d;
}

/** Whether git answers every question a listing asked as it did then. */
export function sameAnswers(asked: readonly Asked[], tracked: Tracked | undefined): boolean {
  for (const [rel, isDir, was] of asked) if (isTracked(tracked, rel, isDir) !== was) return false;
  return true;
}

/**
 * The ignore rules a coverage question is judged with: the root's sources (configured
 * excludes, `.batonignore`, `.git/info/exclude`, in that order) and each directory's
 * `.gitignore` text (undefined: it has none; null: it is unknown, so nothing under that
 * directory is judged covered).
 */
export interface IgnoreSources {
  root: RootSources;
  gitignore: (dirRel: string) => string | undefined | null;
  /** What git tracks (ignore rules leave none of it out); undefined: not known, the rules alone decide. */
  tracked?: Tracked | undefined;
}

/**
 * Whether a whole-tree walk judged by `src` would take the file at `rel` if it existed: a
 * rollback asks it to know whether a tree checkpoint that does not list a path saw it absent
 * or never looked. Each answer and each directory's rules are computed once per predicate.
 */
export function coversWith(src: IgnoreSources): (rel: string) => boolean {
  const cache = new Map<string, Chain>(); // its own: chains of directories that may not exist stay out of the walk's cache
  const chains = new Map<string, Chain | null>();
  const chainOf = (dirRel: string, parent: Chain): Chain | null => {
    let c = chains.get(dirRel);
    if (c === undefined) {
      const text = dirIgnored(parent, dirRel) ? undefined : src.gitignore(dirRel);
      c = text === null ? null : dirChain(dirRel, parent, text, cache);
      chains.set(dirRel, c);
    }
    return c;
  };
  const memo = new Map<string, boolean>();
  const judge = (rel: string): boolean => {
    const parts = rel.split("/");
    if (parts[0] === ".baton" || rel.length > MAX_PATH_LENGTH) return false;
    let chain = chainOf("", chainFrom(src.root, cache));
    let dirRel = "";
    for (let i = 0; i < parts.length; i++) {
      if (chain === null) return false;
      const name = parts[i] as string;
      if (name === ".git" || UNSAFE_NAME.test(name) || (name.charCodeAt(0) === 46 && RESTORE_TEMP.test(name))) return false;
      const isDir = i < parts.length - 1;
      dirRel = dirRel === "" ? name : `${dirRel}/${name}`;
      if (leftOut(chain, dirRel, isDir, src.tracked)) return false;
      if (isDir) chain = chainOf(dirRel, chain);
    }
    return true;
  };
  return (rel) => {
    let d = memo.get(rel);
    if (d === undefined) {
      d = judge(rel);
      memo.set(rel, d);
    }
    return d;
  };
}

/**
 * Baton's own files at the workspace root, left out of every whole-tree checkpoint: so a
 * rollback to one never removes or rewinds them (a lesson learned after the checkpoint, from
 * the very rollback, would be lost). Only a `.batonignore` negation takes it back in: not a
 * `.gitignore` one (`!*.md` in an allow-list), nor git tracking it.
 */
const OWN_FILE = "LESSONS.md";
const OWN_FILES = `/${OWN_FILE}`;

/** Whether a whole-tree walk, with the ignore rules on disk now, would take the file at `rel` if it existed. */
export function walkCovers(root: string, opts: { exclude?: readonly string[] } = {}): (rel: string) => boolean {
  const repo = gitRepo(root);
  return coversWith({
    root: rootSources(root, opts.exclude ?? [], { repo }),
    gitignore: (dirRel) => readNoFollow(root, dirRel === "" ? ".gitignore" : `${dirRel}/.gitignore`),
    tracked: readTracked(root, undefined, { repo }),
  });
}

/**
 * The workspace's file tree, as a whole-tree checkpoint sees it: every regular file, minus
 * what git would ignore (each directory's `.gitignore`, `.git/info/exclude`), what the
 * workspace's `.batonignore` and the configured excludes name, and always `.baton/` and every
 * `.git` entry, and Baton's own LESSONS.md. Nested git repositories are walked like any directory: their files are
 * ordinary files and their `.git` is skipped, never renamed or touched. Symbolic links are
 * neither followed nor stored.
 *
 * The `ignore` package implements gitignore matching (negations, anchoring, directory-only
 * patterns, escaping) as git does; each `.gitignore` gets its own matcher relative to its
 * directory, and the deepest one with an opinion decides, as in git.
 */
import { closeSync, constants, type Dirent, fstatSync, lstatSync, openSync, readdirSync, readFileSync } from "node:fs";
import ignore, { type Ignore } from "ignore";
import { MAX_PATH_LENGTH, pathProblem } from "../../core/time-travel/paths.js";
import { RESTORE_TEMP } from "../../platform/safe-fs.js";

/** The numbers kept per file, in `TreeScan.stats`: size, mtime, ctime, inode, mode (permission bits). */
export const STAT_FIELDS = 5;
export const SIZE = 0;
export const MTIME = 1;
export const CTIME = 2;
export const INO = 3;
export const MODE = 4;

export interface TreeScan {
  /** The files, sorted by path. */
  paths: string[];
  /** STAT_FIELDS numbers per path, in the same order (flat, so comparing a large tree stays cheap). */
  stats: Float64Array;
  /** Entries left out for a reason worth telling (an unsafe name, an unreadable directory). */
  skipped: { path: string; reason: string }[];
}

/** Names a stored path may not contain (core/time-travel/paths.ts): control characters, backslashes. */
const UNSAFE_NAME = /[\x00-\x1f\\]/;

interface Rules {
  /** Directory the matcher's patterns are relative to ("" for the root). */
  base: string;
  ig: Ignore;
}

/**
 * The matchers that apply inside one directory: its parent's plus its own `.gitignore`, and the
 * decisions already taken with them (path, with a trailing slash for a directory → ignored).
 * A chain is reused by the next scan only while its parent chain is the same object and its
 * `.gitignore` has the same text, so a cached decision always comes from the same patterns.
 */
interface Chain {
  parent: Chain | undefined;
  /** The directory's own `.gitignore` (or, for the root, every root source), undefined when it has none. */
  text: string | undefined;
  rules: Rules[];
  decisions: Map<string, boolean>;
}

/** One directory's walkable entries, filtered by its patterns and sorted (a directory sorting as its name plus "/"). */
interface Listing {
  chain: Chain;
  /** What readdir returned, in its order: names, and one kind letter each (d, f, or o for anything else). */
  names: string[];
  kinds: string;
  entries: { rel: string; abs: string; isDir: boolean }[];
  skipped: { path: string; reason: string }[];
}

/**
 * What one process keeps between whole-tree scans: each directory's matcher chain with its
 * decisions, and its filtered, sorted listing. Every scan still reads every directory and
 * every `.gitignore`; a listing is reused only when readdir returned exactly the same names
 * and kinds and the directory's patterns are the same, so an unchanged tree is matched
 * against gitignore patterns and sorted once, not per scan.
 */
export class WalkCache {
  readonly chains = new Map<string, Chain>();
  readonly listings = new Map<string, Listing>();
  /** How many files the last scan found (the next one's first guess). */
  files = 0;
}

/** A scan being built: paths and their stats, the stats array grown as needed. */
interface Acc {
  paths: string[];
  stats: Float64Array;
  skipped: { path: string; reason: string }[];
  /** Told the number of files found so far after each directory. */
  onDir?: ((files: number) => void) | undefined;
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/** The root's chain from its sources: configured excludes, `.batonignore`, `.git/info/exclude`. */
function chainFrom(sources: readonly string[], cache: WalkCache): Chain {
  const text = sources.join("\u0000");
  const cached = cache.chains.get("\u0000root");
  if (cached?.text === text) return cached;
  const ig = ignore();
  for (const t of sources) if (t !== "") ig.add(t);
  const chain: Chain = { parent: undefined, text, rules: [{ base: "", ig }], decisions: new Map() };
  cache.chains.set("\u0000root", chain);
  return chain;
}

/** The chain inside `dirRel`, whose parent chain is `parent` and whose own `.gitignore` reads `text`. */
function dirChain(dirRel: string, parent: Chain, text: string | undefined, cache: WalkCache): Chain {
  const cached = cache.chains.get(dirRel);
  if (cached && cached.parent === parent && cached.text === text) return cached;
  const rules = text === undefined ? parent.rules : [...parent.rules, { base: dirRel, ig: ignore().add(text) }];
  const chain: Chain = { parent, text, rules, decisions: new Map() };
  cache.chains.set(dirRel, chain);
  return chain;
}

/** Whether the deepest matcher with an opinion ignores `rel` (a directory gets a trailing slash). */
function decide(rules: readonly Rules[], rel: string, isDir: boolean): boolean {
  for (let i = rules.length - 1; i >= 0; i--) {
    const r = rules[i] as Rules;
    const sub = (r.base === "" ? rel : rel.slice(r.base.length + 1)) + (isDir ? "/" : "");
    let t: { ignored: boolean; unignored: boolean };
    try {
      t = r.ig.test(sub);
    } catch {
      continue; // a name `ignore` cannot express (e.g. "..."): no opinion
    }
    if (t.ignored) return true;
    if (t.unignored) return false;
  }
  return false;
}

function ignored(chain: Chain, rel: string, isDir: boolean): boolean {
  const key = isDir ? `${rel}/` : rel;
  let d = chain.decisions.get(key);
  if (d === undefined) {
    d = decide(chain.rules, rel, isDir);
    chain.decisions.set(key, d);
  }
  return d;
}

const byKey = (a: { key: string }, b: { key: string }) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

const kindOf = (e: Dirent): string => (e.isDirectory() ? "d" : e.isFile() ? "f" : "o");

export function walkTree(
  root: string,
  opts: { exclude?: readonly string[]; cache?: WalkCache; onDir?: (files: number) => void } = {},
): TreeScan {
  const cache = opts.cache ?? new WalkCache();
  const out: Acc = {
    paths: [],
    stats: new Float64Array(Math.max(64, cache.files + 64) * STAT_FIELDS),
    skipped: [],
    onDir: opts.onDir,
  };
  const seen = new Set<string>();
  walkDir(root, "", chainFrom(rootSources(root, opts.exclude ?? []), cache), cache, seen, out);
  cache.files = out.paths.length;
  // Forget directories that are gone (a long-lived process must not keep every name it ever saw).
  if (cache.listings.size > seen.size) {
    for (const k of cache.listings.keys()) {
      if (seen.has(k)) continue;
      cache.listings.delete(k);
      cache.chains.delete(k);
    }
  }
  return { paths: out.paths, stats: out.stats.subarray(0, out.paths.length * STAT_FIELDS), skipped: out.skipped };
}

/**
 * The ignore rules a coverage question is judged with: the root's sources (configured
 * excludes, `.batonignore`, `.git/info/exclude`, in that order) and each directory's
 * `.gitignore` text (undefined: it has none; null: it is unknown, so nothing under that
 * directory is judged covered).
 */
export interface IgnoreSources {
  root: readonly string[];
  gitignore: (dirRel: string) => string | undefined | null;
}

/**
 * Whether a whole-tree walk judged by `src` would take the file at `rel` if it existed: a
 * rollback asks it to know whether a tree checkpoint that does not list a path saw it absent
 * or never looked. Each answer and each directory's rules are computed once per predicate.
 */
export function coversWith(src: IgnoreSources): (rel: string) => boolean {
  const cache = new WalkCache(); // its own: chains of directories that may not exist stay out of the walk's cache
  const chains = new Map<string, Chain | null>();
  const chainOf = (dirRel: string, parent: Chain): Chain | null => {
    let c = chains.get(dirRel);
    if (c === undefined) {
      const text = src.gitignore(dirRel);
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
      if (ignored(chain, dirRel, isDir)) return false;
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
 * the very rollback, would be lost). First, so a user's `.batonignore` can still take them in.
 */
const OWN_FILES = "/LESSONS.md";

/** The root ignore sources on disk now (every one read without following a link). */
export function rootSources(root: string, exclude: readonly string[]): string[] {
  return [[OWN_FILES, ...exclude].join("\n"), readNoFollow(root, ".batonignore") ?? "", readNoFollow(root, ".git/info/exclude") ?? ""];
}

/** Whether a whole-tree walk, with the ignore rules on disk now, would take the file at `rel` if it existed. */
export function walkCovers(root: string, opts: { exclude?: readonly string[] } = {}): (rel: string) => boolean {
  return coversWith({
    root: rootSources(root, opts.exclude ?? []),
    gitignore: (dirRel) => readNoFollow(root, dirRel === "" ? ".gitignore" : `${dirRel}/.gitignore`),
  });
}

/**
 * A file's text, read as the walk reaches it: no link followed on the way or at the end, a
 * non-directory on the way or a non-regular file meaning none.
 */
export function readNoFollow(root: string, rel: string): string | undefined {
  const parts = rel.split("/");
  let abs = root;
  for (let i = 0; i < parts.length - 1; i++) {
    abs = `${abs}/${parts[i]}`;
    try {
      if (!lstatSync(abs).isDirectory()) return undefined;
    } catch {
      return undefined;
    }
  }
  let fd: number;
  try {
    fd = openSync(`${root}/${rel}`, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return undefined; // absent, or a link (ELOOP)
  }
  try {
    return fstatSync(fd).isFile() ? readFileSync(fd, "utf8") : undefined;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/**
 * One directory, depth first with each directory's entries in order, so the files come out
 * sorted by path without a sort of the whole list.
 */
function walkDir(root: string, dirRel: string, parentChain: Chain, cache: WalkCache, seen: Set<string>, out: Acc): void {
  const abs = dirRel === "" ? root : `${root}/${dirRel}`;
  let dirents: Dirent[];
  try {
    dirents = readdirSync(abs, { withFileTypes: true });
  } catch (err) {
    out.skipped.push({ path: dirRel || ".", reason: `unreadable directory (${(err as NodeJS.ErrnoException).code ?? "error"})` });
    return;
  }
  seen.add(dirRel);
  const last = cache.listings.get(dirRel);
  let same = last !== undefined && last.names.length === dirents.length;
  let gitignore = false;
  for (let i = 0; i < dirents.length; i++) {
    const e = dirents[i] as Dirent;
    if (same && (e.name !== (last as Listing).names[i] || kindOf(e) !== (last as Listing).kinds[i])) same = false;
    if (e.name === ".gitignore" && e.isFile()) gitignore = true;
  }
  const chain = dirChain(dirRel, parentChain, gitignore ? readText(`${abs}/.gitignore`) : undefined, cache);
  const listing = same && (last as Listing).chain === chain ? (last as Listing) : list(dirRel, abs, dirents, chain);
  if (listing !== last) cache.listings.set(dirRel, listing);
  if (listing.skipped.length > 0) out.skipped.push(...listing.skipped);
  for (const e of listing.entries) {
    if (e.isDir) {
      walkDir(root, e.rel, chain, cache, seen, out);
      continue;
    }
    let st: ReturnType<typeof lstatSync>;
    try {
      st = lstatSync(e.abs);
    } catch {
      continue; // vanished while walking
    }
    if (!st.isFile()) continue;
    const at = out.paths.length * STAT_FIELDS;
    if (at + STAT_FIELDS > out.stats.length) {
      const grown = new Float64Array(out.stats.length * 2);
      grown.set(out.stats);
      out.stats = grown;
    }
    out.paths.push(e.rel);
    out.stats[at + SIZE] = st.size;
    out.stats[at + MTIME] = st.mtimeMs;
    out.stats[at + CTIME] = st.ctimeMs;
    out.stats[at + INO] = st.ino;
    out.stats[at + MODE] = st.mode & 0o777;
  }
  out.onDir?.(out.paths.length);
}

/** A directory's listing: what a tree checkpoint walks in it, in order, and what it leaves out for a reason worth telling. */
function list(dirRel: string, abs: string, dirents: Dirent[], chain: Chain): Listing {
  const listing: Listing = { chain, names: [], kinds: "", entries: [], skipped: [] };
  const keyed: { key: string; rel: string; abs: string; isDir: boolean }[] = [];
  for (const e of dirents) {
    const name = e.name;
    const kind = kindOf(e);
    listing.names.push(name);
    listing.kinds += kind;
    if (kind === "o") continue; // symlinks, sockets, devices
    if (name === ".git" || (dirRel === "" && name === ".baton") || (name.charCodeAt(0) === 46 && RESTORE_TEMP.test(name))) continue;
    const isDir = kind === "d";
    const rel = dirRel === "" ? name : `${dirRel}/${name}`;
    if (ignored(chain, rel, isDir)) continue;
    // A walked path is built from real names, so only the name itself can be unsafe.
    if (UNSAFE_NAME.test(name) || rel.length > MAX_PATH_LENGTH) {
      listing.skipped.push({ path: rel, reason: `unsafe name: ${pathProblem(rel) ?? "too long"}` });
      continue;
    }
    keyed.push({ key: isDir ? `${name}/` : name, rel, abs: `${abs}/${name}`, isDir });
  }
  keyed.sort(byKey);
  for (const { rel, abs: a, isDir } of keyed) listing.entries.push({ rel, abs: a, isDir });
  if (chain.decisions.size > 2 * dirents.length + 64) chain.decisions.clear(); // names that came and went
  return listing;
}

/**
 * The workspace's file tree, as a whole-tree checkpoint sees it: every regular file, minus
 * the untracked files the ignore rules name (each directory's `.gitignore`,
 * `.git/info/exclude`, the workspace's `.batonignore`), minus what the configured excludes
 * name, and always minus `.baton/`, every `.git` entry, and Baton's own LESSONS.md. As in git,
 * ignore rules never leave out a file git tracks (`platform/git-index.ts`): a file tracked
 * before a pattern matched it, or force-added, is taken; a repository's `*` does not switch
 * checkpoints off, nor does a submodule's. Nested git repositories are walked like any directory: their files are
 * ordinary files and their `.git` is skipped, never renamed or touched. Symbolic links are
 * neither followed nor stored. The rules themselves are in `tree-rules.ts`.
 */
import { type Dirent, lstatSync, readdirSync } from "node:fs";
import { MAX_PATH_LENGTH, pathProblem } from "../../core/time-travel/paths.js";
import { readTracked, type Tracked, TrackedCache } from "../../platform/git-index.js";
import { gitRepo } from "../../platform/git-repo.js";
import { NOT_UTF8, notUtf8Names, RESTORE_TEMP } from "../../platform/safe-fs.js";
import { readSettingsText, SETTINGS_MAX_BYTES } from "../../platform/settings-text.js";
import { type Asked, type Chain, chainFrom, dirChain, dirIgnored, leftOut, sameAnswers, UNSAFE_NAME } from "./tree-rules.js";
import { type RootSources, rootSources } from "./tree-sources.js";

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
  /** The root's rules the walk judged by (a tree checkpoint keeps those from outside the workspace). */
  sources: RootSources;
  /**
   * The `.gitignore` files the walk read and judged by but did not take, as [folder, text]: one a
   * rule leaves out, often itself (`*` in a Python venv's, pytest's or mypy's cache folder). A
   * tree checkpoint keeps them, so a rollback knows what it left out there once they are gone.
   */
  unlisted: [dir: string, text: string][];
  /**
   * Paths no rule leaves out that are not files or folders (a symbolic link, a socket): not
   * stored, so a tree checkpoint keeps their names and a rollback leaves what is there now alone
   * (a file `sed -i` wrote in place of a link is not the checkpoint's to remove).
   */
  others: string[];
}

/** One directory's walkable entries, filtered by its patterns and sorted (a directory sorting as its name plus "/"). */
interface Listing {
  chain: Chain;
  /**
   * The ignored entries git was asked about, and its answers (a tracked file or a folder with
   * one is taken): the listing is reused only while git answers each the same.
   */
  asked: Asked[];
  /** What readdir returned, in its order: names, and one kind letter each (d, f, or o for anything else). */
  names: string[];
  kinds: string;
  entries: { rel: string; abs: string; isDir: boolean }[];
  skipped: { path: string; reason: string }[];
  /** Entries no rule leaves out that are not files or folders (links, sockets, FIFOs, devices): `TreeScan.others`. */
  others: string[];
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
  /** The last read of the git index: an unchanged index is not read again. */
  readonly git = new TrackedCache();
  readonly listings = new Map<string, Listing>();
  /** How many files the last scan found (the next one's first guess). */
  files = 0;
}

/** A scan being built: paths and their stats, the stats array grown as needed. */
interface Acc {
  paths: string[];
  stats: Float64Array;
  skipped: { path: string; reason: string }[];
  unlisted: [dir: string, text: string][];
  others: string[];
  /** Told the number of files found so far after each directory. */
  onDir?: ((files: number) => void) | undefined;
}

/** A folder's `.gitignore`, as git reads it but not through a link, nor blocking on a FIFO put there. */
function readText(path: string): string | undefined {
  try {
    return readSettingsText(path, SETTINGS_MAX_BYTES, { follow: false });
  } catch {
    return undefined;
  }
}

/** Past this many links (or sockets) in one folder, the folder's own name stands for them in `TreeScan.others`. */
const OTHERS_PER_FOLDER = 16;

/** Past this, a `.gitignore` the walk read but did not list is not kept with the checkpoint: what it ignored counts as unknown. */
const UNLISTED_MAX_CHARS = 64 * 1024;

const byKey = (a: { key: string }, b: { key: string }) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

const kindOf = (e: Dirent): string => (e.isDirectory() ? "d" : e.isFile() ? "f" : "o");

/** Whether lstat finds `path` (an error, EACCES in a folder listed but not searchable, says no). */
function exists(path: string): boolean {
  try {
    return lstatSync(path, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false;
  }
}

export function walkTree(
  root: string,
  opts: { exclude?: readonly string[]; cache?: WalkCache; onDir?: (files: number) => void } = {},
): TreeScan {
  const cache = opts.cache ?? new WalkCache();
  const out: Acc = {
    paths: [],
    stats: new Float64Array(Math.max(64, cache.files + 64) * STAT_FIELDS),
    skipped: [],
    unlisted: [],
    others: [],
    onDir: opts.onDir,
  };
  const seen = new Set<string>();
  const repo = gitRepo(root);
  const tracked = readTracked(root, cache.git, { repo });
  const sources = rootSources(root, opts.exclude ?? [], { repo });
  walkDir(root, "", chainFrom(sources, cache.chains), tracked, cache, seen, out);
  cache.files = out.paths.length;
  // Forget directories that are gone (a long-lived process must not keep every name it ever saw).
  if (cache.listings.size > seen.size) {
    for (const k of cache.listings.keys()) {
      if (seen.has(k)) continue;
      cache.listings.delete(k);
      cache.chains.delete(k);
    }
  }
  return {
    paths: out.paths,
    stats: out.stats.subarray(0, out.paths.length * STAT_FIELDS),
    skipped: out.skipped,
    sources,
    unlisted: out.unlisted,
    others: out.others,
  };
}

/**
 * One directory, depth first with each directory's entries in order, so the files come out
 * sorted by path without a sort of the whole list.
 */
function walkDir(
  root: string,
  dirRel: string,
  parentChain: Chain,
  tracked: Tracked | undefined,
  cache: WalkCache,
  seen: Set<string>,
  out: Acc,
): void {
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
  const own = gitignore && !dirIgnored(parentChain, dirRel) ? readText(`${abs}/.gitignore`) : undefined;
  const chain = dirChain(dirRel, parentChain, own, cache.chains);
  const listing =
    same && (last as Listing).chain === chain && sameAnswers((last as Listing).asked, tracked)
      ? (last as Listing)
      : list(dirRel, abs, dirents, chain, tracked);
  if (listing !== last) cache.listings.set(dirRel, listing);
  if (listing.skipped.length > 0) out.skipped.push(...listing.skipped);
  if (listing.others.length > 0) out.others.push(...listing.others);
  if (own !== undefined) {
    const rel = dirRel === "" ? ".gitignore" : `${dirRel}/.gitignore`;
    if (!listing.entries.some((e) => e.rel === rel)) {
      if (own.length <= UNLISTED_MAX_CHARS) out.unlisted.push([dirRel, own]);
      else out.others.push(dirRel === "" ? "." : dirRel);
    }
  }
  for (const e of listing.entries) {
    if (e.isDir) {
      walkDir(root, e.rel, chain, tracked, cache, seen, out);
      continue;
    }
    let st: ReturnType<typeof lstatSync>;
    try {
      st = lstatSync(e.abs);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR") continue; // vanished while walking
      // Listed but not searchable (read without execute permission): the folder, once.
      if (code === "EACCES") {
        out.skipped.push({ path: dirRel || ".", reason: "unreadable directory (EACCES)" });
        break;
      }
      out.skipped.push({ path: e.rel, reason: `unreadable (${code ?? "error"})` });
      continue;
    }
    if (!st.isFile()) {
      out.others.push(e.rel); // a link or FIFO put in its place since the listing: known, not stored
      continue;
    }
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
function list(dirRel: string, abs: string, dirents: Dirent[], chain: Chain, tracked: Tracked | undefined): Listing {
  const listing: Listing = { chain, asked: [], names: [], kinds: "", entries: [], skipped: [], others: [] };
  const keyed: { key: string; rel: string; abs: string; isDir: boolean }[] = [];
  let notUtf8: Set<string> | undefined;
  const fffd = new Set<string>();
  for (const e of dirents) {
    const name = e.name;
    const kind = kindOf(e);
    listing.names.push(name);
    listing.kinds += kind;
    if (name === ".git" || (dirRel === "" && name === ".baton") || (name.charCodeAt(0) === 46 && RESTORE_TEMP.test(name))) continue;
    const isDir = kind === "d";
    const rel = dirRel === "" ? name : `${dirRel}/${name}`;
    // A link is judged as a file, and as the folder a real one put in its place would be.
    if (leftOut(chain, rel, isDir, tracked, listing.asked) && (kind !== "o" || leftOut(chain, rel, true, tracked, listing.asked))) continue;
    if (kind === "o") {
      listing.others.push(rel); // not stored (a link is never followed), but known to be there
      continue;
    }
    // A walked path is built from real names, so only the name itself can be unsafe.
    if (UNSAFE_NAME.test(name) || rel.length > MAX_PATH_LENGTH) {
      listing.skipped.push({ path: rel, reason: `unsafe name: ${pathProblem(rel) ?? "too long"}` });
      continue;
    }
    if (name.includes("\uFFFD")) {
      notUtf8 ??= notUtf8Names(abs);
      // A valid name that holds U+FFFD itself is the one lstat finds, once; its undecodable twins are not.
      if (notUtf8.has(name) && (fffd.has(name) || !exists(`${abs}/${name}`))) {
        listing.skipped.push({ path: rel, reason: NOT_UTF8 });
        continue;
      }
      fffd.add(name);
    }
    keyed.push({ key: isDir ? `${name}/` : name, rel, abs: `${abs}/${name}`, isDir });
  }
  // Many (a package manager's links): the folder stands for them, so a checkpoint keeps one name.
  if (dirRel !== "" && listing.others.length > OTHERS_PER_FOLDER) listing.others = [dirRel];
  keyed.sort(byKey);
  for (const { rel, abs: a, isDir } of keyed) listing.entries.push({ rel, abs: a, isDir });
  if (chain.decisions.size > 2 * dirents.length + 64) chain.decisions.clear(); // names that came and went
  return listing;
}

/**
 * The files git tracks in a workspace, read from the index of the repository it is in (the
 * nearest `.git` at or above it: a folder, or a file naming one, as a worktree's does; a
 * workspace in a folder of a larger repository asks about its own paths there). Ignore rules, in git, apply to untracked files
 * only: a whole-tree checkpoint asks this so a tracked file a pattern matches (one tracked
 * before it was ignored, or force-added; or every file, under a stranger's `*`) is still taken.
 *
 * The index is read whole (`git-index-format.ts` parses it), with each checked-out submodule's;
 * one this cannot read with confidence (over MAX_INDEX_BYTES too) reads as unknown, and the
 * caller falls back to the ignore rules alone. Nothing is followed through a link, nothing written.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync } from "node:fs";
import { join } from "node:path";
import { type IndexFiles, parseIndex, type Tracked } from "./git-index-format.js";
import { gitRepo } from "./git-repo.js";
import { NotASettingsFile, readSettingsBytes } from "./settings-text.js";

export { type IndexFiles, parseIndex, type Tracked };

/** A larger index is not read (a repository of millions of files): the ignore rules alone decide there. */
export const MAX_INDEX_BYTES = 256 * 1024 * 1024;
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const NONBLOCK = constants.O_NONBLOCK ?? 0;

/** What a long-lived process keeps between reads: the last index's identity and what it held, and each submodule's. */
export class TrackedCache {
  key = "";
  files: IndexFiles | undefined;
  /** By the submodule's path in the workspace. */
  readonly submodules = new Map<string, TrackedCache>();
}

/** Submodules inside submodules are read this deep. */
const MAX_SUBMODULE_DEPTH = 4;

/**
 * What git tracks in the workspace at `root` now; undefined when it is not a git workspace or
 * its index cannot be read with confidence. With a cache, an unchanged index (same identity and
 * stat) is not read again. `found`: the repository, when the caller looked it up already.
 *
 * A submodule inside the workspace (a gitlink in the index, checked out as a real folder with
 * its own `.git`) has its files in its own index, read the same way: a file it tracks is
 * tracked, whatever the submodule's ignore rules say (a `*` there does not leave its files out
 * of whole-tree checkpoints either). A submodule whose index cannot be read has its files
 * judged by the ignore rules alone.
 */
export function readTracked(
  root: string,
  cache?: TrackedCache,
  found?: { repo: ReturnType<typeof gitRepo> },
  depth = 0,
): Tracked | undefined {
  const git = found ? found.repo : gitRepo(root); // looked up already, even when there is none
  if (git === undefined || "problem" in git) return forget(cache);
  const files = readIndexFile(join(git.gitDir, "index"), cache);
  if (files === undefined) return undefined;
  const prefix = git.prefix;
  const own = under(files, prefix);
  const links = files.gitlinks();
  if (links.length === 0 || depth >= MAX_SUBMODULE_DEPTH) {
    cache?.submodules.clear();
    return own;
  }
  const inner: [rel: string, tracked: Tracked][] = [];
  const seen = new Set<string>();
  for (const link of links) {
    if (!link.startsWith(prefix)) continue;
    const rel = link.slice(prefix.length);
    const dir = join(root, rel);
    if (!realFolder(dir)) continue; // not checked out, or a link: the walk does not go there
    const repo = gitRepo(dir);
    if (repo === undefined || "problem" in repo || repo.prefix !== "") continue; // not its own repository
    seen.add(rel);
    let sub: TrackedCache | undefined;
    if (cache) {
      sub = cache.submodules.get(rel) ?? new TrackedCache();
      cache.submodules.set(rel, sub);
    }
    const t = readTracked(dir, sub, { repo }, depth + 1);
    if (t !== undefined) inner.push([rel, t]);
  }
  if (cache) for (const rel of cache.submodules.keys()) if (!seen.has(rel)) cache.submodules.delete(rel);
  return inner.length === 0 ? own : withSubmodules(own, inner);
}

function realFolder(dir: string): boolean {
  try {
    return lstatSync(dir).isDirectory();
  } catch {
    return false;
  }
}

/** What `own` tracks, and under each submodule's path what that submodule's index tracks. */
function withSubmodules(own: Tracked, inner: readonly (readonly [rel: string, tracked: Tracked])[]): Tracked {
  return {
    file(rel) {
      if (own.file(rel)) return true;
      for (const [dir, t] of inner)
        if (rel.length > dir.length && rel.startsWith(dir) && rel[dir.length] === "/" && t.file(rel.slice(dir.length + 1))) return true;
      return false;
    },
    under(dirRel) {
      if (own.under(dirRel)) return true;
      for (const [dir, t] of inner) {
        // The submodule itself, or a folder holding it: its checkout has tracked files (a walk only for them costs a walk).
        if (dir === dirRel || (dir.length > dirRel.length && dir.startsWith(dirRel) && dir[dirRel.length] === "/")) return true;
        if (dirRel.length > dir.length && dirRel.startsWith(dir) && dirRel[dir.length] === "/" && t.under(dirRel.slice(dir.length + 1)))
          return true;
      }
      return false;
    },
  };
}

/** An index file read whole, or as the cache kept it while its identity and stat stay the same; undefined when there is none or it cannot be read with confidence. */
function readIndexFile(file: string, cache: TrackedCache | undefined): IndexFiles | undefined {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | NOFOLLOW | NONBLOCK); // a FIFO named index would hang a blocking open
  } catch {
    return forget(cache); // none yet (a fresh `git init`), or a link
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > MAX_INDEX_BYTES) return forget(cache);
    const key = `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
    if (cache && cache.key === key) return cache.files;
    const buf = Buffer.allocUnsafe(st.size);
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, got);
      if (n === 0) break;
      got += n;
    }
    const files = got === buf.length ? parseIndex(buf) : undefined;
    if (cache) {
      cache.key = key;
      cache.files = files;
    }
    return files;
  } catch {
    return forget(cache);
  } finally {
    closeSync(fd);
  }
}

function forget(cache: TrackedCache | undefined): undefined {
  if (cache) {
    cache.key = "";
    cache.files = undefined;
    cache.submodules.clear();
  }
  return undefined;
}

/** What `t` tracks, asked with paths relative to a folder `prefix` inside its repository. */
function under(t: Tracked, prefix: string): Tracked {
  if (prefix === "") return t;
  return { file: (rel) => t.file(prefix + rel), under: (dirRel) => t.under(prefix + dirRel) };
}

/**
 * The index of the repository the workspace at `root` is in, read whole for a question asked now
 * and then (a session's start, `baton doctor`, a server's start): its files and the workspace's
 * prefix in it; a problem with what would help ("" when nothing in git would) when it exists but
 * cannot be read with confidence; undefined when there is no repository or no index yet. Never
 * through a link, never waiting on a FIFO.
 */
export function readIndex(root: string): { files: IndexFiles; prefix: string } | { problem: string; fix: string } | undefined {
  const git = gitRepo(root);
  if (git === undefined) return undefined;
  if ("problem" in git) return { problem: git.problem, fix: "" };
  const file = join(git.gitDir, "index");
  let buf: Buffer | undefined;
  try {
    buf = readSettingsBytes(file, MAX_INDEX_BYTES, { follow: false }); // no link, no wait on a FIFO, bounded
  } catch (err) {
    if (err instanceof NotASettingsFile) return { problem: err.message, fix: "" };
    const code = (err as NodeJS.ErrnoException).code;
    return {
      problem: code === "ELOOP" ? `${file}: not a regular file` : `${file} cannot be read (${code ?? (err as Error).message})`,
      fix: "",
    };
  }
  if (buf === undefined) return undefined; // no index yet
  const why: { split?: boolean } = {};
  const files = parseIndex(buf, why);
  if (files) return { files, prefix: git.prefix };
  return why.split
    ? {
        problem: `${file} is split (core.splitIndex): most of its entries are in another file, which Baton does not read`,
        fix: "git config core.splitIndex false && git update-index --no-split-index",
      }
    : { problem: `${file} is damaged, or in a format Baton does not read`, fix: "git update-index --force-write-index" };
}

/**
 * Why git's index cannot be read for the workspace at `root`, when it is in a repository whose
 * index exists (`baton doctor`: whole-tree checkpoints then leave out the tracked files the
 * ignore rules name), with what would help ("" when nothing in git would); undefined when it
 * can be read, or there is none.
 */
export function indexProblem(root: string): { problem: string; fix: string } | undefined {
  const read = readIndex(root);
  return read && "problem" in read ? read : undefined;
}

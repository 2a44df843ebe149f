/**
 * The git repository a workspace is in: the nearest `.git` at or above its real path, found as
 * git finds it (a folder, or a file naming a worktree's or submodule's git directory), for the
 * whole-tree checkpoint's questions to git (`git-index.ts`, `tree-rules.ts`). Nothing is
 * followed through a link, nothing opened blocking, nothing written.
 */
import { lstatSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve, sep } from "node:path";
import { readSettingsText } from "./settings-text.js";

/** The repository a workspace is in, as `gitRepo` finds it. */
export interface GitRepo {
  /** The folder holding the `.git` (the repository's top, or a worktree's). */
  top: string;
  /** Its git directory: `.git`, or the folder a `.git` file names (where the index is). */
  gitDir: string;
  /** Where the repository's shared files are (`info/exclude`): a worktree's `commondir`, else `gitDir`. */
  commonDir: string;
  /** The workspace's path inside `top`: "" at the top, else ending in "/". */
  prefix: string;
}

/**
 * The repository the workspace at `root` is in: the nearest `.git` at or above its real path,
 * a folder or a file saying `gitdir: <dir>` (a worktree's, a submodule's). As git does, the
 * search stops at a file system boundary and, on POSIX, at a `.git` above the workspace that
 * another user owns (one planted in a shared folder decides nothing). Undefined when none is
 * found; a problem when the nearest `.git` is not one Baton follows (a link, a `.git` file
 * naming a folder git would not use).
 */
export function gitRepo(root: string): GitRepo | { problem: string } | undefined {
  let dir: string;
  try {
    dir = realpathSync.native(root); // one system call: the JavaScript one lstats each component
  } catch {
    return undefined;
  }
  let dev: number | undefined;
  let prefix = "";
  for (;;) {
    let here: ReturnType<typeof lstatSync>;
    try {
      here = lstatSync(dir);
    } catch {
      return undefined;
    }
    if (dev === undefined) dev = here.dev;
    else if (here.dev !== dev) return undefined; // another file system: not the workspace's repository
    const dotGit = join(dir, ".git");
    let st: ReturnType<typeof lstatSync> | undefined;
    try {
      st = lstatSync(dotGit);
    } catch {
      st = undefined;
    }
    if (st) {
      // Above the workspace, as git's safe.directory check: another user's repository (one
      // planted in a shared folder such as /tmp) decides nothing; doctor says so. The
      // workspace's own `.git` is the project the user chose, whoever owns it (a container's
      // root on a checkout of the host's user).
      if (prefix !== "" && UID !== undefined && st.uid !== UID)
        return { problem: `${dotGit}, above the workspace, is owned by another user (uid ${st.uid}), so Baton does not read it` };
      if (st.isDirectory()) return { top: dir, gitDir: dotGit, commonDir: dotGit, prefix };
      const gitDir = st.isFile() ? gitdirOf(dotGit, dir) : undefined;
      if (gitDir !== undefined) return { top: dir, gitDir, commonDir: commonDirOf(gitDir), prefix };
      return {
        problem: st.isSymbolicLink()
          ? `${dotGit} is a symbolic link, which Baton does not follow`
          : `${dotGit} does not name a folder git keeps a worktree or submodule in (…/worktrees/<name>, .git/modules/…)`,
      };
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    prefix = `${basename(dir)}/${prefix}`;
    dir = parent;
  }
}

const UID = typeof process.getuid === "function" ? process.getuid() : undefined;

/** The folder a `.git` file names (`gitdir: <dir>`, relative to the folder holding it), when git would have put one there. */
function gitdirOf(dotGit: string, dir: string): string | undefined {
  const text = readSmall(dotGit);
  if (text === undefined) return undefined;
  const m = /^gitdir: (.+?)\r?\n?$/.exec(text);
  if (!m?.[1]) return undefined;
  const gitdir = (isAbsolute(m[1]) ? m[1] : resolve(dir, m[1])).split(sep).join("/");
  // Only where git puts one: a worktree's (`<git dir>/worktrees/<name>`, the git dir a `.git`
  // folder or a bare repository) or a submodule's (`.git/modules/<name>`). A file naming
  // anywhere else (a network mount's path, say) is not followed: the ignore rules alone decide.
  return /\/worktrees\/[^/]+\/?$/.test(gitdir) || /\.git\/modules\/[^/]/.test(gitdir) ? gitdir : undefined;
}

/** A small regular file's text (at most 4 KiB), opened without blocking or following a link; undefined otherwise. */
function readSmall(file: string): string | undefined {
  try {
    return readSettingsText(file, 4096, { follow: false });
  } catch {
    return undefined;
  }
}

/**
 * A worktree's shared git directory: the folder its `commondir` file names (relative to it),
 * when that folder's `worktrees/<name>` is this very git directory; else the folder itself.
 */
function commonDirOf(gitDir: string): string {
  const text = readSmall(join(gitDir, "commondir"))?.trim() ?? "";
  if (text === "") return gitDir;
  const common = isAbsolute(text) ? text : resolve(gitDir, text);
  try {
    if (realpathSync(join(common, "worktrees", basename(gitDir))) === realpathSync(gitDir)) return common;
  } catch {
    // gone, or unreadable
  }
  return gitDir;
}

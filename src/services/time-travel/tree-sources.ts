/**
 * Where a whole-tree checkpoint's root rules come from (`tree-rules.ts` judges with them): the
 * configured excludes, `.batonignore`, and in a repository the user's global ignore file,
 * `info/exclude` and the `.gitignore` files above the workspace; how a tree checkpoint keeps
 * them (`outside_rules`); and reading a rule file as the walk reaches it, without following a
 * link or blocking.
 */
import { lstatSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { globalExcludesFile } from "../../platform/git-config.js";
import { type GitRepo, gitRepo } from "../../platform/git-repo.js";
import { realOr } from "../../platform/moved-config.js";
import { readSettingsText, SETTINGS_MAX_BYTES } from "../../platform/settings-text.js";

/** The rules of the workspace's root, as `rootSources` reads them. */
export interface RootSources {
  /** The configured excludes (`checkpoints.exclude`), one pattern a line. */
  exclude: string;
  /** The workspace's `.batonignore`. */
  batonignore: string;
  /** The user's global ignore file (git's `core.excludesFile`), when the workspace is in a repository, with the workspace's path in it. */
  globalExclude: { prefix: string; text: string };
  /** The repository's `info/exclude`, and the workspace's path in the repository (its patterns are the repository's). */
  infoExclude: { prefix: string; text: string };
  /** The `.gitignore` files of the folders above the workspace in its repository, top first, each with the workspace's path from its folder. */
  above: readonly { prefix: string; text: string }[];
}

/**
 * The root's sources on disk now: the configured excludes, `.batonignore`, and, in a
 * repository (`gitRepo`), the user's global ignore file (`git-config.ts`; a link to it is
 * followed, as dotfiles are kept), the repository's `info/exclude` and the `.gitignore` of each
 * folder from its top down to the workspace's parent, as git applies them to the workspace's
 * files (those read without following a link). `found`: the repository, when the caller
 * looked it up already.
 */
export function rootSources(root: string, exclude: readonly string[], found?: { repo: ReturnType<typeof gitRepo> }): RootSources {
  const git = found ? found.repo : gitRepo(root); // looked up already, even when there is none
  const repo = git === undefined || "problem" in git ? undefined : git;
  const above: { prefix: string; text: string }[] = [];
  if (repo && repo.prefix !== "") {
    const parts = repo.prefix.split("/").filter(Boolean);
    for (let i = 0; i < parts.length; i++) {
      const text = readNoFollow(repo.top, i === 0 ? ".gitignore" : `${parts.slice(0, i).join("/")}/.gitignore`);
      if (text) above.push({ prefix: `${parts.slice(i).join("/")}/`, text });
    }
  }
  return {
    exclude: exclude.join("\n"),
    batonignore: readNoFollow(root, ".batonignore") ?? "",
    globalExclude: { prefix: repo?.prefix ?? "", text: (repo && readGlobal(repo)) ?? "" },
    infoExclude: { prefix: repo?.prefix ?? "", text: (repo && readNoFollow(repo.commonDir, "info/exclude")) ?? "" },
    above,
  };
}

/**
 * The user's global ignore file's text; none when git would read none, or it is not a regular
 * file of bounded size. One outside the repository is the user's (a link to it followed, as
 * dotfiles are kept); one inside it (a relative `core.excludesFile`, or a path through a link
 * into it) is read as the walk reads the repository's own files, without following a link: a
 * repository shipping `.gitignore_global -> ~/.aws/credentials` gets no file read, nor stored
 * with its checkpoints.
 */
function readGlobal(repo: GitRepo): string | undefined {
  const file = globalExcludesFile(repo);
  if (file === undefined) return undefined;
  // Inside by its path as written (no link on the way is followed then), or by its real path.
  for (const path of [resolve(file), join(realOr(dirname(file)), basename(file))]) {
    const inside = relative(repo.top, path);
    if (inside === "") return undefined; // the repository's top: a folder
    if (inside !== ".." && !inside.startsWith(`..${sep}`) && !isAbsolute(inside))
      return readNoFollow(repo.top, inside.split(sep).join("/"));
  }
  try {
    return readSettingsText(file, SETTINGS_MAX_BYTES);
  } catch {
    return undefined;
  }
}

/**
 * The rules a tree checkpoint keeps beside the files it lists (JSON): the root's, from outside
 * the workspace, with its `.batonignore` as read (listed only when no rule leaves it out), and
 * the `.gitignore` files the walk read but did not list (`TreeScan.unlisted`), and the links
 * and other entries it could not store (`TreeScan.others`).
 */
export function outsideRulesText(
  sources: RootSources,
  unlisted: readonly (readonly [string, string])[] = [],
  others: readonly string[] = [],
): string {
  // Both always written, empty too: a checkpoint taken before they were kept has neither.
  return JSON.stringify({ ...sources, unlisted, others });
}

/** What a tree checkpoint kept of its rules (`outsideRulesText`). */
export interface KeptRules {
  sources: RootSources;
  /** Folder → the text of a `.gitignore` there that the walk read but did not list. */
  unlisted: ReadonlyMap<string, string>;
  /** Paths the walk found but could not store: links, sockets, FIFOs, a folder standing for many of them or for an ignore file too large to keep. */
  others: readonly string[];
}

const isRule = (v: unknown): v is { prefix: string; text: string } =>
  typeof v === "object" &&
  v !== null &&
  typeof (v as { prefix?: unknown }).prefix === "string" &&
  typeof (v as { text?: unknown }).text === "string";

/** A tree checkpoint's kept rules; undefined when it has none (older) or they do not read as such. */
export function parseOutsideRules(text: string | null | undefined): KeptRules | undefined {
  if (!text) return undefined;
  try {
    const v = JSON.parse(text) as Record<string, unknown>;
    if (typeof v.exclude !== "string" || typeof v.batonignore !== "string") return undefined;
    if (!isRule(v.infoExclude) || !Array.isArray(v.above) || !v.above.every(isRule)) return undefined;
    // Kept before the global ignore file was read: none applied then.
    const globalExclude = v.globalExclude === undefined ? { prefix: "", text: "" } : v.globalExclude;
    if (!isRule(globalExclude)) return undefined;
    // Kept before unlisted ignore files were: none known then.
    const pairs = v.unlisted === undefined ? [] : v.unlisted;
    if (!Array.isArray(pairs) || !pairs.every((p) => Array.isArray(p) && p.length === 2 && p.every((x) => typeof x === "string")))
      return undefined;
    const others = v.others === undefined ? [] : v.others;
    if (!Array.isArray(others) || !others.every((p) => typeof p === "string")) return undefined;
    return {
      sources: { exclude: v.exclude, batonignore: v.batonignore, globalExclude, infoExclude: v.infoExclude, above: v.above },
      unlisted: new Map(pairs as [string, string][]),
      others,
    };
  } catch {
    return undefined;
  }
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
  try {
    // Not blocking (a FIFO a repository or a tarball put there would hang the open), bounded.
    return readSettingsText(`${root}/${rel}`, SETTINGS_MAX_BYTES, { follow: false });
  } catch {
    return undefined; // a link (ELOOP), not a regular file, too large, unreadable
  }
}

/**
 * What git tracks of a workspace's `.baton/`. Ignore rules do not apply to tracked files, so a
 * repository that came with Baton's files (a stranger's journal, a server key whose token its
 * author knows), or a `git add -f`, puts this checkout's journal and checkpointed file contents
 * into every commit of their changes: `baton doctor` (`baton_tracked`), a session's start and the
 * server's key ask here. Read from the index (git-index.ts), or from `git ls-files` when the index
 * is one that reader does not take; names are matched ignoring ASCII case, as a case-insensitive
 * file system opens `.BATON/` as `.baton/`.
 */
import { createRequire } from "node:module";
import { shellQuote } from "../core/shell.js";
import { readIndex } from "./git-index.js";
import { BATON_DIR, sharedBatonEntry } from "./workspace.js";

/** A file git tracks: its path relative to the workspace, spelled as the index spells it, and its object name (hex). */
export interface TrackedEntry {
  path: string;
  id: string;
}

/**
 * The files git tracks under the folder `dirRel` of the workspace at `root`, its name matched
 * ignoring ASCII case; undefined when there is no repository or no index, or neither the index
 * nor `git ls-files` (asked when the index is one this does not read: split, too large) answers.
 */
export function trackedUnder(root: string, dirRel: string): TrackedEntry[] | undefined {
  const read = readIndex(root);
  if (read === undefined) return undefined;
  if ("problem" in read) return lsFiles(root, dirRel);
  const seen = new Map<string, TrackedEntry>(); // a conflicted path is listed once per stage
  for (const e of read.files.entriesUnder(`${read.prefix}${dirRel}`)) {
    const path = e.name.slice(read.prefix.length);
    if (!seen.has(path)) seen.set(path, { path, id: e.id });
  }
  return [...seen.values()];
}

/** `git ls-files -s` under `dirRel` (any case): every tracked entry, links and submodules too. */
function lsFiles(root: string, dirRel: string): TrackedEntry[] | undefined {
  const { spawnSync } = createRequire(import.meta.url)("node:child_process") as typeof import("node:child_process");
  const r = spawnSync("git", ["-C", root, "ls-files", "-z", "-s", "--", `:(icase)${dirRel}/`], {
    encoding: "utf8",
    timeout: 10_000,
    killSignal: "SIGKILL",
    maxBuffer: 64 * 1024 * 1024,
    stdio: ["ignore", "pipe", "ignore"],
  });
  if (r.status !== 0 || typeof r.stdout !== "string") return undefined;
  const out = new Map<string, TrackedEntry>();
  for (const record of r.stdout.split("\0")) {
    const tab = record.indexOf("\t");
    if (tab < 0) continue;
    const [, id] = record.slice(0, tab).split(" ");
    const path = record.slice(tab + 1);
    if (id && !out.has(path)) out.set(path, { path, id });
  }
  return [...out.values()];
}

/**
 * Baton's own files in the workspace's `.baton/` that git tracks (`.baton/baton.db`, …: all but
 * what a project may share), sorted. Ignore rules do not apply to tracked files: they came with
 * the repository (a stranger's journal), or a `git add -f` added them, and every commit of their
 * changes carries this checkout's journal and checkpointed file contents.
 */
export function trackedBatonFiles(root: string): TrackedEntry[] {
  return (trackedUnder(root, BATON_DIR) ?? [])
    .filter((e) => !sharedBatonEntry(e.path.slice(BATON_DIR.length + 1).toLowerCase()))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * The command that untracks `tracked` (from `trackedBatonFiles`) and nothing else, run from
 * anywhere: each top entry of `.baton/` they are in, as the index spells it, taken literally.
 * `-f`: Baton has written to them since they were added, and `--cached` keeps the files.
 */
export function untrackCommand(root: string, tracked: readonly TrackedEntry[]): string {
  const tops = topEntries(tracked);
  return `cd ${shellQuote(root)} && git --literal-pathspecs rm -r -f -q --cached -- ${tops.map(shellQuote).join(" ")}`;
}

/**
 * What to do instead of untracking when they came with the repository: they are someone else's,
 * and once git no longer tracks them Baton would take them as this checkout's own (a stranger's
 * journal as the agent's state, a server key whose token its author knows). Stops the
 * workspace's server (it holds the journal open), then removes from the index and the working
 * tree exactly the files git tracks (nothing of the user's own beside them in the same folder),
 * and the journal's WAL and shared-memory files.
 */
export function removeCommand(root: string, tracked: readonly TrackedEntry[]): string {
  const tops = topEntries(tracked);
  const db = tops.filter((t) => /\/baton\.db$/i.test(t)).flatMap((t) => [`${t}-wal`, `${t}-shm`]);
  return `cd ${shellQuote(root)} && { baton serve --stop >/dev/null 2>&1; git --literal-pathspecs rm -r -f -q -- ${tops.map(shellQuote).join(" ")}${db.length > 0 ? ` && rm -f -- ${db.map(shellQuote).join(" ")}` : ""}; }`;
}

/** The entries of `.baton/` the tracked files are in (`.baton/blobs`, `.baton/baton.db`), as the index spells them. */
function topEntries(tracked: readonly TrackedEntry[]): string[] {
  return [...new Set(tracked.map((e) => e.path.split("/").slice(0, 2).join("/")))];
}

/** Finding and creating a workspace: a project directory with Baton's data in `.baton/`. */
import {
  closeSync,
  type Dirent,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { BatonError } from "../errors.js";
import { entryKind, PRIVATE_DIR_MODE, privateSubdir, tightenBatonDir, touchPrivate } from "./private-files.js";
import { readProcStat } from "./process-facts.js";
import { NOT_REGULAR, NotASettingsFile, readSettingsBytes } from "./settings-text.js";

export interface Workspace {
  root: string;
  /** `<root>/.baton` */
  dir: string;
  dbPath: string;
  flowsDir: string;
}

export const BATON_DIR = ".baton";

/**
 * `.baton/.gitignore`: git never sees Baton's internals. Blobs hold file contents, the private
 * files of a shared store among them, and files the project's own .gitignore excludes; the
 * journal, STATE.md, logs and the server's key are this checkout's. Only user flows are the
 * project's to share (docs/cli.md, "What a team commits").
 */
const GITIGNORE = `# Baton's files are this checkout's own (blobs hold file contents, secrets included): git
# never sees them. User flows in flows/ are the project's to share.
*
!.gitignore
!flows/
!flows/**
`;

/**
 * The entries of `.baton/` a project may share through git: the ignore file, user flows and the
 * settings file (which apply only once each user trusts them). Everything else is this
 * checkout's own. `rel` is relative to `.baton/`, with `/` between names.
 */
export function sharedBatonEntry(rel: string): boolean {
  return rel === ".gitignore" || rel === "config.json" || rel === "flows" || rel.startsWith("flows/");
}

/** A negation (`!pattern`) that un-ignores only entries a project may share; `..` never. */
function sharedNegation(pattern: string): boolean {
  const p = pattern.replace(/^\//, "").replace(/\/$/, "");
  return !p.includes("..") && sharedBatonEntry(p);
}

/**
 * Whether an ignore file in `.baton/` keeps git away from everything but what a project may
 * share: a `*` line with, after the last one, no negation but of the ignore file, `flows/` and
 * `config.json`. Judged by its lines as git reads them (a leading byte-order mark, a CR before
 * each line break and trailing spaces dropped, `#` comments), strictly: a form this does not
 * recognise (`**`, `*` with a tab after it) counts as letting things through. A repository can
 * commit `.baton/.gitignore`, so its text must not decide what git sees of a user's journal and
 * checkpointed file contents.
 */
export function keepsInternalsOut(text: string): boolean {
  let star = false;
  let shared = true;
  for (const raw of (text.startsWith("\uFEFF") ? text.slice(1) : text).split("\n")) {
    const line = (raw.endsWith("\r") ? raw.slice(0, -1) : raw).replace(/(?<!\\) +$/, "");
    if (line === "" || line.startsWith("#")) continue;
    if (line === "*" || line === "/*") {
      star = true;
      shared = true;
    } else if (line.startsWith("!") && !sharedNegation(line.slice(1))) shared = false;
  }
  return star && shared;
}

/** A `.baton/.gitignore` larger than this is not read: it is replaced. */
const MAX_GITIGNORE_BYTES = 64 * 1024;

/**
 * Write `.baton/.gitignore` when it is missing or lets git see more than a project may share
 * (`keepsInternalsOut`: an earlier build's, or one a repository committed to have a user's
 * `git add -A` take the journal and checkpoint blobs). One that keeps everything else out is
 * left as it is. Never through a link, never waiting on a FIFO. Best effort: doctor reports the rest.
 */
export function ensureGitignore(batonDir: string): void {
  const file = join(batonDir, ".gitignore");
  let text: string | undefined;
  try {
    text = readSettingsBytes(file, MAX_GITIGNORE_BYTES, { follow: false })?.toString("utf8");
  } catch (err) {
    // A link (refused elsewhere), a FIFO (a folder is refused: refuseLinkedBatonDir) or unreadable: left as it is; too large: replaced.
    if (!(err instanceof NotASettingsFile) || err.why === NOT_REGULAR) return;
  }
  if (text !== undefined && keepsInternalsOut(text)) return;
  try {
    const out = touchPrivate(file); // never through a link
    try {
      writeSync(out, GITIGNORE);
    } finally {
      closeSync(out);
    }
  } catch {
    // an unwritable .baton/ (or a link there): opening the store reports it
  }
}

/** Entries of `.baton/` that may be symbolic links: Baton only reads them (config.json only once its content is trusted). */
const MAY_LINK: ReadonlySet<string> = new Set(["flows", "config.json"]);

function linked(path: string): BatonError {
  let to = "";
  try {
    to = ` (to ${readlinkSync(path)})`;
  } catch {
    // gone meanwhile
  }
  return new BatonError(
    "unsafe_path",
    `${path} is a symbolic link${to}: Baton keeps a workspace's data in its own .baton/ folder and never reaches it through a link, which a repository can commit to send this workspace's journal and file contents elsewhere, or to have Baton write outside it. Remove the link (\`rm ${path}\`), then run \`baton init\` in the project`,
    { path, reason: "a symbolic link" },
  );
}

/**
 * Refuse a workspace whose `.baton/`, or an entry in it that Baton writes or opens (its database,
 * logs, server files), is a symbolic link: a repository can commit one (`.baton ->
 * ../other-project/.baton`, `baton.db -> …`) and through it choose where this workspace's
 * journal and file contents go, or have Baton write outside the workspace; or whose ignore file
 * is a folder, which has git see all of it. One lstat and one readdir; a `.baton/` not there yet
 * is made later.
 */
export function refuseLinkedBatonDir(ws: Workspace): void {
  let entries: Dirent[];
  try {
    if (lstatSync(ws.dir).isSymbolicLink()) throw linked(ws.dir);
    entries = readdirSync(ws.dir, { withFileTypes: true });
  } catch (err) {
    if (err instanceof BatonError) throw err;
    return; // missing, or unreadable: creating or opening it reports that
  }
  for (const e of entries) {
    if (e.isSymbolicLink() && !MAY_LINK.has(e.name)) throw linked(join(ws.dir, e.name));
    if (e.name === ".gitignore" && e.isDirectory()) throw ignoreFolder(join(ws.dir, e.name));
  }
}

/**
 * `.baton/.gitignore` as a folder (a repository can commit one, or a submodule there): git then
 * reads no ignore file in `.baton/` and sees the journal and every checkpointed file's content.
 */
function ignoreFolder(path: string): BatonError {
  return new BatonError(
    "unsafe_path",
    `${path} is a folder, not Baton's ignore file: git would see every file of .baton/ (the journal, checkpointed file contents) and a \`git add -A\` would commit them. A repository can commit such a folder to have that happen. Remove it (\`rm -r ${path}\`, and \`git rm -r --cached\` it if git tracks it), then run \`baton init\` in the project`,
    { path, reason: "a folder where the ignore file goes" },
  );
}

/** The process's working directory, or undefined when it no longer exists (removed or renamed under the process). */
export function workingDir(): string | undefined {
  try {
    return process.cwd();
  } catch {
    return undefined;
  }
}

/** The working directory, or the error that says it is gone and what to do instead. */
export function requireWorkingDir(): string {
  const dir = workingDir();
  if (dir !== undefined) return dir;
  throw new BatonError(
    "workspace_not_found",
    "the working directory no longer exists (it was removed or renamed); cd into your project, or give an absolute --root or BATON_ROOT",
  );
}

/** `path` made absolute: a relative one against the working directory, which may be gone (then requireWorkingDir's error). */
export function absoluteFromWorkingDir(path: string): string {
  return isAbsolute(path) ? resolve(path) : resolve(requireWorkingDir(), path);
}

export function workspaceAt(root: string): Workspace {
  const r = absoluteFromWorkingDir(root);
  const dir = join(r, BATON_DIR);
  return { root: r, dir, dbPath: join(dir, "baton.db"), flowsDir: join(dir, "flows") };
}

/** `rel` (from path.relative) names something strictly inside its base. */
function strictlyInside(rel: string): boolean {
  return rel !== "" && rel !== ".." && !rel.startsWith("../") && !rel.startsWith("..\\") && !isAbsolute(rel);
}

/**
 * The absolute path `abs` relative to the workspace `root`, when it is inside it (undefined when
 * not): as written, or else through a link from outside to a folder inside the workspace (a
 * symlinked project folder, one above it such as macOS's /tmp and /var, or one of its folders),
 * so an agent whose working directory or file path names the workspace another way is still in
 * it. Only folders are followed: the real path of the nearest folder of `abs` that exists,
 * against the root's; `abs` itself is not (a link is written as the tool writes it, and
 * checkpointed as what it is). A link inside the workspace is left to the callers' checks.
 */
export function insideWorkspace(root: string, abs: string): string | undefined {
  const lexical = relative(root, abs);
  if (strictlyInside(lexical)) return lexical;
  let realRoot: string;
  try {
    realRoot = realpathSync(root);
  } catch {
    return undefined;
  }
  const rest = [basename(abs)];
  for (let dir = dirname(abs); ; ) {
    let real: string | undefined;
    try {
      real = realpathSync(dir);
    } catch {
      // not there (yet): the tool may create it
    }
    if (real !== undefined) {
      const rel = relative(realRoot, join(real, ...rest));
      return strictlyInside(rel) ? rel : undefined;
    }
    const up = dirname(dir);
    if (up === dir) return undefined;
    rest.unshift(basename(dir));
    dir = up;
  }
}

/**
 * Walk up from `cwd` to the nearest directory holding `.baton/`; with `agentMarks`
 * (`agentSessionMark`, `agentProcessMark`), to the nearest one holding one of them, else the nearest.
 */
export function findWorkspace(cwd: string, agentMarks: readonly (string | undefined)[] = []): Workspace | undefined {
  let dir = resolve(cwd);
  let nearest: Workspace | undefined;
  const marks = agentMarks.filter((m): m is string => m !== undefined);
  for (;;) {
    const candidate = join(dir, BATON_DIR);
    try {
      if (statSync(candidate).isDirectory()) {
        if (marks.length === 0) return workspaceAt(dir);
        nearest ??= workspaceAt(dir);
        // Never through a link (a repository can commit `pkg/.baton -> ../.baton`, or a linked agents/): only a mark Baton made here counts.
        if (
          entryKind(candidate) === "dir" &&
          entryKind(join(candidate, AGENTS_DIR)) === "dir" &&
          marks.some((m) => entryKind(join(candidate, AGENTS_DIR, m)) === "file")
        )
          return workspaceAt(dir);
      }
    } catch {
      // not here; keep walking
    }
    const parent = dirname(dir);
    if (parent === dir) return nearest;
    dir = parent;
  }
}

/** `.baton/agents/<agent session>`: the agent sessions whose hooks record in this workspace (`findWorkspace`). */
export const AGENTS_DIR = "agents";

/**
 * The name the mark of the agent's process has in `.baton/agents/` (its pid and start time, so a
 * reused pid is another process): a new session of the same agent (Claude Code's `/clear`)
 * keeps to the workspace its first one started in. Undefined where /proc cannot say.
 */
export function agentProcessMark(pid: number): string | undefined {
  const stat = readProcStat(pid);
  return stat ? `pid-${pid}-${stat.startTime}` : undefined;
}

/**
 * The name an agent session's mark has in `.baton/agents/`: the agent and its session id, made
 * safe for a file name; undefined without an id.
 */
export function agentSessionMark(agent: string, sessionId: string | undefined): string | undefined {
  if (!sessionId) return undefined;
  return `${agent}-${sessionId.replace(/[^A-Za-z0-9._-]/g, "-").slice(0, 80)}-${sessionId.length}`;
}

/**
 * Mark `.baton/agents/<mark>`: this workspace is where that agent session's hooks record, from
 * wherever in the tree the agent works. Without it a `.baton/` a repository committed in a
 * subfolder (`pkg/.baton/.gitignore`) would take the hooks of an agent that cd'd there, and every
 * edit outside `pkg/` would go without a checkpoint. Best effort, never through a link.
 */
export function markAgentSession(batonDir: string, mark: string): void {
  const dir = privateSubdir(batonDir, AGENTS_DIR);
  if (dir === undefined) return;
  const file = join(dir, mark);
  try {
    // Once a day at most: the mark's time says when the agent session last started or prompted here (gc prunes old ones).
    const st = lstatSync(file);
    if (!st.isFile() || Date.now() - st.mtimeMs < 24 * 60 * 60 * 1000) return;
  } catch {
    // not there yet
  }
  try {
    closeSync(touchPrivate(file));
  } catch {
    // unwritable: the hooks find the nearest workspace, as before
  }
}

/** Remove the marks of agent sessions not started or prompted since `before` (ms); returns how many. */
export function pruneAgentMarks(batonDir: string, before: number): number {
  if (entryKind(batonDir) !== "dir" || entryKind(join(batonDir, AGENTS_DIR)) !== "dir") return 0;
  const dir = join(batonDir, AGENTS_DIR);
  let n = 0;
  for (const name of readdirSync(dir)) {
    try {
      const st = lstatSync(join(dir, name));
      if (st.isFile() && st.mtimeMs < before) {
        unlinkSync(join(dir, name));
        n++;
      }
    } catch {
      // gone meanwhile
    }
  }
  return n;
}

/**
 * Resolve the workspace: an explicit root (option or BATON_ROOT) wins; otherwise walk up.
 * With `create`, a missing `.baton/` is created at the explicit root or at `cwd`.
 */
export function resolveWorkspace(opts: { root?: string; cwd?: string; create?: boolean }): Workspace {
  // Asked for only without a root: a command given an absolute one runs wherever it was started.
  const cwd = opts.root ? "" : (opts.cwd ?? requireWorkingDir());
  const ws = opts.root ? workspaceAt(opts.root) : (findWorkspace(cwd) ?? (opts.create ? workspaceAt(cwd) : undefined));
  if (!ws) {
    throw new BatonError(
      "workspace_not_found",
      `no Baton workspace at or above ${cwd}; run \`baton init\` in your project root, or pass --root / set BATON_ROOT`,
      { cwd },
    );
  }
  refuseLinkedBatonDir(ws);
  if (!existsSync(ws.dir) || !statSync(ws.dir).isDirectory()) {
    if (!opts.create) {
      throw new BatonError("workspace_not_found", `${ws.dir} does not exist; run \`baton init --root ${ws.root}\``, { root: ws.root });
    }
    ensureWorkspace(ws);
  } else {
    // An existing workspace, perhaps made before .baton/ was private, or before it was all ignored.
    tightenBatonDir(ws.dir);
    ensureGitignore(ws.dir);
  }
  return ws;
}

/** Whether something that is not a folder (nor a link to one) is at `path`. */
function notFolder(path: string): boolean {
  try {
    return !statSync(path).isDirectory();
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ENOTDIR"; // a file on the way: nothing of it is a folder
  }
}

export function ensureWorkspace(ws: Workspace): void {
  refuseLinkedBatonDir(ws);
  try {
    mkdirSync(ws.root, { recursive: true });
    // Private whatever the umask: .baton/ holds file contents (checkpoint blobs) and the journal.
    mkdirSync(ws.dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    ensureGitignore(ws.dir);
    // The SQLite backend creates baton.db at 0600 itself (a workspace on another store has none).
    tightenBatonDir(ws.dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? "";
    // A file where the folder goes (EEXIST from mkdir, ENOTDIR beneath it) is not a permission problem.
    // The root is followed (a linked project folder is one); .baton is not (refuseLinkedBatonDir).
    const rootIsFile = (code === "EEXIST" || code === "ENOTDIR") && notFolder(ws.root);
    const batonIsFile =
      !rootIsFile && (code === "EEXIST" || code === "ENOTDIR") && entryKind(ws.dir) !== "dir" && entryKind(ws.dir) !== undefined;
    throw new BatonError(
      "workspace_unwritable",
      rootIsFile
        ? `${ws.root} is not a directory: give --root (or BATON_ROOT) a project folder`
        : batonIsFile
          ? `${ws.dir} is there but is not a directory; Baton keeps its data in a .baton directory: move that file away, or choose another --root`
          : `cannot create ${ws.dir} (${code || (err as Error).message}); make the project directory writable or choose another --root`,
      { path: ws.dir, errno: code },
      { cause: err },
    );
  }
}

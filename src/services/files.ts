/** Reading the session's files for status: marker scans and resume verification. */
import { closeSync, constants, fstatSync, lstatSync, openSync, readFileSync, readlinkSync, realpathSync } from "node:fs";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { sha256 } from "../core/canonical.js";
import type { FlowDefinition } from "../core/flows/flow.js";
import { type ScannedFile, scanText } from "../core/session/markers.js";
import { pathProblem } from "../core/time-travel/paths.js";
import type { Diagnostic, JsonObject, Snapshot } from "../core/types.js";
import { badInput } from "../errors.js";
import { statCurrent } from "../platform/safe-fs.js";
import { insideWorkspace } from "../platform/workspace.js";

/** Files larger than this are not scanned for markers (reported instead). */
export const MAX_SCAN_BYTES = 8 * 1024 * 1024;
const MAX_FILES = 100;

/**
 * Workspace-relative POSIX path for a path given relative to `base` (the root unless given) or
 * absolute inside the workspace, also through a link to it (insideWorkspace).
 */
export function workspaceRelative(root: string, path: string, base = root): string | undefined {
  return insideWorkspace(root, resolve(base, path))?.split(sep).join("/");
}

/** Whether `path` names the workspace's root itself (which workspaceRelative answers as not inside it). */
export function isWorkspaceRoot(root: string, path: string, base = root): boolean {
  return resolve(base, path) === resolve(root);
}

/** Why a command that takes files refuses the workspace's root. */
export const WHOLE_ROOT = "is the workspace itself: name files inside it";

/** The files a session knows about: its context file and its resume context's files. */
export function knownFiles(snap: Snapshot): string[] {
  const files: string[] = [];
  const f = snap.context.file;
  if (typeof f === "string" && f !== "") files.push(f);
  for (const r of snap.facets.resume.filesModified) files.push(r.path);
  return [...new Set(files)].slice(0, MAX_FILES);
}

export interface ScanResult {
  files: ScannedFile[];
  diagnostics: Diagnostic[];
}

/**
 * The marker scan of the session's files. `onRead` sees the bytes of each file read, so a
 * caller that also hashes them (status verifying recorded files) reads each file once.
 */
export function scanSessionFiles(
  root: string,
  flow: FlowDefinition,
  snap: Snapshot,
  onRead?: (rel: string, r: FileRead) => void,
): ScanResult {
  const out: ScanResult = { files: [], diagnostics: [] };
  if (!flow.markers?.length) return out;
  for (const path of knownFiles(snap)) {
    const rel = workspaceRelative(root, path);
    if (!rel) {
      out.diagnostics.push({
        code: "file_outside_workspace",
        severity: "warning",
        message: `${path} is outside the workspace and was not scanned`,
        file: path,
      });
      continue;
    }
    const text = readText(root, rel, onRead && ((r) => onRead(rel, r)));
    if (typeof text !== "string") {
      out.diagnostics.push({ ...text, file: rel });
      continue;
    }
    out.files.push({ path: rel, findings: scanText(rel, text, flow.markers) });
  }
  return out;
}

function readText(root: string, rel: string, onRead?: (r: FileRead) => void): string | Omit<Diagnostic, "file"> {
  const abs = join(root, rel);
  const r = readWorkspaceFile(root, rel, MAX_SCAN_BYTES);
  onRead?.(r);
  if (r.kind === "file") return r.bytes.toString("utf8");
  if (r.kind === "same") return "";
  if (r.kind === "missing") return { code: "file_missing", severity: "warning", message: "the session's file does not exist" };
  if (r.tooLarge) return { code: "file_too_large", severity: "info", message: `${abs} is ${r.why}; markers not checked` };
  return { code: "file_unreadable", severity: "warning", message: `cannot read ${abs}: ${r.why}` };
}

/** Recorded files larger than this are not re-hashed (status stays a few reads). */
export const MAX_HASH_BYTES = 64 * 1024 * 1024;

/** A file as read for status: its bytes, gone, or something that cannot be read as a file. */
export type FileRead =
  | { kind: "file"; bytes: Buffer; size: number; mtimeMs: number }
  | { kind: "same"; size: number; mtimeMs: number }
  | { kind: "missing" }
  | { kind: "unreadable"; why: string; tooLarge?: true };

// O_NONBLOCK: opening a FIFO for reading must not wait for a writer (status would hang).
const READ_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/**
 * Read a file the session named, guarded: opened without blocking, checked to be a regular
 * file of at most `maxBytes` on the open descriptor (no race with a swap), never thrown from.
 */
export function readGuarded(
  abs: string,
  maxBytes: number,
  same?: (size: number, mtimeMs: number) => boolean,
  within?: { realRoot: string },
): FileRead {
  let fd: number | undefined;
  try {
    fd = openSync(abs, READ_FLAGS);
    const st = fstatSync(fd);
    if (!st.isFile()) return { kind: "unreadable", why: "not a regular file" };
    // The file opened is the workspace's own: a link on the way may lead elsewhere in it
    // (CLAUDE.md -> AGENTS.md, a linked shared folder), never out of it nor into .baton or .git.
    if (within) {
      const real = relative(within.realRoot, realPathOf(fd, abs)).split(sep).join("/");
      if (pathProblem(real) !== undefined) return { kind: "unreadable", why: "a symbolic link to outside the workspace" };
    }
    // The caller knows this size and time: no need to read it again.
    if (same?.(st.size, st.mtimeMs)) return { kind: "same", size: st.size, mtimeMs: st.mtimeMs };
    if (st.size > maxBytes) return { kind: "unreadable", why: `${st.size} bytes, over the ${maxBytes}-byte limit`, tooLarge: true };
    return { kind: "file", bytes: readFileSync(fd), size: st.size, mtimeMs: st.mtimeMs };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { kind: "missing" };

    return { kind: "unreadable", why: code ?? (err as Error).message };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * The real path of an open file: by its descriptor on Linux (no race with a swap), else of its
 * path, by the same realpath(3) the root's is taken with (JS realpathSync keeps the case and
 * Unicode form it is given, which on macOS need not be the disk's).
 */
function realPathOf(fd: number, abs: string): string {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return realpathSync.native(abs);
  }
}

/**
 * A file a session named (its resume context, its context's `file`), read as readGuarded reads,
 * but only as a file of the workspace: a path that is not a clean workspace-relative one, or a
 * file whose real path (through links) is outside it or in `.baton/` or `.git`, is `unreadable`
 * and never hashed (a recorded `/etc/passwd`, or a link to it, would otherwise be read on every status).
 */
export function readWorkspaceFile(
  root: string,
  rel: string,
  maxBytes: number,
  same?: (size: number, mtimeMs: number) => boolean,
): FileRead {
  const problem = pathProblem(rel);
  if (problem) return { kind: "unreadable", why: `not a file of the workspace: the path ${problem}` };
  let realRoot: string;
  try {
    realRoot = realpathSync.native(root);
  } catch (err) {
    return { kind: "unreadable", why: (err as NodeJS.ErrnoException).code ?? (err as Error).message };
  }
  return readGuarded(join(root, rel), maxBytes, same, { realRoot });
}

/**
 * sha256 of a file's content, or undefined when it does not exist. Anything that is not a
 * readable regular file (a directory, a FIFO, a device) is refused with `bad_input`.
 */
export function hashFile(abs: string): string | undefined {
  return fingerprintFile(abs)?.hash;
}

/** hashFile with the size and modification time read on the same descriptor. */
export function fingerprintFile(abs: string): { hash: string; size: number; mtimeMs: number } | undefined {
  const r = readGuarded(abs, MAX_HASH_BYTES);
  if (r.kind === "missing") return undefined;
  if (r.kind !== "file") throw badInput(`cannot read ${abs} (${r.kind === "unreadable" ? r.why : "changed"}); name a regular file`);
  return { hash: sha256(r.bytes), size: r.size, mtimeMs: r.mtimeMs };
}

/**
 * The files a session says it modified, each recorded with its current hash, size and time
 * (relative to the root), for a `resume:updated` event; a path outside the workspace is `bad_input`.
 */
export function recordFiles(root: string, paths: readonly string[]): JsonObject[] {
  const out: JsonObject[] = [];
  for (const path of paths) {
    const rel = workspaceRelative(root, path);
    if (!rel) throw badInput(`${path} ${isWorkspaceRoot(root, path) ? WHOLE_ROOT : `is outside the workspace ${root}`}`);
    const problem = pathProblem(rel);
    if (problem) throw badInput(`${path} ${problem}: name a file of the workspace`, { path });
    // Not through a link (a link to /etc/passwd would record that file's hash): unsafe_path for one on the way.
    const cur = statCurrent(root, rel);
    if (cur.kind === "other") throw badInput(`${path} is ${cur.what}: name a regular file of the workspace`, { path });
    const f = fingerprintFile(resolve(root, rel));
    out.push(f ? { path: rel, hash: f.hash, size: f.size, mtimeMs: f.mtimeMs } : { path: rel });
  }
  return out;
}

/**
 * The paths (workspace-relative), each followed by the workspace file it leads to when it is a
 * link: a write through `CLAUDE.md` -> `AGENTS.md` changes (or creates) AGENTS.md, which is what a
 * checkpoint must keep and what the writer claims. A link out of the workspace, into `.baton/` or
 * `.git`, to a folder, or in a loop brings nothing; the target may not exist yet.
 */
export function withLinkTargets(root: string, paths: readonly string[]): string[] {
  const out = [...paths];
  const seen = new Set(paths);
  let realRoot: string | undefined;
  for (const rel of paths) {
    const abs = join(root, rel);
    if (!isLink(abs)) continue; // a name the file system refuses is judged as the path itself
    const real = linkTarget(abs);
    if (real === undefined) continue;
    try {
      realRoot ??= realpathSync.native(root);
    } catch {
      return out;
    }
    const target = workspaceRelative(realRoot, real);
    if (target === undefined || seen.has(target) || pathProblem(target) !== undefined) continue;
    seen.add(target);
    out.push(target);
  }
  return out;
}

/** Whether `abs` is a symbolic link itself (false for a name the file system refuses). */
export function isLink(abs: string): boolean {
  try {
    return lstatSync(abs, { throwIfNoEntry: false })?.isSymbolicLink() === true;
  } catch {
    return false;
  }
}

/**
 * Where the link `abs` leads, with no link left in the path: the file it names (which may not
 * exist yet: a write through the link creates it), or undefined for a folder, a loop or a path
 * that cannot be resolved.
 */
function linkTarget(abs: string): string | undefined {
  let path = abs;
  for (let hops = 0; hops < 40; hops++) {
    let st: ReturnType<typeof lstatSync>;
    try {
      st = lstatSync(path, { throwIfNoEntry: false });
    } catch {
      return undefined;
    }
    if (st === undefined) {
      // Not there yet: its folder, resolved, and its name.
      try {
        return join(realpathSync.native(dirname(path)), basename(path));
      } catch {
        return undefined;
      }
    }
    if (!st.isSymbolicLink()) {
      if (!st.isFile()) return undefined;
      try {
        return realpathSync.native(path);
      } catch {
        return undefined;
      }
    }
    try {
      path = resolve(dirname(path), readlinkSync(path));
    } catch {
      return undefined;
    }
  }
  return undefined; // a loop
}

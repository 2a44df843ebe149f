/** Reading the session's files for status: marker scans and resume verification. */
import { closeSync, fstatSync, openSync, readFileSync } from "node:fs";
import { isAbsolute, relative, resolve, sep } from "node:path";
import { sha256 } from "../core/canonical.js";
import type { FlowDefinition } from "../core/flow.js";
import { type ScannedFile, scanText } from "../core/markers.js";
import type { Diagnostic, Snapshot } from "../core/types.js";

/** Files larger than this are not scanned for markers (reported instead). */
export const MAX_SCAN_BYTES = 8 * 1024 * 1024;
const MAX_FILES = 100;

/** Workspace-relative POSIX path for a path given relative to the root or absolute inside it. */
export function workspaceRelative(root: string, path: string): string | undefined {
  const abs = isAbsolute(path) ? path : resolve(root, path);
  const rel = relative(root, abs);
  if (rel === "" || rel.startsWith("..") || isAbsolute(rel)) return undefined;
  return rel.split(sep).join("/");
}

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

export function scanSessionFiles(root: string, flow: FlowDefinition, snap: Snapshot): ScanResult {
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
    const text = readText(resolve(root, rel));
    if (typeof text !== "string") {
      out.diagnostics.push({ ...text, file: rel });
      continue;
    }
    out.files.push({ path: rel, findings: scanText(rel, text, flow.markers) });
  }
  return out;
}

function readText(abs: string): string | Omit<Diagnostic, "file"> {
  let fd: number | undefined;
  try {
    fd = openSync(abs, "r");
    const st = fstatSync(fd);
    if (!st.isFile()) return { code: "file_unreadable", severity: "warning", message: `${abs} is not a regular file` };
    if (st.size > MAX_SCAN_BYTES)
      return {
        code: "file_too_large",
        severity: "info",
        message: `${abs} is ${st.size} bytes, over the ${MAX_SCAN_BYTES}-byte scan limit; markers not checked`,
      };
    return readFileSync(fd, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { code: "file_missing", severity: "warning", message: "the session's file does not exist" };
    return { code: "file_unreadable", severity: "warning", message: `cannot read the session's file (${code ?? (err as Error).message})` };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** sha256 of a file's content, or undefined when it does not exist. */
export function hashFile(abs: string): string | undefined {
  try {
    return sha256(readFileSync(abs));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}

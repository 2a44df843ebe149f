/**
 * Path safety, purely. Checkpoint manifests store workspace-relative POSIX paths; every path
 * is checked here before it is read or restored, so a hostile or damaged manifest can never
 * name a file outside the workspace, inside Baton's own data, or inside a `.git` directory.
 * The I/O half (lstat every parent, never follow a symlink) lives in platform/safe-fs.ts.
 */

/** Longest path accepted (bytes of UTF-16, a generous bound well under PATH_MAX). */
export const MAX_PATH_LENGTH = 4_096;

/**
 * Why `p` is not a safe workspace-relative POSIX path, or undefined when it is. Refused: empty,
 * `.`, `..` or empty segments (`a//b`, a trailing `/`), absolute paths, NUL, backslashes,
 * drive letters (`C:`), control characters, and anything inside `.baton/` or a `.git` entry.
 */
export function pathProblem(p: unknown): string | undefined {
  if (typeof p !== "string") return "is not a string";
  if (p === "") return "is empty";
  if (p.length > MAX_PATH_LENGTH) return `is longer than ${MAX_PATH_LENGTH} characters`;
  if (p.includes("\0")) return "contains a NUL byte";
  if (p.includes("\\")) return "contains a backslash (paths are stored with /)";
  if (/[\x00-\x1f]/.test(p)) return "contains a control character";
  if (p.startsWith("/")) return "is absolute";
  if (/^[A-Za-z]:/.test(p)) return "starts with a drive letter";
  const segments = p.split("/");
  for (const s of segments) {
    if (s === "") return "has an empty segment";
    if (s === "." || s === "..") return `has a "${s}" segment`;
  }
  if ((segments[0] as string).toLowerCase() === ".baton") return "is inside .baton/ (Baton's own data)";
  if (segments.some((s) => s.toLowerCase() === ".git")) return "is inside a .git directory";
  return undefined;
}

export function isSafeRelativePath(p: unknown): p is string {
  return pathProblem(p) === undefined;
}

/** The parent directories of a safe relative path, shallowest first: `a/b/c` → `a`, `a/b`. */
export function parentPaths(p: string): string[] {
  const segments = p.split("/");
  const out: string[] = [];
  for (let i = 1; i < segments.length; i++) out.push(segments.slice(0, i).join("/"));
  return out;
}

/**
 * The workspace's file tree, as a whole-tree checkpoint sees it: every regular file, minus
 * what git would ignore (each directory's `.gitignore`, `.git/info/exclude`), what the
 * workspace's `.batonignore` and the configured excludes name, and always `.baton/` and every
 * `.git` entry. Nested git repositories are walked like any directory: their files are
 * ordinary files and their `.git` is skipped, never renamed or touched. Symbolic links are
 * neither followed nor stored.
 *
 * The `ignore` package implements gitignore matching (negations, anchoring, directory-only
 * patterns, escaping) as git does; each `.gitignore` gets its own matcher relative to its
 * directory, and the deepest one with an opinion decides, as in git.
 */
import { type Dirent, lstatSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import ignore, { type Ignore } from "ignore";
import { MAX_PATH_LENGTH, pathProblem } from "../core/paths.js";
import { RESTORE_TEMP } from "./safe-fs.js";

export interface TreeFile {
  path: string;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
  mode: number;
}

export interface TreeScan {
  files: TreeFile[];
  /** Entries left out for a reason worth telling (an unsafe name, an unreadable directory). */
  skipped: { path: string; reason: string }[];
}

/** Names a stored path may not contain (core/paths.ts): control characters, backslashes. */
const UNSAFE_NAME = /[\x00-\x1f\\]/;

interface Rules {
  /** Directory the matcher's patterns are relative to ("" for the root). */
  base: string;
  ig: Ignore;
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/** The root's matchers: configured excludes, `.batonignore`, `.git/info/exclude`. */
function rootRules(root: string, exclude: readonly string[]): Rules[] {
  const ig = ignore().add([...exclude]);
  for (const file of [".batonignore", ".git/info/exclude"]) {
    const text = readText(join(root, file));
    if (text !== undefined) ig.add(text);
  }
  return [{ base: "", ig }];
}

/** Whether the deepest matcher with an opinion ignores `rel` (a directory gets a trailing slash). */
function ignored(rules: readonly Rules[], rel: string, isDir: boolean): boolean {
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

export function walkTree(root: string, opts: { exclude?: readonly string[] } = {}): TreeScan {
  const out: TreeScan = { files: [], skipped: [] };
  const stack: { rel: string; rules: Rules[] }[] = [{ rel: "", rules: rootRules(root, opts.exclude ?? []) }];
  while (stack.length > 0) {
    const { rel: dirRel, rules: parentRules } = stack.pop() as { rel: string; rules: Rules[] };
    const abs = dirRel === "" ? root : join(root, dirRel);
    let entries: Dirent[];
    try {
      entries = readdirSync(abs, { withFileTypes: true });
    } catch (err) {
      out.skipped.push({ path: dirRel || ".", reason: `unreadable directory (${(err as NodeJS.ErrnoException).code ?? "error"})` });
      continue;
    }
    let rules = parentRules;
    if (entries.some((e) => e.name === ".gitignore" && e.isFile())) {
      const text = readText(join(abs, ".gitignore"));
      if (text !== undefined) rules = [...parentRules, { base: dirRel, ig: ignore().add(text) }];
    }
    for (const e of entries) {
      const name = e.name;
      if (name === ".git" || (dirRel === "" && name === ".baton") || RESTORE_TEMP.test(name)) continue;
      const rel = dirRel === "" ? name : `${dirRel}/${name}`;
      const isDir = e.isDirectory();
      if (!isDir && !e.isFile()) continue; // symlinks, sockets, devices
      if (ignored(rules, rel, isDir)) continue;
      // A walked path is built from real names, so only the name itself can be unsafe.
      if (UNSAFE_NAME.test(name) || rel.length > MAX_PATH_LENGTH) {
        out.skipped.push({ path: rel, reason: `unsafe name: ${pathProblem(rel) ?? "too long"}` });
        continue;
      }
      if (isDir) {
        stack.push({ rel, rules });
        continue;
      }
      let st: ReturnType<typeof lstatSync>;
      try {
        st = lstatSync(join(abs, name));
      } catch {
        continue; // vanished while walking
      }
      if (!st.isFile()) continue;
      out.files.push({ path: rel, size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino, mode: st.mode & 0o777 });
    }
  }
  out.files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return out;
}

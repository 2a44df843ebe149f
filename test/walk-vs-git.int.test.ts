/**
 * A whole-tree checkpoint takes what `git add -A` would take: every tracked file, and every
 * untracked one no ignore rule names, over random trees with random `.gitignore` files at every
 * level (negations, folder-only, anchored and `**` patterns, allow-lists), `info/exclude` and
 * force-added files. Git itself is the judge; a rollback's coverage question agrees with the walk.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { walkCovers } from "../src/services/time-travel/tree-rules.js";
import { walkTree } from "../src/services/time-travel/tree-scan.js";
import { cleanupDirs, tempDir, writeAt } from "./helpers.js";

afterAll(() => cleanupDirs());

/** The user's global ignore file for both sides: git's and the walk's (process.env). */
const xdg = tempDir("baton-walkgit-xdg-");
const saved = { XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME, GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL };
beforeAll(() => {
  process.env.XDG_CONFIG_HOME = xdg;
  process.env.GIT_CONFIG_GLOBAL = join(xdg, "none");
});
afterAll(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

function git(cwd: string, ...args: string[]): string {
  const r = spawnSync("git", ["-c", "init.defaultBranch=main", ...args], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1" },
  });
  if (r.status !== 0) throw new Error(`git ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

const DIRS = ["", "a", "a/b", "a/b/c", "d", "d/e", "build", "a/build", "d/e/c"];
const FILES = ["x.txt", "y.log", "z.o", "keep.log", ".env", "n"];
const PATTERNS = [
  "*.log",
  "!keep.log",
  "b/",
  "/b/",
  "!b/",
  "a/b/",
  "!a/b/",
  "build/",
  "!build/",
  "/build",
  "c",
  "!c/",
  "*.o",
  "!*.o",
  "**/c/",
  "d/*",
  "!d/e/",
  "x.txt",
  "/x.txt",
  "!x.txt",
  "e/**",
  "!e/**/x.txt",
  ".env",
  "*",
  "!*/",
  "!*.txt",
  "b/*.txt",
  "**/x.txt",
  "# a comment",
  "",
];

/** Whether git's ignore rules (untracked files') name any of `paths`. */
/** What git would take into its index from `dir`: tracked files and those no ignore rule leaves out. */
function takenByGit(dir: string): string[] {
  return git(dir, "ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0").filter(Boolean).sort();
}

function ignoredByGit(root: string, ...paths: string[]): boolean {
  const r = spawnSync("git", ["check-ignore", "--no-index", "--", ...paths], {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1" },
  });
  if (r.status !== 0 && r.status !== 1) throw new Error(`git check-ignore exited ${r.status}: ${r.stderr}`);
  return r.stdout.trim() !== "";
}

describe("a whole-tree walk takes what git takes", () => {
  it("over random trees and ignore files at every level", () => {
    const base = tempDir("baton-walkgit-");
    let n = 0;
    const pattern = fc.constantFrom(...PATTERNS);
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(fc.constantFrom(...DIRS), fc.constantFrom(...FILES)), {
          minLength: 1,
          maxLength: 14,
          selector: ([d, f]) => `${d}/${f}`,
        }),
        fc.array(fc.tuple(fc.constantFrom(...DIRS), fc.array(pattern, { minLength: 1, maxLength: 4 })), { maxLength: 4 }),
        fc.array(pattern, { maxLength: 3 }),
        fc.array(pattern, { maxLength: 3 }),
        fc.array(fc.nat(), { maxLength: 3 }),
        fc.constantFrom("", "", "a", "d", "a/b"),
        (files, ignores, exclude, global, forced, ws) => {
          const root = join(base, `r${n++}`);
          mkdirSync(root);
          git(root, "init", "-q");
          const paths = files.map(([d, f]) => (d === "" ? f : `${d}/${f}`));
          for (const p of paths) writeAt(root, p, `${p}\n`);
          const byDir = new Map<string, string[]>();
          for (const [d, pats] of ignores) byDir.set(d, [...(byDir.get(d) ?? []), ...pats]);
          for (const [d, pats] of byDir) writeAt(root, d === "" ? ".gitignore" : `${d}/.gitignore`, `${pats.join("\n")}\n`);
          writeAt(root, ".git/info/exclude", `${exclude.join("\n")}\n`);
          writeAt(xdg, "git/ignore", `${global.join("\n")}\n`);
          const add = [...new Set(forced.map((i) => paths[i % paths.length] as string))];
          if (add.length > 0) git(root, "add", "-f", "--", ...add);
          // The workspace: the repository's top, or a folder of it (the repository's rules above
          // it apply). Rules that ignore the folder itself, or every file in it, are the
          // repository's way of leaving it out, not rules for its files (tree-rules.ts).
          const wsDir = join(root, ws);
          mkdirSync(wsDir, { recursive: true });
          if (ws !== "" && ignoredByGit(root, `${ws}/`, `${ws}/baton-probe-7f3a9c`)) return;
          const gitTakes = takenByGit(wsDir);
          const walked = [...walkTree(wsDir).paths].sort();
          const context = JSON.stringify({ ws, files: paths, ignores: [...byDir], exclude, global, forced: add });
          expect(walked, context).toEqual(gitTakes);
          const covers = walkCovers(wsDir);
          const inWs = (p: string) => (ws === "" ? p : p.startsWith(`${ws}/`) ? p.slice(ws.length + 1) : undefined);
          for (const p of [...paths, ...[...byDir.keys()].map((d) => (d === "" ? ".gitignore" : `${d}/.gitignore`))]) {
            const rel = inWs(p);
            if (rel !== undefined) expect(covers(rel), `${rel} ${context}`).toBe(gitTakes.includes(rel));
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it("a folder a shallower rule ignored, taken back by a deeper or stronger one: its files are judged by the rules that match them", () => {
    const root = tempDir("baton-walkgit-");
    git(root, "init", "-q");
    writeAt(root, ".gitignore", "a/b/\n!build/\n");
    writeAt(root, "a/.gitignore", "!b/\n");
    writeAt(root, "a/b/x.txt", "x\n");
    writeAt(root, "a/b/c/.gitignore", "*.log\n");
    writeAt(root, "a/b/c/y.log", "y\n");
    writeAt(root, "a/b/c/y.txt", "y\n");
    writeAt(root, ".git/info/exclude", "build/\n");
    writeAt(xdg, "git/ignore", "\n");
    writeAt(root, "d/build/out.txt", "o\n");
    const want = [".gitignore", "a/.gitignore", "a/b/c/.gitignore", "a/b/c/y.txt", "a/b/x.txt", "d/build/out.txt"];
    expect(takenByGit(root)).toEqual(want);
    expect(walkTree(root).paths).toEqual(want);
  });

  it("a rule file that starts with a byte order mark, re-judged under a folder taken back, as git judges it", () => {
    const root = tempDir("baton-walkgit-");
    git(root, "init", "-q");
    writeAt(xdg, "git/ignore", "\uFEFF*.log\nbuild/\n");
    writeAt(root, ".gitignore", "!build/\n");
    writeAt(root, "build/x.log", "x\n");
    writeAt(root, "build/y.txt", "y\n");
    const want = [".gitignore", "build/y.txt"];
    expect(takenByGit(root)).toEqual(want);
    expect(walkTree(root).paths).toEqual(want);
    writeAt(xdg, "git/ignore", "\n");
  });
});

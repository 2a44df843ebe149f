/**
 * Tracked files and ignore rules, with the real git writing the index: ignore rules (a
 * `.gitignore`, `.git/info/exclude`, `.batonignore`) leave out untracked files only, as in git;
 * configured excludes leave out everything. The index reader (`platform/git-index.ts`) is
 * checked against `git ls-files` on every index layout git writes: versions 2, 3 and 4,
 * SHA-1 and SHA-256, a merge conflict's stages, a worktree's `.git` file, and a split index
 * (read as unknown).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmdirSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { type Baton, openBaton } from "../src/index.js";
import { indexProblem, parseIndex, readTracked, type Tracked, TrackedCache } from "../src/platform/git-index.js";
import { cleanupDirs, tempDir, writeAt } from "./helpers.js";

const open: Baton[] = [];
afterEach(async () => {
  for (const b of open.splice(0)) await b.close();
});
afterAll(() => cleanupDirs());

function git(cwd: string, ...args: string[]): string {
  const r = spawnSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main", ...args], {
    cwd,
    encoding: "utf8",
  });
  if (r.status !== 0) throw new Error(`git ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

/** The regular files git lists in the index (every stage), as `git ls-files -s` says. */
function lsFiles(cwd: string): string[] {
  const out = git(cwd, "ls-files", "-s", "-z");
  const paths = out
    .split("\0")
    .filter(Boolean)
    .filter((l) => l.startsWith("100"))
    .map((l) => l.slice(l.indexOf("\t") + 1));
  return [...new Set(paths)].sort();
}

/** The files an index read lists, sorted and without a conflict's repeats. */
const listed = (t: Tracked | undefined) => (t ? [...new Set((t as ReturnType<typeof parseIndex> & {}).names())].sort() : undefined);
const indexPaths = (buf: Buffer) => parseIndex(buf)?.names();

function repo(format: "sha1" | "sha256" = "sha1"): string {
  const root = join(tempDir("baton-git-"), "ws");
  mkdirSync(root);
  git(root, "init", "-q", ...(format === "sha256" ? ["--object-format=sha256"] : []));
  return root;
}

const files = {
  "a.txt": "a\n",
  "dir/b.txt": "b\n",
  "dir/deeper/c d.txt": "c\n",
  "naïve/ünïcode.txt": "u\n",
  [`long/${"n".repeat(120)}/${"m".repeat(100)}.txt`]: "l\n",
  "run.sh": "#!/bin/sh\n",
};

describe("the index reader agrees with git ls-files", () => {
  for (const [what, setup] of [
    ["version 2, SHA-1", (r: string) => git(r, "update-index", "--index-version", "2")],
    ["version 3 (an intent-to-add entry)", (r: string) => writeAt(r, "later.txt", "x") === undefined && git(r, "add", "-N", "later.txt")],
    ["version 4 (prefix-compressed paths)", (r: string) => git(r, "update-index", "--index-version", "4")],
  ] as const) {
    it(what, () => {
      const root = repo();
      for (const [rel, text] of Object.entries(files)) writeAt(root, rel, text);
      git(root, "add", ".");
      git(root, "update-index", "--chmod=+x", "run.sh");
      setup(root);
      const t = readTracked(root);
      expect(listed(t)).toEqual(lsFiles(root));
      for (const rel of lsFiles(root)) expect(t?.file(rel), rel).toBe(true);
      expect(t?.under("dir/deeper")).toBe(true);
      expect(t?.under("dir")).toBe(true);
      expect(t?.under("naïve")).toBe(true);
      expect(t?.under("a.txt")).toBe(false);
      expect(t?.under("di")).toBe(false);
      expect(t?.file("dir")).toBe(false);
      expect(t?.file("dir/b.tx")).toBe(false);
      expect(t?.file("dir/b.txt/")).toBe(false);
      expect(t?.file("later.txt")).toBe(what.startsWith("version 3"));
    });
  }

  it("SHA-256 object names", () => {
    const root = repo("sha256");
    for (const [rel, text] of Object.entries(files)) writeAt(root, rel, text);
    git(root, "add", ".");
    expect(listed(readTracked(root))).toEqual(lsFiles(root));
  });

  it("a merge conflict's stages, links and submodules left out", () => {
    const root = repo();
    writeAt(root, "x.txt", "base\n");
    git(root, "add", ".");
    git(root, "commit", "-qm", "base");
    git(root, "checkout", "-qb", "other");
    writeAt(root, "x.txt", "other\n");
    git(root, "commit", "-qam", "other");
    git(root, "checkout", "-q", "main");
    writeAt(root, "x.txt", "main\n");
    git(root, "commit", "-qam", "main");
    spawnSync("git", ["merge", "-q", "other"], { cwd: root }); // conflicts: exits 1
    expect(git(root, "ls-files", "-u")).toContain("x.txt");
    // A link in the index is tracked but not a regular file: no checkpoint takes one.
    spawnSync("ln", ["-s", "x.txt", join(root, "link")]);
    git(root, "add", "link");
    expect(listed(readTracked(root))).toEqual(["x.txt"]);
  });

  it("a worktree's index, through its .git file", () => {
    const root = repo();
    writeAt(root, "a.txt", "a\n");
    git(root, "add", ".");
    git(root, "commit", "-qm", "one");
    const wt = join(root, "..", "wt");
    git(root, "worktree", "add", "-q", wt);
    writeAt(wt, "only-here.txt", "w\n");
    git(wt, "add", "only-here.txt");
    expect(listed(readTracked(wt))).toEqual(["a.txt", "only-here.txt"]);
    expect(listed(readTracked(root))).toEqual(["a.txt"]);
  });

  it("a split index is unknown, as are a damaged one and none at all", () => {
    const root = repo();
    expect(readTracked(root), "a fresh repository has no index yet").toBeUndefined();
    writeAt(root, "a.txt", "a\n");
    git(root, "add", ".");
    const index = readFileSync(join(root, ".git", "index"));
    expect(indexPaths(index)).toEqual(["a.txt"]);
    for (let cut = 1; cut < index.length; cut += 7) expect(indexPaths(index.subarray(0, cut)), `cut at ${cut}`).toBeUndefined();
    const flipped = Buffer.from(index);
    flipped[70] = (flipped[70] as number) ^ 1;
    expect(indexPaths(flipped), "a byte changed: its checksum does not match").toBeUndefined();
    const unsummed = Buffer.from(index);
    unsummed.fill(0, unsummed.length - 20);
    expect(indexPaths(unsummed), "no checksum (git's index.skipHash)").toEqual(["a.txt"]);
    git(root, "update-index", "--split-index");
    expect(readTracked(root)).toBeUndefined();
  });

  it("any tree of names: the reader lists what git lists (versions 2 and 4)", () => {
    const name = fc.stringMatching(/^[a-zA-Z0-9 ._é-]{1,12}$/).filter((n) => n !== "." && n !== ".." && !n.startsWith(".git"));
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.array(name, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 25 }),
        fc.boolean(),
        (paths, v4) => {
          const root = repo();
          const made = new Set<string>();
          for (const parts of paths) {
            const rel = parts.join("/");
            // A name that is already a file on the way (or a folder at the end) is skipped.
            if ([...made].some((m) => rel.startsWith(`${m}/`) || m.startsWith(`${rel}/`) || m === rel)) continue;
            writeAt(root, rel, rel);
            made.add(rel);
          }
          git(root, "add", "-A");
          if (v4) git(root, "update-index", "--index-version", "4");
          const t = readTracked(root);
          const want = lsFiles(root);
          expect(listed(t)).toEqual(want);
          for (const rel of want) {
            expect(t?.file(rel), rel).toBe(true);
            expect(t?.file(`${rel}x`), `${rel}x`).toBe(want.includes(`${rel}x`));
            const dir = rel.includes("/") ? rel.slice(0, rel.lastIndexOf("/")) : "";
            if (dir) expect(t?.under(dir), dir).toBe(true);
          }
        },
      ),
      { numRuns: 12 },
    );
  });

  it("a hostile index is unknown, in linear time: names that grow by a byte each, an entry count the file cannot hold, a FIFO", () => {
    // Version 4, every name the previous one plus a byte, no checksum (zeros, as index.skipHash writes).
    const n = 100_000;
    const entry = Buffer.alloc(62 + 3);
    entry.writeUInt32BE(0o100644, 24);
    entry.writeUInt16BE(1, 60);
    entry[62] = 0; // strip nothing from the previous name
    entry[63] = 0x61; // then add "a"
    entry[64] = 0;
    const header = Buffer.from("DIRC\0\0\0\x04\0\0\0\0", "latin1");
    header.writeUInt32BE(n, 8);
    const hostile = Buffer.concat([header, ...Array.from({ length: n }, () => entry), Buffer.alloc(20)]);
    expect(parseIndex(hostile)).toBeUndefined();

    const root = repo();
    writeAt(root, "a.txt", "a\n");
    git(root, "add", ".");
    const index = readFileSync(join(root, ".git", "index"));
    const counted = Buffer.from(index);
    counted.writeUInt32BE(0xffffffff, 8);
    expect(parseIndex(counted)).toBeUndefined();

    unlinkSync(join(root, ".git", "index"));
    expect(spawnSync("mkfifo", [join(root, ".git", "index")]).status).toBe(0);
    expect(readTracked(root), "a FIFO is not opened to wait on").toBeUndefined();
  });

  it("a .git file naming a folder git would not have put there is not followed", () => {
    const real = repo();
    writeAt(real, "a.txt", "a\n");
    git(real, "add", ".");
    const root = join(tempDir("baton-git-"), "ws");
    mkdirSync(root);
    writeFileSync(join(root, ".git"), `gitdir: ${join(real, ".git")}\n`);
    expect(readTracked(root)).toBeUndefined();
  });

  it("a cache reads an unchanged index once, and again once git rewrote it", () => {
    const root = repo();
    writeAt(root, "a.txt", "a\n");
    git(root, "add", ".");
    const cache = new TrackedCache();
    const first = readTracked(root, cache);
    expect(readTracked(root, cache)).toBe(first);
    writeAt(root, "b.txt", "b\n");
    git(root, "add", "b.txt");
    const second = readTracked(root, cache);
    expect(second).not.toBe(first);
    expect(listed(second)).toEqual(["a.txt", "b.txt"]);
    expect(second?.file("b.txt")).toBe(true);
  });
});

describe("whole-tree checkpoints take tracked files whatever the ignore rules say", () => {
  async function workspace(root: string, opts: Parameters<typeof openBaton>[0] = {}): Promise<Baton> {
    const b = await openBaton({ root, ...opts });
    open.push(b);
    await b.sessions.start({ flow: "task", id: "s1" });
    return b;
  }

  it("a file tracked before it was ignored, a force-added one, and a folder of them; untracked ignored files stay out", async () => {
    const root = repo();
    writeAt(root, "config.local.js", "secret-ish local config\n");
    writeAt(root, "build/keep.txt", "kept\n");
    writeAt(root, "app.js", "app\n");
    git(root, "add", ".");
    git(root, "commit", "-qm", "one");
    writeAt(root, ".gitignore", "*.local.js\nbuild/\n*.tmp\n");
    writeAt(root, "forced.tmp", "forced\n");
    git(root, "add", "-f", "forced.tmp");
    writeAt(root, "other.local.js", "untracked\n");
    writeAt(root, "build/out.o", "untracked\n");
    writeAt(root, "build/sub/deep.o", "untracked\n");
    writeAt(root, "scratch.tmp", "untracked\n");
    const b = await workspace(root);
    const cp = (await b.checkpoints.create("s1")).checkpoint;
    expect(cp.files.map((f) => f.path)).toEqual([".gitignore", "app.js", "build/keep.txt", "config.local.js", "forced.tmp"]);

    // A shell command changes the tracked, ignored files: a rollback brings them back.
    writeFileSync(join(root, "config.local.js"), "broken\n");
    writeFileSync(join(root, "build/keep.txt"), "broken\n");
    await b.checkpoints.rollback("s1", { to: cp.id });
    expect(readFileSync(join(root, "config.local.js"), "utf8")).toBe("secret-ish local config\n");
    expect(readFileSync(join(root, "build/keep.txt"), "utf8")).toBe("kept\n");
    expect(readFileSync(join(root, "build/out.o"), "utf8"), "an ignored, untracked file is left as it is").toBe("untracked\n");
  });

  it("a repository's `*` in .gitignore or .batonignore does not switch checkpoints off for what git tracks", async () => {
    const root = repo();
    writeAt(root, "src/main.ts", "main\n");
    writeAt(root, "README.md", "readme\n");
    git(root, "add", ".");
    git(root, "commit", "-qm", "one");
    writeAt(root, ".batonignore", "*\n");
    writeAt(root, "src/.gitignore", "*\n");
    writeAt(root, "src/new.ts", "untracked\n");
    const b = await workspace(root);
    const cp = (await b.checkpoints.create("s1")).checkpoint;
    expect(cp.files.map((f) => f.path)).toEqual(["README.md", "src/main.ts"]);
  });

  /** A repository `vendor/lib` added as a submodule (its own index, its own `*` ignore file), from a local clone. */
  function withSubmodule(opts: { absorbed: boolean }): string {
    const lib = repo();
    writeAt(lib, ".gitignore", "*\n");
    writeAt(lib, "lib.c", "int lib;\n");
    writeAt(lib, "docs/guide.md", "guide\n");
    git(lib, "add", "-f", ".gitignore", "lib.c", "docs/guide.md");
    git(lib, "commit", "-qm", "lib");
    const root = repo();
    writeAt(root, "app.c", "int app;\n");
    git(root, "add", ".");
    git(root, "commit", "-qm", "app");
    if (opts.absorbed) git(root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "vendor/lib");
    else {
      // An older layout: the submodule's `.git` a folder inside it (a clone then `git add`).
      git(root, "clone", "-q", lib, "vendor/lib");
      git(root, "add", "vendor/lib");
    }
    git(root, "commit", "-qm", "with lib");
    writeAt(root, "vendor/lib/untracked.o", "untracked\n");
    return root;
  }

  for (const absorbed of [true, false])
    it(`a submodule's tracked files are taken, its \`*\` notwithstanding (its .git ${absorbed ? "a file" : "a folder"})`, async () => {
      const root = withSubmodule({ absorbed });
      const t = readTracked(root);
      expect(t?.file("vendor/lib/lib.c")).toBe(true);
      expect(t?.file("vendor/lib/docs/guide.md")).toBe(true);
      expect(t?.file("vendor/lib/untracked.o")).toBe(false);
      expect(t?.file("vendor/lib")).toBe(false);
      expect(t?.under("vendor")).toBe(true);
      expect(t?.under("vendor/lib/docs")).toBe(true);
      expect(t?.under("vendor/li")).toBe(false);
      expect(t?.under("vendor/lib/nothing")).toBe(false);

      const b = await workspace(root);
      const cp = (await b.checkpoints.create("s1")).checkpoint;
      const paths = cp.files.map((f) => f.path);
      expect(paths).toEqual(expect.arrayContaining(["app.c", "vendor/lib/.gitignore", "vendor/lib/docs/guide.md", "vendor/lib/lib.c"]));
      expect(paths).not.toContain("vendor/lib/untracked.o");
      expect(paths.some((p) => p.includes(".git/") || p.endsWith("/.git"))).toBe(false);
      // An agent's command breaks the submodule's files: a rollback brings them back.
      writeFileSync(join(root, "vendor/lib/lib.c"), "broken\n");
      unlinkSync(join(root, "vendor/lib/docs/guide.md"));
      await b.checkpoints.rollback("s1", { to: cp.id });
      expect(readFileSync(join(root, "vendor/lib/lib.c"), "utf8")).toBe("int lib;\n");
      expect(readFileSync(join(root, "vendor/lib/docs/guide.md"), "utf8")).toBe("guide\n");
      // A file the submodule starts tracking is taken by the next checkpoint of the same process.
      writeAt(root, "vendor/lib/new.h", "h\n");
      git(join(root, "vendor/lib"), "add", "-f", "new.h");
      expect((await b.checkpoints.create("s1")).checkpoint.files.map((f) => f.path)).toContain("vendor/lib/new.h");
    });

  it("a submodule not checked out, or whose folder is a link, adds nothing", () => {
    const root = withSubmodule({ absorbed: true });
    const cache = new TrackedCache();
    expect(readTracked(root, cache)?.file("vendor/lib/lib.c")).toBe(true);
    git(root, "submodule", "deinit", "-q", "-f", "vendor/lib");
    expect(existsSync(join(root, "vendor/lib/lib.c"))).toBe(false);
    expect(readTracked(root, cache)?.file("vendor/lib/lib.c")).toBe(false);
    expect(readTracked(root, cache)?.file("app.c")).toBe(true);
    // A link where the submodule was, to a checkout of it elsewhere: the walk does not follow it, nor does this.
    const elsewhere = join(tempDir("baton-git-"), "lib");
    git(root, "clone", "-q", join(root, ".git/modules/vendor/lib"), elsewhere);
    rmdirSync(join(root, "vendor/lib"));
    symlinkSync(elsewhere, join(root, "vendor/lib"));
    expect(readTracked(root, cache)?.file("vendor/lib/lib.c")).toBe(false);
  });

  it("a file git starts tracking is taken by the next checkpoint of the same process", async () => {
    const root = repo();
    writeAt(root, ".gitignore", "*.gen\n");
    writeAt(root, "a.gen", "generated\n");
    writeAt(root, "b.txt", "b\n");
    git(root, "add", ".gitignore", "b.txt");
    const b = await workspace(root);
    expect((await b.checkpoints.create("s1")).checkpoint.files.map((f) => f.path)).toEqual([".gitignore", "b.txt"]);
    git(root, "add", "-f", "a.gen");
    expect((await b.checkpoints.create("s1")).checkpoint.files.map((f) => f.path)).toEqual([".gitignore", "a.gen", "b.txt"]);
    git(root, "rm", "-q", "--cached", "a.gen");
    expect((await b.checkpoints.create("s1")).checkpoint.files.map((f) => f.path)).toEqual([".gitignore", "b.txt"]);
  });

  it("configured excludes leave out tracked files too, and no .batonignore negation takes them back; LESSONS.md stays out", async () => {
    const root = repo();
    writeAt(root, "keys/prod.secret", "s3cr3t\n");
    writeAt(root, "a.secret", "s3cr3t\n");
    writeAt(root, "LESSONS.md", "# lessons\n");
    writeAt(root, "app.js", "app\n");
    git(root, "add", ".");
    writeAt(root, ".batonignore", "!*.secret\n!keys/\n");
    const b = await workspace(root, { checkpoints: { exclude: ["*.secret", "keys/"] } });
    const cp = (await b.checkpoints.create("s1")).checkpoint;
    expect(cp.files.map((f) => f.path)).toEqual([".batonignore", "app.js"]);
  });

  it("a workspace in a folder of a larger repository asks the repository about its own paths", async () => {
    const top = repo();
    const root = join(top, "packages", "app");
    writeAt(top, "packages/app/config.local.js", "tracked\n");
    writeAt(top, "packages/app/index.js", "app\n");
    writeAt(top, "packages/other/config.local.js", "elsewhere\n");
    git(top, "add", ".");
    git(top, "commit", "-qm", "one");
    writeAt(top, ".gitignore", "*.local.js\n");
    writeAt(root, ".gitignore", "*.local.js\n");
    writeAt(root, "new.local.js", "untracked\n");
    const b = await workspace(root);
    const cp = (await b.checkpoints.create("s1")).checkpoint;
    expect(cp.files.map((f) => f.path)).toEqual([".gitignore", "config.local.js", "index.js"]);
    expect(readTracked(root)?.file("config.local.js")).toBe(true);
    expect(readTracked(root)?.file("packages/app/config.local.js")).toBe(false);
  });

  it("a .git that is a link is not followed: the ignore rules alone decide", async () => {
    const real = repo();
    writeAt(real, "x.local", "x\n");
    git(real, "add", "-f", "x.local");
    const root = join(tempDir("baton-git-"), "ws");
    mkdirSync(root);
    writeAt(root, "x.local", "x\n");
    writeAt(root, ".gitignore", "*.local\n");
    symlinkSync(join(real, ".git"), join(root, ".git"));
    expect(readTracked(root)).toBeUndefined();
    const b = await workspace(root);
    expect((await b.checkpoints.create("s1")).checkpoint.files.map((f) => f.path)).toEqual([".gitignore"]);
  });

  it("in an ignored folder walked for its tracked files, untracked files stay out whatever its own .gitignore says", async () => {
    const root = repo();
    writeAt(root, "build/keep.txt", "kept\n");
    git(root, "add", ".");
    writeAt(root, ".gitignore", "build/\n");
    writeAt(root, "build/.gitignore", "!*.bin\n!sub/\n");
    writeAt(root, "build/huge.bin", "untracked\n");
    writeAt(root, "build/sub/x.bin", "untracked\n");
    const b = await workspace(root, { checkpoints: { exclude: ["*.secret"] } });
    const paths = async () => (await b.checkpoints.create("s1")).checkpoint.files.map((f) => f.path);
    // As git sees it: only the tracked file is in.
    expect(git(root, "check-ignore", "build/huge.bin").trim()).toBe("build/huge.bin");
    expect(await paths()).toEqual([".gitignore", "build/keep.txt"]);
    // Editing the ignored folder's .gitignore changes nothing either.
    writeAt(root, "build/.gitignore", "!huge.bin\n");
    expect(await paths()).toEqual([".gitignore", "build/keep.txt"]);
    // A tracked file a configured exclude names stays out, whatever a nested .gitignore says.
    writeAt(root, "src/a.secret", "s\n");
    writeAt(root, "src/.gitignore", "!*.secret\n");
    git(root, "add", "src/a.secret");
    expect(await paths()).toEqual([".gitignore", "build/keep.txt", "src/.gitignore"]);
  });

  it("a process's walk takes what git tracks once an index appears, and once it can be read again", async () => {
    const root = repo();
    writeAt(root, ".gitignore", "dist/\n");
    writeAt(root, "a.txt", "a\n");
    writeAt(root, "dist/app.js", "built\n");
    const b = await workspace(root);
    const paths = async () => (await b.checkpoints.create("s1")).checkpoint.files.map((f) => f.path);
    expect(await paths(), "no index yet").toEqual([".gitignore", "a.txt"]);
    git(root, "add", "-f", "dist/app.js");
    expect(await paths()).toEqual([".gitignore", "a.txt", "dist/app.js"]);
    git(root, "update-index", "--split-index");
    expect(await paths(), "a split index is unknown: the rules alone decide").toEqual([".gitignore", "a.txt"]);
    git(root, "update-index", "--no-split-index");
    expect(await paths()).toEqual([".gitignore", "a.txt", "dist/app.js"]);
  });

  it("a rollback leaves a tracked, ignored file the checkpoint did not list as it is (it cannot tell it was absent)", async () => {
    const root = repo();
    writeAt(root, ".gitignore", "*.local\n");
    writeAt(root, "a.txt", "a\n");
    writeAt(root, "late.local", "x\n");
    git(root, "add", "-f", "late.local");
    unlinkSync(join(root, "late.local")); // tracked, absent when the checkpoint is taken
    const b = await workspace(root);
    const cp = (await b.checkpoints.create("s1")).checkpoint;
    expect(cp.files.map((f) => f.path)).toEqual([".gitignore", "a.txt"]);
    writeAt(root, "late.local", "made later\n");
    writeAt(root, "a.txt", "changed\n");
    await b.checkpoints.rollback("s1", { to: cp.id });
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("a\n");
    expect(readFileSync(join(root, "late.local"), "utf8")).toBe("made later\n");
  });

  it("doctor says when git's index cannot be read (split, a linked .git), and stops once it can", async () => {
    const root = repo();
    writeAt(root, "a.txt", "a\n");
    git(root, "add", ".");
    const b = await workspace(root);
    const unread = async () => (await b.health.doctor()).findings.filter((f) => f.code === "git_index_unread");
    expect(await unread()).toEqual([]);
    git(root, "update-index", "--split-index");
    const [split] = await unread();
    expect(split?.severity).toBe("warning");
    expect(split?.message).toMatch(/split \(core\.splitIndex\)/);
    expect(split?.fix).toContain("git update-index --no-split-index");
    git(root, "update-index", "--no-split-index");
    expect(await unread()).toEqual([]);

    const other = join(tempDir("baton-git-"), "ws");
    mkdirSync(other);
    symlinkSync(join(root, ".git"), join(other, ".git"));
    const c = await workspace(other);
    const [linked] = (await c.health.doctor()).findings.filter((f) => f.code === "git_index_unread");
    expect(linked?.message).toMatch(/symbolic link/);
  });

  it("LESSONS.md stays out under a .gitignore allow-list (`*`, then `!*.md`); a .batonignore negation takes it in", async () => {
    const root = repo();
    writeAt(root, ".gitignore", "*\n!*.md\n!.gitignore\n");
    writeAt(root, "README.md", "readme\n");
    writeAt(root, "LESSONS.md", "# lessons\n");
    const b = await workspace(root);
    const paths = async () => (await b.checkpoints.create("s1")).checkpoint.files.map((f) => f.path);
    expect(await paths()).toEqual([".gitignore", "README.md"]);
    writeAt(root, ".batonignore", "!/LESSONS.md\n");
    expect(await paths()).toEqual([".gitignore", "LESSONS.md", "README.md"]);
  });

  it("a workspace in a folder of a repository keeps the repository's ignore rules above it: a rollback leaves ignored files alone", async () => {
    const top = repo();
    const root = join(top, "packages", "app");
    writeAt(top, ".gitignore", ".env\nnode_modules/\n");
    writeAt(top, "packages/.gitignore", "*.log\n");
    writeAt(top, ".git/info/exclude", "scratch/\n");
    writeAt(root, "index.js", "app\n");
    writeAt(root, "node_modules/dep/i.js", "dep\n");
    writeAt(root, "debug.log", "log\n");
    writeAt(root, "scratch/notes.txt", "notes\n");
    git(top, "add", ".");
    git(top, "commit", "-qm", "one");
    const b = await workspace(root);
    const cp = (await b.checkpoints.create("s1")).checkpoint;
    expect(cp.files.map((f) => f.path)).toEqual(["index.js"]);
    // Made after the checkpoint, ignored by the repository: not the rollback's to remove.
    writeAt(root, ".env", "SECRET=1\n");
    writeAt(root, "node_modules/x/i.js", "x\n");
    writeAt(root, "index.js", "changed\n");
    await b.checkpoints.rollback("s1", { to: cp.id });
    expect(readFileSync(join(root, "index.js"), "utf8")).toBe("app\n");
    expect(readFileSync(join(root, ".env"), "utf8")).toBe("SECRET=1\n");
    expect(readFileSync(join(root, "node_modules/x/i.js"), "utf8")).toBe("x\n");
  });

  it("a rollback judges what a checkpoint left out by the repository's rules as they were when it was taken", async () => {
    const top = repo();
    const root = join(top, "packages", "app");
    writeAt(top, ".gitignore", ".env\n");
    writeAt(top, ".git/info/exclude", "notes.txt\n");
    writeAt(root, "index.js", "app\n");
    git(top, "add", ".");
    writeAt(root, ".env", "SECRET=1\n");
    writeAt(root, "notes.txt", "mine\n");
    const b = await workspace(root);
    const cp = (await b.checkpoints.create("s1")).checkpoint;
    expect(cp.files.map((f) => f.path)).toEqual(["index.js"]);
    // The rules change (a pull, an edit): neither file is ignored any more.
    writeAt(top, ".gitignore", "# nothing\n");
    writeAt(top, ".git/info/exclude", "\n");
    writeAt(root, "made-later.txt", "later\n");
    const moved = join(root, "index.js");
    writeFileSync(moved, "changed\n");
    await b.checkpoints.rollback("s1", { to: cp.id });
    expect(readFileSync(join(root, "index.js"), "utf8")).toBe("app\n");
    // Left out by the checkpoint, so not its to remove.
    expect(readFileSync(join(root, ".env"), "utf8")).toBe("SECRET=1\n");
    expect(readFileSync(join(root, "notes.txt"), "utf8")).toBe("mine\n");
    // Covered then and made after: removed.
    expect(existsSync(join(root, "made-later.txt"))).toBe(false);
  });

  it("a .batonignore that a rule leaves out of the checkpoint is kept with its rules: a later edit of it removes nothing", async () => {
    const root = repo();
    writeAt(root, ".git/info/exclude", ".batonignore\n");
    writeAt(root, ".batonignore", "scratch/\n");
    writeAt(root, "a.txt", "a\n");
    writeAt(root, "scratch/keep.txt", "keep\n");
    const b = await workspace(root);
    const cp = (await b.checkpoints.create("s1")).checkpoint;
    expect(cp.files.map((f) => f.path)).toEqual(["a.txt"]);
    writeAt(root, ".batonignore", "# nothing left out now\n");
    await b.checkpoints.rollback("s1", { to: cp.id });
    expect(readFileSync(join(root, "scratch/keep.txt"), "utf8")).toBe("keep\n");
  });

  it("a new package of a monorepo, nothing in it tracked yet, keeps the repository's rules", async () => {
    const top = repo();
    writeAt(top, ".gitignore", "node_modules/\n.env\ndist/\n");
    writeAt(top, "README.md", "mono\n");
    git(top, "add", ".");
    const root = join(top, "packages", "new");
    writeAt(root, "index.ts", "new\n");
    writeAt(root, ".env", "SECRET=1\n");
    writeAt(root, "dist/out.js", "built\n");
    writeAt(root, "node_modules/dep/i.js", "dep\n");
    const b = await workspace(root);
    expect((await b.checkpoints.create("s1")).checkpoint.files.map((f) => f.path)).toEqual(["index.ts"]);
  });

  for (const [what, rules] of [
    ["`*`", "*\n!.gitignore\n"],
    ["allow-list of folders (`*`, `!*/`)", "*\n!*/\n!.gitignore\n"],
  ]) {
    it(`a repository that ignores the workspace (a dotfiles repository's ${what}) and tracks nothing in it does not empty its checkpoints`, async () => {
      const home = repo();
      writeAt(home, ".gitignore", rules as string);
      writeAt(home, ".bashrc", "alias ll='ls -l'\n");
      git(home, "add", "-f", ".gitignore", ".bashrc");
      const root = join(home, "code", "project");
      writeAt(root, "main.ts", "main\n");
      writeAt(root, "notes.md", "notes\n");
      const b = await workspace(root);
      expect((await b.checkpoints.create("s1")).checkpoint.files.map((f) => f.path)).toEqual(["main.ts", "notes.md"]);
    });
  }

  it("a workspace reached through a link finds its repository by its real path", async () => {
    const top = repo();
    writeAt(top, "pkg/keep.local", "k\n");
    git(top, "add", ".");
    writeAt(top, ".gitignore", "*.local\n");
    const link = join(tempDir("baton-git-"), "pkglink");
    symlinkSync(join(top, "pkg"), link);
    expect(readTracked(link)?.file("keep.local")).toBe(true);
    const b = await workspace(link);
    expect((await b.checkpoints.create("s1")).checkpoint.files.map((f) => f.path)).toEqual(["keep.local"]);
  });

  it("a worktree of a bare repository (the .bare layout) is read through its .git file", async () => {
    const src = repo();
    writeAt(src, "a.txt", "a\n");
    git(src, "add", ".");
    git(src, "commit", "-qm", "one");
    const proj = join(tempDir("baton-git-"), "proj");
    git(src, "clone", "-q", "--bare", src, join(proj, ".bare"));
    git(proj, "--git-dir=.bare", "worktree", "add", "-q", join(proj, "main"));
    const wt = join(proj, "main");
    writeAt(wt, "forced.local", "f\n");
    git(wt, "add", "-f", "forced.local");
    expect(listed(readTracked(wt))).toEqual(["a.txt", "forced.local"]);
    expect(indexProblem(wt)).toBeUndefined();
  });

  it.runIf(process.getuid?.() === 0)("a .git another user owns, in a folder above the workspace, decides nothing", async () => {
    const planted = repo();
    writeAt(planted, "ws/x.local", "x\n");
    git(planted, "add", "-f", "ws/x.local");
    writeAt(planted, ".gitignore", "*.txt\n");
    spawnSync("chown", ["-R", "65534", join(planted, ".git")]);
    const root = join(planted, "ws");
    writeAt(root, "a.txt", "a\n");
    expect(readTracked(root)).toBeUndefined();
    const b = await workspace(root);
    expect((await b.checkpoints.create("s1")).checkpoint.files.map((f) => f.path)).toEqual(["a.txt", "x.local"]);
    const [found] = (await b.health.doctor()).findings.filter((f) => f.code === "git_index_unread");
    expect(found?.message).toMatch(/above the workspace, is owned by another user \(uid 65534\)/);
    // The workspace's own .git is read whoever owns it (a container's root on the host's checkout).
    const own = repo();
    writeAt(own, "y.local", "y\n");
    git(own, "add", "-f", "y.local");
    spawnSync("chown", ["-R", "65534", join(own, ".git")]);
    expect(readTracked(own)?.file("y.local")).toBe(true);
  });

  it("in a worktree, its own index decides, and the repository's info/exclude applies", async () => {
    const root = repo();
    writeAt(root, "tracked.local", "t\n");
    writeAt(root, ".gitignore", "*.local\n");
    git(root, "add", "-f", ".");
    git(root, "commit", "-qm", "one");
    writeAt(root, ".git/info/exclude", "*.tmp\n");
    const wt = join(root, "..", "wt");
    git(root, "worktree", "add", "-q", wt);
    writeAt(wt, "untracked.local", "u\n");
    writeAt(wt, "scratch.tmp", "s\n");
    const b = await workspace(wt);
    const cp = (await b.checkpoints.create("s1")).checkpoint;
    expect(cp.files.map((f) => f.path)).toEqual([".gitignore", "tracked.local"]);
  });
});

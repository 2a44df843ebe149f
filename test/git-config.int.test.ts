/**
 * The user's global ignore file (git's `core.excludesFile`, else `~/.config/git/ignore`):
 * found as git finds it, with git itself as the judge, and applied by whole-tree checkpoints
 * below every other ignore rule, as git applies it; a rollback leaves alone what it ignored when
 * the checkpoint was taken. The repository's own `.git/config` never names it.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import fc from "fast-check";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { servicesOf } from "../src/compose.js";
import { type Baton, openBaton } from "../src/index.js";
import { globalExcludesFile, parseConfig } from "../src/platform/git-config.js";
import { gitRepo } from "../src/platform/git-repo.js";
import { wildmatch } from "../src/platform/wildmatch.js";
import { cleanupDirs, tempDir, writeAt } from "./helpers.js";

afterAll(() => cleanupDirs());

/** Git with only the environment named (no system configuration, the given home). */
function git(env: Record<string, string>, cwd: string, ...args: string[]) {
  return spawnSync("git", args, {
    cwd,
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "", GIT_CONFIG_NOSYSTEM: "1", ...env },
  });
}

function ok(r: ReturnType<typeof git>): string {
  if (r.status !== 0) throw new Error(`git exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

describe("the global ignore file is the one git reads", () => {
  const home = realpathSync(tempDir("baton-gitcfg-"));
  const repoDir = join(home, "repo");
  const env = { HOME: home };
  ok(git(env, home, "init", "-q", "-b", "main", repoDir));

  /** What git says: its `core.excludesFile` (relative to the repository's top), its default when unset, none when empty or refused. */
  function gitSays(): string | undefined {
    const r = git(env, repoDir, "config", "--path", "--get", "core.excludesFile");
    if (r.status === 1 && r.stderr === "") return join(home, ".config", "git", "ignore");
    if (r.status !== 0) return undefined;
    const v = r.stdout.replace(/\n$/, "");
    if (v === "") return undefined;
    return isAbsolute(v) ? v : resolve(repoDir, v);
  }

  const places = [".gitconfig", ".config/git/config", "inc1", "sub/inc2"];
  const conds = [
    "gitdir:~/repo/",
    "gitdir:~/repo",
    "gitdir:repo/",
    "gitdir:**/re*o/",
    "gitdir:/nowhere/",
    "gitdir/i:~/REPO/",
    "gitdir:~/REPO/",
    "gitdir:./repo/",
    "gitdir:./",
    `gitdir:${home}/repo/.git`,
    "gitdir:~/[qr]epo/**",
    "onbranch:main",
    "onbranch:ma*",
    "onbranch:feature/",
    "onbranch:feature",
    "onbranch:feature/*",
    "onbranch:!main",
    "onbranch:[!m]ain",
    "onbranch:ma?n",
    "onbranch:**",
    "hasconfig:foo",
    "gitdir:~/repo/.git/",
    "gitdir:~/r[!x]po/",
    "gitdir:~/r[[:alpha:]]po/",
    "hasconfig:remote.*.url:https://example.com/**",
  ];
  const header = fc.oneof(
    fc.constantFrom("[core]", "[Core]", '[core "x"]', "[core.x]", "[include]", "[other]", "[core]  ", '[ "x"]'),
    fc.constantFrom(...conds).map((c) => `[includeIf "${c}"]`),
  );
  const value = fc.constantFrom(
    "~/ig-a",
    '"~/ig b"',
    `${home}/ig-c`,
    "rel/ig-d",
    "ig\\te",
    '""',
    "",
    "~/ig-f # a comment",
    "~/ig-g ; another",
    '"~/ig;h"',
    "~/ig\\\n-i",
    '"~/ig \\"j\\""',
  );
  const target = fc.constantFrom("inc1", "~/sub/inc2", `${home}/inc1`, "sub/inc2", "missing", "../inc1");
  const line = fc.oneof(
    { weight: 3, arbitrary: header },
    {
      weight: 4,
      arbitrary: fc
        .tuple(fc.constantFrom("excludesFile = ", "\texcludesfile=", "EXCLUDESFILE =  ", "excludesfile\t= "), value)
        .map(([k, v]) => k + v),
    },
    { weight: 3, arbitrary: target.map((t) => `path = ${t}`) },
    { weight: 1, arbitrary: fc.constantFrom("other = 1", "flag", "# comment", "; comment", "", "  ", 'name = "a b" # c') },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        "bad line!",
        'x = "unterminated',
        "excludesfile",
        "x = a\\q",
        "[bad",
        "[core\n]",
        "\f",
        "x = \v",
        "path = ~",
        "path = sub",
      ),
    },
  );
  const file = fc.option(fc.array(line, { maxLength: 8 }), { nil: undefined, freq: 3 });

  it("matches `git config --path --get core.excludesFile` over any configuration (includes, conditions, quoting)", () => {
    fc.assert(
      fc.property(fc.tuple(file, file, file, file), fc.constantFrom("main", "feature/x", "mainly", "!main"), (texts, branch) => {
        for (const [i, rel] of places.entries()) {
          const abs = join(home, rel);
          const text = texts[i];
          if (text === undefined) rmSync(abs, { force: true });
          else writeAt(home, rel, `${text.join("\n")}\n`);
        }
        writeFileSync(join(repoDir, ".git", "HEAD"), `ref: refs/heads/${branch}\n`);
        const found = gitRepo(repoDir);
        if (found === undefined || "problem" in found) throw new Error("no repository");
        const ours = globalExcludesFile(found, env);
        expect(ours, JSON.stringify({ texts, branch })).toBe(gitSays());
      }),
      { numRuns: 300 },
    );
  });

  it("matches gitdir conditions as git's wildmatch does: brackets, classes, stars, bytes, characters a regex would read", () => {
    for (const rel of places) rmSync(join(home, rel), { force: true });
    const names = ["proj (copy)", "a|b", "foo", "Ünï-code", "x[1]", "s*t?r", "dot.d", "UP"];
    const repos = names.map((n) => {
      const dir = join(home, "w", n, "r");
      ok(git(env, home, "init", "-q", dir));
      const found = gitRepo(dir);
      if (found === undefined || "problem" in found) throw new Error("no repository");
      return { dir, found };
    });
    const token = fc.constantFrom(
      "*",
      "**",
      "?",
      "[a-z]",
      "[!a]",
      "[^o]",
      "[[:alpha:]]",
      "[[:upper:]]",
      "[[:space:]]",
      "\\(",
      "(",
      ")",
      "|",
      "/",
      "[]a]",
      "[a-]",
      "*.*",
      ".git",
      "r",
      "w",
      "o",
      "Ü",
      "ï",
      "p",
      "copy",
      " ",
      "\\*",
      "[[:bogus:]]",
      "[[:constructor:]]",
      "[[:valueOf:]]",
      "[x",
      "UP",
      "up",
    );
    const start = fc.constantFrom(`${home}/w/`, "~/w/", "**/", "", "./w/", "~/");
    const quote = (s: string) => s.replace(/\\/g, "\\\\").replace(/"/g, '\\"');
    fc.assert(
      fc.property(fc.nat(names.length - 1), start, fc.array(token, { maxLength: 7 }), fc.boolean(), (i, first, tokens, icase) => {
        const { dir, found } = repos[i] as (typeof repos)[number];
        const cond = `gitdir${icase ? "/i" : ""}:${first}${tokens.join("")}`;
        writeAt(home, ".gitconfig", `[includeIf "${quote(cond)}"]\n\tpath = inc\n`);
        writeAt(home, "inc", "[core]\n\texcludesFile = /matched\n");
        const r = git(env, dir, "config", "--path", "--get", "core.excludesFile");
        const theirs = r.status === 0 ? r.stdout.trim() : r.status === 1 ? join(home, ".config", "git", "ignore") : undefined;
        expect(globalExcludesFile(found, env), `${cond} against ${found.gitDir}`).toBe(theirs);
      }),
      { numRuns: 300 },
    );
  });

  it("each place git reads, in git's order; the environment's own choices", () => {
    for (const rel of places) rmSync(join(home, rel), { force: true });
    const found = gitRepo(repoDir);
    if (found === undefined || "problem" in found) throw new Error("no repository");
    expect(globalExcludesFile(found, env)).toBe(join(home, ".config/git/ignore"));
    expect(globalExcludesFile(found, { ...env, XDG_CONFIG_HOME: join(home, "x") })).toBe(join(home, "x/git/ignore"));
    writeAt(home, ".config/git/config", "[core]\n\texcludesFile = ~/from-xdg\n");
    expect(globalExcludesFile(found, env)).toBe(join(home, "from-xdg"));
    writeAt(home, ".gitconfig", "[core]\n\texcludesFile = ~/from-home\n");
    expect(globalExcludesFile(found, env), "~/.gitconfig is read after the XDG file").toBe(join(home, "from-home"));
    writeAt(home, "elsewhere", "[core]\n\texcludesFile = /abs/from-env\n");
    expect(globalExcludesFile(found, { ...env, GIT_CONFIG_GLOBAL: join(home, "elsewhere") })).toBe("/abs/from-env");
    expect(globalExcludesFile(found, { ...env, GIT_CONFIG_GLOBAL: "" }), "no global configuration: the default").toBe(
      join(home, ".config/git/ignore"),
    );
    expect(globalExcludesFile(found, {}), "no home folder: none").toBeUndefined();
    writeAt(home, "system", "[core]\n\texcludesFile = /abs/system\n");
    expect(globalExcludesFile(found, { GIT_CONFIG_SYSTEM: join(home, "system") })).toBe("/abs/system");
    expect(globalExcludesFile(found, { GIT_CONFIG_SYSTEM: join(home, "system"), GIT_CONFIG_NOSYSTEM: "true" })).toBeUndefined();
    // The repository's own configuration names nothing (git would read `/etc/passwd` as rules).
    writeAt(repoDir, ".git/config", "[core]\n\texcludesFile = /etc/passwd\n");
    rmSync(join(home, ".gitconfig"));
    expect(globalExcludesFile(found, env)).toBe(join(home, "from-xdg"));
    expect(globalExcludesFile(undefined, env), "outside a repository: none").toBeUndefined();
  });

  it("classes as git's ctype has them, and no class an object's prototype names", () => {
    expect(wildmatch("a[[:space:]]b", "a b")).toBe(true);
    expect(wildmatch("a[[:space:]]b", "a\vb")).toBe(false);
    expect(wildmatch("a[[:constructor:]]b", "axb")).toBe(false);
    expect(wildmatch("a[[:__proto__:]]b", "axb")).toBe(false);
    expect(wildmatch("a[[:upper:]]b", "axb", true)).toBe(true);
  });

  it("parses what git parses: sections, subsections, continuation lines; refuses what git refuses", () => {
    expect(parseConfig('[a "B c"]\n k = "x  y" z  # c\n[A.B]\nK\n')).toEqual([
      { name: "a.B c.k", value: "x  y z" },
      { name: "a.b.k", value: undefined },
    ]);
    expect(parseConfig("[core] excludesfile = a\\\n  b\n")).toEqual([{ name: "core.excludesfile", value: "a  b" }]);
    for (const bad of ["[core\n", '[core "x]\n', "[core]\nk # c\n", "[core]\n1k = 2\n", '[core]\nk = "x\n', "[core]\nk = a\\z\n"])
      expect(parseConfig(bad), bad).toBeUndefined();
  });
});

describe("whole-tree checkpoints leave out what the global ignore file ignores", () => {
  const saved = { XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME, GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL };
  const open: Baton[] = [];
  let xdg = "";
  beforeEach(() => {
    xdg = tempDir("baton-xdg-");
    process.env.XDG_CONFIG_HOME = xdg;
    process.env.GIT_CONFIG_GLOBAL = join(xdg, "no-such-config");
  });
  afterEach(async () => {
    for (const b of open.splice(0)) await b.close();
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });

  const gitEnv = () => ({ HOME: process.env.HOME ?? "/", XDG_CONFIG_HOME: xdg, GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL ?? "" });

  async function workspace(root: string): Promise<Baton> {
    const b = await openBaton({ root });
    open.push(b);
    await b.sessions.start({ flow: "task", id: "s1" });
    return b;
  }

  /** What git would commit with `git add -A`: tracked files and untracked ones no ignore rule names. */
  function gitTakes(root: string): string[] {
    const out = ok(git(gitEnv(), root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"));
    return [...new Set(out.split("\0").filter((p) => p !== "" && !p.startsWith(".baton/")))].sort();
  }

  it("as git does, below the repository's own rules; a rollback leaves what it ignored alone, by the rules of the checkpoint's time", async () => {
    writeAt(xdg, "git/ignore", ".idea/\n*.swp\n.envrc\n");
    const root = join(tempDir("baton-ws-"), "ws");
    ok(git(gitEnv(), tempDir(), "init", "-q", root));
    writeAt(root, ".gitignore", "!keep.swp\n");
    writeAt(root, "app.js", "app\n");
    writeAt(root, "keep.swp", "the repository takes it back\n");
    writeAt(root, ".idea/workspace.xml", "<ide/>\n");
    writeAt(root, ".envrc", "export TOKEN=1\n");
    writeAt(root, "edit.swp", "swap\n");
    const b = await workspace(root);
    const cp = (await b.checkpoints.create("s1")).checkpoint;
    const paths = cp.files.map((f) => f.path);
    expect(paths).toEqual([".gitignore", "app.js", "keep.swp"]);
    expect(paths).toEqual(gitTakes(root));

    // The user's global rules change after the checkpoint; an IDE writes more; a command breaks app.js.
    writeAt(xdg, "git/ignore", "# nothing now\n");
    writeAt(root, ".idea/later.xml", "<later/>\n");
    writeAt(root, "later.swp", "swap\n");
    writeFileSync(join(root, "app.js"), "broken\n");
    await b.checkpoints.rollback("s1", { to: cp.id });
    expect(readFileSync(join(root, "app.js"), "utf8")).toBe("app\n");
    for (const kept of [".idea/later.xml", "later.swp", ".idea/workspace.xml", ".envrc", "edit.swp"])
      expect(existsSync(join(root, kept)), `${kept} was ignored when the checkpoint was taken`).toBe(true);
  });

  it("core.excludesFile from the user's configuration; a file only it ignores and git tracks is still taken", async () => {
    writeAt(xdg, "mine.ignore", "*.log\n");
    writeAt(xdg, "config", `[core]\n\texcludesFile = ${join(xdg, "mine.ignore")}\n`);
    process.env.GIT_CONFIG_GLOBAL = join(xdg, "config");
    const root = join(tempDir("baton-ws-"), "ws");
    ok(git(gitEnv(), tempDir(), "init", "-q", root));
    writeAt(root, "tracked.log", "tracked\n");
    ok(git(gitEnv(), root, "add", "-f", "tracked.log"));
    writeAt(root, "debug.log", "untracked\n");
    writeAt(root, "a.txt", "a\n");
    const b = await workspace(root);
    const paths = (await b.checkpoints.create("s1")).checkpoint.files.map((f) => f.path);
    expect(paths).toEqual(["a.txt", "tracked.log"]);
    expect(paths).toEqual(gitTakes(root));
  });

  it("the repository's own .git/config does not name one, and a workspace outside a repository reads none", async () => {
    writeAt(xdg, "git/ignore", "*.txt\n");
    const plain = tempDir("baton-plain-");
    writeAt(plain, "a.txt", "a\n");
    const b1 = await workspace(plain);
    expect((await b1.checkpoints.create("s1")).checkpoint.files.map((f) => f.path)).toEqual(["a.txt"]);

    rmSync(join(xdg, "git/ignore"));
    const root = join(tempDir("baton-ws-"), "ws");
    ok(git(gitEnv(), tempDir(), "init", "-q", root));
    writeAt(root, "rules", "*.txt\n");
    writeAt(root, ".git/config", `${readFileSync(join(root, ".git/config"), "utf8")}[core]\n\texcludesFile = ${join(root, "rules")}\n`);
    writeAt(root, "a.txt", "a\n");
    mkdirSync(join(root, "d"));
    const b2 = await workspace(root);
    expect((await b2.checkpoints.create("s1")).checkpoint.files.map((f) => f.path)).toEqual(["a.txt", "rules"]);
  });

  it("a relative core.excludesFile is the repository's file: a link it ships is not followed, so nothing it names is read or kept", async () => {
    const secret = join(tempDir("baton-secret-"), "credentials");
    writeFileSync(secret, "*.txt\naws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n");
    writeAt(xdg, "config", "[core]\n\texcludesFile = .gitignore_global\n"); // a common slip: relative, so each repository's own
    process.env.GIT_CONFIG_GLOBAL = join(xdg, "config");
    const root = join(tempDir("baton-ws-"), "ws");
    ok(git(gitEnv(), tempDir(), "init", "-q", root));
    symlinkSync(secret, join(root, ".gitignore_global"));
    writeAt(root, "a.txt", "a\n");
    const b = await workspace(root);
    const cp = (await b.checkpoints.create("s1")).checkpoint;
    expect(
      cp.files.map((f) => f.path),
      "the link's target gave no rules",
    ).toEqual(["a.txt"]);
    const rows = await servicesOf(b).backend.transaction("read", (tx) => tx.checkpoints.getCheckpoint(cp.id));
    expect(rows?.outsideRules ?? "").not.toContain("wJalrXUtnFEMI");
    // Nor through a folder it ships as a link out of it.
    writeFileSync(join(secret, "..", "ignore"), "*.txt\naws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n");
    writeAt(xdg, "config", "[core]\n\texcludesFile = conf/ignore\n");
    symlinkSync(join(secret, ".."), join(root, "conf"));
    const viaFolder = (await b.checkpoints.create("s1")).checkpoint;
    expect(viaFolder.files.map((f) => f.path)).toEqual(["a.txt"]);
    const row = await servicesOf(b).backend.transaction("read", (tx) => tx.checkpoints.getCheckpoint(viaFolder.id));
    expect(row?.outsideRules ?? "").not.toContain("wJalrXUtnFEMI");
    rmSync(join(root, "conf"));
    writeAt(xdg, "config", "[core]\n\texcludesFile = .gitignore_global\n");
    // A plain file there is the repository's rules, as git reads them.
    rmSync(join(root, ".gitignore_global"));
    writeAt(root, ".gitignore_global", "*.txt\n");
    writeAt(root, "b.md", "b\n");
    const again = (await b.checkpoints.create("s1")).checkpoint.files.map((f) => f.path);
    expect(again).toEqual([".gitignore_global", "b.md"]);
    expect(again).toEqual(gitTakes(root));
  });
});

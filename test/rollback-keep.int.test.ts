/**
 * A rollback never loses what it cannot give back: a whole-tree checkpoint decides a path only
 * by the ignore rules it was taken with, and a file the safety checkpoint could not store (too
 * large, a symbolic link, a name the directory does not hold exactly) is kept, with a warning.
 */
import { spawnSync } from "node:child_process";
import { existsSync, linkSync, lstatSync, readFileSync, readlinkSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { servicesOf } from "../src/compose.js";
import { isBatonError } from "../src/index.js";
import { hasExactName, readCurrent } from "../src/platform/safe-fs.js";
import { CheckpointService } from "../src/services/time-travel/checkpoints.js";
import { RollbackService } from "../src/services/time-travel/rollback.js";
import { coversWith, walkCovers } from "../src/services/time-travel/tree-rules.js";
import { walkTree } from "../src/services/time-travel/tree-scan.js";
import { CLI, cleanupDirs, tempBaton, tempDir, writeAt } from "./helpers.js";

afterAll(() => cleanupDirs());

describe("a whole-tree checkpoint judges coverage by its own ignore rules", () => {
  it("a file ignored at T and listed by a later tree checkpoint comes back after the ignore rules changed", async () => {
    const { baton, root } = await tempBaton();
    try {
      const { sessionId } = await baton.sessions.start({ flow: "task", id: "ign1" });
      writeAt(root, ".gitignore", "*.log\n");
      writeAt(root, "debug.log", "trace\n");
      const t = await baton.checkpoints.create(sessionId, { all: true });
      writeAt(root, ".gitignore", "");
      const t2 = await baton.checkpoints.create(sessionId, { all: true });
      expect((await baton.checkpoints.get(t2.checkpoint.id)).files.map((f) => f.path)).toContain("debug.log");
      unlinkSync(join(root, "debug.log"));
      await baton.checkpoints.rollback(sessionId, { to: t.checkpoint.id });
      expect(readFileSync(join(root, ".gitignore"), "utf8")).toBe("*.log\n");
      expect(existsSync(join(root, "debug.log")), "debug.log was not brought back").toBe(true);
      expect(readFileSync(join(root, "debug.log"), "utf8")).toBe("trace\n");
    } finally {
      await baton.close();
    }
  });

  it("a file ignored at T stays when .gitignore no longer names it (T never looked at it)", async () => {
    const { baton, root } = await tempBaton();
    try {
      const { sessionId } = await baton.sessions.start({ flow: "task", id: "ign2" });
      writeAt(root, ".gitignore", ".env\n");
      writeAt(root, ".env", "SECRET=1\n");
      const t = await baton.checkpoints.create(sessionId, { all: true });
      writeAt(root, ".gitignore", "node_modules/\n");
      const r = await baton.checkpoints.rollback(sessionId, { to: t.checkpoint.id });
      expect(readFileSync(join(root, ".gitignore"), "utf8")).toBe(".env\n");
      expect(existsSync(join(root, ".env")), "rollback removed .env").toBe(true);
      expect(r.changes.map((c) => c.path)).not.toContain(".env");
    } finally {
      await baton.close();
    }
  });

  it("a file ignored by a nested .gitignore at T stays after that .gitignore is removed", async () => {
    const { baton, root } = await tempBaton();
    try {
      const { sessionId } = await baton.sessions.start({ flow: "task", id: "ign3" });
      writeAt(root, "sub/.gitignore", "local.cfg\n");
      writeAt(root, "sub/local.cfg", "mine\n");
      const t = await baton.checkpoints.create(sessionId, { all: true });
      unlinkSync(join(root, "sub/.gitignore"));
      await baton.checkpoints.rollback(sessionId, { to: t.checkpoint.id });
      expect(readFileSync(join(root, "sub/.gitignore"), "utf8")).toBe("local.cfg\n");
      expect(readFileSync(join(root, "sub/local.cfg"), "utf8")).toBe("mine\n");
    } finally {
      await baton.close();
    }
  });
});

describe("a folder whose own .gitignore leaves out everything in it, itself too (a Python venv, pytest's and mypy's caches)", () => {
  it("the checkpoint takes nothing there, and a rollback leaves the folder alone even once that .gitignore is gone", async () => {
    const { baton, root } = await tempBaton();
    try {
      const { sessionId } = await baton.sessions.start({ flow: "task", id: "venv" });
      writeAt(root, "app.py", "print(1)\n");
      writeAt(root, ".venv/.gitignore", "*\n"); // as `python -m venv` writes it
      writeAt(root, ".venv/lib/site-packages/old.py", "old\n");
      writeAt(root, ".pytest_cache/.gitignore", "# Created by pytest automatically.\n*\n");
      writeAt(root, ".pytest_cache/v/cache/nodeids", "[]\n");
      const t = await baton.checkpoints.create(sessionId, { all: true });
      expect(t.checkpoint.files.map((f) => f.path)).toEqual(["app.py"]);
      // A command replaces the environment with one that writes no .gitignore, and breaks app.py.
      unlinkSync(join(root, ".venv/.gitignore"));
      writeAt(root, ".venv/lib/site-packages/new.py", "new\n");
      writeAt(root, ".pytest_cache/v/cache/lastfailed", "{}\n");
      writeFileSync(join(root, "app.py"), "broken\n");
      const r = await baton.checkpoints.rollback(sessionId, { to: t.checkpoint.id });
      expect(readFileSync(join(root, "app.py"), "utf8")).toBe("print(1)\n");
      expect(r.changes.map((c) => c.path)).toEqual(["app.py"]);
      for (const kept of [".venv/lib/site-packages/new.py", ".venv/lib/site-packages/old.py", ".pytest_cache/v/cache/lastfailed"])
        expect(existsSync(join(root, kept)), `${kept}: the checkpoint never looked there`).toBe(true);
    } finally {
      await baton.close();
    }
  });
});

describe("a link a checkpoint could not store", () => {
  it("is not the rollback's to remove once `sed -i` wrote a file in its place; nor what a real folder put in a linked one's place holds", async () => {
    const { baton, root } = await tempBaton();
    try {
      const { sessionId } = await baton.sessions.start({ flow: "task", id: "links" });
      writeAt(root, "app.js", "app\n");
      writeAt(root, "shared/config.json", '{"port":1}\n');
      writeAt(root, "vendor-src/lib.js", "lib\n");
      symlinkSync("shared/config.json", join(root, "config.json"));
      symlinkSync("vendor-src", join(root, "vendor"));
      const t = await baton.checkpoints.create(sessionId, { all: true });
      expect(t.checkpoint.files.map((f) => f.path)).toEqual(["app.js", "shared/config.json", "vendor-src/lib.js"]);
      // An agent edits through the link as GNU sed does (a new file in the link's place), and
      // replaces the linked folder with a copy.
      expect(spawnSync("sed", ["-i", "s/1/2/", join(root, "config.json")]).status).toBe(0);
      expect(lstatSync(join(root, "config.json")).isSymbolicLink()).toBe(false);
      unlinkSync(join(root, "vendor"));
      writeAt(root, "vendor/lib.js", "copied\n");
      writeFileSync(join(root, "app.js"), "broken\n");
      const r = await baton.checkpoints.rollback(sessionId, { to: t.checkpoint.id });
      expect(readFileSync(join(root, "app.js"), "utf8")).toBe("app\n");
      expect(r.changes.filter((c) => c.action !== "unchanged").map((c) => c.path)).toEqual(["app.js"]);
      expect(readFileSync(join(root, "config.json"), "utf8"), "the file in the link's place stays").toBe('{"port":2}\n');
      expect(readFileSync(join(root, "vendor/lib.js"), "utf8")).toBe("copied\n");
    } finally {
      await baton.close();
    }
  });

  it("a link an allow-list ignores as a file but not as a folder; many links in one folder, kept by its name", async () => {
    const { baton, root } = await tempBaton();
    try {
      const { sessionId } = await baton.sessions.start({ flow: "task", id: "links2" });
      writeAt(root, ".gitignore", "*\n!*/\n!*.js\n!.gitignore\n");
      writeAt(root, "app.js", "app\n");
      writeAt(root, "vendor-src/lib.js", "lib\n");
      symlinkSync("vendor-src", join(root, "vendor"));
      for (let i = 0; i < 20; i++) symlinkSync("../app.js", join(root, "vendor-src", `bin${i}.js`));
      const scan = walkTree(root);
      expect(scan.others).toEqual(["vendor", "vendor-src"]);
      const t = await baton.checkpoints.create(sessionId, { all: true });
      unlinkSync(join(root, "vendor"));
      writeAt(root, "vendor/lib.js", "copied\n");
      unlinkSync(join(root, "vendor-src", "bin3.js"));
      writeAt(root, "vendor-src/bin3.js", "a file now\n");
      const r = await baton.checkpoints.rollback(sessionId, { to: t.checkpoint.id });
      expect(r.changes.filter((c) => c.action !== "unchanged").map((c) => c.path)).toEqual([]);
      expect(readFileSync(join(root, "vendor/lib.js"), "utf8")).toBe("copied\n");
      expect(readFileSync(join(root, "vendor-src/bin3.js"), "utf8")).toBe("a file now\n");
    } finally {
      await baton.close();
    }
  });
});

describe("a folder or file a checkpoint could not read", () => {
  // Root reads every folder whatever its mode: the walk runs as user nobody, through the CLI.
  it.skipIf(process.getuid?.() !== 0)(
    "nor a file it could not read: a rollback leaves both alone, readable again or not (needs root to act as another user)",
    () => {
      const root = join(tempDir("baton-unreadable-"), "ws");
      const home = join(root, "..", "home");
      writeAt(root, "app.js", "app\n");
      writeAt(root, "secret/keys.txt", "mine\n");
      writeAt(root, "notes.txt", "notes\n");
      writeAt(root, "root-owned.log", "a container's\n");
      writeAt(home, ".keep", "");
      spawnSync("chown", ["-R", "65534:65534", join(root, "..")]);
      const env = { ...process.env, HOME: home, BATON_CONFIG_HOME: join(home, "baton"), XDG_CACHE_HOME: join(home, "cache") };
      const baton = (...args: string[]) => {
        const r = spawnSync(process.execPath, [CLI, ...args, "--root", root], { uid: 65534, gid: 65534, env, encoding: "utf8", cwd: root });
        expect(r.status, `baton ${args.join(" ")}: ${r.stderr}`).toBe(0);
        return r.stdout;
      };
      baton("init");
      baton("session", "start", "--flow", "task", "--id", "s1");
      spawnSync("chmod", ["000", join(root, "secret"), join(root, "notes.txt"), join(root, "root-owned.log")]);
      const cp = JSON.parse(baton("checkpoint", "--all", "--json"));
      expect(cp.checkpoint.files.map((f: { path: string }) => f.path)).toEqual(["app.js"]);
      expect(cp.skipped.map((s: { path: string }) => s.path).sort()).toEqual(["notes.txt", "root-owned.log", "secret"]);
      spawnSync("chmod", ["755", join(root, "secret")]);
      spawnSync("chmod", ["644", join(root, "notes.txt")]); // root-owned.log stays unreadable
      writeFileSync(join(root, "app.js"), "broken\n");
      const r = JSON.parse(baton("rollback", "--to", cp.checkpoint.id, "--json"));
      expect(readFileSync(join(root, "app.js"), "utf8")).toBe("app\n");
      expect(r.changes.map((c: { path: string }) => c.path)).toEqual(["app.js"]);
      expect(readFileSync(join(root, "secret/keys.txt"), "utf8"), "the checkpoint never looked into secret/").toBe("mine\n");
      expect(readFileSync(join(root, "notes.txt"), "utf8"), "nor read notes.txt").toBe("notes\n");
      expect(readFileSync(join(root, "root-owned.log"), "utf8")).toBe("a container's\n");
      // A file that came after the checkpoint, unreadable to this user: not the rollback's to
      // remove (its safety checkpoint could not keep it), and the rest is still rolled back.
      writeAt(root, "late.log", "root's\n");
      spawnSync("chmod", ["600", join(root, "late.log")]);
      // And a file the checkpoint holds that root took over since: not overwritten either.
      spawnSync("chown", ["0:0", join(root, "app.js")]);
      writeFileSync(join(root, "app.js"), "root's now\n");
      spawnSync("chmod", ["600", join(root, "app.js")]);
      const held = JSON.parse(baton("rollback", "--to", cp.checkpoint.id, "--json"));
      expect(held.changes.find((c: { path: string }) => c.path === "app.js")).toMatchObject({
        action: "kept",
        reason: expect.stringContaining("unreadable"),
      });
      expect(readFileSync(join(root, "app.js"), "utf8")).toBe("root's now\n");
      spawnSync("chown", ["65534:65534", join(root, "app.js")]);
      spawnSync("chmod", ["644", join(root, "app.js")]);
      writeFileSync(join(root, "app.js"), "broken again\n");
      const again = JSON.parse(baton("rollback", "--to", cp.checkpoint.id, "--json"));
      expect(readFileSync(join(root, "app.js"), "utf8")).toBe("app\n");
      expect(again.changes.find((c: { path: string }) => c.path === "late.log")).toMatchObject({
        action: "kept",
        reason: expect.stringContaining("unreadable"),
      });
      expect(readFileSync(join(root, "late.log"), "utf8")).toBe("root's\n");
    },
  );
});

describe("a rollback never changes what its safety checkpoint cannot store", () => {
  it("a file over maxFileBytes created after a tree checkpoint is kept, with a warning, and undo has nothing to lose", async () => {
    const { baton, root } = await tempBaton({ checkpoints: { maxFileBytes: 16 } });
    try {
      const { sessionId } = await baton.sessions.start({ flow: "task", id: "big" });
      writeAt(root, "a.txt", "v1");
      const t = await baton.checkpoints.create(sessionId, { all: true });
      writeAt(root, "big.bin", "x".repeat(64));
      writeAt(root, "a.txt", "v2");
      const r = await baton.checkpoints.rollback(sessionId, { to: t.checkpoint.id });
      expect(readFileSync(join(root, "big.bin"), "utf8"), "the large file was removed").toBe("x".repeat(64));
      expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("v1");
      const big = r.changes.find((c) => c.path === "big.bin");
      expect(big?.action).toBe("kept");
      expect(big?.reason).toContain("larger than 16 bytes");
      expect(r.warnings.join("\n")).toContain("big.bin");
    } finally {
      await baton.close();
    }
  });

  it("a FIFO or a folder where a checkpointed file was is kept, and the warnings say so (never a silent success)", async () => {
    const { baton, root } = await tempBaton();
    try {
      const { sessionId } = await baton.sessions.start({ flow: "task", id: "fifo" });
      writeAt(root, "pipe.txt", "v1");
      writeAt(root, "dir.txt", "v1");
      writeAt(root, "a.txt", "v1");
      const t = await baton.checkpoints.create(sessionId, { files: ["pipe.txt", "dir.txt", "a.txt"] });
      unlinkSync(join(root, "pipe.txt"));
      spawnSync("mkfifo", [join(root, "pipe.txt")]);
      unlinkSync(join(root, "dir.txt"));
      writeAt(root, "dir.txt/inner", "x");
      writeAt(root, "a.txt", "v2");
      const r = await baton.checkpoints.rollback(sessionId, { to: t.checkpoint.id });
      expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("v1");
      expect(lstatSync(join(root, "pipe.txt")).isFIFO()).toBe(true);
      for (const path of ["pipe.txt", "dir.txt"]) {
        expect(r.changes.find((c) => c.path === path)?.action, path).toBe("kept");
        expect(r.warnings.join("\n"), path).toContain(`${path}: `);
      }
    } finally {
      await baton.close();
    }
  });

  it("a file over maxFileBytes is not overwritten by an older version either", async () => {
    const { baton, root } = await tempBaton({ checkpoints: { maxFileBytes: 16 } });
    try {
      const { sessionId } = await baton.sessions.start({ flow: "task", id: "big2" });
      writeAt(root, "f.txt", "small");
      const t = await baton.checkpoints.create(sessionId, { files: ["f.txt"] });
      writeAt(root, "f.txt", "y".repeat(64));
      const r = await baton.checkpoints.rollback(sessionId, { to: t.checkpoint.id });
      expect(readFileSync(join(root, "f.txt"), "utf8")).toBe("y".repeat(64));
      expect(r.changes.find((c) => c.path === "f.txt")?.action).toBe("kept");
    } finally {
      await baton.close();
    }
  });

  it("a symbolic link where a checkpointed file was is kept (the safety checkpoint cannot store a link)", async () => {
    const { baton, root } = await tempBaton();
    try {
      const { sessionId } = await baton.sessions.start({ flow: "task", id: "link" });
      writeAt(root, "keep.txt", "k");
      const t = await baton.checkpoints.create(sessionId, { all: true });
      writeAt(root, "x.txt", "x");
      await baton.checkpoints.create(sessionId, { files: ["x.txt"] });
      unlinkSync(join(root, "x.txt"));
      symlinkSync("keep.txt", join(root, "x.txt"));
      const r = await baton.checkpoints.rollback(sessionId, { to: t.checkpoint.id });
      expect(lstatSync(join(root, "x.txt")).isSymbolicLink(), "the link was removed").toBe(true);
      expect(readlinkSync(join(root, "x.txt"))).toBe("keep.txt");
      const x = r.changes.find((c) => c.path === "x.txt");
      expect(x?.action).toBe("kept");
      expect(x?.reason).toContain("symbolic link");
      expect(r.warnings.join("\n")).toContain("x.txt");
    } finally {
      await baton.close();
    }
  });

  it("a directory holding a file the rollback must keep is not cleared for the file it replaced", async () => {
    const { baton, root } = await tempBaton({ checkpoints: { maxFileBytes: 16 } });
    try {
      const { sessionId } = await baton.sessions.start({ flow: "task", id: "dir" });
      writeAt(root, "a", "file a");
      const t = await baton.checkpoints.create(sessionId, { all: true });
      unlinkSync(join(root, "a"));
      writeAt(root, "a/small.txt", "s");
      writeAt(root, "a/big.bin", "z".repeat(64));
      const r = await baton.checkpoints.rollback(sessionId, { to: t.checkpoint.id });
      expect(readFileSync(join(root, "a/big.bin"), "utf8")).toBe("z".repeat(64));
      expect(r.changes.find((c) => c.path === "a")?.action).toBe("kept");
    } finally {
      await baton.close();
    }
  });
});

describe("a file found under another name (case-insensitive file systems)", () => {
  // Linux is case-sensitive: a hard link plays the file `Readme.md` finds on a case-insensitive
  // file system (README.md's inode), and the injected lookup says what that directory lists.
  it("is kept when its exact name is not in its directory listing", async () => {
    const { baton, root } = await tempBaton({ durability: "relaxed" });
    try {
      const { sessionId } = await baton.sessions.start({ flow: "task", id: "case" });
      writeAt(root, "README.md", "readme\n");
      const t = await baton.checkpoints.create(sessionId, { all: true });
      linkSync(join(root, "README.md"), join(root, "Readme.md"));
      const cps = new CheckpointService(servicesOf(baton).backend, root, baton.workspace.dir, { durable: false });
      const asked: string[] = [];
      const exactName = (r: string, rel: string, memo?: Map<string, ReadonlySet<string>>) => {
        asked.push(rel);
        return rel === "Readme.md" ? false : hasExactName(r, rel, memo);
      };
      const rb = new RollbackService(servicesOf(baton).backend, servicesOf(baton).journal, cps, { durable: false, exactName });
      const r = await rb.rollback(sessionId, { to: t.checkpoint.id });
      expect(existsSync(join(root, "Readme.md")), "the file found by the other name was unlinked").toBe(true);
      expect(r.changes.find((c) => c.path === "Readme.md")?.action).toBe("kept");
      expect(r.warnings.join("\n")).toContain("Readme.md");
      expect(readFileSync(join(root, "README.md"), "utf8")).toBe("readme\n");
      expect(asked).toContain("Readme.md");
    } finally {
      await baton.close();
    }
  });

  it("hasExactName reads the directory: the exact name is there, another spelling is not", () => {
    const root = tempDir("baton-exact-");
    writeAt(root, "sub/README.md", "r");
    const memo = new Map<string, ReadonlySet<string>>();
    expect(hasExactName(root, "sub/README.md", memo)).toBe(true);
    expect(hasExactName(root, "sub/Readme.md", memo)).toBe(false);
    expect(hasExactName(root, "gone/x", memo)).toBe(false);
    expect([...memo.keys()].sort()).toEqual(["gone", "sub"]);
  });
});

describe("the ignore rules and paths a rollback reads are reached without following links", () => {
  it("walkCovers does not read a .gitignore that is a symbolic link (the walk does not either)", () => {
    const root = tempDir("baton-covers-link-");
    const outside = tempDir("baton-covers-out-");
    writeFileSync(join(outside, "rules"), "*.log\n");
    symlinkSync(join(outside, "rules"), join(root, ".gitignore"));
    writeAt(root, "sub/keep.txt", "k");
    symlinkSync(join(outside, "rules"), join(root, "sub/.gitignore"));
    writeAt(root, "x.log", "l");
    writeAt(root, "sub/y.log", "l");
    const walked = walkTree(root).paths;
    expect(walked).toEqual(["sub/keep.txt", "sub/y.log", "x.log"]);
    const covers = walkCovers(root);
    expect(covers("x.log")).toBe(true);
    expect(covers("sub/y.log")).toBe(true);
    expect(covers("sub/gone.log")).toBe(true);
  });

  it("coversWith reads each directory's ignore file once, however many paths it is asked about", () => {
    const reads: string[] = [];
    const covers = coversWith({
      root: { exclude: "", batonignore: "", globalExclude: { prefix: "", text: "" }, infoExclude: { prefix: "", text: "" }, above: [] },
      gitignore: (dir) => {
        reads.push(dir);
        return dir === "a" ? "*.log\n" : undefined;
      },
    });
    for (let i = 0; i < 3; i++) for (const p of ["a/x.log", "a/y.txt", "a/b/z.log", "c/w.log", "top.log"]) covers(p);
    expect(covers("a/x.log")).toBe(false);
    expect(covers("a/b/z.log")).toBe(false);
    expect(covers("c/w.log")).toBe(true);
    expect(reads.sort()).toEqual(["", "a", "a/b", "c"]);
  });

  it("a path under a FIFO is unsafe_path, as without descriptor pinning, not absent", () => {
    const root = tempDir("baton-fifo-");
    const mk = spawnSync("mkfifo", [join(root, "pipe")]);
    expect(mk.status).toBe(0);
    let code: string | undefined;
    try {
      readCurrent(root, "pipe/x");
    } catch (e) {
      code = isBatonError(e) ? e.code : String(e);
    }
    expect(code).toBe("unsafe_path");
    writeAt(root, "file", "f");
    expect(readCurrent(root, "file/x")).toEqual({ kind: "absent" });
  });
});

describe("a file that changes between the plan and the safety checkpoint", () => {
  it("grown past maxFileBytes: nothing is restored, the rollback says to run it again", async () => {
    const { baton, root } = await tempBaton({ durability: "relaxed", checkpoints: { maxFileBytes: 16 } });
    try {
      const { sessionId } = await baton.sessions.start({ flow: "task", id: "race" });
      writeAt(root, "a.txt", "v1");
      const t = await baton.checkpoints.create(sessionId, { all: true });
      writeAt(root, "a.txt", "v2");
      writeAt(root, "new.txt", "small");
      class Racing extends CheckpointService {
        override safety(...args: Parameters<CheckpointService["safety"]>) {
          writeAt(root, "new.txt", "g".repeat(64)); // the agent writes on while the rollback plans
          return super.safety(...args);
        }
      }
      const cps = new Racing(servicesOf(baton).backend, root, baton.workspace.dir, { maxFileBytes: 16, durable: false });
      const rb = new RollbackService(servicesOf(baton).backend, servicesOf(baton).journal, cps, { durable: false });
      let code: string | undefined;
      try {
        await rb.rollback(sessionId, { to: t.checkpoint.id });
      } catch (e) {
        code = isBatonError(e) ? e.code : String(e);
      }
      expect(code).toBe("unsafe_path");
      expect(readFileSync(join(root, "new.txt"), "utf8")).toBe("g".repeat(64));
      expect(readFileSync(join(root, "a.txt"), "utf8"), "nothing was restored").toBe("v2");
    } finally {
      await baton.close();
    }
  });
});

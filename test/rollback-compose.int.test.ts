/**
 * Rollbacks compose: a rollback after a rollback must not bring back what the first one
 * removed. Found driving the real CLI as an agent's hooks do; the model-based test of every
 * sequence is test/rollback.model.test.ts.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { walkCovers, walkTree } from "../src/services/tree-scan.js";
import { cleanupDirs, cli, initWorkspace, tempBaton, tempDir, writeAt } from "./helpers.js";

afterAll(() => cleanupDirs());

describe("rollback after rollback (CLI)", () => {
  it("a second rollback keeps removed the file the first one removed", () => {
    const root = initWorkspace("baton-rb-compose-");
    const run = (...args: string[]) => {
      const r = cli([...args, "--json", "--root", root]);
      expect(r.code, `baton ${args.join(" ")}: ${r.stderr}`).toBe(0);
      return r.json();
    };
    run("session", "start", "--flow", "task", "--title", "t");
    writeFileSync(join(root, "a.txt"), "v1\n");
    run("checkpoint", "--files", "a.txt");
    writeFileSync(join(root, "a.txt"), "v2\n");
    run("checkpoint");
    writeFileSync(join(root, "new.txt"), "x\n");

    const first = run("rollback");
    expect(first.removed).toBe(1);
    expect(existsSync(join(root, "new.txt"))).toBe(false);
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("v2\n");

    const second = run("rollback");
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("v1\n");
    // new.txt did not exist when the whole-tree checkpoint was taken, nor at the targeted one before it.
    expect(existsSync(join(root, "new.txt")), "the second rollback re-created new.txt").toBe(false);
    const acted = second.changes.filter((c: { action: string }) => c.action !== "unchanged");
    expect(acted.map((c: { path: string; action: string }) => `${c.path}:${c.action}`)).toEqual(["a.txt:restore"]);

    // Undoing the second rollback puts back v2, still without new.txt; undoing the first brings new.txt back.
    run("rollback", "--to", second.safety);
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("v2\n");
    expect(existsSync(join(root, "new.txt"))).toBe(false);
    run("rollback", "--to", first.safety);
    expect(readFileSync(join(root, "new.txt"), "utf8")).toBe("x\n");
  });
});

describe("rollback over a whole-tree checkpoint (library)", () => {
  it("a file a tree walk ignores is restored from the checkpoint that names it, not removed", async () => {
    const { baton, root } = await tempBaton();
    try {
      const { sessionId } = await baton.sessions.start({ flow: "task", id: "ign" });
      writeAt(root, ".gitignore", "build/\n");
      const tree = await baton.checkpoints.create(sessionId, { all: true });
      writeAt(root, "build/out.js", "1");
      writeAt(root, "src/new.ts", "n");
      await baton.checkpoints.create(sessionId, { files: ["build/out.js", "src/new.ts"] });
      writeAt(root, "build/out.js", "2");
      writeAt(root, "src/new.ts", "n2");
      const r = await baton.checkpoints.rollback(sessionId, { to: tree.checkpoint.id });
      // The tree checkpoint never looked at build/ (ignored): the targeted one after it knows it.
      expect(readFileSync(join(root, "build/out.js"), "utf8")).toBe("1");
      // src/new.ts did not exist at the tree checkpoint: removed, though only a later checkpoint names it.
      expect(existsSync(join(root, "src/new.ts"))).toBe(false);
      const targeted = (await baton.checkpoints.list(sessionId))[1]?.id;
      expect(r.changes.map((c) => `${c.path}:${c.action}:${c.from}`).sort()).toEqual([
        `.gitignore:unchanged:${tree.checkpoint.id}`,
        `build/out.js:restore:${targeted}`,
        `src/new.ts:remove:${tree.checkpoint.id}`,
      ]);
    } finally {
      await baton.close();
    }
  });
});

describe("walkCovers agrees with the tree walk", () => {
  // A rollback asks walkCovers about files that are gone; it must answer as walkTree would if they were there.
  it("for random trees and ignore files, a file is covered exactly when the walk takes it", () => {
    const names = ["a.txt", "b.log", "keep.log", "build", "src", ".env", ".baton-restore-1-ab.tmp"];
    const rel = fc.array(fc.constantFrom(...names), { minLength: 1, maxLength: 3 }).map((p) => p.join("/"));
    const patterns = fc.constantFrom("*.log", "!keep.log", "build/", "/src", "src/*.txt", "a.txt", ".env", "b.log/", "**/build/a.txt");
    const ignoreFile = fc.array(patterns, { maxLength: 3 }).map((ps) => `${ps.join("\n")}\n`);
    fc.assert(
      fc.property(
        fc.uniqueArray(rel, { maxLength: 12 }),
        fc.dictionary(fc.constantFrom("", "src/", "build/", "src/build/"), ignoreFile, { maxKeys: 3 }),
        fc.array(patterns, { maxLength: 2 }),
        (files, gitignores, exclude) => {
          const root = tempDir("baton-covers-");
          try {
            // A path is a file only if no other path goes through it.
            const leaves = files.filter((f) => !files.some((g) => g.startsWith(`${f}/`)));
            for (const [dir, text] of Object.entries(gitignores)) {
              if (leaves.some((f) => f === dir.slice(0, -1) || (dir !== "" && `${dir}`.startsWith(`${f}/`)))) continue;
              writeAt(root, `${dir}.gitignore`, text);
            }
            for (const f of leaves) writeAt(root, f, "x");
            const walked = new Set(walkTree(root, { exclude }).paths);
            const covers = walkCovers(root, { exclude });
            for (const f of leaves)
              expect(covers(f), `${f} (walk: ${walked.has(f)}) ${JSON.stringify({ gitignores, exclude })}`).toBe(walked.has(f));
          } finally {
            rmSync(root, { recursive: true, force: true });
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

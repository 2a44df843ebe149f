/**
 * Rollbacks compose: a rollback after a rollback must not bring back what the first one
 * removed. Found driving the real CLI as an agent's hooks do; the model-based test of every
 * sequence is test/rollback.model.test.ts.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { walkCovers } from "../src/services/time-travel/tree-rules.js";
import { walkTree } from "../src/services/time-travel/tree-scan.js";
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

describe("one step back after a rollback and an edit (CLI)", () => {
  // issue 34 §4: `baton rollback` refused ("only 0 step(s) can be rolled back") after a
  // rollback to the first checkpoint and an edit, instead of undoing the edit.
  it("restores the checkpoint the rollback restored again, undoing the edit; with nothing changed since, it counts back from before it", () => {
    const root = initWorkspace("baton-rb-again-");
    const run = (...args: string[]) => cli([...args, "--json", "--root", root], { env: { BATON_DURABILITY: "relaxed" } });
    const ok = (...args: string[]) => {
      const r = run(...args);
      expect(r.code, `baton ${args.join(" ")}: ${r.stdout}${r.stderr}`).toBe(0);
      return r.json();
    };
    ok("session", "start", "--flow", "task", "--id", "s1");
    writeFileSync(join(root, "a.txt"), "v1\n");
    const first = ok("checkpoint").checkpointId;
    writeFileSync(join(root, "a.txt"), "v2\n");
    const second = ok("checkpoint", "--files", "a.txt").checkpointId;
    writeFileSync(join(root, "a.txt"), "v3\n");
    writeFileSync(join(root, "new.txt"), "x\n");

    expect(ok("rollback", "--to", first).target.id).toBe(first);
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("v1\n");
    writeFileSync(join(root, "a.txt"), "edited after the rollback\n");
    writeFileSync(join(root, "later.txt"), "y\n");

    // The preview and the rollback agree: the first checkpoint again, undoing just the edit.
    const preview = ok("rollback", "--dry-run");
    expect(preview.target.id).toBe(first);
    const again = ok("rollback");
    expect(again.target.id).toBe(first);
    expect(again.plan).toBe(preview.plan);
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("v1\n");
    expect(existsSync(join(root, "later.txt"))).toBe(false);
    expect(existsSync(join(root, "new.txt"))).toBe(false);
    // Undoing that brings the edit back.
    ok("rollback", "--to", again.safety);
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("edited after the rollback\n");

    // Nothing changed since a rollback to the second checkpoint: one step back is the first one
    // (an editor's undo), and from the first, with nothing changed, there is no step left.
    expect(ok("rollback", "--to", second).target.id).toBe(second);
    expect(ok("rollback").target.id).toBe(first);
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("v1\n");
    const none = run("rollback");
    expect(none.code).toBe(4);
    expect(none.json().error.code).toBe("checkpoint_not_found");
    // Two steps back after an edit: the first step is the restored checkpoint itself.
    writeFileSync(join(root, "a.txt"), "again\n");
    const two = run("rollback", "2");
    expect(two.json().error.message).toContain(`files changed since the last rollback, which restored ${first}`);
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("again\n");
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

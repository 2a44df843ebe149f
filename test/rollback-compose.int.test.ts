/**
 * Rollbacks compose: a rollback after a rollback must not bring back what the first one
 * removed. Found driving the real CLI as an agent's hooks do; the model-based test of every
 * sequence is test/rollback.model.test.ts.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupDirs, cli, initWorkspace } from "./helpers.js";

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
    expect(second.changes.map((c: { path: string; action: string }) => `${c.path}:${c.action}`)).toEqual(["a.txt:restore"]);

    // Undoing the second rollback puts back v2, still without new.txt; undoing the first brings new.txt back.
    run("rollback", "--to", second.safety);
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("v2\n");
    expect(existsSync(join(root, "new.txt"))).toBe(false);
    run("rollback", "--to", first.safety);
    expect(readFileSync(join(root, "new.txt"), "utf8")).toBe("x\n");
  });
});

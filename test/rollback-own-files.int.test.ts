/**
 * Baton's own files survive every rollback. The README's flow is: roll back, then learn a
 * lesson from it (`lessons add --from-rollback`); the next rollback to an older whole-tree
 * checkpoint removed LESSONS.md (the preview showed `+++ /dev/null`), and the lesson with it.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupDirs, cli, initWorkspace } from "./helpers.js";

afterAll(() => cleanupDirs());

describe("LESSONS.md and whole-tree rollbacks", () => {
  it("a rollback to a tree checkpoint taken before the lesson keeps the lesson", () => {
    const root = initWorkspace("own-files-", { "app.js": "one\n" });
    const run = (...args: string[]) => {
      const r = cli(["--root", root, "--json", ...args]);
      expect(r.code, `${args.join(" ")}: ${r.stdout}${r.stderr}`).toBe(0);
      return r.json();
    };
    run("session", "start", "--flow", "task", "--id", "t");
    const cp = run("checkpoint", "--all", "-s", "t");
    expect(cp.checkpoint.files.map((f: { path: string }) => f.path)).toEqual(["app.js"]);
    writeFileSync(join(root, "app.js"), "two\n");
    const lesson = run("lessons", "add", "Keep app.js on one line.", "--workspace");
    expect(existsSync(join(root, "LESSONS.md"))).toBe(true);

    const dry = run("rollback", "-s", "t", "--dry-run");
    expect(JSON.stringify(dry)).not.toContain("LESSONS.md");
    run("rollback", "-s", "t");
    expect(readFileSync(join(root, "app.js"), "utf8")).toBe("one\n");
    expect(readFileSync(join(root, "LESSONS.md"), "utf8")).toContain(lesson.lesson.id);
    expect(run("lessons", "list").lessons.map((l: { id: string }) => l.id)).toContain(lesson.lesson.id);

    // A lesson learned from that rollback, then another rollback: still there.
    const second = run("checkpoint", "--all", "-s", "t");
    expect(second.checkpoint.files.map((f: { path: string }) => f.path)).toEqual(["app.js"]);
    run("lessons", "add", "Roll back before retrying.", "--workspace");
    writeFileSync(join(root, "app.js"), "three\n");
    run("rollback", "-s", "t");
    expect(run("lessons", "list").lessons).toHaveLength(2);
  });
});

/**
 * A rollback never loses what it cannot give back: a whole-tree checkpoint decides a path only
 * by the ignore rules it was taken with, and a file the safety checkpoint could not store (too
 * large, a symbolic link, a name the directory does not hold exactly) is kept, with a warning.
 */
import { existsSync, readFileSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupDirs, tempBaton, writeAt } from "./helpers.js";

afterAll(() => cleanupDirs());

describe("a whole-tree checkpoint judges coverage by its own ignore rules", () => {
  it("a file ignored at T and listed by a later tree checkpoint comes back after the ignore rules changed", async () => {
    const { baton, root } = await tempBaton();
    try {
      const { sessionId } = await baton.startSession({ flow: "task", id: "ign1" });
      writeAt(root, ".gitignore", "*.log\n");
      writeAt(root, "debug.log", "trace\n");
      const t = await baton.checkpoint(sessionId, { all: true });
      writeAt(root, ".gitignore", "");
      const t2 = await baton.checkpoint(sessionId, { all: true });
      expect((await baton.getCheckpoint(t2.checkpoint.id)).files.map((f) => f.path)).toContain("debug.log");
      unlinkSync(join(root, "debug.log"));
      await baton.rollback(sessionId, { to: t.checkpoint.id });
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
      const { sessionId } = await baton.startSession({ flow: "task", id: "ign2" });
      writeAt(root, ".gitignore", ".env\n");
      writeAt(root, ".env", "SECRET=1\n");
      const t = await baton.checkpoint(sessionId, { all: true });
      writeAt(root, ".gitignore", "node_modules/\n");
      const r = await baton.rollback(sessionId, { to: t.checkpoint.id });
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
      const { sessionId } = await baton.startSession({ flow: "task", id: "ign3" });
      writeAt(root, "sub/.gitignore", "local.cfg\n");
      writeAt(root, "sub/local.cfg", "mine\n");
      const t = await baton.checkpoint(sessionId, { all: true });
      unlinkSync(join(root, "sub/.gitignore"));
      await baton.rollback(sessionId, { to: t.checkpoint.id });
      expect(readFileSync(join(root, "sub/.gitignore"), "utf8")).toBe("local.cfg\n");
      expect(readFileSync(join(root, "sub/local.cfg"), "utf8")).toBe("mine\n");
    } finally {
      await baton.close();
    }
  });
});

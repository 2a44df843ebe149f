/**
 * A step meant to precede something (the checkpoint before an agent's tool, a rollback from a
 * prompt) is checked against its deadline right before it commits: one that would commit later
 * changes nothing and fails with `deadline_exceeded`. The slow step is real: another process
 * holds the database's write lock (as a long write would) past the deadline, so the step has
 * read its files, prepared its writes and waits at its commit when the deadline passes.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openBaton } from "../src/index.js";
import { spawnFixture, waitExit } from "./child-process.js";
import { cleanupDirs, tempDir } from "./helpers.js";

afterAll(() => cleanupDirs());

/** Run `step` while another process holds the write lock for `ms`. */
async function withLockHeld<T>(root: string, ms: number, step: () => Promise<T>): Promise<T> {
  const holder = spawnFixture("write-lock-holder.mjs", [join(root, ".baton", "baton.db"), String(ms)]);
  try {
    await holder.waitForLine((l) => l === "locked", 15_000, "the write lock");
    return await step();
  } finally {
    await waitExit(holder, 15_000);
  }
}

async function workspace() {
  const root = tempDir("baton-deadline-");
  const b = await openBaton({ root });
  await b.sessions.start({ flow: "task", id: "s" });
  for (const f of ["a.txt", "b.txt"]) writeFileSync(join(root, f), "v1\n");
  return { root, b };
}

describe("a deadline checked right before the commit", () => {
  it("a checkpoint ready only after its deadline stores nothing", async () => {
    const { root, b } = await workspace();
    try {
      expect(await b.checkpoints.list("s")).toEqual([]); // loaded: the step starts at once
      // The deadline is ahead when the step starts, and passes while it waits at its commit.
      const step = () => b.checkpoints.create("s", { all: true, id: "cp-before-tool", deadline: Date.now() + 300 });
      await expect(withLockHeld(root, 1_500, step)).rejects.toMatchObject({ code: "deadline_exceeded" });
      expect(await b.checkpoints.list("s")).toEqual([]);
      // With time to spare, the same call is taken.
      expect((await b.checkpoints.create("s", { all: true, id: "cp-before-tool", deadline: Date.now() + 10_000 })).checkpoint.id).toBe(
        "cp-before-tool",
      );
    } finally {
      await b.close();
    }
  });

  it("a rollback ready to rename its files only after its deadline changes no file, journals nothing, keeps no safety checkpoint", async () => {
    const { root, b } = await workspace();
    try {
      await b.checkpoints.create("s", { files: ["a.txt", "b.txt"] });
      for (const f of ["a.txt", "b.txt"]) writeFileSync(join(root, f), "v2\n");
      const before = (await b.events.list("s")).events.length;
      const step = () => b.checkpoints.rollback("s", { key: "req-1", deadline: Date.now() + 300 });
      await expect(withLockHeld(root, 1_500, step)).rejects.toMatchObject({
        code: "deadline_exceeded",
      });
      for (const f of ["a.txt", "b.txt"]) expect(readFileSync(join(root, f), "utf8"), f).toBe("v2\n");
      expect(
        readdirSync(root).filter((n) => n.startsWith(".baton-restore-")),
        "its prepared files are gone",
      ).toEqual([]);
      expect((await b.events.list("s")).events).toHaveLength(before);
      expect((await b.checkpoints.list("s")).map((c) => c.kind)).toEqual(["targeted"]);
      // The same request with time to spare rolls back (the cancelled attempt left no claim).
      const r = await b.checkpoints.rollback("s", { key: "req-1", deadline: Date.now() + 10_000 });
      expect(r.repeated).toBeUndefined();
      for (const f of ["a.txt", "b.txt"]) expect(readFileSync(join(root, f), "utf8"), f).toBe("v1\n");
    } finally {
      await b.close();
    }
  });
});

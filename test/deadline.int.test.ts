/**
 * A step meant to precede something (the checkpoint before an agent's tool, a rollback from a
 * prompt) is checked against its deadline right before it commits: one that would commit later
 * changes nothing and fails with `deadline_exceeded`. The slow step is real: another process
 * holds the database's write lock (as a long write would) past the deadline, so the step has
 * read its files, prepared its writes and waits at its commit when the deadline passes.
 *
 * Through the library, then through real `baton hook` processes, answered by a real server and
 * in the hook's own process: the tool is let through and the user is told.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openBaton } from "../src/index.js";
import { spawnFixture, waitExit } from "./child-process.js";
import { tempDir } from "./helpers.js";
import { checkpoints, events, failOnStrayServers, hook, hookAsync, hookLog, read, type Step, sleep, workspace } from "./hook-helpers.js";
import { APP, FILES } from "./hook-scenarios.js";
import { serve } from "./server-helpers.js";

failOnStrayServers();

const START: Step = { agent: "claude", fixture: "session-start-startup" };
const PRE_EDIT: Step = { agent: "claude", fixture: "pre-edit" };
const UNDO: Step = { agent: "claude", fixture: "user-prompt-undo" };
const temps = (dir: string) => readdirSync(dir).filter((n) => n.startsWith(".baton-restore-"));

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

/** A workspace opened through the library, with session `s` and two files. */
async function opened() {
  const root = tempDir("baton-deadline-");
  const b = await openBaton({ root });
  await b.sessions.start({ flow: "task", id: "s" });
  for (const f of ["a.txt", "b.txt"]) writeFileSync(join(root, f), "v1\n");
  return { root, b };
}

describe("a deadline checked right before the commit", () => {
  it("a checkpoint ready only after its deadline stores nothing", async () => {
    const { root, b } = await opened();
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
    const { root, b } = await opened();
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

describe("a step meant to precede the tool never lands after the hook's deadline", () => {
  // The agent's timeout as 2 s: the deadline is 1.5 s after the hook starts. The database's
  // write lock is held until 2.5 s: the step is ready to commit only after its deadline.
  const SHORT = { BATON_HOOK_TIMEOUT_MS: "2000" };

  for (const mode of ["server", "process"] as const) {
    it(`the checkpoint before a shell command is cancelled, and the user is told (${mode})`, async () => {
      const root = workspace(FILES);
      const s = mode === "server" ? await serve(root) : undefined;
      const env = { BATON_HOOK_SERVER: mode === "server" ? "use" : "off", ...SHORT };
      try {
        hook(root, START, env);
        const r = await withLockHeld(root, 2_500, () => hookAsync(root, { agent: "claude", fixture: "pre-bash" }, env));
        expect([r.code, r.via], r.stderr).toEqual([0, mode]);
        const out = JSON.parse(r.stdout);
        expect(out.systemMessage).toMatch(/^Baton cancelled the checkpoint before Bash: .*cannot be rolled back/);
        expect(out.hookSpecificOutput, "the tool is let through").toBeUndefined();
        await sleep(1_000);
        expect(checkpoints(root), "no checkpoint, not even later").toEqual([]);
        expect(hookLog(root).map((l) => l.code)).toEqual(["deadline_exceeded"]);
      } finally {
        await s?.stop();
      }
    });

    it(`a rollback from the prompt is cancelled before any file changes (${mode})`, async () => {
      const root = workspace(FILES);
      const s = mode === "server" ? await serve(root) : undefined;
      const env = { BATON_HOOK_SERVER: mode === "server" ? "use" : "off", ...SHORT };
      try {
        hook(root, START, env);
        hook(root, PRE_EDIT, env);
        writeFileSync(join(root, "src/app.ts"), "edited\n");
        const r = await withLockHeld(root, 2_500, () => hookAsync(root, UNDO, env));
        expect([r.code, r.via], r.stderr).toEqual([0, mode]);
        expect(JSON.parse(r.stdout).systemMessage).toBe(
          "Baton cancelled the rollback: it could not be done within the hook's time limit, and nothing was changed. Ask again.",
        );
        await sleep(1_000);
        expect(read(root, "src/app.ts"), "the file is as the agent left it").toBe("edited\n");
        expect(events(root, "rollback:started")).toEqual([]);
        expect(
          checkpoints(root).map((c) => c.kind),
          "no safety checkpoint",
        ).toEqual(["targeted"]);
        expect(temps(join(root, "src")), "no prepared file left beside its target").toEqual([]);
        // Asked again with time to spare, it rolls back.
        expect(JSON.parse(hook(root, UNDO, { ...env, BATON_HOOK_TIMEOUT_MS: "" }).stdout).systemMessage).toContain("Baton rolled back to");
        expect(read(root, "src/app.ts")).toBe(APP);
      } finally {
        await s?.stop();
      }
    });
  }
});

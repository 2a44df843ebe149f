/**
 * server/hook-child.ts: a hook the server cannot answer itself is answered by a `baton hook`
 * process, and the server's shutdown waits for such answers (childAnswersDueBy) up to their
 * deadlines. Here `baton` is a stand-in script on PATH (the test runner is not baton).
 */
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { answerInChild, childAnswersDueBy } from "../src/server/hook-child.js";
import { cleanupDirs, tempDir } from "./helpers.js";

afterEach(cleanupDirs);

function fakeBaton(script: string): string {
  const bin = tempDir();
  const file = join(bin, "baton");
  writeFileSync(file, `#!/bin/sh\n${script}\n`);
  chmodSync(file, 0o755);
  return bin;
}

describe("answers made by a hook's own process", () => {
  it("a process that cannot start is a BatonError, also when Node throws rather than reports it", async () => {
    const bin = fakeBaton("cat > /dev/null; echo '{}'");
    const notADir = join(bin, "baton"); // a file: spawn throws ENOTDIR for it as a cwd
    for (const cwd of [notADir, join(bin, "gone")]) {
      const answer = answerInChild({ agent: "claude", native: "PreToolUse", payload: "{}", cwd, deadline: Date.now() + 20_000 });
      await expect(answer, cwd).rejects.toMatchObject({ code: "internal", message: expect.stringContaining("could not start") });
    }
    expect(childAnswersDueBy()).toBeUndefined();
  });

  it("are counted while they run, with their deadline, and no longer once answered", async () => {
    const bin = fakeBaton('cat > /dev/null; sleep 1; printf \'{"answered":"%s"}\' "$3"');
    const path = process.env.PATH;
    process.env.PATH = `${bin}:${path}`;
    try {
      expect(childAnswersDueBy()).toBeUndefined();
      const deadline = Date.now() + 20_000;
      const answer = answerInChild({ agent: "claude", native: "PreToolUse", payload: "{}", cwd: bin, deadline });
      const sooner = answerInChild({ agent: "claude", native: "PostToolUse", payload: "{}", cwd: bin, deadline: deadline - 5_000 });
      expect(childAnswersDueBy()).toBe(deadline);
      expect(await sooner).toBe('{"answered":"PostToolUse"}');
      expect(await answer).toBe('{"answered":"PreToolUse"}');
      expect(childAnswersDueBy()).toBeUndefined();
    } finally {
      process.env.PATH = path;
    }
  });

  it("a child past its deadline is killed and the answer is deadline_exceeded; nothing stays counted", async () => {
    const bin = fakeBaton("sleep 30");
    const path = process.env.PATH;
    process.env.PATH = `${bin}:${path}`;
    try {
      const late = answerInChild({ agent: "claude", native: "PreToolUse", payload: "{}", cwd: bin, deadline: Date.now() + 300 });
      await expect(late).rejects.toMatchObject({ code: "deadline_exceeded" });
      expect(childAnswersDueBy()).toBeUndefined();
    } finally {
      process.env.PATH = path;
    }
  });
});

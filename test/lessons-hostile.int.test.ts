/**
 * LESSONS.md as a repository may ship it: a symbolic link (to a private file, to /dev/zero), a
 * FIFO. Real `baton` processes on temp workspaces. Lessons are read and written only in a regular
 * file: nothing hangs, nothing outside the workspace is read or copied into it, and an agent's
 * hooks still answer with everything else.
 */

import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupDirs, cli, tempDir } from "./helpers.js";
import { hookLog, payload, workspace } from "./hook-helpers.js";

afterAll(() => cleanupDirs());

const run = (root: string, args: string[]) => cli([...args, "--json", "--root", root]);

describe("a LESSONS.md that is not a regular file", () => {
  it("is refused as unsafe_path by every lessons command, and nothing is read through it or copied into the workspace", () => {
    const root = workspace();
    expect(run(root, ["session", "start", "--flow", "task", "--title", "T"]).code).toBe(0);
    const secret = join(tempDir("baton-private-"), "id_key");
    writeFileSync(secret, "PRIVATE-KEY-MATERIAL\n");
    const cases: [string, () => void][] = [
      ["a link to a private file", () => symlinkSync(secret, join(root, "LESSONS.md"))],
      ["a link to /dev/zero", () => symlinkSync("/dev/zero", join(root, "LESSONS.md"))],
      ["a FIFO", () => spawnSync("mkfifo", [join(root, "LESSONS.md")])],
      ["a folder", () => mkdirSync(join(root, "LESSONS.md"))],
    ];
    for (const [what, make] of cases) {
      spawnSync("rm", ["-rf", join(root, "LESSONS.md")]);
      make();
      for (const args of [
        ["lessons", "list"],
        ["lessons", "search", "login"],
        ["lessons", "add", "Check expiry first.", "--workspace"],
      ]) {
        const r = run(root, args);
        expect(r.code, `${what}: ${args.join(" ")}: ${r.stderr}`).toBe(2);
        expect(r.json().error.code, what).toBe("unsafe_path");
        expect(r.json().error.message).toContain("lessons are read and written only in a regular file");
      }
    }
    // doctor says what is wrong and what to do, rather than that its check could not run.
    const doctor = run(root, ["doctor"]).json();
    expect(JSON.stringify(doctor.findings)).toContain("lessons_unreadable");
    // The link to the private file is where it was, and its text went nowhere.
    spawnSync("rm", ["-rf", join(root, "LESSONS.md")]);
    symlinkSync(secret, join(root, "LESSONS.md"));
    expect(run(root, ["lessons", "add", "Check expiry first.", "--workspace"]).code).toBe(2);
    expect(readlinkSync(join(root, "LESSONS.md"))).toBe(secret);
    expect(readFileSync(secret, "utf8")).toBe("PRIVATE-KEY-MATERIAL\n");
  });

  it("leaves an agent's hooks their answer: the session's context without lessons, the problem logged", () => {
    const root = workspace();
    symlinkSync("/dev/zero", join(root, "LESSONS.md"));
    for (const fixture of ["session-start-startup", "user-prompt"]) {
      const text = payload("claude", fixture, { cwd: root, session: "agent-1", call: "c1" });
      const r = spawnSync(
        process.execPath,
        [join(__dirname, "..", "bin", "baton.cjs"), "hook", "claude", JSON.parse(text).hook_event_name],
        {
          cwd: root,
          input: text,
          encoding: "utf8",
          env: { ...process.env, BATON_HOOK_SERVER: "off" },
          timeout: 30_000,
        },
      );
      expect(r.status, `${fixture}: ${r.stderr}`).toBe(0);
      if (fixture === "session-start-startup") expect(JSON.parse(r.stdout).hookSpecificOutput.additionalContext).toContain("Baton");
    }
    expect(hookLog(root).map((l: { code?: string; error?: { code?: string } }) => l.code ?? l.error?.code)).toContain("unsafe_path");
  });

  it("lessons add refuses a line break in a tool, path or fingerprint: it would write settings of its own into LESSONS.md", () => {
    const root = workspace();
    expect(run(root, ["session", "start", "--flow", "task", "--title", "T"]).code).toBe(0);
    for (const flag of ["--tool", "--path", "--fingerprint", "--from-rollback"]) {
      const r = run(root, ["lessons", "add", "Check expiry first.", flag, "Bash\n- pinned: yes\n- scope: workspace"]);
      expect([r.code, r.json().error.code], flag).toEqual([2, "bad_input"]);
    }
    // Date.parse takes a comment in parentheses, line breaks and all: only ISO-8601 dates are.
    const expires = run(root, ["lessons", "add", "Check expiry first.", "--expires", "2026-09-01 (\n- pinned: yes\n)"]);
    expect([expires.code, expires.json().error.code]).toEqual([2, "bad_input"]);
    expect(run(root, ["lessons", "add", "Check expiry first.", "--expires", "2099-09-01", "--from-rollback", "rb-1a2b3c"]).code).toBe(0);
    expect(
      run(root, ["lessons", "list"])
        .json()
        .lessons.map((l: { pinned: boolean }) => l.pinned),
    ).toEqual([false]);
  });
});

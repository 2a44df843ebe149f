/**
 * Status verifies recorded files with as few reads as it can: a record that carries size and
 * modification time, taken clearly after that time, is trusted without reading the file again;
 * a racy record (taken within the same instant as the write) is always re-hashed.
 */
import { mkdirSync, renameSync, statSync, symlinkSync, unlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { sha256 } from "../src/core/canonical.js";
import { isBatonError, openBaton } from "../src/index.js";
import { cleanupDirs, tempDir } from "./helpers.js";

afterAll(() => cleanupDirs());

async function recorded(afterWriteMs: number) {
  const root = tempDir("baton-verify-");
  const file = join(root, "a.ts");
  writeFileSync(file, "one\n");
  // A whole second, so putting it back later restores it exactly.
  const mtime = new Date(Math.floor(Date.now() / 1000) * 1000);
  utimesSync(file, mtime, mtime);
  expect(statSync(file).mtimeMs).toBe(mtime.getTime());
  // The record is taken `afterWriteMs` after the write, by the session's clock.
  let clock = mtime.getTime() + afterWriteMs;
  const baton = await openBaton({ root, now: () => new Date(clock) });
  await baton.sessions.start({ flow: "task", id: "s1", title: "t" });
  await baton.events.append("s1", { type: "start" });
  await baton.facets.recordResumeContext("s1", { files: ["a.ts"] });
  clock += 60_000;
  // Same size, new content, the recorded modification time put back.
  writeFileSync(file, "two\n");
  utimesSync(file, mtime, mtime);
  const r = await baton.sessions.resume("s1");
  await baton.close();
  return r;
}

describe("recorded files: size and modification time", () => {
  it("a record taken clearly after the write is trusted: same size and time are not read again", async () => {
    const r = await recorded(5_000);
    expect(r.verification.files).toEqual([{ path: "a.ts", state: "unchanged", review: false }]);
  });

  it("a racy record (taken in the same instant as the write) is re-hashed, so the change is seen", async () => {
    const r = await recorded(0);
    expect(r.verification.files).toEqual([{ path: "a.ts", state: "changed", review: true }]);
    expect(r.nextAction.action).toBe("review_changed_files");
  });

  it("records only the workspace's own regular files: never through a link, never Baton's or git's data", async () => {
    const root = tempDir("baton-verify-");
    mkdirSync(join(root, "src"));
    writeFileSync(join(root, "src", "ok.ts"), "ok\n");
    symlinkSync("/etc/passwd", join(root, "passwd"));
    symlinkSync("/etc", join(root, "etc"));
    const baton = await openBaton({ root });
    try {
      await baton.sessions.start({ flow: "task", id: "s1", title: "t" });
      const refused = async (path: string) => {
        try {
          await baton.facets.recordResumeContext("s1", { files: ["src/ok.ts", path] });
        } catch (err) {
          if (!isBatonError(err)) throw err;
          return `${err.code}: ${err.message}`;
        }
        return "recorded";
      };
      expect(await refused("passwd")).toMatch(/^bad_input: passwd is a symbolic link/);
      expect(await refused("etc/passwd")).toMatch(/^unsafe_path: .*passes through the symbolic link etc/);
      expect(await refused(".baton/baton.db")).toMatch(/^bad_input: .*inside \.baton/);
      expect(await refused(".git/config")).toMatch(/^bad_input: .*inside a \.git directory/);
      expect(await refused("src")).toMatch(/^bad_input: src is a directory/);
      // Nothing was recorded by a refused call, not even its good path.
      expect((await baton.sessions.resume("s1")).verification.files).toEqual([]);
      expect(await refused("src/new.ts"), "a file not there yet is recorded as such").toBe("recorded");
    } finally {
      await baton.close();
    }
  });

  it("status reads recorded files only as the workspace's own: a raw event naming /etc/passwd is refused, a file turned link is not followed", async () => {
    const root = tempDir("baton-verify-");
    const outside = tempDir("baton-outside-");
    mkdirSync(join(root, "src"));
    mkdirSync(join(root, "lib"));
    writeFileSync(join(root, "src", "a.ts"), "a\n");
    writeFileSync(join(root, "lib", "b.ts"), "b\n");
    writeFileSync(join(outside, "b.ts"), "b\n");
    const baton = await openBaton({ root });
    try {
      await baton.sessions.start({ flow: "task", id: "s1", title: "t" });
      for (const path of ["/etc/passwd", "../outside.txt", ".baton/baton.db"]) {
        const err = await baton.events.append("s1", { type: "resume:updated", data: { filesModified: [{ path, hash: "x" }] } }).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(isBatonError(err) && err.code, path).toBe("bad_input");
      }
      await baton.facets.recordResumeContext("s1", { files: ["src/a.ts", "lib/b.ts"] });
      // Replaced since (a checkout, an agent): a link to a file outside, and a folder linked to one
      // outside that holds a file of the same name and content.
      unlinkSync(join(root, "src", "a.ts"));
      symlinkSync("/etc/passwd", join(root, "src", "a.ts"));
      renameSync(join(root, "lib"), join(root, "lib-moved"));
      symlinkSync(outside, join(root, "lib"));
      const r = await baton.sessions.resume("s1");
      expect(r.verification.files).toEqual([
        { path: "src/a.ts", state: "unreadable", review: true },
        { path: "lib/b.ts", state: "unreadable", review: true },
      ]);
      expect(r.diagnostics.filter((d) => d.code === "file_unreadable").map((d) => d.message)).toEqual([
        "recorded file src/a.ts cannot be checked: a symbolic link to outside the workspace",
        "recorded file lib/b.ts cannot be checked: a symbolic link to outside the workspace",
      ]);
      // A link that stays inside the workspace (CLAUDE.md -> AGENTS.md) is read as the file it names.
      writeFileSync(join(root, "AGENTS.md"), "rules\n");
      symlinkSync("AGENTS.md", join(root, "CLAUDE.md"));
      await baton.facets.recordResumeContext("s1", { files: ["AGENTS.md"] });
      // Recorded by hand as the agent names it (files add refuses a link itself).
      await baton.events.append("s1", {
        type: "resume:updated",
        data: { filesModified: [{ path: "CLAUDE.md", hash: sha256("rules\n") }] },
      });
      const inside = await baton.sessions.resume("s1");
      expect(inside.verification.files.filter((f) => f.path.endsWith(".md"))).toEqual([
        { path: "AGENTS.md", state: "unchanged", review: false },
        { path: "CLAUDE.md", state: "unchanged", review: false },
      ]);
    } finally {
      await baton.close();
    }
  });
});

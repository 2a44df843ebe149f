/**
 * Status verifies recorded files with as few reads as it can: a record that carries size and
 * modification time, taken clearly after that time, is trusted without reading the file again;
 * a racy record (taken within the same instant as the write) is always re-hashed.
 */
import { statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openBaton } from "../src/index.js";
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
});

/**
 * Reading a file a repository may have put in the way (settings, git's files, ignore files):
 * never blocking on a FIFO, never reading past the bound, whatever the file's size says.
 */
import { spawnSync } from "node:child_process";
import { symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { NotASettingsFile, readSettingsBytes, readSettingsText } from "../src/platform/settings-text.js";
import { cleanupDirs, tempDir } from "./helpers.js";

afterAll(() => cleanupDirs());

describe("readSettingsBytes", () => {
  it("reads a file, none when absent, follows a link unless told not to", () => {
    const dir = tempDir();
    writeFileSync(join(dir, "a.json"), "{}");
    symlinkSync(join(dir, "a.json"), join(dir, "link.json"));
    expect(readSettingsText(join(dir, "a.json"))).toBe("{}");
    expect(readSettingsText(join(dir, "missing.json"))).toBeUndefined();
    expect(readSettingsText(join(dir, "link.json"))).toBe("{}");
    expect(() => readSettingsText(join(dir, "link.json"), 100, { follow: false })).toThrow(/ELOOP|symbolic/i);
  });

  it("refuses a FIFO without waiting on it, and a file over the bound", () => {
    const dir = tempDir();
    expect(spawnSync("mkfifo", [join(dir, "fifo")]).status).toBe(0);
    expect(() => readSettingsBytes(join(dir, "fifo"))).toThrow(NotASettingsFile);
    writeFileSync(join(dir, "big"), Buffer.alloc(5000, 0x61));
    expect(() => readSettingsBytes(join(dir, "big"), 4096)).toThrow(/over the 4096-byte limit/);
    expect(readSettingsBytes(join(dir, "big"), 5000)?.length).toBe(5000);
  });

  it("stops at the bound in a file whose size says 0 and which never ends (/proc), and reads a short one whole", () => {
    // Regular files of size 0: /proc/kallsyms runs to megabytes; /proc/self/pagemap has an entry
    // for every page of the address space (read to its end, it would not finish).
    expect(() => readSettingsBytes("/proc/kallsyms", 64 * 1024)).toThrow(/over the 65536-byte limit/);
    expect(() => readSettingsBytes("/proc/self/pagemap", 64 * 1024)).toThrow();
    const status = readSettingsText("/proc/self/status", 64 * 1024);
    expect(status).toMatch(/^Name:/);
    expect(status).toContain("\nPid:");
  });
});

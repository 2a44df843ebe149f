/** The one writer of whole files outside the workspace tree: whole or nothing, typed errors, no temp left behind. */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BatonError } from "../src/errors.js";
import { writeFileWhole } from "../src/platform/whole-file.js";
import { cleanupDirs, tempDir } from "./helpers.js";

afterEach(cleanupDirs);

describe("writeFileWhole", () => {
  it("replaces a file whole, private by default or with the mode asked for, and leaves no temp file", () => {
    const dir = tempDir();
    const file = join(dir, "a.json");
    writeFileSync(file, "old");
    expect(writeFileWhole(file, "new\n")).toBe(true);
    expect(readFileSync(file, "utf8")).toBe("new\n");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(writeFileWhole(file, Buffer.from("x"), { mode: 0o644, durable: false })).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o644);
    expect(readdirSync(dir)).toEqual(["a.json"]);
  });

  it("exclusive: refuses an existing file, changing nothing, and claims a missing one", () => {
    const dir = tempDir();
    const file = join(dir, "server.json");
    writeFileSync(file, "theirs");
    expect(writeFileWhole(file, "mine", { exclusive: true })).toBe(false);
    expect(readFileSync(file, "utf8")).toBe("theirs");
    expect(readdirSync(dir)).toEqual(["server.json"]);
    const other = join(dir, "key");
    expect(writeFileWhole(other, "mine", { exclusive: true })).toBe(true);
    expect(readFileSync(other, "utf8")).toBe("mine");
    expect(readdirSync(dir).sort()).toEqual(["key", "server.json"]);
  });

  it("a missing directory, or a directory in the file's place, is a typed error, and the target is untouched", () => {
    const dir = tempDir();
    let err: unknown;
    try {
      writeFileWhole(join(dir, "no", "such", "f"), "x");
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(BatonError);
    expect((err as BatonError).code).toBe("io_error");
    expect((err as BatonError).message).toMatch(/cannot write .*no\/such\/f/);

    // A directory where the file should be: the rename fails, the directory and its content stay, no temp is left.
    const target = join(dir, "target");
    mkdirSync(target);
    writeFileSync(join(target, "inside"), "kept");
    expect(() => writeFileWhole(target, "x")).toThrowError(expect.objectContaining({ code: "io_error" }));
    expect(readFileSync(join(target, "inside"), "utf8")).toBe("kept");
    expect(readdirSync(dir).sort()).toEqual(["target"]);
  });
});

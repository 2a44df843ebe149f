/** The one writer of whole files outside the workspace tree: whole or nothing, typed errors, no temp left behind. */
import { spawn, spawnSync } from "node:child_process";
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

  it("sweep: removes the file's temp files whose writer is gone, and only those", async () => {
    const dir = tempDir();
    const file = join(dir, "server.json");
    // A writer that is gone (it exited) and one that is alive (between its write and its rename).
    const gone = spawnSync(process.execPath, ["-e", "console.log(process.pid)"], { encoding: "utf8" });
    const deadPid = Number(gone.stdout.trim());
    const live = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
    try {
      const livePid = live.pid as number;
      const leftovers = [
        `server.json.${deadPid}-0123456789ab.tmp`, // gone: removed
        `server.json.${livePid}-0123456789ab.tmp`, // alive: kept
        `server.json.${process.pid}-0123456789ab.tmp`, // this process: kept
        `server.key.${deadPid}-0123456789ab.tmp`, // another file's: kept
        `server.json.${deadPid}-notahexname.tmp`, // not a temp file's name: kept
      ];
      for (const f of leftovers) writeFileSync(join(dir, f), "half");
      expect(writeFileWhole(file, "{}\n", { exclusive: true })).toBe(true); // without sweep: nothing removed
      expect(readdirSync(dir).length).toBe(leftovers.length + 1);
      expect(writeFileWhole(file, "{}\n", { sweep: true })).toBe(true);
      expect(readdirSync(dir).sort()).toEqual(["server.json", ...leftovers.slice(1)].sort());
    } finally {
      live.kill("SIGKILL");
    }
  });
});

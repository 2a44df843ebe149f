/**
 * An install where better-sqlite3's native driver was never built, as npm 12 leaves one when
 * the dependency's install script is not approved: every command says what to run, with a
 * storage error, not an internal one.
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupDirs, REPO, tempDir } from "./helpers.js";

afterAll(() => cleanupDirs());

describe("better-sqlite3 without its native driver", () => {
  it("is storage_unavailable (exit 5) with the commands that build it", () => {
    const install = tempDir();
    for (const d of ["bin", "dist"]) cpSync(join(REPO, d), join(install, d), { recursive: true });
    cpSync(join(REPO, "package.json"), join(install, "package.json"));
    // Every installed package as it is, but better-sqlite3 as npm leaves it with its script skipped.
    mkdirSync(join(install, "node_modules"));
    for (const e of readdirSync(join(REPO, "node_modules")))
      if (e !== "better-sqlite3" && e !== ".bin") symlinkSync(join(REPO, "node_modules", e), join(install, "node_modules", e));
    cpSync(join(REPO, "node_modules", "better-sqlite3"), join(install, "node_modules", "better-sqlite3"), { recursive: true });
    rmSync(join(install, "node_modules", "better-sqlite3", "build"), { recursive: true, force: true });

    const root = tempDir();
    mkdirSync(join(root, ".baton"));
    const r = spawnSync(process.execPath, [join(install, "bin", "baton.cjs"), "status", "--json", "--root", root], {
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(r.status, r.stderr).toBe(5);
    const { error } = JSON.parse(r.stdout);
    expect(error.code).toBe("storage_unavailable");
    expect(error.message).toMatch(/native driver is not built/);
    expect(error.message).toMatch(/npm rebuild better-sqlite3/);
    expect(error.message).toMatch(/--allow-scripts=better-sqlite3/);
  });
});

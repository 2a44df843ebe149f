/**
 * The CLI's V8 code cache (bin/baton.cjs) lives beside the bundle, or, when the install is not
 * writable by the user (a global install by root), in the user's cache directory: every process
 * of a hook would otherwise compile the bundle again.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, cpSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupDirs, REPO, tempDir } from "./helpers.js";

afterAll(() => cleanupDirs());

describe("the CLI's code cache", () => {
  it.skipIf(process.getuid?.() !== 0)(
    "goes to the user's cache directory when the install is read-only for that user (needs root to act as another user)",
    () => {
      // An install owned by root, as `sudo npm install --global` leaves it.
      const install = tempDir();
      chmodSync(install, 0o755);
      cpSync(join(REPO, "bin"), join(install, "bin"), { recursive: true });
      mkdirSync(join(install, "dist"));
      for (const f of ["cli.cjs", "cli-full.cjs"]) cpSync(join(REPO, "dist", f), join(install, "dist", f));
      cpSync(join(REPO, "package.json"), join(install, "package.json"));
      const cache = tempDir();
      chmodSync(cache, 0o777);
      const run = () =>
        spawnSync(process.execPath, [join(install, "bin", "baton.cjs"), "--version"], {
          uid: 65534,
          gid: 65534,
          cwd: "/",
          encoding: "utf8",
          env: { PATH: process.env.PATH ?? "", XDG_CACHE_HOME: cache, HOME: cache },
        });
      const first = run();
      expect(first.status, first.stderr).toBe(0);
      expect(readdirSync(join(install, "dist")).filter((f) => f.endsWith(".v8cache"))).toEqual([]);
      const dir = join(cache, "baton", "v8");
      const file = readdirSync(dir).find(
        (f) => f.startsWith(encodeURIComponent(join(install, "dist", "cli.cjs"))) && f.endsWith(".v8cache"),
      );
      expect(file).toBeDefined();
      const written = statSync(join(dir, file as string)).mtimeMs;
      // And it is used: the next run reads it, V8 accepts it, and nothing is written again.
      expect(run().status).toBe(0);
      expect(statSync(join(dir, file as string)).mtimeMs).toBe(written);
    },
  );
});

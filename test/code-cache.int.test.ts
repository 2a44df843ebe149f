/**
 * The CLI's V8 code cache (bin/baton.cjs) lives beside the bundle, or, when the install is not
 * writable by the user (a global install by root), in the user's cache directory: every process
 * of a hook would otherwise compile the bundle again.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, cpSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupDirs, initWorkspace, REPO, tempDir } from "./helpers.js";

afterAll(() => cleanupDirs());

describe("the CLI's code cache", () => {
  it("dist/cli.cjs keeps a cache for each of status, resume and a hook answered in its own process, each used as written", () => {
    // An install without caches, as npm installs the package.
    const install = tempDir();
    cpSync(join(REPO, "bin"), join(install, "bin"), { recursive: true });
    cpSync(join(REPO, "dist"), join(install, "dist"), { recursive: true, filter: (f) => !f.endsWith(".v8cache") });
    cpSync(join(REPO, "package.json"), join(install, "package.json"));
    symlinkSync(join(REPO, "node_modules"), join(install, "node_modules"));
    const root = initWorkspace("baton-cache-ws-");
    const baton = (args: string[], o: { input?: string; cwd?: string; code?: number } = {}) => {
      const r = spawnSync(process.execPath, [join(install, "bin", "baton.cjs"), ...args], {
        cwd: o.cwd ?? root,
        input: o.input ?? "",
        encoding: "utf8",
        env: { ...process.env, BATON_HOOK_SERVER: "off" },
      });
      expect(r.status, `${args.join(" ")}: ${r.stderr}`).toBe(o.code ?? 0);
    };
    // cli.cjs.[<kind>.]<node>.<size>-<ctime>.v8cache, by kind ("" for every other command).
    const caches = (): Record<string, { file: string; size: number; mtimeMs: number }> =>
      Object.fromEntries(
        readdirSync(join(install, "dist"))
          .filter((f) => f.startsWith("cli.cjs.") && f.endsWith(".v8cache"))
          .map((f) => [
            f.slice("cli.cjs.".length).split(process.version)[0]?.replace(/\.$/, ""),
            { file: f, ...statSync(join(install, "dist", f)) },
          ]),
      );
    // Help and failures run little of what the command runs: they write no cache of its kind.
    baton(["status", "--help"]);
    baton(["hook", "--help"]);
    baton(["resume", "--json"], { cwd: tempDir(), code: 4 });
    expect(Object.keys(caches()).sort()).toEqual([""]);
    baton(["session", "start", "--flow", "task", "--title", "Cache", "--json"]);
    const start = JSON.stringify({ session_id: "agent-1", cwd: root, hook_event_name: "SessionStart", source: "startup" });
    const runs: Record<string, () => void> = {
      status: () => baton(["status", "--json"]),
      resume: () => baton(["resume", "--json"]),
      hook: () => baton(["hook", "claude", "SessionStart"], { input: start }),
    };
    for (const run of Object.values(runs)) run();
    const written = caches();
    expect(Object.keys(written).sort()).toEqual(["", "hook", "resume", "status"]);
    // Each holds what its command ran: the hook's the most (it opens the store and records).
    expect(written.hook?.size).toBeGreaterThan(written.status?.size ?? Number.POSITIVE_INFINITY);
    // And each is used: run again, V8 accepts it, nothing is written again.
    for (const run of Object.values(runs)) run();
    for (const [kind, c] of Object.entries(caches()))
      expect([c.file, c.mtimeMs], kind).toEqual([written[kind]?.file, written[kind]?.mtimeMs]);
    // A new bundle of the same length (an upgrade) never runs an old cache's code: it gets its own, and the old one goes.
    const bundle = join(install, "dist", "cli.cjs");
    const text = readFileSync(bundle);
    rmSync(bundle);
    writeFileSync(bundle, text);
    runs.status?.();
    const after = caches();
    expect(after.status?.file).not.toBe(written.status?.file);
    expect(Object.keys(after).sort()).toEqual(["", "hook", "resume", "status"]);
  });

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

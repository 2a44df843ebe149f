/**
 * Installed the way a user installs it: `npm pack`, the tarball installed globally into a
 * temporary prefix (its dependency built as npm builds it), and then, from an empty git
 * repository, the commands of a first hour and the guide's library snippet, run against the
 * installed copy only. Prints the install's time and size (docs/benchmarks.md, "Install").
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupDirs, REPO, tempDir } from "./helpers.js";

afterAll(() => cleanupDirs());

const INSTALL_MS = 10 * 60_000;

/** Bytes under `dir`, as `du` counts them. */
function diskUsage(dir: string): number {
  return Number(execFileSync("du", ["-sb", dir], { encoding: "utf8" }).split("\t")[0]);
}

describe("installed from the tarball", () => {
  it(
    "runs init, status, checkpoint, rollback, hooks install, the dashboard and the guide's library snippet",
    () => {
      const work = tempDir();
      const version = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")).version as string;
      // dist/ is built by the test command before the suite runs.
      const packed = JSON.parse(
        execFileSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", work], { cwd: REPO, encoding: "utf8" }),
      )[0] as { filename: string; size: number; unpackedSize: number; files: { path: string }[] };
      const paths = packed.files.map((f) => f.path);
      expect(paths).toEqual(
        expect.arrayContaining(["LICENSE", "README.md", "package.json", "bin/baton.cjs", "dist/cli.cjs", "docs/cli.md"]),
      );
      expect(paths.filter((p) => p.endsWith(".map") || p.includes(".v8cache") || p.startsWith("src/") || p.startsWith("test/"))).toEqual(
        [],
      );
      const manifest = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8"));
      expect(manifest.name).toBe("agent-baton");
      expect(Object.keys(manifest.scripts)).not.toContain("prepare"); // nothing runs from a source tree the tarball lacks

      const prefix = join(work, "prefix");
      const started = Date.now();
      const install = spawnSync(
        "npm",
        ["install", "--global", "--prefix", prefix, join(work, packed.filename), "--no-audit", "--no-fund", "--prefer-offline"],
        { encoding: "utf8", timeout: INSTALL_MS },
      );
      const installMs = Date.now() - started;
      expect(install.status, install.stderr).toBe(0);
      const installed = join(prefix, "lib", "node_modules", "agent-baton");
      console.log(
        `install: ${(installMs / 1000).toFixed(1)} s; tarball ${(packed.size / 1e6).toFixed(2)} MB packed, ${(packed.unpackedSize / 1e6).toFixed(2)} MB unpacked; installed ${(diskUsage(installed) / 1e6).toFixed(1)} MB with its dependencies`,
      );

      const repo = join(work, "project");
      mkdirSync(repo);
      execFileSync("git", ["init", "-q"], { cwd: repo });
      const env = { ...process.env, PATH: `${join(prefix, "bin")}:${process.env.PATH}`, BATON_ROOT: "" };
      const baton = (...args: string[]) => {
        const r = spawnSync("baton", args, { cwd: repo, env, encoding: "utf8", timeout: 60_000 });
        expect(r.status, `baton ${args.join(" ")}: ${r.stdout}${r.stderr}`).toBe(0);
        return r.stdout;
      };
      // The `baton` on PATH is the installed one.
      expect(execFileSync("sh", ["-c", "command -v baton"], { env, encoding: "utf8" }).trim()).toBe(join(prefix, "bin", "baton"));
      expect(baton("--version").trim()).toBe(version);
      baton("init");
      expect(JSON.parse(baton("status", "--json")).nextAction.action).toBe("no_active_session");
      baton("session", "start", "--flow", "task", "--title", "First hour");
      writeFileSync(join(repo, "app.js"), "console.log('one');\n");
      baton("checkpoint", "--all");
      writeFileSync(join(repo, "app.js"), "console.log('broken');\n");
      expect(baton("rollback", "--dry-run")).toContain("-console.log('broken');");
      baton("rollback");
      expect(readFileSync(join(repo, "app.js"), "utf8")).toBe("console.log('one');\n");
      baton("hooks", "install", "claude");
      expect(readFileSync(join(repo, ".claude", "settings.local.json"), "utf8")).toContain("hook claude PreToolUse");
      // What loads a package lazily at run time (path patterns: generated paths, lesson triggers).
      baton("session", "start", "--flow", "live-variant", "--id", "hero");
      expect(JSON.parse(baton("status", "--session", "hero", "--json")).sessions[0].phase).toBeDefined();
      baton("lessons", "add", "Run the linter after editing src", "--path", "src/**", "--workspace");
      expect(JSON.stringify(JSON.parse(baton("lessons", "inject", "--session", "hero", "--path", "src/a.ts", "--json")))).toContain(
        "Run the linter",
      );
      const dash = JSON.parse(baton("dashboard", "--json"));
      try {
        expect(dash.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/dashboard#login=/);
      } finally {
        expect(JSON.parse(baton("serve", "--stop", "--json"))).toMatchObject({ stopped: true });
      }

      // The guide's library snippet, verbatim, in a project that depends on the package.
      const guide = readFileSync(join(REPO, "docs", "guide", "getting-started.md"), "utf8");
      const snippet = /From code:\n\n```ts\n([\s\S]*?)```/.exec(guide)?.[1];
      expect(snippet).toContain('from "agent-baton"');
      mkdirSync(join(repo, "node_modules"));
      symlinkSync(installed, join(repo, "node_modules", "agent-baton"));
      writeFileSync(join(repo, "snippet.mjs"), snippet as string);
      const lib = spawnSync(process.execPath, ["snippet.mjs"], { cwd: repo, env, encoding: "utf8", timeout: 60_000 });
      expect(lib.status, lib.stderr).toBe(0);
      expect(lib.stdout).toMatch(/action: '\w+'/);
    },
    INSTALL_MS + 120_000,
  );
});

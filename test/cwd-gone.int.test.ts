/**
 * A working directory removed under the process (a git worktree or a temp folder an agent ran
 * in, deleted since): real `baton` processes started by a shell that removes its own folder
 * first. A command given an absolute root runs as anywhere else, in its own process or through
 * the workspace's server; one that needs the working directory says it is gone and what to do;
 * a hook answers from its payload's own cwd. None prints Node's stack trace.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CLI, cleanupDirs, cli, tempDir } from "./helpers.js";
import { checkpoints, failOnStrayServers, payload, workspace } from "./hook-helpers.js";
import { serve } from "./server-helpers.js";

failOnStrayServers();
afterAll(() => cleanupDirs());

/** `baton …args` run in a folder removed just before Node starts. */
function inRemovedDir(args: string[], o: { input?: string; env?: Record<string, string> } = {}) {
  const gone = join(tempDir("baton-cwd-"), "removed");
  mkdirSync(gone);
  const r = spawnSync("sh", ["-c", 'cd "$1" && rmdir "$1" && shift && exec "$@"', "sh", gone, process.execPath, CLI, ...args], {
    input: o.input ?? "",
    encoding: "utf8",
    env: { ...process.env, BATON_DEBUG: "1", BATON_HOOK_DEBUG: "1", ...o.env },
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const noStack = (stderr: string) => expect(stderr).not.toMatch(/\n\s+at |uv_cwd|ENOENT/);

describe("a working directory removed under baton", () => {
  it("status, resume and the other commands run with an absolute root, in their own process or through the server", async () => {
    const root = workspace({ "src/app.ts": "export const app = 1;\n" });
    expect(cli(["session", "start", "--flow", "task", "--id", "fix", "--title", "Fix it", "--root", root]).code).toBe(0);
    const elsewhere = cli(["status", "--json", "--root", root]);
    for (const args of [
      ["status", "--json", "--root", root],
      ["status", "--root", root],
      ["resume", "fix", "--json", "--root", root],
      ["session", "list", "--json", "--root", root],
    ]) {
      const r = inRemovedDir(args);
      expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(0);
      noStack(r.stderr);
    }
    expect(inRemovedDir(["status", "--json"], { env: { BATON_ROOT: root } }).stdout).toBe(elsewhere.stdout);
    const s = await serve(root);
    try {
      const served = inRemovedDir(["status", "--json", "--root", root]);
      expect(served.stderr).toContain("status answered by the server");
      expect(served.stdout).toBe(elsewhere.stdout);
    } finally {
      await s.stop();
    }
    // A file named relative to a working directory that is gone: said as such, not `internal`.
    writeFileSync(join(root, "shot.png"), "png");
    expect(cli(["artifact", "add", join(root, "shot.png"), "--session", "fix", "--root", root]).code).toBe(0);
    const out = inRemovedDir(["artifact", "get", "shot.png", "--session", "fix", "--out", "copy.png", "--json", "--root", root]);
    expect([out.code, JSON.parse(out.stdout).error?.code], out.stderr).toEqual([4, "workspace_not_found"]);
  });

  it("a command that needs the working directory says it is gone, and what to do", () => {
    for (const args of [["status", "--json"], ["status"], ["resume", "--json"], ["session", "list", "--json", "--root", "relative/dir"]]) {
      const r = inRemovedDir(args);
      expect(r.code, args.join(" ")).toBe(4);
      noStack(r.stderr);
      const said = args.includes("--json") ? JSON.parse(r.stdout).error : { code: /\[(\w+)\]/.exec(r.stderr)?.[1], message: r.stderr };
      expect(said.code, args.join(" ")).toBe("workspace_not_found");
      expect(said.message).toContain("the working directory no longer exists");
      expect(said.message).toContain("absolute --root");
    }
    // A user's hooks need no project: installed and removed from a removed folder too.
    const home = tempDir("baton-home-");
    const env = { HOME: home, CLAUDE_CONFIG_DIR: "" };
    const installed = inRemovedDir(["hooks", "install", "claude", "--user", "--json"], { env });
    expect(installed.code, installed.stdout + installed.stderr).toBe(0);
    expect(JSON.parse(installed.stdout).file).toBe(join(home, ".claude", "settings.json"));
    const removed = inRemovedDir(["hooks", "uninstall", "claude", "--user", "--json"], { env });
    expect(removed.code, removed.stdout + removed.stderr).toBe(0);
    expect(JSON.parse(removed.stdout).removed).toBeGreaterThan(0);
    const project = inRemovedDir(["hooks", "install", "claude", "--json"], { env });
    expect([project.code, JSON.parse(project.stdout).error.code], "a project's still needs one").toEqual([4, "workspace_not_found"]);
  });

  it("a hook answers from its payload's cwd, through the server and in its own process", async () => {
    const root = workspace({ "src/app.ts": "export const app = 1;\n" });
    const hookIn = (fixture: string, call: string, env: Record<string, string>) => {
      const text = payload("claude", fixture, { cwd: root, session: "agent-session-1", call });
      const r = inRemovedDir(["hook", "claude", JSON.parse(text).hook_event_name], { input: text, env });
      expect(r.code, r.stderr).toBe(0);
      noStack(r.stderr);
      return r;
    };
    expect(hookIn("session-start-startup", "c0", { BATON_HOOK_SERVER: "off" }).stderr).toMatch(/answered in this process/);
    expect(hookIn("pre-edit", "c1", { BATON_HOOK_SERVER: "off" }).stderr).toMatch(/answered in this process/);
    const s = await serve(root);
    try {
      expect(hookIn("pre-bash-test", "c2", { BATON_HOOK_SERVER: "use" }).stderr).toMatch(/answered by the server/);
    } finally {
      await s.stop();
    }
    // Each before-hook took its checkpoint: the edit's in its own process, the shell command's on the server.
    expect(checkpoints(root).map((c) => c.toolName)).toEqual(["Edit", "Bash"]);
    // A relative cwd in the payload, or a relative root, names no folder now: nothing to do, and the agent goes on.
    const relative = payload("claude", "session-start-startup", { cwd: "project", session: "agent-session-2", call: "c3" });
    for (const env of [{}, { BATON_ROOT: "project" }] as Record<string, string>[]) {
      const r = inRemovedDir(["hook", "claude", "SessionStart"], { input: relative, env: { BATON_HOOK_SERVER: "off", ...env } });
      expect(r.code, r.stderr).toBe(0);
      noStack(r.stderr);
    }
    const withRoot = inRemovedDir(["hook", "claude", "SessionStart", "--root", "project"], { input: relative });
    expect(withRoot.code, withRoot.stderr).toBe(0);
    noStack(withRoot.stderr);
  });
});

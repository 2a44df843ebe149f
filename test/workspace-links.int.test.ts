/**
 * A repository's committed symbolic links in `.baton/` never decide where Baton's data goes: a
 * clone whose `.baton` (or `.baton/baton.db`, `logs/`, `.gitignore`, `logs/hooks.log`) is a link
 * to another project's store or to a file outside is refused with `unsafe_path`, and nothing is
 * read from or written through the link: not by the CLI, not by an agent's hook in its own
 * process, not by the server the other project runs. Real workspaces, the built CLI, real links.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { appendHookFailure } from "../src/platform/hook-log.js";
import { cleanupDirs, cli, initWorkspace, tempDir } from "./helpers.js";
import { failOnStrayServers, payload } from "./hook-helpers.js";
import { serve } from "./server-helpers.js";

failOnStrayServers();
afterEach(() => cleanupDirs());

/** Another project's workspace with a session in it: what a link would reach. */
function victim(): { root: string; events: () => number; mtime: () => number } {
  const root = initWorkspace("baton-victim-", { "secret.txt": "the other project's file\n" });
  const s = cli(["session", "start", "--flow", "task", "--title", "the other project's work", "--root", root]);
  expect(s.code, s.stderr).toBe(0);
  cli(["checkpoint", "--root", root]);
  const events = () => cli(["export", "--root", root]).stdout.trim().split("\n").length;
  const mtime = () => statSync(join(root, ".baton", "baton.db")).mtimeMs;
  return { root, events, mtime };
}

/** A clone with `links` made inside it (name relative to the clone → target). */
function clone(links: Record<string, string>, dirs: string[] = []): string {
  const root = tempDir("baton-clone-");
  writeFileSync(join(root, "README.md"), "# a stranger's project\n");
  for (const d of dirs) mkdirSync(join(root, d), { recursive: true });
  for (const [name, target] of Object.entries(links)) symlinkSync(target, join(root, name));
  return root;
}

const PRE_WRITE = (root: string) => payload("claude", "pre-write", { cwd: root, session: "agent-session-1", call: "toolu_clone_1" });

describe("symbolic links in .baton/", () => {
  it("a clone whose .baton links to another project's: every command refuses, and a hook records nothing there", () => {
    const v = victim();
    const before = v.events();
    const root = clone({ ".baton": join(v.root, ".baton") });
    for (const args of [
      ["status", "--json"],
      ["resume", "--json"],
      ["doctor", "--json"],
      ["checkpoint", "--json"],
    ]) {
      const r = cli([...args, "--root", root]);
      expect(r.code, `baton ${args[0]}: ${r.stdout}${r.stderr}`).toBe(2);
      expect(JSON.parse(r.stdout).error).toMatchObject({ code: "unsafe_path", path: join(root, ".baton") });
    }
    // An agent's hook in the clone, in its own process: it lets the call through (hooks fail open), and writes nothing there.
    const h = cli(["hook", "claude", "PreToolUse"], { cwd: root, input: PRE_WRITE(root), env: { BATON_HOOK_SERVER: "off" } });
    expect([h.code, h.stdout], h.stderr).toEqual([0, ""]);
    // The session's start says Baton is off here, and why (nothing else would: its log is not written).
    const start = cli(["hook", "claude", "SessionStart"], {
      cwd: root,
      input: payload("claude", "session-start-startup", { cwd: root, session: "agent-session-1" }),
      env: { BATON_HOOK_SERVER: "off" },
    });
    expect(start.code, start.stderr).toBe(0);
    expect(JSON.parse(start.stdout).systemMessage).toMatch(/^Baton is off in this workspace: .*\.baton is a symbolic link/);
    // Copilot CLI shows a hook's message only to the model: it is told, to tell the user.
    const copilot = cli(["hook", "copilot", "userPromptSubmitted"], {
      cwd: root,
      input: payload("copilot", "user-prompt", { cwd: root, session: "agent-session-2" }),
      env: { BATON_HOOK_SERVER: "off" },
    });
    expect(copilot.stdout).toMatch(/Baton is off in this workspace: .*Tell the user\./);
    expect(v.events(), "no event in the other project's journal").toBe(before);
    expect(() => statSync(join(v.root, ".baton", "logs", "hooks.log")), "nor a line in its log").toThrow();
  });

  it("a clone whose .baton links to a served project's: that server is not the clone's, and the hook records nothing there", async () => {
    const v = victim();
    const s = await serve(v.root);
    try {
      const before = v.events();
      const root = clone({ ".baton": join(v.root, ".baton") });
      const h = cli(["hook", "claude", "PreToolUse"], {
        cwd: root,
        input: PRE_WRITE(root),
        env: { BATON_HOOK_SERVER: "use", BATON_HOOK_DEBUG: "1" },
      });
      expect(h.code, h.stderr).toBe(0);
      // The server runs `serve` for the victim's workspace, not the clone's: no hook is handed to it
      // (Linux; the server would refuse one, wrong_workspace).
      expect(h.stderr, "not handed to that server").toMatch(/answered in this process \(no server\)/);
      expect(v.events()).toBe(before);
    } finally {
      await s.stop();
    }
  });

  it("a link in .baton/ to another store, a log folder or a .gitignore outside: refused, nothing made or changed through it", () => {
    const v = victim();
    const outside = tempDir("baton-outside-");
    const cases: [string, string][] = [
      ["baton.db", join(v.root, ".baton", "baton.db")],
      ["logs", outside],
      [".gitignore", join(outside, "made-by-baton")], // dangling: writing through it would create the file
      ["server.json", join(v.root, ".baton", "server.json")],
    ];
    const mtime = v.mtime();
    for (const [name, target] of cases) {
      const root = clone({ [join(".baton", name)]: target }, [".baton"]);
      const r = cli(["status", "--json", "--root", root]);
      expect(r.code, `${name}: ${r.stdout}${r.stderr}`).toBe(2);
      expect(JSON.parse(r.stdout).error).toMatchObject({ code: "unsafe_path", path: join(root, ".baton", name) });
      const h = cli(["hook", "claude", "PreToolUse"], { cwd: root, input: PRE_WRITE(root), env: { BATON_HOOK_SERVER: "off" } });
      expect(h.code, h.stderr).toBe(0);
    }
    expect(v.mtime(), "the other store untouched").toBe(mtime);
    expect(statSync(outside).isDirectory()).toBe(true);
    expect(() => statSync(join(outside, "made-by-baton")), "nothing made through the dangling .gitignore").toThrow();
    expect(() => statSync(join(outside, "hooks.log")), "no log line through the linked logs/").toThrow();
  });

  it("flows/ and config.json may be links (Baton only reads them); another name may not", () => {
    const root = initWorkspace("baton-linked-flows-");
    const shared = tempDir("baton-shared-");
    writeFileSync(join(shared, "config.json"), "{}\n");
    symlinkSync(shared, join(root, ".baton", "notes"));
    const refused = cli(["status", "--json", "--root", root]);
    expect(JSON.parse(refused.stdout).error).toMatchObject({ code: "unsafe_path", path: join(root, ".baton", "notes") });
    unlinkSync(join(root, ".baton", "notes"));
    rmSync(join(root, ".baton", "flows"), { recursive: true, force: true });
    symlinkSync(shared, join(root, ".baton", "flows"));
    symlinkSync(join(shared, "config.json"), join(root, ".baton", "config.json"));
    const r = cli(["status", "--json", "--root", root]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).sessions).toEqual([]);
  });

  it("the hook failure log is never appended through a link: a repository's logs/hooks.log pointing outside", () => {
    const root = initWorkspace("baton-linked-log-");
    const outside = join(tempDir("baton-outside-"), "profile");
    writeFileSync(outside, "export PATH=/usr/bin\n");
    mkdirSync(join(root, ".baton", "logs"), { recursive: true });
    symlinkSync(outside, join(root, ".baton", "logs", "hooks.log"));
    appendHookFailure(join(root, ".baton"), { agent: "claude", event: "PreToolUse", error: new Error("boom") });
    expect(readFileSync(outside, "utf8")).toBe("export PATH=/usr/bin\n");
  });

  it("a shard of .baton/blobs/ that links outside: a large file's checkpoint is refused, its content not written there", () => {
    const root = initWorkspace("baton-linked-shard-");
    expect(cli(["session", "start", "--flow", "task", "--root", root]).code).toBe(0);
    const big = Buffer.alloc(2 * 1024 * 1024, "x"); // over the 1 MiB kept in the database: a file in .baton/blobs/
    writeFileSync(join(root, "big.bin"), big);
    const outside = tempDir("baton-outside-");
    mkdirSync(join(root, ".baton", "blobs"), { recursive: true });
    symlinkSync(outside, join(root, ".baton", "blobs", createHash("sha256").update(big).digest("hex").slice(0, 2)));
    const r = cli(["checkpoint", "--files", "big.bin", "--json", "--root", root]);
    expect(r.code, r.stdout + r.stderr).toBe(2);
    expect(JSON.parse(r.stdout).error.code).toBe("unsafe_path");
    expect(readdirSync(outside), "nothing written through the link").toEqual([]);
  });

  it("`baton dashboard` with .baton/logs/server.log linked outside: unsafe_path, not an internal error, nothing appended", () => {
    const root = initWorkspace("baton-linked-server-log-");
    const outside = join(tempDir("baton-outside-"), "profile");
    writeFileSync(outside, "export PATH=/usr/bin\n");
    mkdirSync(join(root, ".baton", "logs"), { recursive: true });
    symlinkSync(outside, join(root, ".baton", "logs", "server.log"));
    const r = cli(["dashboard", "--json", "--root", root], { env: { BROWSER: "true" } });
    expect(JSON.parse(r.stdout).error).toMatchObject({ code: "unsafe_path" });
    expect(readFileSync(outside, "utf8")).toBe("export PATH=/usr/bin\n");
  });

  it("a flow file a repository links to /dev/zero, or a FIFO, or one too large: reported invalid at once, nothing hangs", () => {
    const root = initWorkspace("baton-flow-devices-");
    const flows = join(root, ".baton", "flows");
    mkdirSync(flows, { recursive: true });
    symlinkSync("/dev/zero", join(flows, "zero.json"));
    spawnSync("mkfifo", [join(flows, "fifo.json")]);
    writeFileSync(join(flows, "huge.json"), `{"name": "huge", "pad": "${"x".repeat(2 * 1024 * 1024)}"}`);
    const r = cli(["flows", "list", "--root", root]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /INVALID .*zero\.json: \(file\): a symbolic link: user flows are read only from files in \.baton\/flows itself/,
    );
    expect(r.stdout).toMatch(/INVALID .*fifo\.json: \(file\): cannot read: .*not a regular file/);
    expect(r.stdout).toMatch(/INVALID .*huge\.json: \(file\): cannot read: .*over the 1048576-byte limit/);
    const start = cli(["session", "start", "--flow", "custom", "--json", "--root", root]);
    expect(JSON.parse(start.stdout).error.code, "a flow looked up among them: answered, not hung").toBe("unknown_flow");
  });
});

/**
 * Claude Code (the real CLI from npm, on PATH as users have it) with Baton's hooks in exec form:
 * `baton hooks install claude` asks `claude --version`, and from 2.1.139 on writes each command
 * hook as a program and its arguments (`"command": "<baton>", "args": ["--node=<node>", "hook",
 * "claude", "<Event>"]`), which Claude Code spawns with no shell: the installed baton, whose
 * shell part answers through the workspace's server or hands the hook to the Node named. The
 * hooks run as before: the session-start and prompt context reach the model, and each write and
 * shell command is checkpointed first.
 */
import { readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { claudeTurn } from "./drivers.js";
import { Project } from "./harness.js";
import { agentCli, REPO } from "./install.js";
import { MockModel } from "./mock-model.js";

const PINNED = "Keep the changelog in step with every release.";

describe("Claude Code: Baton's hooks in exec form", () => {
  const mock = new MockModel();
  let p: Project;
  let firstRequests = "";
  let installed: any;

  beforeAll(async () => {
    const url = await mock.start();
    const cli = agentCli("claude");
    p = new Project("claude", { "a.txt": "one\n" });
    symlinkSync(cli, join(p.bin, "claude"));
    // This baton and this Node by absolute path, as an install into this machine's own file writes them.
    const r = p.baton(["--json", "hooks", "install", "claude"]);
    expect(r.code, r.stderr).toBe(0);
    installed = r.json();
    expect(p.baton(["lessons", "add", PINNED, "--workspace", "--pin"]).code).toBe(0);
    const from = mock.requests.length;
    await claudeTurn(p, mock, cli, url, "Do the work.", [
      { op: "write", path: "w.txt", content: "w\n" },
      { op: "shell", command: "echo made > s.txt" },
      { op: "text", text: "Done." },
    ]);
    firstRequests = JSON.stringify(mock.requests.slice(from).map((q) => q.body));
  }, 600_000);

  afterAll(async () => {
    await mock.stop();
    p?.cleanup();
  });

  test("the install wrote every command hook as a program and its arguments", () => {
    const settings = JSON.parse(readFileSync(join(p.root, ".claude", "settings.local.json"), "utf8"));
    const handlers = Object.values(settings.hooks as Record<string, any[]>).flatMap((groups) => groups.flatMap((g) => g.hooks));
    expect(handlers.length).toBeGreaterThan(5);
    for (const h of handlers) {
      expect(h.command).toBe(join(REPO, "bin", "baton.cjs"));
      expect(h.args).toEqual([`--node=${process.execPath}`, "hook", "claude", expect.any(String)]);
    }
    expect(installed.hooks.map((h: any) => h.event)).toContain("PreSkillShellCommand");
  });

  test("the hooks ran: context in, checkpoints before each change, nothing failed", () => {
    expect(firstRequests).toContain("SessionStart hook additional context: # Baton: where this work stands");
    expect(firstRequests).toContain(PINNED);
    expect(p.read("w.txt")).toBe("w\n");
    expect(p.read("s.txt")).toBe("made\n");
    const cps = p.baton(["--json", "checkpoints"]).json().checkpoints;
    expect(cps.map((c: any) => [c.kind, c.toolName]).sort()).toEqual([
      ["targeted", "Write"],
      ["tree", "Bash"],
    ]);
    expect(p.read(".baton/logs/hooks.log") ?? "").toBe("");
  });
});

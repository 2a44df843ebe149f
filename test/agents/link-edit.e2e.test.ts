/**
 * An agent editing a file through a link, as in the many repositories whose CLAUDE.md is a link
 * to AGENTS.md. Claude Code refuses to write through a link (it tells the model to write the
 * target), but Gemini CLI and Codex write through it, into AGENTS.md. The checkpoint before the
 * call keeps AGENTS.md (a link itself is never stored), so a rollback undoes the edit; the hook
 * after it records the call and ends well (a link cannot be in the resume list, which once cut
 * that hook short).
 *
 * Deleting the link is not a write of AGENTS.md: Codex deleting CLAUDE.md while another agent
 * (a Claude Code session, played here with its hooks' payloads) is mid-turn after writing
 * AGENTS.md is not refused for a claim on AGENTS.md, with the hooks answered by the workspace's
 * server as they usually are.
 */
import { spawnSync } from "node:child_process";
import { existsSync, lstatSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { claude, claudeTurn, codex, type Driver, gemini } from "./drivers.js";
import { CLI, Project } from "./harness.js";
import { agentCli } from "./install.js";
import { MockModel, toolResults } from "./mock-model.js";

const BEFORE = "# Notes\nUse tabs.\n";
const AFTER = "# Notes\nUse spaces.\n";

describe("Claude Code: an edit of CLAUDE.md -> AGENTS.md", () => {
  const mock = new MockModel();
  let p: Project;
  let refusal = "";

  beforeAll(async () => {
    const url = await mock.start();
    p = new Project("claude", { "AGENTS.md": BEFORE });
    symlinkSync("AGENTS.md", join(p.root, "CLAUDE.md"));
    expect(p.baton(["--json", "hooks", "install", "claude", "--command", "baton"]).code).toBe(0);
    await claudeTurn(p, mock, agentCli("claude"), url, "Say spaces instead.", [
      { op: "read", path: "CLAUDE.md" },
      { op: "edit", path: "CLAUDE.md", old: "Use tabs.", new: "Use spaces." },
      { op: "text", text: "Done." },
    ]);
    refusal = JSON.stringify((mock.requests.at(-1)?.body as { messages?: unknown[] } | undefined)?.messages?.at(-1));
  }, 600_000);

  afterAll(async () => {
    await mock.stop();
    p?.cleanup();
  });

  test("is refused by Claude Code itself (it says to write the target), so nothing goes through the link", () => {
    expect(claude.agent).toBe("claude");
    expect(JSON.parse(refusal)).toMatchObject({ content: [{ type: "tool_result", is_error: true }] });
    expect(readFileSync(join(p.root, "AGENTS.md"), "utf8")).toBe(BEFORE);
    expect(p.read(".baton/logs/hooks.log") ?? "").toBe("");
  });
});

for (const d of [gemini, codex] as Driver[]) {
  describe(`${d.agent}: an edit through CLAUDE.md -> AGENTS.md`, () => {
    const mock = new MockModel();
    let p: Project;

    beforeAll(async () => {
      const url = await mock.start();
      const cli = agentCli(d.agent);
      p = new Project(d.agent, { "AGENTS.md": BEFORE });
      symlinkSync("AGENTS.md", join(p.root, "CLAUDE.md"));
      d.configure(p, url);
      const hooks = p.baton(["--json", "hooks", "install", d.agent, "--command", "baton"]);
      expect(hooks.code, hooks.stderr).toBe(0);
      await d.expectHooksTrusted?.(p, cli);
      mock.play(
        [
          { op: "read", path: "CLAUDE.md" },
          { op: "edit", path: "CLAUDE.md", old: "Use tabs.", new: "Use spaces." },
          { op: "text", text: "Done." },
        ],
        p.root,
      );
      const r = await p.run(cli, d.args("Say spaces instead."), d.env(url));
      if (r.code !== 0) throw new Error(`${d.agent} exited ${r.code}\n${r.stderr.slice(-3000)}`);
    }, 600_000);

    afterAll(async () => {
      await mock.stop();
      p?.cleanup();
    });

    test("the edit goes through the link into AGENTS.md, and every hook ends well", () => {
      expect(readFileSync(join(p.root, "AGENTS.md"), "utf8")).toBe(AFTER);
      expect(lstatSync(join(p.root, "CLAUDE.md")).isSymbolicLink()).toBe(true);
      expect(p.read(".baton/logs/hooks.log") ?? "").toBe("");
    });

    test("`baton rollback` undoes it: AGENTS.md is back, the link stays", () => {
      const r = p.baton(["--json", "rollback"]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.json().changes).toEqual(expect.arrayContaining([expect.objectContaining({ path: "AGENTS.md", action: "restore" })]));
      expect(readFileSync(join(p.root, "AGENTS.md"), "utf8")).toBe(BEFORE);
      expect(lstatSync(join(p.root, "CLAUDE.md")).isSymbolicLink()).toBe(true);
    });
  });
}

describe("codex: deleting CLAUDE.md -> AGENTS.md while another agent holds AGENTS.md", () => {
  const mock = new MockModel();
  let p: Project;
  const CLAUDE_SESSION = "0a1b2c3d-link-holder";

  /** A Claude Code hook run as Claude Code runs it: `baton hook claude <Event>`, the payload on stdin. */
  function claudeHook(event: string, payload: Record<string, unknown>): void {
    const r = spawnSync(process.execPath, [CLI, "hook", "claude", event], {
      cwd: p.root,
      // The agent's own environment (not this test's), so the server it starts is the one Codex's hooks use.
      env: { ...p.env, BATON_CAPTURE_DIR: "", BATON_HOOK_SERVER: "auto" },
      input: JSON.stringify({
        session_id: CLAUDE_SESSION,
        transcript_path: `${p.home}/.claude/projects/-repo/${CLAUDE_SESSION}.jsonl`,
        cwd: p.root,
        permission_mode: "default",
        hook_event_name: event,
        ...payload,
      }),
      encoding: "utf8",
    });
    if (r.status !== 0) throw new Error(`baton hook claude ${event} exited ${r.status}: ${r.stderr}`);
  }

  beforeAll(async () => {
    const url = await mock.start();
    const cli = agentCli("codex");
    p = new Project("codex", { "AGENTS.md": BEFORE });
    symlinkSync("AGENTS.md", join(p.root, "CLAUDE.md"));
    codex.configure(p, url);
    const hooks = p.baton(["--json", "hooks", "install", "codex", "--command", "baton"]);
    expect(hooks.code, hooks.stderr).toBe(0);
    await codex.expectHooksTrusted?.(p, cli);
    // Claude Code, mid-turn, writes AGENTS.md: its lane holds the file until its turn ends.
    claudeHook("SessionStart", { source: "startup" });
    claudeHook("UserPromptSubmit", { prompt: "Say spaces instead." });
    const write = { tool_name: "Write", tool_input: { file_path: join(p.root, "AGENTS.md"), content: AFTER }, tool_use_id: "toolu_holder" };
    claudeHook("PreToolUse", write);
    writeFileSync(join(p.root, "AGENTS.md"), AFTER);
    claudeHook("PostToolUse", { ...write, tool_response: { type: "update", filePath: join(p.root, "AGENTS.md"), content: AFTER } });
    mock.play(
      [
        { op: "patch", patch: "*** Begin Patch\n*** Delete File: CLAUDE.md\n*** End Patch" },
        { op: "text", text: "Done." },
      ],
      p.root,
    );
    // The hooks start the workspace's server and hand it each call (`hooks.server` auto).
    const r = await p.run(cli, codex.args("Drop the CLAUDE.md link."), { ...codex.env(url), BATON_HOOK_SERVER: "auto" });
    if (r.code !== 0) throw new Error(`codex exited ${r.code}\n${r.stderr.slice(-3000)}`);
  }, 600_000);

  afterAll(async () => {
    await mock.stop();
    if (p) p.baton(["serve", "--stop"]);
    p?.cleanup();
  });

  test("the link is deleted, not refused for AGENTS.md, which stays as the other agent left it", () => {
    expect(existsSync(join(p.root, ".baton", "server.json")), "the server answered the hooks").toBe(true);
    const results = toolResults(mock.requests.at(-1) as Parameters<typeof toolResults>[0]).join("\n");
    expect(results).not.toContain("another agent working in this checkout right now wrote this file");
    expect(existsSync(join(p.root, "CLAUDE.md"))).toBe(false);
    expect(readFileSync(join(p.root, "AGENTS.md"), "utf8")).toBe(AFTER);
    expect(p.read(".baton/logs/hooks.log") ?? "").toBe("");
  });
});

/**
 * An agent editing a file through a link, as in the many repositories whose CLAUDE.md is a link
 * to AGENTS.md. Claude Code refuses to write through a link (it tells the model to write the
 * target), but Gemini CLI and Codex write through it, into AGENTS.md. The checkpoint before the
 * call keeps AGENTS.md (a link itself is never stored), so a rollback undoes the edit; the hook
 * after it records the call and ends well (a link cannot be in the resume list, which once cut
 * that hook short).
 */
import { lstatSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { claude, claudeTurn, codex, type Driver, gemini } from "./drivers.js";
import { Project } from "./harness.js";
import { agentCli } from "./install.js";
import { MockModel } from "./mock-model.js";

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

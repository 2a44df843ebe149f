/**
 * Claude Code (the real CLI from npm) forking a session (`--resume <id> --fork-session`): a new
 * agent session that carries on the earlier conversation, whose SessionStart says `source:
 * "fork"`. Baton takes it as a resume: the model is told which files changed since they were
 * recorded, as on a plain `--resume`.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { claude, claudeTurn } from "./drivers.js";
import { Project } from "./harness.js";
import { agentCli } from "./install.js";
import { MockModel } from "./mock-model.js";

describe("Claude Code: a forked session", () => {
  const mock = new MockModel();
  let p: Project;
  let forkRequests = "";
  let firstSession: string | undefined;

  beforeAll(async () => {
    const url = await mock.start();
    const cli = agentCli("claude");
    p = new Project("claude", { "a.txt": "one\n" });
    const hooks = p.baton(["--json", "hooks", "install", "claude", "--command", "baton"]);
    expect(hooks.code, hooks.stderr).toBe(0);
    const first = await claudeTurn(p, mock, cli, url, "Write it.", [
      { op: "write", path: "w.txt", content: "w\n" },
      { op: "text", text: "Done." },
    ]);
    firstSession = claude.sessionId(first);
    // Someone edits the agent's file between the two conversations.
    writeFileSync(join(p.root, "w.txt"), "changed by hand\n");
    const from = mock.requests.length;
    mock.play([{ op: "text", text: "Forked." }], p.root);
    const r = await p.run(cli, [...claude.args("Carry on.", firstSession), "--fork-session"], claude.env(url));
    if (r.code !== 0) throw new Error(`claude exited ${r.code}\n${r.stderr.slice(-3000)}`);
    forkRequests = JSON.stringify(mock.requests.slice(from).map((q) => q.body));
  }, 600_000);

  afterAll(async () => {
    await mock.stop();
    p?.cleanup();
  });

  test("Claude Code sends SessionStart fork with a session id of its own", () => {
    const starts = p.captured().filter((c) => c.event === "SessionStart");
    expect(starts.map((c) => c.payload.source)).toEqual(["startup", "fork"]);
    expect(starts[1]?.payload.session_id).not.toBe(firstSession);
  });

  test("the fork's context is a resume's: the files changed since they were recorded", () => {
    expect(forkRequests).toContain("Agent session resume.");
    expect(forkRequests).toMatch(/Files changed since they were recorded[^"]*w\.txt/);
    expect(p.read(".baton/logs/hooks.log") ?? "").toBe("");
  });
});

/**
 * Claude Code (the real CLI from npm) with its per-call hooks over HTTP (`baton hooks install
 * claude --http`) and no server running: the tools run without a checkpoint (Claude Code takes
 * a refused connection as a non-blocking error), and the loss is reported, not silent: the turn's
 * Stop hook tells the user how many calls ran unheard, and the journal keeps a note of each.
 * Then the server runs, and the next turn's calls are checkpointed as usual and not reported.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { claude, claudeTurn } from "./drivers.js";
import { type AgentRun, httpHookServer, Project } from "./harness.js";
import { agentCli } from "./install.js";
import { MockModel } from "./mock-model.js";

const FILES = { "a.txt": "one\n", "README.md": "# demo\n" };

describe("Claude Code HTTP hooks with the server down", () => {
  const mock = new MockModel();
  let p: Project;
  let cli: string;
  let url: string;
  let down: AgentRun;
  let up: AgentRun;
  let notesAfterDown: string[] = [];
  let checkpointsAfterDown: any[] = [];

  const notes = () =>
    p
      .baton(["export", p.baton(["--json", "status"]).json().sessions[0].sessionId])
      .stdout.split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .filter((e) => e.type === "note:added" && String(e.data.text).includes("without a checkpoint"))
      .map((e) => e.data.text as string);

  const turn = (prompt: string, steps: Parameters<MockModel["play"]>[0], resume?: string): Promise<AgentRun> =>
    claudeTurn(p, mock, cli, url, prompt, steps, resume);

  beforeAll(async () => {
    cli = agentCli("claude");
    url = await mock.start();
    p = new Project("claude", FILES);
    p.excludeFromGit(".claude/settings.local.json"); // it will hold the server's token
    const hooks = p.baton(["--json", "hooks", "install", "claude", "--command", "baton", "--http"]);
    expect(hooks.code, hooks.stderr).toBe(0);
    // BATON_HOOK_SERVER=use (the harness's): no hook starts a server; none runs.
    down = await turn("Make the changes.", [
      { op: "write", path: "new.txt", content: "fresh\n" },
      { op: "edit", path: "a.txt", old: "one", new: "uno" },
      { op: "shell", command: "echo made-by-shell > c.txt" },
      { op: "text", text: "Done." },
    ]);
    notesAfterDown = notes();
    checkpointsAfterDown = p.baton(["--json", "checkpoints"]).json().checkpoints;
    const server = await httpHookServer(p);
    try {
      const sessionId = claude.sessionId(down);
      up = await turn(
        "One more.",
        [
          { op: "write", path: "later.txt", content: "later\n" },
          { op: "text", text: "Done." },
        ],
        sessionId,
      );
    } finally {
      await server.stop();
    }
  }, 600_000);

  afterAll(async () => {
    await mock.stop();
    p?.cleanup();
  });

  test("the tools ran, without a checkpoint", () => {
    expect([p.read("new.txt"), p.read("a.txt"), p.read("c.txt")]).toEqual(["fresh\n", "uno\n", "made-by-shell\n"]);
    expect(checkpointsAfterDown).toEqual([]);
  });

  test("the turn's end reports each call that ran unheard: a note per call in the journal, a message to the user", () => {
    expect(notesAfterDown).toHaveLength(3);
    expect(notesAfterDown.map((t) => t.split(" ")[3])).toEqual(["Write", "Edit", "Bash"]);
    expect(down.stdout).toContain("3 tool calls (Write, Edit, Bash) ran without a checkpoint");
    // And the doctor says so, with the hooks' other failures.
    const doc = p.baton(["--json", "doctor"]).json();
    const failures = doc.findings.find((f: any) => f.code === "hook_failures");
    expect(failures?.evidence.codes).toEqual({ hook_unanswered: 3 });
  });

  test("with the server up, the next turn's call is checkpointed and nothing more is reported", () => {
    expect(p.read("later.txt")).toBe("later\n");
    const cps = p.baton(["--json", "checkpoints"]).json().checkpoints;
    expect(cps.map((c: any) => c.toolName)).toEqual(["Write"]);
    expect(notes()).toHaveLength(3);
    expect(up.stdout).not.toContain("without a checkpoint");
  });
});

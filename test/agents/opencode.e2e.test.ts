/** OpenCode (the real CLI from npm) driven through Baton's plugin by the scripted model (suite.ts). */
import { dirname } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { opencode } from "./drivers.js";
import { type AgentRun, Project } from "./harness.js";
import { agentCli, VERSIONS } from "./install.js";
import { MockModel } from "./mock-model.js";
import { agentSuite, FILES } from "./suite.js";

agentSuite(opencode);

// The committed plugin on a teammate's machine without Baton: `baton` is not on PATH, the
// plugin's spawn fails, and OpenCode works as it would without the plugin.
describe(`${VERSIONS.opencode.package}@${VERSIONS.opencode.version} with Baton's committed plugin and no baton on PATH`, () => {
  const mock = new MockModel();
  let p: Project;
  let run: AgentRun;

  beforeAll(async () => {
    const cli = agentCli("opencode");
    const url = await mock.start();
    p = new Project("opencode", FILES);
    opencode.configure(p, url);
    const installed = p.baton(["--json", "hooks", "install", "opencode"]);
    expect(installed.code, installed.stderr).toBe(0);
    mock.play(
      [
        { op: "write", path: "new.txt", content: "fresh\n" },
        { op: "shell", command: "echo made-by-shell > c.txt" },
        { op: "text", text: "Done." },
      ],
      p.root,
    );
    // No harness `baton` on PATH: only Node's directory and the system's.
    p.env.PATH = `${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`;
    run = await p.run(cli, opencode.args("Make the changes."), opencode.env(url));
  }, 300_000);

  afterAll(async () => {
    await mock.stop();
    p?.cleanup();
  });

  test("the turn ran to its end: the write and the shell command happened, nothing was refused", () => {
    expect(run.code, run.stderr.slice(-2000)).toBe(0);
    expect(p.read("new.txt")).toBe("fresh\n");
    expect(p.read("c.txt")).toBe("made-by-shell\n");
    expect(JSON.stringify(mock.requests.map((r) => r.body))).not.toContain("Baton: where this work stands");
  });

  test("Baton saw nothing: no hook ran, no session was started, no checkpoint taken", () => {
    expect(p.captured()).toEqual([]);
    expect(p.baton(["--json", "checkpoints"]).json().error).toMatchObject({ code: "not_found", sessions: [] });
  });
});

/** GitHub Copilot CLI (the real CLI from npm) driven through Baton's hooks by the scripted model (suite.ts). */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { copilot } from "./drivers.js";
import { type AgentRun, Project } from "./harness.js";
import { agentCli, VERSIONS } from "./install.js";
import { MockModel } from "./mock-model.js";
import { agentSuite, FILES } from "./suite.js";

agentSuite(copilot);

// For the GPT-5 models Copilot CLI offers a freeform `apply_patch` instead of `create` and `edit`:
// its preToolUse carries the patch itself, and Baton checkpoints the files it names.
describe(`${VERSIONS.copilot.package}@${VERSIONS.copilot.version} with a GPT-5 model: apply_patch through Baton's hooks`, () => {
  const mock = new MockModel();
  let p: Project;
  let work: AgentRun;
  let checkpoints: any[] = [];
  let afterWork: Record<string, string | undefined> = {};
  let afterUndo: Record<string, string | undefined> = {};
  const env = (url: string) => ({ ...copilot.env(url), COPILOT_MODEL: "gpt-5.4" });
  const files = (): Record<string, string | undefined> => ({ "a.txt": p.read("a.txt"), "p.txt": p.read("p.txt") });

  beforeAll(async () => {
    const cli = agentCli("copilot");
    const url = await mock.start();
    p = new Project("copilot", FILES);
    copilot.configure(p, url);
    const installed = p.baton(["--json", "hooks", "install", "copilot", "--command", "baton"]);
    expect(installed.code, installed.stderr).toBe(0);
    mock.play(
      [
        { op: "write", path: "p.txt", content: "patched\n" },
        { op: "edit", path: "a.txt", old: "one", new: "ONE" },
        { op: "text", text: "Patched." },
      ],
      p.root,
    );
    work = await p.run(cli, copilot.args("Patch the files."), env(url));
    afterWork = files();
    checkpoints = p.baton(["--json", "checkpoints"]).json().checkpoints;
    const sessionId = copilot.sessionId(work);
    mock.play([{ op: "text", text: "Noted." }], p.root);
    const undo = await p.run(cli, copilot.args("undo that", sessionId), env(url));
    expect(undo.code, undo.stderr).toBe(0);
    afterUndo = files();
  }, 300_000);

  afterAll(async () => {
    await mock.stop();
    p?.cleanup();
  });

  test("the model was offered apply_patch, and the patches were applied", () => {
    expect(work.code, work.stderr).toBe(0);
    expect(
      p
        .captured()
        .filter((c) => c.event === "preToolUse")
        .map((c) => c.payload.toolName),
    ).toEqual(["apply_patch", "apply_patch"]);
    expect(afterWork).toEqual({ "a.txt": "ONE\n", "p.txt": "patched\n" });
  });

  test("a targeted checkpoint of the patch's files precedes each patch", () => {
    expect(checkpoints.map((c) => [c.kind, c.toolName])).toEqual([
      ["targeted", "apply_patch"],
      ["targeted", "apply_patch"],
    ]);
  });

  test('"undo that" takes the last patch back', () => {
    expect(afterUndo).toEqual({ "a.txt": "one\n", "p.txt": "patched\n" });
  });
});

/**
 * Codex (the real CLI from npm) with Baton's hooks in the user's own file
 * (`baton hooks install codex --user`): every entry runs `$CODEX_HOME/baton/baton`, the launcher
 * at a fixed place, which runs the installed baton as a program, naming this Node (`--node=`):
 * the baton's shell part answers through the server or hands the hook to that Node. Codex trusts
 * the entries as installed, runs them, and every write and shell command is checkpointed first.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { codex } from "./drivers.js";
import { Project } from "./harness.js";
import { agentCli, REPO } from "./install.js";
import { MockModel } from "./mock-model.js";

describe("Codex: Baton's hooks in the user's file, through the launcher script", () => {
  const mock = new MockModel();
  let p: Project;
  let cli: string;
  let shim = "";

  beforeAll(async () => {
    const url = await mock.start();
    cli = agentCli("codex");
    p = new Project("codex", { "a.txt": "one\n" });
    codex.configure(p, url);
    const installed = p.baton(["--json", "hooks", "install", "codex", "--user"]);
    expect(installed.code, installed.stderr).toBe(0);
    shim = join(p.env.CODEX_HOME as string, "baton", "baton");
    expect(installed.json().hooks.map((h: { command: string }) => h.command)).toContain(`${shim} hook codex PreToolUse`);
    mock.play(
      [
        { op: "write", path: "w.txt", content: "w\n" },
        { op: "shell", command: "echo made > s.txt" },
        { op: "write", path: "x.txt", content: "x\n" },
        { op: "text", text: "Done." },
      ],
      p.root,
    );
    const r = await p.run(cli, codex.args("Do the work."), codex.env(url));
    if (r.code !== 0) throw new Error(`codex exited ${r.code}\n${r.stderr.slice(-3000)}`);
  }, 600_000);

  afterAll(async () => {
    await mock.stop();
    p?.cleanup();
  });

  test("the launcher runs the installed baton, naming this Node, and Codex lists every entry as trusted", async () => {
    expect(readFileSync(shim, "utf8")).toContain(`\nexec ${join(REPO, "bin", "baton.cjs")} --node=${process.execPath} "$@"\n`);
    await codex.expectHooksTrusted?.(p, cli);
  });

  test("each write and shell command was checkpointed before it ran, and nothing failed", () => {
    expect(p.read("w.txt")).toBe("w\n");
    expect(p.read("s.txt")).toBe("made\n");
    const cps = p.baton(["--json", "checkpoints"]).json().checkpoints;
    expect(cps.map((c: { toolName?: string }) => c.toolName).sort()).toEqual(["Bash", "apply_patch", "apply_patch"].sort());
    expect(p.read(".baton/logs/hooks.log") ?? "").toBe("");
    const status = p.baton(["--json", "status"]).json();
    expect(status.crashedRuns ?? []).toEqual([]);
  });
});

/**
 * A tracked file that `.gitignore` matches, changed by a real agent's shell command, then
 * "undo that": Claude Code and Codex (the real CLIs from npm, each with its scripted model).
 * Git's ignore rules apply to untracked files only, and so do the whole-tree checkpoint's: the
 * command's change to `settings.local` (tracked before `*.local` was ignored) is rolled back,
 * and `scratch.local` (untracked, ignored) is neither checkpointed nor removed.
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { openBaton } from "../../src/index.js";
import { claude, codex, type Driver } from "./drivers.js";
import { type AgentRun, Project } from "./harness.js";
import { agentCli } from "./install.js";
import { MockModel } from "./mock-model.js";

const FILES = { "app.js": "app\n", "settings.local": "port=1\n", "README.md": "# demo\n" };

for (const d of [claude, codex] as Driver[]) {
  describe(`${d.agent}: a tracked file .gitignore matches, changed by a shell command, then "undo that"`, () => {
    const mock = new MockModel();
    let p: Project;
    let cli: string;
    let url: string;
    let work: AgentRun;
    const files: Record<string, Record<string, string | undefined>> = {};

    async function turn(prompt: string, steps: Parameters<MockModel["play"]>[0], resume?: string): Promise<AgentRun> {
      mock.play(steps, p.root);
      const r = await p.run(cli, d.args(prompt, resume), d.env(url));
      if (r.code !== 0) throw new Error(`${d.agent} exited ${r.code}\n${r.stdout.slice(-3000)}\n${r.stderr.slice(-3000)}`);
      return r;
    }
    const snapshot = () => Object.fromEntries(["settings.local", "scratch.local", "app.js"].map((rel) => [rel, p.read(rel)]));

    beforeAll(async () => {
      cli = agentCli(d.agent);
      url = await mock.start();
      p = new Project(d.agent, FILES); // commits every file: settings.local is tracked
      p.write(".gitignore", "*.local\n");
      p.git(["add", ".gitignore"]);
      p.git(["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "ignore local files"]);
      expect(p.baton(["session", "start", "--flow", "task"]).code).toBe(0);
      d.configure(p, url);
      const hooks = p.baton(["hooks", "install", d.agent, "--command", "baton"]);
      expect(hooks.code, hooks.stderr).toBe(0);
      await d.expectHooksTrusted?.(p, cli);
      work = await turn("Point the app at port 2.", [
        { op: "shell", command: "echo port=2 > settings.local && echo scratch > scratch.local" },
        { op: "text", text: "Done." },
      ]);
      files.work = snapshot();
      await turn("undo that", [{ op: "text", text: "Noted." }], d.sessionId(work));
      files.undo = snapshot();
    }, 300_000);

    afterAll(async () => {
      await mock.stop();
      p?.cleanup();
    });

    test("the shell command ran, after a whole-tree checkpoint that took the tracked file and not the untracked one", async () => {
      expect(files.work).toEqual({ "settings.local": "port=2\n", "scratch.local": "scratch\n", "app.js": "app\n" });
      const cps = p.baton(["--json", "checkpoints"]).json().checkpoints;
      const tree = cps.find((c: any) => c.kind === "tree");
      expect(tree, JSON.stringify(cps)).toBeDefined();
      const b = await openBaton({ root: p.root });
      try {
        const files = (await b.checkpoints.get(tree.id)).files;
        expect(files.map((f) => f.path)).not.toContain("scratch.local");
        // The version before the command ran: what "undo that" puts back.
        const taken = files.find((f) => f.path === "settings.local");
        expect(taken && "hash" in taken ? taken.hash : taken).toBe(createHash("sha256").update("port=1\n").digest("hex"));
      } finally {
        await b.close();
      }
    });

    test('"undo that" brings the tracked, ignored file back and leaves the untracked one as it is', () => {
      expect(files.undo).toEqual({ "settings.local": "port=1\n", "scratch.local": "scratch\n", "app.js": "app\n" });
    });
  });
}

/**
 * The real Codex and Gemini CLI with Baton's hooks as `baton hooks install` writes them for a
 * project (`baton hook <agent> <Event>` from PATH) and the workspace's server running: every
 * hook is answered by the shell's hook client (bin/baton.cjs run as a script, POST
 * /v1/hook-clients/...) and starts no Node. A `node` first on PATH logs every start, so the test
 * sees any hook that ran Node.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { codex, type Driver, gemini } from "./drivers.js";
import { CLI, Project } from "./harness.js";
import { agentCli } from "./install.js";
import { MockModel, type Step } from "./mock-model.js";

const CALLS = 6;

for (const d of [codex, gemini] as Driver[]) {
  describe(`${d.agent}: a tool call's hooks start no Node`, () => {
    const mock = new MockModel();
    let p: Project;
    let nodeStarts: string[] = [];
    let server: ChildProcess | undefined;

    beforeAll(async () => {
      const url = await mock.start();
      const cli = agentCli(d.agent);
      p = new Project(d.agent, { "a.txt": "one\n" });
      d.configure(p, url);
      const hooks = p.baton(["--json", "hooks", "install", d.agent, "--command", "baton"]);
      expect(hooks.code, hooks.stderr).toBe(0);
      await d.trustHooks?.(p, cli, true);
      // Every Node started from PATH (the agent's own, a hook's) says so, then runs.
      const log = join(p.base, "node-starts.log");
      writeFileSync(
        join(p.bin, "node"),
        `#!/bin/sh\nprintf '%s\\n' "$*" >> ${JSON.stringify(log)}\nexec ${JSON.stringify(process.execPath)} "$@"\n`,
        { mode: 0o755 },
      );
      const steps: Step[] = [];
      for (let i = 0; i < CALLS; i++)
        steps.push(
          i % 2 === 0 ? { op: "write", path: `gen/f${i}.txt`, content: `file ${i}\n` } : { op: "shell", command: `true step-${i}` },
        );
      mock.play([...steps, { op: "text", text: "Done." }], p.root);
      // The workspace's server, running before the turn (a session-start hook starts one too, and
      // the calls before it listens are Node's): the tool calls' hooks find it.
      server = spawn(process.execPath, [CLI, "serve", "--json", "--root", p.root], {
        cwd: p.root,
        env: { ...p.env, BATON_CAPTURE_DIR: "" },
        stdio: ["ignore", "pipe", "inherit"],
      });
      await new Promise<void>((resolve, reject) => {
        server?.stdout?.once("data", () => resolve());
        server?.once("exit", (code) => reject(new Error(`baton serve exited ${code}`)));
      });
      const r = await p.run(cli, d.args("Do the work."), { ...d.env(url), BATON_HOOK_SERVER: "use" });
      if (r.code !== 0) throw new Error(`${d.agent} exited ${r.code}\n${r.stderr.slice(-3000)}`);
      nodeStarts = existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : [];
    }, 600_000);

    afterAll(async () => {
      await mock.stop();
      if (server && server.exitCode === null) {
        const exited = new Promise((r) => server?.once("exit", r));
        server.kill("SIGTERM");
        await exited;
      }
      p?.cleanup();
    });

    test("every call is checkpointed and recorded, and no hook started Node", () => {
      expect(existsSync(join(p.root, ".baton", "server.json")), "the server ran").toBe(true);
      const checkpoints = p.baton(["--json", "checkpoints"]).json().checkpoints as unknown[];
      expect(checkpoints).toHaveLength(CALLS);
      const nodes = p.baton(["--json", "ledger", "list"]).json().nodes as { toolName: string }[];
      expect(nodes.length).toBeGreaterThanOrEqual(CALLS);
      // The prompt was answered too: it started the agent's run (and the turn's end ended it).
      const events = p.baton(["export"]).stdout;
      expect(events).toContain('"run:started"');
      expect(events).toContain('"run:ended"');
      expect(
        nodeStarts.filter((l) => / hook \w+ /.test(l)),
        nodeStarts.join("\n"),
      ).toEqual([]);
      expect(p.read(".baton/logs/hooks.log") ?? "").toBe("");
    });
  });
}

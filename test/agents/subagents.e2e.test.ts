/**
 * Subagents with the real agents (core/lanes.ts): Claude Code's Agent tool (a background
 * subagent), OpenCode's task tool (a child session), Copilot CLI's task tool (a session of its
 * own naming its parent) and Qwen Code's agent tool, each run by the agent itself against the
 * scripted model. A subagent works in a lane below its parent's (`<agent>:<session>/<subagent>`),
 * one family with it:
 *
 * 1. The parent writes p.txt, then hands a step to a subagent whose instruction holds the words
 *    "undo that" (the parent's words to its helper, not the user's: nothing is rolled back); the
 *    subagent writes s.txt and waits on its model while the test looks at the lanes: both lanes
 *    of the family listed, each claiming what it wrote.
 * 2. "undo that" from the user in the resumed session steps back through the family's
 *    checkpoints: the subagent's write is its last step, so s.txt goes and p.txt stays.
 */
import { cpSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { claude, copilot, type Driver, opencode, qwen } from "./drivers.js";
import { type AgentRun, hookRunning, KEEP, Project } from "./harness.js";
import { agentCli, VERSIONS } from "./install.js";
import { gate, MockModel } from "./mock-model.js";

const FILES: Record<string, string> = { "a.txt": "one\n", "README.md": "# demo\n" };
/** How the scripted model knows the subagent's requests: their first message holds the parent's instruction. */
const MARKER = "Helper task 7f3";
/** The parent's instruction to its subagent: "undo that" as a whole clause, which from the user would roll back a step. */
const INSTRUCTION = `${MARKER}: undo that. Then write s.txt.`;
/** The agents whose subagent tool runs the subagent in the background: the parent's turn ends while it works. */
const BACKGROUND: ReadonlySet<string> = new Set(["claude", "qwen"]);

/** Polls `check` until it holds (true) or `ms` passed (false). */
async function until(check: () => boolean, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((ok) => setTimeout(ok, 100))) if (check()) return true;
  return check();
}

/** How long the test waits for the subagent to be mid-turn before it looks anyway (and fails). */
const HOLD_MS = 90_000;

for (const d of [claude, opencode, copilot, qwen] satisfies Driver[]) {
  const pin = VERSIONS[d.agent];
  describe(`${pin.package}@${pin.version}: a subagent works in its parent's lane family`, () => {
    const mock = new MockModel();
    let p: Project;
    let cli = "";
    let sessionId: string | undefined;
    let lanesMidTurn: any;
    let waited = true;
    let parentStopped = true;
    const files: Record<string, Record<string, string | undefined>> = {};

    function keep(name: string, r: AgentRun): void {
      mkdirSync(join(p.base, "runs"), { recursive: true });
      writeFileSync(join(p.base, "runs", `${name}.stdout`), r.stdout);
      writeFileSync(join(p.base, "runs", `${name}.stderr`), r.stderr);
      if (r.code !== 0)
        throw new Error(`${d.agent} turn "${name}" exited ${r.code}\nstdout: ${r.stdout.slice(-3000)}\nstderr: ${r.stderr.slice(-3000)}`);
    }
    const snapshot = () => ({ "a.txt": p.read("a.txt"), "p.txt": p.read("p.txt"), "s.txt": p.read("s.txt") });

    beforeAll(async () => {
      cli = agentCli(d.agent);
      await mock.start();
      p = new Project(d.agent, FILES);
      const s = p.baton(["--json", "session", "start", "--flow", "task", "--title", "Hand a step to a helper"]);
      expect(s.code, s.stderr).toBe(0);
      expect(p.baton(["event", "start"]).code).toBe(0);
      d.configure(p, mock.url);
      const hooks = p.baton(["hooks", "install", d.agent, "--command", "baton"]);
      expect(hooks.code, hooks.stderr).toBe(0);

      // The parent writes p.txt and hands s.txt to a subagent; the subagent (its own script:
      // its requests carry the instruction it was given) writes s.txt, and its answer after the
      // write waits until the test has read the lanes. Claude Code runs the subagent in the
      // background (its tool answers at once), OpenCode waits for it: the parent's own next
      // answers are not held, whatever they wait on.
      const release = gate();
      mock.play(
        [
          { op: "write", path: "p.txt", content: "parent\n" },
          { op: "task", description: "Write s.txt", prompt: INSTRUCTION },
          { op: "text", text: "Handed s.txt to a helper." },
        ],
        p.root,
      );
      mock.playSubagent(MARKER, [
        { op: "write", path: "s.txt", content: "sub\n" },
        { op: "text", text: "Wrote s.txt.", after: release.opened },
      ]);
      const work = p.run(cli, d.args("Write p.txt, then have a helper write s.txt.", undefined), d.env(mock.url));
      work.catch(() => {});
      try {
        waited = await mock.subagentArrival(2, HOLD_MS).then(
          () => true,
          () => false,
        );
        // Where the subagent runs in the background, the parent's turn ends (its Stop hook)
        // while the subagent still works: the lanes are read after that.
        if (BACKGROUND.has(d.agent))
          parentStopped = await until(() => p.captured().some((c) => c.event === "Stop") && !hookRunning(p.root, d.agent, "Stop"), HOLD_MS);
        lanesMidTurn = p.baton(["--json", "lanes"]).json();
      } finally {
        release.open();
      }
      const r = await work;
      keep("work", r);
      sessionId = d.sessionId(r);
      files.work = snapshot();
      mock.play([{ op: "text", text: "Noted." }], p.root);
      keep("undo", await p.run(cli, d.args("undo that", sessionId), d.env(mock.url)));
      files.undo = snapshot();
    }, 300_000);

    afterAll(async () => {
      await mock.stop();
      if (p && KEEP) {
        writeFileSync(join(p.base, "requests.jsonl"), mock.requests.map((r) => JSON.stringify(r)).join("\n"));
        cpSync(p.base, join(KEEP, `subagent-${d.agent}`), { recursive: true });
      }
      p?.cleanup();
    });

    test("the subagent ran: its request offered tools and its write happened; no words of the parent's rolled anything back", () => {
      expect(waited, "the subagent's second request arrived").toBe(true);
      expect(parentStopped, "the parent's turn ended while its background subagent worked").toBe(true);
      expect(files.work).toEqual({ "a.txt": "one\n", "p.txt": "parent\n", "s.txt": "sub\n" });
    });

    test("mid-turn, the parent and the subagent each have a lane of the family, claiming what each wrote", () => {
      expect(sessionId, "the agent's JSON output names its session").toBeTruthy();
      const top = `${d.agent}:${sessionId}`;
      const lanes: any[] = lanesMidTurn.lanes ?? [];
      const byId = Object.fromEntries(lanes.map((l) => [l.lane, l]));
      const subs = lanes.filter((l) => typeof l.lane === "string" && l.lane.startsWith(`${top}/`));
      expect(Object.keys(byId), JSON.stringify(lanes)).toContain(top);
      expect(subs.length, JSON.stringify(lanes)).toBe(1);
      expect([...(byId[top]?.claims?.files ?? [])].sort()).toEqual(["p.txt"]);
      expect([...(subs[0]?.claims?.files ?? [])].sort()).toEqual(["s.txt"]);
    });

    test("\"undo that\" from the user steps back the family's last step: the subagent's write", () => {
      expect(files.undo).toEqual({ "a.txt": "one\n", "p.txt": "parent\n", "s.txt": undefined });
    });

    test("Baton logged no failure of its own", () => {
      expect(p.read(".baton/logs/hooks.log") ?? "").toBe("");
    });
  });
}

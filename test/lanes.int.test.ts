/**
 * Several agents at once in one checkout (core/lanes.ts): each agent session works in its own
 * lane of the one task session. Played with the payloads the real Claude Code and Codex send
 * (test/lane-agents.ts), on a real workspace: the three failures the issue saw with two Claude
 * Code sessions and a Codex session, and what must hold around them.
 */
import { existsSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { codex } from "../src/core/hooks/codex.js";
import { copilot } from "../src/core/hooks/copilot.js";
import { opencode } from "../src/core/hooks/opencode.js";
import { cleanupDirs, cli, tempBaton, writeConfig } from "./helpers.js";
import { agentSession } from "./lane-agents.js";

afterEach(() => cleanupDirs());

const read = (root: string, p: string) => readFileSync(join(root, p), "utf8");

async function three() {
  const { baton: b, root } = await tempBaton();
  writeFileSync(join(root, "shared.txt"), "v0\n");
  const a = agentSession(b, root, "claude", "0a1b2c3d-aaaa");
  const c = agentSession(b, root, "claude", "0a1b2c3d-cccc");
  const x = agentSession(b, root, "codex", "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b");
  for (const s of [a, c, x]) await s.start();
  const [sid] = (await b.sessions.list()).map((s) => s.id);
  return { b, root, a, c, x, sid: sid as string };
}

describe("lanes: several agents in one checkout", () => {
  it("every agent session joins the one session in a lane of its own; status and the session start show the others", async () => {
    const { b, root, a, c, x, sid } = await three();
    try {
      expect((await b.sessions.list()).length, "one task session, not one per agent session").toBe(1);
      const snap = await b.sessions.snapshot(sid);
      expect(Object.keys(snap.facets.lanes ?? {}).sort()).toEqual([a.lane, c.lane, x.lane].sort());
      expect(snap.context, "no agent session id is written over another's in the session's context").toEqual({});
      await a.write("src/a.ts", "a1\n");
      const st = (await b.sessions.status({ sessionId: sid })).sessions[0];
      const mine = st?.lanes?.find((l) => l.lane === a.lane);
      expect(mine).toMatchObject({ agent: "Claude Code", status: "working", claims: { count: 1, files: ["src/a.ts"] } });
      expect(st?.lanes?.map((l) => l.lane).sort()).toEqual([a.lane, c.lane, x.lane].sort());
      // A fourth agent session is told who else works here, and what they are writing.
      const d = agentSession(b, root, "codex", "0199ffff-0000-7000-8000-000000000001");
      const ctx = (await d.start()).context ?? "";
      expect(ctx).toContain("## Other agents working here now");
      expect(ctx).toContain(`You are lane ${d.lane}`);
      expect(ctx).toMatch(new RegExp(`Claude Code \\(lane ${a.lane}[^\\n]*writing src/a\\.ts`));
      const lanes = cli(["lanes", "--json", "--root", root]).json() as { lanes: { lane: string }[] };
      expect(lanes.lanes.map((l) => l.lane)).toContain(a.lane);
    } finally {
      await b.close();
    }
  });

  it("'undo that' in one Claude Code session rolls back its own write, never the other session's", async () => {
    const { b, root, a, c } = await three();
    try {
      writeFileSync(join(root, "a.txt"), "a0\n");
      await a.write("a.txt", "a1\n");
      await c.write("c.txt", "c1\n"); // the other session, afterwards: the newest step of the workspace
      const r = await a.prompt("undo that");
      expect(r.userMessage).toMatch(/^Baton rolled back/);
      expect(read(root, "a.txt"), "the first session's own edit is undone").toBe("a0\n");
      expect(read(root, "c.txt"), "the second session's new file stays").toBe("c1\n");
    } finally {
      await b.close();
    }
  });

  it("a spiral pauses the lane that looped; the other sessions go on writing", async () => {
    const { b, a, c, x } = await three();
    try {
      await a.write("a.txt", "a1\n");
      let last: Awaited<ReturnType<typeof a.bash>> = {};
      for (let i = 0; i < 3; i++) last = await a.bash("npm test", { fail: "Error: Cannot find module './db' at src/app.ts:3:1" });
      expect(last.after?.context).toContain("Baton paused session");
      expect((await a.write("a.txt", "a2\n")).denied, "the looping session is held").toContain("Baton paused session");
      expect((await c.write("c.txt", "c1\n")).denied, "another Claude Code session is not").toBeUndefined();
      expect((await x.write("x.txt", "x1\n")).denied, "nor is Codex").toBeUndefined();
      // The proposed rollback point is the looping lane's own checkpoint before the loop.
      const sid = (await b.sessions.list())[0]?.id as string;
      const st = (await b.sessions.status({ sessionId: sid })).sessions[0];
      expect(st?.spiral?.lane).toBe(a.lane);
      const cp = st?.spiral?.proposedCheckpoint as string;
      expect((await b.checkpoints.list(sid)).find((k) => k.id === cp)?.lane).toBe(a.lane);
      expect(st?.nextAction.command).toContain(`--lane ${a.lane}`);
      // "unpause" typed in the paused session lifts its pause only.
      expect((await a.prompt("unpause")).userMessage).toMatch(/unpaused/);
      expect((await a.write("a.txt", "a3\n")).denied).toBeUndefined();
    } finally {
      await b.close();
    }
  });

  it("a write to a file another working agent wrote this turn is refused once, naming it; the retry goes through", async () => {
    const { b, root, a, x } = await three();
    try {
      await a.write("shared.txt", "claude's\n");
      const first = await x.write("shared.txt", "codex's\n");
      expect(first.denied).toContain("another agent working in this checkout right now wrote this file");
      expect(first.denied).toContain(`Claude Code (lane ${a.lane}`);
      expect(first.denied).toMatch(/written \d+ s ago/);
      expect(read(root, "shared.txt"), "the refused write changed nothing").toBe("claude's\n");
      const again = await x.write("shared.txt", "codex's\n");
      expect(again.denied, "a refused agent that tries again is let through: it never loops").toBeUndefined();
      expect(again.context).toContain("also wrote this file");
      expect(read(root, "shared.txt")).toBe("codex's\n");
      const sid = (await b.sessions.list())[0]?.id as string;
      const notes = (await b.events.list(sid)).events.filter((e) => e.type === "claim:noticed");
      expect(notes.map((e) => e.data.outcome)).toEqual(["refused", "warned"]);
      expect(notes[0]?.data.claims).toEqual([{ path: "shared.txt", holder: a.lane, at: expect.any(String) }]);
    } finally {
      await b.close();
    }
  });

  it("a write through a link claims the file it leads to: another agent writing AGENTS.md after CLAUDE.md -> AGENTS.md is told", async () => {
    const { b, root, a, x } = await three();
    try {
      writeFileSync(join(root, "AGENTS.md"), "v0\n");
      symlinkSync("AGENTS.md", join(root, "CLAUDE.md"));
      await a.write("CLAUDE.md", "claude's, through the link\n");
      expect(read(root, "AGENTS.md")).toBe("claude's, through the link\n");
      const first = await x.write("AGENTS.md", "codex's\n");
      expect(first.denied).toContain("another agent working in this checkout right now wrote this file");
      expect(read(root, "AGENTS.md")).toBe("claude's, through the link\n");
      // Its turn names both: the link the agent wrote and the file that changed.
      const sid = (await b.sessions.list())[0]?.id as string;
      const turn = (await b.events.list(sid)).events.find((e) => e.type === "turn:recorded" && e.data.lane === a.lane);
      expect(((turn?.data.files ?? []) as { path: string }[]).map((f) => f.path)).toEqual(["CLAUDE.md", "AGENTS.md"]);
    } finally {
      await b.close();
    }
  });

  it("a patch that deletes or moves a link away claims nothing through it: the file it leads to is not refused for nothing", async () => {
    const { b, root, a } = await three();
    try {
      writeFileSync(join(root, "AGENTS.md"), "v0\n");
      symlinkSync("AGENTS.md", join(root, "CLAUDE.md"));
      await a.write("AGENTS.md", "claude's\n");
      let n = 0;
      const patch = (...lines: string[]) =>
        b.agents.handle(
          codex.parse(
            "PreToolUse",
            {
              session_id: "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
              transcript_path: null,
              cwd: root,
              hook_event_name: "PreToolUse",
              model: "gpt-5-codex",
              turn_id: "turn-1",
              permission_mode: "default",
              tool_name: "apply_patch",
              tool_input: { command: ["*** Begin Patch", ...lines, "*** End Patch", ""].join("\n") },
              tool_use_id: `call_unlink_${++n}`,
            },
            root,
          ),
          { agentPid: process.pid, requestId: `req-unlink-${n}` },
        );
      expect((await patch("*** Delete File: CLAUDE.md")).deny, "deleting the link").toBeUndefined();
      expect((await patch("*** Update File: CLAUDE.md", "*** Move to: docs/CLAUDE.md")).deny, "moving the link").toBeUndefined();
      // Writing through it still is a write of AGENTS.md, which Claude Code holds: here before the
      // same patch deletes it (named another way), which does not make the write go away.
      const through = await patch(
        "*** Update File: CLAUDE.md",
        "@@",
        "-claude's",
        "+codex's",
        `*** Delete File: ${join(root, "CLAUDE.md")}`,
      );
      expect(through.deny?.reason).toContain("another agent working in this checkout right now wrote this file");
    } finally {
      await b.close();
    }
  });

  it("two agent sessions whose calls carry the same id (a model server numbering them) each get their own checkpoint, turn and ledger node", async () => {
    const { b, root, a, c, x, sid } = await three();
    try {
      // Claude Code and Codex take a call's id from the model's answer: a local model server may
      // number them per conversation, so two sessions send `call_1` alike.
      await a.write("a.txt", "a1\n", "call_1");
      await c.write("c.txt", "c1\n", "call_1");
      await x.write("x.txt", "x1\n", "call_1");
      const cps = (await b.checkpoints.list(sid)).filter((k) => k.kind === "targeted");
      expect(cps.map((k) => k.lane).sort(), "one checkpoint per session, not one for the first").toEqual([a.lane, c.lane, x.lane].sort());
      const turns = (await b.events.list(sid)).events.filter((e) => e.type === "turn:recorded");
      expect(turns.map((e) => e.data.lane).sort()).toEqual([a.lane, c.lane, x.lane].sort());
      expect(new Set(turns.map((e) => e.data.checkpointId)).size, "each turn names its own session's checkpoint").toBe(3);
      const nodes = await b.ledger.list(sid);
      expect(nodes.length).toBe(3);
      // The same call answered twice (a hook retried) is still one call.
      await c.write("c.txt", "c1\n", "call_1");
      expect((await b.checkpoints.list(sid)).filter((k) => k.kind === "targeted").length).toBe(3);
      expect((await b.events.list(sid)).events.filter((e) => e.type === "turn:recorded").length).toBe(3);
      expect(read(root, "c.txt")).toBe("c1\n");
    } finally {
      await b.close();
    }
  });

  it("a refused write's hook answered twice refuses twice (one notice); the agent's own retry is its next call", async () => {
    const { b, a, x } = await three();
    try {
      await a.write("shared.txt", "a\n");
      expect((await x.write("shared.txt", "x\n", "call_same")).denied).toContain("another agent working");
      expect((await x.write("shared.txt", "x\n", "call_same")).denied, "the same call, retried by the hook process").toContain(
        "another agent working",
      );
      const sid = (await b.sessions.list())[0]?.id as string;
      expect((await b.events.list(sid)).events.filter((e) => e.type === "claim:noticed")).toHaveLength(1);
      expect((await x.write("shared.txt", "x\n")).denied).toBeUndefined();
    } finally {
      await b.close();
    }
  });

  it("another agent may not clear a pause, end a lane or roll back other agents' work from its shell", async () => {
    const { b, root, a, x } = await three();
    try {
      for (let i = 0; i < 3; i++) await a.bash("npm test", { fail: "Error: Cannot find module './db' at src/app.ts:3:1" });
      for (const cmd of [
        "baton resume --unpause",
        `baton rollback --lane ${a.lane}`,
        "baton rollback --all-lanes",
        `baton event lane:ended --data '{"lane":"${a.lane}"}'`,
      ])
        expect((await x.bash(cmd)).denied, cmd).toContain("is the user's decision");
      expect((await x.bash("baton lanes --json")).denied).toBeUndefined();
      // A subagent works for its parent: the parent's pause stops it too.
      const sub = agentSession(b, root, "claude", "0a1b2c3d-aaaa", { subagent: "helper-1" });
      expect((await sub.write("sub.txt", "s\n")).denied).toContain("Baton paused session");
    } finally {
      await b.close();
    }
  });

  it("a claim check that fails never costs the write its checkpoint: a bad setting, or over 100 claims", async () => {
    const { b, root, a, x } = await three();
    try {
      const many = Array.from({ length: 120 }, (_, i) => `gen/f${i}.ts`);
      const sid = (await b.sessions.list())[0]?.id as string;
      await b.turns.record(sid, { tool: "Write", files: many.slice(0, 100), lane: a.lane });
      await b.turns.record(sid, { tool: "Write", files: many.slice(100), lane: a.lane });
      writeConfig(root, { lanes: { claims: "sometimes" } });
      const before = (await b.checkpoints.list(sid)).length;
      expect((await x.write("gen/f1.ts", "x\n")).denied, "a bad setting: the write goes on").toBeUndefined();
      expect((await b.checkpoints.list(sid)).length).toBe(before + 1);
      writeConfig(root, "{}");
      // One patch over 120 claimed files (more than a notice lists): refused once, nothing lost.
      const patch = {
        agent: "codex" as const,
        native: "PreToolUse",
        cwd: root,
        agentSessionId: "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
        kind: "before_tool" as const,
        tool: { name: "apply_patch", kind: "write" as const, files: many, input: {}, callId: "call_many" },
      };
      const r = await b.agents.handle(patch);
      expect(r.deny?.reason).toContain("and 110 more");
      expect((await b.events.list(sid)).events.filter((e) => e.type === "claim:noticed").at(-1)?.data.claims).toHaveLength(100);
      const retry = await b.agents.handle({ ...patch, tool: { ...patch.tool, callId: "call_many_2" } });
      expect(retry.deny).toBeUndefined();
      expect((await b.checkpoints.list(sid)).length, "the retry's checkpoint").toBe(before + 2);
    } finally {
      await b.close();
    }
  });

  it("claims end with the holder's turn, and the session's end; a subagent's writes are its parent's", async () => {
    const { b, root, a, c, x } = await three();
    try {
      await a.write("shared.txt", "a\n");
      await a.stop();
      expect((await x.write("shared.txt", "x\n")).denied, "the turn ended: no claim").toBeUndefined();
      await c.prompt("go on");
      await c.write("c.txt", "c\n");
      await c.end();
      expect((await x.write("c.txt", "x\n")).denied, "the session ended: no claim").toBeUndefined();
      // A subagent of a is its own lane but part of a's family: no claim between them.
      await a.prompt("use a subagent");
      await a.write("sub.txt", "parent\n");
      const sub = agentSession(b, root, "claude", "0a1b2c3d-aaaa", { subagent: "a91c" });
      expect((await sub.write("sub.txt", "child\n")).denied).toBeUndefined();
      expect((await x.write("sub.txt", "x\n")).denied, "the family's claim holds for others").toContain("Claude Code");
      const sid = (await b.sessions.list())[0]?.id as string;
      expect(Object.keys((await b.sessions.snapshot(sid)).facets.lanes ?? {})).toContain(`${a.lane}/a91c`);
    } finally {
      await b.close();
    }
  });

  it("a turn that ends with a subagent still at work in the background keeps the family's run and claims until a turn ends with none in flight", async () => {
    const { b, root, a, x, sid } = await three();
    try {
      const lanes = async () => {
        const st = (await b.sessions.status({ sessionId: sid })).sessions[0];
        return Object.fromEntries((st?.lanes ?? []).map((l) => [l.lane, { status: l.status, files: l.claims?.files ?? [] }]));
      };
      // Claude Code 2.1 runs an Agent call in the background: the parent's turn ends (Stop, the
      // subagent listed in background_tasks) while the subagent goes on writing.
      await a.prompt("write p.txt and have a helper write s.txt");
      await a.write("p.txt", "parent\n");
      const sub = agentSession(b, root, "claude", "0a1b2c3d-aaaa", { subagent: "a91c" });
      await a.stop({ background: ["a91c"] });
      expect((await sub.write("s.txt", "child\n")).denied).toBeUndefined();
      expect(await lanes()).toMatchObject({
        [a.lane]: { status: "working", files: ["p.txt"] },
        [sub.lane]: { files: ["s.txt"] },
      });
      expect((await x.write("s.txt", "x\n")).denied, "another agent is told, once").toContain("Claude Code");
      // The subagent's end wakes the session (a task-notification prompt); that turn ends with nothing in flight.
      await a.prompt(
        "<task-notification>\n<task-id>a91c</task-id>\n<status>completed</status>\n<result>Done.</result>\n</task-notification>",
      );
      await a.stop();
      const after = await lanes();
      expect(after[a.lane]?.files, "the run ended: no claim").toEqual([]);
      expect(after[sub.lane]?.files ?? []).toEqual([]);
      expect(read(root, "p.txt")).toBe("parent\n");
    } finally {
      await b.close();
    }
  });

  it("a turn left with a background subagent at work keeps its run alive from its end: the sweep finds nothing to mark crashed", async () => {
    let t = Date.parse("2026-11-30T08:00:00Z");
    const { baton: b, root } = await tempBaton({ now: () => new Date(t) });
    try {
      const a = agentSession(b, root, "claude", "0a1b2c3d-aaaa");
      await a.start();
      await a.prompt("have a helper refactor the parser");
      await a.write("p.txt", "parent\n");
      t += 90 * 60_000;
      await a.stop({ background: ["a91c"] });
      t += 60 * 60_000; // 2 h 30 after the prompt, 1 h after the turn's end
      const [sid] = (await b.sessions.list()).map((s) => s.id);
      expect(await b.runs.detectCrashed({ sessionId: sid as string })).toEqual([]);
      t += 61 * 60_000; // 2 h 1 after the turn's end, and no sign of life since
      expect((await b.runs.detectCrashed({ sessionId: sid as string })).length).toBe(1);
    } finally {
      await b.close();
    }
  });

  it("a shell command that changes a file another working agent wrote is reported to both agents, once", async () => {
    const { root, a, x, b } = await three();
    try {
      await a.write("shared.txt", "claude's\n");
      const shell = await x.bash("sed -i s/claude/codex/ shared.txt", { run: () => writeFileSync(join(root, "shared.txt"), "codex's\n") });
      expect(shell.after?.context).toContain("this shell command changed files another agent working in this checkout right now wrote");
      expect(shell.after?.context).toMatch(new RegExp(`shared\\.txt: written \\d+ s ago by Claude Code \\(lane ${a.lane}`));
      expect(shell.after?.userMessage).toContain("changed 1 file(s) another agent is working on (shared.txt)");
      const again = await x.bash("ls", {});
      expect(again.after?.context ?? "", "told once").not.toContain("shared.txt");
      const next = await a.write("a.txt", "a\n");
      expect(next.after.context).toContain(
        `another agent's shell command changed files you wrote this turn: shared.txt (by Codex (lane ${x.lane}`,
      );
      expect((await a.write("a2.txt", "a\n")).after.context ?? "", "the holder is told once").not.toContain("shared.txt");
      const sid = (await b.sessions.list())[0]?.id as string;
      const notes = (await b.events.list(sid)).events.filter((e) => e.type === "claim:noticed");
      expect(notes.map((e) => [e.data.lane, e.data.outcome])).toEqual([[x.lane, "shell"]]);
    } finally {
      await b.close();
    }
  });

  it("an agent's undo keeps a file another live agent changed since, and says who; a person's rollback takes it back and names the lane", async () => {
    const { b, root, a, x } = await three();
    try {
      await a.write("shared.txt", "a1\n");
      await a.stop();
      await x.write("shared.txt", "x1\n"); // Codex changes it after a's step
      await a.prompt("go on");
      const undo = await a.prompt("undo that");
      expect(read(root, "shared.txt"), "Codex's change is not reverted by Claude Code's undo").toBe("x1\n");
      expect(undo.context).toContain(`Codex (lane ${x.lane}`);
      const sid = (await b.sessions.list())[0]?.id as string;
      const before = (await b.checkpoints.list(sid)).find((k) => k.lane === a.lane && k.kind === "targeted")?.id as string;
      const preview = await b.checkpoints.rollback(sid, { to: before, dryRun: true });
      expect(preview.lanes?.map((l) => l.lane)).toEqual([x.lane]);
      expect(preview.warnings.join("\n")).toContain(`this takes back work of Codex (lane ${x.lane}`);
      // From a terminal: a person's rollback (no agent session in its environment) is the whole session's.
      const r = cli(["rollback", "--to", preview.target.id, "--json", "--root", root], { env: { CLAUDE_CODE_SESSION_ID: "" } });
      expect(r.code, r.stderr).toBe(0);
      expect(read(root, "shared.txt")).toBe("v0\n");
    } finally {
      await b.close();
    }
  });

  it("`baton rollback` run by an agent (its shell names its session) steps back through that agent's own lane", async () => {
    const { b, root, a, c } = await three();
    try {
      await a.write("a.txt", "a1\n");
      await c.write("c.txt", "c1\n");
      const r = cli(["rollback", "--json", "--root", root], { env: { CLAUDE_CODE_SESSION_ID: "0a1b2c3d-aaaa" } });
      expect(r.code, r.stderr).toBe(0);
      expect(r.json()).toMatchObject({ lane: a.lane });
      expect(existsSync(join(root, "a.txt")), "the agent's own new file is undone").toBe(false);
      expect(read(root, "c.txt"), "the other session's is not").toBe("c1\n");
      const bad = cli(["rollback", "--lane", "not a lane", "--json", "--root", root]);
      expect(bad.code).not.toBe(0);
      expect(bad.stderr + bad.stdout).toMatch(/lane \\?"not a lane\\?" is invalid/);
    } finally {
      await b.close();
    }
  });

  it("Qwen Code beside Claude Code: each its own lane; `baton rollback` from Qwen Code's shell (QWEN_CODE_SESSION_ID) steps back through its lane only", async () => {
    const { baton: b, root } = await tempBaton();
    try {
      const q = agentSession(b, root, "qwen", "6b1f8eed-47b8-425b-a842-d9f22af731d1");
      const a = agentSession(b, root, "claude", "0a1b2c3d-aaaa");
      await q.start();
      await a.start();
      await q.write("q.txt", "q1\n");
      await a.write("a.txt", "a1\n");
      const sid = (await b.sessions.list())[0]?.id as string;
      expect(Object.keys((await b.sessions.snapshot(sid)).facets.lanes ?? {}).sort()).toEqual([a.lane, q.lane].sort());
      const r = cli(["rollback", "--json", "--root", root], { env: { QWEN_CODE_SESSION_ID: "6b1f8eed-47b8-425b-a842-d9f22af731d1" } });
      expect(r.code, r.stderr).toBe(0);
      expect(r.json()).toMatchObject({ lane: q.lane });
      expect(existsSync(join(root, "q.txt")), "Qwen Code's own new file is undone").toBe(false);
      expect(read(root, "a.txt"), "Claude Code's is not").toBe("a1\n");
    } finally {
      await b.close();
    }
  });

  it("Copilot CLI beside Claude Code: its sessionId is its lane; `baton rollback` from its shell (COPILOT_AGENT_SESSION_ID) steps back through its lane only", async () => {
    const { baton: b, root } = await tempBaton();
    try {
      const sid = "3690133e-c311-42db-8396-5d02800f8916";
      let n = 0;
      // Its payloads as the real CLI sends them (test/fixtures/agents/copilot/): no call id, the send time instead.
      const handle = (event: string, payload: Record<string, unknown>) =>
        b.agents.handle(copilot.parse(event, { sessionId: sid, timestamp: 1795966349568 + ++n, cwd: root, ...payload }, root), {
          agentPid: process.pid,
          requestId: `req-copilot-${n}`,
        });
      const a = agentSession(b, root, "claude", "0a1b2c3d-aaaa");
      await handle("sessionStart", { source: "new", initialPrompt: "work" });
      await a.start();
      const create = { toolName: "create", toolArgs: { path: join(root, "c.txt"), file_text: "c1\n" } };
      expect(await handle("preToolUse", create)).toEqual({});
      writeFileSync(join(root, "c.txt"), "c1\n");
      await handle("postToolUse", {
        ...create,
        toolResult: { resultType: "success", textResultForLlm: `Created file ${join(root, "c.txt")} with 3 characters` },
      });
      await a.write("a.txt", "a1\n");
      const session = (await b.sessions.list())[0]?.id as string;
      expect(Object.keys((await b.sessions.snapshot(session)).facets.lanes ?? {}).sort()).toEqual([a.lane, `copilot:${sid}`].sort());
      const r = cli(["rollback", "--json", "--root", root], { env: { COPILOT_AGENT_SESSION_ID: sid } });
      expect(r.code, r.stderr).toBe(0);
      expect(r.json()).toMatchObject({ lane: `copilot:${sid}` });
      expect(existsSync(join(root, "c.txt")), "Copilot CLI's own new file is undone").toBe(false);
      expect(read(root, "a.txt"), "Claude Code's is not").toBe("a1\n");
    } finally {
      await b.close();
    }
  });

  it("Copilot CLI subagents: each a lane of its parent's family; the same call by two at once is two calls; `baton rollback` from a subagent's shell (its own session id) steps back through the family", async () => {
    const { baton: b, root } = await tempBaton();
    try {
      const sid = "3690133e-c311-42db-8396-5d02800f8916";
      const [c1, c2] = ["fa6a80ab-f1c1-46a6-bb79-a38551efcfc5", "0b7d3e21-9a4c-4f7e-8d2b-5c6a7e8f9a0b"];
      let n = 0;
      // As Copilot CLI 1.0.102 sends a subagent's hooks (test/fixtures/hooks/copilot/real-subagent-*.json).
      const handle = (event: string, payload: Record<string, unknown>, sub?: string, parent = sid) =>
        b.agents.handle(
          copilot.parse(
            event,
            {
              sessionId: sub ?? sid,
              timestamp: 1795966349568 + ++n,
              cwd: root,
              ...(sub ? { agentId: sub, agentType: "general-purpose", parentAgentId: parent } : {}),
              ...payload,
            },
            root,
          ),
          { agentPid: process.pid, requestId: `req-copilot-sub-${n}` },
        );
      await handle("sessionStart", { source: "new", initialPrompt: "work" });
      await handle("userPromptSubmitted", { prompt: "have two helpers run the tests" });
      const bash = { toolName: "bash", toolArgs: { command: "npm test", description: "run the tests" } };
      const result = { resultType: "success", textResultForLlm: "ok\n<shellId: 1 completed with exit code 0>" };
      // Both subagents run the same command at once: their hooks interleave.
      await handle("preToolUse", bash, c1);
      await handle("preToolUse", bash, c2);
      await handle("postToolUse", { ...bash, toolResult: result }, c1);
      await handle("postToolUse", { ...bash, toolResult: result }, c2);
      const session = (await b.sessions.list())[0]?.id as string;
      const lanes = Object.keys((await b.sessions.snapshot(session)).facets.lanes ?? {}).sort();
      expect(lanes).toEqual([`copilot:${sid}`, `copilot:${sid}/${c1}`, `copilot:${sid}/${c2}`].sort());
      // Each turn names the checkpoint its own before-hook took (with one call key for both, both named the newest).
      const turns = (await b.events.list(session)).events.filter((e) => e.type === "turn:recorded");
      const taken = turns.map((e) => [e.data.lane, e.data.checkpointId]);
      expect(taken.length).toBe(2);
      expect(new Set(taken.map(([, cp]) => cp)).size, JSON.stringify(taken)).toBe(2);
      // A subagent's own subagent names its immediate parent: it works in the root's family too.
      const grand = "5e1f0c3a-7b2d-4e6f-9a8b-1c2d3e4f5a6b";
      const ls = { toolName: "bash", toolArgs: { command: "ls" } };
      await handle("preToolUse", ls, grand, c1);
      await handle("postToolUse", { ...ls, toolResult: result }, grand, c1);
      const grandLane = `copilot:${sid}/${grand}`;
      expect(Object.keys((await b.sessions.snapshot(session)).facets.lanes ?? {})).toContain(grandLane);
      // A subagent writes; from its shell (COPILOT_AGENT_SESSION_ID names its own session) it undoes that.
      const create = { toolName: "create", toolArgs: { path: join(root, "s.txt"), file_text: "s1\n" } };
      await handle("preToolUse", create, c1);
      writeFileSync(join(root, "s.txt"), "s1\n");
      await handle("postToolUse", { ...create, toolResult: { resultType: "success", textResultForLlm: "Created" } }, c1);
      const r = cli(["rollback", "--json", "--root", root], { env: { COPILOT_AGENT_SESSION_ID: c1 } });
      expect(r.code, r.stderr).toBe(0);
      expect(r.json()).toMatchObject({ lane: `copilot:${sid}/${c1}` });
      expect(existsSync(join(root, "s.txt")), "the subagent's new file is undone").toBe(false);
    } finally {
      await b.close();
    }
  });

  it("OpenCode beside Claude Code: its session id is its lane, a subagent's child session one of its own; `baton rollback` from its shell (BATON_OPENCODE_SESSION_ID, set by Baton's plugin) steps back through its lane only", async () => {
    const { baton: b, root } = await tempBaton();
    try {
      const sid = "ses_dd761c7e6ffep2wSzaTvSXq4cF";
      const child = "ses_dd75ed064ffeGUTRnnNt40du3V";
      let n = 0;
      // The payloads Baton's plugin sends (test/fixtures/agents/opencode/).
      const handle = (event: string, payload: Record<string, unknown>, session = sid) =>
        b.agents.handle(opencode.parse(event, { session_id: session, cwd: root, ...payload }, root), {
          agentPid: process.pid,
          requestId: `req-opencode-${++n}`,
        });
      const a = agentSession(b, root, "claude", "0a1b2c3d-aaaa");
      await handle("session.created", { source: "startup" });
      await a.start();
      const write = (file: string, call: string) => ({
        call_id: call,
        tool: "write",
        args: { filePath: join(root, file), content: "o1\n" },
      });
      expect(await handle("tool.execute.before", write("o.txt", "call_1"))).toEqual({});
      writeFileSync(join(root, "o.txt"), "o1\n");
      await handle("tool.execute.after", { ...write("o.txt", "call_1"), title: "o.txt", output: "Wrote file successfully.", metadata: {} });
      // A subagent (the task tool) works in a child session: its own lane.
      await handle("session.created", { source: "startup" }, child);
      await handle("tool.execute.before", write("s.txt", "call_2"), child);
      writeFileSync(join(root, "s.txt"), "s1\n");
      await handle(
        "tool.execute.after",
        { ...write("s.txt", "call_2"), title: "s.txt", output: "Wrote file successfully.", metadata: {} },
        child,
      );
      await a.write("a.txt", "a1\n");
      const session = (await b.sessions.list())[0]?.id as string;
      expect(Object.keys((await b.sessions.snapshot(session)).facets.lanes ?? {}).sort()).toEqual(
        [a.lane, `opencode:${sid}`, `opencode:${child}`].sort(),
      );
      const r = cli(["rollback", "--json", "--root", root], { env: { BATON_OPENCODE_SESSION_ID: sid } });
      expect(r.code, r.stderr).toBe(0);
      expect(r.json()).toMatchObject({ lane: `opencode:${sid}` });
      expect(existsSync(join(root, "o.txt")), "OpenCode's own new file is undone").toBe(false);
      expect(read(root, "s.txt"), "its subagent's is not").toBe("s1\n");
      expect(read(root, "a.txt"), "Claude Code's is not").toBe("a1\n");
    } finally {
      await b.close();
    }
  });

  it("an agent session resumed after it ended goes back to its own session, even with several active", async () => {
    const { baton: b, root } = await tempBaton();
    try {
      const a = agentSession(b, root, "claude", "0a1b2c3d-aaaa");
      await a.start();
      const mine = (await b.sessions.list())[0]?.id as string;
      await a.end();
      await b.sessions.start({ flow: "task", title: "Another task, started by the user" });
      await a.start("resume");
      expect((await b.sessions.snapshot(mine)).facets.lanes?.[a.lane]?.status).toBe("working");
      expect((await b.sessions.list()).length, "no third session").toBe(2);
    } finally {
      await b.close();
    }
  });

  it("a new agent session continues the work of one that ended: handed its decisions, in a lane of its own", async () => {
    const { baton: b, root } = await tempBaton();
    try {
      const a = agentSession(b, root, "claude", "0a1b2c3d-aaaa");
      await a.start();
      const sid = (await b.sessions.list())[0]?.id as string;
      await b.facets.addDecision(sid, { decision: "Use PKCE", reason: "public client" });
      await a.write("a.txt", "a1\n");
      await a.stop();
      await a.end();
      const x = agentSession(b, root, "codex", "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b");
      const ctx = (await x.start()).context ?? "";
      expect((await b.sessions.list()).map((s) => s.id)).toEqual([sid]);
      expect(ctx).toContain("Use PKCE");
      expect(ctx, "an ended session is not shown as working").not.toContain("Other agents working here now");
      const lanes = (await b.sessions.snapshot(sid)).facets.lanes ?? {};
      expect(lanes[a.lane]?.status).toBe("ended");
      expect(lanes[x.lane]?.status).toBe("working");
    } finally {
      await b.close();
    }
  });
});

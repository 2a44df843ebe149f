/**
 * The report of Claude Code calls whose HTTP hook got no answer (services/agents/unanswered.ts),
 * through `baton.agents.handle` on a real store, with payloads shaped as the real CLI sends them
 * (test/fixtures/agents/claude/) and a transcript written as Claude Code writes it.
 */
import { mkdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { claude } from "../src/core/hooks/claude.js";
import { cleanupDirs, tempBaton } from "./helpers.js";

afterEach(cleanupDirs);

const fixture = (name: string) =>
  JSON.parse(readFileSync(join(import.meta.dirname, "fixtures", "agents", "claude", `${name}.json`), "utf8"));
const line = (v: unknown) => JSON.stringify(v);
const use = (id: string, name: string, input: Record<string, unknown>) =>
  line({ type: "assistant", message: { content: [{ type: "tool_use", id, name, input }] } });
const result = (id: string) => line({ type: "user", message: { content: [{ type: "tool_result", tool_use_id: id, content: "ok" }] } });

/**
 * A workspace whose local Claude Code settings hold one of Baton's HTTP hooks (only then is
 * anything reported), and `handle`, which answers a hook payload shaped as the real CLI's with
 * the transcript at `transcript`.
 */
async function httpHooked(event: "PreToolUse" | "PostToolUse", transcript: (root: string) => string, matcher?: string) {
  const { baton: b, root } = await tempBaton();
  mkdirSync(join(root, ".claude"), { recursive: true });
  const group = {
    ...(matcher !== undefined ? { matcher } : {}),
    hooks: [{ type: "http", url: `http://127.0.0.1:1/v1/agent-hooks/claude/${event}` }],
  };
  writeFileSync(join(root, ".claude", "settings.local.json"), line({ hooks: { [event]: [group] } }));
  const base = { ...fixture("PreToolUse.Write"), cwd: root, transcript_path: transcript(root) };
  const handle = (name: string, payload: Record<string, unknown>) =>
    b.agents.handle(claude.parse(name, { ...base, hook_event_name: name, ...payload }, root), { agentPid: process.pid });
  return { b, root, transcript: transcript(root), handle };
}

describe("calls Claude Code ran without Baton hearing of them", () => {
  it("a call recorded in a session that completed mid-turn is not reported; a call nobody heard of is", async () => {
    const { b, root, transcript, handle } = await httpHooked("PreToolUse", (r) => join(r, "transcript.jsonl"), "Write|Bash");
    try {
      const first = await b.sessions.start({ flow: "task", id: "first" });
      const write = { tool_name: "Write", tool_input: { file_path: join(root, "a.txt"), content: "a\n" }, tool_use_id: "toolu_written" };
      expect(await handle("PreToolUse", write)).toEqual({});
      expect((await b.checkpoints.list(first.sessionId)).length).toBe(1);
      await handle("PostToolUse", { ...write, tool_response: { type: "create", filePath: join(root, "a.txt") } });
      // The session the call was checkpointed in completes; the lane goes on in another.
      await b.events.append(first.sessionId, { type: "abandon", actor: "user" });
      expect((await b.sessions.list()).map((s) => s.id)).toEqual([]);
      const second = await b.sessions.start({ flow: "task", id: "second" });

      writeFileSync(
        transcript,
        `${[
          line({ type: "user", message: { role: "user", content: "make a.txt, then run the tests" } }),
          use("toolu_written", "Write", write.tool_input),
          result("toolu_written"),
          use("toolu_unheard", "Bash", { command: "npm test" }),
          result("toolu_unheard"),
        ].join("\n")}\n`,
      );
      const stop = await handle("Stop", { stop_hook_active: false, last_assistant_message: "Done." });
      expect(stop.userMessage).toContain("1 tool call (Bash) ran without a checkpoint");
      const notes = (await b.events.list(second.sessionId)).events.filter((e) => e.type === "note:added");
      expect(notes.map((e) => e.data.text)).toEqual([expect.stringContaining("ran Bash (toolu_unheard) without a checkpoint")]);
      // Reported once: the next turn end says nothing more.
      expect((await handle("Stop", { stop_hook_active: false, last_assistant_message: "Done." })).userMessage).toBeUndefined();
    } finally {
      await b.close();
    }
  });

  it("a call whose turn an earlier build recorded (its id without the agent session) is not reported after an upgrade; another session's is no alibi", async () => {
    const { b, transcript, handle } = await httpHooked("PreToolUse", (r) => join(r, "transcript.jsonl"), "Write|Bash");
    try {
      const { sessionId } = await b.sessions.start({ flow: "task", id: "upgraded" });
      await handle("SessionStart", { source: "startup" });
      // What the build before recorded for a call: `turn_<agent>_<call id>`.
      await b.events.append(sessionId, {
        id: "turn_claude_toolu_before_upgrade",
        type: "turn:recorded",
        actor: "agent",
        data: { tool: "Bash", argsHash: "0000000000000000", status: "success", lane: `claude:${fixture("PreToolUse.Write").session_id}` },
      });
      // Another agent session's call with the id this session's unheard call has (a model server numbering calls).
      await b.events.append(sessionId, {
        id: "turn_claude_toolu_unheard_2",
        type: "turn:recorded",
        actor: "agent",
        data: { tool: "Bash", argsHash: "0000000000000000", status: "success", lane: "claude:another-session" },
      });
      writeFileSync(
        transcript,
        `${[
          line({ type: "user", message: { role: "user", content: "run the tests" } }),
          use("toolu_before_upgrade", "Bash", { command: "npm test" }),
          result("toolu_before_upgrade"),
          use("toolu_unheard_2", "Bash", { command: "npm run lint" }),
          result("toolu_unheard_2"),
        ].join("\n")}\n`,
      );
      const stop = await handle("Stop", { stop_hook_active: false, last_assistant_message: "Done." });
      expect(stop.userMessage).toContain("1 tool call (Bash) ran without a checkpoint");
      const notes = (await b.events.list(sessionId)).events.filter((e) => e.type === "note:added");
      expect(notes.map((e) => e.data.text)).toEqual([expect.stringContaining("toolu_unheard_2")]);
    } finally {
      await b.close();
    }
  });

  it("a subagent's calls are read from its own transcript: one nobody heard of is reported, one checkpointed is not", async () => {
    // Claude Code's layout: <project dir>/<session id>.jsonl, its subagents in <session id>/subagents/.
    const { b, root, transcript, handle } = await httpHooked("PreToolUse", (r) => join(r, "projects", "b1f9366f.jsonl"));
    try {
      const subagents = join(root, "projects", "b1f9366f", "subagents");
      mkdirSync(subagents, { recursive: true });
      const s = await b.sessions.start({ flow: "task", id: "only" });
      // The subagent's first call was answered (it runs its hooks with the session's id).
      const heard = { tool_name: "Write", tool_input: { file_path: join(root, "s.txt"), content: "s\n" }, tool_use_id: "toolu_sub_heard" };
      expect(await handle("PreToolUse", heard)).toEqual({});
      await handle("PostToolUse", { ...heard, tool_response: { type: "create", filePath: join(root, "s.txt") } });
      const asked = new Date(Date.now() - 60_000).toISOString();
      writeFileSync(
        transcript,
        `${[
          line({ type: "user", timestamp: asked, message: { role: "user", content: "have a subagent do it" } }),
          use("toolu_task", "Task", { prompt: "do it" }),
          result("toolu_task"),
        ].join("\n")}\n`,
      );
      writeFileSync(
        join(subagents, "agent-a1b2c3.jsonl"),
        `${[
          line({ type: "user", message: { role: "user", content: "do it" } }),
          use("toolu_sub_heard", "Write", {}),
          result("toolu_sub_heard"),
          use("toolu_sub_unheard", "Bash", { command: "make" }),
          result("toolu_sub_unheard"),
        ].join("\n")}\n`,
      );
      // A subagent transcript from before this turn's prompt is not this turn's.
      const old = join(subagents, "agent-old.jsonl");
      writeFileSync(
        old,
        `${[line({ type: "user", message: { role: "user", content: "earlier" } }), use("toolu_old", "Bash", {}), result("toolu_old")].join("\n")}\n`,
      );
      utimesSync(old, new Date(Date.now() - 3_600_000), new Date(Date.now() - 3_600_000));
      const stop = await handle("Stop", { stop_hook_active: false, last_assistant_message: "Done." });
      expect(stop.userMessage).toContain("1 tool call (Bash) ran without a checkpoint");
      const notes = (await b.events.list(s.sessionId)).events.filter((e) => e.type === "note:added").map((e) => e.id);
      expect(notes).toEqual([expect.stringMatching(/toolu_sub_unheard\.unanswered$/)]);
      // A conversation resumed two days later: its last turn had its own Stop, and is not reported again.
      const stale = new Date(Date.now() - 2 * 24 * 3_600_000).toISOString();
      writeFileSync(
        transcript,
        `${[line({ type: "user", timestamp: stale, message: { role: "user", content: "old" } }), use("toolu_old_turn", "Bash", {}), result("toolu_old_turn")].join("\n")}\n`,
      );
      expect((await handle("Stop", { stop_hook_active: false, last_assistant_message: "Done." })).userMessage).toBeUndefined();
    } finally {
      await b.close();
    }
  });

  it("a call checkpointed whose PostToolUse went unanswered is reported as unrecorded; a refused or failed one is not", async () => {
    const { b, root, transcript, handle } = await httpHooked("PostToolUse", (r) => join(r, "transcript.jsonl"));
    try {
      const s = await b.sessions.start({ flow: "task", id: "only" });
      const call = (id: string, file: string) => ({
        tool_name: "Write",
        tool_input: { file_path: join(root, file), content: "x\n" },
        tool_use_id: id,
      });
      // Both calls' PreToolUse answered (a checkpoint each); only the first one's PostToolUse.
      for (const c of [call("toolu_recorded", "a.txt"), call("toolu_lost", "b.txt"), call("toolu_rejected", "c.txt")])
        expect(await handle("PreToolUse", c)).toEqual({});
      await handle("PostToolUse", { ...call("toolu_recorded", "a.txt"), tool_response: { type: "create", filePath: join(root, "a.txt") } });
      const rejected = line({
        type: "user",
        message: {
          content: [
            {
              type: "tool_result",
              tool_use_id: "toolu_rejected",
              content: "The user doesn't want to proceed with this tool use.",
              is_error: true,
            },
          ],
        },
      });
      writeFileSync(
        transcript,
        `${[
          line({ type: "user", message: { role: "user", content: "write a, b and c" } }),
          use("toolu_recorded", "Write", {}),
          result("toolu_recorded"),
          use("toolu_lost", "Write", {}),
          result("toolu_lost"),
          use("toolu_rejected", "Write", {}),
          rejected,
        ].join("\n")}\n`,
      );
      const stop = await handle("Stop", { stop_hook_active: false, last_assistant_message: "Done." });
      expect(stop.userMessage).toBe(
        "Baton: 1 tool call (Write) ran without its result recorded (the ledger and the spiral detector miss it): the HTTP hooks name port 1, and the workspace's server has no key (.baton/server.key): run `baton hooks install claude --http` again.",
      );
      const notes = (await b.events.list(s.sessionId)).events.filter((e) => e.type === "note:added").map((e) => e.id);
      expect(notes).toEqual([expect.stringMatching(/toolu_lost\.unrecorded$/)]);
      expect((await handle("Stop", { stop_hook_active: false, last_assistant_message: "Done." })).userMessage).toBeUndefined();
    } finally {
      await b.close();
    }
  });
});

/**
 * Agent runs in the OTLP export, end to end: Claude Code (and a subagent inside it), Codex and
 * Gemini CLI sessions played through their hooks on a real workspace, then `ledger.export`; and
 * the service's batching of run spans across requests.
 */

import { afterEach, describe, expect, it } from "vitest";
import { ADAPTERS } from "../src/core/hooks/adapters.js";
import type { OtlpSpan, OtlpTracesRequest } from "../src/core/ledger/otlp.js";
import type { Baton } from "../src/index.js";
import { OTLP_BATCH } from "../src/services/ledger/ledger.js";
import { cleanupDirs, tempBaton } from "./helpers.js";
import { agentSession } from "./lane-agents.js";

afterEach(() => cleanupDirs());

let calls = 0;

/** A Gemini CLI session, with the payloads of test/fixtures/hooks/gemini/. */
function geminiSession(b: Baton, root: string, sessionId: string) {
  const handle = (event: string, payload: Record<string, unknown>) =>
    b.agents.handle(
      ADAPTERS.gemini.parse(
        event,
        {
          session_id: sessionId,
          transcript_path: `/home/dev/.gemini/tmp/chats/session-${sessionId}.json`,
          cwd: root,
          timestamp: new Date().toISOString(),
          hook_event_name: event,
          ...payload,
        },
        root,
      ),
      { agentPid: process.pid, requestId: `gemini-req-${++calls}` },
    );
  return {
    lane: `gemini:${sessionId}`,
    start: () => handle("SessionStart", { source: "startup" }),
    prompt: (prompt: string) => handle("BeforeAgent", { prompt }),
    async shell(command: string) {
      const input = { tool_name: "run_shell_command", tool_input: { command } };
      await handle("BeforeTool", input);
      await handle("AfterTool", {
        ...input,
        tool_response: {
          llmContent: "<untrusted_context>\nOutput: ok\nProcess Group PGID: 4242\n</untrusted_context>",
          returnDisplay: "ok",
        },
      });
    },
    stop: () => handle("AfterAgent", { prompt: "p", prompt_response: "Done.", stop_hook_active: false }),
  };
}

async function otlpSpans(b: Baton, sessionId?: string): Promise<{ requests: OtlpTracesRequest[]; spans: OtlpSpan[] }> {
  const requests: OtlpTracesRequest[] = [];
  for await (const line of b.ledger.export({ format: "otlp", ...(sessionId ? { sessionId } : {}) })) requests.push(JSON.parse(line));
  return { requests, spans: requests.flatMap((r) => r.resourceSpans[0]?.scopeSpans[0]?.spans ?? []) };
}

const attrs = (s: OtlpSpan) => Object.fromEntries(s.attributes.map((a) => [a.key, Object.values(a.value)[0]]));

describe("agent runs in the OTLP export", () => {
  it("nests each turn's tool calls under an invoke_agent span, for Claude Code, Codex and Gemini CLI", async () => {
    const { baton: b, root } = await tempBaton();
    try {
      const claude = agentSession(b, root, "claude", "0a1b2c3d-aaaa");
      const sub = agentSession(b, root, "claude", "0a1b2c3d-aaaa", { subagent: "agent-7" });
      const codex = agentSession(b, root, "codex", "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b");
      const gemini = geminiSession(b, root, "5e6f7a8b-0000-4000-8000-000000000009");
      for (const s of [claude, codex, gemini]) await s.start();
      for (const s of [claude, codex, gemini]) await s.prompt("tidy up");
      await claude.write("a.txt", "a1\n");
      await sub.bash("ls");
      await codex.bash("npm test");
      await gemini.shell("ls");
      for (const s of [claude, codex, gemini]) await s.stop();
      // A second turn of Claude Code is a run of its own.
      await claude.prompt("and the tests");
      await claude.bash("npm test");
      await claude.stop();

      const [sid] = (await b.sessions.list()).map((s) => s.id);
      const { spans } = await otlpSpans(b, sid);
      const runs = spans.filter((s) => attrs(s)["gen_ai.operation.name"] === "invoke_agent");
      const tools = spans.filter((s) => attrs(s)["gen_ai.operation.name"] === "execute_tool");
      expect(tools).toHaveLength(5);
      expect(runs.map((s) => s.name).sort()).toEqual([
        "invoke_agent Claude Code",
        "invoke_agent Claude Code",
        "invoke_agent Codex",
        "invoke_agent Gemini CLI",
      ]);
      const runOf = (t: OtlpSpan) => runs.find((r) => r.spanId === t.parentSpanId);
      for (const t of tools) expect(runOf(t), `${t.name} has its run as parent`).toBeDefined();
      const lanes = [
        { lane: claude.lane, agent: "Claude Code", provider: "anthropic", conversation: "0a1b2c3d-aaaa" },
        { lane: codex.lane, agent: "Codex", provider: "openai", conversation: "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b" },
        { lane: gemini.lane, agent: "Gemini CLI", provider: "gcp.gemini", conversation: "5e6f7a8b-0000-4000-8000-000000000009" },
      ];
      for (const l of lanes) {
        const mine = tools.filter((t) => String(attrs(t)["baton.lane"]).split("/")[0] === l.lane);
        expect(mine.length, l.lane).toBeGreaterThan(0);
        for (const t of mine) {
          const run = runOf(t) as OtlpSpan;
          expect(attrs(run)).toMatchObject({
            "gen_ai.agent.name": l.agent,
            "gen_ai.agent.id": l.lane,
            "gen_ai.provider.name": l.provider,
            "gen_ai.conversation.id": l.conversation,
            "baton.session.id": sid,
            "baton.run.status": "ended",
          });
          expect(attrs(t)["gen_ai.conversation.id"]).toBe(l.conversation);
          // The run holds its calls: it started before them and ended after.
          expect(BigInt(run.startTimeUnixNano) <= BigInt(t.startTimeUnixNano)).toBe(true);
          expect(BigInt(run.endTimeUnixNano) >= BigInt(t.endTimeUnixNano)).toBe(true);
        }
      }
      // The subagent's call is in its parent's run; Claude Code's two turns are two runs.
      const subCall = tools.find((t) => attrs(t)["baton.lane"] === sub.lane) as OtlpSpan;
      const claudeCalls = tools.filter((t) => attrs(t)["baton.lane"] === claude.lane);
      expect(subCall.parentSpanId).toBe(claudeCalls[0]?.parentSpanId);
      expect(new Set(claudeCalls.map((t) => t.parentSpanId)).size).toBe(2);
    } finally {
      await b.close();
    }
  });

  it("keeps requests within OTLP_BATCH spans and sends each run's span once, before or with its calls", async () => {
    const { baton: b } = await tempBaton({ ledger: { maxNodesPerSession: 5_000 } });
    try {
      await b.sessions.start({ flow: "task", id: "s1" });
      const lanes = ["claude:aaaa", "codex:bbbb", "gemini:cccc"];
      const runIds: string[] = [];
      for (const [i, lane] of lanes.entries()) {
        const { runId } = await b.runs.start("s1", { agent: ["Claude Code", "Codex", "Gemini CLI"][i] as string, runId: `run-${i}`, lane });
        runIds.push(runId);
      }
      const total = OTLP_BATCH * 2 + 7;
      const records: Promise<unknown>[] = [];
      for (let i = 0; i < total; i++) {
        // The last run begins right at the first request's boundary.
        const r = i < OTLP_BATCH - 3 ? i % 2 : 2 - (i % 2);
        records.push(b.ledger.record("s1", { toolName: "Read", status: "success", lane: lanes[r], runId: runIds[r] }));
      }
      await b.ledger.record("s1", { toolName: "Read", status: "success" });
      await Promise.all(records);
      const { requests, spans } = await otlpSpans(b, "s1");
      for (const r of requests) expect(r.resourceSpans[0]?.scopeSpans[0]?.spans.length).toBeLessThanOrEqual(OTLP_BATCH);
      const runSpans = spans.filter((s) => s.name.startsWith("invoke_agent"));
      expect(runSpans).toHaveLength(3);
      expect(spans).toHaveLength(total + 1 + 3);
      const seen = new Set<string>();
      for (const s of spans) {
        if (s.parentSpanId !== undefined) expect(seen.has(s.parentSpanId), "a run's span comes first").toBe(true);
        seen.add(s.spanId);
      }
      expect(spans.at(-1)?.parentSpanId, "a node without a run has no parent").toBeUndefined();
    } finally {
      await b.close();
    }
  });
});

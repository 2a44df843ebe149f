/** The calls of a Claude Code turn, read from its transcript (services/agents/unanswered.ts): pure, over transcript lines. */
import { describe, expect, it } from "vitest";
import { DENY_OPENINGS, renderSpiralPause } from "../src/core/hooks/context.js";
import { turnCalls } from "../src/services/agents/unanswered.js";

const prompt = (text: string) => JSON.stringify({ type: "user", message: { role: "user", content: text } });
const use = (id: string, name: string) =>
  JSON.stringify({
    type: "assistant",
    message: {
      content: [
        { type: "text", text: "ok" },
        { type: "tool_use", id, name, input: {} },
      ],
    },
  });
const result = (id: string, content: string, isError = false) =>
  JSON.stringify({ type: "user", message: { content: [{ type: "tool_result", tool_use_id: id, content, is_error: isError }] } });

describe("turnCalls", () => {
  it("the write and shell calls after the last typed prompt, and which of them ran; reads are not checkpointed", () => {
    const text = [
      prompt("first"),
      use("t1", "Write"),
      result("t1", "done"),
      prompt("second"),
      use("t2", "Read"),
      result("t2", "text"),
      use("t3", "Edit"),
      result("t3", "done"),
      use("t4", "Bash"),
      result("t4", "exit 1", true),
      "not json",
    ].join("\n");
    expect(turnCalls(text)).toEqual([
      { id: "t3", name: "Edit", refused: false, succeeded: true },
      { id: "t4", name: "Bash", refused: false, succeeded: false },
    ]);
  });

  it("a refusal by Baton is not a call that ran; another tool error is, even one mentioning Baton", () => {
    const pause = renderSpiralPause("s1", { pattern: "repeat", summary: "three identical failures." } as any);
    const text = [
      prompt("go"),
      use("t1", "Bash"),
      result("t1", pause, true),
      use("t2", "Bash"),
      result("t2", "Error: Baton's tests failed: 3 of 40 (see baton.log)", true),
      use("t3", "Edit"),
      result("t3", "File has not been read yet. Read it first (Baton docs)", true),
      use("t4", "Write"),
      JSON.stringify({
        type: "user",
        message: {
          content: [
            {
              type: "tool_result",
              tool_use_id: "t4",
              is_error: true,
              content: [{ type: "text", text: `${DENY_OPENINGS.supervision} ask` }],
            },
          ],
        },
      }),
    ];
    expect(turnCalls(text.join("\n"))).toEqual([
      { id: "t1", name: "Bash", refused: true, succeeded: false },
      { id: "t2", name: "Bash", refused: false, succeeded: false },
      { id: "t3", name: "Edit", refused: false, succeeded: false },
      { id: "t4", name: "Write", refused: true, succeeded: false },
    ]);
  });

  it("a new prompt already written (no calls yet): the turn before it", () => {
    const text = [prompt("go"), use("t1", "Write"), result("t1", "done"), prompt("next")].join("\n");
    expect(turnCalls(text).map((c) => c.id)).toEqual(["t1"]);
  });

  it("meta and compaction lines are not prompts", () => {
    const meta = JSON.stringify({ type: "user", isMeta: true, message: { content: "caveat" } });
    const summary = JSON.stringify({ type: "user", isCompactSummary: true, message: { content: "summary" } });
    const text = [prompt("go"), use("t1", "Write"), meta, summary, use("t2", "Bash")].join("\n");
    expect(turnCalls(text).map((c) => c.id)).toEqual(["t1", "t2"]);
  });
});

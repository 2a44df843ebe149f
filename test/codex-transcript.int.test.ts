/**
 * Reading a Codex shell call's outcome from the session transcript: a FIFO never holds the hook,
 * an item line longer than the tail window is still read, and the transcript is read only where
 * the answer is made (the event's failure is worked out when first asked for).
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { codex } from "../src/core/hooks/codex.js";
import { codexCallOutcome } from "../src/hooks/codex-transcript.js";
import { cleanupDirs, cli, initWorkspace, tempDir } from "./helpers.js";

afterEach(() => cleanupDirs());

const item = (id: string, output: string, exitCode: number, status: string) =>
  `${JSON.stringify({
    type: "event_msg",
    payload: { type: "item_completed", item: { type: "CommandExecution", id, status, aggregated_output: output, exit_code: exitCode } },
  })}\n`;

describe("Codex transcript", () => {
  it("an item line longer than the tail window is read from its start and its end", () => {
    const file = join(tempDir("baton-transcript-"), "rollout.jsonl");
    // The output itself holds text that looks like the fields (escaped inside the string).
    const big = `${"x".repeat(3 * 1024 * 1024)} {"exit_code":0,"status":"completed"} é`;
    writeFileSync(file, item("call_old", "ok", 0, "completed") + item("call_big", big, 3, "failed"));
    expect(codexCallOutcome(file, "call_big")).toEqual({ status: "failed", exitCode: 3 });
    expect(codexCallOutcome(file, "call_old")).toBeUndefined(); // older than the window: not read
    const ok = join(tempDir("baton-transcript-"), "rollout.jsonl");
    writeFileSync(ok, item("call_big", big, 0, "completed"));
    expect(codexCallOutcome(ok, "call_big")).toEqual({ status: "completed", exitCode: 0 });
    // A long last line of another call says nothing about this one.
    expect(codexCallOutcome(ok, "call_other")).toBeUndefined();
  });

  it("the transcript is read when the failure is first asked for, not when the event is parsed", () => {
    const file = join(tempDir("baton-transcript-"), "rollout.jsonl");
    const payload = {
      cwd: "/",
      tool_name: "Bash",
      tool_input: { command: "false" },
      tool_response: "",
      transcript_path: file,
      tool_use_id: "call_1",
    };
    const ev = codex.parse("PostToolUse", payload, "/", { codexCallOutcome });
    writeFileSync(file, item("call_1", "", 1, "failed"));
    expect(ev).toMatchObject({ kind: "after_tool", status: "error", error: "exit code 1" });
  });

  it("a FIFO named .jsonl does not hold the hook", () => {
    const root = initWorkspace("baton-fifo-");
    const fifo = join(tempDir("baton-transcript-"), "rollout.jsonl");
    execFileSync("mkfifo", [fifo]);
    const payload = {
      session_id: "s1",
      cwd: root,
      hook_event_name: "PostToolUse",
      tool_name: "Bash",
      tool_input: { command: "false" },
      tool_response: "",
      transcript_path: fifo,
      tool_use_id: "call_1",
    };
    const r = cli(["hook", "codex", "PostToolUse", "--root", root], { input: JSON.stringify(payload) });
    expect(r.code, r.stderr).toBe(0);
  });
});

/** hooks/front.ts parseHookArgs: what the shell's hook client hands on to Node, and what it ignores. */
import { describe, expect, it } from "vitest";
import { parseHookArgs } from "../src/hooks/front.js";

describe("parseHookArgs", () => {
  it("reads the agent, the event and what the shell's client hands on", () => {
    const now = Date.now();
    expect(
      parseHookArgs(["codex", "PreToolUse", `--started-at=${now - 500}`, "--request-id=123-abcdef-42", "--server-silent"]),
    ).toMatchObject({ agent: "codex", native: "PreToolUse", startedAt: now - 500, requestId: "123-abcdef-42", serverSilent: true });
    const plain = parseHookArgs(["claude", "Stop"]);
    expect(plain).toMatchObject({ agent: "claude", native: "Stop" });
    expect(plain.serverSilent).toBeUndefined();
    expect(plain.startedAt).toBeUndefined();
  });

  it("ignores a start time in the future or over a minute back, and a request id it would not key by", () => {
    const now = Date.now();
    for (const t of [now + 60_000, now - 120_000, "soon"])
      expect(parseHookArgs(["codex", "Stop", `--started-at=${t}`]).startedAt).toBeUndefined();
    for (const id of ["short", "x".repeat(81), "a b c d e f g h", "../../etc/passwd"])
      expect(parseHookArgs(["codex", "Stop", `--request-id=${id}`]).requestId).toBeUndefined();
    // `--server-silent=1` is not the flag: only the word the client writes.
    expect(parseHookArgs(["codex", "Stop", "--server-silent=1"]).serverSilent).toBeUndefined();
  });
});

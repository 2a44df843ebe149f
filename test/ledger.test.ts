import { describe, expect, it } from "vitest";
import {
  DEFAULT_LEDGER_LIMITS,
  fitNode,
  LedgerInputError,
  type LedgerNode,
  ledgerLimits,
  placeNode,
  primaryArgument,
  shapeNode,
  targetKey,
  utf8Length,
} from "../src/core/ledger/nodes.js";
import { ledgerToOtlp, nodeToSpan, spanIdOf, traceIdOf } from "../src/core/ledger/otlp.js";

const NOW = new Date("2026-03-01T10:00:00.000Z");

describe("shaping a node", () => {
  it("redacts the arguments, error and observation, and fingerprints the error", () => {
    const n = shapeNode(
      {
        toolName: "Bash",
        status: "error",
        args: { command: "curl -H 'Authorization: Bearer abcdef0123456789' https://x", env: { API_KEY: "k-123456" } },
        error: "401 from https://x?access_token=tok123456 at 12:00",
        observation: "body: token ghp_abcdefghijklmnopqrstuvwxyz0123456789",
      },
      NOW,
    );
    const text = JSON.stringify(n);
    expect(text).not.toMatch(/abcdef0123456789|k-123456|tok123456|ghp_/);
    expect(n.fingerprint).toMatch(/^fp-[0-9a-f]{16}$/);
    expect(n.argsHash).toMatch(/^sha256:[0-9a-f]{16}$/);
    expect(n.at).toBe(NOW.toISOString());
    expect(n.target).toMatch(/^[0-9a-f]{16}$/);
  });

  it("bounds the error and observation summaries", () => {
    const n = shapeNode({ toolName: "Read", status: "success", observation: "line of text\n".repeat(1000), error: "e ".repeat(2000) }, NOW);
    expect((n.observation as string).length).toBeLessThan(DEFAULT_LEDGER_LIMITS.maxObservationChars + 30);
    expect((n.error as string).length).toBeLessThan(DEFAULT_LEDGER_LIMITS.maxErrorChars + 30);
    expect(n.observation).toMatch(/…\[\+\d+ chars\]$/);
  });

  it("keeps evidence as metadata only and maps a boolean progress verdict", () => {
    const n = shapeNode(
      {
        toolName: "screenshot",
        status: "success",
        evidence: { handle: "art-12", kind: "screenshot", mediaType: "image/png", bytes: 12345 },
        progress: false,
      },
      NOW,
    );
    expect(n.evidence).toEqual({ handle: "art-12", kind: "screenshot", mediaType: "image/png", bytes: 12345 });
    expect(n.progress).toBe("stalled");
  });

  it("refuses what cannot be recorded", () => {
    expect(() => shapeNode({ toolName: "", status: "success" }, NOW)).toThrow(LedgerInputError);
    expect(() => shapeNode({ toolName: "x", status: "maybe" as "success" }, NOW)).toThrow(/status must be one of/);
    expect(() => shapeNode({ toolName: "x", status: "success", nodeId: "has space" }, NOW)).toThrow(/nodeId/);
    expect(() => shapeNode({ toolName: "x", status: "success", reward: Number.NaN }, NOW)).toThrow(/reward/);
    // A duration whose start would fall before 1970 (an OTLP span's start is unsigned nanoseconds).
    expect(() => shapeNode({ toolName: "x", status: "success", durationMs: 1e300 }, NOW)).toThrow(/durationMs must be a number from 0 to/);
    expect(shapeNode({ toolName: "x", status: "success", durationMs: 86_400_000 }, NOW).durationMs).toBe(86_400_000);
    expect(() => ledgerLimits({ maxNodeBytes: 100 })).toThrow(/maxNodeBytes/);
  });

  it("recognises the target: tool + primary argument", () => {
    expect(primaryArgument({ file_path: "src/a.ts", old_string: "x" })).toBe("src/a.ts");
    expect(primaryArgument({ url: "https://a.test/" })).toBe("https://a.test/");
    expect(primaryArgument({ selector: "#go", text: "x" })).toBe("#go");
    expect(primaryArgument({ other: 1 })).toBeUndefined();
    expect(targetKey("Edit", { file_path: "a" })).toBe(targetKey("Edit", { file_path: "a", old_string: "different" }));
    expect(targetKey("Edit", { file_path: "a" })).not.toBe(targetKey("Write", { file_path: "a" }));
  });
});

describe("placing a node: parent and recovery", () => {
  const shaped = (status: "success" | "error" | "recovered", toolName = "click") =>
    shapeNode({ toolName, status, args: { selector: "#buy" } }, NOW);

  it("defaults the parent to the session's previous node", () => {
    const n = placeNode("s", "n2", shaped("success"), { seq: 2, previous: { nodeId: "n1", toolName: "read_page" } });
    expect(n.parentNodeId).toBe("n1");
    expect(n.status).toBe("success");
  });

  it("marks a success after a failure on the same target recovered, linked to the failed node, with the tool in between", () => {
    const n = placeNode("s", "n3", shaped("success"), {
      seq: 3,
      previous: { nodeId: "n2", toolName: "read_page" },
      lastOnTarget: { nodeId: "n1", status: "error" },
    });
    expect(n).toMatchObject({ status: "recovered", recovers: "n1", recoveryTool: "read_page", parentNodeId: "n2" });
  });

  it("does not mark a success after a success, nor an error after an error", () => {
    expect(placeNode("s", "n2", shaped("success"), { seq: 2, lastOnTarget: { nodeId: "n1", status: "success" } }).status).toBe("success");
    const e = placeNode("s", "n2", shaped("error"), { seq: 2, lastOnTarget: { nodeId: "n1", status: "error" } });
    expect(e.status).toBe("error");
    expect(e.recovers).toBeUndefined();
  });

  it("a retry right after the failure has no recovery tool", () => {
    const n = placeNode("s", "n2", shaped("success"), {
      seq: 2,
      previous: { nodeId: "n1", toolName: "click" },
      lastOnTarget: { nodeId: "n1", status: "no_progress" },
    });
    expect(n).toMatchObject({ status: "recovered", recovers: "n1" });
    expect(n.recoveryTool).toBeUndefined();
  });
});

describe("fitting a node into its byte budget", () => {
  function huge(): LedgerNode {
    const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(" ");
    const s = shapeNode(
      {
        toolName: "browser_fill_form",
        status: "error",
        args: {
          fields: Array.from({ length: 60 }, (_, i) => ({ name: `field ${i} ${words(20)}`, ref: `e${i}`, value: "x" })),
          note: words(100),
        },
        error: `Error: ${words(400)}`,
        observation: words(600),
        evidence: { handle: `h-${"x".repeat(200)}`, kind: "log", label: words(40) },
        workflowId: "wf-1",
        tabId: "tab-9",
        progress: "stalled",
        recoveryTool: "read_page",
        reward: 0.25,
      },
      NOW,
    );
    return placeNode("session-1", "ln-1", s, { seq: 7, previous: { nodeId: "ln-0", toolName: "read_page" } });
  }

  it("leaves a node that fits untouched", () => {
    const n = placeNode("s", "n", shapeNode({ toolName: "Read", status: "success", args: { file_path: "a" } }, NOW), { seq: 1 });
    const r = fitNode(n, 4096);
    expect(r.node).toBe(n);
    expect(r.node.shrunk).toBeUndefined();
    expect(r.bytes).toBe(utf8Length(r.json));
  });

  it.each([4096, 2048, 1024])("shrinks in steps to %i bytes and never loses the core fields", (max) => {
    const n = huge();
    expect(utf8Length(JSON.stringify(n))).toBeGreaterThan(max);
    const r = fitNode(n, max);
    expect(r.bytes).toBeLessThanOrEqual(max);
    expect(r.bytes).toBe(utf8Length(r.json));
    expect(JSON.parse(r.json)).toEqual(r.node);
    expect(r.node.shrunk).toBeGreaterThan(0);
    for (const k of [
      "nodeId",
      "sessionId",
      "seq",
      "at",
      "toolName",
      "status",
      "parentNodeId",
      "fingerprint",
      "argsHash",
      "workflowId",
      "tabId",
    ] as const)
      expect(r.node[k], k).toEqual(n[k]);
  });

  it("counts UTF-8 bytes, not characters", () => {
    expect(utf8Length("aé€😀")).toBe(1 + 2 + 3 + 4);
    const n = placeNode("s", "n", shapeNode({ toolName: "Read", status: "success", observation: "€".repeat(1000) }, NOW), { seq: 1 });
    const r = fitNode(n, 1024);
    expect(new TextEncoder().encode(r.json).length).toBeLessThanOrEqual(1024);
  });
});

describe("OpenTelemetry spans", () => {
  const failed = placeNode(
    "s-1",
    "ln-a",
    shapeNode({ toolName: "click", status: "error", args: { selector: "#buy" }, error: "element detached", durationMs: 250 }, NOW),
    { seq: 1 },
  );
  const recovered = placeNode(
    "s-1",
    "ln-c",
    shapeNode({ toolName: "click", status: "success", args: { selector: "#buy" }, at: new Date(NOW.getTime() + 5000) }, NOW),
    { seq: 3, previous: { nodeId: "ln-b", toolName: "read_page" }, lastOnTarget: { nodeId: "ln-a", status: "error" } },
  );

  it("follows the GenAI conventions for tool execution", () => {
    const span = nodeToSpan(failed);
    const attrs = Object.fromEntries(span.attributes.map((a) => [a.key, Object.values(a.value)[0]]));
    expect(span.name).toBe("execute_tool click");
    expect(span.kind).toBe(1);
    expect(attrs["gen_ai.operation.name"]).toBe("execute_tool");
    expect(attrs["gen_ai.tool.name"]).toBe("click");
    expect(attrs["gen_ai.tool.call.id"]).toBe("ln-a");
    expect(attrs["gen_ai.conversation.id"]).toBe("s-1");
    expect(attrs["error.type"]).toBe(failed.fingerprint);
    expect(span.status).toEqual({ code: 2, message: "element detached" });
    expect(span.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(span.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(BigInt(span.endTimeUnixNano) - BigInt(span.startTimeUnixNano)).toBe(250_000_000n);
    expect(span.endTimeUnixNano).toBe(`${BigInt(NOW.getTime()) * 1_000_000n}`);
  });

  it("links a recovery to the failed attempt and the previous one; success leaves the status unset", () => {
    const span = nodeToSpan(recovered);
    expect(span.status).toEqual({});
    expect(span.links).toEqual([
      {
        traceId: traceIdOf("s-1"),
        spanId: spanIdOf("ln-b"),
        attributes: [{ key: "baton.ledger.link", value: { stringValue: "previous" } }],
      },
      {
        traceId: traceIdOf("s-1"),
        spanId: spanIdOf("ln-a"),
        attributes: [{ key: "baton.ledger.link", value: { stringValue: "recovers" } }],
      },
    ]);
    const req = ledgerToOtlp([failed, recovered], { version: "1.2.3" });
    expect(req.resourceSpans[0]?.resource.attributes).toContainEqual({ key: "service.name", value: { stringValue: "baton" } });
    expect(req.resourceSpans[0]?.scopeSpans[0]?.scope).toEqual({ name: "baton.ledger", version: "1.2.3" });
    expect(req.resourceSpans[0]?.scopeSpans[0]?.spans).toHaveLength(2);
  });
});

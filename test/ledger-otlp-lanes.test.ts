/**
 * The OTLP export of agent runs (core/ledger/otlp.ts): an `invoke_agent` span per lane run with
 * that run's `execute_tool` spans as children, for Claude Code, Codex and Gemini CLI; nodes
 * without a run as before. The encoding is checked against the OpenTelemetry JS SDK's own
 * OTLP/JSON: the same spans are built with a real tracer and serialised by
 * `@opentelemetry/otlp-transformer`, then both requests are compared field by field.
 */
import { type Attributes, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, TraceFlags, trace } from "@opentelemetry/api";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, type IdGenerator, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import { fitNode, type LedgerInput, LedgerInputError, type LedgerNode, placeNode, shapeNode } from "../src/core/ledger/nodes.js";
import {
  ledgerToOtlp,
  nodeToSpan,
  type OtlpRun,
  type OtlpSpan,
  type OtlpTracesRequest,
  runKey,
  runSpanIdOf,
  spanIdOf,
  traceIdOf,
} from "../src/core/ledger/otlp.js";

const SID = "s-lanes";
const CLAUDE = "claude:0a1b2c3d-aaaa";
const SUBAGENT = `${CLAUDE}/agent-7`;
const CODEX = "codex:0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
const GEMINI = "gemini:5e6f7a8b-0000-4000-8000-000000000009";
const NOW = "2026-03-01T10:10:00.000Z";

const RUNS: OtlpRun[] = [
  {
    runId: "claude-0a1b2c3d-aaaa-1",
    agent: "Claude Code",
    started: "2026-03-01T10:00:00.000Z",
    ended: "2026-03-01T10:01:00.000Z",
    status: "ended",
    host: "dev-box",
  },
  { runId: "codex-0199a1b2-1", agent: "Codex", started: "2026-03-01T10:00:30.000Z", ended: "2026-03-01T10:05:00.000Z", status: "crashed" },
  { runId: "gemini-5e6f7a8b-1", agent: "Gemini CLI", started: "2026-03-01T10:02:00.000Z", status: "running" },
];
const [CLAUDE_RUN, CODEX_RUN, GEMINI_RUN] = RUNS as [OtlpRun, OtlpRun, OtlpRun];

/** Nodes as the ledger places them (shaped, then given seq, parent and recovery). */
function ledger(inputs: (LedgerInput & { nodeId: string })[]): LedgerNode[] {
  const out: LedgerNode[] = [];
  for (const input of inputs) {
    const shaped = shapeNode(input, new Date(NOW));
    const prev = out.at(-1);
    const lastOnTarget = [...out].reverse().find((n) => n.target !== undefined && n.target === shaped.target);
    out.push(
      placeNode(SID, input.nodeId, shaped, {
        seq: out.length + 1,
        ...(prev ? { previous: { nodeId: prev.nodeId, toolName: prev.toolName } } : {}),
        ...(lastOnTarget ? { lastOnTarget: { nodeId: lastOnTarget.nodeId, status: lastOnTarget.status } } : {}),
      }),
    );
  }
  return out;
}

const NODES = ledger([
  {
    nodeId: "ln-1",
    lane: CLAUDE,
    runId: CLAUDE_RUN.runId,
    toolName: "Read",
    status: "success",
    args: { file_path: "src/a.ts" },
    observation: "export const a = 1;",
    at: "2026-03-01T10:00:10.000Z",
    durationMs: 12.5,
  },
  {
    nodeId: "ln-2",
    lane: SUBAGENT,
    runId: CLAUDE_RUN.runId,
    toolName: "Edit",
    status: "error",
    args: { file_path: "src/a.ts", old_string: "b" },
    error: "old_string not found in src/a.ts",
    at: "2026-03-01T10:00:20.000Z",
    durationMs: 40,
    reward: 0.25,
  },
  {
    nodeId: "ln-3",
    lane: CODEX,
    runId: CODEX_RUN.runId,
    toolName: "Bash",
    status: "success",
    args: { command: "npm test" },
    at: "2026-03-01T10:01:00.000Z",
  },
  {
    nodeId: "ln-4",
    lane: CLAUDE,
    runId: CLAUDE_RUN.runId,
    toolName: "Edit",
    status: "success",
    args: { file_path: "src/a.ts", old_string: "a" },
    at: "2026-03-01T10:00:50.000Z",
    durationMs: 30,
  },
  {
    nodeId: "ln-5",
    lane: GEMINI,
    runId: GEMINI_RUN.runId,
    toolName: "write_file",
    status: "aborted",
    args: { file_path: "README.md" },
    at: "2026-03-01T10:03:00.000Z",
    evidence: { handle: "artifact-9", kind: "log", mediaType: "text/plain" },
  },
  // An API caller's node: no lane, no run.
  {
    nodeId: "ln-6",
    toolName: "click",
    status: "no_progress",
    progress: "stalled",
    args: { selector: "#buy" },
    at: "2026-03-01T10:04:00.000Z",
  },
  // A run the export does not know (e.g. recorded by hand): no parent.
  { nodeId: "ln-7", lane: CODEX, runId: "codex-unknown-run", toolName: "Bash", status: "success", at: "2026-03-01T10:04:30.000Z" },
]);

const runMap = (runs: readonly OtlpRun[] = RUNS) => new Map(runs.map((r) => [runKey(SID, r.runId), r]));
const spansOf = (req: OtlpTracesRequest): OtlpSpan[] => req.resourceSpans[0]?.scopeSpans[0]?.spans ?? [];
const attrs = (s: OtlpSpan) => Object.fromEntries(s.attributes.map((a) => [a.key, Object.values(a.value)[0]]));
const byName = (spans: OtlpSpan[], name: string) => spans.filter((s) => s.name === name);

describe("OTLP export of agent runs", () => {
  const req = ledgerToOtlp(NODES, { version: "1.2.3" }, { runs: runMap(), now: NOW });
  const spans = spansOf(req);
  const span = (nodeId: string) => spans.find((s) => s.spanId === spanIdOf(nodeId)) as OtlpSpan;

  it("gives each run one invoke_agent span, before its first tool call, for all three agents", () => {
    expect(spans.map((s) => s.name)).toEqual([
      "invoke_agent Claude Code",
      "execute_tool Read",
      "execute_tool Edit",
      "invoke_agent Codex",
      "execute_tool Bash",
      "execute_tool Edit",
      "invoke_agent Gemini CLI",
      "execute_tool write_file",
      "execute_tool click",
      "execute_tool Bash",
    ]);
    const claude = byName(spans, "invoke_agent Claude Code")[0] as OtlpSpan;
    expect(claude).toMatchObject({
      traceId: traceIdOf(SID),
      spanId: runSpanIdOf(SID, CLAUDE_RUN.runId),
      kind: 1,
      startTimeUnixNano: `${BigInt(Date.parse(CLAUDE_RUN.started)) * 1_000_000n}`,
      endTimeUnixNano: `${BigInt(Date.parse(CLAUDE_RUN.ended as string)) * 1_000_000n}`,
      status: {},
    });
    expect(claude.parentSpanId).toBeUndefined();
    expect(attrs(claude)).toEqual({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.provider.name": "anthropic",
      "gen_ai.agent.name": "Claude Code",
      "gen_ai.agent.id": CLAUDE,
      "gen_ai.conversation.id": "0a1b2c3d-aaaa",
      "baton.session.id": SID,
      "baton.run.id": CLAUDE_RUN.runId,
      "baton.run.status": "ended",
      "baton.run.host": "dev-box",
    });
    const codex = byName(spans, "invoke_agent Codex")[0] as OtlpSpan;
    expect(attrs(codex)).toMatchObject({
      "gen_ai.provider.name": "openai",
      "gen_ai.agent.id": CODEX,
      "gen_ai.conversation.id": "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
      "error.type": "crashed",
      "baton.run.status": "crashed",
    });
    expect(codex.status).toEqual({ code: 2 });
    const gemini = byName(spans, "invoke_agent Gemini CLI")[0] as OtlpSpan;
    expect(attrs(gemini)).toMatchObject({ "gen_ai.provider.name": "gcp.gemini", "gen_ai.agent.id": GEMINI, "baton.run.status": "running" });
    expect(gemini.endTimeUnixNano, "a run still running ends at the export's time").toBe(`${BigInt(Date.parse(NOW)) * 1_000_000n}`);
  });

  it("makes a run's tool calls its children, a subagent's included, in the agent's conversation", () => {
    const claudeRun = runSpanIdOf(SID, CLAUDE_RUN.runId);
    for (const id of ["ln-1", "ln-2", "ln-4"]) expect(span(id).parentSpanId, id).toBe(claudeRun);
    expect(span("ln-3").parentSpanId).toBe(runSpanIdOf(SID, CODEX_RUN.runId));
    expect(span("ln-5").parentSpanId).toBe(runSpanIdOf(SID, GEMINI_RUN.runId));
    expect(attrs(span("ln-2"))).toMatchObject({
      "gen_ai.conversation.id": "0a1b2c3d-aaaa",
      "baton.session.id": SID,
      "baton.lane": SUBAGENT,
      "baton.ledger.run_id": CLAUDE_RUN.runId,
    });
    // Attempts inside a run stay siblings: the previous node is a link, not a parent.
    expect(span("ln-2").links?.[0]).toMatchObject({ spanId: spanIdOf("ln-1") });
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([traceIdOf(SID)]));
  });

  it("exports a node without a lane or a known run as before: no parent, the Baton session as the conversation", () => {
    for (const id of ["ln-6", "ln-7"]) {
      expect(span(id).parentSpanId, id).toBeUndefined();
      expect(attrs(span(id))["gen_ai.conversation.id"]).toBe(SID);
      expect(attrs(span(id))["baton.session.id"]).toBeUndefined();
    }
    expect(span("ln-6")).toEqual(nodeToSpan(NODES[5] as LedgerNode));
    // Without runs, the request is what it was before runs existed: one span per node, none parented.
    const plain = spansOf(ledgerToOtlp(NODES, { version: "1.2.3" }));
    expect(plain).toEqual(NODES.map((n) => nodeToSpan(n)));
    expect(plain.every((s) => s.parentSpanId === undefined && attrs(s)["gen_ai.conversation.id"] === SID)).toBe(true);
  });

  it("sends each run's span once across the requests of one export", () => {
    const sent = new Set<string>();
    const known = { runs: runMap(), sent, now: NOW };
    const first = spansOf(ledgerToOtlp(NODES.slice(0, 1), { version: "1" }, known));
    const second = spansOf(ledgerToOtlp(NODES.slice(1), { version: "1" }, known));
    expect(first.map((s) => s.name)).toEqual(["invoke_agent Claude Code", "execute_tool Read"]);
    expect(byName(second, "invoke_agent Claude Code")).toHaveLength(0);
    expect((second.find((s) => s.spanId === spanIdOf("ln-2")) as OtlpSpan).parentSpanId).toBe(runSpanIdOf(SID, CLAUDE_RUN.runId));
    expect(byName(second, "invoke_agent Codex")).toHaveLength(1);
  });

  it("takes the run's own lane when it names one, and leaves out what a run without a lane cannot say", () => {
    const node = NODES[0] as LedgerNode;
    const named = spansOf(
      ledgerToOtlp([node], { version: "1" }, { runs: runMap([{ ...CLAUDE_RUN, lane: "claude:other-session" }]), now: NOW }),
    );
    expect(attrs(named[0] as OtlpSpan)["gen_ai.agent.id"]).toBe("claude:other-session");
    const { lane: _lane, ...laneless } = node;
    const bare = spansOf(ledgerToOtlp([laneless], { version: "1" }, { runs: runMap(), now: NOW }));
    expect(attrs(bare[0] as OtlpSpan)).toEqual({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": "Claude Code",
      "gen_ai.conversation.id": SID,
      "baton.run.id": CLAUDE_RUN.runId,
      "baton.run.status": "ended",
      "baton.run.host": "dev-box",
    });
    expect(bare[1]?.parentSpanId).toBe(bare[0]?.spanId);
  });
});

describe("a node's run id", () => {
  it("is validated like the other ids, and kept through placement and shrinking", () => {
    expect(() => shapeNode({ toolName: "Read", status: "success", runId: "a run" }, new Date(NOW))).toThrow(LedgerInputError);
    expect(() => shapeNode({ toolName: "Read", status: "success", runId: "r".repeat(129) }, new Date(NOW))).toThrow(LedgerInputError);
    const shaped = shapeNode(
      {
        toolName: "Read",
        status: "success",
        lane: SUBAGENT,
        runId: "claude-x-1",
        observation: Array.from({ length: 300 }, (_, i) => `line ${i} of the output`).join("\n"),
      },
      new Date(NOW),
    );
    const placed = placeNode(SID, "ln-a", shaped, { seq: 1 });
    expect(placed).toMatchObject({ lane: SUBAGENT, runId: "claude-x-1" });
    const fitted = fitNode(placed, 400);
    expect(fitted.node.shrunk).toBeGreaterThan(0);
    expect(JSON.parse(fitted.json)).toMatchObject({ lane: SUBAGENT, runId: "claude-x-1" });
  });
});

// The OpenTelemetry JS SDK as the reference encoder.

type Json = Record<string, unknown>;

/**
 * The same spans built with the SDK's tracer from the same nodes and runs, following the mapping
 * docs/architecture.md ("Export") states, serialised by the SDK's OTLP/JSON serializer. Ids are
 * Baton's (derived from the session, node and run ids) through an IdGenerator; parents are real
 * SDK spans, so the SDK decides what `parentSpanId` and the trace id of a child are.
 */
async function sdkRequest(nodes: readonly LedgerNode[], runs: readonly OtlpRun[], now: string): Promise<Json> {
  let nextTrace = "";
  let nextSpan = "";
  const idGenerator: IdGenerator = { generateTraceId: () => nextTrace, generateSpanId: () => nextSpan };
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": "baton", "service.version": "1.2.3" }),
    idGenerator,
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer("baton.ledger", "1.2.3");
  const ms = (iso: string) => Date.parse(iso);
  const clean = (a: Record<string, string | number | undefined>): Attributes =>
    Object.fromEntries(Object.entries(a).filter(([, v]) => v !== undefined)) as Attributes;
  const agentSession = (lane: string) => lane.split("/")[0]?.split(":")[1] as string;
  const providers: Record<string, string> = { claude: "anthropic", codex: "openai", gemini: "gcp.gemini" };

  const runSpans = new Map<string, Span>();
  for (const n of nodes) {
    const run = runs.find((r) => r.runId === n.runId);
    let parent: Span | undefined;
    if (run) {
      parent = runSpans.get(run.runId);
      if (!parent) {
        const lane = (n.lane as string).split("/")[0] as string;
        nextTrace = traceIdOf(n.sessionId);
        nextSpan = runSpanIdOf(n.sessionId, run.runId);
        parent = tracer.startSpan(`invoke_agent ${run.agent}`, {
          kind: SpanKind.INTERNAL,
          startTime: ms(run.started),
          attributes: clean({
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.provider.name": providers[lane.split(":")[0] as string],
            "gen_ai.agent.name": run.agent,
            "gen_ai.agent.id": lane,
            "gen_ai.conversation.id": agentSession(lane),
            "error.type": run.status === "crashed" ? "crashed" : undefined,
            "baton.session.id": n.sessionId,
            "baton.run.id": run.runId,
            "baton.run.status": run.status,
            "baton.run.host": run.host,
          }),
        });
        if (run.status === "crashed") parent.setStatus({ code: SpanStatusCode.ERROR });
        runSpans.set(run.runId, parent);
      }
    }
    const failed = n.status === "error" || n.status === "aborted";
    const conversation = run && n.lane ? agentSession(n.lane) : n.sessionId;
    const link = (spanId: string, kind: string) => ({
      context: { traceId: traceIdOf(n.sessionId), spanId, traceFlags: TraceFlags.SAMPLED },
      attributes: { "baton.ledger.link": kind },
    });
    nextTrace = traceIdOf(n.sessionId);
    nextSpan = spanIdOf(n.nodeId);
    const span = tracer.startSpan(
      `execute_tool ${n.toolName}`,
      {
        kind: SpanKind.INTERNAL,
        startTime: ms(n.at) - (n.durationMs ?? 0),
        links: [
          ...(n.parentNodeId ? [link(spanIdOf(n.parentNodeId), "previous")] : []),
          ...(n.recovers ? [link(spanIdOf(n.recovers), "recovers")] : []),
        ],
        attributes: clean({
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.name": n.toolName,
          "gen_ai.tool.call.id": n.nodeId,
          "gen_ai.conversation.id": conversation,
          "gen_ai.tool.call.arguments": n.args === undefined ? undefined : JSON.stringify(n.args),
          "gen_ai.tool.call.result": n.observation,
          "error.type": failed ? (n.fingerprint ?? "_OTHER") : undefined,
          "baton.ledger.status": n.status,
          "baton.ledger.seq": n.seq,
          "baton.ledger.parent_node_id": n.parentNodeId,
          "baton.ledger.workflow_id": n.workflowId,
          "baton.ledger.tab_id": n.tabId,
          "baton.lane": n.lane,
          "baton.ledger.run_id": n.runId,
          "baton.session.id": conversation === n.sessionId ? undefined : n.sessionId,
          "baton.ledger.progress": n.progress,
          "baton.ledger.fingerprint": n.fingerprint,
          "baton.ledger.recovers": n.recovers,
          "baton.ledger.recovery_tool": n.recoveryTool,
          "baton.ledger.target": n.target,
          "baton.ledger.args_hash": n.argsHash,
          "baton.ledger.error": n.error,
          "baton.ledger.evidence.handle": n.evidence?.handle,
          "baton.ledger.evidence.kind": n.evidence?.kind,
          "baton.ledger.evidence.media_type": n.evidence?.mediaType,
          "baton.ledger.reward": n.reward,
          "baton.ledger.shrunk": n.shrunk,
        }),
      },
      parent ? trace.setSpan(ROOT_CONTEXT, parent) : ROOT_CONTEXT,
    );
    if (failed) span.setStatus({ code: SpanStatusCode.ERROR, ...(n.error ? { message: n.error.slice(0, 256) } : {}) });
    span.end(ms(n.at));
  }
  for (const [runId, s] of runSpans) {
    const run = runs.find((r) => r.runId === runId) as OtlpRun;
    s.end(ms(run.ended ?? now));
  }
  await provider.forceFlush();
  const bytes = JsonTraceSerializer.serializeRequest(exporter.getFinishedSpans()) as Uint8Array;
  await provider.shutdown();
  return JSON.parse(new TextDecoder().decode(bytes)) as Json;
}

/**
 * The OTLP content of a request, without what only differs in form: attribute and span order (a
 * map and a set in the protocol), 64-bit integers as a JSON string or number (both are proto3
 * JSON), zero counts, empty lists and an UNSET status (their defaults), and `flags` (optional:
 * the SDK sets its W3C and is-remote bits, 0 means unknown).
 */
function normalise(req: Json): Json {
  const value = (v: Json): Json => ("intValue" in v ? { intValue: String(v.intValue) } : v);
  const attributes = (list: unknown) =>
    ((list as { key: string; value: Json }[] | undefined) ?? [])
      .map((a) => ({ key: a.key, value: value(a.value) }))
      .sort((a, b) => (a.key < b.key ? -1 : 1));
  const span = (s: Json): Json => {
    const status = s.status as { code?: number; message?: string };
    const links = ((s.links as Json[] | undefined) ?? []).map((l) => ({
      traceId: l.traceId,
      spanId: l.spanId,
      attributes: attributes(l.attributes),
    }));
    return {
      traceId: s.traceId,
      spanId: s.spanId,
      ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}),
      name: s.name,
      kind: s.kind,
      startTimeUnixNano: String(s.startTimeUnixNano),
      endTimeUnixNano: String(s.endTimeUnixNano),
      attributes: attributes(s.attributes),
      ...(links.length > 0 ? { links } : {}),
      status: { ...(status.code ? { code: status.code } : {}), ...(status.message !== undefined ? { message: status.message } : {}) },
    };
  };
  return {
    resourceSpans: (req.resourceSpans as Json[]).map((rs) => ({
      resource: { attributes: attributes((rs.resource as Json).attributes) },
      scopeSpans: (rs.scopeSpans as Json[]).map((ss) => ({
        scope: ss.scope,
        spans: (ss.spans as Json[]).map(span).sort((a, b) => (String(a.spanId) < String(b.spanId) ? -1 : 1)),
      })),
    })),
  };
}

/** The field names of `ours` that `theirs` (the SDK's object at the same place) does not have. */
const extraFields = (ours: unknown, theirs: unknown): string[] => Object.keys(ours as Json).filter((k) => !(k in (theirs as Json)));

describe("the encoding, against the OpenTelemetry JS SDK", () => {
  it("is the SDK's OTLP/JSON for the same spans: resource, scope, ids, parents, kind, times, attributes, links, status", async () => {
    const ours = JSON.parse(JSON.stringify(ledgerToOtlp(NODES, { version: "1.2.3" }, { runs: runMap(), now: NOW }))) as Json;
    const theirs = await sdkRequest(NODES, RUNS, NOW);
    expect(normalise(ours)).toEqual(normalise(theirs));
    // Baton writes no field the SDK does not (a misspelt `parentSpanId` would pass as absent above).
    const first = (x: unknown, k: string) => ((x as Json)[k] as Json[])[0] as Json;
    const [ourRs, theirRs] = [first(ours, "resourceSpans"), first(theirs, "resourceSpans")];
    const [ourSs, theirSs] = [first(ourRs, "scopeSpans"), first(theirRs, "scopeSpans")];
    const theirSpans = theirSs.spans as Json[];
    const extra = [
      ...extraFields(ours, theirs),
      ...extraFields(ourRs, theirRs),
      ...extraFields(ourRs.resource, theirRs.resource),
      ...extraFields(ourSs, theirSs),
      ...extraFields(ourSs.scope, theirSs.scope),
    ];
    for (const s of ourSs.spans as Json[]) {
      const t = theirSpans.find((x) => x.spanId === s.spanId) as Json;
      extra.push(...extraFields(s, t), ...extraFields(s.status, t.status));
      for (const [i, l] of ((s.links as Json[] | undefined) ?? []).entries()) extra.push(...extraFields(l, (t.links as Json[])[i]));
    }
    expect(extra).toEqual([]);
    // What the comparison rests on: the SDK did nest the tool calls and write ints and doubles as such.
    const sdkSpan = (id: string) => theirSpans.find((s) => s.spanId === id) as Json;
    expect(sdkSpan(spanIdOf("ln-2")).parentSpanId).toBe(runSpanIdOf(SID, CLAUDE_RUN.runId));
    expect(sdkSpan(spanIdOf("ln-6")).parentSpanId).toBeUndefined();
    const values = (sdkSpan(spanIdOf("ln-2")).attributes as { key: string; value: Json }[]).map((a) => [a.key, Object.keys(a.value)[0]]);
    expect(values).toContainEqual(["baton.ledger.seq", "intValue"]);
    expect(values).toContainEqual(["baton.ledger.reward", "doubleValue"]);
  });
});

/**
 * Ledger nodes as OpenTelemetry spans: an OTLP/JSON `ExportTraceServiceRequest`, following the
 * GenAI semantic conventions for tool execution. Pure.
 *
 * - One trace per session (trace id = sha256 of the session id); one span per node (span id =
 *   sha256 of the node id), kind INTERNAL, named `execute_tool <tool>`.
 * - `gen_ai.operation.name = "execute_tool"`, `gen_ai.tool.name`, `gen_ai.tool.call.id` (the node
 *   id), `gen_ai.conversation.id` (the session id), `gen_ai.tool.call.arguments` and
 *   `gen_ai.tool.call.result` (the redacted summaries: the node never holds anything else).
 * - A failed attempt (`error`, `aborted`) has status ERROR and `error.type` = its failure
 *   fingerprint (a stable, low-cardinality class), or `_OTHER`.
 * - Consecutive attempts are siblings, not parent and child (a tool call does not contain the
 *   next): the previous node and the node a recovery recovers are span links.
 * - Baton's own fields are `baton.ledger.*` attributes.
 * - A node's `at` is when the attempt ended; the span starts `durationMs` earlier.
 *
 * Agent runs (one agent turn of a lane, core/lanes.ts: started by its first hook, ended at Stop):
 *
 * - A run its nodes name (`runId`) is an `invoke_agent <agent>` span, kind INTERNAL (the agent
 *   runs its own tools in its own process: the "invoke agent internal span" of the conventions),
 *   and the run's `execute_tool` spans are its children (`parentSpanId`). The run spans follow
 *   the tree the conventions draw (agent → tools); attempts inside a run stay siblings.
 * - `gen_ai.agent.name` = the agent as shown ("Claude Code"), `gen_ai.agent.id` = the lane,
 *   `gen_ai.provider.name` from the lane's agent, `gen_ai.conversation.id` = the agent's own
 *   session id (the lane names it): the id the agent itself knows the conversation by. The run
 *   and its tool spans then carry the Baton session as `baton.session.id` (one trace per Baton
 *   session still holds every agent's runs).
 * - A crashed run has status ERROR and `error.type = "crashed"`; a run still running ends at the
 *   export's time (`baton.run.status = "running"`).
 * - Nodes without a run, or whose run is not known, export as before: no parent, the Baton
 *   session as the conversation.
 */
import { sha256 } from "../canonical.js";
import { familyOf } from "../lanes.js";
import type { RunRecord } from "../types.js";
import type { LedgerNode } from "./nodes.js";

type AnyValue = { stringValue: string } | { intValue: string } | { doubleValue: number } | { boolValue: boolean };
export interface OtlpAttribute {
  key: string;
  value: AnyValue;
}

export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: OtlpAttribute[];
  links?: { traceId: string; spanId: string; attributes: OtlpAttribute[] }[];
  status: { code?: number; message?: string };
}

export interface OtlpTracesRequest {
  resourceSpans: {
    resource: { attributes: OtlpAttribute[] };
    scopeSpans: { scope: { name: string; version: string }; spans: OtlpSpan[] }[];
  }[];
}

/**
 * A run as its span needs it: a snapshot's RunRecord, or a row of the runs table. `lane` may be
 * left out: the lane of the run's nodes (its family, a subagent's parent) is used.
 */
export type OtlpRun = Pick<RunRecord, "runId" | "agent" | "started" | "ended" | "status" | "host" | "lane">;

const SPAN_KIND_INTERNAL = 1;
const STATUS_ERROR = 2;

export const traceIdOf = (sessionId: string): string => sha256(`baton-session:${sessionId}`).slice(0, 32);
export const spanIdOf = (nodeId: string): string => sha256(`baton-node:${nodeId}`).slice(0, 16);
/** A run id is unique within its session only (the runs table's key is both). */
export const runSpanIdOf = (sessionId: string, runId: string): string => sha256(`baton-run:${sessionId}\u0000${runId}`).slice(0, 16);
/** The key of a run in the maps `ledgerToOtlp` takes. */
export const runKey = (sessionId: string, runId: string): string => `${sessionId}\u0000${runId}`;

/** `gen_ai.provider.name` by the lane's agent (core/hooks/config.ts HookAgent): the model provider each agent uses by default. */
const PROVIDERS: Readonly<Record<string, string>> = { claude: "anthropic", codex: "openai", gemini: "gcp.gemini" };

function providerOf(lane: string | undefined): string | undefined {
  return lane === undefined ? undefined : PROVIDERS[lane.slice(0, lane.indexOf(":"))];
}

/** The agent's own session id, from its lane (`<agent>:<session id>[/<subagent>]`); undefined when the lane names none. */
function agentSessionOf(lane: string | undefined): string | undefined {
  if (lane === undefined) return undefined;
  const family = familyOf(lane);
  const id = family.slice(family.indexOf(":") + 1);
  return id === "" || id === "unknown" ? undefined : id;
}

function attr(key: string, v: string | number | boolean | undefined): OtlpAttribute | undefined {
  if (v === undefined) return undefined;
  if (typeof v === "string") return { key, value: { stringValue: v } };
  if (typeof v === "boolean") return { key, value: { boolValue: v } };
  return Number.isInteger(v) ? { key, value: { intValue: String(v) } } : { key, value: { doubleValue: v } };
}

/** Nanoseconds since the epoch as the decimal string OTLP/JSON uses for 64-bit integers. */
function unixNano(ms: number): string {
  const whole = Math.floor(ms);
  const frac = Math.round((ms - whole) * 1e6);
  return `${BigInt(whole) * 1_000_000n + BigInt(frac)}`;
}

/**
 * A node's span. `run`: the node's run is exported too (in this request or another of the same
 * export), so the span is its child.
 */
export function nodeToSpan(n: LedgerNode, run?: OtlpRun): OtlpSpan {
  const traceId = traceIdOf(n.sessionId);
  const end = Date.parse(n.at);
  const start = end - (n.durationMs ?? 0);
  const failed = n.status === "error" || n.status === "aborted";
  const inRun = run !== undefined && n.runId !== undefined && run.runId === n.runId;
  const conversation = inRun ? (agentSessionOf(run.lane ?? n.lane) ?? n.sessionId) : n.sessionId;
  const attributes = [
    attr("gen_ai.operation.name", "execute_tool"),
    attr("gen_ai.tool.name", n.toolName),
    attr("gen_ai.tool.call.id", n.nodeId),
    attr("gen_ai.conversation.id", conversation),
    attr("gen_ai.tool.call.arguments", n.args === undefined ? undefined : JSON.stringify(n.args)),
    attr("gen_ai.tool.call.result", n.observation),
    attr("error.type", failed ? (n.fingerprint ?? "_OTHER") : undefined),
    attr("baton.ledger.status", n.status),
    attr("baton.ledger.seq", n.seq),
    attr("baton.ledger.parent_node_id", n.parentNodeId),
    attr("baton.ledger.workflow_id", n.workflowId),
    attr("baton.ledger.tab_id", n.tabId),
    attr("baton.lane", n.lane),
    attr("baton.ledger.run_id", n.runId),
    attr("baton.session.id", conversation === n.sessionId ? undefined : n.sessionId),
    attr("baton.ledger.progress", n.progress),
    attr("baton.ledger.fingerprint", n.fingerprint),
    attr("baton.ledger.recovers", n.recovers),
    attr("baton.ledger.recovery_tool", n.recoveryTool),
    attr("baton.ledger.target", n.target),
    attr("baton.ledger.args_hash", n.argsHash),
    attr("baton.ledger.error", n.error),
    attr("baton.ledger.evidence.handle", n.evidence?.handle),
    attr("baton.ledger.evidence.kind", n.evidence?.kind),
    attr("baton.ledger.evidence.media_type", n.evidence?.mediaType),
    attr("baton.ledger.reward", n.reward),
    attr("baton.ledger.shrunk", n.shrunk),
  ].filter((a): a is OtlpAttribute => a !== undefined);
  const links: NonNullable<OtlpSpan["links"]> = [];
  if (n.parentNodeId)
    links.push({ traceId, spanId: spanIdOf(n.parentNodeId), attributes: [attr("baton.ledger.link", "previous") as OtlpAttribute] });
  if (n.recovers)
    links.push({ traceId, spanId: spanIdOf(n.recovers), attributes: [attr("baton.ledger.link", "recovers") as OtlpAttribute] });
  const span: OtlpSpan = {
    traceId,
    spanId: spanIdOf(n.nodeId),
    ...(inRun ? { parentSpanId: runSpanIdOf(n.sessionId, run.runId) } : {}),
    name: `execute_tool ${n.toolName}`,
    kind: SPAN_KIND_INTERNAL,
    startTimeUnixNano: unixNano(start),
    endTimeUnixNano: unixNano(end),
    attributes,
    status: failed ? { code: STATUS_ERROR, ...(n.error ? { message: n.error.slice(0, 256) } : {}) } : {},
  };
  if (links.length > 0) span.links = links;
  return span;
}

/**
 * A run's `invoke_agent` span. `lane`: the run's when it names none (its nodes' family);
 * `now`: the export's time, the end of a run still running.
 */
export function runToSpan(sessionId: string, run: OtlpRun, o: { lane?: string | undefined; now: string }): OtlpSpan {
  const lane = run.lane ?? (o.lane === undefined ? undefined : familyOf(o.lane));
  const start = Date.parse(run.started);
  // Never before its start: an end read from another clock, or a run started after `now`.
  const end = Math.max(start, Date.parse(run.ended ?? o.now));
  const crashed = run.status === "crashed";
  const conversation = agentSessionOf(lane) ?? sessionId;
  const attributes = [
    attr("gen_ai.operation.name", "invoke_agent"),
    attr("gen_ai.provider.name", providerOf(lane)),
    attr("gen_ai.agent.name", run.agent),
    attr("gen_ai.agent.id", lane),
    attr("gen_ai.conversation.id", conversation),
    attr("error.type", crashed ? "crashed" : undefined),
    attr("baton.session.id", conversation === sessionId ? undefined : sessionId),
    attr("baton.run.id", run.runId),
    attr("baton.run.status", run.status),
    attr("baton.run.host", run.host),
  ].filter((a): a is OtlpAttribute => a !== undefined);
  return {
    traceId: traceIdOf(sessionId),
    spanId: runSpanIdOf(sessionId, run.runId),
    name: `invoke_agent ${run.agent}`,
    kind: SPAN_KIND_INTERNAL,
    startTimeUnixNano: unixNano(start),
    endTimeUnixNano: unixNano(end),
    attributes,
    status: crashed ? { code: STATUS_ERROR } : {},
  };
}

/** The runs an export knows, for `ledgerToOtlp`. */
export interface OtlpRuns {
  /** The runs the nodes name, by `runKey(sessionId, runId)`; a node whose run is not here has no parent. */
  runs: ReadonlyMap<string, OtlpRun>;
  /**
   * The keys of runs whose span an earlier request of the same export carried; the runs this
   * request carries are added, so each run's span is sent once while its nodes span requests.
   */
  sent?: Set<string>;
  /** The export's time, ISO-8601: the end of a run still running. */
  now: string;
}

/**
 * One OTLP/JSON request holding these nodes' spans and, before the first node of each known
 * run, that run's `invoke_agent` span (unless `runs.sent` has it).
 */
export function ledgerToOtlp(
  nodes: readonly LedgerNode[],
  service: { name?: string; version: string },
  runs?: OtlpRuns,
): OtlpTracesRequest {
  const spans: OtlpSpan[] = [];
  const sent = runs?.sent ?? new Set<string>();
  for (const n of nodes) {
    const key = runs && n.runId !== undefined ? runKey(n.sessionId, n.runId) : undefined;
    const run = runs && key !== undefined ? runs.runs.get(key) : undefined;
    if (runs && run && key !== undefined && !sent.has(key)) {
      sent.add(key);
      spans.push(runToSpan(n.sessionId, run, { lane: n.lane, now: runs.now }));
    }
    spans.push(nodeToSpan(n, run));
  }
  return {
    resourceSpans: [
      {
        resource: {
          attributes: [
            attr("service.name", service.name ?? "baton") as OtlpAttribute,
            attr("service.version", service.version) as OtlpAttribute,
          ],
        },
        scopeSpans: [{ scope: { name: "baton.ledger", version: service.version }, spans }],
      },
    ],
  };
}

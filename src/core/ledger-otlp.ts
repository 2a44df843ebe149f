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
 */
import { sha256 } from "./canonical.js";
import type { LedgerNode } from "./ledger.js";

type AnyValue = { stringValue: string } | { intValue: string } | { doubleValue: number } | { boolValue: boolean };
export interface OtlpAttribute {
  key: string;
  value: AnyValue;
}

export interface OtlpSpan {
  traceId: string;
  spanId: string;
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

const SPAN_KIND_INTERNAL = 1;
const STATUS_ERROR = 2;

export const traceIdOf = (sessionId: string): string => sha256(`baton-session:${sessionId}`).slice(0, 32);
export const spanIdOf = (nodeId: string): string => sha256(`baton-node:${nodeId}`).slice(0, 16);

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

export function nodeToSpan(n: LedgerNode): OtlpSpan {
  const traceId = traceIdOf(n.sessionId);
  const end = Date.parse(n.at);
  const start = end - (n.durationMs ?? 0);
  const failed = n.status === "error" || n.status === "aborted";
  const attributes = [
    attr("gen_ai.operation.name", "execute_tool"),
    attr("gen_ai.tool.name", n.toolName),
    attr("gen_ai.tool.call.id", n.nodeId),
    attr("gen_ai.conversation.id", n.sessionId),
    attr("gen_ai.tool.call.arguments", n.args === undefined ? undefined : JSON.stringify(n.args)),
    attr("gen_ai.tool.call.result", n.observation),
    attr("error.type", failed ? (n.fingerprint ?? "_OTHER") : undefined),
    attr("baton.ledger.status", n.status),
    attr("baton.ledger.seq", n.seq),
    attr("baton.ledger.parent_node_id", n.parentNodeId),
    attr("baton.ledger.workflow_id", n.workflowId),
    attr("baton.ledger.tab_id", n.tabId),
    attr("baton.lane", n.lane),
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

/** One OTLP/JSON request holding these nodes' spans. */
export function ledgerToOtlp(nodes: readonly LedgerNode[], service: { name?: string; version: string }): OtlpTracesRequest {
  return {
    resourceSpans: [
      {
        resource: {
          attributes: [
            attr("service.name", service.name ?? "baton") as OtlpAttribute,
            attr("service.version", service.version) as OtlpAttribute,
          ],
        },
        scopeSpans: [{ scope: { name: "baton.ledger", version: service.version }, spans: nodes.map(nodeToSpan) }],
      },
    ],
  };
}

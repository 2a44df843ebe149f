/**
 * The trajectory ledger's nodes: one per tool-call attempt, redacted and bounded. Pure: shaping
 * (redaction, fingerprint, target), fitting a node into its byte budget, and the recovery rule.
 * Storage, caps across nodes and the write path are in services/ledger/ledger.ts.
 *
 * A node's **core fields** (nodeId, sessionId, seq, lane, runId, at, toolName, status,
 * parentNodeId, fingerprint, recovers, target, argsHash) are small and bounded by validation;
 * every other field is a summary that shrinking may cut or drop, in steps, until the node fits.
 */
import { canonicalJson } from "../canonical.js";
import { failureFingerprint } from "../fingerprint.js";
import { hashPlaceholder, redactText, redactValue, summariseText } from "../redaction/redact.js";
import type { JsonValue } from "../types.js";
import { ordered } from "./fit.js";
import type { LedgerEvidence, LedgerNode, LedgerStatus } from "./node.js";

/** The longest a recorded tool call may have taken. */
const MAX_DURATION_MS = 365 * 24 * 60 * 60 * 1000;

export { fitNode, utf8Length } from "./fit.js";
export type { LedgerEvidence, LedgerNode, LedgerStatus } from "./node.js";

export const LEDGER_STATUSES: readonly LedgerStatus[] = Object.freeze(["success", "error", "no_progress", "recovered", "aborted"]);
/** Statuses a later success on the same target recovers from. */
export const FAILED_STATUSES: ReadonlySet<LedgerStatus> = new Set<LedgerStatus>(["error", "no_progress"]);

/** What a caller records: raw values; everything is redacted and bounded before it is stored. */
export interface LedgerInput {
  toolName: string;
  status: LedgerStatus;
  /** The call's arguments (any JSON-like value). */
  args?: unknown;
  /** The error text, for a failed call. */
  error?: string;
  /** What the call returned: text, or a JSON-like value. */
  observation?: unknown;
  progress?: string | boolean;
  /** A fingerprint the caller computed; default: from `error`. */
  fingerprint?: string;
  recoveryTool?: string;
  /** Evidence metadata, or just its handle. */
  evidence?: LedgerEvidence | string;
  reward?: number;
  workflowId?: string;
  tabId?: string;
  /** The agent lane whose call it was (core/lanes.ts). */
  lane?: string;
  /** The run the call was made in (the lane's running run), if any. */
  runId?: string;
  /** Default: the session's previous node. */
  parentNodeId?: string;
  /** Idempotency key: recording the same nodeId again returns the stored node. Default: generated. */
  nodeId?: string;
  /** When the attempt ended. Default: now. */
  at?: string | Date;
  durationMs?: number;
}

export interface LedgerLimits {
  /** Nodes kept per session; the oldest are pruned. Default 500. */
  maxNodesPerSession: number;
  /** A node's JSON above this many bytes is shrunk in steps. Default 4 KiB; at least 1 KiB. */
  maxNodeBytes: number;
  /** The whole ledger (all sessions); the oldest nodes are pruned. Default 64 MiB. */
  maxTotalBytes: number;
  /** Observation summary length before shrinking. Default 1,024 characters. */
  maxObservationChars: number;
  /** Error text length before shrinking. Default 1,024 characters. */
  maxErrorChars: number;
}

export const DEFAULT_LEDGER_LIMITS: Readonly<LedgerLimits> = Object.freeze({
  maxNodesPerSession: 500,
  maxNodeBytes: 4096,
  maxTotalBytes: 64 * 1024 * 1024,
  maxObservationChars: 1024,
  maxErrorChars: 1024,
});

/** Validate limits given by a caller over the defaults; a problem is a message. */
export function ledgerLimits(given: Partial<LedgerLimits> = {}): LedgerLimits {
  const l = { ...DEFAULT_LEDGER_LIMITS, ...stripUndefined(given) };
  const whole = (k: keyof LedgerLimits, min: number) => {
    if (!Number.isSafeInteger(l[k]) || l[k] < min) throw new RangeError(`ledger ${k} must be a whole number ≥ ${min}, got ${l[k]}`);
  };
  whole("maxNodesPerSession", 1);
  whole("maxNodeBytes", 1024);
  whole("maxTotalBytes", 16 * l.maxNodeBytes);
  whole("maxObservationChars", 0);
  whole("maxErrorChars", 0);
  return l;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  const out: Partial<T> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}

/** Identifier-like fields (ids, tool names): bounded so the core of a node is always small. */
const MAX_ID = 128;
const ID_RE = /^[\x21-\x7e]+$/;

export class LedgerInputError extends Error {
  override name = "LedgerInputError";
}

function idField(v: unknown, field: string): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string" || v.length === 0 || v.length > MAX_ID || !ID_RE.test(v))
    throw new LedgerInputError(`${field} must be 1–${MAX_ID} printable characters without spaces`);
  return v;
}

/** A short free-text field (progress, tool names given by hooks): redacted, one line, bounded. */
function shortText(v: unknown, field: string, max = MAX_ID): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") throw new LedgerInputError(`${field} must be a string`);
  const t = redactText(v.replace(/\s+/g, " ").trim());
  if (t.length === 0) return undefined;
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

/** The argument keys that name what a call acts on, in order of preference. */
const PRIMARY_KEYS = [
  "file_path",
  "filePath",
  "path",
  "file",
  "filename",
  "notebook_path",
  "url",
  "uri",
  "href",
  "selector",
  "ref",
  "uid",
  "element",
  "target",
  "command",
  "cmd",
  "query",
  "pattern",
  "name",
  "id",
];

/** The value a call acts on (from redacted arguments), or undefined when none is recognisable. */
export function primaryArgument(args: JsonValue | undefined): string | undefined {
  if (typeof args === "string") return args.length > 0 ? args : undefined;
  if (!args || typeof args !== "object" || Array.isArray(args)) return undefined;
  for (const k of PRIMARY_KEYS) {
    const v = args[k];
    if (typeof v === "string" && v.length > 0) return v;
    if (typeof v === "number") return String(v);
  }
  return undefined;
}

/** `<16 hex>` of tool + primary argument: two calls with the same target are retries of one thing. */
export function targetKey(toolName: string, args: JsonValue | undefined): string | undefined {
  const primary = primaryArgument(args);
  return primary === undefined ? undefined : hashPlaceholder(`${toolName}\u0000${primary}`).slice(7);
}

/** A node as shaped from input, before the store assigns seq, parent and recovery. */
export type ShapedNode = Omit<LedgerNode, "sessionId" | "seq" | "nodeId"> & { nodeId?: string };

/**
 * Validate, redact and bound a caller's input. Throws LedgerInputError for input that cannot be
 * recorded (no tool name, an unknown status); the service turns that into a counted failure.
 */
export function shapeNode(input: LedgerInput, now: Date, limits: LedgerLimits = DEFAULT_LEDGER_LIMITS): ShapedNode {
  if (!input || typeof input !== "object") throw new LedgerInputError("a ledger record must be an object");
  const toolName = shortText(input.toolName, "toolName");
  if (!toolName) throw new LedgerInputError("toolName is required");
  if (!LEDGER_STATUSES.includes(input.status))
    throw new LedgerInputError(`status must be one of ${LEDGER_STATUSES.join(", ")}, not "${String(input.status)}"`);
  const at = input.at === undefined ? now : new Date(input.at);
  if (Number.isNaN(at.getTime())) throw new LedgerInputError(`at is not a valid time: ${String(input.at)}`);

  const node: ShapedNode = { at: at.toISOString(), toolName, status: input.status };
  const nodeId = idField(input.nodeId, "nodeId");
  if (nodeId) node.nodeId = nodeId;
  const workflowId = idField(input.workflowId, "workflowId");
  if (workflowId) node.workflowId = workflowId;
  const tabId = idField(input.tabId, "tabId");
  if (tabId) node.tabId = tabId;
  const lane = idField(input.lane, "lane");
  if (lane) node.lane = lane;
  const runId = idField(input.runId, "runId");
  if (runId) node.runId = runId;
  const parent = idField(input.parentNodeId, "parentNodeId");
  if (parent) node.parentNodeId = parent;
  if (input.durationMs !== undefined) {
    // At most a year: a span's start is its end less the duration, in nanoseconds since 1970.
    if (
      typeof input.durationMs !== "number" ||
      !Number.isFinite(input.durationMs) ||
      input.durationMs < 0 ||
      input.durationMs > MAX_DURATION_MS
    )
      throw new LedgerInputError(`durationMs must be a number from 0 to ${MAX_DURATION_MS} (a year)`);
    node.durationMs = Math.round(input.durationMs * 1000) / 1000;
  }
  const progress =
    typeof input.progress === "boolean" ? (input.progress ? "advanced" : "stalled") : shortText(input.progress, "progress", 64);
  if (progress) node.progress = progress;

  if (input.error !== undefined && input.error !== null) {
    const raw = typeof input.error === "string" ? input.error : String(input.error);
    const error = summariseText(raw, limits.maxErrorChars);
    if (error.length > 0) node.error = error;
    const fp = failureFingerprint(raw);
    if (fp) node.fingerprint = fp;
  }
  const fp = idField(input.fingerprint, "fingerprint");
  if (fp) node.fingerprint = fp;
  const recoveryTool = shortText(input.recoveryTool, "recoveryTool");
  if (recoveryTool) node.recoveryTool = recoveryTool;

  if (input.args !== undefined) {
    const args = redactValue(input.args, { toolName });
    node.args = args;
    node.argsHash = hashPlaceholder(canonicalJson(args));
    const target = targetKey(toolName, args);
    if (target) node.target = target;
  }
  if (input.observation !== undefined && input.observation !== null) {
    const o = input.observation;
    const text = typeof o === "string" ? o : JSON.stringify(redactValue(o, { maxDepth: 4, maxKeys: 32, maxItems: 16, maxString: 256 }));
    if (text.length > 0) node.observation = summariseText(text, limits.maxObservationChars);
  }
  if (input.evidence !== undefined && input.evidence !== null) node.evidence = evidence(input.evidence);
  if (input.reward !== undefined && input.reward !== null) {
    if (typeof input.reward !== "number" || !Number.isFinite(input.reward)) throw new LedgerInputError("reward must be a finite number");
    node.reward = input.reward;
  }
  return node;
}

function evidence(e: LedgerEvidence | string): LedgerEvidence {
  if (typeof e === "string") {
    const handle = shortText(e, "evidence", 256);
    if (!handle) throw new LedgerInputError("evidence needs a handle");
    return { handle };
  }
  if (typeof e !== "object") throw new LedgerInputError("evidence must be a handle or {handle, kind, mediaType, bytes, hash, label}");
  const handle = shortText(e.handle, "evidence.handle", 256);
  if (!handle) throw new LedgerInputError("evidence.handle is required");
  const out: LedgerEvidence = { handle };
  const kind = shortText(e.kind, "evidence.kind", 64);
  if (kind) out.kind = kind;
  const mediaType = shortText(e.mediaType, "evidence.mediaType", 128);
  if (mediaType) out.mediaType = mediaType;
  if (typeof e.bytes === "number" && Number.isSafeInteger(e.bytes) && e.bytes >= 0) out.bytes = e.bytes;
  const hash = shortText(e.hash, "evidence.hash", 160);
  if (hash) out.hash = hash;
  const label = shortText(e.label, "evidence.label", 256);
  if (label) out.label = label;
  return out;
}

/** The store's decision for a new node, given what it already holds for the session. */
export interface Placement {
  seq: number;
  /** The session's latest node, if any. */
  previous?: { nodeId: string; toolName: string };
  /** The latest node on the same target, if any. */
  lastOnTarget?: { nodeId: string; status: LedgerStatus };
}

/**
 * Put a shaped node in place: its seq, its parent (default: the previous node), and the recovery
 * rule: a success whose target's latest attempt failed (error or no_progress) becomes
 * `recovered` and links the failed node; the previous node's tool, when it is another tool, is
 * taken as the recovery tool unless the caller named one.
 */
export function placeNode(sessionId: string, nodeId: string, shaped: ShapedNode, p: Placement): LedgerNode {
  const { nodeId: _given, ...rest } = shaped;
  const node: LedgerNode = { nodeId, sessionId, seq: p.seq, ...rest };
  if (node.parentNodeId === undefined && p.previous) node.parentNodeId = p.previous.nodeId;
  const failed = p.lastOnTarget && FAILED_STATUSES.has(p.lastOnTarget.status) ? p.lastOnTarget : undefined;
  if (failed && (node.status === "success" || node.status === "recovered")) {
    node.status = "recovered";
    node.recovers = failed.nodeId;
    if (node.recoveryTool === undefined && p.previous && p.previous.nodeId !== failed.nodeId && p.previous.toolName !== node.toolName)
      node.recoveryTool = p.previous.toolName;
  }
  return ordered(node);
}

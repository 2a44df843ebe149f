/**
 * The shape of a trajectory ledger node, apart from the code that makes one (nodes.ts) and
 * fits it into its byte budget (fit.ts). Types only.
 */
import type { JsonValue } from "../types.js";

/**
 * How an attempt ended. `recovered`: a success after failures on the same target (set by the
 * ledger when it sees one, or given by the caller). `aborted`: cancelled before it finished.
 */
export type LedgerStatus = "success" | "error" | "no_progress" | "recovered" | "aborted";

/** A pointer to evidence kept elsewhere (a screenshot artifact, a log file): metadata only, never the payload. */
export interface LedgerEvidence {
  /** What finds it again: an artifact id, a path, a URL (redacted). */
  handle: string;
  kind?: string;
  mediaType?: string;
  bytes?: number;
  /** A hash of the evidence, e.g. `sha256:…`. */
  hash?: string;
  label?: string;
}

export interface LedgerNode {
  nodeId: string;
  sessionId: string;
  /** 1, 2, 3 … per session, in recording order (pruned nodes keep theirs). */
  seq: number;
  workflowId?: string;
  tabId?: string;
  /** The agent lane whose call it was (core/lanes.ts). */
  lane?: string;
  /** The run (one agent turn of the lane) the call was made in: an export nests the call under it. */
  runId?: string;
  /** The node this one follows: by default the session's previous node. */
  parentNodeId?: string;
  /** When the attempt was recorded (it ended), ISO-8601. */
  at: string;
  durationMs?: number;
  toolName: string;
  status: LedgerStatus;
  /** The caller's progress verdict, e.g. `advanced`, `stalled`, `regressed`. */
  progress?: string;
  /** `fp-<16 hex>`: the normalised, redacted error text, hashed (core/fingerprint.ts). */
  fingerprint?: string;
  /** For a recovered success: the failed node on the same target it recovered from. */
  recovers?: string;
  /** The tool that made the recovery possible (e.g. a fresh page read before the retry). */
  recoveryTool?: string;
  /** `<16 hex>` of the tool and its primary argument (path, URL, selector, ...): what "the same target" means. */
  target?: string;
  /** `sha256:<16 hex>` of the redacted arguments (canonical JSON): the call's signature. */
  argsHash?: string;
  /** The redacted argument summary. */
  args?: JsonValue;
  /** The redacted, bounded error text. */
  error?: string;
  /** The redacted, bounded observation (what the call returned). */
  observation?: string;
  evidence?: LedgerEvidence;
  reward?: number;
  /** How many shrinking steps were needed to fit the byte budget (absent: none). */
  shrunk?: number;
}

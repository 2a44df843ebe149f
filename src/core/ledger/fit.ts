/**
 * A ledger node's byte budget: fields in a stable order, and `fitNode`, which shrinks a node's
 * summaries in steps (never its core fields) until its JSON fits.
 */

import { redactValue } from "../redaction/redact.js";
import type { LedgerNode } from "./node.js";

/** Fields in a stable, readable order (JSON keeps insertion order). */
const ORDER: readonly (keyof LedgerNode)[] = [
  "nodeId",
  "sessionId",
  "seq",
  "workflowId",
  "tabId",
  "lane",
  "runId",
  "parentNodeId",
  "at",
  "durationMs",
  "toolName",
  "status",
  "progress",
  "fingerprint",
  "recovers",
  "recoveryTool",
  "target",
  "argsHash",
  "args",
  "error",
  "observation",
  "evidence",
  "reward",
  "shrunk",
];

export function ordered(n: LedgerNode): LedgerNode {
  const out: Record<string, unknown> = {};
  for (const k of ORDER) if (n[k] !== undefined) out[k] = n[k];
  return out as unknown as LedgerNode;
}

/** UTF-8 length of a string, without Buffer (core stays portable). */
export function utf8Length(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) {
      if (c < 0x800) n += 1;
      else if (c >= 0xd800 && c <= 0xdbff) {
        n += 2; // a surrogate pair: 4 bytes for 2 code units
        i++;
      } else n += 2;
    }
  }
  return n;
}

const cut = (s: string | undefined, max: number): string | undefined =>
  s === undefined || s.length <= max ? s : `${s.slice(0, max)}…[+${s.length - max} chars]`;

/**
 * Shrinking steps, mildest first. Each keeps the core fields; later steps drop summaries
 * altogether (the args hash stays, so the call's signature survives).
 */
const SHRINK_STEPS: readonly ((n: LedgerNode) => void)[] = [
  (n) => {
    n.observation = cut(n.observation, 256);
  },
  (n) => {
    n.error = cut(n.error, 256);
  },
  (n) => {
    if (n.args !== undefined) n.args = redactValue(n.args, { maxDepth: 2, maxKeys: 8, maxItems: 4, maxString: 64 });
  },
  (n) => {
    if (n.evidence) n.evidence = { handle: cut(n.evidence.handle, 64) as string };
    n.observation = cut(n.observation, 64);
    n.error = cut(n.error, 128);
  },
  (n) => {
    delete n.args;
  },
  (n) => {
    delete n.observation;
    delete n.evidence;
    n.error = cut(n.error, 64);
    n.progress = cut(n.progress, 32);
    n.recoveryTool = cut(n.recoveryTool, 64);
  },
];

/** The node's stored JSON and its size, shrunk in steps until it fits `maxBytes`. */
export function fitNode(node: LedgerNode, maxBytes: number): { node: LedgerNode; json: string; bytes: number } {
  let json = JSON.stringify(node);
  let bytes = utf8Length(json);
  if (bytes <= maxBytes) return { node, json, bytes };
  const n: LedgerNode = { ...node };
  let steps = 0;
  for (const step of SHRINK_STEPS) {
    step(n);
    steps++;
    for (const k of Object.keys(n) as (keyof LedgerNode)[]) if (n[k] === undefined) delete n[k];
    n.shrunk = steps;
    json = JSON.stringify(ordered(n));
    bytes = utf8Length(json);
    if (bytes <= maxBytes) break;
  }
  const out = ordered(n);
  return { node: out, json, bytes };
}

/** `baton ledger record|list|show|export|health`: the trajectory ledger (agent hooks record after each tool call). */
import { readFileSync } from "node:fs";
import {
  LEDGER_STATUSES,
  type LedgerEvidence,
  type LedgerInput,
  LedgerInputError,
  type LedgerNode,
  type LedgerStatus,
  shapeNode,
} from "../../core/ledger/nodes.js";
import { badInput } from "../../errors.js";
import { writeStderr } from "../../platform/output.js";
import { type Ctx, parseIntOption } from "../context.js";

export interface RecordOptions {
  session?: string;
  tool: string;
  status: string;
  args?: string;
  error?: string;
  observation?: string;
  progress?: string;
  fingerprint?: string;
  recoveryTool?: string;
  evidence?: string;
  reward?: string;
  durationMs?: string;
  workflow?: string;
  tab?: string;
  parent?: string;
  id?: string;
}

/** `-` reads standard input (once: only one option may use it). */
function stdinOr(value: string | undefined, read: { used: boolean }, flag: string): string | undefined {
  if (value !== "-") return value;
  if (read.used) throw badInput(`only one option can read standard input ("-"); ${flag} cannot`);
  read.used = true;
  return readFileSync(0, "utf8");
}

/** JSON when it parses, else the text itself (a hook may pass whatever the tool received). */
function jsonOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function parseNumber(text: string | undefined, flag: string): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (text.trim() === "" || !Number.isFinite(n)) throw badInput(`${flag} must be a number, got "${text}"`);
  return n;
}

export async function ledgerRecord(ctx: Ctx, o: RecordOptions): Promise<void> {
  if (!LEDGER_STATUSES.includes(o.status as LedgerStatus))
    throw badInput(`--status must be one of ${LEDGER_STATUSES.join(", ")}, not "${o.status}"`);
  const stdin = { used: false };
  const args = stdinOr(o.args, stdin, "--args");
  const observation = stdinOr(o.observation, stdin, "--observation");
  const error = stdinOr(o.error, stdin, "--error");
  let evidence: LedgerEvidence | string | undefined;
  if (o.evidence !== undefined) {
    const e = jsonOrText(o.evidence);
    evidence = typeof e === "object" && e !== null && !Array.isArray(e) ? (e as LedgerEvidence) : o.evidence;
  }
  const reward = parseNumber(o.reward, "--reward");
  const durationMs = parseNumber(o.durationMs, "--duration-ms");
  const input: LedgerInput = {
    toolName: o.tool,
    status: o.status as LedgerStatus,
    ...(args !== undefined ? { args: jsonOrText(args) } : {}),
    ...(error !== undefined ? { error } : {}),
    ...(observation !== undefined ? { observation } : {}),
    ...(o.progress !== undefined ? { progress: o.progress } : {}),
    ...(o.fingerprint !== undefined ? { fingerprint: o.fingerprint } : {}),
    ...(o.recoveryTool !== undefined ? { recoveryTool: o.recoveryTool } : {}),
    ...(evidence !== undefined ? { evidence } : {}),
    ...(reward !== undefined ? { reward } : {}),
    ...(durationMs !== undefined ? { durationMs } : {}),
    ...(o.workflow !== undefined ? { workflowId: o.workflow } : {}),
    ...(o.tab !== undefined ? { tabId: o.tab } : {}),
    ...(o.parent !== undefined ? { parentNodeId: o.parent } : {}),
    ...(o.id !== undefined ? { nodeId: o.id } : {}),
  };
  // Input mistakes are the caller's to fix (exit 2); only storage failures are swallowed below.
  try {
    shapeNode(input, new Date());
  } catch (err) {
    if (err instanceof LedgerInputError) throw badInput(err.message);
    throw err;
  }
  const b = await ctx.open();
  const sessionId = await b.sessions.resolve(o.session);
  await b.sessions.read(sessionId); // a clear not_found for an unknown session
  const node = await b.ledger.record(sessionId, input);
  if (!node) {
    // The tool call the node describes must not fail because of the ledger: exit 0, say why.
    const health = b.ledger.health();
    if (!ctx.json)
      writeStderr(`baton: the ledger node was not written (${health.lastError ?? "unknown error"}); counted in ledger health\n`);
    ctx.out({ recorded: false, health }, () => "Not recorded.");
    return;
  }
  ctx.out(
    { recorded: true, node },
    () => `Recorded ${node.nodeId} (#${node.seq} ${node.toolName} ${node.status}${node.recovers ? `, recovers ${node.recovers}` : ""})`,
  );
}

function line(n: LedgerNode): string {
  const args = n.args === undefined ? "" : ` ${JSON.stringify(n.args)}`;
  const extra = [n.fingerprint, n.recovers ? `recovers ${n.recovers}` : "", n.recoveryTool ? `via ${n.recoveryTool}` : ""]
    .filter(Boolean)
    .join(", ");
  const text = `#${n.seq} ${n.at} ${n.toolName} ${n.status}${extra ? ` (${extra})` : ""}${args}`;
  return text.length > 160 ? `${text.slice(0, 159)}…` : text;
}

export async function ledgerList(
  ctx: Ctx,
  o: { session?: string; status?: string; tool?: string; workflow?: string; tab?: string; limit?: string },
): Promise<void> {
  if (o.status !== undefined && !LEDGER_STATUSES.includes(o.status as LedgerStatus))
    throw badInput(`--status must be one of ${LEDGER_STATUSES.join(", ")}, not "${o.status}"`);
  const limit = parseIntOption(o.limit, "--limit", 1);
  const b = await ctx.open();
  const sessionId = await b.sessions.resolve(o.session);
  await b.sessions.read(sessionId);
  const nodes = await b.ledger.list(sessionId, {
    ...(o.status !== undefined ? { status: o.status as LedgerStatus } : {}),
    ...(o.tool !== undefined ? { tool: o.tool } : {}),
    ...(o.workflow !== undefined ? { workflowId: o.workflow } : {}),
    ...(o.tab !== undefined ? { tabId: o.tab } : {}),
    ...(limit !== undefined ? { limit } : {}),
  });
  ctx.out({ sessionId, nodes }, () => (nodes.length ? nodes.map(line).join("\n") : `No ledger nodes in ${sessionId}.`));
}

export async function ledgerShow(ctx: Ctx, nodeId: string): Promise<void> {
  const b = await ctx.open();
  const node = await b.ledger.node(nodeId);
  ctx.out({ node }, () => JSON.stringify(node, null, 2));
}

/** `k=v` pairs from --header and OTEL_EXPORTER_OTLP_HEADERS (`k=v,k2=v2`, values URL-encoded). */
function headers(flags: string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  const add = (pair: string, from: string) => {
    const i = pair.indexOf("=");
    if (i <= 0) throw badInput(`${from}: "${pair.split("=")[0]}" is not key=value`);
    try {
      out[pair.slice(0, i).trim()] = decodeURIComponent(pair.slice(i + 1).trim());
    } catch {
      throw badInput(`${from}: the value of "${pair.slice(0, i).trim()}" is not valid percent-encoding`);
    }
  };
  for (const p of (process.env.OTEL_EXPORTER_OTLP_HEADERS ?? "").split(",").filter((x) => x.trim())) add(p, "OTEL_EXPORTER_OTLP_HEADERS");
  for (const p of flags ?? []) add(p, "--header");
  return out;
}

export async function ledgerExport(
  ctx: Ctx,
  o: { session?: string; all?: boolean; format?: string; out?: string; endpoint?: string; header?: string[] },
): Promise<void> {
  const format = o.format ?? (o.endpoint ? "otlp" : "jsonl");
  if (format !== "jsonl" && format !== "otlp") throw badInput(`--format must be jsonl or otlp, not "${format}"`);
  if (o.endpoint && format !== "otlp") throw badInput("--endpoint sends OTLP spans; drop --format jsonl");
  if (o.endpoint && o.out) throw badInput("give --endpoint or --out, not both");
  if (o.all && o.session) throw badInput("give --session or --all, not both");
  const b = await ctx.open();
  const sessionId = o.all ? undefined : await b.sessions.resolve(o.session);
  if (sessionId) await b.sessions.read(sessionId);
  const scope = sessionId ?? "all sessions";
  if (o.endpoint) {
    const r = await b.ledger.sendOtlp({ endpoint: o.endpoint, headers: headers(o.header), ...(sessionId ? { sessionId } : {}) });
    ctx.out(
      { ...(sessionId ? { sessionId } : {}), ...r },
      () => `Sent ${r.spans} spans of ${scope} in ${r.requests} request(s) to ${r.url}`,
    );
    return;
  }
  const lines = b.ledger.export({ format, ...(sessionId ? { sessionId } : {}) });
  if (o.out === undefined) {
    const { writeStdout } = await import("../../platform/output.js");
    for await (const l of lines) writeStdout(l);
    return;
  }
  const file = o.out;
  const { writeLinesTo } = await import("../out-file.js");
  const n = await writeLinesTo(file, lines);
  ctx.out(
    { ...(sessionId ? { sessionId } : {}), file, format, lines: n },
    () => `Exported ${n} ${format === "otlp" ? "OTLP request(s)" : "nodes"} of ${scope} to ${file}`,
  );
}

export async function ledgerHealth(ctx: Ctx): Promise<void> {
  const b = await ctx.open();
  const h = b.ledger.health();
  ctx.out(h, () =>
    h.writeFailures === 0 ? "No failed ledger writes." : `${h.writeFailures} failed ledger write(s); last at ${h.lastAt}: ${h.lastError}`,
  );
}

/** The agent's side of delivery: poll (lease), ack, nack, heartbeat. */

import type { JsonObject } from "../../core/types.js";
import { badInput, isBatonError } from "../../errors.js";
import { writeStderr } from "../../platform/output.js";
import { hostFacts, hostIdentity, withHostId } from "../../platform/process-facts.js";
import type { Lease } from "../../services/work/queue.js";
import { type Ctx, parseIntOption, parseJsonObject } from "../context.js";

export interface PollOptions {
  session?: string;
  kinds?: string;
  timeout?: string;
  leaseMs?: string;
  owner?: string;
}

function renderLease(l: Lease): string {
  const e = l.item.event;
  return [
    `Leased ${l.item.kind} (seq ${l.item.seq}) of ${l.item.sessionId}, attempt ${l.attempt}, until ${l.expiresAt}`,
    `  lease: ${l.leaseId}`,
    `  data: ${JSON.stringify(e.data)}`,
    `  when done: baton ack ${l.leaseId} --result '{"type":"<result event>","data":{}}'`,
  ].join("\n");
}

/** While the store is unavailable, `baton poll` tries again this often, until its own timeout. */
const OUTAGE_RETRY_MS = 1_000;

/**
 * How late the server's answer to a poll may come past its timeout: a store that froze as the
 * server looked for work holds it for the statement bound (plus its second of grace) and a
 * connect timeout or two (then 503 storage_unavailable), as this environment sets them; and 10 s.
 */
function answerSlackMs(): number {
  const ms = (name: string, otherwise: number) => {
    const n = Number(process.env[name]);
    return Number.isFinite(n) && n > 0 ? n : otherwise;
  };
  return 10_000 + ms("BATON_STORE_STATEMENT_TIMEOUT_MS", 30_000) + 1_000 + 2 * ms("BATON_STORE_TIMEOUT_MS", 5_000);
}

/**
 * Who leases when no --owner is given: the agent that ran this command (our parent), on this
 * host (`cli:<pid>@<host identity>`, with BATON_HOST_ID when set). The host keeps owners of
 * different hosts apart, so when the agent's run is marked crashed, on any proof, its leases are
 * given back with it (services/session/runs.ts) and never another host's agent of the same pid.
 */
export function defaultOwner(env: NodeJS.ProcessEnv = process.env): string {
  const id = env.BATON_HOST_ID;
  return `cli:${process.ppid}@${hostIdentity(id ? withHostId(hostFacts, id) : hostFacts)}`;
}

export async function poll(ctx: Ctx, o: PollOptions): Promise<void> {
  const timeoutMs = parseIntOption(o.timeout, "--timeout") ?? 30_000;
  const leaseMs = parseIntOption(o.leaseMs, "--lease-ms", 50);
  const kinds = o.kinds
    ?.split(",")
    .map((k) => k.trim())
    .filter(Boolean);
  const owner = o.owner ?? defaultOwner();
  const req = {
    timeoutMs,
    ...(o.session ? { sessionId: o.session } : {}),
    ...(kinds?.length ? { kinds } : {}),
    ...(leaseMs !== undefined ? { leaseMs } : {}),
  };
  // Through the server when one runs on this workspace (it wakes the poll the moment a browser
  // event lands), otherwise straight on the database, which wakes on commits within ms.
  const { resolveWorkspace } = await import("../../platform/workspace.js");
  const { findServer, pollServer } = await import("../../server/client.js");
  const server = await findServer(resolveWorkspace(ctx.root ? { root: ctx.root } : {}).dir);
  const b = server ? undefined : await ctx.open();
  if (b && o.session) await b.sessions.read(o.session); // a clear not_found before waiting
  // A store that goes down, freezes or is cut off while we wait (storage_unavailable, after at
  // most its statement bound) is said on stderr and polled again until our own timeout; still
  // unavailable then, the poll fails with that error (exit 5). Nothing is lost meanwhile: work
  // stays queued, and a lease whose grant was cut off comes back when it expires.
  const end = Date.now() + timeoutMs;
  let lease: Lease | undefined;
  let outages = 0;
  for (;;) {
    const wait = { ...req, timeoutMs: Math.max(0, end - Date.now()) };
    try {
      lease = server ? await pollServer(server, { owner, ...wait, answerSlackMs: answerSlackMs() }) : await b?.work.waitFor(owner, wait);
      break;
    } catch (err) {
      if (!isBatonError(err, "storage_unavailable") || Date.now() + OUTAGE_RETRY_MS >= end) throw err;
      if (outages++ === 0) writeStderr(`baton poll: the store is unavailable (${err.message}); polling again until the timeout\n`);
      await new Promise((r) => setTimeout(r, OUTAGE_RETRY_MS));
    }
  }
  if (outages > 0) writeStderr("baton poll: the store is back\n");
  const via = server ? "server" : "database";
  ctx.out({ lease: lease ?? null, via, ...(lease ? {} : { timedOut: true }) }, () =>
    lease ? renderLease(lease) : `No work within ${timeoutMs} ms.`,
  );
}

export async function ack(ctx: Ctx, leaseId: string, o: { result?: string }): Promise<void> {
  const result = parseJsonObject(o.result, "--result");
  if (result && result.type !== undefined && typeof result.type !== "string") throw badInput('--result "type" must be an event name');
  const b = await ctx.open();
  const r = await b.work.ack(leaseId, result as { type?: string; data?: JsonObject; actor?: string } | undefined);
  ctx.out(
    r,
    () =>
      `${r.duplicate ? "Already acked" : "Acked"} ${r.itemId}${r.result ? `; recorded ${r.result.event.type} as seq ${r.result.event.seq} (phase ${r.result.phase})` : ""}`,
  );
}

export async function nack(ctx: Ctx, leaseId: string, o: { delay?: string; reason?: string }): Promise<void> {
  const delayMs = parseIntOption(o.delay, "--delay");
  const b = await ctx.open();
  const r = await b.work.nack(leaseId, { ...(delayMs !== undefined ? { delayMs } : {}), ...(o.reason ? { reason: o.reason } : {}) });
  ctx.out(r, () =>
    r.state === "dead"
      ? `${r.itemId} was dead-lettered (out of attempts)`
      : `Released ${r.itemId}${r.availableAt ? ` until ${r.availableAt}` : ""}`,
  );
}

export async function heartbeat(ctx: Ctx, leaseId: string, o: { leaseMs?: string }): Promise<void> {
  const leaseMs = parseIntOption(o.leaseMs, "--lease-ms", 50);
  const b = await ctx.open();
  const r = await b.work.heartbeat(leaseId, leaseMs !== undefined ? { leaseMs } : {});
  ctx.out(r, () => `Lease ${leaseId} extended until ${r.expiresAt}`);
}

export async function release(ctx: Ctx, leaseId: string, o: { reason?: string }): Promise<void> {
  const b = await ctx.open();
  const r = await b.work.release(leaseId, o.reason ? { reason: o.reason } : {});
  ctx.out(r, () => (r.state === "dead" ? `${r.itemId} was dead-lettered (out of attempts)` : `Released ${r.itemId} back to the queue`));
}

export async function retry(ctx: Ctx, itemId: string): Promise<void> {
  const b = await ctx.open();
  const r = await b.work.retry(itemId);
  ctx.out(r, () => `${r.itemId} (${r.kind}, seq ${r.seq}) is back in the queue with fresh attempts`);
}

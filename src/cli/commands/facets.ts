/** Commands that record facets: decisions, blockers, position, progress, runs, resume context. */
import type { JsonObject } from "../../core/types.js";
import { BatonError, badInput } from "../../errors.js";
import { type Ctx, parseIntOption } from "../context.js";

type S = { session?: string };

async function target(ctx: Ctx, o: S) {
  const b = await ctx.open();
  return { b, sid: await b.sessions.resolve(o.session) };
}

export async function decisionAdd(
  ctx: Ctx,
  decision: string,
  o: S & { context?: string; reason?: string; alternative?: string[]; reversible?: boolean },
): Promise<void> {
  const { b, sid } = await target(ctx, o);
  const r = await b.facets.addDecision(sid, {
    decision,
    ...(o.context ? { context: o.context } : {}),
    ...(o.reason ? { reason: o.reason } : {}),
    ...(o.alternative?.length ? { alternatives: o.alternative } : {}),
    ...(o.reversible !== undefined ? { reversible: o.reversible } : {}),
  });
  ctx.out(r, () => `Recorded decision (seq ${r.event.seq}) on ${sid}`);
}

export async function blockerAdd(ctx: Ctx, text: string, o: S & { id?: string; affects?: string; workaround?: string }): Promise<void> {
  const { b, sid } = await target(ctx, o);
  const r = await b.facets.addBlocker(sid, {
    text,
    ...(o.id ? { id: o.id } : {}),
    ...(o.affects ? { affects: o.affects } : {}),
    ...(o.workaround ? { workaround: o.workaround } : {}),
  });
  ctx.out({ ...r, blockerId: r.event.data.id }, () => `Blocker ${String(r.event.data.id)} added to ${sid}`);
}

export async function blockerResolve(ctx: Ctx, id: string, o: S & { resolution?: string }): Promise<void> {
  const { b, sid } = await target(ctx, o);
  await requireBlocker(b, sid, id);
  const r = await b.facets.resolveBlocker(sid, id, o.resolution);
  ctx.out(r, () => `Blocker ${id} resolved on ${sid}`);
}

export async function blockerBypass(ctx: Ctx, id: string, o: S & { workaround: string }): Promise<void> {
  const { b, sid } = await target(ctx, o);
  await requireBlocker(b, sid, id);
  const r = await b.facets.bypassBlocker(sid, id, o.workaround);
  ctx.out(r, () => `Blocker ${id} bypassed on ${sid}`);
}

async function requireBlocker(b: Awaited<ReturnType<Ctx["open"]>>, sid: string, id: string): Promise<void> {
  const snap = await b.sessions.snapshot(sid);
  if (!snap.facets.blockers.some((x) => x.id === id)) {
    const known = snap.facets.blockers.map((x) => x.id);
    throw new BatonError("not_found", `session ${sid} has no blocker "${id}"${known.length ? ` (blockers: ${known.join(", ")})` : ""}`, {
      sessionId: sid,
      blockerId: id,
    });
  }
}

export async function positionSet(
  ctx: Ctx,
  o: S & { phase?: string; plan?: string; task?: string; wave?: string; status?: string },
): Promise<void> {
  const { b, sid } = await target(ctx, o);
  const r = await b.facets.setPosition(sid, { phase: o.phase, plan: o.plan, task: o.task, wave: o.wave, status: o.status });
  ctx.out(r, () => `Position set on ${sid}`);
}

export async function progressSet(ctx: Ctx, o: S & { total?: string; completed?: string }): Promise<void> {
  const total = parseIntOption(o.total, "--total");
  const completed = parseIntOption(o.completed, "--completed");
  if (total === undefined && completed === undefined) throw badInput("give --total and/or --completed");
  const { b, sid } = await target(ctx, o);
  const r = await b.facets.setProgress(sid, {
    ...(total !== undefined ? { total } : {}),
    ...(completed !== undefined ? { completed } : {}),
  });
  ctx.out(r, () => `Progress set on ${sid}`);
}

export async function runStart(ctx: Ctx, o: S & { agent: string; runId?: string; pid?: string; ttl?: string }): Promise<void> {
  const { b, sid } = await target(ctx, o);
  const pid = parseIntOption(o.pid, "--pid", 1);
  const ttlMs = parseIntOption(o.ttl, "--ttl", 1000);
  const r = await b.runs.start(sid, {
    agent: o.agent,
    ...(o.runId ? { runId: o.runId } : {}),
    pid: pid ?? process.ppid,
    ...(ttlMs !== undefined ? { ttlMs } : {}),
  });
  ctx.out(
    { sessionId: sid, runId: r.runId, seq: r.result.event.seq, expiresAt: r.expiresAt },
    () => `Run ${r.runId} started on ${sid}; heartbeat before ${r.expiresAt} (\`baton run heartbeat ${r.runId}\`)`,
  );
}

export async function runHeartbeat(ctx: Ctx, runId: string, o: S & { ttl?: string }): Promise<void> {
  const { b, sid } = await target(ctx, o);
  const ttlMs = parseIntOption(o.ttl, "--ttl", 1000);
  const r = await b.runs.heartbeat(sid, runId, ttlMs !== undefined ? { ttlMs } : {});
  ctx.out({ sessionId: sid, ...r }, () => `Run ${runId} alive until ${r.expiresAt}`);
}

export async function runEnd(
  ctx: Ctx,
  runId: string,
  o: S & { reason?: string; completedWork?: string; contextUsage?: string },
): Promise<void> {
  const { b, sid } = await target(ctx, o);
  const snap = await b.sessions.snapshot(sid);
  if (!snap.facets.runs.some((r) => r.runId === runId))
    throw new BatonError("not_found", `session ${sid} has no run "${runId}" started with \`baton run start\``, { sessionId: sid, runId });
  let contextUsage: number | undefined;
  if (o.contextUsage !== undefined) {
    contextUsage = Number(o.contextUsage);
    if (!Number.isFinite(contextUsage) || contextUsage < 0) throw badInput("--context-usage must be a number ≥ 0 (e.g. 0.72 or 144000)");
  }
  const r = await b.runs.end(sid, runId, {
    ...(o.reason ? { reason: o.reason } : {}),
    ...(o.completedWork ? { completedWork: o.completedWork } : {}),
    ...(contextUsage !== undefined ? { contextUsage } : {}),
  });
  ctx.out(r, () => `Run ${runId} ended on ${sid}`);
}

export async function filesAdd(ctx: Ctx, paths: string[], o: S & { question?: string[]; implementation?: string[] }): Promise<void> {
  const { b, sid } = await target(ctx, o);
  const r = await b.facets.recordResumeContext(sid, {
    files: paths,
    ...(o.question ? { openQuestions: o.question } : {}),
    ...(o.implementation ? { keyImplementations: o.implementation } : {}),
  });
  ctx.out(r, () => `Recorded ${paths.length} file(s) in the resume context of ${sid}`);
}

export async function contextSet(ctx: Ctx, pairs: string[], o: S): Promise<void> {
  const values: JsonObject = {};
  for (const p of pairs) {
    const i = p.indexOf("=");
    if (i <= 0) throw badInput(`"${p}" is not key=value`);
    if (p.slice(0, i) === "__proto__") throw badInput(`"__proto__" is not a context key; pick another name`);
    const raw = p.slice(i + 1);
    let v: JsonObject[string];
    try {
      v = JSON.parse(raw) as JsonObject[string];
    } catch {
      v = raw;
    }
    values[p.slice(0, i)] = v;
  }
  const { b, sid } = await target(ctx, o);
  const r = await b.facets.setContext(sid, values);
  ctx.out(r, () => `Context set on ${sid}: ${Object.keys(values).join(", ")}`);
}

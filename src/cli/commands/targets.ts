/** `baton target …`: bind a session to its external target, and resolve it without silent fallbacks. */
import type { TargetInput } from "../../core/session/targets.js";
import type { TargetBinding } from "../../core/types.js";
import type { Ctx } from "../context.js";
import { one } from "../render.js";

type S = { session?: string };

async function sessionOf(ctx: Ctx, id: string | undefined, o: S) {
  const b = await ctx.open();
  return { b, sid: await b.sessions.resolve(id ?? o.session) };
}

function show(t: TargetBinding | undefined): string {
  return t
    ? `${one(t.kind)} ${one(t.id)}${t.url ? ` ${one(t.url)}` : ""}${t.label ? ` (${one(t.label)})` : ""}, bound at ${t.setAt}`
    : "no target";
}

export async function set(
  ctx: Ctx,
  id: string | undefined,
  o: S & { kind: string; id: string; url?: string; label?: string },
): Promise<void> {
  const { b, sid } = await sessionOf(ctx, id, o);
  const input: TargetInput = {
    kind: o.kind,
    id: o.id,
    ...(o.url !== undefined ? { url: o.url } : {}),
    ...(o.label !== undefined ? { label: o.label } : {}),
  };
  const r = await b.targets.set(sid, input);
  ctx.out({ sessionId: sid, target: r.target, seq: r.result.event.seq }, () => `${sid} bound to ${show(r.target)}`);
}

export async function showTarget(ctx: Ctx, id: string | undefined, o: S): Promise<void> {
  const { b, sid } = await sessionOf(ctx, id, o);
  const t = await b.targets.get(sid);
  ctx.out({ sessionId: sid, target: t ?? null }, () => `${sid}: ${show(t)}`);
}

export async function clear(ctx: Ctx, id: string | undefined, o: S & { reason?: string }): Promise<void> {
  const { b, sid } = await sessionOf(ctx, id, o);
  const r = await b.targets.clear(sid, o.reason);
  ctx.out({ sessionId: sid, seq: r.event.seq }, () => `${sid} is no longer bound to a target`);
}

export async function resolve(
  ctx: Ctx,
  id: string | undefined,
  o: S & { kind?: string; id?: string; url?: string; navigate?: boolean; force?: boolean },
): Promise<void> {
  const { b, sid } = await sessionOf(ctx, id, o);
  const observed: Partial<TargetInput> = {
    ...(o.kind !== undefined ? { kind: o.kind } : {}),
    ...(o.id !== undefined ? { id: o.id } : {}),
    ...(o.url !== undefined ? { url: o.url } : {}),
  };
  const r = await b.targets.resolve(sid, observed, { allowNavigate: o.navigate === true, force: o.force === true });
  ctx.out(r, () => [`${sid}: ${r.status}: ${show(r.target)}`, ...r.warnings.map((w) => `  warning: ${w}`)].join("\n"));
}

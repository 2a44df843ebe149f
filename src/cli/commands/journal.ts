/** Commands over sessions and their journals. */
import { timeOrderedId } from "../../core/canonical.js";
import { ago, isLaneId } from "../../core/lanes.js";
import { batonCommand } from "../../core/shell.js";
import type { JsonObject } from "../../core/types.js";
import { BatonError, badInput, isBatonError } from "../../errors.js";
import type { ConfigTrust } from "../../platform/config-file.js";
import { writeStdout } from "../../platform/output.js";
import { type Ctx, parseIntOption, parseJsonObject } from "../context.js";
import { one, renderSession, renderStatus } from "../render.js";
import { resumeReport, type StatusOptions, statusReport } from "../reports.js";

export async function init(ctx: Ctx, o: { store?: string; project?: string } = {}): Promise<void> {
  if (o.store !== undefined || o.project !== undefined) {
    if (o.store === undefined || o.project === undefined) throw badInput("--store and --project go together");
    const [
      { findWorkspace, requireWorkingDir, resolveWorkspace, workspaceAt },
      { checkConfigWritable, checkProject, checkStoreUrl, writeStoreConfig },
    ] = await Promise.all([import("../../platform/workspace.js"), import("../../platform/store-config.js")]);
    // Check before touching anything: bad input changes nothing, nor does a settings file the
    // user has not trusted (its other settings would be kept, and trusted, unseen).
    checkStoreUrl(o.store, { forWriting: true });
    checkProject(o.project);
    const existing = ctx.root ? workspaceAt(ctx.root) : findWorkspace(requireWorkingDir());
    if (existing) checkConfigWritable(existing.dir);
    // Connect and migrate first: a store that cannot be reached (or a wrong URL) is never
    // written down, so the workspace stays on what it used before.
    // With the same limits (connect, statement, blob size) as every later open.
    const { openPostgresBackend } = await import("../../compose.js");
    const probe = await openPostgresBackend(o.store, o.project);
    await probe.close();
    const ws = resolveWorkspace({ create: true, ...(ctx.root ? { root: ctx.root } : {}) });
    writeStoreConfig(ws.dir, o.store, o.project);
  }
  const b = await ctx.open(true);
  ctx.out({ root: b.root, database: b.store.location, store: b.store }, () =>
    b.store.kind === "sqlite"
      ? `Baton workspace ready at ${b.root} (journal: ${b.store.location})`
      : `Baton workspace ready at ${b.root} (store: ${b.store.kind} ${b.store.location}, project ${b.store.project})`,
  );
}

export async function sessionStart(ctx: Ctx, o: { flow: string; id?: string; title?: string; deadline?: string }): Promise<void> {
  const b = await ctx.open();
  const snap = await b.sessions.start({
    flow: o.flow,
    ...(o.id ? { id: o.id } : {}),
    ...(o.title ? { title: o.title } : {}),
    ...(o.deadline ? { deadline: o.deadline } : {}),
  });
  const status = await b.sessions.status({ sessionId: snap.sessionId });
  ctx.out(
    { sessionId: snap.sessionId, flow: snap.flow, phase: snap.phase, nextAction: status.sessions[0]?.nextAction },
    () => `Started ${snap.sessionId} (${snap.flow}, phase ${snap.phase})`,
  );
}

export async function sessionList(ctx: Ctx, o: { all?: boolean }): Promise<void> {
  const b = await ctx.open();
  const rows = await b.sessions.list({ includeCompleted: o.all === true });
  const sessions = rows.map((r) => ({
    sessionId: r.id,
    flow: r.flow,
    title: r.title,
    phase: r.phase,
    status: r.status,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    events: r.lastSeq,
  }));
  ctx.out({ sessions }, () =>
    sessions.length === 0
      ? `No ${o.all ? "" : "active "}sessions.`
      : sessions.map((s) => `${s.sessionId}\t${s.flow}\t${s.phase}\t${s.status}\t${s.events} events\t${one(s.title)}`).join("\n"),
  );
}

export async function sessionShow(ctx: Ctx, id: string | undefined, o: { session?: string }): Promise<void> {
  const b = await ctx.open();
  const sid = await b.sessions.resolve(id ?? o.session);
  const view = await b.sessions.read(sid);
  ctx.out({ snapshot: view.snapshot, diagnostics: view.readDiagnostics }, () => JSON.stringify(view.snapshot, null, 2));
}

export async function event(
  ctx: Ctx,
  first: string,
  second: string | undefined,
  o: { session?: string; data?: string; id?: string; actor?: string; revision?: string; lock?: string; epoch?: string },
): Promise<void> {
  const [positionalSession, type] = second === undefined ? [undefined, first] : [first, second];
  if (positionalSession && o.session && positionalSession !== o.session)
    throw badInput(`two sessions named: ${positionalSession} and --session ${o.session}`);
  const b = await ctx.open();
  const sid = await b.sessions.resolve(positionalSession ?? o.session);
  const data = parseJsonObject(o.data, "--data") as JsonObject | undefined;
  const revision = parseIntOption(o.revision, "--revision");
  const input = {
    type,
    ...(data ? { data } : {}),
    ...(o.id ? { id: o.id } : {}),
    ...(o.actor ? { actor: o.actor } : {}),
    ...(revision !== undefined ? { revision } : {}),
  };
  // A fenced append: refused with lock_lost unless this epoch still holds the lock.
  const lock = o.lock ?? (o.epoch !== undefined ? process.env.BATON_LOCK_NAME : undefined);
  const epoch = parseIntOption(o.epoch ?? (o.lock !== undefined ? process.env.BATON_LOCK_EPOCH : undefined), "--epoch", 1);
  if ((lock === undefined) !== (epoch === undefined))
    throw badInput("a fenced append needs both --lock and --epoch (or BATON_LOCK_NAME / BATON_LOCK_EPOCH)");
  // A fenced append commits in the lock's own transaction, which is not re-sent: it carries its
  // id from the start, so an outcome left unknown can be retried at most once (the plain path's
  // journal gives ids itself, and re-sends once).
  const fenced = lock !== undefined && epoch !== undefined;
  if (fenced && input.id === undefined) Object.assign(input, { id: `ev_${timeOrderedId()}` });
  let r: Awaited<ReturnType<typeof b.events.append>>;
  try {
    r = fenced ? await b.locks.append(lock, epoch, sid, input) : await b.events.append(sid, input);
  } catch (err) {
    throw unknownOutcome(err, (input as { id?: string }).id, Boolean(o.id));
  }
  ctx.out(
    r,
    () => `${r.duplicate ? "Duplicate of" : "Appended"} ${r.event.type} as seq ${r.event.seq} to ${sid}: ${r.outcome}, phase ${r.phase}`,
  );
}

/**
 * An append whose outcome is unknown (the store went away as it committed, and was still away
 * at the automatic re-send): the same error, plus the exact command that stores it at most
 * once, this command with the event's id (`retry`). Run again without the id, it would be
 * stored a second time if the first did land.
 */
function unknownOutcome(err: unknown, sent: string | undefined, given: boolean): unknown {
  if (!isBatonError(err, "storage_unavailable") || err.details.outcome !== "unknown") return err;
  const id = (err.details.ids as string[] | undefined)?.[0] ?? sent;
  if (id === undefined) return err;
  const args = process.argv.slice(2);
  // The id given on the command line stands; else the one sent (a later --id wins over an empty one).
  const retry = batonCommand(...(given ? args : [...args, "--id", id]));
  return new BatonError(
    "storage_unavailable",
    `${err.message}. Run exactly this to store it at most once: ${retry}`,
    { ...err.details, ids: [id], retry },
    { cause: err },
  );
}

export async function status(ctx: Ctx, o: StatusOptions): Promise<void> {
  const b = await ctx.open();
  const { report, crashed, config, json } = await statusReport(b, o);
  ctx.out(json, (paint) =>
    [...crashed.map(renderCrash), renderStatus(report, paint), ...storeLine(b.store), ...configLine(config)].join("\n"),
  );
}

/** A `.baton/config.json` Baton ignores is worth a line: its settings are not the ones in force. */
function configLine(c: ConfigTrust): string[] {
  if (c.state !== "untrusted" && c.state !== "changed") return [];
  const why = c.state === "changed" ? "changed since you trusted it" : "not trusted by you";
  return [
    `Settings: ${c.file} is ignored (${why})${c.keys.length > 0 ? `: ${c.keys.join(", ")}` : ""}; read it, then run \`baton trust\` if they are yours`,
  ];
}

/** A shared store is worth a line in human output; the default SQLite file is not. */
export function storeLine(s: { kind: string; location: string; project?: string }): string[] {
  return s.kind === "sqlite" ? [] : [`Store: ${s.kind} ${s.location}${s.project ? `, project ${s.project}` : ""}`];
}

function renderCrash(c: { sessionId: string; runId: string; proof: string; releasedWork: unknown[] }): string {
  return `Run ${c.runId} on ${c.sessionId} crashed (${c.proof}); ${c.releasedWork.length} leased work item(s) given back.`;
}

export async function resume(
  ctx: Ctx,
  id: string | undefined,
  o: { session?: string; unpause?: boolean; reason?: string; lane?: string },
): Promise<void> {
  const b = await ctx.open();
  const sid = await b.sessions.resolve(id ?? o.session);
  if (o.reason !== undefined && !o.unpause) throw badInput("--reason goes with --unpause");
  if (o.lane !== undefined && !o.unpause) throw badInput("--lane goes with --unpause");
  if (o.lane !== undefined && !isLaneId(o.lane)) throw badInput(`lane ${JSON.stringify(o.lane)} is invalid; see \`baton lanes\``);
  const unpause = o.unpause
    ? await b.turns.unpause(sid, {
        ...(o.reason !== undefined ? { reason: o.reason } : {}),
        ...(o.lane !== undefined ? { lane: o.lane } : {}),
      })
    : undefined;
  const r = await resumeReport(b, sid, unpause);
  ctx.out(r, (paint) => {
    const lines = [...(r.crashedRuns ?? []).map(renderCrash), renderSession(r, paint)];
    if (unpause) lines.unshift(unpause.unpaused ? `Spiral pause cleared on ${sid}.` : `${sid} was not paused.`);
    if (r.verification.files.length) {
      lines.push("  files:");
      for (const f of r.verification.files) lines.push(`    ${f.review ? "REVIEW " : "ok     "}${one(f.path)} (${f.state})`);
    }
    if (r.facets.resume.openQuestions.length) lines.push(`  open questions: ${r.facets.resume.openQuestions.map(one).join("; ")}`);
    lines.push(
      `  recent events: ${r.recentEvents
        .slice(-5)
        .map((e) => `${e.seq}:${e.type}`)
        .join(", ")}`,
    );
    return lines.join("\n");
  });
}

/** The lanes of a session (core/lanes.ts): the live ones, or with --all every one it keeps. */
export async function lanes(ctx: Ctx, o: { session?: string; all?: boolean }): Promise<void> {
  const b = await ctx.open();
  const sid = await b.sessions.resolve(o.session);
  const snap = await b.sessions.snapshot(sid);
  const now = Date.now();
  const live = await b.lanes.list(sid);
  const past = o.all
    ? Object.values(snap.facets.lanes ?? {})
        .filter((l) => !live.some((v) => v.lane === l.id))
        .map((l) => ({
          lane: l.id,
          agent: l.agent,
          ...(l.host !== undefined ? { host: l.host } : {}),
          status: l.status,
          started: l.started,
          lastAt: l.lastAt,
        }))
    : [];
  ctx.out({ sessionId: sid, lanes: live, ...(o.all ? { past } : {}) }, () => {
    if (live.length === 0 && past.length === 0) return `No agent is working in ${sid} now.`;
    const lines = [`Lanes of ${sid}:`];
    for (const l of live) {
      lines.push(
        `  ${l.lane}  ${l.agent}${l.host ? ` on ${l.host}` : ""}: ${l.status === "working" ? `working (run ${l.run})` : "between turns"}, last active ${ago(l.lastAt, now)}${l.spiral ? `; PAUSED (${l.spiral.pattern})` : ""}`,
      );
      if (l.claims.count > 0)
        lines.push(`    claims ${l.claims.count} file(s): ${l.claims.files.slice(0, 8).join(", ")}${l.claims.count > 8 ? ", …" : ""}`);
    }
    for (const l of past)
      lines.push(`  ${l.lane}  ${l.agent}${l.host ? ` on ${l.host}` : ""}: ${l.status}, last active ${ago(l.lastAt, now)}`);
    return lines.join("\n");
  });
}

export async function complete(ctx: Ctx, id: string | undefined, o: { session?: string; force?: boolean }): Promise<void> {
  const b = await ctx.open();
  const sid = await b.sessions.resolve(id ?? o.session);
  const r = await b.sessions.complete(sid, { force: o.force === true });
  ctx.out(r, () =>
    r.alreadyComplete
      ? `${sid} was already complete (${r.phase}).`
      : `Completed ${sid}: phase ${r.phase}${r.forced ? ` (forced past ${r.markers.length} markers)` : ""}.`,
  );
}

export async function state(ctx: Ctx, id: string | undefined, o: { session?: string; write?: boolean }): Promise<void> {
  const b = await ctx.open();
  const sid = await b.sessions.resolve(id ?? o.session);
  if (o.write) {
    const file = await b.sessions.writeStateMarkdown(sid);
    ctx.out({ sessionId: sid, file }, () => `Wrote ${file}`);
    return;
  }
  const md = await b.sessions.stateMarkdown(sid);
  ctx.out({ sessionId: sid, markdown: md }, () => md);
}

export async function exportJournal(ctx: Ctx, id: string | undefined, o: { session?: string; out?: string; seq?: string }): Promise<void> {
  const b = await ctx.open();
  const sid = await b.sessions.resolve(id ?? o.session);
  const seq = parseIntOption(o.seq, "--seq", 1);
  if (seq !== undefined) {
    // One event, as its JSON line: what a next action points at, not the whole journal.
    const { events } = await b.events.list(sid, { afterSeq: seq - 1, limit: 1 });
    const ev = events[0];
    if (!ev || ev.seq !== seq) throw new BatonError("not_found", `session ${sid} has no event with seq ${seq}`, { sessionId: sid, seq });
    writeStdout(`${JSON.stringify(ev)}\n`);
    return;
  }
  if (o.out === undefined) {
    // The shared path: a closed pipe ends the export quietly.
    for await (const line of b.events.exportJsonl(sid)) writeStdout(line);
    return;
  }
  const file = o.out;
  const { writeLinesTo } = await import("../out-file.js");
  const n = await writeLinesTo(file, b.events.exportJsonl(sid));
  ctx.out({ sessionId: sid, file, events: n }, () => `Exported ${n} events of ${sid} to ${file}`);
}

export async function rebuild(ctx: Ctx, o: { session?: string }): Promise<void> {
  const b = await ctx.open();
  const r = await b.sessions.rebuild(o.session);
  ctx.out(
    { sessions: r },
    () =>
      r.map((x) => `${x.sessionId}: ${x.repaired ? "REPAIRED" : "ok"} (${x.lastSeq} events, phase ${x.phase})`).join("\n") ||
      "No sessions.",
  );
}

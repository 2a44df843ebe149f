/**
 * Which Baton session, lane and run an agent's hook belongs to (services/agents/hooks.ts).
 *
 * - The lane: the agent session (core/lanes.ts), `<agent>:<session id>`, a subagent's inside it.
 * - The session: the active one where this lane already works; else the single active one
 *   (a new agent session joins the task in a lane of its own and is handed all of it); else,
 *   when the hook may start one, a new `task` session titled from the workspace.
 * - The run: the lane's, with the agent's process as its pid and a 2-hour heartbeat timeout;
 *   each prompt heartbeats it, and a turn's end ends it (and with it the lane's claims).
 *
 * All idempotent, so a hook answered twice (by the server, then by its own process) finds or
 * starts them once: a session is started under a lock after looking again, and a run's id comes
 * from the hook's request id, which `runs.start` deduplicates.
 */
import { basename } from "node:path";
import type { Baton } from "../../api.js";
import { sha256 } from "../../core/canonical.js";
import type { SessionBrief } from "../../core/hooks/context.js";
import type { HookEvent } from "../../core/hooks/types.js";
import { LANE_TTL_MS, laneId, pausedSpiral } from "../../core/lanes.js";
import type { RunRecord, Snapshot } from "../../core/types.js";
import { isBatonError } from "../../errors.js";
import { agentProcessMark, agentSessionMark, markAgentSession } from "../../platform/workspace.js";

/** A run the hooks start lasts this long without a heartbeat (each prompt heartbeats it). */
export const HOOK_RUN_TTL_MS = LANE_TTL_MS;
/** Taken while a hook starts a session, so parallel hooks start one, not several. */
const SESSION_LOCK = "hooks:new-session";
/** How long a hook waits for another hook that is starting the session. */
const SESSION_LOCK_WAIT_MS = 5_000;

/** The lane of the agent session (or subagent) a hook came from. */
export function laneOf(ev: HookEvent): string {
  return laneId(ev.agent, ev.agentSessionId, ev.subagentId);
}

/** The lane of the agent session itself (a subagent's parent). */
function topLane(ev: HookEvent): string {
  return laneId(ev.agent, ev.agentSessionId);
}

/**
 * The Baton session for the agent's session: the active session its lane works in; else the
 * single active session; else, with several and no lane found, the most recently updated one
 * for a hook without a session id; else, with `create`, a new `task` session.
 */
export async function sessionFor(b: Baton, ev: HookEvent, label: string, create: true, adopt?: boolean): Promise<string>;
export async function sessionFor(b: Baton, ev: HookEvent, label: string, create: false, adopt?: boolean): Promise<string | undefined>;
export async function sessionFor(b: Baton, ev: HookEvent, label: string, create: boolean, adopt = true): Promise<string | undefined> {
  const found = await existingSession(b, ev, adopt);
  if (found || !create) return found;
  // Agents run tool calls in parallel, so several hooks may find no session at once: one
  // creates it under a lock, the others find it when they get the lock.
  const lock = await b.locks.acquire(SESSION_LOCK, { waitMs: SESSION_LOCK_WAIT_MS, ttlMs: 2 * SESSION_LOCK_WAIT_MS });
  try {
    const again = await existingSession(b, ev, adopt);
    if (again) return again;
    const snap = await b.sessions.start({ flow: "task", title: `${basename(b.root)} (${label})`, actor: "agent" });
    await b.events.append(snap.sessionId, { type: "start", actor: "agent" });
    return snap.sessionId;
  } finally {
    await b.locks.release(SESSION_LOCK, lock.epoch);
  }
}

/** `adopt`: false takes only a session this agent session's lane works in, none by the rules for one without. */
async function existingSession(b: Baton, ev: HookEvent, adopt = true): Promise<string | undefined> {
  const active = await b.sessions.list();
  if (adopt && active.length === 1) return (active[0] as { id: string }).id;
  if (active.length > 1 || (!adopt && active.length > 0)) {
    if (!ev.agentSessionId) return adopt ? [...active].sort((x, y) => (x.updatedAt < y.updatedAt ? 1 : -1))[0]?.id : undefined;
    // The session this lane works in; else the one it worked in last (an agent session resumed after it ended).
    const lane = topLane(ev);
    let ended: { id: string; at: string } | undefined;
    for (const s of active) {
      const l = (await b.sessions.snapshot(s.id)).facets.lanes?.[lane];
      if (l && l.status !== "ended") return s.id;
      if (l && (ended === undefined || l.lastAt > ended.at)) ended = { id: s.id, at: l.lastAt };
    }
    if (ended) return ended.id;
  }
  return undefined;
}

/** This lane's runs that are still running. */
export function runningRuns(snap: Snapshot, ev: HookEvent): RunRecord[] {
  const lane = topLane(ev);
  return (snap.facets.runs ?? []).filter((r) => r.status === "running" && r.lane === lane);
}

function runPrefix(ev: HookEvent): string {
  const id = (ev.agentSessionId ?? "").replace(/[^A-Za-z0-9._-]/g, "-").slice(0, 48);
  return id ? `${ev.agent}-${id}` : ev.agent;
}

let runSeq = 0;

/**
 * Keep this agent session's run alive, or start one (after a turn ended it, or a crash). The
 * new run's id comes from `requestId`, so two attempts at one hook start one run.
 */
export async function ensureRun(
  b: Baton,
  sid: string,
  snap: Snapshot,
  ev: HookEvent,
  o: { label: string; agentPid: number; requestId?: string | undefined },
): Promise<void> {
  // The process's mark only at a session's start: a launcher such as npx is a new process on every hook.
  for (const mark of [
    agentSessionMark(ev.agent, ev.agentSessionId),
    ev.kind === "session_start" ? agentProcessMark(o.agentPid) : undefined,
  ])
    if (mark !== undefined) markAgentSession(b.workspace.dir, mark);
  const current = runningRuns(snap, ev).at(-1);
  if (current) {
    try {
      await b.runs.heartbeat(sid, current.runId, { ttlMs: HOOK_RUN_TTL_MS });
      return;
    } catch (err) {
      // crashed (its work went back) or ended meanwhile: start a new one
      if (!isBatonError(err, "run_crashed") && !isBatonError(err, "bad_input") && !isBatonError(err, "not_found")) throw err;
    }
  }
  const sent = sentOnStoreClock(b, ev);
  // Without a request id: unique per process and call (one server starts the runs of many agent sessions).
  const seq = runSeq++;
  const tag =
    o.requestId !== undefined
      ? sha256(o.requestId).slice(0, 12)
      : `${Date.now().toString(36)}${process.pid.toString(36)}${seq > 0 ? `-${seq.toString(36)}` : ""}`;
  try {
    await b.runs.start(sid, {
      agent: o.label,
      runId: `${runPrefix(ev)}-${tag}`,
      pid: o.agentPid,
      ttlMs: HOOK_RUN_TTL_MS,
      lane: topLane(ev),
      // Decided where no other hook can end the lane meanwhile (another process, another request).
      ...(sent !== undefined ? { unlessLaneEndedAfter: sent } : {}),
    });
  } catch (err) {
    if (!(sent !== undefined && isBatonError(err, "conflict") && err.details.lane !== undefined)) throw err;
  }
}

/**
 * When the agent sent this event, on the store's clock (the agent's is this host's; a shared
 * store's is the database's). Hooks an agent runs without waiting for them (Cline CLI's
 * TaskStart, SessionShutdown) reach Baton in any order: a task's start handled after the cancel
 * that ended its session must not open a run that nothing will end.
 */
function sentOnStoreClock(b: Baton, ev: HookEvent): string | undefined {
  const sent = ev.sentAt === undefined ? Number.NaN : Date.parse(ev.sentAt);
  if (Number.isNaN(sent)) return undefined;
  const offset = b.store.kind === "sqlite" ? 0 : b.now().getTime() - Date.now();
  return new Date(sent + offset).toISOString();
}

/**
 * Keep this lane's running runs alive through a turn that ended with a subagent still at work in
 * the background (its own hooks heartbeat nothing): the run lasts HOOK_RUN_TTL_MS from here.
 */
export async function heartbeatRuns(b: Baton, ev: HookEvent & { kind: "stop" }): Promise<void> {
  for (const s of await b.sessions.list()) {
    for (const r of runningRuns(await b.sessions.snapshot(s.id), ev)) {
      try {
        await b.runs.heartbeat(s.id, r.runId, { ttlMs: HOOK_RUN_TTL_MS });
      } catch (err) {
        // ended or crashed meanwhile: the next prompt starts a new one
        if (!isBatonError(err, "run_crashed") && !isBatonError(err, "bad_input") && !isBatonError(err, "not_found")) throw err;
      }
    }
  }
}

/**
 * End this lane's running runs, in whichever session they are (a turn's end never starts a
 * session); at the agent session's end, the lane ends too.
 */
export async function endRuns(b: Baton, ev: HookEvent & { kind: "stop" }, requestId?: string): Promise<void> {
  const lane = topLane(ev);
  const end = async (sid: string, runs: readonly RunRecord[]) => {
    for (const r of runs) {
      try {
        await b.runs.end(
          sid,
          r.runId,
          // A run ends once: a second attempt at this hook finds its event.
          { reason: ev.sessionEnd ? `session ended${ev.reason ? ` (${ev.reason})` : ""}` : "turn ended", id: `run:${r.runId}:ended` },
          "agent",
        );
      } catch (err) {
        // ended meanwhile by another hook (a turn's end racing the session's end)
        if (!isBatonError(err, "conflict")) throw err;
      }
    }
  };
  for (const s of await b.sessions.list()) {
    const snap = await b.sessions.snapshot(s.id);
    await end(s.id, runningRuns(snap, ev));
    const l = snap.facets.lanes?.[lane];
    if (ev.sessionEnd && l && l.status !== "ended") {
      await b.events.append(s.id, {
        ...(requestId !== undefined ? { id: `lane:${sha256(`${lane}\u0000${requestId}`).slice(0, 24)}:ended` } : {}),
        type: "lane:ended",
        actor: "agent",
        data: { lane, ...(ev.reason ? { reason: ev.reason } : {}) },
      });
      // A run another hook (another process) started while this one read the lane: ended too.
      // One started after the lane's end is refused (ensureRun's unlessLaneEndedAfter).
      const after = await b.sessions.snapshot(s.id);
      const endedAt = after.facets.lanes?.[lane]?.lastAt;
      if (endedAt !== undefined)
        await end(
          s.id,
          runningRuns(after, ev).filter((r) => r.started <= endedAt),
        );
    }
  }
}

/** The spiral pause that stops this lane (the session's own, or the lane's), as the session-start and deny texts show it. */
export function pauseView(snap: Snapshot, lane?: string): NonNullable<SessionBrief["spiral"]> {
  const p = pausedSpiral(snap, lane);
  const sp = p?.state;
  const v: NonNullable<SessionBrief["spiral"]> = { paused: sp?.paused === true };
  if (sp?.pattern !== undefined) v.pattern = sp.pattern;
  if (sp?.evidence?.summary !== undefined) v.summary = sp.evidence.summary;
  if (sp?.proposedCheckpoint !== undefined) v.proposedCheckpoint = sp.proposedCheckpoint;
  return v;
}

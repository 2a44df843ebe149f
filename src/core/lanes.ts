/**
 * Lanes: several agents at once in one session. Pure.
 *
 * A session is the task (phase, decisions, blockers, next action, lessons); a **lane** is one
 * agent session working on it: a Claude Code process, a Codex thread, a Gemini CLI or Qwen Code
 * session, each named `<agent>:<its session id>`; a Claude Code or Qwen Code subagent is a lane of
 * its own inside its parent's (`claude:<session>/<agent id>`), and with its parent makes one
 * **family**. A lane owns its runs, turns, checkpoints, ledger nodes and spiral state; everything
 * else is the session's, so a new lane (any agent, any host) starts with all of it.
 *
 * - **Undo** from an agent steps back through its own family's checkpoints only, and keeps any
 *   file another live family wrote since (services/time-travel/rollback.ts).
 * - **Spirals** pause the lane that spiralled; the others go on.
 * - **Claims**: the files a lane wrote during its current run. Another family about to write one
 *   is told who holds it (services/agents/tools.ts). A claim ends with the run: the turn's end,
 *   the agent session's end, a crash, or LANE_TTL_MS without a sign of life; it is judged from
 *   the lane's state when it is read, so nothing is left to clean up and no claim outlives its
 *   lane.
 *
 * The lane state lives in the snapshot (`facets.lanes`), folded from lane-tagged events: a
 * `run:started`/`turn:recorded`/`spiral:*` event's `lane` field, `run:ended`/`run:crashed` of a
 * lane's run, `lane:ended`. The files each lane wrote are rows of their own (`lane_writes`,
 * services/agents/lanes.ts), kept out of the snapshot every hook reads: a lane may write thousands.
 */
import { type LaneRecord, type LaneStatus, SNAPSHOT_LIMITS, type Snapshot, type SpiralState } from "./types.js";

/** A file a lane wrote with a tool: when, and what it left (sha256; "" deleted). As stored (backend LaneWriteRow). */
export interface LaneWrite {
  path: string;
  lane: string;
  at: string;
  hash: string;
}

/** A lane with no sign of life for this long is not live: its claims lapse (the hooks' run timeout). */
export const LANE_TTL_MS = 2 * 60 * 60 * 1000;

const ID_PART = /[^A-Za-z0-9._-]/g;

/** The lane of an agent session (and of a subagent inside it, by the agent id its payloads carry). */
export function laneId(agent: string, agentSessionId: string | undefined, subagentId?: string): string {
  const part = (x: string, max: number) => x.replace(ID_PART, "-").slice(0, max);
  const top = `${agent}:${agentSessionId ? part(agentSessionId, 64) : "unknown"}`;
  return subagentId ? `${top}/${part(subagentId, 40)}` : top;
}

/** A lane id as laneId makes them: at most 16 + 1 + 64 + 1 + 40 characters (within every id limit here, 128). */
const LANE_ID = /^[a-z]{1,16}:[A-Za-z0-9._-]{1,64}(\/[A-Za-z0-9._-]{1,40})?$/;

/**
 * The lane of the agent session that ran a command, from the environment its agent gives its
 * shell tool: Claude Code's `CLAUDE_CODE_SESSION_ID` (2.1.132+), Codex's `CODEX_THREAD_ID`
 * (the thread id its hooks send as `session_id`), Qwen Code's `QWEN_CODE_SESSION_ID` (the
 * `session_id` of its hooks), Copilot CLI's `COPILOT_AGENT_SESSION_ID` (the `sessionId` of its
 * hooks), and for OpenCode, whose shell names none, Baton's plugin: `BATON_OPENCODE_SESSION_ID`
 * (its `shell.env` hook). Gemini CLI names none. Undefined when run by a person (or an agent
 * that names none).
 */
// A new variable here goes into LANE_VARIABLES too (core/hooks/baton-command.ts), which refuses
// an agent's Baton command that sets or unsets one.
export function laneFromEnv(env: Readonly<Record<string, string | undefined>>): string | undefined {
  if (env.CLAUDE_CODE_SESSION_ID) return laneId("claude", env.CLAUDE_CODE_SESSION_ID);
  if (env.CODEX_THREAD_ID) return laneId("codex", env.CODEX_THREAD_ID);
  if (env.QWEN_CODE_SESSION_ID) return laneId("qwen", env.QWEN_CODE_SESSION_ID);
  if (env.COPILOT_AGENT_SESSION_ID) return laneId("copilot", env.COPILOT_AGENT_SESSION_ID);
  if (env.BATON_OPENCODE_SESSION_ID) return laneId("opencode", env.BATON_OPENCODE_SESSION_ID);
  return undefined;
}

/**
 * The lane an agent's shell names (laneFromEnv) as the session keeps it: a Copilot CLI subagent's
 * shell names its own session (`copilot:<id>`), which is kept below its parent's
 * (`copilot:<parent>/<id>`, core/hooks/copilot.ts). Any other lane is itself.
 */
export function keptLane(lanes: Readonly<Record<string, unknown>>, lane: string): string {
  if (Object.hasOwn(lanes, lane) || lane.includes("/")) return lane;
  const i = lane.indexOf(":");
  const [agent, id] = [lane.slice(0, i + 1), `/${lane.slice(i + 1).slice(0, 40)}`];
  return Object.keys(lanes).find((k) => k.startsWith(agent) && k.endsWith(id)) ?? lane;
}

/** Whether a string is a lane id as laneId makes them (for ids given on the command line). */
export function isLaneId(s: string): boolean {
  return LANE_ID.test(s);
}

/** The top-level lane of a lane: itself, or a subagent's parent. */
export function familyOf(lane: string): string {
  const i = lane.indexOf("/");
  return i < 0 ? lane : lane.slice(0, i);
}

export function sameFamily(a: string, b: string): boolean {
  return familyOf(a) === familyOf(b);
}

/** The lane record, created when first seen. */
export function laneFor(snap: Snapshot, id: string, at: string, agent?: string): LaneRecord {
  snap.facets.lanes ??= {};
  const lanes = snap.facets.lanes;
  let l = lanes[id];
  if (!l) {
    // A subagent is named after its parent's agent and host.
    const parent = lanes[familyOf(id)];
    l = { id, agent: agent ?? parent?.agent ?? id.slice(0, id.indexOf(":")), status: "idle", started: at, lastAt: at };
    if (parent?.host !== undefined) l.host = parent.host;
    lanes[id] = l;
    boundLanes(lanes);
  }
  if (agent !== undefined) l.agent = agent;
  if (at > l.lastAt) l.lastAt = at;
  return l;
}

/**
 * Past the bound, the lanes least worth keeping go first, the least recently active first: ended
 * and crashed ones, then idle subagents, then idle agent sessions; never one at work or paused
 * before all those (its claims and pause must hold).
 */
function boundLanes(lanes: Record<string, LaneRecord>): void {
  const ids = Object.keys(lanes);
  if (ids.length <= SNAPSHOT_LIMITS.lanes) return;
  const rank = (l: LaneRecord) =>
    l.status === "ended" || l.status === "crashed" ? 0 : l.spiral?.paused || l.status === "working" ? 3 : l.id !== familyOf(l.id) ? 1 : 2;
  const order = ids
    .map((id) => lanes[id] as LaneRecord)
    .sort((a, b) => rank(a) - rank(b) || (a.lastAt < b.lastAt ? -1 : a.lastAt > b.lastAt ? 1 : 0));
  for (const l of order.slice(0, ids.length - SNAPSHOT_LIMITS.lanes)) delete lanes[l.id];
}

/** The lane's spiral state, created when first needed. */
export function laneSpiral(l: LaneRecord): SpiralState {
  l.spiral ??= { paused: false, turns: 0, window: [] };
  return l.spiral;
}

/** A lane's run started: it is working. */
export function laneRunStarted(snap: Snapshot, lane: string, o: { runId: string; agent?: string; host?: string; at: string }): void {
  const l = laneFor(snap, lane, o.at, o.agent);
  l.status = "working";
  l.run = o.runId;
  l.since = o.at;
  if (o.host !== undefined) l.host = o.host;
}

/** A lane's run ended or crashed: its claims (and its subagents') end with it. */
export function laneRunStopped(snap: Snapshot, lane: string, runId: string, status: LaneStatus, at: string): void {
  const l = snap.facets.lanes?.[lane];
  if (!l || l.run !== runId) return;
  delete l.run;
  delete l.since;
  if (l.status !== "ended") l.status = status;
  if (at > l.lastAt) l.lastAt = at;
}

/** The agent session ended: so did the lane and its subagents (a subagent's id names its family). */
export function laneEnded(snap: Snapshot, lane: string, at: string): void {
  const family = familyOf(lane);
  for (const l of Object.values(snap.facets.lanes ?? {})) {
    if (familyOf(l.id) !== family) continue;
    l.status = "ended";
    delete l.run;
    delete l.since;
    if (at > l.lastAt) l.lastAt = at;
  }
}

/** Set a key as the newest of a bounded map (insertion order is age): the oldest go past the bound. */
function setNewest(map: Record<string, string>, key: string, value: string): void {
  delete map[key];
  map[key] = value;
  const keys = Object.keys(map);
  for (const k of keys.slice(0, Math.max(0, keys.length - SNAPSHOT_LIMITS.noticesPerLane))) delete map[k];
}

/**
 * A lane was told of other lanes' claims: its next attempt at the same claims goes through. With
 * `shell` its shell command changed the claimed files: each holder keeps that until its next turn.
 */
export function laneNoticed(
  snap: Snapshot,
  lane: string,
  claims: readonly { path: string; at: string; holder: string }[],
  at: string,
  shell = false,
): void {
  const l = laneFor(snap, lane, at);
  l.noticed ??= {};
  for (const c of claims) if (c.at > (l.noticed[c.path] ?? "")) setNewest(l.noticed, c.path, c.at);
  if (!shell) return;
  for (const c of claims) {
    const h = snap.facets.lanes?.[c.holder];
    if (!h) continue;
    h.changedBy ??= {};
    delete h.changedBy[c.path];
    h.changedBy[c.path] = { lane, at };
    const keys = Object.keys(h.changedBy);
    for (const k of keys.slice(0, Math.max(0, keys.length - SNAPSHOT_LIMITS.noticesPerLane))) delete h.changedBy[k];
  }
}

/** A lane recorded a turn: what others' shell commands changed of its files has been told (services/agents/tools.ts tells it first). */
export function laneTold(snap: Snapshot, lane: string, at: string): void {
  const l = snap.facets.lanes?.[lane];
  if (!l?.changedBy) return;
  delete l.changedBy;
  if (at > l.lastAt) l.lastAt = at;
}

/** Whether a lane's family is at work now: its run lives and it showed life within LANE_TTL_MS. */
export function isWorking(snap: Snapshot, lane: string, nowMs: number): boolean {
  const top = snap.facets.lanes?.[familyOf(lane)];
  return top?.status === "working" && nowMs - Date.parse(top.lastAt) < LANE_TTL_MS;
}

/** Whether a lane is live: working, or idle between turns within LANE_TTL_MS of its last sign of life. */
export function isLive(l: LaneRecord, nowMs: number): boolean {
  return (l.status === "working" || l.status === "idle") && nowMs - Date.parse(l.lastAt) < LANE_TTL_MS;
}

/** The live lanes, most recently active first. */
export function liveLanes(snap: Snapshot, nowMs: number): LaneRecord[] {
  return Object.values(snap.facets.lanes ?? {})
    .filter((l) => isLive(l, nowMs))
    .sort((a, b) => (a.lastAt < b.lastAt ? 1 : a.lastAt > b.lastAt ? -1 : 0));
}

/** A lane's live claim on a file. */
export interface ClaimHolder {
  path: string;
  lane: string;
  agent: string;
  host?: string;
  /** When the holder wrote it, and what it left there (sha256; "" deleted). */
  at: string;
  hash: string;
}

/** Whether a write is a live claim now: its lane's family is working, and it was made in that run. */
export function isClaim(snap: Snapshot, w: Pick<LaneWrite, "lane" | "at">, nowMs: number): boolean {
  const top = snap.facets.lanes?.[familyOf(w.lane)];
  return top !== undefined && top.since !== undefined && w.at >= top.since && isWorking(snap, w.lane, nowMs);
}

/** The live claims among `writes` of every family but `lane`'s (all of them without `lane`), newest first. */
export function liveClaims(snap: Snapshot, writes: readonly LaneWrite[], nowMs: number, lane?: string): ClaimHolder[] {
  const out: ClaimHolder[] = [];
  for (const w of writes) {
    if ((lane !== undefined && sameFamily(w.lane, lane)) || !isClaim(snap, w, nowMs)) continue;
    const l = snap.facets.lanes?.[w.lane] ?? snap.facets.lanes?.[familyOf(w.lane)];
    out.push({
      path: w.path,
      lane: w.lane,
      agent: l?.agent ?? w.lane,
      ...(l?.host !== undefined ? { host: l.host } : {}),
      at: w.at,
      hash: w.hash,
    });
  }
  // Newest first, then by path and lane: the same claims always come in the same order.
  return out.sort((a, b) =>
    a.at !== b.at ? (a.at < b.at ? 1 : -1) : a.path !== b.path ? (a.path < b.path ? -1 : 1) : a.lane < b.lane ? -1 : 1,
  );
}

/** A file two or more families at work now both claim, with one lane of each. */
export interface SharedFile {
  path: string;
  lanes: Pick<LaneRecord, "id" | "agent" | "host">[];
}

/** The files two or more families claim among `claims` (live claims, core/lanes.ts liveClaims), in path order. */
export function sharedFiles(claims: readonly ClaimHolder[]): SharedFile[] {
  const by = new Map<string, ClaimHolder[]>();
  for (const c of claims) {
    const list = by.get(c.path) ?? [];
    if (!list.some((o) => sameFamily(o.lane, c.lane))) list.push(c);
    by.set(c.path, list);
  }
  return [...by.entries()]
    .filter(([, cs]) => cs.length > 1)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([path, cs]) => ({
      path,
      lanes: cs.map((c) => ({ id: c.lane, agent: c.agent, ...(c.host !== undefined ? { host: c.host } : {}) })),
    }));
}

/** The claims among `holders` this lane was not told of yet (newer than the last notice on their file). */
export function untold(snap: Snapshot, lane: string, holders: readonly ClaimHolder[]): ClaimHolder[] {
  const told = snap.facets.lanes?.[lane]?.noticed ?? {};
  return holders.filter((h) => h.at > (told[h.path] ?? ""));
}

/** A spiral pause: the session's own (turns recorded without a lane), else a lane's. */
export function pausedSpiral(snap: Snapshot, lane?: string): { state: SpiralState; lane?: LaneRecord } | undefined {
  if (snap.facets.spiral?.paused) return { state: snap.facets.spiral };
  const lanes = snap.facets.lanes;
  if (!lanes) return undefined;
  if (lane !== undefined) {
    // A subagent is stopped by its own pause and by its parent's (it works for the parent).
    for (const id of lane === familyOf(lane) ? [lane] : [lane, familyOf(lane)]) {
      const l = lanes[id];
      if (l?.spiral?.paused) return { state: l.spiral, lane: l };
    }
    return undefined;
  }
  for (const l of Object.values(lanes)) if (l.spiral?.paused && l.status !== "ended") return { state: l.spiral, lane: l };
  return undefined;
}

/** "3 min ago" from two times. */
export function ago(at: string, nowMs: number): string {
  const s = Math.max(0, Math.round((nowMs - Date.parse(at)) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  return `${Math.round(s / 360) / 10} h ago`;
}

/** How a lane is named to people and agents: "Codex (lane codex:0199…, host ci-7)"; a lane record, or a claim or view naming its `lane`. */
export function describeLane(l: { id: string; agent: string; host?: string } | { lane: string; agent: string; host?: string }): string {
  return `${l.agent} (lane ${"id" in l ? l.id : l.lane}${l.host ? `, host ${l.host}` : ""})`;
}

/** One claim as a notice lists it: "src/app.ts: written 12 s ago by Claude Code (lane …)". */
export function claimLine(h: ClaimHolder, nowMs: number): string {
  return `${h.path}: written ${ago(h.at, nowMs)} by ${describeLane(h)}`;
}

/**
 * The fold: journal events → snapshot. Pure and deterministic, so an append (which folds one
 * event) and a rebuild (which folds them all) always agree. It mutates the snapshot it is
 * given, for speed on long rebuilds; callers own the snapshot they pass.
 *
 * Longer than the house's ~400 lines: every event's effect in one place; a fold read in pieces is how an append and a rebuild come to disagree.
 */

import { type FacetEventType, isFacetEvent } from "../facets.js";
import { decide, type FlowDefinition, type TransitionDecision } from "../flows/flow.js";
import { laneEnded, laneFor, laneNoticed, laneRunStarted, laneRunStopped, laneSpiral, laneTold } from "../lanes.js";
import { emptySpiral, pushTurn, turnEntry } from "../spiral/detector.js";
import {
  type Diagnostic,
  type EventOutcome,
  type JournalEvent,
  type JsonObject,
  SNAPSHOT_LIMITS,
  type Snapshot,
  type SpiralPattern,
  type SpiralState,
  type TurnFile,
  type TurnStatus,
} from "../types.js";
import { cutUrl } from "./targets.js";

/**
 * The fold's version: raised whenever the same events fold to another snapshot (a facet's shape,
 * the spiral window's entries). A stored snapshot of another version is not wrong, only older:
 * it is refolded from the journal when read and replaced at the next write, and doctor does not
 * report it. 2: the spiral window of 32 short entries.
 */
export const FOLD_VERSION = 2;

export function emptySnapshot(
  sessionId: string,
  flow: FlowDefinition,
  at: string,
  meta: { title?: string; deadline?: string } = {},
): Snapshot {
  const snap: Snapshot = {
    sessionId,
    flow: flow.name,
    createdAt: at,
    updatedAt: at,
    lastSeq: 0,
    phase: flow.initial,
    context: {},
    facets: {
      position: {},
      progress: { total: 0, completed: 0 },
      decisions: [],
      blockers: [],
      runs: [],
      resume: { filesModified: [], keyImplementations: [], openQuestions: [] },
      rollbacks: [],
      artifacts: [],
    },
    diagnostics: [],
    counts: { events: 0, fenced: 0, stale: 0, corrupt: 0 },
  };
  if (meta.title !== undefined) snap.title = meta.title;
  if (meta.deadline !== undefined) snap.deadline = meta.deadline;
  return snap;
}

function pushBounded<T>(list: T[], item: T, max: number): void {
  list.push(item);
  if (list.length > max) list.splice(0, list.length - max);
}

export function addDiagnostic(snap: Snapshot, d: Diagnostic): void {
  pushBounded(snap.diagnostics, d, SNAPSHOT_LIMITS.diagnostics);
}

/** Record a journal row that could not be read; the fold moves past it. */
export function foldCorruptRow(snap: Snapshot, seq: number, problem: string): void {
  snap.lastSeq = seq;
  snap.counts.corrupt++;
  addDiagnostic(snap, {
    code: "corrupt_event",
    severity: "error",
    message: `journal row ${seq} is unreadable (${problem}); it was skipped and later rows still fold`,
    seq,
  });
}

/** Fold one event. Returns how the flow treated it. */
export function foldEvent(flow: FlowDefinition, snap: Snapshot, ev: JournalEvent, decision?: TransitionDecision): EventOutcome {
  snap.lastSeq = ev.seq;
  snap.updatedAt = ev.at;
  snap.counts.events++;
  if (isFacetEvent(ev.type)) {
    foldFacet(snap, ev.type, ev);
    return "recorded";
  }
  const d = decision ?? decide(flow, snap, ev, new Date(ev.at));
  switch (d.kind) {
    case "fenced":
    case "stale":
      snap.counts[d.kind]++;
      addDiagnostic(snap, {
        code: d.kind === "fenced" ? "late_event" : "stale_revision",
        severity: "info",
        message: d.reason,
        seq: ev.seq,
        at: ev.at,
      });
      return d.kind;
    case "invalid":
      // Only reachable on rebuild when a flow definition changed under an existing journal.
      addDiagnostic(snap, { code: "invalid_in_journal", severity: "warning", message: d.reason, seq: ev.seq, at: ev.at });
      return "fenced";
    default:
      mergeContext(snap.context, ev.data);
      if (ev.revision !== undefined) snap.revision = ev.revision;
      if (flow.presence) {
        if (ev.type === flow.presence.leave) snap.presence = "absent";
        else if (ev.actor === "browser") snap.presence = "present";
      }
      if (d.kind === "move") {
        snap.phase = d.to;
        return "moved";
      }
      return "stayed";
  }
}

function s(data: JsonObject, key: string): string | undefined {
  const v = data[key];
  return typeof v === "string" ? v : undefined;
}

function strings(data: JsonObject, key: string): string[] {
  const v = data[key];
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
}

function defined<T extends object>(o: T): T {
  for (const k of Object.keys(o) as (keyof T)[]) if (o[k] === undefined) delete o[k];
  return o;
}

function foldFacet(snap: Snapshot, type: FacetEventType, ev: JournalEvent): void {
  const f = snap.facets;
  const d = ev.data;
  switch (type) {
    case "session:started":
      if (s(d, "title") !== undefined) snap.title = s(d, "title");
      if (s(d, "deadline") !== undefined) snap.deadline = s(d, "deadline");
      return;
    case "position:set":
      Object.assign(
        f.position,
        defined({ phase: s(d, "phase"), plan: s(d, "plan"), task: s(d, "task"), wave: s(d, "wave"), status: s(d, "status") }),
      );
      return;
    case "progress:set":
      if (typeof d.total === "number") f.progress.total = d.total;
      if (typeof d.completed === "number") {
        // More work completed is real progress: the spiral detector starts over, in every lane.
        if (d.completed > f.progress.completed) {
          if (f.spiral) f.spiral.window = [];
          for (const l of Object.values(f.lanes ?? {})) if (l.spiral) l.spiral.window = [];
        }
        f.progress.completed = d.completed;
      }
      return;
    case "decision:added":
      pushBounded(
        f.decisions,
        defined({
          seq: ev.seq,
          decision: s(d, "decision") ?? "",
          context: s(d, "context"),
          reason: s(d, "reason"),
          alternatives: strings(d, "alternatives"),
          reversible: typeof d.reversible === "boolean" ? d.reversible : undefined,
          date: ev.at,
        }),
        SNAPSHOT_LIMITS.decisions,
      );
      return;
    case "blocker:added": {
      const id = s(d, "id") ?? String(ev.seq);
      const existing = f.blockers.findIndex((b) => b.id === id);
      if (existing >= 0) f.blockers.splice(existing, 1);
      f.blockers.push(
        defined({
          id,
          text: s(d, "text") ?? "",
          state: "active" as const,
          affects: s(d, "affects"),
          workaround: s(d, "workaround"),
          since: ev.at,
          updated: ev.at,
        }),
      );
      return;
    }
    case "blocker:resolved":
    case "blocker:bypassed": {
      const b = f.blockers.find((x) => x.id === s(d, "id"));
      if (!b) {
        addDiagnostic(snap, {
          code: "unknown_blocker",
          severity: "warning",
          message: `${type} names unknown blocker "${s(d, "id")}"`,
          seq: ev.seq,
        });
        return;
      }
      b.updated = ev.at;
      if (type === "blocker:resolved") {
        b.state = "resolved";
        if (s(d, "resolution") !== undefined) b.resolution = s(d, "resolution");
      } else {
        b.state = "bypassed";
        b.workaround = s(d, "workaround");
      }
      return;
    }
    case "run:started": {
      const run = defined({
        runId: s(d, "runId") ?? "",
        agent: s(d, "agent") ?? "",
        started: ev.at,
        status: "running" as const,
        pid: typeof d.pid === "number" ? d.pid : undefined,
        host: s(d, "host"),
        lane: s(d, "lane"),
      });
      pushBounded(f.runs, run, SNAPSHOT_LIMITS.runs);
      if (run.lane !== undefined) laneRunStarted(snap, run.lane, { runId: run.runId, agent: run.agent, host: run.host, at: ev.at });
      return;
    }
    case "run:ended":
    case "run:crashed": {
      const run = f.runs.find((r) => r.runId === s(d, "runId"));
      if (!run) {
        addDiagnostic(snap, {
          code: "unknown_run",
          severity: "warning",
          message: `${type} names unknown run "${s(d, "runId")}"`,
          seq: ev.seq,
        });
        return;
      }
      run.ended = ev.at;
      run.status = type === "run:crashed" ? "crashed" : "ended";
      if (s(d, "reason") !== undefined) run.handoffReason = s(d, "reason");
      if (s(d, "completedWork") !== undefined) run.completedWork = s(d, "completedWork");
      if (typeof d.contextUsage === "number") run.contextUsage = d.contextUsage;
      if (run.lane !== undefined) laneRunStopped(snap, run.lane, run.runId, run.status === "crashed" ? "crashed" : "idle", ev.at);
      return;
    }
    case "lane:ended":
      laneEnded(snap, s(d, "lane") ?? "", ev.at);
      return;
    case "claim:noticed": {
      const claims = Array.isArray(d.claims) ? (d.claims as { path?: unknown; at?: unknown; holder?: unknown }[]) : [];
      const list = claims.flatMap((c) =>
        typeof c.path === "string" && typeof c.at === "string" && typeof c.holder === "string"
          ? [{ path: c.path, at: c.at, holder: c.holder }]
          : [],
      );
      laneNoticed(snap, s(d, "lane") ?? "", list, ev.at, s(d, "outcome") === "shell");
      return;
    }
    case "resume:updated": {
      const r = f.resume;
      const files = Array.isArray(d.filesModified) ? d.filesModified : [];
      for (const item of files) {
        if (!item || typeof item !== "object" || Array.isArray(item) || typeof item.path !== "string") continue;
        const i = r.filesModified.findIndex((x) => x.path === item.path);
        if (i >= 0) r.filesModified.splice(i, 1);
        const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : undefined);
        const rec = defined({
          path: item.path,
          hash: typeof item.hash === "string" ? item.hash : undefined,
          size: num(item.size),
          mtimeMs: num(item.mtimeMs),
          at: ev.at,
        });
        pushBounded(r.filesModified, rec, SNAPSHOT_LIMITS.filesModified);
      }
      for (const k of ["keyImplementations", "openQuestions"] as const) {
        for (const v of strings(d, k)) if (!r[k].includes(v)) r[k].push(v);
      }
      return;
    }
    case "context:set":
      mergeContext(snap.context, d);
      return;
    case "note:added":
      return;
    case "turn:recorded":
    case "spiral:detected":
    case "spiral:cleared":
      foldSpiral(snap, type, ev);
      return;
    case "lesson:added": {
      const rollback = s(d, "rollback");
      const rec = rollback === undefined ? undefined : f.rollbacks?.find((r) => r.id === rollback);
      if (rec) rec.lesson = s(d, "id");
      return;
    }
    case "rollback:started":
    case "rollback:applied":
      foldRollback(snap, type, ev);
      return;
    case "target:set":
      snap.target = defined({
        kind: s(d, "kind") ?? "",
        id: s(d, "id") ?? "",
        url: s(d, "url") === undefined ? undefined : cutUrl(s(d, "url") as string),
        label: s(d, "label"),
        reason: s(d, "reason"),
        setAt: ev.at,
        seq: ev.seq,
      });
      return;
    case "target:cleared":
      delete snap.target;
      return;
    case "artifact:added": {
      f.artifacts ??= []; // snapshots stored before artifacts existed
      const id = s(d, "id") ?? String(ev.seq);
      const i = f.artifacts.findIndex((a) => a.id === id);
      if (i >= 0) f.artifacts.splice(i, 1);
      const rec = defined({
        id,
        name: s(d, "name") ?? id,
        hash: s(d, "hash") ?? "",
        size: typeof d.size === "number" ? d.size : 0,
        mediaType: s(d, "mediaType"),
        label: s(d, "label"),
        at: ev.at,
      });
      pushBounded(f.artifacts, rec, SNAPSHOT_LIMITS.artifacts);
      return;
    }
  }
}

function foldRollback(snap: Snapshot, type: "rollback:started" | "rollback:applied", ev: JournalEvent): void {
  const d = ev.data;
  snap.facets.rollbacks ??= []; // snapshots stored before rollbacks existed
  const list = snap.facets.rollbacks;
  const id = s(d, "id") ?? String(ev.seq);
  let rec = list.find((r) => r.id === id);
  if (!rec) {
    rec = { id, target: s(d, "target") ?? "", safety: s(d, "safety") ?? "", state: "started", files: 0, startedAt: ev.at, seq: ev.seq };
    pushBounded(list, rec, SNAPSHOT_LIMITS.rollbacks);
  }
  rec.seq = ev.seq;
  if (type === "rollback:started") {
    rec.files = typeof d.files === "number" ? d.files : 0;
    return;
  }
  rec.state = "applied";
  rec.appliedAt = ev.at;
  rec.restored = typeof d.restored === "number" ? d.restored : 0;
  rec.removed = typeof d.removed === "number" ? d.removed : 0;
  if (rec.files === 0) rec.files = rec.restored + rec.removed;
}

/**
 * Turns feed the spiral detector's window, the session's or (with `lane`) the lane's; a
 * detection pauses it until cleared. A clear without a lane is a person's: every pause goes.
 */
function foldSpiral(snap: Snapshot, type: "turn:recorded" | "spiral:detected" | "spiral:cleared", ev: JournalEvent): void {
  const d = ev.data;
  const lane = s(d, "lane");
  if (type === "spiral:cleared") {
    if (lane === undefined) {
      if (snap.facets.spiral) clearSpiral(snap.facets.spiral, ev.at);
      for (const l of Object.values(snap.facets.lanes ?? {})) if (l.spiral?.paused) clearSpiral(l.spiral, ev.at);
    } else {
      // That lane's pause, and the session's own, which stops every lane.
      const l = snap.facets.lanes?.[lane];
      if (l?.spiral) clearSpiral(l.spiral, ev.at);
      if (snap.facets.spiral?.paused) clearSpiral(snap.facets.spiral, ev.at);
    }
    return;
  }
  let sp: SpiralState;
  if (lane === undefined) {
    snap.facets.spiral ??= emptySpiral();
    sp = snap.facets.spiral;
  } else sp = laneSpiral(laneFor(snap, lane, ev.at));
  if (type === "turn:recorded") {
    const files = Array.isArray(d.files) ? (d.files as unknown as TurnFile[]) : [];
    const record = defined({
      tool: s(d, "tool") ?? "",
      status: (s(d, "status") ?? "success") as TurnStatus,
      argsHash: s(d, "argsHash"),
      files,
      fingerprint: s(d, "fingerprint"),
      failurePlace: s(d, "failurePlace"),
      observationHash: s(d, "observationHash"),
      waiting: d.waiting === true ? true : undefined,
      waitingOn: s(d, "waitingOn"),
      checkpointId: s(d, "checkpointId"),
      progress: typeof d.progress === "boolean" ? d.progress : undefined,
    });
    sp.turns++;
    sp.window = pushTurn(sp.window, turnEntry(record, { id: ev.id, seq: ev.seq, at: ev.at }));
    // A lane's turn is where it is told what others' shell commands changed (services/agents/tools.ts).
    if (lane !== undefined) laneTold(snap, lane, ev.at);
    return;
  }
  const ids = strings(d, "turns");
  const pattern = (s(d, "pattern") ?? "same_signature") as SpiralPattern;
  sp.paused = true;
  sp.pattern = pattern;
  sp.evidence = defined({
    pattern,
    summary: s(d, "summary") ?? "",
    turns: sp.window.filter((t) => ids.includes(t.id)).map((t) => t.seq),
    path: s(d, "path"),
    signature: s(d, "signature"),
    fingerprint: s(d, "fingerprint"),
  });
  if (s(d, "proposedCheckpoint") !== undefined) sp.proposedCheckpoint = s(d, "proposedCheckpoint");
  else delete sp.proposedCheckpoint;
  sp.detectedAt = ev.at;
  sp.detectedSeq = ev.seq;
}

function clearSpiral(sp: SpiralState, at: string): void {
  sp.paused = false;
  for (const k of ["pattern", "evidence", "proposedCheckpoint", "detectedAt", "detectedSeq"] as const) delete sp[k];
  sp.clearedAt = at;
  sp.window = []; // the user chose: start over
}

/**
 * Event data into the context, key by key. Object.assign would take an own "__proto__" (JSON.parse
 * makes one; a journal written before appends refused it may hold one) as the context's prototype.
 */
function mergeContext(context: JsonObject, data: JsonObject): void {
  for (const k of Object.keys(data)) if (k !== "__proto__") context[k] = data[k] as JsonObject[string];
}

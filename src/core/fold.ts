/**
 * The fold: journal events → snapshot. Pure and deterministic, so an append (which folds one
 * event) and a rebuild (which folds them all) always agree. It mutates the snapshot it is
 * given, for speed on long rebuilds; callers own the snapshot they pass.
 */
import { type FacetEventType, isFacetEvent } from "./facets.js";
import { decide, type FlowDefinition, type TransitionDecision } from "./flow.js";
import { type Diagnostic, type EventOutcome, type JournalEvent, type JsonObject, SNAPSHOT_LIMITS, type Snapshot } from "./types.js";

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
      Object.assign(snap.context, ev.data);
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
      if (typeof d.completed === "number") f.progress.completed = d.completed;
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
      });
      pushBounded(f.runs, run, SNAPSHOT_LIMITS.runs);
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
      return;
    }
    case "resume:updated": {
      const r = f.resume;
      const files = Array.isArray(d.filesModified) ? d.filesModified : [];
      for (const item of files) {
        if (!item || typeof item !== "object" || Array.isArray(item) || typeof item.path !== "string") continue;
        const i = r.filesModified.findIndex((x) => x.path === item.path);
        if (i >= 0) r.filesModified.splice(i, 1);
        const rec = defined({ path: item.path, hash: typeof item.hash === "string" ? item.hash : undefined, at: ev.at });
        pushBounded(r.filesModified, rec, SNAPSHOT_LIMITS.filesModified);
      }
      for (const k of ["keyImplementations", "openQuestions"] as const) {
        for (const v of strings(d, k)) if (!r[k].includes(v)) r[k].push(v);
      }
      return;
    }
    case "context:set":
      Object.assign(snap.context, d);
      return;
    case "note:added":
      return;
  }
}

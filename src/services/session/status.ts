/**
 * Status, resume and complete: the answers to "where do things stand and what do I do next".
 * The next action comes from the ordered rules of core/session/next-action.ts; this service gathers
 * their inputs: the session's files (markers, and the recorded files re-hashed: a few reads,
 * never a tree walk), its open and dead-lettered work, the locks its runs hold, and a target
 * mismatch noted since the binding.
 *
 * Longer than ~400 lines, a little: resume and complete answer from the same gathered facts.
 */
import { join } from "node:path";
import type { Backend, LockRow, SkippedPath } from "../../backend/contract.js";
import { sha256 } from "../../core/canonical.js";
import { isTerminal, phaseNextAction } from "../../core/flows/flow.js";
import { pausedSpiral, type SharedFile } from "../../core/lanes.js";
import { holderOfRow, staleDecision } from "../../core/locks.js";
import { type LaneView, laneViews } from "../../core/session/lane-view.js";
import type { MarkerFinding } from "../../core/session/markers.js";
import { type ChangedFile, type DeadWork, decideNextAction, type HeldLock, type TargetMismatch } from "../../core/session/next-action.js";
import { lastTargetNote, TARGET_NOTES } from "../../core/session/targets.js";
import { type SpiralView, spiralStart, spiralView } from "../../core/spiral/detector.js";
import { lastRollback, rollbackSuggestions } from "../../core/time-travel/rollback.js";
import type {
  Blocker,
  Decision,
  Diagnostic,
  JournalEvent,
  JsonObject,
  NextAction,
  Position,
  RollbackRecord,
  Snapshot,
} from "../../core/types.js";
import { BatonError } from "../../errors.js";
import { factsAbout, hostFacts, type ProcessFacts } from "../../platform/process-facts.js";
import type { LaneService } from "../agents/lanes.js";
import { type FileRead, MAX_HASH_BYTES, readWorkspaceFile, scanSessionFiles } from "../files.js";
import type { Journal, SessionView } from "../journal/journal.js";
import { missingBlobs } from "../time-travel/blobs.js";
import { treeLane } from "../time-travel/manifests.js";
import type { PendingWork, Queue } from "../work/queue.js";

export interface SessionStatus {
  sessionId: string;
  flow: string;
  title?: string;
  phase: string;
  status: "active" | "completed";
  nextAction: NextAction;
  /** Free context: variantId, paramValues, file, … as the flow's events recorded them. */
  context: JsonObject;
  /** Open work items for the agent, in delivery order, with their leases (holder, expiry). */
  pendingWork: PendingWork[];
  /** Optional follow-ups that do not replace the next action (e.g. capture a lesson after a rollback). */
  suggestions: NextAction[];
  /**
   * Present while a spiral pauses the session, or one of its lanes (`lane`): the pattern, the
   * turns, the proposed checkpoint.
   */
  spiral?: SpiralView & { lane?: string };
  /** The agent sessions working in this session now (core/lanes.ts), most recently active first. */
  lanes?: LaneView[];
  /**
   * Present when the session's newest whole-tree checkpoint left files out (names it cannot
   * store or restore safely): no rollback covers them until they are renamed.
   */
  notCheckpointed?: { checkpointId: string; at: string; files: SkippedPath[] };
  /** The session's latest rollback (`state: "started"` means interrupted: see the next action). */
  lastRollback?: RollbackRecord;
  position: Position;
  progress: { total: number; completed: number; percent: number };
  activeBlockers: Blocker[];
  recentDecisions: Decision[];
  markers: MarkerFinding[];
  diagnostics: Diagnostic[];
  lastSeq: number;
  updatedAt: string;
}

export interface StatusReport {
  sessions: SessionStatus[];
  /** Present when no session is active. */
  nextAction?: NextAction;
}

/** A completion: the phase it ended in, and the markers it was forced past. */
export interface CompleteResult {
  sessionId: string;
  phase: string;
  alreadyComplete: boolean;
  forced: boolean;
  markers: MarkerFinding[];
}

export interface FileCheck {
  path: string;
  state: "unchanged" | "changed" | "missing" | "created" | "unreadable";
  /** Review this file before proceeding: it changed since it was recorded. */
  review: boolean;
}

export interface ResumeReport extends SessionStatus {
  facets: Snapshot["facets"];
  recentEvents: JournalEvent[];
  verification: { ok: boolean; files: FileCheck[] };
}

export const NO_ACTIVE_SESSION: NextAction = Object.freeze({
  action: "no_active_session",
  reason: "No session is active in this workspace.",
  command: "baton session start --flow task --title <title>",
});

const RECENT_DECISIONS = 5;
/** A record taken this long after the file's modification time trusts size + time (see #verify). */
const RACY_MS = 50;

/** Reads one status call shares between its sessions. */
interface SharedReads {
  locks?: Promise<LockRow[]>;
}

/** Facts the next-action rules need from outside the snapshot (see #facts). */
export interface OutsideFacts {
  deadWork?: DeadWork[];
  locks?: HeldLock[];
  targetMismatch?: TargetMismatch;
  spiralFallback?: string;
  /** The live lanes with their claims, and the files two of them at work both wrote (services/agents/lanes.ts). */
  lanes?: LaneView[];
  sharedFiles?: SharedFile[];
}

export class StatusService {
  readonly #journal: Journal;
  readonly #queue: Queue;
  readonly #root: string;
  readonly #now: () => Date;
  readonly #backend: Backend;
  /** What this host knows about processes: a lock's holder is judged as a takeover would judge it. */
  readonly #processFacts: ProcessFacts;

  readonly #lanes: LaneService | undefined;

  constructor(
    journal: Journal,
    queue: Queue,
    root: string,
    now: () => Date,
    backend: Backend,
    processFacts: ProcessFacts = hostFacts,
    lanes?: LaneService,
  ) {
    this.#lanes = lanes;
    this.#processFacts = processFacts;
    this.#journal = journal;
    this.#queue = queue;
    this.#root = root;
    this.#now = now;
    this.#backend = backend;
  }

  async status(opts: { all?: boolean; sessionId?: string } = {}): Promise<StatusReport> {
    const ids = opts.sessionId
      ? [opts.sessionId]
      : (await this.#journal.listSessions({ includeCompleted: opts.all ?? false })).map((s) => s.id);
    const sessions: SessionStatus[] = [];
    const shared: SharedReads = {};
    for (const id of ids) {
      const s = await this.#describeSession(id, undefined, shared);
      if (s.status === "active" || opts.all || opts.sessionId) sessions.push(s);
    }
    return sessions.some((s) => s.status === "active") || opts.sessionId ? { sessions } : { sessions, nextAction: NO_ACTIVE_SESSION };
  }

  /** Status of one session: its read plus its open work and the facts kept outside the journal. */
  async describeSession(sessionId: string, read?: SessionView): Promise<SessionStatus> {
    return this.#describeSession(sessionId, read, {});
  }

  async #describeSession(sessionId: string, read: SessionView | undefined, shared: SharedReads): Promise<SessionStatus> {
    const view = read ?? (await this.#journal.read(sessionId));
    return this.#storedFacts(this.describe(view, await this.#queue.pending(sessionId), await this.#facts(view, shared)), view.snapshot);
  }

  /**
   * What the rules need from outside the snapshot: dead-lettered work not handled since, locks
   * held by the session's runs, a target mismatch noted since the binding. Cheap: the stored
   * diagnostics came with the read; the rest is one small query each, only when relevant.
   */
  async #facts(view: SessionView, shared: SharedReads): Promise<OutsideFacts> {
    const snap = view.snapshot;
    const out: OutsideFacts = {};
    const dead = await this.#queue.deadWork(snap.sessionId);
    if (dead.length > 0) out.deadWork = dead;
    const runIds = new Set(snap.facets.runs.map((r) => r.runId));
    if (runIds.size > 0) {
      const backend = this.#backend;
      // One read of the locks table per status call, whatever the number of sessions.
      shared.locks ??= backend.transaction("read", (tx) => tx.locks.listLocks());
      const rows = await shared.locks;
      out.locks = rows
        .filter((r) => r.state === "held" && r.runId !== null && runIds.has(r.runId))
        .map((r) => {
          // The same proof a lock acquire would need to take it over (core/locks.ts).
          const who = holderOfRow(r);
          return {
            name: r.name,
            owner: r.owner,
            runId: r.runId as string,
            expiresAt: new Date(r.expiresMs).toISOString(),
            decision: staleDecision({ ...who, expiresMs: r.expiresMs }, factsAbout(this.#processFacts, who), this.#now().getTime()),
          };
        });
    }
    // A pause that proposed no checkpoint (detected without one): the last good point is
    // looked up now, one indexed row.
    const paused = pausedSpiral(snap);
    const sp = paused?.state;
    const start = sp?.paused && sp.proposedCheckpoint === undefined ? spiralStart(sp) : undefined;
    if (start !== undefined) {
      const lane = paused?.lane?.id;
      const cp = await this.#backend.transaction("read", (tx) => tx.checkpoints.lastGoodCheckpoint(snap.sessionId, start, lane));
      if (cp !== undefined) out.spiralFallback = cp;
    }
    if (this.#lanes && snap.facets.lanes) {
      const nowMs = this.#now().getTime();
      const lanes = await this.#lanes.views(snap, nowMs);
      if (lanes.length > 0) out.lanes = lanes;
      const shared = lanes.length > 1 ? await this.#lanes.shared(snap, nowMs) : [];
      if (shared.length > 0) out.sharedFiles = shared;
    }
    const observed = lastTargetNote(view.readDiagnostics);
    const mismatch = observed?.code === "target_mismatch" ? observed : undefined;
    if (mismatch?.at && snap.target && mismatch.at >= snap.target.setAt)
      out.targetMismatch = { at: mismatch.at, message: mismatch.message };
    return out;
  }

  /**
   * Resume-context files that are not as they were recorded (hashed now: a few guarded reads).
   * A file whose size and modification time are the recorded ones is not read again, when the
   * record was taken at least RACY_MS after that time (a later write of the same size within
   * the same clock tick could otherwise pass unseen). Files the marker scan just read are
   * hashed from its bytes. A recorded path that is no longer a readable regular file (a
   * directory, a FIFO, too large) is `unreadable`, with a diagnostic: one odd path never
   * breaks or blocks status.
   */
  #verify(snap: Snapshot, read: ReadonlyMap<string, FileRead> = new Map()): { files: FileCheck[]; diagnostics: Diagnostic[] } {
    const diagnostics: Diagnostic[] = [];
    const files = snap.facets.resume.filesModified.map((rec): FileCheck => {
      const trusted =
        rec.hash !== undefined && rec.size !== undefined && rec.mtimeMs !== undefined && Date.parse(rec.at) - rec.mtimeMs >= RACY_MS;
      const same = trusted ? (size: number, mtimeMs: number) => size === rec.size && mtimeMs === rec.mtimeMs : undefined;
      const seen = read.get(rec.path);
      const r =
        seen && !(seen.kind === "unreadable" && seen.tooLarge) ? seen : readWorkspaceFile(this.#root, rec.path, MAX_HASH_BYTES, same);
      if (r.kind === "same") return { path: rec.path, state: "unchanged", review: false };
      if (r.kind === "unreadable") {
        diagnostics.push({
          code: "file_unreadable",
          severity: "warning",
          message: `recorded file ${rec.path} cannot be checked: ${r.why}`,
          file: rec.path,
        });
        return { path: rec.path, state: "unreadable", review: true };
      }
      const now = r.kind === "file" ? sha256(r.bytes) : undefined;
      const state: FileCheck["state"] =
        now === undefined
          ? rec.hash === undefined
            ? "unchanged"
            : "missing"
          : rec.hash === undefined
            ? "created"
            : now === rec.hash
              ? "unchanged"
              : "changed";
      return { path: rec.path, state, review: state !== "unchanged" };
    });
    return { files, diagnostics };
  }

  /** Status of one session from a read, its open work and the facts gathered outside it. */
  describe(view: SessionView, pendingWork: PendingWork[] = [], facts: OutsideFacts = {}): SessionStatus {
    return this.#describe(view, pendingWork, facts).status;
  }

  /** describe, with the recorded files' check it made (active sessions only: resume reuses it). */
  #describe(view: SessionView, pendingWork: PendingWork[], facts: OutsideFacts): { status: SessionStatus; files?: FileCheck[] } {
    const { snapshot: snap, flow } = view;
    const now = this.#now();
    const phaseAction = phaseNextAction(flow, snap, now);
    const completed = isTerminal(flow, snap.phase, snap.deadline, now);
    // Target notes are history: only the mismatch that still holds is shown (as the fact it is).
    const stored = view.readDiagnostics.filter((d) => !TARGET_NOTES.includes(d.code));
    const diagnostics = [...snap.diagnostics.filter((d) => d.severity !== "info").slice(-10), ...stored];
    if (facts.targetMismatch)
      diagnostics.push({
        code: "target_mismatch",
        severity: "warning",
        message: facts.targetMismatch.message,
        at: facts.targetMismatch.at,
      });
    let nextAction = phaseAction;
    let suggestions: NextAction[] = [];
    let markers: MarkerFinding[] = [];
    let files: FileCheck[] | undefined;
    if (!completed) {
      // Each file is read once: the recorded ones the scan read are hashed from its bytes.
      const recorded = new Set(snap.facets.resume.filesModified.map((r) => r.path));
      const read = new Map<string, FileRead>();
      const scan = scanSessionFiles(this.#root, flow, snap, (rel, r) => {
        if (recorded.has(rel)) read.set(rel, r);
      });
      diagnostics.push(...scan.diagnostics);
      markers = scan.files.flatMap((f) => f.findings);
      const verified = this.#verify(snap, read);
      files = verified.files;
      diagnostics.push(...verified.diagnostics);
      const changedFiles = verified.files.flatMap((f): ChangedFile[] =>
        f.state === "unchanged" ? [] : [{ path: f.path, state: f.state }],
      );
      const decision = decideNextAction({
        flow,
        snap,
        now,
        pendingWork: pendingWork.map((w) => ({
          kind: w.kind,
          seq: w.seq,
          state: w.state,
          leaseExpired: w.lease?.expired === true,
          ...(w.lease ? { lease: { leaseId: w.lease.leaseId, owner: w.lease.owner, expiresAt: w.lease.expiresAt } } : {}),
        })),
        markerFiles: scan.files,
        changedFiles,
        ...facts,
      });
      nextAction = decision.nextAction;
      suggestions = [...decision.suggestions, ...rollbackSuggestions(snap)];
    }
    const { total, completed: done } = snap.facets.progress;
    const out: SessionStatus = {
      sessionId: snap.sessionId,
      flow: snap.flow,
      phase: snap.phase,
      status: completed ? "completed" : "active",
      nextAction,
      context: snap.context,
      pendingWork,
      suggestions,
      position: snap.facets.position,
      progress: { total, completed: done, percent: total > 0 ? Math.round((done / total) * 100) : 0 },
      activeBlockers: snap.facets.blockers.filter((b) => b.state === "active"),
      recentDecisions: snap.facets.decisions.slice(-RECENT_DECISIONS),
      markers,
      diagnostics,
      lastSeq: snap.lastSeq,
      updatedAt: snap.updatedAt,
    };
    if (snap.title !== undefined) out.title = snap.title;
    const paused = pausedSpiral(snap);
    if (paused) out.spiral = { ...spiralView(paused.state, facts.spiralFallback), ...(paused.lane ? { lane: paused.lane.id } : {}) };
    const lanes = facts.lanes ?? laneViews(snap, this.#now().getTime());
    if (lanes.length > 0) out.lanes = lanes;
    const rb = lastRollback(snap);
    if (rb) out.lastRollback = rb;
    return files ? { status: out, files } : { status: out };
  }

  /**
   * Facts an active session's status reads from storage beyond its journal, in one read
   * transaction: artifacts whose blob is gone (kept until the session completes, so this is
   * damage), and the files its newest whole-tree checkpoint left out. A blob is a file under
   * `.baton/blobs/` or, when small, a row of the database.
   */
  async #storedFacts(status: SessionStatus, snap: Snapshot): Promise<SessionStatus> {
    const backend = this.#backend;
    if (status.status !== "active") return status;
    const artifacts = snap.facets.artifacts ?? [];
    const dir = join(this.#root, ".baton", "blobs");
    const { missing, tree } = await backend.transaction("read", async (tx) => ({
      missing: new Set(
        artifacts.length > 0
          ? await missingBlobs(
              tx,
              dir,
              artifacts.map((a) => a.hash),
            )
          : [],
      ),
      tree: await tx.checkpoints.lastLiveInLane(treeLane(status.sessionId)),
    }));
    for (const a of artifacts) {
      if (!missing.has(a.hash)) continue;
      status.diagnostics.push({
        code: "artifact_missing",
        severity: "warning",
        message: `artifact "${a.name}" (${a.id}, sha256 ${a.hash.slice(0, 12)}) is missing from the blob store; attach it again with \`baton artifact add\``,
        at: a.at,
      });
    }
    const skipped = tree?.skipped ?? [];
    if (tree && skipped.length > 0) {
      status.notCheckpointed = { checkpointId: tree.id, at: tree.createdAt, files: [...skipped] };
      status.diagnostics.push({
        code: "files_not_checkpointed",
        severity: "warning",
        message: `${skipped.length} path(s) were left out of whole-tree checkpoint ${tree.id}, so no rollback covers them (${skipped
          .slice(0, 3)
          .map((f) => `${JSON.stringify(f.path)}: ${f.reason}`)
          .join(
            "; ",
          )}${skipped.length > 3 ? "; …" : ""}); rename those whose names cannot be stored, and make the unreadable ones readable to you`,
        at: tree.createdAt,
      });
    }
    return status;
  }

  async resume(sessionId: string): Promise<ResumeReport> {
    const view = await this.#journal.read(sessionId);
    const described = this.#describe(view, await this.#queue.pending(sessionId), await this.#facts(view, {}));
    const status = await this.#storedFacts(described.status, view.snapshot);
    const { events } = await this.#journal.events(sessionId, { afterSeq: Math.max(0, view.snapshot.lastSeq - 20) });
    // Checked once: describe already did for an active session.
    const files = described.files ?? this.#verify(view.snapshot).files;
    return { ...status, facets: view.snapshot.facets, recentEvents: events, verification: { ok: files.every((f) => !f.review), files } };
  }

  /**
   * Complete a session: append the flow's completion event. Refuses with `source_dirty` while
   * the session's files still hold markers, unless forced.
   */
  async complete(sessionId: string, opts: { force?: boolean; actor?: string } = {}): Promise<CompleteResult> {
    const view = await this.#journal.read(sessionId);
    const status = this.describe(view);
    if (status.status === "completed") return { sessionId, phase: status.phase, alreadyComplete: true, forced: false, markers: [] };
    if (status.markers.length > 0 && !opts.force) {
      throw new BatonError(
        "source_dirty",
        `${status.markers.length} marker(s) remain in the session's files (first: ${status.markers[0]?.file}:${status.markers[0]?.line} ${status.markers[0]?.marker}); clean them up, or pass --force to complete anyway`,
        { sessionId, findings: status.markers },
      );
    }
    const forced = status.markers.length > 0;
    const r = await this.#journal.append(sessionId, {
      type: view.flow.completeEvent ?? "complete",
      actor: opts.actor ?? "agent",
      data: forced ? { forcedWithMarkers: status.markers.length } : {},
    });
    return { sessionId, phase: r.phase, alreadyComplete: false, forced, markers: status.markers };
  }
}

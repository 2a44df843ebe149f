/**
 * Glossary: the words the rest of the code uses, defined once.
 *
 * - workspace: a project directory; Baton's data lives in `<root>/.baton/`.
 * - session: a durable unit of agent work, with a flow, a phase, facets and a journal.
 * - event: one immutable journal entry; `seq` is contiguous per session, `id` is the
 *   idempotency key (same id + same body = the same event).
 * - flow: a declarative state machine (see core/flow.ts); it decides which events move the
 *   session between phases and what the next action is in each phase.
 * - snapshot: the session folded from its journal, keyed by the last folded seq. Always
 *   rebuildable, never the source of truth.
 * - facets: state every session has whatever its flow: position, progress, decisions,
 *   blockers, runs, resume context, free context.
 * - diagnostic: something Baton noticed and kept rather than threw away: a late event in a
 *   fenced phase, a stale checkpoint, a corrupt journal row, a repaired snapshot.
 * - next action: the single thing to do now, with a stable code, a reason and the command.
 */

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** Who produced an event. Free-form, but these are the conventional values. */
export type Actor = "agent" | "browser" | "user" | "system" | (string & {});

/** An event as stored in the journal. */
export interface JournalEvent {
  sessionId: string;
  seq: number;
  id: string;
  type: string;
  actor: Actor;
  data: JsonObject;
  revision?: number;
  /** ISO-8601 time the event was appended. */
  at: string;
}

/** An event as a caller submits it. `id` defaults to a generated one. */
export interface EventInput {
  id?: string;
  type: string;
  actor?: Actor;
  data?: JsonObject;
  revision?: number;
}

/** What an append returns: the stored event, its outcome and the phase afterwards. */
export interface AppendResult {
  event: JournalEvent;
  /** `true` when the id had already been appended with the same body. */
  duplicate: boolean;
  /**
   * How the flow treated the event: `moved` (phase changed), `stayed` (allowed, same phase),
   * `fenced` (late event kept as a diagnostic), `stale` (stale revision kept as a diagnostic),
   * `recorded` (a facet event: it updates facets, never the phase).
   */
  outcome: EventOutcome;
  phase: string;
}

export type EventOutcome = "moved" | "stayed" | "fenced" | "stale" | "recorded";

export type Severity = "info" | "warning" | "error";

export interface Diagnostic {
  code: string;
  severity: Severity;
  message: string;
  seq?: number;
  file?: string;
  line?: number;
  at?: string;
}

export interface Position {
  phase?: string;
  plan?: string;
  task?: string;
  wave?: string;
  status?: string;
}

export interface Progress {
  total: number;
  completed: number;
}

export interface Decision {
  seq: number;
  context?: string;
  decision: string;
  reason?: string;
  alternatives: string[];
  reversible?: boolean;
  date: string;
}

export type BlockerState = "active" | "bypassed" | "resolved";

export interface Blocker {
  id: string;
  text: string;
  state: BlockerState;
  affects?: string;
  workaround?: string;
  resolution?: string;
  since: string;
  updated: string;
}

export type RunStatus = "running" | "ended" | "crashed";

export interface RunRecord {
  runId: string;
  agent: string;
  started: string;
  ended?: string;
  status: RunStatus;
  pid?: number;
  host?: string;
  completedWork?: string;
  handoffReason?: string;
  contextUsage?: number;
}

export interface FileRecord {
  path: string;
  /** sha256 of the content when recorded; absent when the file did not exist. */
  hash?: string;
  at: string;
}

export interface ResumeContext {
  filesModified: FileRecord[];
  keyImplementations: string[];
  openQuestions: string[];
}

export interface Facets {
  position: Position;
  progress: Progress;
  decisions: Decision[];
  blockers: Blocker[];
  runs: RunRecord[];
  resume: ResumeContext;
}

/**
 * The folded state of one session. Lists are bounded (see SNAPSHOT_LIMITS) so a long session
 * keeps a small snapshot; the journal keeps everything.
 */
export interface Snapshot {
  sessionId: string;
  flow: string;
  title?: string;
  deadline?: string;
  createdAt: string;
  updatedAt: string;
  /** The last journal seq folded into this snapshot. */
  lastSeq: number;
  phase: string;
  /** Highest accepted client revision (browser checkpoints); older ones are stale. */
  revision?: number;
  /** Whether the session's client (a browser tab) is present, for flows that track it. */
  presence?: "present" | "absent";
  /** Free context: merged from flow events' data and `context:set` events. */
  context: JsonObject;
  facets: Facets;
  diagnostics: Diagnostic[];
  counts: { events: number; fenced: number; stale: number; corrupt: number };
}

export const SNAPSHOT_LIMITS = Object.freeze({
  decisions: 100,
  runs: 50,
  diagnostics: 50,
  filesModified: 200,
  notes: 50,
});

export interface NextAction {
  /** Stable code, e.g. `run_accept_cleanup`. */
  action: string;
  reason: string;
  /** The exact command to run; empty when there is nothing to run. */
  command: string;
}

export interface SessionSummary {
  sessionId: string;
  flow: string;
  title?: string;
  phase: string;
  status: "active" | "completed";
  createdAt: string;
  updatedAt: string;
  lastSeq: number;
}

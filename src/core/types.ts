/**
 * Glossary: the words the rest of the code uses, defined once.
 *
 * - workspace: a project directory; Baton's data lives in `<root>/.baton/`.
 * - session: a durable unit of agent work, with a flow, a phase, facets and a journal.
 * - event: one immutable journal entry; `seq` is contiguous per session, `id` is the
 *   idempotency key (same id + same body = the same event).
 * - flow: a declarative state machine (see core/flows/flow.ts); it decides which events move the
 *   session between phases and what the next action is in each phase.
 * - snapshot: the session folded from its journal, keyed by the last folded seq. Always
 *   rebuildable, never the source of truth.
 * - facets: state every session has whatever its flow: position, progress, decisions,
 *   blockers, runs, resume context, free context.
 * - diagnostic: something Baton noticed and kept rather than threw away: a late event in a
 *   fenced phase, a stale checkpoint, a corrupt journal row, a repaired snapshot.
 * - next action: the single thing to do now, with a stable code, a reason and the command.
 * - ledger node: one tool-call attempt in the trajectory ledger, redacted and bounded before it
 *   is stored (core/ledger/nodes.ts, core/redaction/redact.ts); kept beside the journal, not in it.
 * - fingerprint: a short stable id of a failure (core/fingerprint.ts): the same error text,
 *   up to numbers, ids and secrets, gives the same fingerprint.
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

/**
 * How an append commits. `durability: "relaxed"`: without waiting for the disk (no fsync of its
 * own). On SQLite it survives a crash of any process at once, and a power cut once a later
 * commit that waits (a full append, a checkpoint) has flushed the log that holds it; on
 * PostgreSQL (`synchronous_commit = off` for its transaction) a crash of Baton's processes loses
 * nothing, a crash of the database server may lose the last such commits; a lone statement
 * there commits fully (cheaper than the transaction relaxing it). The store stays consistent
 * either way. For records whose loss in a power cut costs little, written where every
 * millisecond counts: what agent hooks record after each tool call. Default `"full"`.
 */
export interface AppendOptions {
  durability?: "full" | "relaxed";
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
  /** The lane (core/lanes.ts) whose run this is, for runs an agent's hooks start. */
  lane?: string;
}

export interface FileRecord {
  path: string;
  /** sha256 of the content when recorded; absent when the file did not exist. */
  hash?: string;
  /**
   * Size and modification time when recorded: a file with both unchanged is not re-read by
   * status (see services/session/status.ts #verify for when they are trusted).
   */
  size?: number;
  mtimeMs?: number;
  at: string;
}

export interface ResumeContext {
  filesModified: FileRecord[];
  keyImplementations: string[];
  openQuestions: string[];
}

/**
 * A rollback as the journal saw it: `rollback:started` (before any file is touched), then
 * `rollback:applied`. One left at `started` was interrupted: its files are each wholly old or
 * wholly new, and status says how to finish or undo it.
 */
export interface RollbackRecord {
  /** The rollback's id; also the id of its `rollback:applied` event. */
  id: string;
  /** The checkpoint restored. */
  target: string;
  /** The checkpoint taken just before restoring: roll back to it to undo this rollback. */
  safety: string;
  state: "started" | "applied";
  /** Files it set out to restore or remove. */
  files: number;
  restored?: number;
  removed?: number;
  startedAt: string;
  appliedAt?: string;
  /** Seq of the latest event about it. */
  seq: number;
  /** Set by the lessons facet when a lesson was captured from this rollback. */
  lesson?: string;
}

/** A file attached to a session (kept in the blob store until the session completes). */
export interface ArtifactRecord {
  id: string;
  name: string;
  /** sha256 of the content (the blob). */
  hash: string;
  size: number;
  mediaType?: string;
  label?: string;
  at: string;
}

/** What a turn's tool call did. `no_progress`: it ran but changed nothing that matters. */
export type TurnStatus = "success" | "error" | "no_progress" | "recovered";

/** A file a turn wrote, as it was after the turn (`hash` absent: the file was deleted). */
export interface TurnFile {
  path: string;
  hash?: string;
  size?: number;
}

/** One agent turn (a tool call and its result), as a `turn:recorded` event carries it. */
export interface TurnRecord {
  tool: string;
  /** A hash of the call's arguments: with the tool, the call's signature. */
  argsHash?: string;
  /** The files the call wrote, as they were after it. */
  files?: TurnFile[];
  status: TurnStatus;
  /** A stable fingerprint of the failure's kind (numbers replaced), when the call failed. */
  fingerprint?: string;
  /** A hash of the failure with its place kept (core/spiral/turn.ts), when the call failed. */
  failurePlace?: string;
  /** A hash of what the call returned, to see the same observation again. */
  observationHash?: string;
  /** The call waits on something outside the workspace (a poll, a sleep, a retry of a network failure). */
  waiting?: boolean;
  /** What it waits on, for the pause: the command, redacted and clipped. */
  waitingOn?: string;
  /** The checkpoint taken before this turn, if any: where a rollback would land. */
  checkpointId?: string;
  /** The caller's own verdict: `true` is real progress (resets the detector). */
  progress?: boolean;
}

/** A turn in the detector's window: the record plus where it sits in the journal. */
export interface TurnEntry extends TurnRecord {
  /** The `turn:recorded` event's id and seq. */
  id: string;
  seq: number;
  at: string;
  files: TurnFile[];
}

/** `alternation` is no longer detected (a `cycle` of two calls is); kept for journals that recorded it. */
export type SpiralPattern = "same_signature" | "file_churn" | "same_failure" | "cycle" | "waiting" | "same_observation" | "alternation";

export interface SpiralEvidence {
  pattern: SpiralPattern;
  /** One sentence a human reads: what repeated, how often. */
  summary: string;
  /** The journal seqs of the turns involved, oldest first; the spiral began at the first. */
  turns: number[];
  path?: string;
  signature?: string;
  fingerprint?: string;
}

export interface SpiralState {
  /** A spiral was detected and nobody has cleared it (`baton resume --unpause`). */
  paused: boolean;
  pattern?: SpiralPattern;
  evidence?: SpiralEvidence;
  /** The last checkpoint before the spiral began, to roll back to. */
  proposedCheckpoint?: string;
  detectedAt?: string;
  detectedSeq?: number;
  clearedAt?: string;
  /** Turns recorded in the session, ever. */
  turns: number;
  /** The most recent turns since the last reset, oldest first, at most SNAPSHOT_LIMITS.turns. */
  window: TurnEntry[];
}

/**
 * Where a lane stands (core/lanes.ts): `working` while its run lives, `idle` between turns,
 * `ended` once its agent session ended, `crashed` once its run was found dead.
 */
export type LaneStatus = "working" | "idle" | "ended" | "crashed";

/** One live or past agent session working in this session (core/lanes.ts). */
export interface LaneRecord {
  /** `<agent>:<agent session id>`, a subagent's `<parent lane>/<agent id>`. */
  id: string;
  /** The agent as shown ("Claude Code"). */
  agent: string;
  host?: string;
  status: LaneStatus;
  /** The lane's running run while `working`. */
  run?: string;
  /** When that run started: the lane's writes since are its claims (services/agents/lanes.ts). */
  since?: string;
  started: string;
  /** The lane's latest event. */
  lastAt: string;
  /** Claims of other lanes it was told about (path → the claim's time), so a retry is let through. */
  noticed?: Record<string, string>;
  /** Its claimed files another lane's shell command changed (path → that lane and when), until its next turn tells it. */
  changedBy?: Record<string, { lane: string; at: string }>;
  /** The lane's own spiral detector state (a spiral pauses only the lane that spiralled). */
  spiral?: SpiralState;
}

export interface Facets {
  position: Position;
  progress: Progress;
  decisions: Decision[];
  blockers: Blocker[];
  runs: RunRecord[];
  resume: ResumeContext;
  /**
   * Recent turns and the spiral detector's state (core/spiral/detector.ts). Created by the first
   * `turn:recorded`; absent in sessions that never recorded a turn.
   */
  spiral?: SpiralState;
  /**
   * The agent sessions that worked in this session, by lane id (core/lanes.ts; bounded:
   * SNAPSHOT_LIMITS.lanes). Absent in sessions no agent hook ever touched.
   */
  lanes?: Record<string, LaneRecord>;
  /** The latest rollbacks (bounded: SNAPSHOT_LIMITS.rollbacks). */
  rollbacks: RollbackRecord[];
  /** Artifacts attached to the session (bounded: SNAPSHOT_LIMITS.artifacts). */
  artifacts: ArtifactRecord[];
}

/**
 * The external target a session is bound to (a browser tab, a remote job): `target:set`.
 * `url` is kept cut to protocol, host and path (core/session/targets.ts).
 */
export interface TargetBinding {
  kind: string;
  id: string;
  url?: string;
  label?: string;
  /** Why it was (re)bound, e.g. `forced` when a caller rebound it over a mismatch. */
  reason?: string;
  setAt: string;
  seq: number;
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
  /** The external target the session is bound to (`target:set`); absent when unbound. */
  target?: TargetBinding;
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
  /**
   * The spiral detector's window of recent turns, and the files kept per turn in it: room for a
   * cycle of five calls three times round and for the waiting budget's 30 polls.
   */
  turns: 32,
  filesPerTurn: 8,
  rollbacks: 20,
  artifacts: 100,
  /** Lanes kept (ended ones are dropped first), and the claim notices kept per lane. */
  lanes: 32,
  noticesPerLane: 200,
});

export interface NextAction {
  /** Stable code, e.g. `run_accept_cleanup`. */
  action: string;
  reason: string;
  /** The exact command to run; empty when there is nothing to run. */
  command: string;
  /** For `ask_user`: the options to put to the user, each with the command that carries it out. */
  choices?: NextActionChoice[];
}

export interface NextActionChoice {
  choice: string;
  description: string;
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

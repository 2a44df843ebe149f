/**
 * Baton: durable sessions for AI agents.
 *
 *   import { openBaton } from "agent-baton";
 *   const baton = await openBaton({ root: "." });
 *   const s = await baton.sessions.start({ flow: "task", title: "Fix the login bug" });
 *   await baton.events.append(s.sessionId, { type: "start" });
 *   console.log((await baton.sessions.status()).sessions[0]?.nextAction);
 *   await baton.close();
 */

import type { Baton, OpenBatonOptions } from "./api.js";
import { openBaton as open } from "./compose.js";

/** Open a workspace (creating `.baton/` unless `create: false`) on the store it is configured for. */
export const openBaton: (options?: OpenBatonOptions) => Promise<Baton> = open;
export type {
  Agents,
  Artifacts,
  Baton,
  BlockerInput,
  Checkpoints,
  DecisionInput,
  Durability,
  Events,
  Facets,
  Flows,
  Health,
  Ledger,
  Lessons,
  Locks,
  OpenBatonOptions,
  PostgresStoreOptions,
  ResumeContextInput,
  Runs,
  SessionSummary,
  Sessions,
  SqliteStoreOptions,
  Store,
  StoreInfo,
  Targets,
  Turns,
  Work,
} from "./api.js";
export { openPostgresStore, openSqliteStore } from "./compose.js";
export type { DoctorCheck, DoctorFinding, DoctorRepair, DoctorReport, DoctorSessionView } from "./core/doctor.js";
export { FACET_EVENTS } from "./core/facets.js";
export { failureFingerprint, normaliseError } from "./core/fingerprint.js";
export type { Condition, EventRule, FlowDefinition, MarkerDef, MarkerRule, NextRule, PhaseDef } from "./core/flows/flow.js";
export { type FlowProblem, parseFlowFile, validateFlow } from "./core/flows/validate.js";
export { parseRollbackIntent, type RollbackIntent } from "./core/hooks/rollback-intent.js";
export type { AgentHookOptions, HookEvent, HookResponse, SessionSource, ToolCall, ToolKind } from "./core/hooks/types.js";
export type { LedgerEvidence, LedgerInput, LedgerLimits, LedgerNode, LedgerStatus } from "./core/ledger/nodes.js";
export type { Lesson, LessonDiagnostic, LessonScope } from "./core/lessons/lessons-md.js";
export type { Injection, LessonIntent, RankedLesson } from "./core/lessons/rank.js";
export type { StaleDecision, StaleProof } from "./core/locks.js";
export { isSecretKey, type RedactOptions, redactText, redactValue } from "./core/redaction/redact.js";
export { cutUrl, type TargetInput } from "./core/session/targets.js";
export { DEFAULT_SPIRAL_THRESHOLDS, type SpiralDetection, type SpiralThresholds, type SpiralView } from "./core/spiral/detector.js";
export type { Checkpoint, CheckpointFile, CheckpointInfo, CheckpointKind } from "./core/time-travel/checkpoints.js";
export { pathProblem } from "./core/time-travel/paths.js";
export type * from "./core/types.js";
export { BatonError, type ErrorCode, EXIT_CODES, isBatonError } from "./errors.js";
export type { ProcessFacts } from "./platform/process-facts.js";
export type { TurnInput, TurnResult } from "./services/agents/spiral.js";
export { BUILTIN_FLOWS } from "./services/flows.js";
export type { SessionView, StartSessionInput } from "./services/journal/journal.js";
export type { LedgerHealth } from "./services/ledger/health.js";
export type { LedgerListOptions, LedgerOptions, OtlpSendResult } from "./services/ledger/ledger.js";
export type { LessonInjection, LessonInput, LessonSearchResult, ListedLesson } from "./services/lessons/lessons.js";
export type { CrashedRun, RunStartInput } from "./services/session/runs.js";
export type { FileCheck, ResumeReport, SessionStatus, StatusReport } from "./services/session/status.js";
export type { TargetResolution } from "./services/session/targets.js";
export type { FollowOptions, TickResult, WatchLine, WatchWarning } from "./services/session/watch-run.js";
export type { ArtifactInfo, ArtifactInput } from "./services/time-travel/artifacts.js";
export type { CheckpointInput, CheckpointOptions, CheckpointResult } from "./services/time-travel/checkpoints.js";
export type { RollbackChange, RollbackInput, RollbackResult } from "./services/time-travel/rollback.js";
export type { AcquireOptions, LockGrant, LockHolder, LockInfo } from "./services/work/locks.js";

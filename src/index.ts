/**
 * Baton: durable sessions for AI agents.
 *
 *   import { openBaton } from "baton";
 *   const baton = await openBaton({ root: "." });
 *   const s = await baton.startSession({ flow: "task", title: "Fix the login bug" });
 *   await baton.append(s.sessionId, { type: "start" });
 *   console.log((await baton.status()).sessions[0]?.nextAction);
 *   await baton.close();
 */

export type { Backend, BackendCapabilities, StoreTx } from "./backend/contract.js";
export { SqliteBackend, type SqliteBackendOptions, type SynchronousMode } from "./backend/sqlite/sqlite-backend.js";
export { Baton, type BlockerInput, type DecisionInput, type OpenBatonOptions, openBaton } from "./baton.js";
export { FACET_EVENTS } from "./core/facets.js";
export type { Condition, EventRule, FlowDefinition, MarkerDef, MarkerRule, NextRule, PhaseDef } from "./core/flow.js";
export { type FlowProblem, parseFlowFile, validateFlow } from "./core/flow-validate.js";
export type * from "./core/types.js";
export { BatonError, type ErrorCode, EXIT_CODES, isBatonError } from "./errors.js";
export { BUILTIN_FLOWS } from "./services/flows.js";
export type { SessionView, StartSessionInput } from "./services/journal.js";
export type { FileCheck, ResumeReport, SessionStatus, StatusReport } from "./services/status.js";

/**
 * Facet events: `noun:verb` events every session accepts whatever its flow and phase. They
 * update facets (position, progress, decisions, blockers, runs, resume context, free context)
 * and never move the phase. Their data is validated here, purely, before anything is stored.
 */
import { isLaneId } from "./lanes.js";
import type { JsonObject, JsonValue } from "./types.js";

export const FACET_EVENTS = Object.freeze([
  "session:started",
  "position:set",
  "progress:set",
  "decision:added",
  "blocker:added",
  "blocker:resolved",
  "blocker:bypassed",
  "run:started",
  "run:ended",
  "run:crashed",
  "resume:updated",
  "context:set",
  "note:added",
  "rollback:started",
  "rollback:applied",
  "artifact:added",
  "turn:recorded",
  "spiral:detected",
  "spiral:cleared",
  "lesson:added",
  "target:set",
  "target:cleared",
  "lane:ended",
  "claim:noticed",
] as const);

export type FacetEventType = (typeof FACET_EVENTS)[number];

export function isFacetEvent(type: string): type is FacetEventType {
  return (FACET_EVENTS as readonly string[]).includes(type);
}

type Check = (v: JsonValue | undefined) => string | null;
const str: Check = (v) => (v === undefined || typeof v === "string" ? null : "must be a string");
const reqStr: Check = (v) => (typeof v === "string" && v.trim() !== "" ? null : "is required (a non-empty string)");
const bool: Check = (v) => (v === undefined || typeof v === "boolean" ? null : "must be true or false");
const count: Check = (v) =>
  v === undefined || (typeof v === "number" && Number.isInteger(v) && v >= 0) ? null : "must be a whole number ≥ 0";
const num: Check = (v) => (v === undefined || typeof v === "number" ? null : "must be a number");
const strList: Check = (v) =>
  v === undefined || (Array.isArray(v) && v.every((x) => typeof x === "string")) ? null : "must be a list of strings";
const fileList: Check = (v) =>
  v === undefined ||
  (Array.isArray(v) &&
    v.every(
      (x) =>
        x !== null &&
        typeof x === "object" &&
        !Array.isArray(x) &&
        typeof x.path === "string" &&
        (x.hash === undefined || x.hash === null || typeof x.hash === "string") &&
        (x.size === undefined || typeof x.size === "number") &&
        (x.mtimeMs === undefined || typeof x.mtimeMs === "number"),
    ))
    ? null
    : 'must be a list of {"path": string, "hash"?: string, "size"?: number, "mtimeMs"?: number}';

const TURN_STATUSES = ["success", "error", "no_progress", "recovered"] as const;
const SPIRAL_PATTERNS = ["same_signature", "file_churn", "same_failure", "cycle", "waiting", "same_observation", "alternation"] as const;
/** Files written by one turn, at most this many per record. */
export const MAX_TURN_FILES = 100;

const oneOf =
  (values: readonly string[]): Check =>
  (v) =>
    typeof v === "string" && values.includes(v) ? null : `must be one of ${values.join(", ")}`;
const reqStrList: Check = (v) =>
  Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === "string") ? null : "is required (a non-empty list of strings)";
const turnFiles: Check = (v) => {
  if (v === undefined) return null;
  const ok =
    Array.isArray(v) &&
    v.length <= MAX_TURN_FILES &&
    v.every(
      (x) =>
        x !== null &&
        typeof x === "object" &&
        !Array.isArray(x) &&
        typeof x.path === "string" &&
        x.path !== "" &&
        (x.hash === undefined || typeof x.hash === "string") &&
        (x.size === undefined || (typeof x.size === "number" && Number.isInteger(x.size) && x.size >= 0)) &&
        Object.keys(x).every((k) => k === "path" || k === "hash" || k === "size"),
    );
  return ok ? null : `must be a list of at most ${MAX_TURN_FILES} {"path": string, "hash"?: string, "size"?: bytes}`;
};

const claimList: Check = (v) =>
  Array.isArray(v) &&
  v.length > 0 &&
  v.length <= MAX_TURN_FILES &&
  v.every(
    (x) =>
      x !== null &&
      typeof x === "object" &&
      !Array.isArray(x) &&
      typeof x.path === "string" &&
      typeof x.holder === "string" &&
      typeof x.at === "string" &&
      Object.keys(x).length === 3,
  )
    ? null
    : `must be a list of 1-${MAX_TURN_FILES} {"path": string, "holder": string, "at": string}`;

/** An agent lane's id (core/lanes.ts isLaneId). */
const laneStr: Check = (v) =>
  v === undefined || (typeof v === "string" && isLaneId(v)) ? null : 'must be a lane id, "<agent>:<session id>"';
const reqLane: Check = (v) => (v === undefined ? "is required (a lane id)" : laneStr(v));

const SCHEMAS: Record<FacetEventType, Record<string, Check> | "object"> = {
  "session:started": { flow: reqStr, title: str, deadline: str },
  "position:set": { phase: str, plan: str, task: str, wave: str, status: str },
  "progress:set": { total: count, completed: count },
  "decision:added": { decision: reqStr, context: str, reason: str, alternatives: strList, reversible: bool },
  "blocker:added": { id: reqStr, text: reqStr, affects: str, workaround: str },
  "blocker:resolved": { id: reqStr, resolution: str },
  "blocker:bypassed": { id: reqStr, workaround: reqStr },
  // `lane`: the agent session the run belongs to (core/lanes.ts), for runs the hooks start.
  "run:started": { runId: reqStr, agent: reqStr, pid: count, host: str, lane: laneStr },
  "run:ended": {
    runId: reqStr,
    reason: str,
    completedWork: str,
    contextUsage: num,
  },
  "run:crashed": { runId: reqStr, reason: str },
  "resume:updated": { filesModified: fileList, keyImplementations: strList, openQuestions: strList },
  "context:set": "object",
  "note:added": { text: reqStr },
  // A rollback: `id` is the rollback's id (and its applied event's id); `paths` are bounded
  // samples; `plan` the hash of what it did (RollbackResult.plan), so a repeat can answer as it did.
  "rollback:started": { id: reqStr, target: reqStr, safety: reqStr, files: count, steps: count, paths: strList },
  "rollback:applied": {
    id: reqStr,
    target: reqStr,
    safety: reqStr,
    restored: count,
    removed: count,
    unchanged: count,
    paths: strList,
    removedPaths: strList,
    plan: str,
  },
  "artifact:added": { id: reqStr, name: reqStr, hash: reqStr, size: count, mediaType: str, label: str },
  // A turn (core/types.ts TurnRecord) and what the spiral detector made of it (core/spiral/detector.ts).
  "turn:recorded": {
    tool: reqStr,
    argsHash: str,
    files: turnFiles,
    status: oneOf(TURN_STATUSES),
    fingerprint: str,
    failurePlace: str,
    observationHash: str,
    waiting: bool,
    waitingOn: str,
    checkpointId: str,
    progress: bool,
    lane: laneStr,
  },
  // `turns` and `from` are the ids of `turn:recorded` events.
  "spiral:detected": {
    pattern: oneOf(SPIRAL_PATTERNS),
    summary: reqStr,
    turns: reqStrList,
    from: reqStr,
    path: str,
    signature: str,
    fingerprint: str,
    proposedCheckpoint: str,
    lane: laneStr,
  },
  // Without `lane`: the session's pause and every lane's (a person's unpause).
  "spiral:cleared": { reason: str, lane: laneStr },
  // A lesson written to LESSONS.md from this session; `rollback` links it to the rollback it came from.
  "lesson:added": { id: reqStr, text: reqStr, scope: oneOf(["session", "workspace"]), rollback: str },
  // The external target the session is bound to (core/session/targets.ts); `url` is cut to protocol, host and path.
  "target:set": { kind: reqStr, id: reqStr, url: str, label: str, reason: str },
  "target:cleared": { reason: str },
  // An agent session ended (core/lanes.ts): its lane and its subagents' lanes end.
  "lane:ended": { lane: reqLane, reason: str },
  // A lane about to write files other lanes hold claims on was told (core/lanes.ts).
  // `shell`: its shell command changed files other lanes claim (each holder is told too).
  "claim:noticed": { lane: reqLane, outcome: oneOf(["refused", "warned", "shell"]), claims: claimList },
};

/** Returns the problems with a facet event's data, as `field: problem` strings. */
export function validateFacetData(type: FacetEventType, data: JsonObject): string[] {
  const schema = SCHEMAS[type];
  if (schema === "object") {
    // Folded with Object.assign: an own "__proto__" (JSON.parse makes one) would set the context's prototype.
    if (Object.hasOwn(data, "__proto__")) return ['"__proto__": is not a context key (pick another name)'];
    return Object.keys(data).length === 0 ? ["data: names no key to set"] : [];
  }
  const problems: string[] = [];
  for (const [field, check] of Object.entries(schema)) {
    const p = check(data[field]);
    if (p) problems.push(`data.${field} ${p}`);
  }
  for (const field of Object.keys(data)) {
    if (!(field in schema)) problems.push(`data.${field} is not a field of ${type} (fields: ${Object.keys(schema).join(", ")})`);
  }
  if (type === "progress:set") {
    const { total, completed } = data as { total?: number; completed?: number };
    if (typeof total === "number" && typeof completed === "number" && completed > total) {
      problems.push("data.completed must not exceed data.total");
    }
  }
  return problems;
}

/**
 * Flows: declarative state machines. A flow is plain data (built-ins live in core/flows/,
 * user flows are JSON files in `.baton/flows/`), and this module is the pure engine that
 * interprets it. No I/O here.
 *
 * Event names of a flow never contain ":"; `noun:verb` names are facet events (core/facets.ts),
 * which every session accepts whatever its flow and phase.
 */
import type { JsonObject, JsonValue, NextAction, Snapshot } from "../types.js";

/** A condition over `{data, context}`; paths are dotted (`data.carbonize`, `context.count`). */
export interface Condition {
  eq?: [string, JsonValue];
  lt?: [string, string];
  gte?: [string, string];
  exists?: string;
  missing?: string;
}

/** Where an event goes. No `to` means the phase does not change. */
export interface EventRule {
  to?: string;
  when?: Condition;
  /** For global events: still refused (fenced) in fenced phases. Default true. */
  fenceable?: boolean;
}

export interface NextRule {
  action: string;
  reason: string;
  /** Command template; `{session}` is replaced by the session id. */
  command: string;
  when?: Condition;
}

export interface PhaseDef {
  description?: string;
  on?: Record<string, EventRule | EventRule[]>;
  /** `true`, or `"after_deadline"`: terminal only once the session's deadline has passed. */
  terminal?: boolean | "after_deadline";
  /** Late events (not in `on`) are kept as diagnostics instead of being refused. */
  fenced?: boolean;
  /** The next action drops to the flow's presence action while the client is absent. */
  needsPresence?: boolean;
  next: NextRule | NextRule[];
}

export interface MarkerDef {
  name: string;
  /** A literal substring searched line by line. */
  pattern: string;
}

/** When the scanned files show a marker pattern, the next action follows the files. */
export interface MarkerRule {
  phases?: string[];
  /** All of these markers are present somewhere in the session's files. */
  present?: string[];
  /** None of these markers are present. */
  absent?: string[];
  action: string;
  reason: string;
  command: string;
}

export interface WorkSpec {
  priority: number;
  doneBy?: string[];
}

export interface FlowDefinition {
  name: string;
  description?: string;
  initial: string;
  phases: Record<string, PhaseDef>;
  /** Events allowed in every non-terminal phase (unless fenced). */
  global?: Record<string, EventRule | EventRule[]>;
  /**
   * Events that are work for the agent: their priority lane (lower runs first) and the events
   * that finish them. A work item ends when its lease is acked, or when one of its `doneBy`
   * events is appended (so `baton event accepted` and acking with that result agree).
   */
  work?: Record<string, WorkSpec>;
  /** The event `baton complete` appends. Default `complete`. */
  completeEvent?: string;
  markers?: MarkerDef[];
  markerRules?: MarkerRule[];
  /** Globs of generated/served files: markers there mean "persist to the true source". */
  generatedPaths?: string[];
  generatedAction?: Omit<NextRule, "when">;
  /** Client presence: the event that says the client left, and the action while it is away. */
  presence?: { leave: string; action: Omit<NextRule, "when"> };
}

export type TransitionDecision =
  | { kind: "move"; to: string }
  | { kind: "stay" }
  | { kind: "fenced"; reason: string }
  | { kind: "stale"; reason: string }
  | { kind: "invalid"; phase: string; allowed: string[]; reason: string };

function toList<T>(v: T | T[] | undefined): T[] {
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

function lookup(path: string, scope: { data: JsonObject; context: JsonObject }): JsonValue | undefined {
  const parts = path.split(".");
  let cur: unknown = scope;
  for (const p of parts) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<string, unknown>)[p];
  }
  return cur as JsonValue | undefined;
}

export function evaluate(cond: Condition | undefined, scope: { data: JsonObject; context: JsonObject }): boolean {
  if (!cond) return true;
  if (cond.eq && lookup(cond.eq[0], scope) !== cond.eq[1]) return false;
  if (cond.lt) {
    const a = lookup(cond.lt[0], scope);
    const b = lookup(cond.lt[1], scope);
    if (typeof a !== "number" || typeof b !== "number" || !(a < b)) return false;
  }
  if (cond.gte) {
    const a = lookup(cond.gte[0], scope);
    const b = lookup(cond.gte[1], scope);
    if (typeof a !== "number" || typeof b !== "number" || !(a >= b)) return false;
  }
  if (cond.exists !== undefined && lookup(cond.exists, scope) === undefined) return false;
  if (cond.missing !== undefined && lookup(cond.missing, scope) !== undefined) return false;
  return true;
}

export function isTerminal(flow: FlowDefinition, phase: string, deadline: string | undefined, now: Date): boolean {
  const t = flow.phases[phase]?.terminal;
  if (t === true) return true;
  if (t === "after_deadline") return deadline === undefined || Date.parse(deadline) <= now.getTime();
  return false;
}

const EVENT_NAMES = new WeakMap<FlowDefinition, ReadonlySet<string>>();

/** Every event name the flow knows, in any phase or globally (worked out once per definition: every append of a flow event asks). */
export function flowEvents(flow: FlowDefinition): ReadonlySet<string> {
  let names = EVENT_NAMES.get(flow);
  if (!names) {
    const all = new Set(Object.keys(flow.global ?? {}));
    for (const def of Object.values(flow.phases)) for (const n of Object.keys(def.on ?? {})) all.add(n);
    names = all;
    EVENT_NAMES.set(flow, names);
  }
  return names;
}

/** Event names accepted in a phase (for error messages). */
export function allowedEvents(flow: FlowDefinition, phase: string): string[] {
  const def = flow.phases[phase];
  if (!def) return [];
  const names = new Set(Object.keys(def.on ?? {}));
  if (!def.terminal) {
    for (const [name, rules] of Object.entries(flow.global ?? {})) {
      if (!def.fenced || toList(rules).some((r) => r.fenceable === false)) names.add(name);
    }
  }
  return [...names].sort();
}

/**
 * Decide what an event does in the session's current phase. Pure: the same snapshot and event
 * always give the same decision, so append and rebuild agree.
 */
export function decide(
  flow: FlowDefinition,
  snap: Pick<Snapshot, "phase" | "revision" | "context" | "deadline">,
  event: { type: string; data: JsonObject; revision?: number },
  now: Date,
): TransitionDecision {
  const phase = snap.phase;
  const def = flow.phases[phase];
  if (!def) return { kind: "invalid", phase, allowed: [], reason: `phase "${phase}" is not in flow ${flow.name}` };
  if (isTerminal(flow, phase, snap.deadline, now)) {
    return { kind: "fenced", reason: `session is ${phase} (terminal); late "${event.type}" kept as a diagnostic` };
  }
  if (event.revision !== undefined && snap.revision !== undefined && event.revision <= snap.revision) {
    return {
      kind: "stale",
      reason: `"${event.type}" revision ${event.revision} is not newer than ${snap.revision}; kept as a diagnostic`,
    };
  }
  let rules = toList(def.on?.[event.type]);
  if (rules.length === 0) {
    const globalRules = toList(flow.global?.[event.type]);
    rules = def.fenced ? globalRules.filter((r) => r.fenceable === false) : globalRules;
    if (rules.length === 0 && globalRules.length > 0) {
      return { kind: "fenced", reason: `phase ${phase} is fenced; late "${event.type}" kept as a diagnostic` };
    }
  }
  if (rules.length === 0) {
    if (def.fenced) return { kind: "fenced", reason: `phase ${phase} is fenced; late "${event.type}" kept as a diagnostic` };
    const allowed = allowedEvents(flow, phase);
    return {
      kind: "invalid",
      phase,
      allowed,
      reason: `"${event.type}" is not allowed in phase ${phase} of flow ${flow.name}; allowed: ${allowed.join(", ") || "(none)"}`,
    };
  }
  const scope = { data: event.data, context: snap.context };
  const rule = rules.find((r) => evaluate(r.when, scope));
  if (!rule) {
    const allowed = allowedEvents(flow, phase);
    return {
      kind: "invalid",
      phase,
      allowed,
      reason: `"${event.type}" in phase ${phase} matches none of its conditions in flow ${flow.name}`,
    };
  }
  if (rule.to === undefined || rule.to === phase) return { kind: "stay" };
  return { kind: "move", to: rule.to };
}

/** Fill `{session}` and `{context.key}` placeholders of a reason or command template. */
export function renderTemplate(template: string, sessionId: string, context: JsonObject = {}): string {
  return template.replace(/\{(session|context\.[A-Za-z0-9_]+)\}/g, (_m, key: string) => {
    if (key === "session") return sessionId;
    const v = context[key.slice("context.".length)];
    if (v === undefined) return "?";
    return typeof v === "string" ? v : JSON.stringify(v);
  });
}

export function renderRule(rule: Omit<NextRule, "when">, snap: Pick<Snapshot, "sessionId" | "context">): NextAction {
  return {
    action: rule.action,
    reason: renderTemplate(rule.reason, snap.sessionId, snap.context),
    command: renderTemplate(rule.command, snap.sessionId, snap.context),
  };
}

/** The phase's own next action (without markers or pending work). */
export function phaseNextAction(flow: FlowDefinition, snap: Snapshot, now: Date): NextAction {
  const def = flow.phases[snap.phase];
  if (!def) {
    return {
      action: "repair_session",
      reason: `phase "${snap.phase}" is unknown to flow ${flow.name}; the flow file may have changed`,
      command: `baton rebuild --session ${snap.sessionId}`,
    };
  }
  if (isTerminal(flow, snap.phase, snap.deadline, now)) {
    return { action: "none", reason: `session is ${snap.phase}`, command: "" };
  }
  if (def.needsPresence && flow.presence && snap.presence === "absent") return renderRule(flow.presence.action, snap);
  const scope = { data: {}, context: snap.context };
  const rule = toList(def.next).find((r) => evaluate(r.when, scope)) ?? toList(def.next)[0];
  if (!rule) return { action: "none", reason: `phase ${snap.phase} declares no next action`, command: "" };
  return renderRule(rule, snap);
}

/**
 * Validation of flow definitions. User flows are JSON files; every problem names the field
 * path and, for files, the line and column, so a typo is found without guessing.
 */

import { findNodeAtLocation, type ParseError, parseTree, printParseErrorCode } from "jsonc-parser";
import { JSON_LIMITS, jsonTextDepth } from "../canonical.js";
import { isFacetEvent } from "../facets.js";
import { globProblem } from "../glob-limits.js";
import type { FlowDefinition } from "./flow.js";

export interface FlowProblem {
  /** Dotted field path, e.g. `phases.cycling.on.accept.to`. */
  path: string;
  message: string;
  line?: number;
  column?: number;
}

const NAME = /^[a-z][a-z0-9_-]*$/;
const EVENT = /^[a-z][a-z0-9_]*$/;
const ACTION = /^[a-z][a-z0-9_]*$/;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** Structural and referential checks of a flow object. Returns every problem, not just the first. */
export function validateFlow(input: unknown): FlowProblem[] {
  const problems: FlowProblem[] = [];
  const add = (path: string, message: string) => problems.push({ path, message });
  if (!isObj(input)) return [{ path: "", message: "a flow must be a JSON object" }];
  const f = input;
  if (typeof f.name !== "string" || !NAME.test(f.name)) add("name", "must be a lowercase name (letters, digits, - and _)");
  if (!isObj(f.phases) || Object.keys(f.phases).length === 0) {
    add("phases", "must be an object with at least one phase");
    return problems;
  }
  const phases = f.phases;
  const phaseNames = new Set(Object.keys(phases));
  if (typeof f.initial !== "string" || !phaseNames.has(f.initial)) {
    add("initial", `must name one of the phases (${[...phaseNames].join(", ")})`);
  }
  const events = new Set<string>();
  const checkCondition = (path: string, c: unknown) => {
    if (c === undefined) return;
    if (!isObj(c)) return add(path, "must be an object with eq, lt, gte, exists or missing");
    for (const [k, v] of Object.entries(c)) {
      if (k === "eq" || k === "lt" || k === "gte") {
        if (!Array.isArray(v) || v.length !== 2 || typeof v[0] !== "string") add(`${path}.${k}`, 'must be ["path", value]');
      } else if (k === "exists" || k === "missing") {
        if (typeof v !== "string") add(`${path}.${k}`, "must be a dotted path string");
      } else add(`${path}.${k}`, "is not a condition (use eq, lt, gte, exists or missing)");
    }
  };
  const checkRules = (path: string, rules: unknown) => {
    for (const [i, r] of (Array.isArray(rules) ? rules : [rules]).entries()) {
      const p = Array.isArray(rules) ? `${path}[${i}]` : path;
      if (!isObj(r)) {
        add(p, 'must be an object like {"to": "phase"} or {} to stay');
        continue;
      }
      if (r.to !== undefined && (typeof r.to !== "string" || !phaseNames.has(r.to))) {
        add(`${p}.to`, `must name one of the phases (${[...phaseNames].join(", ")})`);
      }
      if (r.fenceable !== undefined && typeof r.fenceable !== "boolean") add(`${p}.fenceable`, "must be true or false");
      checkCondition(`${p}.when`, r.when);
      for (const k of Object.keys(r))
        if (!["to", "when", "fenceable"].includes(k)) add(`${p}.${k}`, "is not a field of an event rule (to, when, fenceable)");
    }
  };
  const checkEventMap = (path: string, on: unknown) => {
    if (on === undefined) return;
    if (!isObj(on)) return add(path, "must be an object of event name → rule");
    for (const [ev, rules] of Object.entries(on)) {
      if (!EVENT.test(ev) || isFacetEvent(ev))
        add(`${path}.${ev}`, "event names are lowercase words without ':' (noun:verb names are reserved for facet events)");
      events.add(ev);
      checkRules(`${path}.${ev}`, rules);
    }
  };
  const checkNext = (path: string, n: unknown, allowWhen: boolean) => {
    for (const [i, r] of (Array.isArray(n) ? n : [n]).entries()) {
      const p = Array.isArray(n) ? `${path}[${i}]` : path;
      if (!isObj(r)) {
        add(p, "must be an object {action, reason, command}");
        continue;
      }
      if (typeof r.action !== "string" || !ACTION.test(r.action)) add(`${p}.action`, "must be a stable snake_case action code");
      if (typeof r.reason !== "string" || r.reason === "") add(`${p}.reason`, "must be a non-empty string");
      if (typeof r.command !== "string") add(`${p}.command`, "must be a string (empty when there is nothing to run)");
      if (allowWhen) checkCondition(`${p}.when`, r.when);
    }
  };
  let terminals = 0;
  for (const [name, def] of Object.entries(phases)) {
    const p = `phases.${name}`;
    if (!NAME.test(name)) add(p, "phase names are lowercase words");
    if (!isObj(def)) {
      add(p, "must be an object with at least `next`");
      continue;
    }
    if (def.terminal !== undefined && def.terminal !== true && def.terminal !== false && def.terminal !== "after_deadline") {
      add(`${p}.terminal`, 'must be true, false or "after_deadline"');
    }
    if (def.terminal) terminals++;
    for (const k of ["fenced", "needsPresence"])
      if (def[k] !== undefined && typeof def[k] !== "boolean") add(`${p}.${k}`, "must be true or false");
    checkEventMap(`${p}.on`, def.on);
    if (def.next === undefined) add(`${p}.next`, "is required: the next action in this phase");
    else checkNext(`${p}.next`, def.next, true);
    for (const k of Object.keys(def)) {
      if (!["description", "on", "terminal", "fenced", "needsPresence", "next"].includes(k)) {
        add(`${p}.${k}`, "is not a field of a phase (description, on, terminal, fenced, needsPresence, next)");
      }
    }
  }
  if (terminals === 0) add("phases", "at least one phase must be terminal, or sessions never complete");
  checkEventMap("global", f.global);
  if (f.work !== undefined) {
    if (!isObj(f.work)) add("work", "must be an object of event name → {priority, doneBy?}");
    else
      for (const [ev, w] of Object.entries(f.work)) {
        if (!events.has(ev)) add(`work.${ev}`, "names an event no phase or global rule accepts");
        if (!isObj(w) || typeof w.priority !== "number" || !Number.isInteger(w.priority))
          add(`work.${ev}.priority`, "must be an integer (lower runs first)");
        const doneBy = isObj(w) ? w.doneBy : undefined;
        if (doneBy !== undefined) {
          if (!Array.isArray(doneBy)) add(`work.${ev}.doneBy`, "must be a list of event names");
          else for (const d of doneBy) if (typeof d !== "string" || !events.has(d)) add(`work.${ev}.doneBy`, `names unknown event "${d}"`);
        }
      }
  }
  if (f.completeEvent !== undefined && (typeof f.completeEvent !== "string" || !events.has(f.completeEvent))) {
    add("completeEvent", "must name an event the flow accepts");
  }
  const markerNames = new Set<string>();
  if (f.markers !== undefined) {
    if (!Array.isArray(f.markers)) add("markers", "must be a list of {name, pattern}");
    else
      for (const [i, m] of f.markers.entries()) {
        if (!isObj(m) || typeof m.name !== "string" || typeof m.pattern !== "string" || m.pattern === "") {
          add(`markers[${i}]`, 'must be {"name": string, "pattern": non-empty string}');
        } else markerNames.add(m.name);
      }
  }
  if (f.markerRules !== undefined) {
    if (!Array.isArray(f.markerRules)) add("markerRules", "must be a list");
    else
      for (const [i, r] of f.markerRules.entries()) {
        const p = `markerRules[${i}]`;
        if (!isObj(r)) {
          add(p, "must be an object");
          continue;
        }
        checkNext(p, { action: r.action, reason: r.reason, command: r.command }, false);
        for (const k of ["present", "absent"]) {
          const v = r[k];
          if (v === undefined) continue;
          if (!Array.isArray(v)) add(`${p}.${k}`, "must be a list of marker names");
          else for (const n of v) if (!markerNames.has(n)) add(`${p}.${k}`, `names unknown marker "${n}"`);
        }
        if (r.phases !== undefined) {
          if (!Array.isArray(r.phases)) add(`${p}.phases`, "must be a list of phases");
          else for (const ph of r.phases) if (!phaseNames.has(ph)) add(`${p}.phases`, `names unknown phase "${ph}"`);
        }
      }
  }
  if (f.generatedPaths !== undefined && (!Array.isArray(f.generatedPaths) || !f.generatedPaths.every((g) => typeof g === "string"))) {
    add("generatedPaths", "must be a list of glob strings");
  } else if (f.generatedPaths !== undefined) {
    for (const g of f.generatedPaths as string[]) {
      const why = globProblem(g);
      if (why) add("generatedPaths", `${JSON.stringify(g)} is refused: ${why}`);
    }
  }
  if (f.generatedAction !== undefined) checkNext("generatedAction", f.generatedAction, false);
  if (f.presence !== undefined) {
    if (!isObj(f.presence) || typeof f.presence.leave !== "string")
      add("presence", "must be {leave: event, action: {action, reason, command}}");
    else checkNext("presence.action", f.presence.action, false);
  }
  const known = [
    "name",
    "description",
    "initial",
    "phases",
    "global",
    "work",
    "completeEvent",
    "markers",
    "markerRules",
    "generatedPaths",
    "generatedAction",
    "presence",
    "$schema",
  ];
  for (const k of Object.keys(f)) if (!known.includes(k)) add(k, `is not a field of a flow (${known.slice(0, -1).join(", ")})`);
  return problems;
}

/** Parse and validate a flow file's text. Problems carry 1-based line and column. */
export function parseFlowFile(text: string): { flow?: FlowDefinition; problems: FlowProblem[] } {
  if (jsonTextDepth(text) > JSON_LIMITS.depth)
    return { problems: [{ path: "", message: `nested deeper than ${JSON_LIMITS.depth} levels`, line: 1, column: 1 }] };
  const errors: ParseError[] = [];
  const tree = parseTree(text, errors, { allowTrailingComma: false, disallowComments: true });
  const lineOf = (offset: number) => {
    let line = 1;
    let lastNl = -1;
    for (let i = 0; i < offset && i < text.length; i++) {
      if (text.charCodeAt(i) === 10) {
        line++;
        lastNl = i;
      }
    }
    return { line, column: offset - lastNl };
  };
  if (errors.length > 0 || !tree) {
    return {
      problems: errors.map((e) => ({ path: "", message: `invalid JSON: ${printParseErrorCode(e.error)}`, ...lineOf(e.offset) })),
    };
  }
  const value: unknown = JSON.parse(text);
  const problems = validateFlow(value).map((p) => {
    const segments =
      p.path === ""
        ? []
        : p.path
            .split(/\.|\[(\d+)\]/)
            .filter((s) => s !== undefined && s !== "")
            .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
    // Point at the deepest node that exists: a missing field is reported where its parent is.
    for (let n = segments.length; n >= 0; n--) {
      const node = findNodeAtLocation(tree, segments.slice(0, n));
      if (node) return { ...p, ...lineOf(node.parent?.type === "property" ? node.parent.offset : node.offset) };
    }
    return p;
  });
  return problems.length > 0 ? { problems } : { flow: value as FlowDefinition, problems };
}

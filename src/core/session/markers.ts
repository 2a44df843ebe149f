/**
 * Source markers: file truth that repairs journal drift. Pure: the status service reads the
 * files and hands their text here.
 */

import { createRequire } from "node:module";
import type Picomatch from "picomatch";
import { type FlowDefinition, type MarkerDef, renderRule } from "../flows/flow.js";
import { GLOB_OPTIONS, globProblem } from "../glob-limits.js";
import type { MarkerFinding, ScannedFile } from "../next-action-rule.js";
import type { NextAction, Snapshot } from "../types.js";

export type { MarkerFinding, ScannedFile } from "../next-action-rule.js";

const EXCERPT_MAX = 120;

export function scanText(path: string, text: string, markers: readonly MarkerDef[]): MarkerFinding[] {
  if (markers.length === 0) return [];
  const out: MarkerFinding[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    for (const m of markers) {
      if (line.includes(m.pattern)) {
        const trimmed = line.trim();
        out.push({
          file: path,
          line: i + 1,
          marker: m.name,
          excerpt: trimmed.length > EXCERPT_MAX ? `${trimmed.slice(0, EXCERPT_MAX)}…` : trimmed,
        });
      }
    }
  }
  return out;
}

let picomatch: typeof Picomatch | undefined;

export function isGeneratedPath(flow: FlowDefinition, path: string): boolean {
  if (!flow.generatedPaths?.length) return false;
  // Loaded on first use: only a session whose files hold markers needs it.
  picomatch ??= createRequire(import.meta.url)("picomatch") as typeof Picomatch;
  // Flow files are checked on load (core/flows/validate.ts); the limits hold here too.
  const globs = flow.generatedPaths.filter((g) => globProblem(g) === undefined);
  return globs.length > 0 && picomatch(globs, GLOB_OPTIONS)(path);
}

/**
 * The next action the files imply, or undefined when they imply nothing. Only called when at
 * least one of the session's files could be read: absence of markers in no file proves nothing.
 */
export function markerNextAction(flow: FlowDefinition, snap: Snapshot, files: readonly ScannedFile[]): NextAction | undefined {
  const all = files.flatMap((f) => f.findings);
  if (flow.generatedAction && all.length > 0 && files.some((f) => f.findings.length > 0 && isGeneratedPath(flow, f.path))) {
    return renderRule(flow.generatedAction, snap);
  }
  const present = new Set(all.map((f) => f.marker));
  for (const rule of flow.markerRules ?? []) {
    if (rule.phases && !rule.phases.includes(snap.phase)) continue;
    if (rule.present && !rule.present.every((m) => present.has(m))) continue;
    if (rule.absent?.some((m) => present.has(m))) continue;
    return renderRule(rule, snap);
  }
  return undefined;
}

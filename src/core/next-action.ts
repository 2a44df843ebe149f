/**
 * The next action, decided in one place. Capabilities that can pre-empt the flow's own answer
 * (an interrupted rollback, a paused spiral, pending work) each contribute a pure rule here;
 * the first rule that answers wins, then file markers, then the flow's phase rule.
 *
 * Order matters, highest priority first:
 *  1. finishing or undoing an interrupted rollback (files may be half restored)
 *  2. a spiral pause (the agent must not continue until the user chooses)
 *  3. pending work for the agent (the delivery queue)
 */
import type { FlowDefinition } from "./flow.js";
import type { NextAction, Snapshot } from "./types.js";

export interface NextActionInput {
  flow: FlowDefinition;
  snap: Snapshot;
  /** Work items waiting for the agent (filled in by the delivery queue). */
  pendingWork: number;
}

export type NextActionRule = (input: NextActionInput) => NextAction | undefined;

/** Rules in priority order. Capabilities append theirs at the position documented above. */
export const NEXT_ACTION_RULES: readonly NextActionRule[] = [];

export function overridingAction(input: NextActionInput): NextAction | undefined {
  for (const rule of NEXT_ACTION_RULES) {
    const a = rule(input);
    if (a) return a;
  }
  return undefined;
}

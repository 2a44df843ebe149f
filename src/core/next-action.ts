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
import { allowedEvents, type FlowDefinition } from "./flow.js";
import { finishRollbackRule } from "./rollback.js";
import { spiralPauseRule } from "./spiral.js";
import type { NextAction, Snapshot } from "./types.js";

/** An open work item, as the rules see it. */
export interface OpenWork {
  kind: string;
  seq: number;
  state: "ready" | "leased";
  /** A leased item whose lease ran out: it will be delivered again. */
  leaseExpired?: boolean;
}

export interface NextActionInput {
  flow: FlowDefinition;
  snap: Snapshot;
  /** Open work items of the session (the delivery queue). */
  pendingWork: readonly OpenWork[];
}

export type NextActionRule = (input: NextActionInput) => NextAction | undefined;

/**
 * Pending work the phase's own action does not cover. The phase covers a work item when an
 * event that finishes it (`doneBy`) is allowed now: then the phase's action (e.g.
 * run_accept_cleanup for an accept) is how the agent handles it, and recording that event
 * finishes the item. Anything else waiting (a closed tab, a steering message) is
 * handle_pending_work: poll it, act, ack.
 */
export const pendingWorkRule: NextActionRule = ({ flow, snap, pendingWork }) => {
  const allowed = new Set(allowedEvents(flow, snap.phase));
  const waiting = pendingWork.filter((w) => w.state === "ready" || w.leaseExpired);
  const uncovered = waiting.filter((w) => !(flow.work?.[w.kind]?.doneBy ?? []).some((e) => allowed.has(e)));
  if (uncovered.length === 0) return undefined;
  const list = uncovered
    .slice(0, 3)
    .map((w) => `${w.kind} (seq ${w.seq})`)
    .join(", ");
  return {
    action: "handle_pending_work",
    reason: `${uncovered.length} event(s) wait for the agent: ${list}${uncovered.length > 3 ? ", …" : ""}. Lease one, handle it, then ack it with its result.`,
    command: `baton poll --session ${snap.sessionId} --json`,
  };
};

/** Rules in priority order. Capabilities add theirs at the position documented above. */
export const NEXT_ACTION_RULES: readonly NextActionRule[] = [
  finishRollbackRule, // 1. an interrupted rollback
  spiralPauseRule, // 2. a spiral pause
  pendingWorkRule, // 3. pending work
];

export function overridingAction(input: NextActionInput): NextAction | undefined {
  for (const rule of NEXT_ACTION_RULES) {
    const a = rule(input);
    if (a) return a;
  }
  return undefined;
}

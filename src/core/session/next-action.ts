/**
 * The next action, decided in one place, purely. Every fact a session can hold has a rule; the
 * rules are tried in the order of NEXT_ACTION_RULES (docs/flows.md, "What decides the next
 * action", is the table of record). The first rule that answers with an action wins; every
 * other rule that answers is named in the winner's reason ("Also: …") and its own action
 * becomes a suggestion. Advisory rules never take the action: they only shape the reason.
 *
 * Order matters, highest priority first (a change here is a change to that table):
 *  1. an interrupted rollback (files may be half restored)
 *  2. a spiral pause (the agent must not continue until the user chooses)
 *  3. dead-lettered work (delivered too often; someone must handle it by hand)
 *  4. pending work for the agent (the delivery queue; work a crashed run gave back included)
 *  5. markers in the session's files (file truth repairs journal drift)
 *  6. files changed since they were recorded (review before building on them)
 *  7. a deadline passed
 *  8. an active blocker (no workaround yet)
 *  9. a completion that was never recorded (progress says all done)
 * 10. the flow's own phase rule (always answers)
 * Advisory, in this order: a crashed run, a lease about to expire, a stale or held lock, a
 * target that no longer matched, a bypassed blocker and its workaround, open questions.
 */

import { allowedEvents, phaseNextAction } from "../flows/flow.js";
import type { NextActionInput, NextActionRule, RuleAnswer, RuleEntry } from "../next-action-rule.js";
import { batonCommand } from "../shell.js";
import { spiralPauseRule } from "../spiral/detector.js";
import { finishRollbackRule } from "../time-travel/rollback.js";
import type { NextAction } from "../types.js";
import {
  activeBlockerRule,
  bypassedBlockerRule,
  changedFilesRule,
  crashedRunRule,
  deadlineRule,
  deadWorkRule,
  expiringLeaseRule,
  lockRule,
  markerRule,
  openQuestionsRule,
  sharedFileRule,
  targetMismatchRule,
  unrecordedCompletionRule,
} from "./next-action-rules.js";

export type {
  ChangedFile,
  DeadWork,
  HeldLock,
  NextActionInput,
  NextActionRule,
  OpenWork,
  RuleAnswer,
  RuleEntry,
  TargetMismatch,
} from "../next-action-rule.js";

/**
 * Pending work the phase's own action does not cover. The phase covers a work item when an
 * event that finishes it (`doneBy`) is allowed now: then the phase's action (e.g.
 * run_accept_cleanup for an accept) is how the agent handles it, and recording that event
 * finishes the item. Anything else waiting (a closed tab, a steering message, work a crashed
 * run gave back) is handle_pending_work: poll it, act, ack.
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
    action: {
      action: "handle_pending_work",
      reason: `${uncovered.length} event(s) wait for the agent: ${list}${uncovered.length > 3 ? ", …" : ""}. Lease one, handle it, then ack it with its result.`,
      command: batonCommand("poll", "--session", snap.sessionId, "--json"),
    },
    fact: `${uncovered.length} work item(s) wait for the agent (${list})`,
  };
};

/** The flow's phase rule: the fallback, always answers. */
export const phaseRule: NextActionRule = ({ flow, snap, now }) => {
  const action = phaseNextAction(flow, snap, now ?? new Date(snap.updatedAt));
  return { action, fact: `the phase ${snap.phase} asks for ${action.action}` };
};

/** Rules in priority order: the table in docs/flows.md, row by row. */
export const NEXT_ACTION_RULES: readonly RuleEntry[] = [
  { name: "interrupted_rollback", rule: finishRollbackRule },
  { name: "spiral_pause", rule: spiralPauseRule },
  { name: "dead_lettered_work", rule: deadWorkRule },
  { name: "pending_work", rule: pendingWorkRule },
  { name: "markers", rule: markerRule },
  { name: "changed_files", rule: changedFilesRule },
  { name: "deadline_passed", rule: deadlineRule },
  { name: "active_blocker", rule: activeBlockerRule },
  { name: "unrecorded_completion", rule: unrecordedCompletionRule },
  { name: "phase", rule: phaseRule },
  { name: "crashed_run", rule: crashedRunRule, advisory: true },
  { name: "expiring_lease", rule: expiringLeaseRule, advisory: true },
  { name: "lock", rule: lockRule, advisory: true },
  { name: "target_mismatch", rule: targetMismatchRule, advisory: true },
  { name: "bypassed_blocker", rule: bypassedBlockerRule, advisory: true },
  { name: "open_questions", rule: openQuestionsRule, advisory: true },
  { name: "shared_file", rule: sharedFileRule, advisory: true },
];

export interface Decision {
  nextAction: NextAction;
  /** The other facts' actions, in rule order (the winner's own follow-ups first). */
  suggestions: NextAction[];
  /** Names of the rules that answered, winner first. */
  rules: string[];
}

/**
 * The next action and the suggestions: the first non-advisory answer wins; every other answer
 * is named in its reason and suggested. The phase rule is named only when it was displaced by
 * a rule that says to carry on afterwards (it always answers, so naming it everywhere would
 * only add noise).
 */
export function decideNextAction(input: NextActionInput, rules: readonly RuleEntry[] = NEXT_ACTION_RULES): Decision {
  const answers = rules.flatMap((e) => {
    const a = e.rule(input);
    return a ? [{ entry: e, answer: a }] : [];
  });
  // The phase rule always answers; a custom list without it still gets the phase's action.
  const win = answers.find((a) => !a.entry.advisory) ?? {
    entry: { name: "phase", rule: phaseRule },
    answer: phaseRule(input) as RuleAnswer,
  };
  const others = answers.filter((a) => a !== win && a.entry.name !== "phase");
  const facts = others.map((a) => a.answer.fact);
  const reason = facts.length > 0 ? `${win.answer.action.reason} Also: ${facts.join("; ")}.` : win.answer.action.reason;
  // One suggestion per action and command, never the winner's own action again.
  const suggestions: NextAction[] = [];
  const seen = new Set<string>();
  for (const s of [...(win.answer.suggest ?? []), ...others.map((a) => a.answer.action)]) {
    const key = `${s.action}\u0000${s.command}`;
    if (s.action === win.answer.action.action || seen.has(key)) continue;
    seen.add(key);
    suggestions.push(s);
  }
  return {
    nextAction: { ...win.answer.action, reason },
    suggestions,
    rules: [win.entry.name, ...others.map((a) => a.entry.name)],
  };
}

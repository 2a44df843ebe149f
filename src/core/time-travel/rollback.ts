/**
 * What status says about rollbacks, purely: an interrupted rollback pre-empts every other next
 * action (files may be half restored), and an applied one suggests capturing a lesson.
 */
import type { NextActionRule } from "../next-action-rule.js";
import type { NextAction, RollbackRecord, Snapshot } from "../types.js";

export function lastRollback(snap: Snapshot): RollbackRecord | undefined {
  return snap.facets.rollbacks?.at(-1);
}

/** Next-action rule (priority 1): the last rollback started but never applied. */
export const finishRollbackRule: NextActionRule = ({ snap }) => {
  const rb = lastRollback(snap);
  if (rb?.state !== "started") return undefined;
  const finish = `baton rollback --session ${snap.sessionId} --to ${rb.target}`;
  const undo = `baton rollback --session ${snap.sessionId} --to ${rb.safety}`;
  return {
    action: {
      action: "finish_rollback",
      reason: `Rollback ${rb.id} to checkpoint ${rb.target} started at ${rb.startedAt} but never finished: its ${rb.files} file(s) are each wholly old or wholly restored. Finish it with \`${finish}\`, or undo it with \`${undo}\` (the safety checkpoint taken before it).`,
      command: finish,
    },
    fact: `rollback ${rb.id} to checkpoint ${rb.target} was interrupted`,
  };
};

/** Follow-ups after the last rollback: capture a one-sentence lesson from it. */
export function rollbackSuggestions(snap: Snapshot): NextAction[] {
  const rb = lastRollback(snap);
  if (rb?.state !== "applied" || rb.lesson !== undefined) return [];
  return [
    {
      action: "capture_lesson",
      reason: `Rollback ${rb.id} restored checkpoint ${rb.target}; record in one sentence what to do differently, so the next agent does not repeat it.`,
      command: `baton lessons add "<one sentence>" --session ${snap.sessionId} --from-rollback ${rb.id}`,
    },
  ];
}

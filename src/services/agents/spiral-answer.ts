/**
 * The user's answer to a spiral pause (the dashboard's choices): unpause, roll back to the
 * proposed checkpoint then unpause, or stay paused with a note the agent reads. The answer names
 * the pause it was made on (`detectedAt`); it is checked against the session before anything
 * happens, and checked again inside the write that records the answer, so a pause cleared or
 * renewed meanwhile (the agent, another page, `baton spiral clear`) is `conflict` and the answer
 * is not journaled. The pause is the one status shows (core/lanes.ts `pausedSpiral`): the
 * session's own, else an agent lane's, whose rollback and unpause stay in that lane.
 */

import { pausedSpiral } from "../../core/lanes.js";
import { SPIRAL_CHOICES, SPIRAL_NOTE_MAX, type SpiralChoice } from "../../core/spiral/choices.js";
import type { Snapshot, SpiralState } from "../../core/types.js";
import { BatonError, badInput } from "../../errors.js";
import type { Journal } from "../journal/journal.js";
import type { RollbackResult } from "../time-travel/rollback.js";

export type { SpiralChoice } from "../../core/spiral/choices.js";

export interface SpiralAnswer {
  action: SpiralChoice;
  /** The pause's `detectedAt` as the user saw it. */
  detectedAt: string;
  /** For `rollback_unpause`: the proposed checkpoint as the user saw it. */
  checkpoint?: string;
  /** Required for `note`; for the others, the reason journaled with the unpause. */
  note?: string;
}

export interface SpiralAnswerResult {
  paused: boolean;
  unpaused?: boolean;
  noteSeq?: number;
  rollback?: { target: string; safety?: string; restored: number; removed: number };
}

export interface SpiralAnswerDeps {
  journal: Journal;
  /** Roll back to `to`, within the agent lane `lane` when the pause is a lane's. */
  rollback: (sessionId: string, to: string, lane?: string) => Promise<RollbackResult>;
}

export async function answerSpiralPause(deps: SpiralAnswerDeps, sessionId: string, a: SpiralAnswer): Promise<SpiralAnswerResult> {
  if (!SPIRAL_CHOICES.includes(a.action)) throw badInput(`"action" must be one of ${SPIRAL_CHOICES.join(", ")}`);
  if (typeof a.detectedAt !== "string" || a.detectedAt === "")
    throw badInput('"detectedAt" must be the pause\'s detectedAt as the page showed it');
  const note = a.note?.trim();
  if (note !== undefined && note.length > SPIRAL_NOTE_MAX) throw badInput(`"note" must be text of at most ${SPIRAL_NOTE_MAX} characters`);
  if (a.action === "note" && !note) throw badInput('staying paused needs a "note" for the agent');
  if (a.action === "rollback_unpause" && (typeof a.checkpoint !== "string" || a.checkpoint === ""))
    throw badInput('"checkpoint" must be the proposed checkpoint the page showed');

  let lane: string | undefined;
  const check = (snap: Readonly<Snapshot>, after = "") => {
    const paused = pausedSpiral(snap as Snapshot);
    const sp: SpiralState | undefined = paused?.state;
    lane = paused?.lane?.id;
    if (!sp?.paused) {
      // Unpaused since the page loaded, or a pause never there (a detectedAt made up, or of another session).
      const ever = snap.facets.spiral !== undefined || Object.values(snap.facets.lanes ?? {}).some((l) => l.spiral !== undefined);
      throw new BatonError(
        "conflict",
        `session ${sessionId} is not paused${ever ? " any more (it was unpaused meanwhile)" : ""}${after || "; nothing was changed"}`,
      );
    }
    if (sp.detectedAt !== a.detectedAt)
      throw new BatonError(
        "conflict",
        `session ${sessionId} was paused again since this page loaded${after || "; nothing was changed"}: look at the new pause first`,
      );
    return sp;
  };
  const sp = check((await deps.journal.read(sessionId)).snapshot);

  if (a.action === "note") {
    const r = await deps.journal.appendIf(
      sessionId,
      {
        type: "decision:added",
        actor: "user",
        data: {
          decision: "Stay paused until the user says otherwise",
          reason: note as string,
          context: `spiral pause (${sp.pattern ?? "spiral"})`,
        },
      },
      (s) => check(s),
    );
    return { paused: true, noteSeq: r.event.seq };
  }
  let rollback: SpiralAnswerResult["rollback"];
  if (a.action === "rollback_unpause") {
    if (a.checkpoint !== sp.proposedCheckpoint)
      throw new BatonError(
        "conflict",
        `the proposed rollback point is no longer ${a.checkpoint}; nothing was changed: look at the pause again`,
      );
    const r = await deps.rollback(sessionId, a.checkpoint as string, lane);
    rollback = { target: r.target.id, restored: r.restored, removed: r.removed, ...(r.safety ? { safety: r.safety } : {}) };
  }
  const reason =
    note || (rollback ? `the user rolled back to ${rollback.target} from the dashboard` : "the user unpaused from the dashboard");
  // The files are already restored when the pause changed during the rollback: say so, and how to undo.
  const after = rollback
    ? `; the files were rolled back to ${rollback.target}${rollback.safety ? ` (undo: roll back to ${rollback.safety})` : ""} but the session was not unpaused`
    : "";
  const pausedLane = lane;
  await deps.journal.appendIf(
    sessionId,
    { type: "spiral:cleared", actor: "user", data: { reason, ...(pausedLane !== undefined ? { lane: pausedLane } : {}) } },
    (s) => {
      check(s, after);
      // Another pause came first in the meantime (another lane's): this answer is not for it.
      if (lane !== pausedLane)
        throw new BatonError("conflict", `another pause is shown now${after || "; nothing was changed"}: look at it first`);
    },
  );
  return { paused: false, unpaused: true, ...(rollback ? { rollback } : {}) };
}

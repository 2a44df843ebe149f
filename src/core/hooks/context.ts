/**
 * The text agent hooks put into the agent's context: where the session stands at session start
 * (resume, compaction, clear), and what Baton did when it paused or rolled back. Pure.
 *
 * Sections go in priority order (the header and next action first, lessons last) and each one
 * is added only while it fits `maxChars`: the agents cap injected context (Claude Code:
 * 10,000 characters; a longer text is moved to a file the model is not told to read), so a
 * long session must lose its least important sections, never the next action.
 */

import { clip as clipText } from "../text.js";
import type { Blocker, Decision, NextAction } from "../types.js";

export interface SessionBrief {
  sessionId: string;
  title?: string;
  flow: string;
  phase: string;
  progress: { total: number; completed: number };
  nextAction: NextAction;
  suggestions: NextAction[];
  activeBlockers: Blocker[];
  recentDecisions: Decision[];
  spiral?: { paused: boolean; pattern?: string; summary?: string; proposedCheckpoint?: string };
  /** Files recorded as modified that changed or vanished since (resume verification). */
  review?: { path: string; state: string }[];
  /** This agent session's lane (core/lanes.ts). */
  lane?: string;
  /** The other agents working in this session now, one line each. */
  otherLanes?: string[];
}

const MAX_ITEM = 300;

const clip = (text: string, max = MAX_ITEM): string => clipText(text, max);

export function renderNextAction(a: NextAction): string {
  // The reason in full (as `baton resume` gives it): it names every fact that competes.
  const lines = [`${a.action}: ${clip(a.reason, 2_000)}`];
  if (a.command) lines.push(`Command: \`${a.command}\``);
  for (const c of a.choices ?? []) lines.push(`- ${c.choice}: ${clip(c.description)} (\`${c.command}\`)`);
  return lines.join("\n");
}

/**
 * The pause, for a deny reason or the context: what repeated and the user's ways on. Clearing
 * the pause is the user's decision, so the agent is told to ask, never given a command to run.
 */
/**
 * How each of Baton's refusals of a tool call opens (services/agents/tools.ts; the spiral pause
 * below). The reason is what the agent reads as the call's result, so a transcript's error result
 * opening so was Baton's refusal, not a call that ran (services/agents/unanswered.ts).
 */
export const DENY_OPENINGS = Object.freeze({
  supervision: "Baton's hooks supervise this agent;",
  lanes: "Clearing a spiral pause, or acting on other agents' lanes",
  claim: "Baton: another agent working in this checkout right now wrote",
  pause: "Baton paused session ",
});

/** Whether a tool call's result text is one of Baton's refusals (it may be wrapped by the agent). */
export function isBatonDenial(text: string): boolean {
  return Object.values(DENY_OPENINGS).some((o) => text.includes(o));
}

export function renderSpiralPause(sessionId: string, s: NonNullable<SessionBrief["spiral"]>): string {
  const what = s.summary ? clip(s.summary, 500) : `the agent repeated itself without progress (${s.pattern ?? "spiral"})`;
  const rollback = s.proposedCheckpoint
    ? `type "undo that" to roll the files back to checkpoint ${s.proposedCheckpoint}, from before the loop began, so you can try another approach; or `
    : "";
  const none = s.proposedCheckpoint ? "" : " No checkpoint exists from before the loop began, so there is no point to roll back to.";
  return `${DENY_OPENINGS.pause}${sessionId}: ${what} Tool calls stay blocked until the user decides.${none} Stop and ask the user how to go on; do not try to clear the pause yourself. The user can ${rollback}type "unpause" (or run \`baton resume ${sessionId} --unpause\` in their own terminal) to let you continue.`;
}

/**
 * The session-start context: header, next action, spiral pause, blockers, decisions, files to
 * review, then `extra` blocks (lessons) while they fit. Never longer than `maxChars`.
 */
export function renderSessionContext(brief: SessionBrief, opts: { maxChars: number; source?: string; extra?: string[] }): string {
  const title = brief.title ? ` "${clip(brief.title, 120)}"` : "";
  const progress = brief.progress.total > 0 ? `, progress ${brief.progress.completed}/${brief.progress.total}` : "";
  const sections: string[] = [
    `# Baton: where this work stands\nSession ${brief.sessionId}${title} (flow ${brief.flow}, phase ${brief.phase}${progress}).${
      opts.source ? ` Agent session ${opts.source}.` : ""
    } Baton checkpoints files before each edit and shell command; the user can say "undo that" or "/rollback N" to restore them.`,
    `## Next action\n${renderNextAction(brief.nextAction)}`,
  ];
  if (brief.spiral?.paused) sections.push(`## Paused\n${renderSpiralPause(brief.sessionId, brief.spiral)}`);
  if (brief.otherLanes && brief.otherLanes.length > 0)
    sections.push(
      `## Other agents working here now\nYou are lane ${brief.lane ?? "?"}. These agents share this checkout and this task; "undo that" takes back only your own steps, and Baton tells you before you write a file one of them is writing:\n${brief.otherLanes.map((l) => `- ${clip(l)}`).join("\n")}`,
    );
  if (brief.activeBlockers.length > 0)
    sections.push(
      `## Active blockers\n${brief.activeBlockers
        .map((b) => `- ${b.id}: ${clip(b.text)}${b.workaround ? ` (workaround: ${clip(b.workaround)})` : ""}`)
        .join("\n")}`,
    );
  if (brief.recentDecisions.length > 0)
    sections.push(
      `## Recent decisions\n${brief.recentDecisions
        .map((d) => `- ${clip(d.decision)}${d.reason ? ` (because ${clip(d.reason)})` : ""}`)
        .join("\n")}`,
    );
  if (brief.review && brief.review.length > 0)
    sections.push(
      `## Files changed since they were recorded (re-read before editing)\n${brief.review.map((f) => `- ${f.path} (${f.state})`).join("\n")}`,
    );
  for (const s of brief.suggestions) sections.push(`## Suggested\n${renderNextAction(s)}`);
  for (const e of opts.extra ?? []) if (e.trim()) sections.push(e.trim());
  return fitSections(sections, opts.maxChars);
}

/** Join sections with blank lines while they fit; a first section that does not fit is cut. */
export function fitSections(sections: readonly string[], maxChars: number): string {
  let out = "";
  for (const s of sections) {
    const next = out ? `${out}\n\n${s}` : s;
    if (next.length <= maxChars) out = next;
    else if (!out) out = `${s.slice(0, Math.max(0, maxChars - 1))}…`;
  }
  return out;
}

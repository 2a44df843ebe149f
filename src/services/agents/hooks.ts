/**
 * What Baton does on each agent hook, whatever the agent (`baton.agents.handle`): the edges
 * (the `baton hook` process, the server's hook route) translate the agent's JSON into a
 * neutral `HookEvent` (core/hooks/) and render the `HookResponse` this returns.
 *
 * - session start: find or start the session for the agent's session, start (or keep) a run,
 *   and give the agent where things stand: status, next action, blockers, decisions, files to
 *   re-read, lessons.
 * - prompt: "undo that" / "/rollback 3" rolls back and says what was restored; "unpause" lifts
 *   a spiral pause; otherwise the lessons relevant to the prompt.
 * - tools (tools.ts): a checkpoint before a write or shell tool (or a deny while a spiral
 *   pauses the session); after any tool a ledger node, a turn, the files-modified facet.
 * - before compaction: STATE.md; after it: a journal note; turn or session end: the run ends.
 *
 * Every write carries an idempotency key (core/hooks/keys.ts), so the same hook handled twice
 * (the server's answer was lost and the hook process retried) acts once. Steps meant to precede
 * the agent's next action (the checkpoint before a tool, a rollback from a prompt) carry the
 * hook's deadline and are cancelled, with a message for the user, rather than land late.
 *
 * Fails open: Baton's own failures are logged to `.baton/logs/hooks.log` and answered with an
 * empty response (the agent goes on). The only refusal is deliberate (a spiral pause).
 */
import type { Baton } from "../../api.js";
import { adapterFor } from "../../core/hooks/adapters.js";
import { isUnpausePrompt } from "../../core/hooks/baton-command.js";
import { renderSessionContext, renderSpiralPause, type SessionBrief } from "../../core/hooks/context.js";
import { requestStepId } from "../../core/hooks/keys.js";
import { userWords } from "../../core/hooks/prompt-words.js";
import { parseRollbackIntent, type RollbackIntent } from "../../core/hooks/rollback-intent.js";
import type { AgentHookOptions, HookEvent, HookResponse } from "../../core/hooks/types.js";
import { ago, describeLane, familyOf, keptLane, laneId, pausedSpiral, sameFamily } from "../../core/lanes.js";
import type { Snapshot } from "../../core/types.js";
import { isBatonError } from "../../errors.js";
import { removeCommand, type TrackedEntry, trackedBatonFiles, untrackCommand } from "../../platform/baton-tracked.js";
import { httpHooksOn } from "../../platform/claude-http-hooks.js";
import { appendHookFailure } from "../../platform/hook-log.js";
import { endRuns, ensureRun, heartbeatRuns, laneOf, pauseView, sessionFor } from "./sessions.js";
import { afterTool, beforeTool, hookLessons, type ToolHookContext } from "./tools.js";
import { reportUnanswered } from "./unanswered.js";

const PROMPT_LESSONS_CHARS = 2_000;
const ROLLBACK_VERBS = /undo|revert|roll ?back|go back|restore/i;

type Ev<K extends HookEvent["kind"]> = Extract<HookEvent, { kind: K }>;

interface Ctx extends ToolHookContext {
  contextLimit: number;
  agentPid: number;
  requestId: string | undefined;
}

/** Answer one hook. Never throws: Baton's own failures are logged and answered with `{}`. */
export async function handleAgentEvent(
  b: Baton,
  ev: HookEvent,
  opts: AgentHookOptions = {},
  perCallDurability: "full" | "relaxed" = "relaxed",
): Promise<HookResponse> {
  const adapter = adapterFor(ev.agent);
  const log = (err: unknown) => appendHookFailure(b.workspace.dir, { agent: ev.agent, event: ev.native, error: err });
  const o: Ctx = {
    label: adapter?.label ?? ev.agent,
    contextLimit: adapter?.contextLimit ?? 10_000,
    agentPid: opts.agentPid ?? process.ppid,
    requestId: opts.requestId,
    deadline: opts.deadline,
    perCallDurability,
    log,
  };
  try {
    ev = await rootedSubagent(b, ev);
    switch (ev.kind) {
      case "session_start":
        return await sessionStart(b, ev, o);
      case "prompt": {
        // Calls of the turn before this prompt that ran unheard, told first (the prompt may roll back).
        const lost = ev.transcriptPath === undefined ? {} : await unanswered(b, ev, o);
        return merged(lost, await prompt(b, ev, o));
      }
      case "before_tool":
        return await beforeTool(b, ev, o);
      case "after_tool":
        return await afterTool(b, ev, o);
      case "pre_compact":
        return await preCompact(b, ev, o);
      case "post_compact":
        return await postCompact(b, ev, o);
      case "stop": {
        if (ev.sessionEnd || ev.backgroundWork !== true) {
          await endRuns(b, ev, o.requestId);
          return ev.transcriptPath === undefined ? {} : await unanswered(b, ev, o);
        }
        // A turn that left a subagent at work in the background (still writing) has not ended its
        // run: the family stays at work, its claims live, until a turn ends with none. Its calls
        // are reported, if unheard, once it is done (its transcript is still being written).
        await heartbeatRuns(b, ev);
        return {};
      }
      default:
        return {};
    }
  } catch (err) {
    log(err);
    return {};
  }
}

/**
 * A subagent's event in its root session's family. Copilot CLI names a subagent's immediate
 * parent (`parentAgentId`): a subagent's own subagent names a subagent, whose lane the sessions
 * keep as `copilot:<root>/<parent>`; its calls go to `copilot:<root>/<its id>`.
 */
async function rootedSubagent(b: Baton, ev: HookEvent): Promise<HookEvent> {
  if (ev.agent !== "copilot" || ev.subagentId === undefined || ev.agentSessionId === undefined) return ev;
  const parent = laneId(ev.agent, ev.agentSessionId);
  for (const s of await b.sessions.list()) {
    const kept = keptLane((await b.sessions.snapshot(s.id)).facets.lanes ?? {}, parent);
    if (kept !== parent) return { ...ev, agentSessionId: familyOf(kept).slice(ev.agent.length + 1) };
  }
  return ev;
}

/** The calls of the last turn whose HTTP hook got no answer (unanswered.ts); a failure there is logged, never the hook's. */
async function unanswered(b: Baton, ev: HookEvent, o: Ctx): Promise<HookResponse> {
  try {
    if (ev.agent !== "claude" || !httpHooksOn(b.root)) return {};
    return await reportUnanswered(b, await sessionFor(b, ev, o.label, false), ev);
  } catch (err) {
    o.log(err);
    return {};
  }
}

/** Two answers in one: both contexts and both messages. */
function merged(a: HookResponse, b: HookResponse): HookResponse {
  const join = (x?: string, y?: string) => (x && y ? `${x}\n\n${y}` : (x ?? y));
  const context = join(a.context, b.context);
  const userMessage = join(a.userMessage, b.userMessage);
  return { ...a, ...(context !== undefined ? { context } : {}), ...(userMessage !== undefined ? { userMessage } : {}) };
}

// Session start

async function sessionStart(b: Baton, ev: Ev<"session_start">, o: Ctx): Promise<HookResponse> {
  const tracked = trackedBatonFiles(b.root);
  // Where the journal may be a stranger's, the agent takes none of its sessions as its own.
  const sid = await sessionFor(b, ev, o.label, true, tracked.length === 0);
  await b.runs.detectCrashed({ sessionId: sid });
  await ensureRun(b, sid, await b.sessions.snapshot(sid), ev, o);
  const snap = await b.sessions.snapshot(sid);
  const lane = laneOf(ev);
  if (tracked.length > 0) return trackedStore(b.root, tracked);

  const resumed = ev.source === "resume" || ev.source === "compact";
  const report = resumed ? await b.sessions.resume(sid) : undefined;
  const s = report ?? (await b.sessions.status({ sessionId: sid })).sessions[0];
  if (!s) return {};
  const brief: SessionBrief = {
    sessionId: s.sessionId,
    flow: s.flow,
    phase: s.phase,
    progress: s.progress,
    nextAction: s.nextAction,
    suggestions: s.suggestions,
    activeBlockers: s.activeBlockers,
    recentDecisions: s.recentDecisions,
    ...(s.title !== undefined ? { title: s.title } : {}),
    lane,
  };
  const paused = pausedSpiral(snap, lane);
  if (paused) brief.spiral = pauseView(snap, lane);
  const now = b.now().getTime();
  const others = (s.lanes ?? []).filter((l) => !sameFamily(l.lane, lane));
  if (others.length > 0) {
    brief.otherLanes = others.slice(0, 8).map((l) => {
      const { count, files } = l.claims;
      return `${describeLane(l)}: ${l.status === "working" ? "working now" : "between turns"}, last active ${ago(l.lastAt, now)}${count > 0 ? `; writing ${files.slice(0, 5).join(", ")}${count > 5 ? ` and ${count - 5} more` : ""}` : ""}`;
    });
  }
  if (report) brief.review = report.verification.files.filter((f) => f.review).map((f) => ({ path: f.path, state: f.state }));
  const base = renderSessionContext(brief, { maxChars: o.contextLimit, source: ev.source });
  const room = o.contextLimit - base.length - 2;
  const extra: string[] = [];
  if (room > 200) {
    const query = [s.title, s.nextAction.reason, ...s.activeBlockers.map((x) => x.text)].filter(Boolean).join(" ");
    const markdown = await hookLessons(b, ev, { sessionId: sid, prompt: query }, { k: 5, maxChars: Math.min(room, PROMPT_LESSONS_CHARS) });
    if (markdown) extra.push(markdown);
  }
  return {
    context: renderSessionContext(brief, { maxChars: o.contextLimit, source: ev.source, extra }),
    userMessage: `Baton: session ${sid} (${s.phase}); next: ${s.nextAction.action}${paused ? " (paused by the spiral detector)" : ""}${others.length > 0 ? `; ${others.length} other agent(s) working here` : ""}`,
  };
}

/**
 * A session start where git tracks Baton's own files: a journal that came with the repository is
 * a stranger's text, not this session's state, so none of it reaches the model; and the user's
 * commits would carry what Baton records. Recording goes on (an agent cannot switch supervision
 * off with a `git add -f`); the user is told how to untrack them.
 */
function trackedStore(root: string, tracked: TrackedEntry[]): HookResponse {
  // The names are the repository's: only plain ones are shown, so none can speak to the model.
  const plain = (p: string) => /^[\w./-]{1,120}$/.test(p);
  const named = tracked
    .map((e) => e.path)
    .filter(plain)
    .slice(0, 3);
  const rest = tracked.length - named.length;
  const list = `${named.join(", ")}${rest > 0 ? `${named.length > 0 ? ", and " : ""}${rest} more` : ""}`;
  const plainNames = tracked.every((e) => plain(e.path));
  const fix = plainNames
    ? `If you added them, untrack them: \`${untrackCommand(root, tracked)}\`. If they came with the repository, remove them instead (git's history keeps them), or Baton takes them as this checkout's own once untracked: \`${removeCommand(root, tracked)}\`. \`baton doctor\` says more.`
    : "`baton doctor` gives the commands that untrack them, or remove them if they came with the repository.";
  const said = `git tracks Baton's own files in ${root}/.baton/ (${list}): they came with the repository, or were added with \`git add -f\`. Baton goes on recording, but shows nothing of that journal here, and commits would carry what it records (checkpointed file contents among them). ${fix}`;
  return { userMessage: `Baton: ${said}`, context: `Baton: ${said} Tell the user.` };
}

// Prompt

async function prompt(b: Baton, ev: Ev<"prompt">, o: Ctx): Promise<HookResponse> {
  const sid = await sessionFor(b, ev, o.label, true);
  const snap = await b.sessions.snapshot(sid);
  await ensureRun(b, sid, snap, ev, o);
  // The user's words without the context blocks the agent wrapped them in (Gemini CLI puts the
  // SessionStart hooks' text, Baton's own, in front of every prompt).
  const words = userWords(ev.prompt);
  // Every rollback request names one of these verbs (core/hooks/rollback-intent.ts); most prompts do
  // not, and the full grammar's regular expressions cost ~2 ms to compile on first use.
  const intent = ROLLBACK_VERBS.test(words) ? parseRollbackIntent(words) : undefined;
  if (intent) return rollbackFromPrompt(b, sid, snap, ev, intent, o);
  const lane = laneOf(ev);
  const paused = pausedSpiral(snap, lane);
  const unpauseId = o.requestId !== undefined ? requestStepId("unpause", ev, o.requestId) : undefined;
  if (isUnpausePrompt(words) && (paused || unpauseId !== undefined)) {
    const r = await b.turns.unpause(sid, {
      reason: "the user typed unpause",
      actor: "user",
      lane,
      ...(unpauseId ? { id: unpauseId } : {}),
    });
    if (r.unpaused) {
      return {
        context: "The user cleared Baton's spiral pause. Continue, but do not repeat the approach that looped: take a different one.",
        userMessage: `Baton: session ${sid} unpaused`,
      };
    }
  }
  const parts: string[] = [];
  if (paused) parts.push(renderSpiralPause(sid, pauseView(snap, lane)));
  const markdown = await hookLessons(b, ev, { sessionId: sid, prompt: words }, { k: 5, maxChars: PROMPT_LESSONS_CHARS });
  if (markdown) parts.push(markdown);
  return parts.length > 0 ? { context: parts.join("\n\n") } : {};
}

/** Failures a hook meets that its own process, tried next, may not: never answered from here. */
const RETRIED: ReadonlySet<string> = new Set([
  "storage_busy",
  "storage_unavailable",
  "shutting_down",
  "config_changed",
  "wrong_store",
  "wrong_settings",
  "wrong_workspace",
]);

/** Rollback answers Baton gives the user rather than failures of Baton itself (those are said too, and logged). */
const ROLLBACK_ANSWERS = new Set(["checkpoint_not_found", "checkpoint_pruned", "not_found", "bad_input", "unsafe_path", "conflict"]);

async function rollbackFromPrompt(
  b: Baton,
  sid: string,
  snap: Snapshot,
  ev: Ev<"prompt">,
  intent: RollbackIntent,
  o: Ctx,
): Promise<HookResponse> {
  let r: Awaited<ReturnType<Baton["checkpoints"]["rollback"]>>;
  const lane = laneOf(ev);
  try {
    r = await b.checkpoints.rollback(sid, {
      ...intent,
      // The user typed it in this agent session: its own steps, never another live agent's work.
      lane,
      actor: "user",
      ...(o.requestId !== undefined ? { key: `${ev.agent}:${o.requestId}` } : {}),
      ...(o.deadline !== undefined ? { deadline: o.deadline } : {}),
    });
  } catch (err) {
    if (isBatonError(err, "deadline_exceeded")) {
      o.log(err);
      return {
        context:
          "The user asked to roll back files. Baton could not do it within the hook's time limit and changed nothing. Tell the user; do not try to undo changes by hand unless they ask.",
        userMessage: "Baton cancelled the rollback: it could not be done within the hook's time limit, and nothing was changed. Ask again.",
      };
    }
    // Not Baton's, or one another try may not meet (a busy or unreachable store, a server
    // stopping or of other settings): thrown, so the hook tries again in its own process.
    if (!isBatonError(err) || RETRIED.has(err.code)) throw err;
    // A failure of Baton's own (a damaged blob, the disk) is logged for doctor, and still said:
    // the user asked for this rollback and must not think it happened.
    if (!ROLLBACK_ANSWERS.has(err.code)) o.log(err);
    return {
      context: `The user asked to roll back files. Baton could not: ${err.message}. Tell the user; do not try to undo changes by hand unless they ask.`,
      userMessage: `Baton could not roll back: ${err.message}`,
    };
  }
  if (pausedSpiral(snap, lane)) {
    const id = o.requestId !== undefined ? { id: requestStepId("rollback-unpause", ev, o.requestId) } : {};
    await b.turns.unpause(sid, { reason: "the user asked to roll back", actor: "user", lane, ...id });
  }
  const restored = r.changes.filter((c) => c.action === "restore" || c.action === "create").map((c) => c.path);
  const removed = r.changes.filter((c) => c.action === "remove").map((c) => c.path);
  const list = (xs: string[]) =>
    xs.length === 0 ? "none" : xs.slice(0, 20).join(", ") + (xs.length > 20 ? `, and ${xs.length - 20} more` : "");
  const what = "to" in intent ? `to checkpoint ${intent.to}` : `${intent.steps} step${intent.steps === 1 ? "" : "s"} back`;
  const target = `checkpoint ${r.target.id}${r.target.toolName ? ` (taken before ${r.target.toolName})` : ""}`;
  const undo = r.safety ? `baton rollback --to ${r.safety}` : "";
  const lines = [
    `The user asked to roll back (${what}). Baton has already done it: the files are as they were at ${target}.`,
    `Restored: ${list(restored)}. Removed (created after the checkpoint): ${list(removed)}. Unchanged: ${r.unchanged}.`,
    "Do not undo anything yourself. Files on disk changed: re-read them before editing again, and take a different approach than the one rolled back.",
  ];
  if (r.warnings.length > 0) lines.push(`Warnings: ${r.warnings.join("; ")}`);
  if (undo) lines.push(`If the user wants this rollback undone: \`${undo}\`.`);
  if (r.rollbackId)
    lines.push(`If the user says what went wrong, record it: \`baton lessons add "<one sentence>" --from-rollback ${r.rollbackId}\`.`);
  return {
    context: lines.join("\n"),
    userMessage: `Baton rolled back to ${r.target.id}: ${restored.length} file(s) restored, ${removed.length} removed${undo ? `. Undo: ${undo}` : ""}`,
  };
}

// Compaction

/**
 * Before a compaction: STATE.md, so the compacted agent can re-read where things stand. The
 * journal notes a compaction only once it happened (PostCompact), or here when the agent sends
 * nothing afterwards and fires this hook only for a compaction that follows (`announced`). A
 * hook that fires whether or not a compaction follows (`ifChanged`) only keeps STATE.md current.
 */
async function preCompact(b: Baton, ev: Ev<"pre_compact">, o: Ctx): Promise<HookResponse> {
  const sid = await sessionFor(b, ev, o.label, false);
  if (!sid) return {};
  if (ev.ifChanged) {
    await b.sessions.refreshStateMarkdown(sid);
    return {};
  }
  await b.sessions.writeStateMarkdown(sid);
  if (ev.announced) await noteCompaction(b, sid, ev, o, "; STATE.md was written first");
  return {};
}

async function postCompact(b: Baton, ev: Ev<"post_compact">, o: Ctx): Promise<HookResponse> {
  const sid = await sessionFor(b, ev, o.label, false);
  if (sid) await noteCompaction(b, sid, ev, o, "");
  return {};
}

async function noteCompaction(b: Baton, sid: string, ev: Ev<"pre_compact" | "post_compact">, o: Ctx, tail: string): Promise<void> {
  await b.events.append(sid, {
    ...(o.requestId !== undefined ? { id: requestStepId("compacted", ev, o.requestId) } : {}),
    type: "note:added",
    actor: "system",
    data: { text: `${o.label} compacted its context (${ev.trigger ?? "auto"})${tail}.` },
  });
}

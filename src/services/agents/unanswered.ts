/**
 * Tool calls Claude Code ran without Baton hearing of them. With `baton hooks install claude
 * --http` the per-call hooks are HTTP hooks to the workspace's server, and Claude Code takes a
 * refused connection, a timeout or an HTTP error as a non-blocking error: the tool runs, without
 * a checkpoint. Nothing can answer in the server's place, so the loss is reported instead, at
 * the session's next command hook: the turn's end (Stop) and the next prompt (UserPromptSubmit,
 * for a turn that ended without Stop).
 *
 * The calls are read from the session's transcript (`transcript_path`): the write and shell
 * calls (the ones checkpointed) of the last turn that made any, from the transcript's last
 * TAIL_BYTES, with those of the subagents that worked since that turn's prompt (their own
 * transcripts, beside the session's), and looked up in the lane's session or, for a turn that began in another (completed
 * since), in any session changed within a day. A call with neither its checkpoint (its
 * before-hook answered) nor its turn (its after-hook answered) ran without a checkpoint, unless
 * its result is Baton's refusal; a call with its checkpoint and a result that is not an error but
 * no turn ran without its result recorded (PostToolUse fires for every call that ran). Each
 * such call is reported once: a journal note keyed by the call, a line in `.baton/logs/hooks.log`
 * (code `hook_unanswered`: the doctor's `hook_failures`), and a message to the user (and, on a
 * prompt, to the model).
 *
 * Only where the local settings hold Baton's HTTP hooks: command hooks run in a process of their
 * own, which answers whether or not a server runs.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readSync } from "node:fs";
import { join } from "node:path";
import type { Baton } from "../../api.js";
import { isBatonDenial } from "../../core/hooks/context.js";
import { callCheckpoint, turnId } from "../../core/hooks/keys.js";
import type { HookEvent, HookResponse, ToolCall } from "../../core/hooks/types.js";
import { familyOf, laneId } from "../../core/lanes.js";
import { httpHooksTargets, staleHooksAdvice } from "../../platform/claude-http-hooks.js";
import { appendHookFailure } from "../../platform/hook-log.js";
import { readServerKey } from "../../platform/server-key.js";

/** How much of the transcript's end is read: a turn's calls are at its end. */
const TAIL_BYTES = 1024 * 1024;
/** The tools Claude Code's PreToolUse hook is matched to: the ones a checkpoint precedes. */
const CHECKPOINTED = new Set(["Write", "Edit", "MultiEdit", "NotebookEdit", "Bash"]);

export interface TranscriptCall {
  id: string;
  name: string;
  /** Its result is a refusal by Baton (a spiral pause, a supervision guard): it did not run. */
  refused: boolean;
  /** It has a result that is not an error: it ran, and Claude Code fired its PostToolUse. */
  succeeded: boolean;
}

function tail(path: string): string {
  // The path comes in the agent's payload: a FIFO there must not hang the hook.
  const fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new Error(`${path} is not a regular file`);
    const size = st.size;
    const start = Math.max(0, size - TAIL_BYTES);
    const buf = Buffer.alloc(size - start);
    let read = 0;
    while (read < buf.length) {
      const n = readSync(fd, buf, read, buf.length - read, start + read);
      if (n === 0) break;
      read += n;
    }
    const text = buf.subarray(0, read).toString("utf8");
    // A cut first line is not a line.
    return start > 0 ? text.slice(text.indexOf("\n") + 1) : text;
  } finally {
    closeSync(fd);
  }
}

type Block = { type?: unknown; id?: unknown; name?: unknown; tool_use_id?: unknown; is_error?: unknown; content?: unknown };

/**
 * The write and shell calls of the transcript's last turn that made any (a turn: what follows a
 * prompt the user typed). Pure over the text; lines it cannot read are skipped.
 */
export function turnCalls(text: string): TranscriptCall[] {
  return scanTurn(text).calls;
}

/** turnCalls, and when that turn's prompt was written (its line's `timestamp`, ms), if it says. */
export function scanTurn(text: string): { calls: TranscriptCall[]; since?: number } {
  let current: TranscriptCall[] = [];
  let previous: TranscriptCall[] = [];
  let currentAt: number | undefined;
  let previousAt: number | undefined;
  const results = new Map<string, { error: boolean; text: string }>();
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    let v: { type?: unknown; isMeta?: unknown; isCompactSummary?: unknown; timestamp?: unknown; message?: { content?: unknown } };
    try {
      v = JSON.parse(line);
    } catch {
      continue;
    }
    const content = v.message?.content;
    const blocks: Block[] = Array.isArray(content) ? (content as Block[]).filter((b) => b !== null && typeof b === "object") : [];
    if (v.type === "user") {
      const resultBlocks = blocks.filter((b) => b.type === "tool_result");
      for (const b of resultBlocks) {
        if (typeof b.tool_use_id !== "string") continue;
        results.set(b.tool_use_id, { error: b.is_error === true, text: resultText(b.content) });
      }
      const typed = typeof content === "string" || blocks.some((b) => b.type === "text");
      if (typed && resultBlocks.length === 0 && v.isMeta !== true && v.isCompactSummary !== true) {
        if (current.length > 0) [previous, previousAt] = [current, currentAt];
        current = [];
        const at = typeof v.timestamp === "string" ? Date.parse(v.timestamp) : Number.NaN;
        currentAt = Number.isNaN(at) ? undefined : at;
      }
    } else if (v.type === "assistant") {
      for (const b of blocks) {
        if (b.type === "tool_use" && typeof b.id === "string" && typeof b.name === "string" && CHECKPOINTED.has(b.name))
          current.push({ id: b.id, name: b.name, refused: false, succeeded: false });
      }
    }
  }
  // A turn whose own calls were all a subagent's (Task) has none here: its subagents still count.
  const [calls, since] = current.length > 0 ? [current, currentAt] : [previous, previousAt ?? currentAt];
  return {
    calls: calls.map((c) => {
      const r = results.get(c.id);
      return { ...c, refused: r?.error === true && isBatonDenial(r.text), succeeded: r !== undefined && !r.error };
    }),
    ...(since !== undefined ? { since } : {}),
  };
}

/** Subagent transcripts read at most, the newest first. */
const MAX_SUBAGENTS = 32;

/**
 * The write and shell calls of the subagents (Task) that worked since `since`: Claude Code keeps
 * each one's transcript beside the session's, `<session>/subagents/[…/]agent-<id>.jsonl`, and
 * runs their hooks with the session's id, so their calls are checked as the session's are.
 */
export function subagentCalls(transcriptPath: string, since: number): TranscriptCall[] {
  const dir = join(transcriptPath.replace(/\.jsonl$/, ""), "subagents");
  let names: string[];
  try {
    names = readdirSync(dir, { recursive: true, encoding: "utf8" });
  } catch {
    return []; // no subagents
  }
  const files: { file: string; at: number }[] = [];
  for (const name of names) {
    if (!/(?:^|\/)agent-[^/]+\.jsonl$/.test(name)) continue;
    const file = join(dir, name);
    const st = lstatSync(file, { throwIfNoEntry: false });
    if (st?.isFile() && st.mtimeMs >= since) files.push({ file, at: st.mtimeMs });
  }
  return files
    .sort((a, b) => b.at - a.at)
    .slice(0, MAX_SUBAGENTS)
    .flatMap(({ file }) => {
      try {
        return turnCalls(tail(file));
      } catch {
        return [];
      }
    });
}

/** Sessions changed this recently are searched for a turn's calls the current session lacks. */
const RECENT_MS = 24 * 60 * 60 * 1000;

/**
 * What Baton heard of the call in `sid`: its recorded turn (its after-hook was answered, or the
 * call was reported already), else its checkpoint (its before-hook was), else nothing.
 */
async function heardIn(b: Baton, sid: string, ev: HookEvent, c: TranscriptCall): Promise<"turn" | "checkpoint" | undefined> {
  const turn = turnId(ev, callTool(c)) as string;
  for (const id of [turn, `${turn}.unanswered`, `${turn}.unrecorded`]) if (await b.events.find(sid, id)) return "turn";
  // What an earlier build recorded, before the agent session was part of the ids: taken only
  // when it is this agent session's (another's call may have had the same id).
  const { agentSessionId: _, ...unscoped } = ev;
  const family = laneId(ev.agent, ev.agentSessionId);
  const ours = (lane: unknown) => typeof lane === "string" && familyOf(lane) === family;
  const earlier = turnId(unscoped, callTool(c)) as string;
  if (earlier !== turn)
    for (const id of [earlier, `${earlier}.unanswered`, `${earlier}.unrecorded`])
      if (ours((await b.events.find(sid, id))?.data.lane)) return "turn";
  for (const [id, check] of [
    [callCheckpoint(sid, ev, callTool(c)).id, false],
    [callCheckpoint(sid, unscoped, callTool(c)).id, true],
  ] as const) {
    try {
      const cp = await b.checkpoints.get(id);
      if (!check || ours(cp.lane)) return "checkpoint";
    } catch {
      // no such checkpoint: its before-hook was not answered
    }
  }
  return undefined;
}

function callTool(c: TranscriptCall): ToolCall {
  return { name: c.name, kind: c.name === "Bash" ? "shell" : "write", files: [], input: {}, callId: c.id };
}

/** A tool result's text: a string, or the text blocks of a list. */
function resultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((b) =>
      b !== null && typeof b === "object" && typeof (b as { text?: unknown }).text === "string" ? (b as { text: string }).text : "",
    )
    .join("\n");
}

/**
 * Report the calls of the session's last turn that ran without Baton hearing of them (see the
 * top of this file). `{}` when there are none, or nothing to look at.
 */
export async function reportUnanswered(b: Baton, sid: string | undefined, ev: HookEvent): Promise<HookResponse> {
  if (sid === undefined || ev.agent !== "claude" || ev.transcriptPath === undefined) return {};
  const targets = httpHooksTargets(b.root);
  if (targets.length === 0) return {};
  let calls: TranscriptCall[];
  try {
    const turn = scanTurn(tail(ev.transcriptPath));
    // A turn older than the sessions searched below (a conversation resumed days later) had its
    // own Stop to report it: its calls were recorded where this lookup no longer goes.
    if (turn.since !== undefined && turn.since < Date.now() - RECENT_MS) return {};
    // A subagent's calls are in its own transcript: those of the subagents that worked this turn.
    calls = [...turn.calls, ...(turn.since !== undefined ? subagentCalls(ev.transcriptPath, turn.since) : [])];
  } catch {
    return {}; // no transcript (yet): nothing to compare
  }
  // The turn may have begun in another session (one that completed since, or that another
  // agent's lane moved to): a call not heard of in this one is looked for there.
  let others: string[] | undefined;
  const recent = async () => {
    const since = Date.now() - RECENT_MS;
    others ??= (await b.sessions.list({ includeCompleted: true }))
      .filter((s) => s.id !== sid && Date.parse(s.updatedAt) >= since)
      .map((s) => s.id);
    return others;
  };
  const missed: TranscriptCall[] = [];
  const unrecorded: TranscriptCall[] = [];
  for (const c of calls) {
    if (c.refused) continue;
    let heard = await heardIn(b, sid, ev, c);
    // Checkpointed and not run (rejected, denied, interrupted): nothing more can be reported of it.
    if (heard === "checkpoint" && !c.succeeded) continue;
    if (heard !== "turn")
      for (const other of await recent()) {
        const there = await heardIn(b, other, ev, c);
        if (there === "turn") {
          heard = there;
          break;
        }
        heard ??= there;
      }
    if (heard === undefined) missed.push(c);
    // A call that ran fired PostToolUse; a checkpoint without its turn means that hook went unanswered.
    else if (heard === "checkpoint" && c.succeeded) unrecorded.push(c);
  }
  if (missed.length === 0 && unrecorded.length === 0) return {};
  const why0 = "the workspace's server was not running or refused it";
  for (const c of missed) {
    await b.events.append(sid, {
      id: `${turnId(ev, callTool(c)) as string}.unanswered`,
      type: "note:added",
      actor: "system",
      data: { text: `Claude Code ran ${c.name} (${c.id}) without a checkpoint: its HTTP hook got no answer (${why0}).` },
    });
    appendHookFailure(b.workspace.dir, {
      agent: "claude",
      event: "PreToolUse",
      error: { code: "hook_unanswered", message: `${c.name} (${c.id}) ran without a checkpoint: its HTTP hook got no answer (${why0})` },
    });
  }
  for (const c of unrecorded) {
    await b.events.append(sid, {
      id: `${turnId(ev, callTool(c)) as string}.unrecorded`,
      type: "note:added",
      actor: "system",
      data: {
        text: `Claude Code ran ${c.name} (${c.id}) and Baton did not record its result: its PostToolUse HTTP hook got no answer (the server stopped, timed out or refused it).`,
      },
    });
    appendHookFailure(b.workspace.dir, {
      agent: "claude",
      event: "PostToolUse",
      error: {
        code: "hook_unanswered",
        message: `${c.name} (${c.id}) ran without its result recorded: its PostToolUse HTTP hook got no answer (the server stopped, timed out or refused it)`,
      },
    });
  }
  // Hooks naming another port than the server's reach nobody (or whoever holds that port now);
  // hooks sending an older token are refused.
  const stale = staleHooksAdvice(targets, readServerKey(b.workspace.dir));
  const why =
    stale ??
    (missed.length > 0
      ? "the workspace's server was not running (or refused the HTTP hook)"
      : "the workspace's server stopped, timed out or refused the HTTP hook");
  const count = (cs: TranscriptCall[]) =>
    `${cs.length} tool call${cs.length === 1 ? "" : "s"} (${[...new Set(cs.map((c) => c.name))].join(", ")})`;
  const its = unrecorded.length === 1 ? "its" : "their";
  const parts = [
    ...(missed.length > 0 ? [`${count(missed)} ran without a checkpoint`] : []),
    ...(unrecorded.length > 0
      ? [
          `${count(unrecorded)} ran without ${its} result recorded (the ledger and the spiral detector miss ${unrecorded.length === 1 ? "it" : "them"})`,
        ]
      : []),
  ];
  const what = `${parts.join("; ")}: ${why}`;
  const undo = missed.length > 0 ? " Those steps cannot be rolled back one by one" : "";
  const restart = stale ? "" : `${undo ? "; the" : " The"} next prompt starts the server again (or run \`baton serve\`)`;
  return {
    userMessage: `Baton: ${what}.${undo}${restart}${undo || restart ? "." : ""}`,
    ...(ev.kind === "prompt" && missed.length > 0
      ? { context: `Baton: ${what}. Baton has no checkpoint before those changes: mention it to the user before relying on a rollback.` }
      : {}),
  };
}

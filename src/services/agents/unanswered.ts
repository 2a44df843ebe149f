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
 * TAIL_BYTES. A call is accounted for when its checkpoint exists (its before-hook was answered)
 * or its turn was recorded (its after-hook was), in the lane's session or, for a turn that began
 * in another (completed since), in any session changed within a day; or when its result is
 * Baton's refusal. Each
 * other call is reported once: a journal note keyed by the call, a line in `.baton/logs/hooks.log`
 * (code `hook_unanswered`: the doctor's `hook_failures`), and a message to the user (and, on a
 * prompt, to the model).
 *
 * Only where the local settings hold Baton's HTTP hooks: command hooks run in a process of their
 * own, which answers whether or not a server runs.
 */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import type { Baton } from "../../api.js";
import { isBatonDenial } from "../../core/hooks/context.js";
import { callCheckpoint, turnId } from "../../core/hooks/keys.js";
import type { HookEvent, HookResponse, ToolCall } from "../../core/hooks/types.js";
import { httpHooksOn, httpHooksTarget, staleHooksAdvice } from "../../platform/claude-http-hooks.js";
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
}

function tail(path: string): string {
  const fd = openSync(path, "r");
  try {
    const size = fstatSync(fd).size;
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
  let current: TranscriptCall[] = [];
  let previous: TranscriptCall[] = [];
  const results = new Map<string, { error: boolean; text: string }>();
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    let v: { type?: unknown; isMeta?: unknown; isCompactSummary?: unknown; message?: { content?: unknown } };
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
        if (current.length > 0) previous = current;
        current = [];
      }
    } else if (v.type === "assistant") {
      for (const b of blocks) {
        if (b.type === "tool_use" && typeof b.id === "string" && typeof b.name === "string" && CHECKPOINTED.has(b.name))
          current.push({ id: b.id, name: b.name, refused: false });
      }
    }
  }
  const calls = current.length > 0 ? current : previous;
  return calls.map((c) => {
    const r = results.get(c.id);
    return { ...c, refused: r?.error === true && isBatonDenial(r.text) };
  });
}

/** Sessions changed this recently are searched for a turn's calls the current session lacks. */
const RECENT_MS = 24 * 60 * 60 * 1000;

/** Whether Baton heard of the call in `sid`: its checkpoint, its recorded turn, or its report already made. */
async function accountedFor(b: Baton, sid: string, ev: HookEvent, c: TranscriptCall): Promise<boolean> {
  const tool: ToolCall = { name: c.name, kind: c.name === "Bash" ? "shell" : "write", files: [], input: {}, callId: c.id };
  const turn = turnId(ev, tool) as string;
  if ((await b.events.find(sid, turn)) || (await b.events.find(sid, `${turn}.unanswered`))) return true;
  try {
    await b.checkpoints.get(callCheckpoint(sid, ev, tool).id);
    return true;
  } catch {
    return false; // no checkpoint: its before-hook was not answered
  }
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
  if (sid === undefined || ev.agent !== "claude" || ev.transcriptPath === undefined || !httpHooksOn(b.root)) return {};
  let calls: TranscriptCall[];
  try {
    calls = turnCalls(tail(ev.transcriptPath));
  } catch {
    return {}; // no transcript (yet): nothing to compare
  }
  let missed: TranscriptCall[] = [];
  for (const c of calls) if (!c.refused && !(await accountedFor(b, sid, ev, c))) missed.push(c);
  if (missed.length > 0) {
    // The turn may have begun in another session (one that completed since, or that another
    // agent's lane moved to): its calls were recorded there.
    const since = Date.now() - RECENT_MS;
    const others = (await b.sessions.list({ includeCompleted: true }))
      .filter((s) => s.id !== sid && Date.parse(s.updatedAt) >= since)
      .map((s) => s.id);
    const still: TranscriptCall[] = [];
    for (const c of missed) {
      let found = false;
      for (const other of others) if (!found) found = await accountedFor(b, other, ev, c);
      if (!found) still.push(c);
    }
    missed = still;
  }
  if (missed.length === 0) return {};
  const names = [...new Set(missed.map((c) => c.name))].join(", ");
  for (const c of missed) {
    const tool: ToolCall = { name: c.name, kind: c.name === "Bash" ? "shell" : "write", files: [], input: {}, callId: c.id };
    await b.events.append(sid, {
      id: `${turnId(ev, tool) as string}.unanswered`,
      type: "note:added",
      actor: "system",
      data: {
        text: `Claude Code ran ${c.name} (${c.id}) without a checkpoint: its HTTP hook got no answer (the workspace's server was not running or refused it).`,
      },
    });
    appendHookFailure(b.workspace.dir, {
      agent: "claude",
      event: "PreToolUse",
      error: {
        code: "hook_unanswered",
        message: `${c.name} (${c.id}) ran without a checkpoint: its HTTP hook got no answer (the workspace's server was not running or refused it)`,
      },
    });
  }
  const n = missed.length;
  // Hooks naming another port than the server's reach nobody (or whoever holds that port now);
  // hooks sending an older token are refused.
  const target = httpHooksTarget(b.root);
  const stale = target ? staleHooksAdvice(target, readServerKey(b.workspace.dir)) : undefined;
  const why = stale ?? "the workspace's server was not running (or refused the HTTP hook)";
  const what = `${n} tool call${n === 1 ? "" : "s"} (${names}) ran without a checkpoint: ${why}`;
  return {
    userMessage: `Baton: ${what}. Those steps cannot be rolled back one by one${stale ? "" : "; the next prompt starts the server again (or run `baton serve`)"}.`,
    ...(ev.kind === "prompt"
      ? { context: `Baton: ${what}. Baton has no checkpoint before those changes: mention it to the user before relying on a rollback.` }
      : {}),
  };
}

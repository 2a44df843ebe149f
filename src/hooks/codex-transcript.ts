/**
 * How a Codex shell call ended, from Codex's own session transcript.
 *
 * Codex's PostToolUse payload carries a shell command's output as a bare string, with no exit
 * code (openai/codex `ExecCommandToolOutput::post_tool_use_response`): `false` and `true` look
 * the same. The payload's `transcript_path` is the session's rollout
 * (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-….jsonl`), and by the time PostToolUse runs it holds
 * the call's completed item:
 *
 *     {"type":"event_msg","payload":{"type":"item_completed",…,"item":{"type":"CommandExecution",
 *      "id":"<tool_use_id>",…,"status":"failed","aggregated_output":"…","exit_code":1,…}}}
 *
 * Only the file's tail is read (the newest lines), and only a line naming this call. A line
 * longer than the tail (a call with huge output) is found by walking back to its start; its
 * outcome is then read from the fields after the output, as they appear in the JSON text. The
 * file is opened without blocking and read only when it is a regular file (a FIFO named `.jsonl`
 * would otherwise hold the hook forever).
 */
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { isAbsolute } from "node:path";

/** The newest part of the transcript that is searched; a call's item is among the last lines. */
const TAIL_BYTES = 1024 * 1024;
/** How far back the start of one overlong last line is looked for. */
const LONG_LINE_BYTES = 64 * 1024 * 1024;
const STEP = 256 * 1024;

export interface CallOutcome {
  status?: string;
  exitCode?: number;
}

function readAt(fd: number, pos: number, len: number): string {
  const buf = Buffer.alloc(len);
  const n = readSync(fd, buf, 0, len, pos);
  return buf.subarray(0, n).toString("utf8");
}

/**
 * The outcome fields in an item's JSON text: the status before the output, the exit code after
 * it (a key's quotes are never escaped; inside a string they are).
 */
function fieldsIn(head: string, tail: string): CallOutcome | undefined {
  const out: CallOutcome = {};
  const status = /[,{]"status":"([a-z_]+)"/.exec(head)?.[1];
  const codes = [...tail.matchAll(/[,{]"exit_code":(-?\d+)/g)];
  if (status !== undefined) out.status = status;
  if (codes.length > 0) out.exitCode = Number(codes[codes.length - 1]?.[1]);
  return out.exitCode !== undefined || out.status !== undefined ? out : undefined;
}

function fromLine(line: string, callId: string): CallOutcome | undefined {
  try {
    const item = (JSON.parse(line) as { payload?: { item?: Record<string, unknown> } }).payload?.item;
    if (!item || item.id !== callId) return undefined;
    const out: CallOutcome = {};
    if (typeof item.status === "string") out.status = item.status;
    if (typeof item.exit_code === "number") out.exitCode = item.exit_code;
    return out;
  } catch {
    return undefined;
  }
}

/** The completed item for `callId` in the transcript, or undefined when it is not there (yet). */
export function codexCallOutcome(transcriptPath: unknown, callId: unknown): CallOutcome | undefined {
  if (typeof transcriptPath !== "string" || !isAbsolute(transcriptPath) || !transcriptPath.endsWith(".jsonl")) return undefined;
  if (typeof callId !== "string" || !/^[A-Za-z0-9._:-]{1,200}$/.test(callId)) return undefined;
  let fd: number | undefined;
  try {
    fd = openSync(transcriptPath, constants.O_RDONLY | constants.O_NONBLOCK);
    const st = fstatSync(fd);
    if (!st.isFile()) return undefined;
    const from = Math.max(0, st.size - TAIL_BYTES);
    const text = readAt(fd, from, st.size - from);
    const needle = `"id":${JSON.stringify(callId)}`;
    let at = text.lastIndexOf(needle);
    while (at >= 0) {
      const start = text.lastIndexOf("\n", at) + 1;
      const end = text.indexOf("\n", at);
      const line = text.slice(start, end < 0 ? undefined : end);
      if (line.includes('"item_completed"')) {
        const found = fromLine(line, callId);
        if (found) return found;
      }
      at = start > 0 ? text.lastIndexOf(needle, start - 1) : -1;
    }
    // The newest line may be longer than the tail: find where it starts and whether it is this
    // call's completed item.
    const firstBreak = text.indexOf("\n");
    if (from === 0 || (firstBreak >= 0 && firstBreak < text.trimEnd().length)) return undefined;
    let lineStart: number;
    for (let pos = from; ; ) {
      if (pos === 0) {
        lineStart = 0;
        break;
      }
      if (from - pos >= LONG_LINE_BYTES) return undefined;
      const len = Math.min(STEP, pos);
      const chunk = Buffer.alloc(len);
      readSync(fd, chunk, 0, len, pos - len);
      const nl = chunk.lastIndexOf(0x0a);
      if (nl >= 0) {
        lineStart = pos - len + nl + 1;
        break;
      }
      pos -= len;
    }
    const head = readAt(fd, lineStart, 4096);
    const cut = head.indexOf('"aggregated_output"');
    const opening = cut >= 0 ? head.slice(0, cut) : head;
    const id = opening.indexOf(needle);
    if (!opening.includes('"item_completed"') || id < 0) return undefined;
    // The status comes before the output, the exit code after it.
    return fieldsIn(opening.slice(id), text.slice(-64 * 1024));
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

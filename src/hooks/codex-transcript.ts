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
 * Only the file's tail is read (the newest lines), and only a line naming this call.
 */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { isAbsolute } from "node:path";

/** The newest part of the transcript that is searched; a call's item is among the last lines. */
const TAIL_BYTES = 1024 * 1024;

export interface CallOutcome {
  status?: string;
  exitCode?: number;
}

function tail(path: string): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(path, "r");
    const size = fstatSync(fd).size;
    const len = Math.min(size, TAIL_BYTES);
    const buf = Buffer.alloc(len);
    readSync(fd, buf, 0, len, size - len);
    return buf.toString("utf8");
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The completed item for `callId` in the transcript, or undefined when it is not there (yet). */
export function codexCallOutcome(transcriptPath: unknown, callId: unknown): CallOutcome | undefined {
  if (typeof transcriptPath !== "string" || !isAbsolute(transcriptPath) || !transcriptPath.endsWith(".jsonl")) return undefined;
  if (typeof callId !== "string" || !/^[A-Za-z0-9._:-]{1,200}$/.test(callId)) return undefined;
  const text = tail(transcriptPath);
  if (!text) return undefined;
  const needle = `"id":${JSON.stringify(callId)}`;
  let at = text.lastIndexOf(needle);
  while (at >= 0) {
    const start = text.lastIndexOf("\n", at) + 1;
    const end = text.indexOf("\n", at);
    const line = text.slice(start, end < 0 ? undefined : end);
    if (line.includes('"item_completed"')) {
      try {
        const item = (JSON.parse(line) as { payload?: { item?: Record<string, unknown> } }).payload?.item;
        if (item && item.id === callId) {
          const out: CallOutcome = {};
          if (typeof item.status === "string") out.status = item.status;
          if (typeof item.exit_code === "number") out.exitCode = item.exit_code;
          return out;
        }
      } catch {
        // a line cut by the tail window, or not JSON: look further back
      }
    }
    at = start > 0 ? text.lastIndexOf(needle, start - 1) : -1;
  }
  return undefined;
}

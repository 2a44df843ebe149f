/**
 * What the spiral detector is told about one tool call: the turn record the agent hooks
 * (services/agents/tools.ts) and the spiral benchmark (bench/spiral.mjs) build from a call and
 * its result, whatever the agent. Pure.
 *
 * - `argsHash`: the call's arguments (with the tool, its signature).
 * - `observationHash`: what a successful call returned, its volatile parts (times, durations,
 *   process ids, hex ids) taken out, so the same answer twice is the same hash and a changed
 *   answer (a poll that moved on, a test suite that now fails elsewhere) is not.
 * - `fingerprint`: a failure's kind (core/fingerprint.ts: numbers replaced, for lessons);
 *   `failurePlace`: the failure with its place kept (the error lines and the file:line they
 *   name), so the same error moving to the next line is a different failure.
 * - `waiting`: the call waits on something outside the workspace (a poll of a CI run, a
 *   server, a rollout, a background shell; a sleep; a retry after a network failure or a rate
 *   limit), so repeating it is waiting, with its own budget, not looping. `waitingOn` names it
 *   for the pause ("still waiting on …").
 */
import { canonicalJson, sha256 } from "../canonical.js";
import { failureFingerprint } from "../fingerprint.js";
import { argsHash } from "../hooks/keys.js";
import { redactText } from "../redaction/redact.js";
import type { TurnFile, TurnRecord } from "../types.js";

/** A tool call and its result, as the agent hooks report them (core/hooks/types.ts). */
export interface SpiralCall {
  tool: string;
  /** The call's arguments as the agent sent them. */
  input: unknown;
  /** The shell command, for shell tools. */
  command?: string;
  status: "success" | "error";
  /** What the call returned. */
  output?: unknown;
  /** The failure's text, for a failed call. */
  error?: string;
  /** The files the call wrote, as they were after it. */
  files?: TurnFile[];
}

/** Only this much of an output's start and of its end decides its hash (the rest is the middle of a long log). */
const OUTPUT_EDGE = 8_192;
/** Only the start of a failure decides its place (as for its fingerprint). */
const FAILURE_INPUT = 2_048;
/** The longest `waitingOn` kept. */
const WAITING_ON_MAX = 120;

/** Tools that read a background process's output: calling them again is waiting on it. */
const POLL_TOOLS = new Set(["BashOutput", "TaskOutput", "write_stdin"]);

/**
 * Shell commands that wait on something outside the workspace: a sleep or wait, a status query
 * of a CI run, a cluster, a container or a service, a request to a server, a log being written.
 */
const POLL_COMMAND =
  /\bsleep\s+\d|\bwait\b|\bwatch\s|\buntil\s|\btimeout\s+\d|\brollout\s+status\b|\bgh\s+(?:run|pr|workflow)\s+(?:view|watch|checks|status|list)\b|\bkubectl\s+(?:get|describe|wait|logs|top)\b|\bdocker(?:\s+compose|-compose)?\s+(?:ps|logs|inspect)\b|\bcurl\s|\bwget\s|\bhttp\s+(?:get\s+)?https?:|\bpg_isready\b|\bredis-cli\b.*\bping\b|\bnc\s+-\w*z|\btail\s|\bpgrep\b|\bps\s+(?:aux|-ef|-e)\b|\bsystemctl\s+(?:status|is-active)\b|\bjournalctl\b|\baws\s.*\b(?:describe|wait|get)-|\bgcloud\s.*\b(?:describe|operations)\b|\bheroku\s+(?:ps|logs)\b|\bflyctl?\s+(?:status|logs)\b/i;

/** Failures that come and go by themselves: a retry is waiting for them to pass. */
const TRANSIENT =
  /\bE(?:TIMEDOUT|CONNRESET|CONNREFUSED|AI_AGAIN|NOTFOUND|PIPE)\b|socket hang up|timed out|\btimeout\b|rate.?limit|too many requests|\b(?:HTTP|status|error)[:\s]*(?:code\s*)?(?:429|50[0-4])\b|returned error: (?:429|5\d\d)|service unavailable|bad gateway|gateway time-?out|internal server error|temporarily unavailable|try again later|could not resolve host|connection (?:reset|refused|closed)|couldn't connect to server|network (?:error|is unreachable)|TLS handshake timeout/i;

/** Parts of an output that change from run to run without meaning anything changed. */
function withoutVolatile(text: string): string {
  return text
    .replace(/^(?:Process Group PGID|Background PIDs): .*$/gm, "")
    .replace(/\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?/g, "<time>")
    .replace(/\b\d{1,2}:\d{2}:\d{2}(?:\.\d+)?\b/g, "<time>")
    .replace(/\b\d+(?:\.\d+)?\s?(?:ms|s|sec|secs|seconds|m|min|mins|minutes|h)\b/g, "<duration>")
    .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, "<id>")
    .replace(/\b0x[0-9a-f]+\b/gi, "<id>")
    .replace(/\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b/g, "<id>")
    .replace(/\b(pid|PID|process)[ =:#]*\d+/g, "$1 <n>")
    .replace(/[ \t]+$/gm, "")
    .trim();
}

/** An output as text: a string as it is; Claude Code's `{stdout, stderr}`; anything else as canonical JSON. */
export function outputText(output: unknown): string {
  if (typeof output === "string") return output;
  if (output && typeof output === "object" && !Array.isArray(output)) {
    const o = output as Record<string, unknown>;
    if (typeof o.stdout === "string" || typeof o.stderr === "string") return `${o.stdout ?? ""}\n${o.stderr ?? ""}`;
  }
  try {
    return canonicalJson(output ?? null);
  } catch {
    return String(output);
  }
}

/** The hash of what a call returned, its volatile parts out; a long output by its start and end. */
export function observationDigest(output: unknown): string {
  let text = outputText(output);
  if (text.length > 2 * OUTPUT_EDGE) text = `${text.slice(0, OUTPUT_EDGE)}\n…\n${text.slice(-OUTPUT_EDGE)}`;
  return sha256(withoutVolatile(text)).slice(0, 16);
}

/** A line that says what failed or where: the error itself, an assertion, a location (file:line, `line N`, a stack frame). */
const FAILURE_LINE =
  /error|exception|fail|fatal|traceback|assert|expected|received|panic|not found|cannot|can't|unable|undefined|denied|refused|invalid|missing|no such|timed out|exit code|\.\w{1,5}[:(]\d+|\bline \d+|^\s*at\s|-->|^E\s/i;

/**
 * The failure with its place: the lines that say what failed and where, numbers kept (a line
 * number is the place), volatile parts (times, durations, ids) out; secrets redacted first.
 * Progress lines ("Compiling …", a timing) do not count.
 */
export function failurePlace(error: string): string | undefined {
  const text = redactText(error.length > FAILURE_INPUT ? error.slice(0, FAILURE_INPUT) : error);
  const all = withoutVolatile(text)
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "");
  if (all.length === 0) return undefined;
  const telling = all.filter((l) => FAILURE_LINE.test(l));
  return `fa-${sha256((telling.length > 0 ? telling : all).join("\n")).slice(0, 16)}`;
}

/** Whether a call waits on something outside the workspace (see the module comment). */
export function isWaiting(call: Pick<SpiralCall, "tool" | "command" | "status" | "error">): boolean {
  if (POLL_TOOLS.has(call.tool)) return true;
  if (call.command !== undefined && POLL_COMMAND.test(call.command)) return true;
  return call.status === "error" && call.error !== undefined && TRANSIENT.test(call.error.slice(0, FAILURE_INPUT));
}

/** What a waiting call waits on, for the pause: its command (redacted, clipped), else its tool. */
function waitingOn(call: SpiralCall): string {
  const what = (call.command ?? call.tool).replace(/\s+/g, " ").trim();
  const safe = redactText(what);
  return safe.length <= WAITING_ON_MAX ? safe : `${safe.slice(0, WAITING_ON_MAX - 1)}…`;
}

/** The turn record of a call (status, signature, result, files), without its checkpoint or lane. */
export function spiralTurn(call: SpiralCall): TurnRecord {
  const r: TurnRecord = { tool: call.tool, argsHash: argsHash(call.input), status: call.status };
  if (call.files && call.files.length > 0) r.files = call.files;
  if (call.status === "error") {
    const error = call.error ?? "the tool call failed";
    const fp = failureFingerprint(error);
    if (fp !== undefined) r.fingerprint = fp;
    const place = failurePlace(error);
    if (place !== undefined) r.failurePlace = place;
  } else if (call.output !== undefined) r.observationHash = observationDigest(call.output);
  if (isWaiting(call)) {
    r.waiting = true;
    r.waitingOn = waitingOn(call);
  }
  return r;
}

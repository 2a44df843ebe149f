/**
 * The agent hooks' failure log, `.baton/logs/hooks.log`: one JSON line per failure
 * `{at, agent, event, code, message}`. A hook that fails lets the agent's tool call through
 * (fail open), so this log and the doctor's `hooks` check are how anyone learns it failed.
 *
 * Appends are single writes of one short line (`O_APPEND`: concurrent hook processes do not
 * interleave within a line), never through a symbolic link (a repository may have committed
 * one). The log is capped: when it passes 256 KiB it is
 * renamed to `hooks.log.1` (replacing the previous one), so at most ~512 KiB are kept. Messages
 * are redacted and cut to 500 characters. Writing the log never throws.
 */
import { closeSync, readFileSync, renameSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import { redactText } from "../core/redaction/redact.js";
import { openPrivateAppend, privateSubdir } from "./private-files.js";

export const HOOK_LOG_DIR = "logs";
export const HOOK_LOG_FILE = "hooks.log";
export const HOOK_LOG_MAX_BYTES = 256 * 1024;

export interface HookFailureLine {
  at: string;
  agent: string;
  event: string;
  code: string;
  message: string;
}

export interface HookFailureSummary {
  /** Failures logged at or after `since`. */
  count: number;
  firstAt: string | null;
  lastAt: string | null;
  /** Failures by error code and by agent (counts only: messages stay in the log). */
  codes: Record<string, number>;
  agents: Record<string, number>;
  /** The log file, relative to the workspace root. */
  file: string;
}

export function hookLogPath(batonDir: string): string {
  return join(batonDir, HOOK_LOG_DIR, HOOK_LOG_FILE);
}

/** Append one failure. Never throws: a log that cannot be written is skipped. */
export function appendHookFailure(
  batonDir: string,
  f: { agent: string; event: string; error: unknown },
  now: Date = new Date(),
  maxBytes = HOOK_LOG_MAX_BYTES,
): void {
  try {
    const err = f.error as { code?: unknown; message?: unknown } | undefined;
    const code = typeof err?.code === "string" ? err.code : err instanceof Error ? err.name : "unknown";
    const raw = typeof err?.message === "string" ? err.message : String(f.error);
    const line: HookFailureLine = {
      at: now.toISOString(),
      agent: f.agent.slice(0, 40),
      event: f.event.slice(0, 60),
      code: code.slice(0, 60),
      message: redactText(raw.replace(/\s+/g, " ")).slice(0, 500),
    };
    // Never through a link (a repository's `.baton/logs`): then nothing is logged.
    const dir = privateSubdir(batonDir, HOOK_LOG_DIR);
    if (dir === undefined) return;
    const file = join(dir, HOOK_LOG_FILE);
    try {
      if (statSync(file).size >= maxBytes) renameSync(file, `${file}.1`);
    } catch {
      // no log yet
    }
    const fd = openPrivateAppend(file);
    try {
      writeSync(fd, `${JSON.stringify(line)}\n`);
    } finally {
      closeSync(fd);
    }
  } catch {
    // the workspace may be the thing that is broken; the hook still lets the call through
  }
}

/** Failures logged at or after `since` (both the log and its rotated predecessor). */
export function hookFailures(batonDir: string, since: Date): HookFailureSummary {
  const file = hookLogPath(batonDir);
  const out: HookFailureSummary = {
    count: 0,
    firstAt: null,
    lastAt: null,
    codes: {},
    agents: {},
    file: `.baton/${HOOK_LOG_DIR}/${HOOK_LOG_FILE}`,
  };
  const sinceIso = since.toISOString();
  for (const f of [`${file}.1`, file]) {
    let text: string;
    try {
      text = readFileSync(f, "utf8");
    } catch {
      continue;
    }
    for (const raw of text.split("\n")) {
      if (!raw.trim()) continue;
      let line: Partial<HookFailureLine>;
      try {
        line = JSON.parse(raw) as Partial<HookFailureLine>;
      } catch {
        continue;
      }
      if (typeof line.at !== "string" || line.at < sinceIso) continue;
      out.count++;
      if (out.firstAt === null || line.at < out.firstAt) out.firstAt = line.at;
      if (out.lastAt === null || line.at > out.lastAt) out.lastAt = line.at;
      const code = typeof line.code === "string" ? line.code : "unknown";
      const agent = typeof line.agent === "string" ? line.agent : "unknown";
      out.codes[code] = (out.codes[code] ?? 0) + 1;
      out.agents[agent] = (out.agents[agent] ?? 0) + 1;
    }
  }
  return out;
}

/**
 * What Baton does on each agent hook, whatever the agent: the adapters turn the agent's JSON
 * into a `HookEvent`; this answers with a `HookResponse`. It calls the `Baton` facade only.
 *
 * - session start: find or start the session for the agent's session, start (or keep) a run,
 *   and give the agent where things stand: status, next action, blockers, decisions, files to
 *   re-read, lessons.
 * - prompt: "undo that" / "/rollback 3" rolls back and says what was restored; otherwise the
 *   lessons relevant to the prompt.
 * - before a write: a targeted checkpoint of the files it names; before a shell command: a
 *   whole-tree checkpoint. While a spiral pauses the session, the call is denied instead.
 * - after a tool: a ledger node, a turn for the spiral detector, the files-modified facet.
 * - before compaction: STATE.md; after it: a journal note; turn or session end: the run ends.
 *
 * The checkpoint taken before a call is handed to the after-call hook (another process)
 * through `.baton/hooks/pending/<key>`, keyed by the agent's call id (or the call's arguments).
 */
import { mkdirSync, readdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { basename, isAbsolute, join, relative, resolve } from "node:path";
import type { Baton } from "../api.js";
import { batonInvocation, isUnpausePrompt } from "../core/baton-command.js";
import { canonicalJson, sha256 } from "../core/canonical.js";
import { failureFingerprint } from "../core/fingerprint.js";
import { renderSessionContext, renderSpiralPause, type SessionBrief } from "../core/hook-context.js";
import { pathProblem } from "../core/paths.js";
import { userWords } from "../core/prompt-words.js";
import { parseRollbackIntent, type RollbackIntent } from "../core/rollback-intent.js";
import type { RunRecord, Snapshot } from "../core/types.js";
import { isBatonError } from "../errors.js";
import type { HookEvent, HookResponse, ToolCall } from "./types.js";

export interface HandlerOptions {
  /** The agent's display name ("Claude Code"). */
  label: string;
  /** The most context text the agent accepts from one hook. */
  contextLimit: number;
  /** The agent's process, for the run's liveness (default: this process's parent). */
  agentPid?: number;
}

/** A run the hooks start lasts this long without a heartbeat (each prompt heartbeats it). */
export const HOOK_RUN_TTL_MS = 2 * 60 * 60 * 1000;
const PENDING_DIR = join("hooks", "pending");
/** Taken while a hook starts a session, so parallel hooks start one, not several. */
const SESSION_LOCK = "hooks:new-session";
/** Pending checkpoint hand-offs older than this are swept (the tool was refused or the agent died). */
const PENDING_MAX_AGE_MS = 60 * 60 * 1000;
const PROMPT_LESSONS_CHARS = 2_000;
/** Strings in stored arguments and results are cut to this before the ledger redacts them. */
const MAX_LEDGER_STRING = 4_096;

type Ev<K extends HookEvent["kind"]> = Extract<HookEvent, { kind: K }>;

export async function handleHook(b: Baton, ev: HookEvent, opts: HandlerOptions): Promise<HookResponse> {
  switch (ev.kind) {
    case "session_start":
      return sessionStart(b, ev, opts);
    case "prompt":
      return prompt(b, ev, opts);
    case "before_tool":
      return beforeTool(b, ev, opts);
    case "after_tool":
      return afterTool(b, ev, opts);
    case "pre_compact":
      return preCompact(b, ev, opts);
    case "post_compact":
      return postCompact(b, ev, opts);
    case "stop":
      return stop(b, ev);
    default:
      return {};
  }
}

// Sessions and runs

function contextKey(ev: HookEvent): string {
  return `${ev.agent}SessionId`;
}

/**
 * The Baton session for the agent's session: the single active session; else the active
 * session whose context records this agent session id (else, without an id, the most recently
 * updated); else, with `create`, a new `task` session titled from the workspace.
 */
async function sessionFor(b: Baton, ev: HookEvent, opts: HandlerOptions, create: true): Promise<string>;
async function sessionFor(b: Baton, ev: HookEvent, opts: HandlerOptions, create: false): Promise<string | undefined>;
async function sessionFor(b: Baton, ev: HookEvent, opts: HandlerOptions, create: boolean): Promise<string | undefined> {
  const found = await existingSession(b, ev);
  if (found || !create) return found;
  // Agents run tool calls in parallel, so several hooks may find no session at once: one
  // creates it under a lock, the others find it when they get the lock.
  const lock = await b.locks.acquire(SESSION_LOCK, { waitMs: 5_000, ttlMs: 10_000 });
  try {
    const again = await existingSession(b, ev);
    if (again) return again;
    const snap = await b.sessions.start({ flow: "task", title: `${basename(b.root)} (${opts.label})`, actor: "agent" });
    await b.events.append(snap.sessionId, { type: "start", actor: "agent" });
    if (ev.agentSessionId) await b.facets.setContext(snap.sessionId, { [contextKey(ev)]: ev.agentSessionId });
    return snap.sessionId;
  } finally {
    await b.locks.release(SESSION_LOCK, lock.epoch);
  }
}

async function existingSession(b: Baton, ev: HookEvent): Promise<string | undefined> {
  const active = await b.sessions.list();
  if (active.length === 1) return (active[0] as { id: string }).id;
  if (active.length > 1) {
    if (!ev.agentSessionId) return [...active].sort((x, y) => (x.updatedAt < y.updatedAt ? 1 : -1))[0]?.id;
    for (const s of active) if ((await b.sessions.snapshot(s.id)).context[contextKey(ev)] === ev.agentSessionId) return s.id;
  }
  return undefined;
}

function runPrefix(ev: HookEvent): string {
  const id = (ev.agentSessionId ?? "").replace(/[^A-Za-z0-9._-]/g, "-").slice(0, 48);
  return id ? `${ev.agent}-${id}` : ev.agent;
}

function runningRuns(snap: Snapshot, ev: HookEvent): RunRecord[] {
  const prefix = `${runPrefix(ev)}-`;
  return (snap.facets.runs ?? []).filter((r) => r.status === "running" && r.runId.startsWith(prefix));
}

let runSeq = 0;

/** Keep this agent session's run alive, or start one (after a turn ended it, or a crash). */
async function ensureRun(b: Baton, sid: string, snap: Snapshot, ev: HookEvent, opts: HandlerOptions): Promise<void> {
  const current = runningRuns(snap, ev).at(-1);
  if (current) {
    try {
      await b.runs.heartbeat(sid, current.runId, { ttlMs: HOOK_RUN_TTL_MS });
      return;
    } catch (err) {
      // crashed (its work went back) or ended meanwhile: start a new one
      if (!isBatonError(err, "run_crashed") && !isBatonError(err, "bad_input") && !isBatonError(err, "not_found")) throw err;
    }
  }
  // Unique per process and call: one server answers hooks for many agent sessions at once.
  const seq = runSeq++;
  await b.runs.start(sid, {
    agent: opts.label,
    runId: `${runPrefix(ev)}-${Date.now().toString(36)}${process.pid.toString(36)}${seq > 0 ? `-${seq.toString(36)}` : ""}`,
    pid: opts.agentPid ?? process.ppid,
    ttlMs: HOOK_RUN_TTL_MS,
  });
}

// Session start

async function sessionStart(b: Baton, ev: Ev<"session_start">, opts: HandlerOptions): Promise<HookResponse> {
  const sid = await sessionFor(b, ev, opts, true);
  await b.runs.detectCrashed({ sessionId: sid });
  const snap = await b.sessions.snapshot(sid);
  if (ev.agentSessionId && snap.context[contextKey(ev)] !== ev.agentSessionId)
    await b.facets.setContext(sid, { [contextKey(ev)]: ev.agentSessionId });
  await ensureRun(b, sid, snap, ev, opts);
  sweepPending(b.workspace.dir);

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
    ...(s.spiral ? { spiral: s.spiral } : {}),
  };
  if (report) brief.review = report.verification.files.filter((f) => f.review).map((f) => ({ path: f.path, state: f.state }));
  const base = renderSessionContext(brief, { maxChars: opts.contextLimit, source: ev.source });
  const room = opts.contextLimit - base.length - 2;
  const extra: string[] = [];
  if (room > 200) {
    const query = [s.title, s.nextAction.reason, ...s.activeBlockers.map((x) => x.text)].filter(Boolean).join(" ");
    const inj = await b.lessons.inject({ sessionId: sid, prompt: query }, { k: 5, maxChars: Math.min(room, PROMPT_LESSONS_CHARS) });
    if (inj.markdown) extra.push(inj.markdown);
  }
  return {
    context: renderSessionContext(brief, { maxChars: opts.contextLimit, source: ev.source, extra }),
    userMessage: `Baton: session ${sid} (${s.phase}); next: ${s.nextAction.action}${s.spiral?.paused ? " (paused by the spiral detector)" : ""}`,
  };
}

// Prompt

async function prompt(b: Baton, ev: Ev<"prompt">, opts: HandlerOptions): Promise<HookResponse> {
  const sid = await sessionFor(b, ev, opts, true);
  const snap = await b.sessions.snapshot(sid);
  await ensureRun(b, sid, snap, ev, opts);
  // The user's words without the context blocks the agent wrapped them in (Gemini CLI puts the
  // SessionStart hooks' text, Baton's own, in front of every prompt).
  const words = userWords(ev.prompt);
  // Every rollback request names one of these verbs (core/rollback-intent.ts); most prompts do
  // not, and the full grammar's regular expressions cost ~2 ms to compile on first use.
  const intent = /undo|revert|roll ?back|go back|restore/i.test(words) ? parseRollbackIntent(words) : undefined;
  if (intent) return rollbackFromPrompt(b, sid, snap, intent);
  const sp = snap.facets.spiral;
  if (sp?.paused && isUnpausePrompt(words)) {
    await b.turns.unpause(sid, { reason: "the user typed unpause", actor: "user" });
    return {
      context: "The user cleared Baton's spiral pause. Continue, but do not repeat the approach that looped: take a different one.",
      userMessage: `Baton: session ${sid} unpaused`,
    };
  }
  const parts: string[] = [];
  if (sp?.paused) parts.push(renderSpiralPause(sid, pauseView(snap)));
  const inj = await b.lessons.inject({ sessionId: sid, prompt: words }, { k: 5, maxChars: PROMPT_LESSONS_CHARS });
  if (inj.markdown) parts.push(inj.markdown);
  return parts.length > 0 ? { context: parts.join("\n\n") } : {};
}

function pauseView(snap: Snapshot): NonNullable<SessionBrief["spiral"]> {
  const sp = snap.facets.spiral;
  const v: NonNullable<SessionBrief["spiral"]> = { paused: sp?.paused === true };
  if (sp?.pattern !== undefined) v.pattern = sp.pattern;
  if (sp?.evidence?.summary !== undefined) v.summary = sp.evidence.summary;
  if (sp?.proposedCheckpoint !== undefined) v.proposedCheckpoint = sp.proposedCheckpoint;
  return v;
}

/** Rollback answers Baton gives the user rather than failures of Baton itself. */
const ROLLBACK_ANSWERS = new Set(["checkpoint_not_found", "checkpoint_pruned", "not_found", "bad_input", "unsafe_path"]);

async function rollbackFromPrompt(b: Baton, sid: string, snap: Snapshot, intent: RollbackIntent): Promise<HookResponse> {
  let r: Awaited<ReturnType<Baton["checkpoints"]["rollback"]>>;
  try {
    r = await b.checkpoints.rollback(sid, { ...intent, actor: "user" });
  } catch (err) {
    if (!isBatonError(err) || !ROLLBACK_ANSWERS.has(err.code)) throw err;
    return {
      context: `The user asked to roll back files. Baton could not: ${err.message}. Tell the user; do not try to undo changes by hand unless they ask.`,
      userMessage: `Baton could not roll back: ${err.message}`,
    };
  }
  if (snap.facets.spiral?.paused) await b.turns.unpause(sid, { reason: "the user asked to roll back", actor: "user" });
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

// Tools

/** The files of a call that are inside the workspace, workspace-relative; others are not Baton's. */
function workspaceFiles(root: string, cwd: string, files: readonly string[]): string[] {
  const out: string[] = [];
  for (const f of files) {
    const rel = relative(root, resolve(cwd, f)).split("\\").join("/");
    if (rel === "" || rel.startsWith("../") || rel === ".." || isAbsolute(rel) || pathProblem(rel) !== undefined) continue;
    if (!out.includes(rel)) out.push(rel);
  }
  return out;
}

function clipCommand(command: string | undefined): string {
  const c = (command ?? "").replace(/\s+/g, " ").trim();
  return c.length <= 80 ? c : `${c.slice(0, 79)}…`;
}

function shortHash(value: unknown): string {
  return sha256(canonicalJson(value ?? null)).slice(0, 16);
}

/** The key pairing a call's before and after hooks. */
function pendingKey(ev: HookEvent, tool: ToolCall): string {
  const id = tool.callId ?? `${ev.agentSessionId ?? ""}\u0000${tool.name}\u0000${shortHash(tool.input)}`;
  return sha256(`${ev.agent}\u0000${id}`).slice(0, 32);
}

async function beforeTool(b: Baton, ev: Ev<"before_tool">, opts: HandlerOptions): Promise<HookResponse> {
  const { tool } = ev;
  if (tool.kind === "other") return {};
  const own = tool.kind === "shell" ? batonInvocation(tool.command) : undefined;
  if (own?.changesSupervision) {
    return {
      deny: {
        reason:
          "Baton's hooks supervise this agent; installing or removing them is the user's decision. Ask the user to run the command in their own terminal.",
      },
      userMessage: `Baton blocked ${tool.name}: an agent may not change its own hooks (${clipCommand(tool.command)}).`,
    };
  }
  const files = tool.kind === "write" ? workspaceFiles(b.root, ev.cwd, tool.files) : [];
  if (tool.kind === "write" && files.length === 0) return {};
  const sid = await sessionFor(b, ev, opts, true);
  const snap = await b.sessions.snapshot(sid);
  // Only a plain read-only Baton command passes a pause: clearing it is the user's decision.
  if (snap.facets.spiral?.paused && !own?.readOnly) {
    return {
      deny: { reason: renderSpiralPause(sid, pauseView(snap)) },
      userMessage: `Baton blocked ${tool.name}: session ${sid} is paused by the spiral detector (${snap.facets.spiral.pattern ?? "spiral"}).`,
    };
  }
  // One plain Baton command records itself (a rollback takes its own safety checkpoint; a
  // checkpoint taken here would become the step it rolls back to).
  if (own) return {};
  const cp = await b.checkpoints.create(sid, tool.kind === "write" ? { files, toolName: tool.name } : { all: true, toolName: tool.name });
  writePending(b.workspace.dir, pendingKey(ev, tool), cp.checkpoint.id);
  return {};
}

async function afterTool(b: Baton, ev: Ev<"after_tool">, opts: HandlerOptions): Promise<HookResponse> {
  const { tool } = ev;
  const sid = await sessionFor(b, ev, opts, true);
  const checkpointId = takePending(b.workspace.dir, pendingKey(ev, tool));
  const files = tool.kind === "write" ? workspaceFiles(b.root, ev.cwd, tool.files) : [];
  const error = ev.status === "error" ? (ev.error ?? "the tool call failed") : undefined;
  const fingerprint = error ? failureFingerprint(error) : undefined;
  const safeId = tool.callId && /^[A-Za-z0-9._:-]{1,100}$/.test(tool.callId) ? tool.callId : undefined;

  // The ledger write is queued now and committed while the turn is recorded.
  const ledger = b.ledger.record(sid, {
    toolName: tool.name,
    status: ev.status,
    args: bounded(tool.input),
    ...(error !== undefined ? { error: error.slice(0, MAX_LEDGER_STRING) } : {}),
    ...(ev.output !== undefined ? { observation: bounded(ev.output) } : {}),
    ...(fingerprint ? { fingerprint } : {}),
    ...(safeId ? { nodeId: `${ev.agent}:${safeId}` } : {}),
  });
  const turn = await b.turns.record(sid, {
    tool: tool.name,
    argsHash: shortHash(tool.input),
    status: ev.status,
    actor: "agent",
    ...(files.length > 0 ? { files } : {}),
    ...(fingerprint ? { fingerprint } : {}),
    ...(ev.output !== undefined ? { observationHash: shortHash(ev.output) } : {}),
    ...(checkpointId ? { checkpointId } : {}),
    ...(safeId ? { id: `turn_${ev.agent}_${safeId}` } : {}),
  });
  if (files.length > 0) await b.facets.recordResumeContext(sid, { files }, "agent");
  await ledger;

  if (turn.detected) {
    const view = {
      paused: true,
      ...(turn.spiral.pattern !== undefined ? { pattern: turn.spiral.pattern } : {}),
      ...(turn.spiral.summary !== undefined ? { summary: turn.spiral.summary } : {}),
      ...(turn.spiral.proposedCheckpoint !== undefined ? { proposedCheckpoint: turn.spiral.proposedCheckpoint } : {}),
    };
    return {
      context: `${renderSpiralPause(sid, view)} Further edits and shell commands are refused until then.`,
      userMessage: `Baton paused session ${sid}: ${turn.spiral.summary ?? turn.spiral.pattern ?? "a spiral"}`,
    };
  }
  if (error) {
    const inj = await b.lessons.inject(
      { sessionId: sid, tool: tool.name, paths: files, prompt: error.slice(0, 500), ...(fingerprint ? { fingerprint } : {}) },
      { k: 3, maxChars: 1_500 },
    );
    if (inj.markdown) return { context: inj.markdown };
  }
  return {};
}

/** Long strings cut before the ledger's redaction (which bounds them further): a Write's content can be megabytes. */
function bounded(v: unknown, depth = 0): unknown {
  if (typeof v === "string") return v.length > MAX_LEDGER_STRING ? `${v.slice(0, MAX_LEDGER_STRING)}…` : v;
  if (depth > 6 || v === null || typeof v !== "object") return v;
  if (Array.isArray(v)) return v.slice(0, 100).map((x) => bounded(x, depth + 1));
  const out: Record<string, unknown> = {};
  let n = 0;
  for (const [k, x] of Object.entries(v)) {
    if (n++ >= 100) break;
    out[k] = bounded(x, depth + 1);
  }
  return out;
}

// Compaction and the end of a turn or session

/**
 * Before a compaction: STATE.md, so the compacted agent can re-read where things stand. The
 * journal notes a compaction only once it happened (PostCompact), or here when the agent sends
 * nothing afterwards and fires this hook only for a compaction that follows (`announced`). A
 * hook that fires whether or not a compaction follows (`ifChanged`) only keeps STATE.md current.
 */
async function preCompact(b: Baton, ev: Ev<"pre_compact">, opts: HandlerOptions): Promise<HookResponse> {
  const sid = await sessionFor(b, ev, opts, false);
  if (!sid) return {};
  if (ev.ifChanged) {
    await b.sessions.refreshStateMarkdown(sid);
    return {};
  }
  await b.sessions.writeStateMarkdown(sid);
  if (ev.announced) await noteCompaction(b, sid, opts, ev.trigger, "; STATE.md was written first");
  return {};
}

async function postCompact(b: Baton, ev: Ev<"post_compact">, opts: HandlerOptions): Promise<HookResponse> {
  const sid = await sessionFor(b, ev, opts, false);
  if (sid) await noteCompaction(b, sid, opts, ev.trigger, "");
  return {};
}

async function noteCompaction(b: Baton, sid: string, opts: HandlerOptions, trigger: string | undefined, tail: string): Promise<void> {
  await b.events.append(sid, {
    type: "note:added",
    actor: "system",
    data: { text: `${opts.label} compacted its context (${trigger ?? "auto"})${tail}.` },
  });
}

async function stop(b: Baton, ev: Ev<"stop">): Promise<HookResponse> {
  const active = await b.sessions.list();
  // Never start a session just to end a run: look at the sessions this agent session touched.
  for (const s of active) {
    const snap = await b.sessions.snapshot(s.id);
    for (const r of runningRuns(snap, ev)) {
      await b.runs.end(
        s.id,
        r.runId,
        { reason: ev.sessionEnd ? `session ended${ev.reason ? ` (${ev.reason})` : ""}` : "turn ended" },
        "agent",
      );
    }
  }
  return {};
}

// The pending checkpoint hand-off between a call's before and after hooks

function writePending(batonDir: string, key: string, checkpointId: string): void {
  const dir = join(batonDir, PENDING_DIR);
  // Private like the rest of .baton/, whatever the umask (services/private-files.ts).
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(join(dir, key), checkpointId, { mode: 0o600 });
}

function takePending(batonDir: string, key: string): string | undefined {
  const file = join(batonDir, PENDING_DIR, key);
  let id: string;
  try {
    id = readFileSync(file, "utf8").trim();
  } catch {
    return undefined;
  }
  try {
    unlinkSync(file);
  } catch {
    // another process took it
  }
  return /^cp-[A-Za-z0-9._-]+$/.test(id) ? id : undefined;
}

function sweepPending(batonDir: string): void {
  const dir = join(batonDir, PENDING_DIR);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  const cutoff = Date.now() - PENDING_MAX_AGE_MS;
  for (const n of names) {
    try {
      if (statSync(join(dir, n)).mtimeMs < cutoff) unlinkSync(join(dir, n));
    } catch {
      // gone already
    }
  }
}

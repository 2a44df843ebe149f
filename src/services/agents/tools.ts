/**
 * An agent's tool calls (services/agents/hooks.ts): before a write, a targeted checkpoint of the
 * files it names; before a shell command, a whole-tree checkpoint; after any tool, a ledger
 * node, a turn for the spiral detector and the files-modified facet.
 *
 * The checkpoint's id comes from the call (core/hooks/keys.ts): a second attempt at the same
 * hook returns the first's checkpoint, and the after-tool hook (another process) finds it by
 * computing the same id. It must be taken before the tool runs, so it carries the hook's
 * deadline: one that cannot commit in time is cancelled, and the user is told.
 *
 * Everything is in the agent session's lane (core/lanes.ts): its checkpoints, turns and ledger
 * nodes carry it, its spiral pause is the one that blocks it, and before a write it is told when
 * another agent working right now holds a claim on the file (`checkpoints.claims`, below).
 *
 * Longer than the house's ~400 lines: a call's before and after hooks share its keys, its lane's
 * claims and what each waits for the disk for; apart, the two halves would drift.
 */
import { lstatSync } from "node:fs";
import { resolve } from "node:path";
import type { Baton } from "../../api.js";
import { MAX_TURN_FILES } from "../../core/facets.js";
import { failureFingerprint } from "../../core/fingerprint.js";
import { batonInside, batonInvocation, removesBatonPlugin } from "../../core/hooks/baton-command.js";
import { DENY_OPENINGS, renderSpiralPause } from "../../core/hooks/context.js";
import { callCheckpoint, ledgerNodeId, turnId } from "../../core/hooks/keys.js";
import type { HookEvent, HookResponse, ToolCall } from "../../core/hooks/types.js";
import { type ClaimHolder, claimLine, describeLane, isWorking, pausedSpiral, sameFamily, untold } from "../../core/lanes.js";
import { spiralTurn } from "../../core/spiral/turn.js";
import { pathProblem } from "../../core/time-travel/paths.js";
import type { JsonObject, Snapshot, TurnFile } from "../../core/types.js";
import { isBatonError } from "../../errors.js";
import { appendHookFailure } from "../../platform/hook-log.js";
import { claudeConfigDirOf, clineConfigArg } from "../../platform/moved-config.js";
import { isGuardedWrite } from "../../platform/plugin-files.js";
import { readProcArgs } from "../../platform/process-facts.js";
import { hashFile, isLink, recordFiles, withLinkTargets, workspaceRelative } from "../files.js";
import { readLaneConfig } from "./lane-config.js";
import { laneOf, pauseView, runningRuns, sessionFor } from "./sessions.js";

type Ev<K extends HookEvent["kind"]> = Extract<HookEvent, { kind: K }>;

/** Strings in stored arguments and results are cut to this before the ledger redacts them. */
const MAX_LEDGER_STRING = 4_096;

export interface ToolHookContext {
  label: string;
  /** The agent's process (its command line may move its configuration: Cline CLI's `--config`). */
  agentPid?: number;
  deadline?: number | undefined;
  /** How the after-tool hook's records commit (ServiceSet.perCallDurability): relaxed unless `ledger.durability` is full. */
  perCallDurability?: "full" | "relaxed";
  /** Log a step that was cancelled or failed without failing the hook. */
  log(err: unknown): void;
}

/** Cline CLI's configuration folder as the command line of its process `pid` moves it. */
function clineConfigDirOf(pid: number): string | undefined {
  const p = readProcArgs(pid);
  return p ? clineConfigArg(p.argv, p.cwd) : undefined;
}

/**
 * The files a call wrote, each read once: its `resume:updated` record (recordFiles) and the turn's
 * file with the same hash and size. A link (which the resume list may not hold: it could lead out
 * of the workspace) stays a path the turn hashes as it always did; anything else recordFiles
 * refuses (a folder by then, an unreadable file) is the turn's without a hash, so the call is
 * still recorded and judged.
 */
function fingerprinted(root: string, files: readonly string[]): { records: JsonObject[]; turnFiles: (string | TurnFile)[] } {
  const records: JsonObject[] = [];
  const turnFiles: (string | TurnFile)[] = [];
  for (const f of files) {
    let r: JsonObject | undefined;
    try {
      r = recordFiles(root, [f])[0];
    } catch {
      r = undefined;
    }
    if (r !== undefined) {
      records.push(r);
      turnFiles.push(turnFile(r));
    } else turnFiles.push(isLink(resolve(root, f)) ? f : { path: f });
  }
  return { records, turnFiles };
}

/** A recorded file as the turn keeps it: its path, and its hash and size when it exists. */
function turnFile(f: JsonObject): TurnFile {
  const { path, hash, size } = f as { path: string; hash?: string; size?: number };
  return hash !== undefined ? { path, hash, ...(size !== undefined ? { size } : {}) } : { path };
}

/**
 * The files of a call that are inside the workspace, workspace-relative; others are not Baton's.
 * A path through a link to the workspace is inside it (workspaceRelative): the agent's working
 * directory may name it another way than the server's root does.
 */
function workspaceFiles(root: string, cwd: string, tool: ToolCall): string[] {
  const out: string[] = [];
  const through = new Set<string>(); // written where a link would lead
  for (const f of tool.files) {
    const rel = workspaceRelative(root, f, cwd);
    if (rel === undefined || pathProblem(rel) !== undefined) continue;
    if (!out.includes(rel)) out.push(rel);
    if (!tool.unlinked?.includes(f)) through.add(rel);
  }
  // A write through a link lands in the file it leads to: that file is checkpointed and claimed
  // too. A link the call only removes (deletes, or moves away) leaves that file as it is.
  const linked = withLinkTargets(
    root,
    out.filter((p) => through.has(p)),
  );
  return [...out, ...linked.filter((p) => !out.includes(p))];
}

function clipCommand(command: string | undefined): string {
  const c = (command ?? "").replace(/\s+/g, " ").trim();
  return c.length <= 80 ? c : `${c.slice(0, 79)}…`;
}

export async function beforeTool(b: Baton, ev: Ev<"before_tool">, o: ToolHookContext): Promise<HookResponse> {
  const { tool } = ev;
  if (tool.kind === "other") return {};
  const own = tool.kind === "shell" ? batonInvocation(tool.command) : undefined;
  // Any Baton command inside a compound one counts; so does removing or disabling Baton's
  // plugin or extension with the agent's own CLI.
  const inside = tool.kind === "shell" ? batonInside(tool.command) : { changesSupervision: false, overridesLanes: false };
  if (own?.changesSupervision || inside.changesSupervision || (tool.kind === "shell" && removesBatonPlugin(tool.command))) {
    return {
      deny: {
        reason: `${DENY_OPENINGS.supervision} installing or removing them, or trusting this workspace's Baton settings, is the user's decision. Ask the user to run the command in their own terminal.`,
      },
      userMessage: `Baton blocked ${tool.name}: an agent may not change its own hooks or trust Baton's settings (${clipCommand(tool.command)}).`,
    };
  }
  if (own?.overridesLanes || inside.overridesLanes) {
    return {
      deny: {
        reason: `${DENY_OPENINGS.lanes} (--lane, --all-lanes, their events), is the user's decision: other agents may be working in this checkout. Ask the user to run the command in their own terminal. \`baton rollback\` without those options steps back through your own work.`,
      },
      userMessage: `Baton blocked ${tool.name}: an agent may not clear pauses or act on other agents' lanes (${clipCommand(tool.command)}).`,
    };
  }
  // Claude Code's HTTP hooks are answered here with this process's environment, not the agent's:
  // where CLAUDE_CONFIG_DIR moved its configuration, its transcript's path says.
  const claudeDir = ev.agent === "claude" ? claudeConfigDirOf(ev.transcriptPath) : undefined;
  // Cline CLI's, where its command line moved it (`--config`; Linux's /proc says).
  const clineDir = ev.agent === "cline" && tool.kind === "write" && o.agentPid !== undefined ? clineConfigDirOf(o.agentPid) : undefined;
  const isGuarded = (f: string) =>
    isGuardedWrite(f, b.root) ||
    (claudeDir !== undefined && isGuardedWrite(f, b.root, { CLAUDE_CONFIG_DIR: claudeDir })) ||
    (clineDir !== undefined && isGuardedWrite(f, b.root, { CLINE_DIR: clineDir }));
  const guarded = tool.kind === "write" ? tool.files.map((f) => resolve(ev.cwd, f)).filter(isGuarded) : [];
  if (guarded.length > 0) {
    return {
      deny: {
        reason: `${DENY_OPENINGS.supervision} the agent's hook settings, plugins and trust, and Baton's own settings, are the user's to change. Ask the user to edit ${guarded.join(", ")} themselves.`,
      },
      userMessage: `Baton blocked ${tool.name}: an agent may not change the settings that supervise it (${clipCommand(guarded.join(" "))}).`,
    };
  }
  const files = tool.kind === "write" ? workspaceFiles(b.root, ev.cwd, tool) : [];
  // A write outside the workspace has nothing to checkpoint here, but a pause still holds it.
  const outside = tool.kind === "write" && files.length === 0;
  const sid = outside ? await sessionFor(b, ev, o.label, false) : await sessionFor(b, ev, o.label, true);
  if (sid === undefined) return {};
  const snap = await b.sessions.snapshot(sid);
  const lane = laneOf(ev);
  // Only a plain read-only Baton command passes a pause: clearing it is the user's decision.
  const paused = pausedSpiral(snap, lane);
  if (paused && !own?.readOnly) {
    const whose = paused.lane ? "this agent session" : `session ${sid}`;
    return {
      deny: { reason: renderSpiralPause(sid, pauseView(snap, lane)) },
      userMessage: `Baton blocked ${tool.name}: ${whose} is paused by the spiral detector (${paused.state.pattern ?? "spiral"}).`,
    };
  }
  if (outside) return {};
  // One plain Baton command records itself (a rollback takes its own safety checkpoint; a
  // checkpoint taken here would become the step it rolls back to).
  if (own) return {};
  const claimed = tool.kind === "write" ? await claimNotice(b, sid, snap, ev, lane, files, tool, o) : undefined;
  if (claimed?.deny) return claimed;
  const { id } = callCheckpoint(sid, ev, tool);
  try {
    await b.checkpoints.create(sid, {
      ...(tool.kind === "write" ? { files } : { all: true }),
      toolName: tool.name,
      id,
      lane,
      ...(o.deadline !== undefined ? { deadline: o.deadline } : {}),
    });
  } catch (err) {
    if (isBatonError(err) && CHECKPOINT_FAILURES.has(err.code)) {
      // The agent goes on (Baton never blocks a tool for its own failure), and the user knows
      // this step cannot be rolled back rather than finding out at the undo.
      o.log(err);
      return {
        ...claimed,
        userMessage: `Baton could not checkpoint before ${tool.name}, so this step cannot be rolled back: ${err.message}`,
      };
    }
    if (!isBatonError(err, "deadline_exceeded")) throw err;
    // The tool is about to run: a checkpoint committed after it would hold its changes. The
    // agent goes on without one, and the user knows this step cannot be rolled back.
    o.log(err);
    return {
      ...claimed,
      userMessage: `Baton cancelled the checkpoint before ${tool.name}: it could not be taken within the hook's time limit (a large tree or a busy database), so this step cannot be rolled back.`,
    };
  }
  return claimed ?? {};
}

/**
 * Failures of a checkpoint that another try in another process would meet too (the disk, what is
 * in the workspace or the blob store): said to the user. Others (a busy or unreachable store, a
 * server stopping) are thrown, so the hook can try again in its own process.
 */
const CHECKPOINT_FAILURES: ReadonlySet<string> = new Set([
  "io_error",
  "unsafe_path",
  "blob_corrupt",
  "blob_missing",
  "workspace_unwritable",
]);

/**
 * Files another agent holds claims on (core/lanes.ts), about to be written by this lane. With
 * `lanes.claims` at `refuse-once` (the default) the first attempt is refused with who holds
 * the file and what to do; the agent's next attempt at the same claim goes through, with a
 * warning, so a refused agent never loops. `warn` lets every write through with the warning;
 * `off` says nothing. Each notice is journaled (`claim:noticed`, keyed by the call, so a hook
 * answered twice answers alike), so the holder's side and the dashboard see it too.
 *
 * Advisory: a failure here (a bad `lanes` setting, a store error) is logged and the write goes
 * on, with its checkpoint.
 */
async function claimNotice(
  b: Baton,
  sid: string,
  snap: Snapshot,
  ev: Ev<"before_tool">,
  lane: string,
  files: readonly string[],
  tool: Ev<"before_tool">["tool"],
  o: ToolHookContext,
): Promise<HookResponse | undefined> {
  const now = b.now().getTime();
  // Alone at work (the usual case): no claim to look up.
  if (!othersAtWork(snap, lane, now)) return undefined;
  let holders: ClaimHolder[];
  let refuse: boolean;
  try {
    const mode = readLaneConfig(b.workspace.dir).claims;
    if (mode === "off") return undefined;
    holders = await b.lanes.claimsOn(sid, lane, files, snap);
    if (holders.length === 0) return undefined;
    const key = turnId(ev, tool);
    // The other attempt at this hook (the server's, whose answer was lost) decided first: answer as it did.
    const prior = key !== undefined ? await b.events.find(sid, `${key}.claim`) : undefined;
    // A notice names at most MAX_TURN_FILES claims: those decide, so the retry of the same write
    // (the same claims, in the same order) is let through however many it names.
    const named = holders.slice(0, MAX_TURN_FILES);
    refuse = prior ? prior.data.outcome === "refused" : mode === "refuse-once" && untold(snap, lane, named).length > 0;
    if (!prior) {
      await b.events.append(sid, {
        ...(key !== undefined ? { id: `${key}.claim` } : {}),
        type: "claim:noticed",
        actor: "agent",
        data: {
          lane,
          outcome: refuse ? "refused" : "warned",
          claims: named.map((h) => ({ path: h.path, holder: h.lane, at: h.at })),
        },
      });
    }
  } catch (err) {
    o.log(err);
    return undefined;
  }
  const list = holders
    .slice(0, 10)
    .map((h) => `- ${claimLine(h, now)}`)
    .join("\n");
  const more = holders.length > 10 ? `\n- and ${holders.length - 10} more` : "";
  const first = holders[0] as ClaimHolder;
  const them = new Set(holders.map((h) => h.path)).size === 1 ? "this file" : "these files";
  if (refuse) {
    return {
      deny: {
        reason: `${DENY_OPENINGS.claim} ${them} in its current turn:\n${list}${more}\nWriting now could overwrite its work. Choose one: wait, then re-read the file before editing it; leave the file alone and do the rest of your task; or ask the user. If you still need to write it, re-read it first and try again: Baton lets the next attempt through and notes it for the other agent.`,
      },
      userMessage: `Baton held back ${tool.name} on ${first.path}: ${first.agent} (lane ${first.lane}) is working on it right now${holders.length > 1 ? ` (${holders.length} claims in all)` : ""}.`,
    };
  }
  return {
    context: `Baton: another agent working in this checkout right now also wrote ${them} in its current turn:\n${list}${more}\nRe-read the file before relying on its content, and tell the user you both changed it.`,
    userMessage: `Baton: ${tool.name} writes ${first.path}, which ${first.agent} (lane ${first.lane}) is also working on right now.`,
  };
}

/** The checkpoint the call's before-tool hook took, if it took one (it may have been denied, cancelled, or not needed). */
async function checkpointOf(b: Baton, sid: string, ev: Ev<"after_tool">): Promise<{ id: string; createdAt: string } | undefined> {
  if (ev.tool.kind === "other") return undefined; // no before-tool hook for it
  const { id, prefix } = callCheckpoint(sid, ev, ev.tool);
  let newest: { id: string; seq: number; createdAt: string } | undefined;
  // Only this call's checkpoints are read (the id is its prefix when the call has an id), not the session's hundred.
  for (const c of await b.checkpoints.list(sid, { idPrefix: prefix })) {
    if ((c.id === id || c.id.startsWith(prefix)) && (newest === undefined || c.seq > newest.seq)) newest = c;
  }
  return newest && { id: newest.id, createdAt: newest.createdAt };
}

/** Whether an agent of another family is at work in the session now (only then are there claims to look at). */
function othersAtWork(snap: Snapshot, lane: string, nowMs: number): boolean {
  return Object.values(snap.facets.lanes ?? {}).some((l) => !sameFamily(l.id, lane) && isWorking(snap, l.id, nowMs));
}

/** Seconds of slack for file times against the checkpoint's clock (coarse file system clocks). */
const MTIME_SLACK_MS = 2_000;

/**
 * A shell command's edits are seen only afterwards: the files other agents at work claim that
 * it changed (modified since the command's checkpoint, and no longer what their holder left).
 * Journaled (`claim:noticed`, outcome `shell`), so each holder is told at its next turn.
 */
async function shellTouchedClaims(
  b: Baton,
  sid: string,
  snap: Snapshot,
  ev: Ev<"after_tool">,
  lane: string,
  since: string | undefined,
): Promise<ClaimHolder[]> {
  const storeNow = b.now().getTime();
  if (!othersAtWork(snap, lane, storeNow) || since === undefined) return [];
  // `since` is on the store's clock; file times are this host's. On a shared store that clock is
  // the database's (this host's plus an offset): take the offset away. A workspace's own store
  // keeps this host's clock (or a caller's, in tests), compared as it is.
  const offset = b.store.kind === "sqlite" ? 0 : storeNow - Date.now();
  const from = Date.parse(since) - offset - MTIME_SLACK_MS;
  const changed = (await b.lanes.claimsOfOthers(sid, lane)).filter((c) => {
    if (pathProblem(c.path) !== undefined) return false; // a stored path is read only inside the workspace
    const abs = resolve(b.root, c.path);
    let st: ReturnType<typeof lstatSync> | undefined;
    try {
      st = lstatSync(abs);
    } catch {
      // Gone: when, nothing here tells (its holder's undo, a person, this command): not reported.
      return false;
    }
    if (!st.isFile() || st.mtimeMs < from) return false;
    return (hashFile(abs) ?? "") !== c.hash;
  });
  const fresh = untold(snap, lane, changed);
  if (fresh.length === 0) return [];
  const key = turnId(ev, ev.tool);
  await b.events.append(sid, {
    ...(key !== undefined ? { id: `${key}.shell` } : {}),
    type: "claim:noticed",
    actor: "agent",
    data: { lane, outcome: "shell", claims: fresh.slice(0, 100).map((h) => ({ path: h.path, holder: h.lane, at: h.at })) },
  });
  return fresh;
}

export async function afterTool(b: Baton, ev: Ev<"after_tool">, o: ToolHookContext): Promise<HookResponse> {
  const { tool } = ev;
  // What this hook records of a call that already ran (its turn and the files it wrote, like the
  // ledger's node) commits without waiting for the disk unless `ledger.durability` is full: the
  // checkpoint taken before the tool was committed fully. A crash of the agent, the hook or the
  // server loses none of it on SQLite; a power cut may lose the last calls' records until the next
  // commit that waits (the next checkpoint, a run's start or end). Saves an fsync or two a call.
  const afterTheFact = { durability: o.perCallDurability ?? "relaxed" } as const;
  const sid = await sessionFor(b, ev, o.label, true);
  const checkpoint = await checkpointOf(b, sid, ev);
  const checkpointId = checkpoint?.id;
  const snap = await b.sessions.snapshot(sid);
  const files = tool.kind === "write" ? workspaceFiles(b.root, ev.cwd, tool) : [];
  const error = ev.status === "error" ? (ev.error ?? "the tool call failed") : undefined;
  const fingerprint = error ? failureFingerprint(error) : undefined;
  const nodeId = ledgerNodeId(ev, tool);
  const turn = turnId(ev, tool);

  // The ledger node and the turn (with the files it wrote) are asked for with nothing awaited
  // between them: their writes commit together (one commit, not two).
  const lane = laneOf(ev);
  const ledger = b.ledger.record(sid, {
    lane,
    // The lane's running run (this turn's): an OTLP export nests the call under it.
    runId: runningRuns(snap, ev).at(-1)?.runId,
    toolName: tool.name,
    status: ev.status,
    args: bounded(tool.input),
    ...(error !== undefined ? { error: error.slice(0, MAX_LEDGER_STRING) } : {}),
    ...(ev.output !== undefined ? { observation: bounded(ev.output) } : {}),
    ...(fingerprint ? { fingerprint } : {}),
    ...(nodeId ? { nodeId } : {}),
  });
  // What the detector is told of the call and its result (core/spiral/turn.ts): the same for every agent.
  const seen = spiralTurn({
    tool: tool.name,
    input: tool.input,
    ...(tool.kind === "shell" && tool.command !== undefined ? { command: tool.command } : {}),
    status: ev.status,
    ...(ev.output !== undefined ? { output: ev.output } : {}),
    ...(error !== undefined ? { error } : {}),
  });
  // The files it wrote, read once for the turn (its lane's claims) and for `baton resume`'s list,
  // which is appended with the turn in its transaction. A file `resume` may not list (a link,
  // which could lead out of the workspace: CLAUDE.md -> AGENTS.md is common) is left out of that
  // list only; the turn hashes it as it always did.
  const written = files.length > 0 ? fingerprinted(b.root, files) : undefined;
  const turnInput = {
    ...seen,
    actor: "agent",
    // A turn holds at most MAX_TURN_FILES (a patch of more, or its links' targets past that, would
    // cost the whole turn): the files named first are kept; the resume list holds them all.
    ...(files.length > 0 ? { files: (written?.turnFiles ?? files).slice(0, MAX_TURN_FILES) } : {}),
    ...(checkpointId ? { checkpointId } : {}),
    ...(turn ? { id: turn } : {}),
    lane,
  };
  const filesRecord =
    turn !== undefined && written && written.records.length > 0
      ? { id: `${turn}.resume`, type: "resume:updated", actor: "agent", data: { filesModified: written.records } }
      : undefined;
  const turnRecorded = b.turns.record(sid, { ...turnInput, ...(filesRecord ? { also: [filesRecord] } : {}) }, afterTheFact);
  let recorded: Awaited<ReturnType<Baton["turns"]["record"]>>;
  try {
    recorded = await turnRecorded.catch((err: unknown) => {
      // The other attempt at this hook recorded the files first, as they were then (a time that
      // moved since): the turn on its own.
      if (filesRecord && isBatonError(err, "conflict") && err.details.id === filesRecord.id)
        return b.turns.record(sid, turnInput, afterTheFact);
      throw err;
    });
  } catch (err) {
    // The other attempt at this hook recorded the turn first, with the files as they were then.
    if (!isBatonError(err, "conflict")) throw err;
    await ledger;
    return {};
  }
  // A call without an id: its files' record follows the turn's commit, with no key to share.
  if (turn === undefined && written && written.records.length > 0)
    await b.facets.recordResumeContext(sid, { files: written.records.map((r) => r.path as string) }, "agent", afterTheFact);
  await ledger;

  // What other agents' shell commands did to this lane's files (told once, at its next turn),
  // and what this lane's own shell command did to theirs.
  const notes: string[] = [];
  const mine = Object.entries(snap.facets.lanes?.[lane]?.changedBy ?? {});
  if (mine.length > 0) {
    const by = (id: string) => {
      const l = snap.facets.lanes?.[id];
      return l ? describeLane(l) : id;
    };
    notes.push(
      `Baton: while you worked, another agent's shell command changed files you wrote this turn: ${mine
        .slice(0, 10)
        .map(([path, c]) => `${path} (by ${by(c.lane)})`)
        .join(", ")}${mine.length > 10 ? `, and ${mine.length - 10} more` : ""}. Re-read them before relying on them.`,
    );
  }
  let touched: ClaimHolder[] = [];
  try {
    if (tool.kind === "shell") touched = await shellTouchedClaims(b, sid, snap, ev, lane, checkpoint?.createdAt);
  } catch (err) {
    o.log(err); // advisory: the turn is recorded whatever this says
  }
  if (touched.length > 0) {
    const now = b.now().getTime();
    notes.push(
      `Baton: this shell command changed files another agent working in this checkout right now wrote in its current turn:\n${touched
        .slice(0, 10)
        .map((h) => `- ${claimLine(h, now)}`)
        .join(
          "\n",
        )}${touched.length > 10 ? `\n- and ${touched.length - 10} more` : ""}\nTell the user; the other agent is told too. Do not undo its work by hand.`,
    );
  }
  const note = notes.length > 0 ? notes.join("\n\n") : undefined;
  const userNote =
    touched.length > 0
      ? `Baton: ${tool.name} changed ${touched.length} file(s) another agent is working on (${touched[0]?.path})`
      : undefined;

  if (recorded.detected) {
    const view = {
      paused: true,
      ...(recorded.spiral.pattern !== undefined ? { pattern: recorded.spiral.pattern } : {}),
      ...(recorded.spiral.summary !== undefined ? { summary: recorded.spiral.summary } : {}),
      ...(recorded.spiral.proposedCheckpoint !== undefined ? { proposedCheckpoint: recorded.spiral.proposedCheckpoint } : {}),
    };
    return {
      context: `${renderSpiralPause(sid, view)} Further edits and shell commands in this agent session are refused until then; other agents working in this checkout go on.${note ? `\n\n${note}` : ""}`,
      userMessage: `Baton paused this agent session (lane ${lane}) in session ${sid}: ${recorded.spiral.summary ?? recorded.spiral.pattern ?? "a spiral"}`,
    };
  }
  if (error) {
    const markdown = await hookLessons(
      b,
      ev,
      { sessionId: sid, tool: tool.name, paths: files, prompt: error.slice(0, 500), ...(fingerprint ? { fingerprint } : {}) },
      { k: 3, maxChars: 1_500 },
    );
    if (markdown) return { context: note ? `${note}\n\n${markdown}` : markdown, ...(userNote ? { userMessage: userNote } : {}) };
  }
  return { ...(note ? { context: note } : {}), ...(userNote ? { userMessage: userNote } : {}) };
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

/**
 * The lessons a hook offers, as markdown; none when LESSONS.md cannot be used as it is (a link,
 * not a regular file, too large: a repository may ship any of these), which is logged
 * (`.baton/logs/hooks.log`) so the rest of the hook's answer still stands.
 */
export async function hookLessons(b: Baton, ev: HookEvent, ...args: Parameters<Baton["lessons"]["inject"]>): Promise<string> {
  try {
    return (await b.lessons.inject(...args)).markdown;
  } catch (err) {
    if (!isBatonError(err) || err.code !== "unsafe_path") throw err;
    appendHookFailure(b.workspace.dir, { agent: ev.agent, event: ev.native, error: err });
    return "";
  }
}

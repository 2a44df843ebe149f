/**
 * Recording turns and pausing on spirals. The detector itself is pure (core/spiral/detector.ts); this
 * service reads the workspace's thresholds, runs it over the session's window plus the new
 * turn, and appends the turn and any `spiral:detected` in one batch (one transaction), so a
 * crash never leaves a detection without its turn or the reverse.
 *
 * A turn with a `lane` (core/lanes.ts) is judged in that lane's window and a spiral pauses that
 * lane only; one without (`baton turn record`) is the session's, and its spiral pauses every lane.
 *
 * Detection runs on the snapshot read just before the append. An agent's turns arrive one at a
 * time; if two turns of one lane ever race, the second is judged without the first, and the
 * next turn sees both.
 */
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { randomId } from "../../core/canonical.js";
import { isLaneId, pausedSpiral } from "../../core/lanes.js";
import {
  detectSpiral,
  emptySpiral,
  pushTurn,
  type SpiralThresholds,
  type SpiralView,
  spiralPauseRule,
  spiralThresholds,
  spiralView,
  turnEntry,
} from "../../core/spiral/detector.js";
import type { AppendOptions, AppendResult, EventInput, JsonObject, NextAction, TurnFile, TurnRecord } from "../../core/types.js";
import { badInput } from "../../errors.js";
import { configPath, readConfigFile } from "../../platform/config-file.js";
import { hashFile, workspaceRelative } from "../files.js";
import type { Journal } from "../journal/journal.js";

/** A turn as a caller gives it: status defaults to success; a file may be a bare path, hashed and measured now. */
export interface TurnInput extends Omit<TurnRecord, "files" | "status"> {
  status?: TurnRecord["status"];
  files?: (string | TurnFile)[];
  /** Idempotency key of the `turn:recorded` event (a hook retrying the same turn). */
  id?: string;
  actor?: string;
  /** The agent lane the turn is in (core/lanes.ts): judged in that lane's window, pausing only that lane. */
  lane?: string;
  /**
   * Events appended right after the turn (and the spiral it completes) in the same transaction:
   * all or none. Each carries its `id`, so a retried turn stores them once.
   */
  also?: (EventInput & { id: string })[];
}

export interface TurnResult {
  sessionId: string;
  turn: { id: string; seq: number; duplicate: boolean };
  /** Whether this turn completed a spiral (and paused the session). */
  detected: boolean;
  spiral: SpiralView;
  /** While paused: ask_user with the choices. */
  nextAction?: NextAction;
}

/**
 * The workspace's thresholds: `.baton/config.json` `{"spiral": {...}}` over the defaults. A bad
 * setting is `bad_input` naming the file and every key at fault (platform/config-file.ts).
 */
export function readSpiralConfig(batonDir: string): SpiralThresholds {
  const r = spiralThresholds(readConfigFile(batonDir).spiral);
  if (r.problems.length > 0) throw badInput(`${configPath(batonDir)}: ${r.problems.join("; ")}; fix or remove them`);
  return r.thresholds;
}

export class SpiralService {
  readonly #journal: Journal;
  readonly #root: string;
  readonly #batonDir: string;
  readonly #now: () => Date;

  constructor(journal: Journal, root: string, batonDir: string, now: () => Date) {
    this.#journal = journal;
    this.#root = root;
    this.#batonDir = batonDir;
    this.#now = now;
  }

  async record(sessionId: string, input: TurnInput, opts?: AppendOptions): Promise<TurnResult> {
    const thresholds = readSpiralConfig(this.#batonDir);
    const record = this.#record(input);
    const id = input.id ?? `turn_${randomId()}`;
    const lane = input.lane;
    if (lane !== undefined && !isLaneId(lane)) throw badInput(`lane ${JSON.stringify(lane)} is invalid: "<agent>:<session id>"`);
    const data = { ...(record as unknown as JsonObject), ...(lane !== undefined ? { lane } : {}) };
    const also = input.also ?? [];
    if (!Array.isArray(also)) throw badInput("`also` must be a list of events");
    for (let i = 0; i < also.length; i++) {
      const e = also[i] as Partial<EventInput> | undefined;
      if (typeof e !== "object" || e === null || typeof e.id !== "string")
        throw badInput(`\`also\` event ${i + 1} needs its \`id\` (a retried turn stores it once)`);
      if (e.id === id || e.id === `${id}.spiral`) throw badInput(`\`also\` event ${i + 1} has the id of the turn's own event (${e.id})`);
      // The detector's events are the turn's to make: one here would go round it.
      if (typeof e.type === "string" && /^(turn|spiral):/.test(e.type))
        throw badInput(`\`also\` event ${i + 1} is a ${e.type}: the turn records and judges those itself`);
    }
    // Where the spiral's event sits in the decision, if the turn completes one.
    let spiralAt = -1;
    // Judged inside the append's transaction: a turn of another agent (or a parallel call of this
    // one) recorded meanwhile is in the window judged, not missed by both.
    const judged = await this.#journal.appendFrom(
      sessionId,
      async (snap, tx) => {
        const sp = (lane === undefined ? snap.facets.spiral : snap.facets.lanes?.[lane]?.spiral) ?? emptySpiral();
        const events: EventInput[] = [{ id, type: "turn:recorded", actor: input.actor ?? "agent", data }];
        spiralAt = -1;
        // A paused session records turns without judging them again; a retried turn is not judged twice.
        if (sp.paused || sp.window.some((t) => t.id === id)) return [...events, ...also];
        const entry = turnEntry(record, { id, seq: snap.lastSeq + 1, at: this.#now().toISOString() });
        const found = detectSpiral(pushTurn(sp.window, entry), thresholds);
        if (!found) return [...events, ...also];
        const spiral: JsonObject = {
          pattern: found.pattern,
          summary: found.summary,
          turns: found.turns.map((t) => t.id),
          from: found.from.id,
        };
        if (found.path !== undefined) spiral.path = found.path;
        if (found.signature !== undefined) spiral.signature = found.signature;
        if (found.fingerprint !== undefined) spiral.fingerprint = found.fingerprint;
        // Turns recorded without naming their checkpoint: the session's (or lane's) own
        // checkpoints still know the last good point (the newest one before the spiral's first turn).
        const cp =
          found.proposedCheckpoint ?? (await tx.checkpoints.lastGoodCheckpoint(sessionId, (found.rollbackFrom ?? found.from).at, lane));
        if (cp !== undefined) spiral.proposedCheckpoint = cp;
        if (lane !== undefined) spiral.lane = lane;
        spiralAt = events.length;
        events.push({ id: `${id}.spiral`, type: "spiral:detected", actor: "system", data: spiral });
        return [...events, ...also];
      },
      (snap, flow) => ({
        state: spiralView(lane === undefined ? snap.facets.spiral : snap.facets.lanes?.[lane]?.spiral),
        nextAction: spiralPauseRule({ flow, snap, pendingWork: [] })?.action,
      }),
      opts,
    );
    const results = judged.results;
    const turn = results[0] as AppendResult;
    const { state, nextAction } = judged.after;
    return {
      sessionId,
      turn: { id: turn.event.id, seq: turn.event.seq, duplicate: turn.duplicate },
      detected: spiralAt > 0 && results[spiralAt]?.duplicate === false,
      spiral: state,
      ...(nextAction ? { nextAction } : {}),
    };
  }

  /**
   * Clear a spiral pause (`spiral:cleared`). Without `lane`, every pause of the session (its
   * own and each lane's); with it, that lane's and the session's own. Not paused: nothing is appended.
   */
  async unpause(
    sessionId: string,
    opts: { reason?: string; actor?: string; id?: string; lane?: string } = {},
  ): Promise<{ unpaused: boolean; seq?: number }> {
    // A caller retrying with its key gets the first answer, not "was not paused".
    const prior = opts.id !== undefined ? await this.#journal.find(sessionId, opts.id) : undefined;
    if (prior?.type === "spiral:cleared") return { unpaused: true, seq: prior.seq };
    const view = await this.#journal.read(sessionId);
    const snap = view.snapshot;
    const own = snap.facets.spiral?.paused === true;
    const lanePaused = opts.lane !== undefined && snap.facets.lanes?.[opts.lane]?.spiral?.paused === true;
    if (!own && !lanePaused && (opts.lane !== undefined || pausedSpiral(snap) === undefined)) return { unpaused: false };
    // With a lane: that lane's pause, and the session's own (which stops every lane too).
    const lane = opts.lane;
    const r = await this.#journal.append(sessionId, {
      ...(opts.id !== undefined ? { id: opts.id } : {}),
      type: "spiral:cleared",
      actor: opts.actor ?? "user",
      data: { ...(opts.reason !== undefined ? { reason: opts.reason } : {}), ...(lane !== undefined ? { lane } : {}) },
    });
    return { unpaused: true, seq: r.event.seq };
  }

  /** The record as journaled: paths workspace-relative, bare paths hashed and measured now. */
  #record(input: TurnInput): TurnRecord {
    if (typeof input.tool !== "string" || input.tool.trim() === "") throw badInput("a turn needs its tool (e.g. --tool Edit)");
    const files: TurnFile[] = (input.files ?? []).map((f) =>
      typeof f === "string" ? this.#fileNow(f) : { ...f, path: this.#relative(f.path) },
    );
    const r: TurnRecord = { tool: input.tool.trim(), status: input.status ?? "success" };
    if (input.argsHash !== undefined) r.argsHash = input.argsHash;
    if (files.length > 0) r.files = files;
    if (input.fingerprint !== undefined) r.fingerprint = input.fingerprint;
    if (input.failurePlace !== undefined) r.failurePlace = input.failurePlace;
    if (input.observationHash !== undefined) r.observationHash = input.observationHash;
    if (input.waiting === true) r.waiting = true;
    if (input.waitingOn !== undefined) r.waitingOn = input.waitingOn;
    if (input.checkpointId !== undefined) r.checkpointId = input.checkpointId;
    if (input.progress !== undefined) r.progress = input.progress;
    return r;
  }

  #fileNow(path: string): TurnFile {
    const abs = resolve(this.#root, path);
    const f: TurnFile = { path: this.#relative(path) };
    try {
      const hash = hashFile(abs);
      if (hash !== undefined) {
        f.hash = hash;
        f.size = statSync(abs).size;
      }
    } catch (err) {
      throw badInput(`cannot read ${path} to record it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); name a file`);
    }
    return f;
  }

  #relative(p: string): string {
    return workspaceRelative(this.#root, p) ?? p.replace(/\\/g, "/");
  }
}

/**
 * Rollback: restore the files of a checkpoint (one step back, N steps, or a named one).
 *
 * 1. Choose the target (core/time-travel/checkpoints.ts): a pruned one is `checkpoint_pruned` with the
 *    oldest available, an unknown one `checkpoint_not_found`. Never a fake success.
 * 2. Plan: the version of each path at the target, compared with what is on disk now. Every
 *    path is validated, every parent lstat'ed, every blob read and verified, all before any
 *    file is touched: a hostile manifest or a corrupt blob changes nothing.
 * 3. Write every new version to a temp file beside its target and fsync it; then, in one
 *    transaction, take a safety checkpoint of the files about to change (so the rollback can be
 *    undone) and append `rollback:started`; rename each temp file over its target (or remove
 *    the file); fsync the directories once each; append `rollback:applied`. Killed in between,
 *    each file is wholly old or wholly new (rename is atomic), and status answers
 *    `finish_rollback` with both ways out; the dead process's temp files are removed by the
 *    next rollback.
 *
 * Lanes (core/lanes.ts): a rollback with a `lane` (an agent's "undo that") steps back through
 * that lane's own checkpoints (and its subagents'), and keeps every file another live lane
 * wrote since its target, naming that lane; one without (a person's) takes the whole workspace
 * back and names, in its warnings and `lanes`, the live lanes whose work it takes back.
 *
 * A rollback with a `key` (an agent hook's request id) has an id derived from it, and its
 * `rollback:started` is the claim: appended only if no rollback with that id started, so two
 * attempts at one request (a hook answered by the server, then by its own process) roll back
 * once, and the second answers with the first's result. A `deadline` is checked right before
 * that transaction commits: past it, nothing was changed.
 *
 * About 600 lines: the plan is one decision per path over the same facts (what is on disk now,
 * what each checkpoint of the range says, what the safety checkpoint could store), kept together
 * so every rule that keeps a file is read in one place; the pure parts are core/time-travel/checkpoints.ts.
 *
 * Longer than the house's ~400 lines: planning, the safety checkpoint and the restore are one protocol whose steps share state; split, its crash-safety argument would be scattered.
 */
import { dirname, join } from "node:path";
import type { Backend } from "../../backend/contract.js";
import { randomHex, sha256 } from "../../core/canonical.js";
import { describeLane, familyOf, isLaneId, isLive, keptLane, sameFamily } from "../../core/lanes.js";
import { redactText } from "../../core/redaction/redact.js";
import {
  type Checkpoint,
  type CheckpointInfo,
  chooseTarget,
  composeRestore,
  type RestoreEntry,
  restoredAt,
  type TargetRequest,
} from "../../core/time-travel/checkpoints.js";
import { pathProblem } from "../../core/time-travel/paths.js";
import type { LaneTouched, RollbackChange, RollbackResult } from "../../core/time-travel/rollback-result.js";
import type { LaneRecord } from "../../core/types.js";
import { BatonError, badInput, checkDeadline, isBatonError } from "../../errors.js";
import {
  type Current,
  type CurrentStat,
  canRead,
  commitWrite,
  discardWrite,
  fileAncestor,
  filesUnder,
  fsyncDir,
  hasExactName,
  type PreparedWrite,
  prepareWrite,
  readCurrent,
  removeDeadTemps,
  removeEmptyTree,
  safeRemove,
  statCurrent,
  UNREADABLE_TO_YOU,
  unsafePath,
} from "../../platform/safe-fs.js";
import type { Journal } from "../journal/journal.js";
import { otherMachine, privateHolder } from "./checkpoint-origin.js";
import { type CheckpointService, isIgnoreFile, type TreeKept, toFile, toInfo } from "./checkpoints.js";
import { MAX_DIFF_BYTES, unifiedDiff } from "./file-diff.js";
import { ClaimedElsewhere, rollbackIdFor, settledRollback } from "./rollback-key.js";

export type { ChangeAction, LaneTouched, RollbackChange, RollbackResult } from "../../core/time-travel/rollback-result.js";

export interface RollbackInput {
  /** Steps back (default 1). */
  steps?: number;
  /** A checkpoint id to restore instead of counting steps. */
  to?: string;
  /** Restore only these paths (files, or directories meaning everything under them). */
  files?: readonly string[];
  /** Plan and diff only; change nothing. */
  dryRun?: boolean;
  /** Restore a checkpoint taken on another host (a shared store) into this workspace. */
  otherHost?: boolean;
  /**
   * The `plan` of the dry run the user confirmed: when the plan is different now (an agent
   * wrote a file meanwhile, a checkpoint was added), the rollback is refused with `conflict`
   * and nothing changes.
   */
  expectPlan?: string;
  actor?: string;
  /**
   * Told how far it got, synchronously: `prepare` after each new version is written beside its
   * file (before anything changes; removals have none), then `restore` after each file is
   * restored or removed.
   */
  onProgress?: (p: { phase: "prepare" | "restore"; done: number; total: number; path: string }) => void;
  /**
   * An idempotency key (1-200 characters): a rollback with the key of one already carried out
   * in this session returns that one's result (`repeated`) and changes nothing; one another
   * caller is carrying out is waited for (until `deadline`, else 10 s: then `conflict`).
   */
  key?: string;
  /** Start changing files only by this time (ms since the epoch); later: `deadline_exceeded`, nothing changed. */
  deadline?: number;
  /**
   * An agent lane (core/lanes.ts): step back through its own checkpoints (and its subagents')
   * only, and keep every file another live lane wrote since the target. Default: the whole
   * session, every lane's work included (a person's rollback).
   */
  lane?: string;
}

const EVENT_PATHS = 50;

type LaneRef = { lane: string; agent: string; host?: string };
const named = (r: LaneRef) => describeLane(r);

/**
 * What other live lanes did since a rollback's target: the files they wrote with a tool (each
 * with the lane), and the lanes that ran shell commands, whose edits are not told apart; with
 * what this lane's family left in each file it wrote (core/lanes.ts `wrote`).
 */
interface LaneWrites {
  files: Map<string, LaneRef>;
  shell: LaneRef[];
  own: Map<string, Set<string>>;
}
interface Planned extends RollbackChange {
  /** The blob to restore from (read after planning, all at once). */
  want?: string;
  content?: Buffer | undefined;
  mode?: number;
  /** What is there now (a removal's content is never read: only a dry run's diff reads it). */
  current: Current | CurrentStat;
  /** Kept because changing it could not be undone: said in the result's warnings too. */
  warn?: boolean;
  /** Kept because its version is a private file whose content stayed on this host (said in the warnings). */
  elsewhere?: string;
  /**
   * Written only after the removals: a file whose place holds, now, a directory this rollback
   * empties (`clearDir`), or lies under a file this rollback removes.
   */
  deferred?: boolean;
  clearDir?: boolean;
}

/** A rollback planned: its target, the checkpoints from it on, each path's plan, and what it would say. */
interface Prepared {
  target: CheckpointInfo;
  range: Checkpoint[];
  entries: RestoreEntry[];
  plan: Planned[];
  /** The paths it restores, creates or removes. */
  changing: Planned[];
  planHash: string;
  warnings: string[];
  lanes: LaneTouched[];
}

/** Why a file unreadable to this user (a container's root-owned output) is neither removed nor overwritten. */
const UNREADABLE = "it is unreadable to you, so the safety checkpoint cannot store it";

export class RollbackService {
  readonly #backend: Backend;
  readonly #journal: Journal;
  readonly #cps: CheckpointService;
  readonly #durable: boolean;
  readonly #exactName: typeof hasExactName;

  /**
   * `exactName` (tests only) stands in for the directory lookup that tells whether a path's
   * exact name is in its directory, to play a case-insensitive file system on one that is not.
   */
  readonly #now: () => Date;
  constructor(
    backend: Backend,
    journal: Journal,
    cps: CheckpointService,
    opts: { durable?: boolean; exactName?: typeof hasExactName; now?: () => Date } = {},
  ) {
    this.#now = opts.now ?? (() => new Date());
    this.#backend = backend;
    this.#journal = journal;
    this.#cps = cps;
    this.#durable = opts.durable ?? true;
    this.#exactName = opts.exactName ?? hasExactName;
  }

  get #deps() {
    return { journal: this.#journal, backend: this.#backend };
  }

  async rollback(sessionId: string, input: RollbackInput = {}): Promise<RollbackResult> {
    if (input.steps !== undefined && input.to !== undefined) throw badInput("give a number of steps or --to <checkpoint>, not both");
    if (input.key !== undefined && (typeof input.key !== "string" || input.key.length < 1 || input.key.length > 200))
      throw badInput("a rollback's key must be 1-200 characters");
    if (input.deadline !== undefined && !Number.isFinite(input.deadline)) throw badInput("deadline must be a time in ms since the epoch");
    const keyed = input.key !== undefined && !input.dryRun ? rollbackIdFor(sessionId, input.key) : undefined;
    if (keyed !== undefined) {
      const done = await settledRollback(this.#deps, sessionId, keyed, input.deadline);
      if (done) return done;
    }
    if (input.lane !== undefined && !isLaneId(input.lane))
      throw badInput(`lane ${JSON.stringify(input.lane)} is invalid: "<agent>:<session id>" (see \`baton lanes\`)`);
    if (input.lane !== undefined) input = { ...input, lane: keptLane(await this.#lanes(sessionId), input.lane) };
    checkDeadline(input.deadline, "the rollback");
    const root = this.#cps.root;
    const { target, range, entries, plan, changing, planHash, warnings, lanes } = await this.#prepareSteps(sessionId, input);
    const here = this.#cps.host();
    if (otherMachine(this.#cps, target) && !input.otherHost && !input.dryRun) {
      throw new BatonError(
        "bad_input",
        `checkpoint ${target.id} was taken on ${target.host == null ? "a host the store does not name" : `host ${target.host}`}${target.workspace ? ` in ${target.workspace}` : ""}, not on this host (${here}); nothing was restored. To restore it into this workspace, pass --other-host (otherHost: true)`,
        { checkpointId: target.id, host: target.host, thisHost: here },
      );
    }
    if (input.expectPlan !== undefined && input.expectPlan !== planHash && !input.dryRun) {
      throw new BatonError(
        "conflict",
        `rolling back to ${target.id} would now do something else than the preview showed (a file or a checkpoint changed meanwhile); nothing was changed: preview it again`,
        { checkpointId: target.id },
      );
    }
    // Every blob needed is read and verified (blob_corrupt / blob_missing) before anything changes.
    const wanted = plan.flatMap((p) => (p.want !== undefined ? [p.want] : []));
    const local = new Set(entries.flatMap((e) => ("hash" in e.want && e.want.local ? [e.want.hash] : [])));
    const contents = await this.#cps.blobs.readMany(wanted, local);
    for (const p of plan) if (p.want !== undefined) p.content = contents.get(p.want);

    if (input.dryRun) {
      const diffs = await diffAll(root, changing);
      return {
        dryRun: true,
        plan: planHash,
        target,
        changes: plan.map(publicChange),
        ...counts(plan),
        warnings,
        ...(lanes.length > 0 ? { lanes } : {}),
        diff: diffs,
      };
    }

    // Every new version is written (and fsynced) beside its target first; only renames remain
    // (a deferred one, whose place is not free yet, after the removals).
    const prepared = new Map<Planned, PreparedWrite>();
    const rollbackId = keyed ?? `rb-${randomHex(5)}`;
    const actor = input.actor ?? "user";
    let safety: Awaited<ReturnType<CheckpointService["safety"]>>;
    try {
      const writes = changing.filter((p) => p.action !== "remove" && !p.deferred);
      for (const [i, p] of writes.entries()) {
        prepared.set(p, prepareWrite(root, p.path, p.content as Buffer, p.mode ?? 0o644, this.#durable));
        input.onProgress?.({ phase: "prepare", done: i + 1, total: writes.length, path: p.path });
      }
      // The safety checkpoint and `rollback:started` commit together, by the deadline, and only
      // for the first caller with this key.
      safety = await this.#cps.safety(
        sessionId,
        changing.map((p) => p.path),
        target.id,
        range.map((c) => c.id),
        {
          ...(input.deadline !== undefined ? { deadline: input.deadline } : {}),
          ...(input.lane !== undefined ? { lane: input.lane } : {}),
          after: async (tx, cp) => {
            // A file that grew past maxFileBytes or became a link since it was planned: the
            // safety checkpoint could not store it, so nothing is changed.
            const unstored = cp.files.find((f) => "skipped" in f);
            if (unstored !== undefined && "skipped" in unstored) {
              throw unsafePath(
                unstored.path,
                `changed while the rollback was planned (${unstored.skipped} now), so the safety checkpoint could not store it and nothing was restored; run the rollback again`,
              );
            }
            if (keyed !== undefined && (await tx.findEventById(sessionId, `${rollbackId}.started`))) throw new ClaimedElsewhere(rollbackId);
            await this.#journal.appendInTx(tx, sessionId, [
              {
                id: `${rollbackId}.started`,
                type: "rollback:started",
                actor,
                data: {
                  id: rollbackId,
                  target: target.id,
                  safety: cp.id,
                  files: changing.length,
                  ...(input.to === undefined ? { steps: input.steps ?? 1 } : {}),
                  paths: changing.slice(0, EVENT_PATHS).map((p) => p.path),
                },
              },
            ]);
          },
        },
      );
    } catch (err) {
      for (const w of prepared.values()) discardWrite(root, w);
      if (err instanceof ClaimedElsewhere) {
        const done = await settledRollback(this.#deps, sessionId, rollbackId, input.deadline, true);
        if (done) return done;
      }
      throw err;
    }
    const base = { id: rollbackId, target: target.id, safety: safety.checkpoint.id };
    let done = 0;
    const dirs = new Set<string>();
    const step = (p: Planned) => {
      dirs.add(dirOf(p.path));
      done++;
      input.onProgress?.({ phase: "restore", done, total: changing.length, path: p.path });
    };
    try {
      for (const p of changing) {
        if (p.deferred) continue;
        const w = prepared.get(p);
        if (w) commitWrite(root, w);
        else safeRemove(root, p.path, false);
        step(p);
      }
      for (const p of changing) {
        if (!p.deferred) continue;
        if (p.clearDir) removeEmptyTree(root, p.path); // its files were removed above
        const w = prepareWrite(root, p.path, p.content as Buffer, p.mode ?? 0o644, this.#durable);
        prepared.set(p, w);
        commitWrite(root, w);
        step(p);
      }
    } catch (err) {
      // Stopped part-way (the tree changed under us): the journal stays at rollback:started and
      // the safety checkpoint can finish or undo it; the temp files not yet renamed go now.
      for (const w of prepared.values()) discardWrite(root, w);
      throw err;
    }
    if (this.#durable) for (const d of dirs) fsyncDir(d === "" ? root : join(root, d));
    removeDeadTemps(root, dirs);
    const c = counts(plan);
    await this.#journal.append(sessionId, {
      id: rollbackId,
      type: "rollback:applied",
      actor,
      data: {
        ...base,
        restored: c.restored,
        removed: c.removed,
        unchanged: c.unchanged,
        paths: changing
          .filter((p) => p.action !== "remove")
          .slice(0, EVENT_PATHS)
          .map((p) => p.path),
        removedPaths: changing
          .filter((p) => p.action === "remove")
          .slice(0, EVENT_PATHS)
          .map((p) => p.path),
        plan: planHash,
      },
    });
    return {
      dryRun: false,
      plan: planHash,
      rollbackId,
      target,
      safety: safety.checkpoint.id,
      changes: plan.map(publicChange),
      ...c,
      warnings,
      ...(lanes.length > 0 ? { lanes } : {}),
    };
  }

  /**
   * The paths a rollback to `to` would change now (restore, create or remove), planning it as
   * `rollback` does and changing nothing: after a rollback to `to`, the files changed since it.
   * `lane` plans it as that agent lane's rollback (another live lane's files are kept).
   */
  async wouldChange(sessionId: string, to: string, opts: { lane?: string } = {}): Promise<string[]> {
    const { changing } = await this.#prepare(sessionId, { to, ...(opts.lane !== undefined ? { lane: opts.lane } : {}) }, { to });
    return changing.map((p) => p.path);
  }

  /**
   * The plan for the request. Steps count back from the checkpoint the last rollback restored
   * (core/time-travel/checkpoints.ts `stepCursor`); when files changed since that rollback, that checkpoint
   * is itself the first step back: restoring it again undoes those changes, which is what one
   * step back means then. Whether anything changed is the plan of restoring it, so a change it
   * would not undo (a file no checkpoint from it on knows) does not count.
   */
  async #prepareSteps(sessionId: string, input: RollbackInput): Promise<Prepared> {
    if (input.to !== undefined) return this.#prepare(sessionId, input, { to: input.to });
    const steps = input.steps ?? 1;
    const at = await this.#restoredAt(sessionId, input.lane);
    if (at !== undefined) {
      const again = await this.#prepare(sessionId, input, { to: at });
      if (again.changing.length > 0) return steps === 1 ? again : this.#prepare(sessionId, input, { steps, again: true });
    }
    return this.#prepare(sessionId, input, { steps });
  }

  /** The checkpoint the last rollback restored, while steps count back from it (see #prepareSteps). */
  async #restoredAt(sessionId: string, lane: string | undefined): Promise<string | undefined> {
    const rows = await this.#backend.transaction("read", (tx) => tx.checkpoints.listCheckpoints(sessionId));
    const own = lane === undefined ? rows : rows.filter((r) => r.agentLane && sameFamily(r.agentLane, lane));
    return restoredAt(own.map(toInfo))?.id;
  }

  /**
   * Choose the target and plan every path (what the restore would do, compared with the files
   * now), with the warnings; nothing is read from the blob store and nothing is changed.
   */
  async #prepare(sessionId: string, input: RollbackInput, req: TargetRequest): Promise<Prepared> {
    const root = this.#cps.root;
    const { target, range, prunedInRange, laneWrites, outside } = await this.#choose(sessionId, input, req);
    const warnings: string[] = [];
    if (prunedInRange.length > 0) {
      warnings.push(
        `${prunedInRange.length} checkpoint(s) after ${target.id} were pruned (${prunedInRange.slice(0, 5).join(", ")}${prunedInRange.length > 5 ? ", …" : ""}): files only they recorded are left as they are`,
      );
    }
    const hasTree = range.some((c) => c.kind === "tree");
    const scan = hasTree ? this.#cps.treeScan() : { paths: [], skipped: [] };
    const tree = scan.paths;
    if (scan.skipped.length > 0) {
      // Never a silent success: these files are in no checkpoint, so they stay as they are now.
      warnings.push(
        `${scan.skipped.length} path(s) Baton cannot store or restore safely were left as they are (${scan.skipped
          .slice(0, 5)
          .map((s) => `${JSON.stringify(s.path)}: ${s.reason}`)
          .join("; ")}${scan.skipped.length > 5 ? "; …" : ""}); rename or make readable those to have them checkpointed`,
      );
    }
    let entries = composeRestore(range, tree, hasTree ? await this.#coverage(range, outside) : undefined);
    if (input.files && input.files.length > 0) entries = this.#subset(entries, input.files, warnings);

    // Validate everything before touching anything.
    const bad = entries.flatMap((e) => {
      const p = pathProblem(e.path);
      return p ? [`${JSON.stringify(e.path)} ${p}`] : [];
    });
    if (bad.length > 0) {
      throw new BatonError(
        "unsafe_path",
        `checkpoint ${target.id} names ${bad.length} unsafe path(s) (${bad.slice(0, 3).join("; ")}); nothing was restored. The checkpoint's manifest is damaged or hostile: do not restore it`,
        { checkpointId: target.id, paths: bad },
      );
    }
    const byId = new Map(range.map((c) => [c.id, c]));
    const plan = this.#planAll(root, entries, (e) => privateHolder(this.#cps, byId.get(e.from), e.want));
    const lanes = this.#otherLanes(plan, laneWrites, input.lane, target.id, warnings);
    const away = plan.filter((p) => p.elsewhere !== undefined);
    if (away.length > 0) {
      // Never a silent success: these files keep their current content.
      warnings.push(
        `${away.length} private file(s) were left as they are: their content was checkpointed on ${[...new Set(away.map((p) => p.elsewhere))].join(", ")} and stays there, never in the shared store (checkpoints.private), so this workspace cannot restore it (${away
          .slice(0, 5)
          .map((p) => p.path)
          .join(", ")}${away.length > 5 ? ", …" : ""}); roll back there, or copy them by hand`,
      );
    }
    const unsafe = plan.filter((p) => p.warn);
    if (unsafe.length > 0) {
      warnings.push(
        `${unsafe.length} path(s) were left as they are: changing them could lose data that undoing the rollback could not bring back (${unsafe
          .slice(0, 5)
          .map((p) => `${p.path}: ${p.reason}`)
          .join("; ")}${unsafe.length > 5 ? "; …" : ""}); move or restore them by hand`,
      );
    }
    const changing = plan.filter((p) => p.action === "restore" || p.action === "create" || p.action === "remove");
    return { target, range, entries, plan, changing, planHash: hashPlan(target.id, plan), warnings, lanes };
  }

  /**
   * Other live lanes' writes among the planned changes. For an agent lane's rollback those
   * paths are kept as they are (the other agent's work is never reverted silently); for a
   * person's they go ahead and are named. Either way a warning says which lane wrote what.
   */
  #otherLanes(plan: Planned[], writes: LaneWrites, lane: string | undefined, target: string, warnings: string[]): LaneTouched[] {
    const touched = new Map<string, LaneTouched>();
    const shellKept: string[] = [];
    for (const [i, p] of plan.entries()) {
      if (p.action !== "restore" && p.action !== "create" && p.action !== "remove") continue;
      const w = writes.files.get(p.path);
      if (!w) {
        // Another live agent ran shell commands since: a file not as this lane left it may be its work.
        if (lane !== undefined && writes.shell.length > 0 && !writes.own.get(p.path)?.has(currentHash(this.#cps.root, p))) {
          plan[i] = {
            path: p.path,
            from: p.from,
            current: p.current,
            action: "kept",
            reason: `it is not as this agent left it, and ${writes.shell.map(named).join(", ")} ran shell commands here since, whose edits Baton does not tell apart; a person can take it back too with \`baton rollback --to ${target}\``,
          };
          shellKept.push(p.path);
        }
        continue;
      }
      let t = touched.get(w.lane);
      if (!t) {
        t = { lane: w.lane, agent: w.agent, ...(w.host !== undefined ? { host: w.host } : {}), paths: [] };
        touched.set(w.lane, t);
      }
      t.paths.push(p.path);
      if (lane !== undefined) {
        plan[i] = {
          path: p.path,
          from: p.from,
          current: p.current,
          action: "kept",
          reason: `changed since by ${named(w)}, which is still working here; a person can take it back too with \`baton rollback --to ${target}\` from their own terminal`,
        };
      }
    }
    const list = [...touched.values()];
    if (shellKept.length > 0)
      warnings.push(
        `${shellKept.length} file(s) were left as they are: not as this agent left them, while ${writes.shell.map(named).join(", ")} ran shell commands here since (${shellKept.slice(0, 5).join(", ")}${shellKept.length > 5 ? ", …" : ""})`,
      );
    for (const t of list) {
      const paths = `${t.paths.slice(0, 5).join(", ")}${t.paths.length > 5 ? `, and ${t.paths.length - 5} more` : ""}`;
      const who = named(t);
      warnings.push(
        lane !== undefined
          ? `${t.paths.length} file(s) were left as they are because ${who}, still working here, changed them since (${paths}); a person can take them back too with \`baton rollback --to ${target}\``
          : `this takes back work of ${who}, still working here: ${paths}`,
      );
    }
    return list;
  }

  /** The session's lanes; none for a session that is not there (answered where it is read in a transaction). */
  async #lanes(sessionId: string): Promise<Record<string, LaneRecord>> {
    try {
      return (await this.#journal.read(sessionId)).snapshot.facets.lanes ?? {};
    } catch (err) {
      if (!isBatonError(err, "not_found")) throw err;
      return {};
    }
  }

  async #choose(
    sessionId: string,
    input: RollbackInput,
    req: TargetRequest,
  ): Promise<{
    target: CheckpointInfo;
    range: Checkpoint[];
    prunedInRange: string[];
    laneWrites: LaneWrites;
    /** Each tree checkpoint of the range: the ignore rules it kept (checkpoints.outside_rules, or null), and the paths its walk skipped. */
    outside: Map<string, TreeKept>;
  }> {
    const lanes = await this.#lanes(sessionId);
    return this.#backend.transaction("read", async (tx) => {
      if (!(await tx.getSession(sessionId))) {
        throw new BatonError("not_found", `no session "${sessionId}"; run \`baton session list --all\` to see the sessions`, { sessionId });
      }
      const all = await tx.checkpoints.listCheckpoints(sessionId);
      const lane = input.lane;
      // An agent's undo counts its own lane's steps (its subagents' too); a person's, every step.
      const rows = lane === undefined ? all : all.filter((r) => r.agentLane && sameFamily(r.agentLane, lane));
      const list = rows.map(toInfo);
      const choice = chooseTarget(list, req);
      if (!choice.ok) {
        const o = choice.oldestAvailable;
        throw new BatonError(choice.code, choice.message, {
          sessionId,
          ...("to" in req ? { checkpointId: req.to } : { steps: req.steps }),
          ...(o ? { oldestAvailable: { id: o.id, seq: o.seq, createdAt: o.createdAt, ...(o.label ? { label: o.label } : {}) } } : {}),
        });
      }
      const range: Checkpoint[] = [];
      const byId = new Map(rows.map((r) => [r.id, r]));
      // The ignore rules from outside the workspace each tree checkpoint of the range kept, and
      // what its walk could not look into (#coverage).
      const outside = new Map<string, TreeKept>();
      for (const c of choice.range) {
        const row = byId.get(c.id);
        range.push({ ...c, files: row ? (await this.#cps.files(tx, row)).map(toFile) : [] });
        if (c.kind === "tree") outside.set(c.id, { rules: row?.outsideRules ?? null, skipped: (row?.skipped ?? []).map((s) => s.path) });
      }
      // What other live lanes wrote since the target: the files their checkpoints before a
      // write name (a shell command's edits are not told apart from anyone else's), and their claims.
      const now = this.#now().getTime(); // lanes' times are the store's (the database's clock on PostgreSQL)
      const laneWrites: LaneWrites = { files: new Map(), shell: [], own: new Map() };
      const live = (id: string): LaneRef | undefined => {
        const l = lanes[id] ?? lanes[familyOf(id)];
        return l && isLive(lanes[familyOf(id)] ?? l, now) ? { lane: l.id, agent: l.agent, ...(l.host ? { host: l.host } : {}) } : undefined;
      };
      for (const r of all) {
        // A targeted checkpoint names the files its lane was about to write, a safety one those
        // its lane's rollback changed; a tree one says only that its lane ran a shell command.
        if (r.seq <= choice.target.seq || !r.agentLane || r.prunedAt !== null) continue;
        if (lane !== undefined && sameFamily(r.agentLane, lane)) continue;
        const who = live(r.agentLane);
        if (!who) continue;
        if (r.kind === "tree") {
          if (!laneWrites.shell.some((s) => s.lane === who.lane)) laneWrites.shell.push(who);
          continue;
        }
        for (const f of await this.#cps.files(tx, r)) laneWrites.files.set(f.path, who);
      }
      // The files lanes wrote with a tool (services/agents/lanes.ts): other live lanes' since the
      // target, and every hash this lane's family left (across its runs).
      for (const l of Object.values(lanes)) {
        const own = lane !== undefined && sameFamily(l.id, lane);
        const who = own ? undefined : live(l.id);
        if (!own && !who) continue;
        for (const w of await tx.lanes.laneWrites(sessionId, l.id, own ? "" : choice.target.createdAt, Number.MAX_SAFE_INTEGER)) {
          if (who) laneWrites.files.set(w.path, who);
          else {
            const set = laneWrites.own.get(w.path) ?? new Set<string>();
            set.add(w.hash);
            laneWrites.own.set(w.path, set);
          }
        }
      }
      return { target: choice.target, range, prunedInRange: choice.prunedInRange, laneWrites, outside };
    });
  }

  /**
   * Whether a tree checkpoint of the range covered a path: by the ignore files it lists (the
   * versions the restore writes back), and by today's rules too. A path ignored by either is
   * not the checkpoint's to remove or restore: it never looked at it, or cannot tell.
   */
  async #coverage(
    range: readonly Checkpoint[],
    outside: ReadonlyMap<string, TreeKept>,
  ): Promise<(path: string, cp: Checkpoint) => boolean> {
    const today = this.#cps.treeCovers();
    const hashes = range.flatMap((c) => (c.kind === "tree" ? c.files.filter((f) => isIgnoreFile(f.path) && "hash" in f) : []));
    const texts = await this.#cps.blobs.readMany(hashes.map((f) => (f as { hash: string }).hash));
    const at = new Map<string, (rel: string) => boolean>();
    return (path, cp) => {
      let then = at.get(cp.id);
      if (!then) {
        then = this.#cps.coveredAt(cp, texts, outside.get(cp.id));
        at.set(cp.id, then);
      }
      return today(path) && then(path);
    };
  }

  #subset(entries: RestoreEntry[], files: readonly string[], warnings: string[]): RestoreEntry[] {
    // A link names the file a write through it changed, which is what the checkpoint holds.
    const wanted = this.#cps.withLinkTargets(files.map((f) => this.#cps.relPath(f)));
    const out = entries.filter((e) => wanted.some((w) => e.path === w || e.path.startsWith(`${w}/`)));
    for (const w of wanted) {
      if (!out.some((e) => e.path === w || e.path.startsWith(`${w}/`)))
        warnings.push(`${w} is in no checkpoint from the target on; left as it is`);
    }
    return out;
  }

  /**
   * Plan every entry (sorted by path, so a path comes before those under it). A file and a
   * directory may have traded places since the target: a file to restore where a directory is
   * now is restored when this rollback removes every file under it (the emptied directories
   * go first); a file to restore under a file this rollback removes is written after it.
   * Anything else in the way is kept, with the reason.
   */
  #planAll(root: string, entries: readonly RestoreEntry[], elsewhere: (e: RestoreEntry) => string | undefined): Planned[] {
    const byPath = new Map<string, Planned>();
    const removedFiles = new Set(entries.filter((e) => "absent" in e.want).map((e) => e.path));
    const keptUnder = (dir: string) => entries.some((x) => x.path.startsWith(`${dir}/`) && !("absent" in x.want));
    const memo = new Map<string, "dir" | "file" | "none">();
    const names = new Map<string, ReadonlySet<string>>();
    const plan = entries.map((e) => {
      let p: Planned;
      const blocker = fileAncestor(root, e.path, memo);
      if (blocker !== undefined) {
        // Nothing can be under a file: absent now.
        const base = { path: e.path, from: e.from, current: { kind: "absent" } as const };
        const want = e.want;
        const away = elsewhere(e);
        if ("skipped" in want) p = { ...base, action: "kept", reason: `not stored in ${e.from} (${want.skipped})` };
        else if ("absent" in want) p = { ...base, action: "unchanged" };
        else if (away !== undefined) p = { ...base, action: "kept", elsewhere: away, reason: privateReason(away) };
        else if (byPath.get(blocker)?.action === "remove")
          p = { ...base, action: "create", want: want.hash, mode: want.mode, deferred: true };
        else p = { ...base, action: "kept", reason: `${blocker} is a file now and stays; restore it by hand` };
      } else {
        p = this.#plan(root, e, names, elsewhere(e));
        if (p.action === "kept" && p.current.kind === "other" && p.current.what === "a directory" && "hash" in e.want) {
          const under = filesUnder(root, e.path);
          if (!under.other && under.files.every((f) => removedFiles.has(f)) && !keptUnder(e.path)) {
            p = { path: e.path, from: e.from, current: p.current, action: "restore", want: e.want.hash, mode: e.want.mode };
            p.deferred = p.clearDir = true;
          }
        }
      }
      byPath.set(e.path, p);
      return p;
    });
    // A directory is cleared for a file only if every file under it is really removed (one
    // kept, e.g. too large for the safety checkpoint, keeps the directory and its place).
    for (const [i, p] of plan.entries()) {
      if (!p.clearDir) continue;
      const stays = filesUnder(root, p.path).files.find((f) => byPath.get(f)?.action !== "remove");
      if (stays === undefined) continue;
      const q: Planned = {
        path: p.path,
        from: p.from,
        current: p.current,
        action: "kept",
        reason: `${stays} is kept, so its directory stays; restore it by hand`,
      };
      plan[i] = q;
      byPath.set(p.path, q);
    }
    return plan;
  }

  /**
   * One path's plan. Nothing is changed whose current state the safety checkpoint would
   * record as skipped (a symbolic link, a file over maxFileBytes): undoing the rollback could
   * not bring it back, so it is kept, with a warning. A file is read only to compare it with
   * the version to restore, never to remove it.
   */
  #plan(root: string, e: RestoreEntry, names: Map<string, ReadonlySet<string>>, away: string | undefined): Planned {
    const stat = statCurrent(root, e.path); // lstat's every parent: a symlinked one is unsafe_path
    const base = { path: e.path, from: e.from, current: stat };
    const want = e.want;
    if ("skipped" in want) return { ...base, action: "kept", reason: `not stored in ${e.from} (${want.skipped})` };
    if (away !== undefined) return { ...base, action: "kept", elsewhere: away, reason: privateReason(away) };
    // Configured out of every checkpoint: the safety checkpoint may not store it, so it is not changed.
    if (this.#cps.excluded(e.path))
      return { ...base, action: "kept", reason: "excluded from checkpoints (checkpoints.exclude), so it is never changed by a rollback" };
    // No file then, a directory now: still no file (the files under it are entries of their own).
    if ("absent" in want && stat.kind === "other" && stat.what === "a directory") return { ...base, action: "unchanged" };
    if (stat.kind === "other" && stat.what === "a symbolic link") {
      return { ...base, action: "kept", warn: true, reason: "a symbolic link is there now, which the safety checkpoint cannot store" };
    }
    // Not restored (a FIFO, a socket, a folder where the file was): the rollback's warnings say so.
    if (stat.kind === "other") return { ...base, action: "kept", warn: true, reason: `${stat.what} is there now; restore it by hand` };
    const max = this.#cps.maxFileBytes;
    if (stat.kind === "file" && stat.size > max) {
      return {
        ...base,
        action: "kept",
        warn: true,
        reason: `it is larger than ${max} bytes (maxFileBytes), too large for the safety checkpoint`,
      };
    }
    if ("absent" in want) {
      if (stat.kind === "absent") return { ...base, action: "unchanged" };
      // Found under another name (a case-insensitive file system): that file is not this path's to remove.
      if (!this.#exactName(root, e.path, names)) {
        return {
          ...base,
          action: "kept",
          warn: true,
          reason: "the file found there has another name in its directory (a case-insensitive file system?), so it is not removed",
        };
      }
      // Not read to be removed, but the safety checkpoint must read it.
      if (!canRead(root, e.path)) return { ...base, action: "kept", warn: true, reason: UNREADABLE };
      return { ...base, action: "remove" };
    }
    if (stat.kind === "absent") return { ...base, action: "create", want: want.hash, mode: want.mode };
    const current = readCurrent(root, e.path, max);
    if (current.kind === "other" && current.what.startsWith(UNREADABLE_TO_YOU))
      return { ...base, current, action: "kept", warn: true, reason: UNREADABLE };
    if (current.kind !== "file") {
      return {
        ...base,
        current,
        action: "kept",
        warn: true,
        reason: `it changed while the rollback was planned (${current.kind === "other" ? current.what : "gone"})`,
      };
    }
    if (current.mode === want.mode && sha256(current.content) === want.hash) return { ...base, current, action: "unchanged" };
    return { ...base, current, action: "restore", want: want.hash, mode: want.mode };
  }
}

/** A planned path's content now, as a lane records what it left: sha256, "" when absent. */
function currentHash(root: string, p: Planned): string {
  if (p.current.kind === "absent") return "";
  if (p.current.kind === "file" && "content" in p.current) return sha256(p.current.content);
  const cur = readCurrent(root, p.path, Number.MAX_SAFE_INTEGER);
  return cur.kind === "file" ? sha256(cur.content) : "?";
}

function privateReason(holder: string): string {
  return `a private file: its content stays on ${holder}, which checkpointed it, never in the shared store (checkpoints.private)`;
}

function dirOf(path: string): string {
  const d = dirname(path);
  return d === "." ? "" : d;
}

function counts(plan: readonly Planned[]): { restored: number; removed: number; unchanged: number } {
  let restored = 0;
  let removed = 0;
  let unchanged = 0;
  for (const p of plan) {
    if (p.action === "restore" || p.action === "create") restored++;
    else if (p.action === "remove") removed++;
    else if (p.action === "unchanged") unchanged++;
  }
  return { restored, removed, unchanged };
}

/**
 * What a plan does, as a hash: the same plan over the same files hashes the same. A file read to
 * plan it counts by its content; one only stat'ed (a file the rollback removes) by its mode and
 * size (its content is in the safety checkpoint either way).
 */
function hashPlan(target: string, plan: readonly Planned[]): string {
  const cur = (c: Current | CurrentStat) =>
    c.kind === "file"
      ? `file:${c.mode}:${"content" in c ? sha256(c.content) : `size:${c.size}`}`
      : c.kind === "other"
        ? `other:${c.what}`
        : "absent";
  return sha256(
    JSON.stringify([target, plan.map((p) => [p.path, p.action, p.from, p.want ?? null, p.mode ?? null, cur(p.current)])]),
  ).slice(0, 32);
}

function publicChange(p: Planned): RollbackChange {
  const c: RollbackChange = { path: p.path, action: p.action, from: p.from };
  if (p.reason !== undefined) c.reason = p.reason;
  if (p.diff !== undefined) c.diff = p.diff;
  return c;
}

/** Unified diffs (current → restored) for the planned changes, secrets redacted; sets each change's `diff`. */
async function diffAll(root: string, changing: Planned[]): Promise<string> {
  if (changing.length === 0) return "";
  const out: string[] = [];
  for (const p of changing) {
    // A removal's content was not read to plan it: read it now for the diff, if small enough to show.
    if (p.current.kind === "file" && !("content" in p.current)) {
      const cur = readCurrent(root, p.path, MAX_DIFF_BYTES);
      if (cur.kind === "file") p.current = cur;
      else {
        p.diff = `--- a/${p.path}\n+++ /dev/null\n(${p.current.size} → 0 bytes: too large to diff)\n`;
        out.push(p.diff);
        continue;
      }
    }
    const before = p.current.kind === "file" && "content" in p.current ? p.current.content : Buffer.alloc(0);
    const after = p.content ?? Buffer.alloc(0);
    const oldName = p.current.kind === "file" ? `a/${p.path}` : "/dev/null";
    const newName = p.action === "remove" ? "/dev/null" : `b/${p.path}`;
    // File contents, verbatim: redacted like everything else Baton shows or sends (a dry run's
    // diff reaches the agent through MCP, the dashboard's preview, and `--json` output).
    const text = redactText(await unifiedDiff(oldName, newName, before, after));
    p.diff = text;
    out.push(text);
  }
  return out.join("");
}

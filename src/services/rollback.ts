/**
 * Rollback: restore the files of a checkpoint (one step back, N steps, or a named one).
 *
 * 1. Choose the target (core/checkpoints.ts): a pruned one is `snapshot_expired` with the
 *    oldest available, an unknown one `no_snapshot`. Never a fake success.
 * 2. Plan: the version of each path at the target, compared with what is on disk now. Every
 *    path is validated, every parent lstat'ed, every blob read and verified, all before any
 *    file is touched: a hostile manifest or a corrupt blob changes nothing.
 * 3. Take a safety checkpoint of the files about to change (so the rollback can be undone);
 *    write every new version to a temp file beside its target and fsync it; append
 *    `rollback:started`; rename each temp file over its target (or remove the file); fsync
 *    the directories once each; append `rollback:applied`. Killed in between, each file is
 *    wholly old or wholly new (rename is atomic), and status answers `finish_rollback` with
 *    both ways out; the dead process's temp files are removed by the next rollback.
 */
import { dirname, join } from "node:path";
import type { Backend } from "../backend/contract.js";
import { randomHex, sha256 } from "../core/canonical.js";
import { type Checkpoint, type CheckpointInfo, chooseTarget, composeRestore, type RestoreEntry } from "../core/checkpoints.js";
import { pathProblem } from "../core/paths.js";
import { BatonError, badInput } from "../errors.js";
import { fsyncDir } from "./blobs.js";
import { type CheckpointService, toFile, toInfo } from "./checkpoints.js";
import type { Journal } from "./journal.js";
import {
  type Current,
  commitWrite,
  discardWrite,
  fileAncestor,
  filesUnder,
  type PreparedWrite,
  prepareWrite,
  readCurrent,
  removeDeadTemps,
  removeEmptyTree,
  safeRemove,
} from "./safe-fs.js";

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
  actor?: string;
  /** Called after each file is restored or removed. */
  onProgress?: (p: { done: number; total: number; path: string }) => void;
}

export type ChangeAction = "restore" | "create" | "remove" | "unchanged" | "kept";

export interface RollbackChange {
  path: string;
  action: ChangeAction;
  /** The checkpoint the restored version comes from. */
  from: string;
  /** Why a path is kept as it is. */
  reason?: string;
  /** Dry run: the unified diff from the current file to the restored one. */
  diff?: string;
}

export interface RollbackResult {
  dryRun: boolean;
  /** The rollback's id (also its `rollback:applied` event id); absent on a dry run. */
  rollbackId?: string;
  target: CheckpointInfo;
  /** The checkpoint taken before restoring: roll back to it to undo this rollback. */
  safety?: string;
  changes: RollbackChange[];
  restored: number;
  removed: number;
  unchanged: number;
  warnings: string[];
  /** Dry run: every change as one unified diff. */
  diff?: string;
}

const EVENT_PATHS = 50;
const MAX_DIFF_BYTES = 1024 * 1024;

interface Planned extends RollbackChange {
  /** The blob to restore from (read after planning, all at once). */
  want?: string;
  content?: Buffer | undefined;
  mode?: number;
  current: Current;
  /**
   * Written only after the removals: a file whose place holds, now, a directory this rollback
   * empties (`clearDir`), or lies under a file this rollback removes.
   */
  deferred?: boolean;
  clearDir?: boolean;
}

export class RollbackService {
  readonly #backend: Backend;
  readonly #journal: Journal;
  readonly #cps: CheckpointService;
  readonly #durable: boolean;

  constructor(backend: Backend, journal: Journal, cps: CheckpointService, opts: { durable?: boolean } = {}) {
    this.#backend = backend;
    this.#journal = journal;
    this.#cps = cps;
    this.#durable = opts.durable ?? true;
  }

  async rollback(sessionId: string, input: RollbackInput = {}): Promise<RollbackResult> {
    if (input.steps !== undefined && input.to !== undefined) throw badInput("give a number of steps or --to <checkpoint>, not both");
    const root = this.#cps.root;
    const { target, range, prunedInRange } = await this.#choose(sessionId, input);
    const here = this.#cps.host();
    // Only a store shared across machines holds other machines' checkpoints: restoring one here
    // is a hand-over, not an undo. A store inside the workspace (SQLite) is this machine's even
    // when the host has been renamed since.
    const shared = this.#backend.capabilities.sharedAcrossHosts;
    // The same machine under a new name (containers, CI, laptops) is not another host.
    const sameMachine = target.machine !== undefined && target.machine === this.#cps.machine();
    if (shared && target.host != null && target.host !== here && !sameMachine && !input.otherHost && !input.dryRun) {
      throw new BatonError(
        "bad_input",
        `checkpoint ${target.id} was taken on host ${target.host}${target.workspace ? ` in ${target.workspace}` : ""}, not on this host (${here}); nothing was restored. To restore it into this workspace, pass --other-host (otherHost: true)`,
        { checkpointId: target.id, host: target.host, thisHost: here },
      );
    }
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
        `${scan.skipped.length} file(s) with names Baton cannot store or restore safely were left as they are (${scan.skipped
          .slice(0, 5)
          .map((s) => `${JSON.stringify(s.path)}: ${s.reason}`)
          .join("; ")}${scan.skipped.length > 5 ? "; …" : ""}); rename them to have them checkpointed`,
      );
    }
    let entries = composeRestore(range, tree, hasTree ? this.#cps.treeCovers() : undefined);
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
    const plan = this.#planAll(root, entries);
    // Every blob needed is read and verified (blob_corrupt / blob_missing) before anything changes.
    const wanted = plan.flatMap((p) => (p.want !== undefined ? [p.want] : []));
    const contents = await this.#cps.blobs.readMany(wanted);
    for (const p of plan) if (p.want !== undefined) p.content = contents.get(p.want);
    const changing = plan.filter((p) => p.action === "restore" || p.action === "create" || p.action === "remove");

    if (input.dryRun) {
      const diffs = await diffAll(changing);
      return {
        dryRun: true,
        target,
        changes: plan.map(publicChange),
        ...counts(plan),
        warnings,
        diff: diffs,
      };
    }

    const safety = await this.#cps.safety(
      sessionId,
      changing.map((p) => p.path),
      target.id,
      range.map((c) => c.id),
    );
    // Every new version is written (and fsynced) beside its target first; only renames remain
    // (a deferred one, whose place is not free yet, after the removals).
    const prepared = new Map<Planned, PreparedWrite>();
    try {
      for (const p of changing)
        if (p.action !== "remove" && !p.deferred)
          prepared.set(p, prepareWrite(root, p.path, p.content as Buffer, p.mode ?? 0o644, this.#durable));
    } catch (err) {
      for (const w of prepared.values()) discardWrite(root, w);
      throw err;
    }
    const rollbackId = `rb-${randomHex(5)}`;
    const actor = input.actor ?? "user";
    const base = { id: rollbackId, target: target.id, safety: safety.checkpoint.id };
    await this.#journal.append(sessionId, {
      id: `${rollbackId}.started`,
      type: "rollback:started",
      actor,
      data: {
        ...base,
        files: changing.length,
        ...(input.to === undefined ? { steps: input.steps ?? 1 } : {}),
        paths: changing.slice(0, EVENT_PATHS).map((p) => p.path),
      },
    });
    let done = 0;
    const dirs = new Set<string>();
    const step = (p: Planned) => {
      dirs.add(dirOf(p.path));
      done++;
      input.onProgress?.({ done, total: changing.length, path: p.path });
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
      },
    });
    return { dryRun: false, rollbackId, target, safety: safety.checkpoint.id, changes: plan.map(publicChange), ...c, warnings };
  }

  async #choose(
    sessionId: string,
    input: RollbackInput,
  ): Promise<{ target: CheckpointInfo; range: Checkpoint[]; prunedInRange: string[] }> {
    return this.#backend.transaction("read", async (tx) => {
      if (!(await tx.getSession(sessionId))) {
        throw new BatonError("not_found", `no session "${sessionId}"; run \`baton session list --all\` to see the sessions`, { sessionId });
      }
      const list = (await tx.checkpoints.listCheckpoints(sessionId)).map(toInfo);
      const choice = chooseTarget(list, input.to !== undefined ? { to: input.to } : { steps: input.steps ?? 1 });
      if (!choice.ok) {
        const o = choice.oldestAvailable;
        throw new BatonError(choice.code, choice.message, {
          sessionId,
          ...(input.to !== undefined ? { checkpointId: input.to } : { steps: input.steps ?? 1 }),
          ...(o ? { oldestAvailable: { id: o.id, seq: o.seq, createdAt: o.createdAt, ...(o.label ? { label: o.label } : {}) } } : {}),
        });
      }
      const range: Checkpoint[] = [];
      for (const c of choice.range) range.push({ ...c, files: (await tx.checkpoints.checkpointFiles(c.id)).map(toFile) });
      return { target: choice.target, range, prunedInRange: choice.prunedInRange };
    });
  }

  #subset(entries: RestoreEntry[], files: readonly string[], warnings: string[]): RestoreEntry[] {
    const wanted = files.map((f) => this.#cps.relPath(f));
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
  #planAll(root: string, entries: readonly RestoreEntry[]): Planned[] {
    const byPath = new Map<string, Planned>();
    const removedFiles = new Set(entries.filter((e) => "absent" in e.want).map((e) => e.path));
    const keptUnder = (dir: string) => entries.some((x) => x.path.startsWith(`${dir}/`) && !("absent" in x.want));
    const memo = new Map<string, "dir" | "file" | "none">();
    return entries.map((e) => {
      let p: Planned;
      const blocker = fileAncestor(root, e.path, memo);
      if (blocker !== undefined) {
        // Nothing can be under a file: absent now.
        const base = { path: e.path, from: e.from, current: { kind: "absent" } as const };
        const want = e.want;
        if ("skipped" in want) p = { ...base, action: "kept", reason: `not stored in ${e.from} (${want.skipped})` };
        else if ("absent" in want) p = { ...base, action: "unchanged" };
        else if (byPath.get(blocker)?.action === "remove")
          p = { ...base, action: "create", want: want.hash, mode: want.mode, deferred: true };
        else p = { ...base, action: "kept", reason: `${blocker} is a file now and stays; restore it by hand` };
      } else {
        p = this.#plan(root, e);
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
  }

  #plan(root: string, e: RestoreEntry): Planned {
    const current = readCurrent(root, e.path); // lstat's every parent: a symlinked one is unsafe_path
    const base = { path: e.path, from: e.from, current };
    const want = e.want;
    if ("skipped" in want) return { ...base, action: "kept", reason: `not stored in ${e.from} (${want.skipped})` };
    // No file then, a directory now: still no file (the files under it are entries of their own).
    if ("absent" in want && current.kind === "other" && current.what === "a directory") return { ...base, action: "unchanged" };
    if (current.kind === "other" && current.what !== "a symbolic link") {
      return { ...base, action: "kept", reason: `${current.what} is there now; restore it by hand` };
    }
    if ("absent" in want) return current.kind === "absent" ? { ...base, action: "unchanged" } : { ...base, action: "remove" };
    if (current.kind === "file" && current.mode === want.mode && sha256(current.content) === want.hash)
      return { ...base, action: "unchanged" };
    return { ...base, action: current.kind === "absent" ? "create" : "restore", want: want.hash, mode: want.mode };
  }
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

function publicChange(p: Planned): RollbackChange {
  const c: RollbackChange = { path: p.path, action: p.action, from: p.from };
  if (p.reason !== undefined) c.reason = p.reason;
  if (p.diff !== undefined) c.diff = p.diff;
  return c;
}

function isBinary(b: Uint8Array): boolean {
  const n = Math.min(b.byteLength, 8000);
  for (let i = 0; i < n; i++) if (b[i] === 0) return true;
  return false;
}

/** Unified diffs (current → restored) for the planned changes; sets each change's `diff`. */
async function diffAll(changing: Planned[]): Promise<string> {
  if (changing.length === 0) return "";
  const { createTwoFilesPatch } = await import("diff");
  const out: string[] = [];
  for (const p of changing) {
    const before = p.current.kind === "file" ? p.current.content : Buffer.alloc(0);
    const after = p.content ?? Buffer.alloc(0);
    const oldName = p.current.kind === "file" ? `a/${p.path}` : "/dev/null";
    const newName = p.action === "remove" ? "/dev/null" : `b/${p.path}`;
    let text: string;
    if (isBinary(before) || isBinary(after)) text = `Binary files ${oldName} and ${newName} differ\n`;
    else if (before.byteLength + after.byteLength > MAX_DIFF_BYTES) {
      text = `--- ${oldName}\n+++ ${newName}\n(${before.byteLength} → ${after.byteLength} bytes: too large to diff)\n`;
    } else {
      text = createTwoFilesPatch(oldName, newName, before.toString("utf8"), after.toString("utf8"), undefined, undefined, { context: 3 });
      text = text.replace(/^=+\n/, "");
    }
    p.diff = text;
    out.push(text);
  }
  return out.join("");
}

/**
 * Checkpoints, purely: their shape, which checkpoint a rollback request means, and which file
 * versions restoring it takes. The I/O (blobs, the tree walk, restores) lives in
 * services/time-travel/checkpoints.ts and services/time-travel/rollback.ts.
 *
 * A checkpoint records file versions *before* a change: a targeted checkpoint the files one
 * tool is about to write, a tree checkpoint every file of the workspace, a safety checkpoint
 * the files a rollback is about to overwrite (so every rollback can be undone).
 *
 * Retention (the oldest unpinned checkpoints beyond the limit are pruned) is one indexed query
 * in the backend (`retentionCandidates`), run in the checkpoint's own transaction.
 */

export type CheckpointKind = "targeted" | "tree" | "safety";

/** The most checkpoints a session may keep (`retain`): more than any session makes, and a number every store binds. */
export const MAX_CHECKPOINT_RETAIN = 1_000_000;

/**
 * One file in a checkpoint: its content (a blob hash), or `absent` (it did not exist, so a
 * rollback removes it), or `skipped` (known but not stored, e.g. too large: left as it is).
 * `local`: a private file (checkpoints.private) on a store shared across hosts, whose content
 * stays in the blob store of the workspace that took it, never in the shared store.
 */
export type CheckpointFile =
  | { path: string; hash: string; mode: number; size: number; local?: true }
  | { path: string; absent: true }
  | { path: string; skipped: string };

export interface CheckpointInfo {
  id: string;
  sessionId: string;
  /** Position in the session's checkpoints, from 1; pruned ones keep theirs. */
  seq: number;
  kind: CheckpointKind;
  runId?: string;
  /** The agent turn (tool call) it was taken before, when the caller knows it. */
  turn?: number;
  toolName?: string;
  /** The session's previous checkpoint. */
  parent?: string;
  label?: string;
  pinned: boolean;
  /** Safety checkpoints: the checkpoint the rollback restored. */
  restores?: string;
  createdAt: string;
  /** Set when retention pruned it: the record stays (so a rollback to it says `checkpoint_pruned`), its files do not. */
  prunedAt?: string;
  fileCount: number;
  /** The host and workspace root it was taken on: a store shared by several hosts holds theirs too. */
  host?: string;
  workspace?: string;
  /** A hash of the machine's stable identity (survives host renames), when it had one. */
  machine?: string;
  /** The agent lane that took it (core/lanes.ts); absent for a person's and older checkpoints. */
  lane?: string;
}

export interface Checkpoint extends CheckpointInfo {
  files: CheckpointFile[];
}

/**
 * `again`: the checkpoint the last rollback restored counts as the first step back (files
 * changed since that rollback, so restoring it again undoes them: services/time-travel/rollback.ts decides).
 */
export type TargetRequest = { steps: number; again?: boolean } | { to: string };

export type TargetChoice =
  | { ok: true; target: CheckpointInfo; range: CheckpointInfo[]; prunedInRange: string[] }
  | { ok: false; code: "checkpoint_not_found" | "checkpoint_pruned"; message: string; oldestAvailable?: CheckpointInfo };

/**
 * Where step counting starts. Normally at the newest checkpoint; right after a rollback (the
 * newest checkpoint is its safety checkpoint) at the checkpoint that rollback restored, so
 * `rollback` twice goes two steps back, like an editor's undo; but when files changed since that
 * rollback, that checkpoint is itself the first step back (`again`). Undoing a rollback (restoring
 * a safety checkpoint) puts the cursor back where it was before that rollback.
 */
export function stepCursor(list: readonly CheckpointInfo[]): number {
  let end = list.length;
  for (let guard = 0; guard < list.length && end > 0; guard++) {
    const newest = list[end - 1] as CheckpointInfo;
    if (newest.kind !== "safety") return end;
    const t = newest.restores === undefined ? -1 : list.findIndex((c) => c.id === newest.restores);
    if (t < 0 || t >= end - 1) return end - 1;
    if ((list[t] as CheckpointInfo).kind !== "safety") return t;
    end = t; // undo of a rollback: the cursor before that rollback
  }
  return end;
}

/**
 * The checkpoint the last rollback restored, while steps count back from it (the cursor sits
 * right after a rollback, or after undoing a later one); undefined once a checkpoint was taken
 * since, or when it was pruned.
 */
export function restoredAt(list: readonly CheckpointInfo[]): CheckpointInfo | undefined {
  const at = list[stepCursor(list)];
  return at !== undefined && at.kind !== "safety" && at.prunedAt === undefined ? at : undefined;
}

/** The checkpoint a request names, and the live checkpoints from it to the newest. `list` is ordered by seq, pruned ones included. */
export function chooseTarget(list: readonly CheckpointInfo[], req: TargetRequest): TargetChoice {
  const live = list.filter((c) => c.prunedAt === undefined);
  const oldest = live.find((c) => c.kind !== "safety") ?? live[0];
  const expired = (what: string): TargetChoice => ({
    ok: false,
    code: "checkpoint_pruned",
    message: `${what} was pruned by retention; ${oldest ? `the oldest available is ${oldest.id} (${oldest.createdAt})` : "no checkpoint is left"}. Pin checkpoints you may return to (\`baton checkpoint pin <id>\`), or raise the retention limit`,
    ...(oldest ? { oldestAvailable: oldest } : {}),
  });
  let target: CheckpointInfo | undefined;
  if ("to" in req) {
    target = list.find((c) => c.id === req.to);
    if (!target)
      return {
        ok: false,
        code: "checkpoint_not_found",
        message: `no checkpoint "${req.to}" in this session; list them with \`baton checkpoints\``,
      };
    if (target.prunedAt !== undefined) return expired(`checkpoint ${target.id}`);
  } else {
    if (!Number.isInteger(req.steps) || req.steps < 1)
      return { ok: false, code: "checkpoint_not_found", message: `steps must be a whole number ≥ 1, got ${req.steps}` };
    const cursor = stepCursor(list);
    const again = req.again === true && restoredAt(list) !== undefined;
    const candidates = list.slice(0, again ? cursor + 1 : cursor).filter((c) => c.kind !== "safety");
    if (req.steps > candidates.length) {
      const at = cursor < list.length ? list[cursor] : undefined;
      const where = !at
        ? ""
        : again
          ? ` (files changed since the last rollback, which restored ${at.id}: it is the first step back)`
          : ` (the last rollback restored ${at.id}; steps count back from there)`;
      return {
        ok: false,
        code: "checkpoint_not_found",
        message:
          list.length === 0
            ? "this session has no checkpoint to roll back to; take one with `baton checkpoint` before changing files"
            : `only ${candidates.length} step(s) can be rolled back from here${where}, not ${req.steps}; see \`baton checkpoints\` and use --to <id>`,
      };
    }
    target = candidates[candidates.length - req.steps] as CheckpointInfo;
    if (target.prunedAt !== undefined) return expired(`the checkpoint ${req.steps} step(s) back (${target.id})`);
  }
  const from = target.seq;
  return {
    ok: true,
    target,
    range: live.filter((c) => c.seq >= from),
    prunedInRange: list.filter((c) => c.seq > from && c.prunedAt !== undefined).map((c) => c.id),
  };
}

export interface RestoreEntry {
  path: string;
  /** The version to restore. */
  want: CheckpointFile;
  /** The checkpoint that version comes from. */
  from: string;
}

/**
 * The file versions restoring `range[0]` takes: for each path, the version in the oldest
 * checkpoint of the range that knows it (a checkpoint is taken before a change, so the oldest
 * one holds the state at the target).
 *
 * A tree checkpoint knows every path a tree walk covers, listed or not: one it does not list
 * did not exist then, so it is removed. That holds for a path of the current tree and equally
 * for a path only a later checkpoint names (a file created after it, which an earlier rollback
 * removed and its safety checkpoint recorded): without it, the second of two rollbacks would
 * bring back what the first removed. `covered(path, cp)` says whether the tree checkpoint `cp`
 * covered a path (its walk would have taken the file: not ignored by the rules it was taken
 * with, not in `.baton/`); a path it did not cover is left to later checkpoints, or as it is.
 * By default every path is covered.
 */
export function composeRestore(
  range: readonly Checkpoint[],
  currentTree: readonly string[] = [],
  covered: (path: string, cp: Checkpoint) => boolean = () => true,
): RestoreEntry[] {
  const out = new Map<string, RestoreEntry>();
  // Every path the range or the tree names, until a checkpoint decides it.
  const pending = new Set<string>(currentTree);
  for (const cp of range) for (const f of cp.files) pending.add(f.path);
  const decide = (p: string, want: CheckpointFile, from: string) => {
    out.set(p, { path: p, want, from });
    pending.delete(p);
  };
  for (const cp of range) {
    if (pending.size === 0) break;
    if (cp.kind !== "tree") {
      for (const f of cp.files) if (pending.has(f.path)) decide(f.path, f, cp.id);
      continue;
    }
    const listed = new Map(cp.files.map((f) => [f.path, f]));
    for (const p of [...pending]) {
      const f = listed.get(p);
      if (f) decide(p, f, cp.id);
      else if (covered(p, cp)) decide(p, { path: p, absent: true }, cp.id);
    }
  }
  const sorted = [...out.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  resolveFileDirConflicts(sorted, out, new Map(range.map((c, i) => [c.id, i])));
  return sorted;
}

/**
 * Versions taken from different checkpoints can want a file at `a` and a file at `a/b`: one
 * was a directory when the other was a file. The older checkpoint is nearer the target, so
 * its version wins and the other path is restored as absent (it could not exist then).
 */
function resolveFileDirConflicts(sorted: RestoreEntry[], byPath: Map<string, RestoreEntry>, age: Map<string, number>): void {
  // A skipped version (never stored) takes no part: it is left as it is, and so is what it is in the way of.
  const isFile = (e: RestoreEntry | undefined): e is RestoreEntry => e !== undefined && "hash" in e.want;
  for (const e of sorted) {
    if (!isFile(e)) continue;
    const parts = e.path.split("/");
    for (let i = 1; i < parts.length; i++) {
      const a = byPath.get(parts.slice(0, i).join("/"));
      if (!isFile(a)) continue;
      const loser = (age.get(a.from) ?? 0) <= (age.get(e.from) ?? 0) ? e : a;
      const winner = loser === e ? a : e;
      loser.want = { path: loser.path, absent: true };
      loser.from = winner.from;
      if (loser === e) break;
    }
  }
}

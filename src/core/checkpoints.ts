/**
 * Checkpoints, purely: their shape, which checkpoint a rollback request means, and which file
 * versions restoring it takes. The I/O (blobs, the tree walk, restores) lives in
 * services/checkpoints.ts and services/rollback.ts.
 *
 * A checkpoint records file versions *before* a change: a targeted checkpoint the files one
 * tool is about to write, a tree checkpoint every file of the workspace, a safety checkpoint
 * the files a rollback is about to overwrite (so every rollback can be undone).
 *
 * Retention (the oldest unpinned checkpoints beyond the limit are pruned) is one indexed query
 * in the backend (`retentionCandidates`), run in the checkpoint's own transaction.
 */

export type CheckpointKind = "targeted" | "tree" | "safety";

/**
 * One file in a checkpoint: its content (a blob hash), or `absent` (it did not exist, so a
 * rollback removes it), or `skipped` (known but not stored, e.g. too large: left as it is).
 */
export type CheckpointFile =
  | { path: string; hash: string; mode: number; size: number }
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
  /** Set when retention pruned it: the record stays (so a rollback to it says `snapshot_expired`), its files do not. */
  prunedAt?: string;
  fileCount: number;
  /** The host and workspace root it was taken on: a store shared by several hosts holds theirs too. */
  host?: string;
  workspace?: string;
}

export interface Checkpoint extends CheckpointInfo {
  files: CheckpointFile[];
}

export type TargetRequest = { steps: number } | { to: string };

export type TargetChoice =
  | { ok: true; target: CheckpointInfo; range: CheckpointInfo[]; prunedInRange: string[] }
  | { ok: false; code: "no_snapshot" | "snapshot_expired"; message: string; oldestAvailable?: CheckpointInfo };

/**
 * Where step counting starts. Normally at the newest checkpoint; right after a rollback (the
 * newest checkpoint is its safety checkpoint) at the checkpoint that rollback restored, so
 * `rollback` twice goes two steps back, like an editor's undo. Undoing a rollback (restoring
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

/** The checkpoint a request names, and the live checkpoints from it to the newest. `list` is ordered by seq, pruned ones included. */
export function chooseTarget(list: readonly CheckpointInfo[], req: TargetRequest): TargetChoice {
  const live = list.filter((c) => c.prunedAt === undefined);
  const oldest = live.find((c) => c.kind !== "safety") ?? live[0];
  const expired = (what: string): TargetChoice => ({
    ok: false,
    code: "snapshot_expired",
    message: `${what} was pruned by retention; ${oldest ? `the oldest available is ${oldest.id} (${oldest.createdAt})` : "no checkpoint is left"}. Pin checkpoints you may return to (\`baton checkpoint pin <id>\`), or raise the retention limit`,
    ...(oldest ? { oldestAvailable: oldest } : {}),
  });
  let target: CheckpointInfo | undefined;
  if ("to" in req) {
    target = list.find((c) => c.id === req.to);
    if (!target)
      return { ok: false, code: "no_snapshot", message: `no checkpoint "${req.to}" in this session; list them with \`baton checkpoints\`` };
    if (target.prunedAt !== undefined) return expired(`checkpoint ${target.id}`);
  } else {
    if (!Number.isInteger(req.steps) || req.steps < 1)
      return { ok: false, code: "no_snapshot", message: `steps must be a whole number ≥ 1, got ${req.steps}` };
    const cursor = stepCursor(list);
    const candidates = list.slice(0, cursor).filter((c) => c.kind !== "safety");
    if (req.steps > candidates.length) {
      const at = cursor < list.length ? list[cursor] : undefined;
      const where = at ? ` (the last rollback restored ${at.id}; steps count back from there)` : "";
      return {
        ok: false,
        code: "no_snapshot",
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
 * one holds the state at the target). A tree checkpoint also knows every path of the current
 * tree it does not list: those did not exist then, so they are removed.
 */
export function composeRestore(range: readonly Checkpoint[], currentTree: readonly string[] = []): RestoreEntry[] {
  const out = new Map<string, RestoreEntry>();
  for (const cp of range) {
    for (const f of cp.files) if (!out.has(f.path)) out.set(f.path, { path: f.path, want: f, from: cp.id });
    if (cp.kind === "tree") {
      for (const p of currentTree) if (!out.has(p)) out.set(p, { path: p, want: { path: p, absent: true }, from: cp.id });
    }
  }
  return [...out.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

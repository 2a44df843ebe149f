/**
 * Where a checkpoint was taken, as this workspace sees it: on another machine (restoring it is
 * a hand-over, not an undo), and, for a private file, where its content is kept when this
 * workspace's `.baton/blobs/` does not hold it (services/time-travel/checkpoint-config.ts, "private").
 * Shared by rollback and the checkpoint comparison, which keep such files as they are or name
 * them instead of failing on a blob no store holds.
 */
import type { CheckpointFile, CheckpointInfo } from "../../core/time-travel/checkpoints.js";

/** What these answers read of this workspace (CheckpointService). */
export interface Here {
  readonly root: string;
  readonly sharedAcrossHosts: boolean;
  host(): string;
  machine(): string | undefined;
  readonly blobs: { readonly files: { has(hash: string): boolean } };
}

/**
 * Whether a checkpoint was taken on another machine: only a store shared across machines
 * holds those. A store inside the workspace (SQLite) is this machine's even when the host has
 * been renamed since, and the same machine under a new name (containers, CI, laptops) is not
 * another host either. On a shared store a checkpoint that names no host is another host's:
 * Baton always records the host, so such a row was written by something else.
 *
 * What this defends against: restoring a teammate's checkpoint by mistake ("undo that" meets
 * one on a shared store). Not against someone who can write the shared store: the host and
 * machine a checkpoint names are its own rows' words, which such a writer can copy.
 */
export function otherMachine(here: Here, c: CheckpointInfo | undefined): boolean {
  if (!c || !here.sharedAcrossHosts) return false;
  if (c.host == null) return true;
  if (c.host === here.host()) return false;
  return !(c.machine !== undefined && c.machine === here.machine());
}

/**
 * Where a private file's content is kept when its blob is not in this workspace's
 * `.baton/blobs/`: the workspace that checkpointed it, on this host (another workspace sharing
 * the project, such as a git worktree) or on another ("host-a in /src/app"). Undefined when it
 * is here, or should be (a checkpoint of this workspace: its blob is then missing, which
 * reading it reports).
 */
export function privateHolder(here: Here, c: CheckpointInfo | undefined, f: CheckpointFile): string | undefined {
  if (!("hash" in f) || !f.local || here.blobs.files.has(f.hash)) return undefined;
  if (c && !otherMachine(here, c) && (c.workspace ?? here.root) === here.root) return undefined;
  return `${c?.host ?? "another host"}${c?.workspace ? ` in ${c.workspace}` : ""}`;
}

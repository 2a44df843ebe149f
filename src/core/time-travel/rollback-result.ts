/**
 * What a rollback answers (rollback.ts carries it out; rollback-key.ts answers a repeated one
 * from the journal). Types only.
 */
import type { CheckpointInfo } from "./checkpoints.js";

/** A live lane whose files a rollback changes (a person's) or keeps (an agent's). */
export interface LaneTouched {
  lane: string;
  agent: string;
  host?: string;
  paths: string[];
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
  /**
   * A hash of what this rollback does (or did): the target, and each path's action, source and
   * current content. Give it back as `expectPlan` to apply exactly the previewed plan.
   */
  plan: string;
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
  /**
   * Live agent lanes whose writes since the target this rollback takes back (a person's
   * rollback), or kept because of them (an agent lane's). Absent when none.
   */
  lanes?: LaneTouched[];
  /**
   * The key named a rollback already carried out: this is its result as recorded (`changes`
   * holds the paths its events name, at most 50 restored and 50 removed; no warnings).
   */
  repeated?: boolean;
}

/**
 * What a next-action rule is: the facts it is given (NextActionInput) and what it answers.
 * The rules themselves live with their capability (session/next-action-rules.ts,
 * spiral/detector.ts, time-travel/rollback.ts); session/next-action.ts orders them. Types only,
 * in core's shared files so that those rooms need not import each other.
 */
import type { FlowDefinition } from "./flows/flow.js";
import type { SharedFile } from "./lanes.js";
import type { StaleDecision } from "./locks.js";
import type { NextAction, Snapshot } from "./types.js";

/** A marker found in a file (core/session/markers.ts scans for them). */
export interface MarkerFinding {
  file: string;
  line: number;
  marker: string;
  excerpt: string;
}

/** A session file as scanned for markers. */
export interface ScannedFile {
  /** Workspace-relative POSIX path. */
  path: string;
  findings: MarkerFinding[];
}

/** An open work item, as the rules see it. */
export interface OpenWork {
  kind: string;
  seq: number;
  state: "ready" | "leased";
  /** A leased item whose lease ran out: it will be delivered again. */
  leaseExpired?: boolean;
  /** Leased items: the lease's id, holder and expiry. */
  lease?: { leaseId: string; owner: string; expiresAt: string };
}

/** A work item delivered too often and dead-lettered, not handled since. */
export interface DeadWork {
  kind: string;
  seq: number;
  at: string;
  why: string;
}

/** A file recorded in the resume context that is not as it was recorded. */
export interface ChangedFile {
  path: string;
  state: "changed" | "missing" | "created" | "unreadable";
}

/** A lock held by one of the session's runs, with core/locks.ts's verdict on its holder. */
export interface HeldLock {
  name: string;
  owner: string;
  runId: string;
  expiresAt: string;
  /** `staleDecision` on the holder (expiry, dead pid, reused pid), decided where facts are gathered. */
  decision: StaleDecision;
}

/** A target observed (by `baton target resolve`) that was not the bound one. */
export interface TargetMismatch {
  at: string;
  message: string;
}

export interface NextActionInput {
  flow: FlowDefinition;
  snap: Snapshot;
  /** Open work items of the session (the delivery queue). */
  pendingWork: readonly OpenWork[];
  /** The clock status reads with (deadlines, leases, locks). Default: the snapshot's update time. */
  now?: Date;
  /** The session's files as scanned for markers (only files that could be read). */
  markerFiles?: readonly ScannedFile[];
  /** Resume-context files that changed or vanished since they were recorded. */
  changedFiles?: readonly ChangedFile[];
  deadWork?: readonly DeadWork[];
  locks?: readonly HeldLock[];
  targetMismatch?: TargetMismatch;
  /**
   * A paused spiral that proposed no checkpoint: the newest live checkpoint (not a safety one)
   * taken at or before its first turn, as status found it.
   */
  spiralFallback?: string;
  /** Files two or more agents at work now both wrote in their current turns (core/lanes.ts). */
  sharedFiles?: readonly SharedFile[];
}

/** What a rule says: the action it proposes and, in a few words, the fact behind it. */
export interface RuleAnswer {
  action: NextAction;
  /** The fact, named for another rule's reason: `blocker b1 "No staging credentials" is active`. */
  fact: string;
  /** More follow-ups this rule proposes when it wins. */
  suggest?: NextAction[];
}

export type NextActionRule = (input: NextActionInput) => RuleAnswer | undefined;

export interface RuleEntry {
  name: string;
  rule: NextActionRule;
  /** Shapes the reason and adds a suggestion; never takes the action. */
  advisory?: true;
}

/**
 * A rollback with an idempotency key (an agent hook's request id, services/time-travel/rollback.ts): its id
 * comes from the key, its `rollback:started` is appended only by the first caller (in the
 * transaction of its safety checkpoint), and any other caller with the key gets the first's
 * result as its `rollback:applied` recorded it, rather than rolling back one step further.
 */
import type { Backend } from "../../backend/contract.js";
import { sha256 } from "../../core/canonical.js";
import type { RollbackChange, RollbackResult } from "../../core/time-travel/rollback-result.js";
import { BatonError } from "../../errors.js";
import type { Journal } from "../journal/journal.js";
import { toInfo } from "./checkpoints.js";

/** How long a keyed rollback without a deadline waits for another caller's rollback of that key. */
const REPEAT_WAIT_MS = 10_000;
const POLL_MS = 50;

/** Another caller holds this key's rollback (its `rollback:started` committed first). */
export class ClaimedElsewhere extends BatonError {
  constructor(rollbackId: string) {
    super("conflict", `rollback ${rollbackId} was started by another caller`);
  }
}

/** The id of the rollback carried out for `key` in a session. */
export function rollbackIdFor(sessionId: string, key: string): string {
  return `rb-${sha256(`${sessionId}\u0000${key}`).slice(0, 10)}`;
}

/**
 * The rollback `rollbackId` as carried out (its `rollback:applied`), or undefined when none
 * started (`claimed`: we know one did). One started and not yet applied is waited for (another
 * caller is renaming its files) until `deadline`, else REPEAT_WAIT_MS: then it was interrupted,
 * `conflict`.
 */
export async function settledRollback(
  deps: { journal: Journal; backend: Backend },
  sessionId: string,
  rollbackId: string,
  deadline: number | undefined,
  claimed = false,
): Promise<RollbackResult | undefined> {
  const until = deadline ?? Date.now() + REPEAT_WAIT_MS;
  let started = claimed;
  for (;;) {
    const applied = await deps.journal.find(sessionId, rollbackId);
    if (applied?.type === "rollback:applied") return recorded(deps.backend, applied.data, rollbackId);
    if (!started) {
      if (!(await deps.journal.find(sessionId, `${rollbackId}.started`))) return undefined;
      started = true;
      continue; // it may have been applied since we looked
    }
    if (Date.now() >= until) {
      throw new BatonError(
        "conflict",
        `rollback ${rollbackId} for this request was started by another caller and has not finished (if it was interrupted, \`baton status\` says how to finish or undo it); nothing more was changed`,
        { sessionId, rollbackId },
      );
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** A rollback's result as its `rollback:applied` event recorded it (at most 50 paths of each kind, no warnings). */
async function recorded(backend: Backend, d: Record<string, unknown>, rollbackId: string): Promise<RollbackResult> {
  const str = (v: unknown) => (typeof v === "string" ? v : "");
  const list = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);
  const num = (v: unknown) => (typeof v === "number" ? v : 0);
  const targetId = str(d.target);
  const target = await backend.transaction("read", async (tx) => {
    const row = await tx.checkpoints.getCheckpoint(targetId);
    if (!row) throw new BatonError("checkpoint_not_found", `rollback ${rollbackId} restored checkpoint ${targetId}, which is gone`);
    return toInfo(row);
  });
  const changes: RollbackChange[] = [
    ...list(d.paths).map((path) => ({ path, action: "restore" as const, from: targetId })),
    ...list(d.removedPaths).map((path) => ({ path, action: "remove" as const, from: targetId })),
  ];
  return {
    dryRun: false,
    plan: str(d.plan),
    rollbackId,
    target,
    safety: str(d.safety),
    changes,
    restored: num(d.restored),
    removed: num(d.removed),
    unchanged: num(d.unchanged),
    warnings: [],
    repeated: true,
  };
}

/**
 * The PostgreSQL StoreTx: the journal's queries plus one group per capability, all on one
 * pooled client inside one open transaction (PgCtx).
 */
import type { StoreTx } from "../contract.js";
import { PgCheckpointQueries } from "./pg-checkpoints.js";
import { PgJournalQueries } from "./pg-journal.js";
import { PgLaneQueries } from "./pg-lanes.js";
import { PgLedgerQueries } from "./pg-ledger.js";
import { PgLessonQueries } from "./pg-lessons.js";
import { PgLockQueries, PgRunQueries } from "./pg-locks.js";
import { PgQueueQueries } from "./pg-queue.js";
import type { PgCtx } from "./pg-types.js";

export class PgTx extends PgJournalQueries implements StoreTx {
  readonly queue: PgQueueQueries;
  readonly checkpoints: PgCheckpointQueries;
  readonly lessons: PgLessonQueries;
  readonly locks: PgLockQueries;
  readonly runs: PgRunQueries;
  readonly ledger: PgLedgerQueries;
  readonly lanes: PgLaneQueries;
  /** Actions waiting for the commit (see StoreTx.beforeCommit). */
  readonly pendingActions: (() => void)[] = [];
  beforeCommit(action: () => void): void {
    this.pendingActions.push(action);
  }
  /** Actions for after the commit (see StoreTx.afterCommit). */
  readonly committedActions: (() => void)[] = [];
  afterCommit(action: () => void): void {
    this.committedActions.push(action);
  }
  constructor(c: PgCtx, schema: string) {
    super(c, schema);
    this.queue = new PgQueueQueries(c);
    this.checkpoints = new PgCheckpointQueries(c);
    this.lessons = new PgLessonQueries(c);
    this.locks = new PgLockQueries(c);
    this.runs = new PgRunQueries(c);
    this.ledger = new PgLedgerQueries(c);
    this.lanes = new PgLaneQueries(c);
  }
}

/**
 * The SQLite StoreTx: the journal's queries plus one group per capability. A capability adds
 * its group here and in contract.ts (StoreTx), with its queries in `sqlite-<capability>.ts`.
 */
import type { StoreTx } from "../contract.js";
import { SqliteCheckpointQueries } from "./sqlite-checkpoints.js";
import { SqliteJournalQueries } from "./sqlite-journal.js";
import { SqliteLaneQueries } from "./sqlite-lanes.js";
import { SqliteLedgerQueries } from "./sqlite-ledger.js";
import { SqliteLessonQueries } from "./sqlite-lessons.js";
import { SqliteLockQueries, SqliteRunQueries } from "./sqlite-locks.js";
import { SqliteQueueQueries } from "./sqlite-queue.js";
import type { Prepare } from "./sqlite-types.js";

export class SqliteTx extends SqliteJournalQueries implements StoreTx {
  readonly queue: SqliteQueueQueries;
  readonly checkpoints: SqliteCheckpointQueries;
  readonly lessons: SqliteLessonQueries;
  readonly locks: SqliteLockQueries;
  readonly runs: SqliteRunQueries;
  readonly ledger: SqliteLedgerQueries;
  readonly lanes: SqliteLaneQueries;
  /** Actions waiting for the commit (the backend runs or drops them; see StoreTx.beforeCommit). */
  readonly pendingActions: (() => void)[] = [];
  beforeCommit(action: () => void): void {
    this.pendingActions.push(action);
  }
  /** Actions for after the commit (see StoreTx.afterCommit). */
  readonly committedActions: (() => void)[] = [];
  afterCommit(action: () => void): void {
    this.committedActions.push(action);
  }
  constructor(prepare: Prepare) {
    super(prepare);
    this.queue = new SqliteQueueQueries(prepare);
    this.checkpoints = new SqliteCheckpointQueries(prepare);
    this.lessons = new SqliteLessonQueries(prepare);
    this.locks = new SqliteLockQueries(prepare);
    this.runs = new SqliteRunQueries(prepare);
    this.ledger = new SqliteLedgerQueries(prepare);
    this.lanes = new SqliteLaneQueries(prepare);
  }
}

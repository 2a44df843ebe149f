/** What every PostgreSQL query group gets: one client inside one open transaction. */
export interface PgCtx {
  /** Rows of one statement (prepared by name, once per connection); `changes`: it writes, and returned rows are changes. */
  rows<R>(sql: string, params?: readonly unknown[], changes?: boolean): Promise<R[]>;
  /** Note a change for listeners (a statement whose returned rows do not tell whether it wrote). */
  noteChange(): void;
  /** Run a statement that changes rows; returns how many it changed (and notes the change for listeners). */
  run(sql: string, params?: readonly unknown[]): Promise<number>;
  /** A write transaction: point reads hold their row (`FOR UPDATE`). */
  readonly write: boolean;
  /** Take the blob collector's lock (the checkpoint_meta row) for the rest of the transaction. */
  collectorLock(mode: "share" | "exclusive"): Promise<void>;
}

/** `FOR UPDATE` in a write transaction, nothing in a read one. */
export const held = (c: PgCtx): string => (c.write ? " FOR UPDATE" : "");

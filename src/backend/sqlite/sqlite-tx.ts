/**
 * The SQLite StoreTx: the journal's queries plus one group per capability. A capability adds
 * its group here and in contract.ts (StoreTx), with its queries in `sqlite-<capability>.ts`.
 */
import type { StoreTx } from "../contract.js";
import { SqliteJournalQueries } from "./sqlite-journal.js";
import type { Prepare } from "./sqlite-types.js";

export class SqliteTx extends SqliteJournalQueries implements StoreTx {
  constructor(prepare: Prepare) {
    super(prepare);
  }
}

/**
 * Numbered SQLite migrations. A migration's row is inserted before its DDL, inside one
 * write transaction, so two processes migrating at once serialise on the write lock and the
 * second finds the work done; if a row collides anyway the migrator fails cleanly.
 */
export interface SqliteMigration {
  version: number;
  name: string;
  sql: string;
}

export const SQLITE_MIGRATIONS: readonly SqliteMigration[] = Object.freeze([
  {
    version: 1,
    name: "journal",
    sql: `
      CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        flow TEXT NOT NULL,
        title TEXT,
        phase TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('active', 'completed')),
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        last_seq INTEGER NOT NULL DEFAULT 0
      );
      CREATE INDEX sessions_by_status ON sessions (status, updated_at);
      CREATE TABLE events (
        session_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        id TEXT NOT NULL,
        type TEXT NOT NULL,
        actor TEXT NOT NULL,
        data TEXT NOT NULL,
        revision INTEGER,
        at TEXT NOT NULL,
        body_hash TEXT NOT NULL,
        outcome TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
      ) WITHOUT ROWID;
      CREATE UNIQUE INDEX events_by_id ON events (session_id, id);
      CREATE TABLE snapshots (
        session_id TEXT PRIMARY KEY,
        last_seq INTEGER NOT NULL,
        body TEXT NOT NULL,
        hash TEXT NOT NULL
      );
      CREATE TABLE diagnostics (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT,
        code TEXT NOT NULL,
        severity TEXT NOT NULL,
        message TEXT NOT NULL,
        at TEXT NOT NULL
      );
      CREATE INDEX diagnostics_by_session ON diagnostics (session_id, id);
    `,
  },
]);

/**
 * Numbered SQLite migrations. A migration's row is inserted before its DDL, inside one
 * write transaction, so two processes migrating at once serialise on the write lock and the
 * second finds the work done; if a row collides anyway the migrator fails cleanly.
 *
 * Longer than the house's ~400 lines: the migrations in order, never edited once released: the file only grows.
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
  {
    version: 2,
    name: "queue",
    sql: `
      CREATE TABLE work_items (
        item_no INTEGER PRIMARY KEY AUTOINCREMENT,
        item_id TEXT NOT NULL UNIQUE,
        session_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        kind TEXT NOT NULL,
        priority INTEGER NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('ready', 'leased', 'done', 'dead')),
        attempts INTEGER NOT NULL DEFAULT 0,
        max_attempts INTEGER NOT NULL,
        available_ms INTEGER NOT NULL,
        lease_id TEXT,
        lease_owner TEXT,
        lease_expires_ms INTEGER,
        created_at TEXT NOT NULL,
        done_at TEXT,
        done_by TEXT,
        result_seq INTEGER
      );
      CREATE INDEX work_items_ready ON work_items (state, priority, item_no);
      CREATE INDEX work_items_by_session ON work_items (session_id, state);
      CREATE TABLE leases (
        lease_id TEXT PRIMARY KEY,
        item_id TEXT NOT NULL,
        owner TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        acquired_at TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('active', 'acked', 'released', 'expired')),
        result_seq INTEGER
      );
      CREATE INDEX leases_by_item ON leases (item_id);
    `,
  },
  {
    version: 3,
    name: "checkpoints",
    sql: `
      CREATE TABLE checkpoints (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions (id),
        seq INTEGER NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('targeted', 'tree', 'safety')),
        run_id TEXT,
        turn INTEGER,
        tool_name TEXT,
        parent TEXT,
        label TEXT,
        pinned INTEGER NOT NULL DEFAULT 0,
        restores TEXT,
        created_at TEXT NOT NULL,
        pruned_at TEXT,
        file_count INTEGER NOT NULL,
        UNIQUE (session_id, seq)
      );
      CREATE INDEX checkpoints_live ON checkpoints (session_id, seq) WHERE pruned_at IS NULL;
      -- A manifest is stored as content-addressed chunks (one per directory, like git's tree
      -- objects): a whole-tree checkpoint with a few changed files adds a few chunks, not a row
      -- per file. chunk_blobs lists the blobs a chunk names, written once per new chunk.
      CREATE TABLE manifest_chunks (hash TEXT PRIMARY KEY, body TEXT NOT NULL) WITHOUT ROWID;
      CREATE TABLE chunk_blobs (chunk TEXT NOT NULL, blob TEXT NOT NULL, PRIMARY KEY (chunk, blob)) WITHOUT ROWID;
      CREATE INDEX chunk_blobs_by_blob ON chunk_blobs (blob);
      CREATE TABLE checkpoint_chunks (
        checkpoint_id TEXT NOT NULL,
        idx INTEGER NOT NULL,
        chunk TEXT NOT NULL,
        PRIMARY KEY (checkpoint_id, idx)
      ) WITHOUT ROWID;
      CREATE INDEX checkpoint_chunks_by_chunk ON checkpoint_chunks (chunk);
      CREATE TABLE artifacts (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions (id),
        name TEXT NOT NULL,
        hash TEXT NOT NULL,
        size INTEGER NOT NULL,
        media_type TEXT,
        label TEXT,
        created_at TEXT NOT NULL
      );
      CREATE INDEX artifacts_by_session ON artifacts (session_id, created_at);
      CREATE INDEX artifacts_by_hash ON artifacts (hash);
      CREATE TABLE stat_cache (
        path TEXT PRIMARY KEY,
        size INTEGER NOT NULL,
        mtime_ms REAL NOT NULL,
        ctime_ms REAL NOT NULL,
        ino INTEGER NOT NULL,
        mode INTEGER NOT NULL,
        hash TEXT NOT NULL,
        checked_ms REAL NOT NULL
      ) WITHOUT ROWID;
      CREATE INDEX stat_cache_by_hash ON stat_cache (hash);
      CREATE TABLE checkpoint_meta (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        blob_epoch INTEGER NOT NULL,
        stat_generation INTEGER NOT NULL
      );
      INSERT INTO checkpoint_meta (id, blob_epoch, stat_generation) VALUES (1, 0, 0);
    `,
  },
  {
    version: 4,
    name: "lessons",
    // LESSONS.md stays the truth; this is its search cache, rebuilt when the file's hash changes.
    sql: `
      CREATE VIRTUAL TABLE lessons_fts USING fts5(id UNINDEXED, text, tokenize = 'porter unicode61');
      CREATE TABLE lessons_index (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        hash TEXT NOT NULL,
        lessons INTEGER NOT NULL,
        indexed_at TEXT NOT NULL
      );
    `,
  },
  {
    version: 5,
    name: "ledger",
    // The trajectory ledger: one redacted, bounded row per tool-call attempt. `no` is the global
    // insertion order (the oldest are pruned first); the totals row is kept by triggers so the
    // size cap costs one read per write.
    sql: `
      CREATE TABLE ledger_nodes (
        no INTEGER PRIMARY KEY,
        node_id TEXT NOT NULL UNIQUE,
        session_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        at TEXT NOT NULL,
        tool TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('success', 'error', 'no_progress', 'recovered', 'aborted')),
        target TEXT,
        bytes INTEGER NOT NULL,
        body TEXT NOT NULL,
        UNIQUE (session_id, seq)
      );
      CREATE INDEX ledger_by_target ON ledger_nodes (session_id, target, seq) WHERE target IS NOT NULL;
      CREATE TABLE ledger_totals (id INTEGER PRIMARY KEY CHECK (id = 1), nodes INTEGER NOT NULL, bytes INTEGER NOT NULL);
      INSERT INTO ledger_totals (id, nodes, bytes) VALUES (1, 0, 0);
      CREATE TRIGGER ledger_nodes_counted AFTER INSERT ON ledger_nodes BEGIN
        UPDATE ledger_totals SET nodes = nodes + 1, bytes = bytes + new.bytes WHERE id = 1;
      END;
      CREATE TRIGGER ledger_nodes_uncounted AFTER DELETE ON ledger_nodes BEGIN
        UPDATE ledger_totals SET nodes = nodes - 1, bytes = bytes - old.bytes WHERE id = 1;
      END;
    `,
  },
  {
    version: 6,
    name: "locks",
    // Named locks (the row outlives a release so the epoch only grows) and agent runs'
    // liveness (heartbeats live here, not in the journal).
    sql: `
      CREATE TABLE locks (
        name TEXT PRIMARY KEY,
        epoch INTEGER NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('held', 'free')),
        owner TEXT NOT NULL,
        pid INTEGER,
        host TEXT,
        start_time TEXT,
        run_id TEXT,
        acquired_at TEXT NOT NULL,
        heartbeat_at TEXT NOT NULL,
        expires_ms INTEGER NOT NULL,
        ttl_ms INTEGER NOT NULL,
        released_at TEXT,
        release_reason TEXT
      ) WITHOUT ROWID;
      CREATE TABLE runs (
        session_id TEXT NOT NULL,
        run_id TEXT NOT NULL,
        agent TEXT NOT NULL,
        pid INTEGER,
        host TEXT,
        start_time TEXT,
        started_at TEXT NOT NULL,
        heartbeat_at TEXT NOT NULL,
        ttl_ms INTEGER NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('running', 'ended', 'crashed')),
        ended_at TEXT,
        PRIMARY KEY (session_id, run_id)
      ) WITHOUT ROWID;
      CREATE INDEX runs_running ON runs (state, session_id);
    `,
  },
  {
    version: 7,
    name: "blobs-and-runs",
    // Small blobs move into the database, written in the transaction that references them (one
    // fsync per checkpoint; files written before stay readable where they are). Manifests become
    // runs of unchanged entries (sqlite-checkpoints.ts): each session's tree checkpoints share a
    // lane, so a tree checkpoint writes rows for changed paths only, and the chunk tables with
    // their hash-keyed indexes (a few hundred scattered index pages per checkpoint) go. Live
    // checkpoints' manifests are carried over as lanes of their own.
    sql: `
      CREATE TABLE blobs (
        hash TEXT NOT NULL UNIQUE,
        stored_ms INTEGER NOT NULL,
        data BLOB NOT NULL
      );
      ALTER TABLE checkpoints ADD COLUMN lane TEXT;
      CREATE INDEX checkpoints_by_lane ON checkpoints (lane, seq) WHERE lane IS NOT NULL;
      CREATE INDEX checkpoints_live_by_lane ON checkpoints (lane, seq) WHERE lane IS NOT NULL AND pruned_at IS NULL;
      CREATE TABLE manifest_runs (
        lane TEXT NOT NULL,
        path TEXT NOT NULL,
        from_seq INTEGER NOT NULL,
        until_seq INTEGER,
        state TEXT NOT NULL CHECK (state IN ('file', 'absent', 'skipped')),
        hash TEXT,
        mode INTEGER,
        size INTEGER,
        note TEXT,
        PRIMARY KEY (lane, path, from_seq)
      ) WITHOUT ROWID;
      CREATE INDEX manifest_runs_by_hash ON manifest_runs (hash) WHERE hash IS NOT NULL;
      CREATE INDEX manifest_runs_closed ON manifest_runs (lane, until_seq) WHERE until_seq IS NOT NULL;
      INSERT INTO manifest_runs (lane, path, from_seq, until_seq, state, hash, mode, size, note)
        SELECT c.id, e.value ->> 0, c.seq, NULL, e.value ->> 1, e.value ->> 2, e.value ->> 3, e.value ->> 4, e.value ->> 5
        FROM checkpoints c
        JOIN checkpoint_chunks cc ON cc.checkpoint_id = c.id
        JOIN manifest_chunks m ON m.hash = cc.chunk, json_each(m.body) e
        WHERE c.pruned_at IS NULL;
      DROP TABLE checkpoint_chunks;
      DROP TABLE chunk_blobs;
      DROP TABLE manifest_chunks;
    `,
  },
  {
    // A lease for one session walks that session's ready items in delivery order instead of
    // every session's.
    version: 8,
    name: "queue-session-index",
    sql: `
      CREATE INDEX work_items_session_ready ON work_items (session_id, state, priority, item_no);
      DROP INDEX work_items_by_session;
    `,
  },
  {
    // A whole-tree checkpoint remembers the files it left out (names it cannot store or restore
    // safely), so status names them from one indexed row instead of walking the tree.
    version: 9,
    name: "checkpoint-skipped",
    sql: `
      ALTER TABLE checkpoints ADD COLUMN skipped TEXT;
    `,
  },
  {
    // Where a checkpoint was taken, so a store shared by several hosts can tell a restore into
    // another workspace from an undo (the same schema on both engines).
    version: 10,
    name: "checkpoint-host",
    sql: `
      ALTER TABLE checkpoints ADD COLUMN host TEXT;
      ALTER TABLE checkpoints ADD COLUMN workspace TEXT;
    `,
  },
  {
    // A dead-lettered item stays news until an event handles it (a doneBy event of its kind, or
    // one whose data names it: {"handles": seq}); the queue's append hook marks it, so status
    // asks one indexed query instead of matching diagnostics' text and reading events. Items
    // dead before this step count as handled by any later flow event, as status judged them.
    // 11, not 10: main's 10 is checkpoint-host (added on another branch at the same time).
    version: 11,
    name: "dead-work-handled",
    sql: `
      ALTER TABLE work_items ADD COLUMN handled_seq INTEGER;
      UPDATE work_items SET handled_seq = (
        SELECT min(e.seq) FROM events e
        WHERE e.session_id = work_items.session_id AND e.seq > work_items.seq AND instr(e.type, ':') = 0
      ) WHERE state = 'dead';
      CREATE INDEX work_items_dead_unhandled ON work_items (session_id, item_no) WHERE state = 'dead' AND handled_seq IS NULL;
    `,
  },
  {
    // The machine a checkpoint was taken on, stable across host renames (a hash of
    // /etc/machine-id), so a renamed host is not asked for --other-host on a shared store.
    version: 12,
    name: "checkpoint-machine",
    sql: `
      ALTER TABLE checkpoints ADD COLUMN machine TEXT;
    `,
  },
  {
    // Every checkpoint names its lane (services/time-travel/manifests.ts decides lanes now, the same on
    // every engine): a targeted or safety checkpoint is a lane of its own, named by its id.
    version: 13,
    name: "checkpoint-lanes",
    sql: `
      UPDATE checkpoints SET lane = id WHERE lane IS NULL;
    `,
  },
  {
    // The stat cache and the lessons index become one per workspace scope (a host's workspace):
    // hosts sharing a store have their own files and LESSONS.md. Both are caches, so they are
    // dropped rather than carried over: the next whole-tree checkpoint reads every file once,
    // the next search rebuilds the index. checkpoint_meta.stat_generation is no longer used.
    version: 14,
    name: "per-workspace-caches",
    sql: `
      DROP TABLE stat_cache;
      CREATE TABLE stat_cache (
        scope TEXT NOT NULL,
        path TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime_ms REAL NOT NULL,
        ctime_ms REAL NOT NULL,
        ino INTEGER NOT NULL,
        mode INTEGER NOT NULL,
        hash TEXT NOT NULL,
        checked_ms REAL NOT NULL,
        PRIMARY KEY (scope, path)
      ) WITHOUT ROWID;
      CREATE INDEX stat_cache_by_hash ON stat_cache (hash);
      CREATE TABLE stat_scopes (scope TEXT PRIMARY KEY, generation INTEGER NOT NULL, used_ms INTEGER NOT NULL) WITHOUT ROWID;
      DROP TABLE lessons_fts;
      DROP TABLE lessons_index;
      CREATE VIRTUAL TABLE lessons_fts USING fts5(scope UNINDEXED, id UNINDEXED, text, tokenize = 'porter unicode61');
      CREATE TABLE lessons_index (
        scope TEXT PRIMARY KEY,
        hash TEXT NOT NULL,
        lessons INTEGER NOT NULL,
        indexed_at TEXT NOT NULL
      ) WITHOUT ROWID;
    `,
  },
  {
    // A checkpoint's pin set and cleared again is a state a page may have seen between (the
    // dashboard's version tags, services/session/overview.ts): the count of changes tells the
    // two apart, where `pinned` alone comes back to what it was.
    version: 15,
    name: "checkpoint-pin-changes",
    sql: `
      ALTER TABLE checkpoints ADD COLUMN pin_changes INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    // Agent lanes (core/lanes.ts). The lane that took a checkpoint: an agent's undo steps
    // through its own lane's checkpoints (older checkpoints belong to no lane: a person's, or
    // any agent's). The files each lane wrote (services/agents/lanes.ts): its claims while its run
    // lives, and what it left in them.
    version: 16,
    name: "agent-lanes",
    sql: `
      ALTER TABLE checkpoints ADD COLUMN agent_lane TEXT;
      CREATE TABLE lane_writes (
        session_id TEXT NOT NULL,
        path TEXT NOT NULL,
        lane TEXT NOT NULL,
        at TEXT NOT NULL,
        hash TEXT NOT NULL,
        PRIMARY KEY (session_id, path, lane)
      ) WITHOUT ROWID;
      CREATE INDEX lane_writes_by_lane ON lane_writes (session_id, lane, at);
    `,
  },
  {
    // The host identity of a lock's holder and of a run (platform/process-facts.ts): the host
    // name alone let a container take a live lock from another container of the same name, on
    // a pid that means another process there. Rows from before keep a null: their pid proves
    // nothing (core/locks.ts), they are freed by their expiry.
    version: 17,
    name: "host-identity",
    sql: `
      ALTER TABLE locks ADD COLUMN host_id TEXT;
      ALTER TABLE runs ADD COLUMN host_id TEXT;
    `,
  },
  {
    // As PostgreSQL migration 13: every append moves its session's row (last_seq, updated_at),
    // and with updated_at in an index each append also rewrote an index entry, one more page in
    // the WAL per commit. The list is filtered by status and ordered by created_at, which never
    // changes: the index names those.
    version: 18,
    name: "session-index-by-created",
    sql: `
      DROP INDEX sessions_by_status;
      CREATE INDEX sessions_by_status ON sessions (status, created_at);
    `,
  },
  {
    // No change to the tables, a change to what they mean: an append now writes its session's
    // row only when the phase or status moves, and a session's last_seq and updated_at are read
    // from its newest event (sqlite-journal.ts, SESSION_COLUMNS). An older Baton would read the
    // row's and append at a seq already taken; this version makes one that opens the database
    // refuse (schema_too_new). One already running when it is applied (a server of the old
    // build) keeps its rules until it exits: its next append after a new one fails on the
    // events' key (an error to its caller, nothing written twice), and a hook or CLI of the new
    // build never uses a server of another build.
    version: 19,
    name: "session-last-seq-from-events",
    sql: "",
  },
  {
    // No change to the tables, a change to what they mean: an event appended with an id Baton
    // generated is stored with body_hash '' (its hash is worked out from the row if that id is
    // ever sent again: services/journal/rows.ts, storedBodyHash). An older Baton would take ''
    // for the hash and call a re-send of the same event a conflict; this version makes one that
    // opens the database refuse (schema_too_new), as 19 does; one already running keeps its
    // rules until it exits (a re-send of such an event to it is refused as a conflict, nothing
    // stored twice). And a session's title, stored in its row unredacted by earlier versions,
    // is taken again from its first event, whose data was redacted as it was stored (by the
    // versions that redacted event data; before them both held the same text): a title that
    // cannot be read from there as a string is dropped rather than kept in clear.
    version: 20,
    name: "generated-ids-unhashed",
    sql: `
      UPDATE sessions SET title = (
        SELECT CASE WHEN json_valid(e.data) AND json_type(e.data, '$.title') = 'text' THEN json_extract(e.data, '$.title') END
        FROM events e WHERE e.session_id = sessions.id AND e.seq = 1
      ) WHERE title IS NOT NULL;
    `,
  },
  {
    // A whole-tree checkpoint keeps the ignore rules from outside the workspace it was judged by
    // (configured excludes, the repository's info/exclude and .gitignore files above the
    // workspace), so a rollback judges the paths it does not list by those, not by today's.
    version: 21,
    name: "checkpoint-outside-rules",
    sql: `
      ALTER TABLE checkpoints ADD COLUMN outside_rules TEXT;
    `,
  },
]);

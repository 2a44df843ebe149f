/**
 * Numbered PostgreSQL migrations, applied inside the project's schema (search_path) under a
 * session advisory lock keyed by the schema, so two processes (or hosts) opening the same
 * project at once serialise and the second finds the work done. Each migration's row and DDL
 * commit together. Times are ISO-8601 text like SQLite's, so both engines order them alike.
 *
 * Longer than the house's ~400 lines: the migrations in order, never edited once released: the file only grows.
 */
export interface PgMigration {
  version: number;
  name: string;
  sql: string;
}

export const PG_MIGRATIONS: readonly PgMigration[] = Object.freeze([
  {
    version: 1,
    name: "journal",
    sql: `
      CREATE TABLE sessions (
        id text PRIMARY KEY,
        flow text NOT NULL,
        title text,
        phase text NOT NULL,
        status text NOT NULL CHECK (status IN ('active', 'completed')),
        created_at text NOT NULL,
        updated_at text NOT NULL,
        last_seq bigint NOT NULL DEFAULT 0
      );
      CREATE INDEX sessions_by_status ON sessions (status, updated_at);
      CREATE TABLE events (
        session_id text NOT NULL,
        seq bigint NOT NULL,
        id text NOT NULL,
        type text NOT NULL,
        actor text NOT NULL,
        data text NOT NULL,
        revision bigint,
        at text NOT NULL,
        body_hash text NOT NULL,
        outcome text NOT NULL,
        PRIMARY KEY (session_id, seq)
      );
      CREATE UNIQUE INDEX events_by_id ON events (session_id, id);
      CREATE TABLE snapshots (session_id text PRIMARY KEY, last_seq bigint NOT NULL, body text NOT NULL, hash text NOT NULL);
      CREATE TABLE diagnostics (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        session_id text,
        code text NOT NULL,
        severity text NOT NULL,
        message text NOT NULL,
        at text NOT NULL
      );
      CREATE INDEX diagnostics_by_session ON diagnostics (session_id, id);
    `,
  },
  {
    version: 2,
    name: "queue",
    sql: `
      CREATE TABLE work_items (
        item_no bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        item_id text NOT NULL UNIQUE,
        session_id text NOT NULL,
        seq bigint NOT NULL,
        kind text NOT NULL,
        priority integer NOT NULL,
        state text NOT NULL CHECK (state IN ('ready', 'leased', 'done', 'dead')),
        attempts integer NOT NULL DEFAULT 0,
        max_attempts integer NOT NULL,
        available_ms bigint NOT NULL,
        lease_id text,
        lease_owner text,
        lease_expires_ms bigint,
        created_at text NOT NULL,
        done_at text,
        done_by text,
        result_seq bigint
      );
      CREATE INDEX work_items_ready ON work_items (priority, item_no) WHERE state = 'ready';
      CREATE INDEX work_items_session_ready ON work_items (session_id, state, priority, item_no);
      CREATE INDEX work_items_leased ON work_items (lease_expires_ms) WHERE state = 'leased';
      CREATE TABLE leases (
        lease_id text PRIMARY KEY,
        item_id text NOT NULL,
        owner text NOT NULL,
        attempt integer NOT NULL,
        acquired_at text NOT NULL,
        state text NOT NULL CHECK (state IN ('active', 'acked', 'released', 'expired')),
        result_seq bigint
      );
      CREATE INDEX leases_by_item ON leases (item_id);
    `,
  },
  {
    version: 3,
    name: "checkpoints-and-blobs",
    // One row per file per checkpoint (runs replaced them in migration 10). Blobs are
    // bytea deduplicated by hash, every size, so every host reads the same content.
    sql: `
      CREATE TABLE checkpoints (
        id text PRIMARY KEY,
        session_id text NOT NULL REFERENCES sessions (id),
        seq bigint NOT NULL,
        kind text NOT NULL CHECK (kind IN ('targeted', 'tree', 'safety')),
        run_id text,
        turn integer,
        tool_name text,
        parent text,
        label text,
        pinned boolean NOT NULL DEFAULT false,
        restores text,
        created_at text NOT NULL,
        pruned_at text,
        file_count integer NOT NULL,
        skipped text,
        UNIQUE (session_id, seq)
      );
      CREATE TABLE checkpoint_files (
        checkpoint_id text NOT NULL REFERENCES checkpoints (id),
        path text NOT NULL,
        state text NOT NULL CHECK (state IN ('file', 'absent', 'skipped')),
        hash text,
        mode integer,
        size bigint,
        note text,
        PRIMARY KEY (checkpoint_id, path)
      );
      CREATE INDEX checkpoint_files_by_hash ON checkpoint_files (hash) WHERE hash IS NOT NULL;
      CREATE TABLE artifacts (
        no bigint GENERATED ALWAYS AS IDENTITY,
        id text PRIMARY KEY,
        session_id text NOT NULL REFERENCES sessions (id),
        name text NOT NULL,
        hash text NOT NULL,
        size bigint NOT NULL,
        media_type text,
        label text,
        created_at text NOT NULL
      );
      CREATE INDEX artifacts_by_session ON artifacts (session_id, created_at);
      CREATE INDEX artifacts_by_hash ON artifacts (hash);
      CREATE TABLE stat_cache (
        path text PRIMARY KEY,
        size bigint NOT NULL,
        mtime_ms double precision NOT NULL,
        ctime_ms double precision NOT NULL,
        ino double precision NOT NULL,
        mode integer NOT NULL,
        hash text NOT NULL,
        checked_ms double precision NOT NULL
      );
      CREATE INDEX stat_cache_by_hash ON stat_cache (hash);
      CREATE TABLE checkpoint_meta (
        id integer PRIMARY KEY CHECK (id = 1),
        blob_epoch bigint NOT NULL,
        stat_generation bigint NOT NULL
      );
      INSERT INTO checkpoint_meta (id, blob_epoch, stat_generation) VALUES (1, 0, 0);
      CREATE TABLE blobs (hash text PRIMARY KEY, stored_ms bigint NOT NULL, data bytea NOT NULL);
    `,
  },
  {
    version: 4,
    name: "lessons",
    sql: `
      CREATE TABLE lessons_docs (
        id text NOT NULL,
        text text NOT NULL,
        tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED
      );
      CREATE INDEX lessons_docs_tsv ON lessons_docs USING gin (tsv);
      CREATE TABLE lessons_index (id integer PRIMARY KEY CHECK (id = 1), hash text NOT NULL, lessons integer NOT NULL, indexed_at text NOT NULL);
    `,
  },
  {
    version: 5,
    name: "ledger",
    sql: `
      CREATE TABLE ledger_nodes (
        no bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        node_id text NOT NULL UNIQUE,
        session_id text NOT NULL,
        seq bigint NOT NULL,
        at text NOT NULL,
        tool text NOT NULL,
        status text NOT NULL CHECK (status IN ('success', 'error', 'no_progress', 'recovered', 'aborted')),
        target text,
        bytes integer NOT NULL,
        body text NOT NULL,
        UNIQUE (session_id, seq)
      );
      CREATE INDEX ledger_by_target ON ledger_nodes (session_id, target, seq) WHERE target IS NOT NULL;
      -- Totals kept by a trigger in 16 slots (by session), summed on read: O(1), and writers of
      -- different sessions seldom wait on one hot row.
      CREATE TABLE ledger_totals (slot integer PRIMARY KEY, nodes bigint NOT NULL, bytes bigint NOT NULL);
      INSERT INTO ledger_totals (slot, nodes, bytes) SELECT g, 0, 0 FROM generate_series(0, 15) g;
      CREATE FUNCTION ledger_count() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          UPDATE ledger_totals SET nodes = nodes + 1, bytes = bytes + NEW.bytes WHERE slot = (hashtext(NEW.session_id) & 15);
          RETURN NEW;
        END IF;
        UPDATE ledger_totals SET nodes = nodes - 1, bytes = bytes - OLD.bytes WHERE slot = (hashtext(OLD.session_id) & 15);
        RETURN OLD;
      END $$;
      CREATE TRIGGER ledger_nodes_counted AFTER INSERT OR DELETE ON ledger_nodes FOR EACH ROW EXECUTE FUNCTION ledger_count();
    `,
  },
  {
    version: 6,
    name: "locks",
    sql: `
      CREATE TABLE locks (
        name text PRIMARY KEY,
        epoch bigint NOT NULL,
        state text NOT NULL CHECK (state IN ('held', 'free')),
        owner text NOT NULL,
        pid integer,
        host text,
        start_time text,
        run_id text,
        acquired_at text NOT NULL,
        heartbeat_at text NOT NULL,
        expires_ms bigint NOT NULL,
        ttl_ms bigint NOT NULL,
        released_at text,
        release_reason text
      );
      CREATE TABLE runs (
        session_id text NOT NULL,
        run_id text NOT NULL,
        agent text NOT NULL,
        pid integer,
        host text,
        start_time text,
        started_at text NOT NULL,
        heartbeat_at text NOT NULL,
        ttl_ms bigint NOT NULL,
        state text NOT NULL CHECK (state IN ('running', 'ended', 'crashed')),
        ended_at text,
        PRIMARY KEY (session_id, run_id)
      );
      CREATE INDEX runs_running ON runs (state, session_id);
    `,
  },
  {
    version: 7,
    name: "checkpoint-host",
    sql: `
      ALTER TABLE checkpoints ADD COLUMN host text;
      ALTER TABLE checkpoints ADD COLUMN workspace text;
    `,
  },
  {
    // As SQLite's dead-work-handled: a dead item stays news until an event handles it.
    version: 8,
    name: "dead-work-handled",
    sql: `
      ALTER TABLE work_items ADD COLUMN handled_seq bigint;
      UPDATE work_items w SET handled_seq = (
        SELECT min(e.seq) FROM events e WHERE e.session_id = w.session_id AND e.seq > w.seq AND position(':' in e.type) = 0
      ) WHERE w.state = 'dead';
      CREATE INDEX work_items_dead_unhandled ON work_items (session_id, item_no) WHERE state = 'dead' AND handled_seq IS NULL;
    `,
  },
  {
    // The machine a checkpoint was taken on, stable across host renames (see SQLite's 12).
    version: 9,
    name: "checkpoint-machine",
    sql: `
      ALTER TABLE checkpoints ADD COLUMN machine text;
    `,
  },
  {
    // Manifests become runs of unchanged entries, the same rows as SQLite's (migration 7 there;
    // services/time-travel/manifests.ts decides them): a session's tree checkpoints share a lane, so a tree
    // checkpoint writes rows for changed paths only. Live checkpoints' files are carried over as
    // lanes of their own.
    version: 10,
    name: "manifest-runs",
    sql: `
      ALTER TABLE checkpoints ADD COLUMN lane text;
      UPDATE checkpoints SET lane = id;
      ALTER TABLE checkpoints ALTER COLUMN lane SET NOT NULL;
      CREATE INDEX checkpoints_by_lane ON checkpoints (lane, seq);
      CREATE INDEX checkpoints_live_by_lane ON checkpoints (lane, seq) WHERE pruned_at IS NULL;
      CREATE TABLE manifest_runs (
        lane text NOT NULL,
        path text COLLATE "C" NOT NULL,
        from_seq bigint NOT NULL,
        until_seq bigint,
        state text NOT NULL CHECK (state IN ('file', 'absent', 'skipped')),
        hash text,
        mode integer,
        size bigint,
        note text,
        PRIMARY KEY (lane, path, from_seq)
      );
      CREATE INDEX manifest_runs_by_hash ON manifest_runs (hash) WHERE hash IS NOT NULL;
      CREATE INDEX manifest_runs_closed ON manifest_runs (lane, until_seq) WHERE until_seq IS NOT NULL;
      INSERT INTO manifest_runs (lane, path, from_seq, until_seq, state, hash, mode, size, note)
        SELECT c.id, f.path, c.seq, NULL, f.state, f.hash, f.mode, f.size, f.note
        FROM checkpoint_files f JOIN checkpoints c ON c.id = f.checkpoint_id WHERE c.pruned_at IS NULL;
      DROP TABLE checkpoint_files;
    `,
  },
  {
    // The stat cache and the lessons index become one per workspace scope (a host's workspace):
    // hosts sharing the project have their own files and LESSONS.md, and rebuilt one shared
    // cache in turn. Both are caches: dropped, not carried over. checkpoint_meta.stat_generation
    // is no longer used (a generation per scope is, so a tree checkpoint no longer locks the
    // collector's row to bump it).
    version: 11,
    name: "per-workspace-caches",
    sql: `
      DROP TABLE stat_cache;
      CREATE TABLE stat_cache (
        scope text NOT NULL,
        path text NOT NULL,
        size bigint NOT NULL,
        mtime_ms double precision NOT NULL,
        ctime_ms double precision NOT NULL,
        ino double precision NOT NULL,
        mode integer NOT NULL,
        hash text NOT NULL,
        checked_ms double precision NOT NULL,
        PRIMARY KEY (scope, path)
      );
      CREATE INDEX stat_cache_by_hash ON stat_cache (hash);
      CREATE TABLE stat_scopes (scope text PRIMARY KEY, generation bigint NOT NULL, used_ms bigint NOT NULL);
      DROP TABLE lessons_docs;
      DROP TABLE lessons_index;
      CREATE TABLE lessons_docs (
        scope text NOT NULL,
        id text NOT NULL,
        text text NOT NULL,
        tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED
      );
      CREATE INDEX lessons_docs_tsv ON lessons_docs USING gin (tsv);
      CREATE INDEX lessons_docs_by_scope ON lessons_docs (scope);
      CREATE TABLE lessons_index (scope text PRIMARY KEY, hash text NOT NULL, lessons integer NOT NULL, indexed_at text NOT NULL);
    `,
  },
  {
    // The claim walks ready items in delivery order with "available by now" as its filter. With
    // available_ms in the index, the planner sees that the walk reads no heap row it will not
    // keep, and takes it even before autovacuum has analysed the table; without it, a freshly
    // filled queue was claimed by a bitmap scan that sorted every ready item on each claim
    // (1 ms at 1,500 items instead of 0.05 ms). One session's open items are the only ones
    // looked up by session (claims and status; dead ones have their own index), so that index
    // holds open items only: it no longer grows with every item ever finished, and an ack adds
    // no entry to it.
    version: 12,
    name: "claim-indexes",
    sql: `
      DROP INDEX work_items_ready;
      CREATE INDEX work_items_ready ON work_items (priority, item_no, available_ms) WHERE state = 'ready';
      DROP INDEX work_items_session_ready;
      CREATE INDEX work_items_session_open ON work_items (session_id, priority, item_no) WHERE state IN ('ready', 'leased');
    `,
  },
  {
    // Every append moves its session's row (last_seq, phase, updated_at). With updated_at in an
    // index, each of those updates wrote a new entry in both of the table's indexes and left a
    // dead one behind; the list is filtered by status and ordered by created_at, so the index
    // names those, and free room in each page lets the update stay on it (a HOT update: no index
    // entry at all). Measured: 8 appenders, 590-600 → 730-780 appends/s.
    version: 13,
    name: "session-hot-updates",
    sql: `
      DROP INDEX sessions_by_status;
      CREATE INDEX sessions_by_status ON sessions (status, created_at);
      ALTER TABLE sessions SET (fillfactor = 70);
    `,
  },
  {
    // As SQLite migration 15: how many times a checkpoint's pin was set or cleared, so a pin
    // undone is a new state for the dashboard's version tags, not the one before it.
    version: 14,
    name: "checkpoint-pin-changes",
    sql: `
      ALTER TABLE checkpoints ADD COLUMN pin_changes integer NOT NULL DEFAULT 0;
    `,
  },
  {
    // As SQLite migration 16: the agent lane that took a checkpoint, and the files each lane
    // wrote (core/lanes.ts, services/agents/lanes.ts).
    version: 15,
    name: "agent-lanes",
    sql: `
      ALTER TABLE checkpoints ADD COLUMN agent_lane text;
      CREATE TABLE lane_writes (
        session_id text NOT NULL,
        path text COLLATE "C" NOT NULL,
        lane text COLLATE "C" NOT NULL,
        at text COLLATE "C" NOT NULL,
        hash text NOT NULL,
        PRIMARY KEY (session_id, path, lane)
      );
      CREATE INDEX lane_writes_by_lane ON lane_writes (session_id, lane, at);
    `,
  },
  {
    // As SQLite migration 17: the host identity of a lock's holder and of a run
    // (platform/process-facts.ts); null on rows from before, whose pid then proves nothing.
    version: 16,
    name: "host-identity",
    sql: `
      ALTER TABLE locks ADD COLUMN host_id text;
      ALTER TABLE runs ADD COLUMN host_id text;
    `,
  },
  {
    // As SQLite migration 20: an event appended with an id Baton generated may be stored with
    // body_hash '' (a session's first event, appendIf, appendInTx; appendBatch gives every event
    // its id up front here and hashes it), which an older Baton would misjudge on a re-send, so
    // it refuses the store; and sessions' titles are taken again, redacted, from their first
    // events (a title that cannot be read from there as a string is dropped rather than kept in
    // clear). The replaced rows stay in the table's dead tuples until it is vacuumed.
    version: 17,
    name: "generated-ids-unhashed",
    sql: `
      DO $$
      DECLARE r record; t text;
      BEGIN
        FOR r IN SELECT s.id, e.data FROM sessions s LEFT JOIN events e ON e.session_id = s.id AND e.seq = 1
                 WHERE s.title IS NOT NULL LOOP
          BEGIN
            t := CASE WHEN jsonb_typeof(r.data::jsonb -> 'title') = 'string' THEN r.data::jsonb ->> 'title' END;
          EXCEPTION WHEN others THEN
            t := NULL;
          END;
          UPDATE sessions SET title = t WHERE id = r.id AND title IS DISTINCT FROM t;
        END LOOP;
      END $$;
    `,
  },
  {
    // As SQLite migration 21: a whole-tree checkpoint keeps the ignore rules from outside the
    // workspace it was judged by, for a rollback to judge the paths it does not list by them.
    version: 18,
    name: "checkpoint-outside-rules",
    sql: `
      ALTER TABLE checkpoints ADD COLUMN outside_rules text;
    `,
  },
]);

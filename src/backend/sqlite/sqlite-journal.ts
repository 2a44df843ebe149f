/**
 * The journal's queries on SQLite: sessions, events, snapshots, diagnostics. Each capability
 * (queue, checkpoints, lessons, ...) keeps its queries in its own `sqlite-<capability>.ts`
 * beside this one, and SqliteTx (sqlite-tx.ts) composes them.
 */
import type { DiagnosticRow, EventRow, JournalQueries, SessionMove, SessionRow, SnapshotRow } from "../contract.js";
import { type RawEvent, type RawSession, toEvent, toSession } from "../rows.js";
import type { Prepare } from "./sqlite-types.js";

/**
 * A session's last seq and last change, read from its newest event (one seek of the events'
 * primary key each) rather than from its row: an append then writes no session row unless the
 * session's phase or status moves (one WAL page fewer per append of the four or five it
 * writes). The row's own last_seq and updated_at are those of its last phase or status change;
 * a session without events has them from its start.
 */
export const SESSION_LAST_SEQ = "coalesce((SELECT max(e.seq) FROM events e WHERE e.session_id = s.id), s.last_seq)";
const SESSION_COLUMNS = `s.id, s.flow, s.title, s.phase, s.status, s.created_at,
  coalesce((SELECT e.at FROM events e WHERE e.session_id = s.id AND e.seq > s.last_seq ORDER BY e.seq DESC LIMIT 1), s.updated_at) AS updated_at,
  ${SESSION_LAST_SEQ} AS last_seq`;

const INSERT_EVENTS = "INSERT INTO events (session_id, seq, id, type, actor, data, revision, at, body_hash, outcome) VALUES";
/** 50 rows (500 values) a statement: past that, binding costs more than the calls it saves. */
const ROWS_PER_INSERT = 50;
const INSERT_MANY = `${INSERT_EVENTS} ${Array(ROWS_PER_INSERT).fill("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)").join(", ")}`;

export class SqliteJournalQueries implements JournalQueries {
  readonly #stmt: Prepare;
  constructor(stmt: Prepare) {
    this.#stmt = stmt;
  }
  async getSession(id: string): Promise<SessionRow | undefined> {
    const r = this.#stmt(`SELECT ${SESSION_COLUMNS} FROM sessions s WHERE s.id = ?`).get(id) as RawSession | undefined;
    return r && toSession(r);
  }
  async lockKey(_key: string): Promise<void> {
    // BEGIN IMMEDIATE already made this the only writer: nothing more to hold.
  }
  async insertSession(row: SessionRow): Promise<void> {
    this.#stmt(
      "INSERT INTO sessions (id, flow, title, phase, status, created_at, updated_at, last_seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    ).run(row.id, row.flow, row.title, row.phase, row.status, row.createdAt, row.updatedAt, row.lastSeq);
  }
  async updateSession(id: string, p: Pick<SessionRow, "phase" | "status" | "updatedAt" | "lastSeq">): Promise<void> {
    this.#stmt("UPDATE sessions SET phase = ?, status = ?, updated_at = ?, last_seq = ? WHERE id = ?").run(
      p.phase,
      p.status,
      p.updatedAt,
      p.lastSeq,
      id,
    );
  }
  async listSessions(opts: { includeCompleted: boolean }): Promise<SessionRow[]> {
    const rows = (
      opts.includeCompleted
        ? this.#stmt(`SELECT ${SESSION_COLUMNS} FROM sessions s ORDER BY s.created_at, s.id`).all()
        : this.#stmt(`SELECT ${SESSION_COLUMNS} FROM sessions s WHERE s.status = 'active' ORDER BY s.created_at, s.id`).all()
    ) as RawSession[];
    return rows.map(toSession);
  }
  async findEventById(sessionId: string, id: string): Promise<EventRow | undefined> {
    const r = this.#stmt("SELECT * FROM events WHERE session_id = ? AND id = ?").get(sessionId, id) as RawEvent | undefined;
    return r && toEvent(r);
  }
  async insertEvents(rows: readonly EventRow[], session: SessionMove): Promise<void> {
    this.#insertRows(rows, 0);
    this.#moveRow(session);
  }
  async insertEventsAt(
    expect: { lastSeq: number; flow: string },
    rows: readonly EventRow[],
    session: SessionMove,
    snapshot?: SnapshotRow,
  ): Promise<boolean> {
    // Under the write lock, one statement: the first event goes in only where the session is
    // still at `expect`. A session's seqs run 1, 2, 3… with no gap (only this journal inserts
    // events, always at the newest + 1, and none is ever deleted) and its flow never changes,
    // so "seq lastSeq + 1 is free" is "nobody appended since": the primary key checks it, and
    // the statement reads nothing first (an INSERT … SELECT that read the events' newest seq
    // cost twice as much).
    const r = rows[0];
    if (!r || r.seq !== expect.lastSeq + 1) return false;
    const first = this.#stmt(`${INSERT_EVENTS} (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (session_id, seq) DO NOTHING`).run(
      r.sessionId,
      r.seq,
      r.id,
      r.type,
      r.actor,
      r.data,
      r.revision,
      r.at,
      r.bodyHash,
      r.outcome,
    );
    if (first.changes === 0) return false;
    this.#insertRows(rows, 1);
    this.#moveRow(session);
    if (snapshot) await this.putSnapshot(snapshot);
    return true;
  }
  /** Rows go in ROWS_PER_INSERT to a statement (a batch pays a call per 50 rows, not per row), the rest one by one. */
  #insertRows(rows: readonly EventRow[], from: number): void {
    let i = from;
    if (rows.length - i >= ROWS_PER_INSERT) {
      const many = this.#stmt(INSERT_MANY);
      const args: unknown[] = new Array(ROWS_PER_INSERT * 10);
      for (; rows.length - i >= ROWS_PER_INSERT; i += ROWS_PER_INSERT) {
        for (let k = 0; k < ROWS_PER_INSERT; k++) {
          const r = rows[i + k] as EventRow;
          const a = k * 10;
          args[a] = r.sessionId;
          args[a + 1] = r.seq;
          args[a + 2] = r.id;
          args[a + 3] = r.type;
          args[a + 4] = r.actor;
          args[a + 5] = r.data;
          args[a + 6] = r.revision;
          args[a + 7] = r.at;
          args[a + 8] = r.bodyHash;
          args[a + 9] = r.outcome;
        }
        many.run(args);
      }
    }
    if (i >= rows.length) return;
    const stmt = this.#stmt(`${INSERT_EVENTS} (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    for (; i < rows.length; i++) {
      const r = rows[i] as EventRow;
      stmt.run(r.sessionId, r.seq, r.id, r.type, r.actor, r.data, r.revision, r.at, r.bodyHash, r.outcome);
    }
  }
  /** The session row moves only with its phase or status (SESSION_COLUMNS reads the rest from the events). */
  #moveRow(session: SessionMove): void {
    if (session.from && session.from.phase === session.phase && session.from.status === session.status) return;
    this.#stmt("UPDATE sessions SET phase = ?, status = ?, updated_at = ?, last_seq = ? WHERE id = ? AND (phase <> ? OR status <> ?)").run(
      session.phase,
      session.status,
      session.updatedAt,
      session.lastSeq,
      session.id,
      session.phase,
      session.status,
    );
  }
  async readEvents(sessionId: string, afterSeq: number, limit: number): Promise<EventRow[]> {
    // LIMIT as a literal: SQLite (≥ 3.47) re-prepares a statement at every bind of a LIMIT parameter.
    const rows = (
      Number.isSafeInteger(limit)
        ? this.#stmt(`SELECT * FROM events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ${limit}`).all(sessionId, afterSeq)
        : this.#stmt("SELECT * FROM events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?").all(sessionId, afterSeq, limit)
    ) as RawEvent[];
    return rows.map(toEvent);
  }
  async getSnapshot(sessionId: string): Promise<SnapshotRow | undefined> {
    const r = this.#stmt("SELECT session_id, last_seq, body, hash FROM snapshots WHERE session_id = ?").get(sessionId) as
      | { session_id: string; last_seq: number; body: string; hash: string }
      | undefined;
    return r && { sessionId: r.session_id, lastSeq: r.last_seq, body: r.body, hash: r.hash };
  }
  async putSnapshot(row: SnapshotRow): Promise<void> {
    this.#stmt(
      "INSERT INTO snapshots (session_id, last_seq, body, hash) VALUES (?, ?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET last_seq = excluded.last_seq, body = excluded.body, hash = excluded.hash",
    ).run(row.sessionId, row.lastSeq, row.body, row.hash);
  }
  async insertDiagnostic(row: DiagnosticRow): Promise<void> {
    this.#stmt("INSERT INTO diagnostics (session_id, code, severity, message, at) VALUES (?, ?, ?, ?, ?)").run(
      row.sessionId,
      row.code,
      row.severity,
      row.message,
      row.at,
    );
  }
  async listDiagnostics(sessionId: string, limit: number): Promise<DiagnosticRow[]> {
    const rows = (
      Number.isSafeInteger(limit)
        ? this.#stmt(
            `SELECT session_id, code, severity, message, at FROM diagnostics WHERE session_id = ? ORDER BY id DESC LIMIT ${limit}`,
          ).all(sessionId)
        : this.#stmt("SELECT session_id, code, severity, message, at FROM diagnostics WHERE session_id = ? ORDER BY id DESC LIMIT ?").all(
            sessionId,
            limit,
          )
    ) as {
      session_id: string | null;
      code: string;
      severity: DiagnosticRow["severity"];
      message: string;
      at: string;
    }[];
    return rows.reverse().map((r) => ({ sessionId: r.session_id, code: r.code, severity: r.severity, message: r.message, at: r.at }));
  }
}

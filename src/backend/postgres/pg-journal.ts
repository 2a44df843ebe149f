/** The journal's queries on PostgreSQL: sessions, events, snapshots, diagnostics. */
import { BatonError } from "../../errors.js";
import type { DiagnosticRow, EventRow, JournalQueries, SessionMove, SessionRow, SnapshotRow } from "../contract.js";
import { type RawEvent, type RawSession, toEvent, toSession } from "../rows.js";
import { held, type PgCtx } from "./pg-types.js";

/**
 * The events as the ten parameters $1 to $10 of EVENTS_FROM: for one event (nearly every
 * append) the values themselves, for a batch one array of each for `unnest`. Measured on the
 * server: one row through `unnest` of ten arrays cost 140-190 µs of backend CPU per append
 * statement, the plain values 50-90 µs (parsing ten array literals and the set-returning scan
 * were most of the statement), and the client no longer encodes ten arrays.
 */
const eventColumns = (rows: readonly EventRow[]): unknown[] => {
  if (rows.length === 1) {
    const r = rows[0] as EventRow;
    return [r.sessionId, r.seq, r.id, r.type, r.actor, r.data, r.revision, r.at, r.bodyHash, r.outcome];
  }
  return [
    rows.map((r) => r.sessionId),
    rows.map((r) => r.seq),
    rows.map((r) => r.id),
    rows.map((r) => r.type),
    rows.map((r) => r.actor),
    rows.map((r) => r.data),
    rows.map((r) => r.revision),
    rows.map((r) => r.at),
    rows.map((r) => r.bodyHash),
    rows.map((r) => r.outcome),
  ];
};

/** $1 to $15 of both appends: the events, then the session row's move. */
const moveParams = (rows: readonly EventRow[], session: SessionMove): unknown[] => [
  ...eventColumns(rows),
  session.phase,
  session.status,
  session.updatedAt,
  session.lastSeq,
  session.id,
];

const INSERT_EVENTS = "INSERT INTO events (session_id, seq, id, type, actor, data, revision, at, body_hash, outcome)";
const UNNEST_EVENTS =
  "SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[], $8::text[], $9::text[], $10::text[])";
const ONE_EVENT = "SELECT $1::text, $2::bigint, $3::text, $4::text, $5::text, $6::text, $7::bigint, $8::text, $9::text, $10::text";

/** The compare-and-set append (insertEventsAt) of one event or of a batch, with or without a snapshot. */
const insertAtSql = (one: boolean, snapshot: boolean): string => `
  WITH s AS (
    UPDATE sessions SET phase = $11, status = $12, updated_at = $13, last_seq = $14
    WHERE id = $15 AND last_seq = $16 AND flow = $17 RETURNING id),
  e AS (
    ${INSERT_EVENTS}
    ${one ? `${ONE_EVENT} WHERE EXISTS (SELECT 1 FROM s)` : `${UNNEST_EVENTS} AS u WHERE EXISTS (SELECT 1 FROM s)`})${
      snapshot
        ? `,
  p AS (
    INSERT INTO snapshots (session_id, last_seq, body, hash) SELECT id, $18, $19, $20 FROM s
    ON CONFLICT (session_id) DO UPDATE SET last_seq = excluded.last_seq, body = excluded.body, hash = excluded.hash)`
        : ""
    }
  SELECT count(*) AS n FROM s`;
const INSERT_AT_SQL = [insertAtSql(false, false), insertAtSql(false, true), insertAtSql(true, false), insertAtSql(true, true)];

/** The plain append (insertEvents): the events, then the session row, in one statement. */
const insertSql = (one: boolean): string => `
  WITH e AS (${INSERT_EVENTS} ${one ? ONE_EVENT : UNNEST_EVENTS})
  UPDATE sessions SET phase = $11, status = $12, updated_at = $13, last_seq = $14 WHERE id = $15`;
const INSERT_SQL = [insertSql(false), insertSql(true)];

export class PgJournalQueries implements JournalQueries {
  protected readonly c: PgCtx;
  readonly #schema: string;
  constructor(c: PgCtx, schema: string) {
    this.c = c;
    this.#schema = schema;
  }
  async getSession(id: string): Promise<SessionRow | undefined> {
    const [r] = await this.c.rows<RawSession>(`SELECT * FROM sessions WHERE id = $1${held(this.c)}`, [id]);
    return r && toSession(r);
  }
  async lockKey(key: string): Promise<void> {
    // Advisory locks are per database: the schema is part of the key, so projects never wait on each other.
    await this.c.rows("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`${this.#schema}:${key}`]);
  }
  async insertSession(row: SessionRow): Promise<void> {
    const n = await this.c.run(
      `INSERT INTO sessions (id, flow, title, phase, status, created_at, updated_at, last_seq) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (id) DO NOTHING`,
      [row.id, row.flow, row.title, row.phase, row.status, row.createdAt, row.updatedAt, row.lastSeq],
    );
    if (n === 0) throw new BatonError("session_exists", `session "${row.id}" already exists; choose another --id`, { sessionId: row.id });
  }
  async updateSession(id: string, p: Pick<SessionRow, "phase" | "status" | "updatedAt" | "lastSeq">): Promise<void> {
    await this.c.run("UPDATE sessions SET phase = $1, status = $2, updated_at = $3, last_seq = $4 WHERE id = $5", [
      p.phase,
      p.status,
      p.updatedAt,
      p.lastSeq,
      id,
    ]);
  }
  async listSessions(opts: { includeCompleted: boolean }): Promise<SessionRow[]> {
    const rows = opts.includeCompleted
      ? await this.c.rows<RawSession>('SELECT * FROM sessions ORDER BY created_at, id COLLATE "C"')
      : await this.c.rows<RawSession>("SELECT * FROM sessions WHERE status = 'active' ORDER BY created_at, id COLLATE \"C\"");
    return rows.map(toSession);
  }
  async findEventById(sessionId: string, id: string): Promise<EventRow | undefined> {
    const [r] = await this.c.rows<RawEvent>("SELECT * FROM events WHERE session_id = $1 AND id = $2", [sessionId, id]);
    return r && toEvent(r);
  }
  async insertEvents(rows: readonly EventRow[], session: SessionMove): Promise<void> {
    // One statement for the batch and its session row: a round trip per event (or for the row)
    // would dominate a networked append.
    await this.c.run(INSERT_SQL[rows.length === 1 ? 1 : 0] as string, moveParams(rows, session));
  }
  async insertEventsAt(
    expect: { lastSeq: number; flow: string },
    rows: readonly EventRow[],
    session: SessionMove,
    snapshot?: SnapshotRow,
  ): Promise<boolean> {
    // `s` moves the row only if it is still where the caller saw it (a concurrent appender
    // holding it is waited for, and its new last_seq then fails the check); the events and the
    // snapshot are written only when `s` did.
    const [r] = await this.c.rows<{ n: number }>(
      INSERT_AT_SQL[(rows.length === 1 ? 2 : 0) + (snapshot ? 1 : 0)] as string,
      [...moveParams(rows, session), expect.lastSeq, expect.flow, ...(snapshot ? [snapshot.lastSeq, snapshot.body, snapshot.hash] : [])],
      true,
    );
    return (r?.n ?? 0) > 0;
  }
  async readEvents(sessionId: string, afterSeq: number, limit: number): Promise<EventRow[]> {
    const rows = await this.c.rows<RawEvent>("SELECT * FROM events WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3", [
      sessionId,
      afterSeq,
      Number.isSafeInteger(limit) ? limit : null,
    ]);
    return rows.map(toEvent);
  }
  async getSnapshot(sessionId: string): Promise<SnapshotRow | undefined> {
    const [r] = await this.c.rows<{ session_id: string; last_seq: number; body: string; hash: string }>(
      "SELECT session_id, last_seq, body, hash FROM snapshots WHERE session_id = $1",
      [sessionId],
    );
    return r && { sessionId: r.session_id, lastSeq: r.last_seq, body: r.body, hash: r.hash };
  }
  async putSnapshot(row: SnapshotRow): Promise<void> {
    await this.c.run(
      `INSERT INTO snapshots (session_id, last_seq, body, hash) VALUES ($1, $2, $3, $4)
       ON CONFLICT (session_id) DO UPDATE SET last_seq = excluded.last_seq, body = excluded.body, hash = excluded.hash`,
      [row.sessionId, row.lastSeq, row.body, row.hash],
    );
  }
  async insertDiagnostic(row: DiagnosticRow): Promise<void> {
    await this.c.run("INSERT INTO diagnostics (session_id, code, severity, message, at) VALUES ($1, $2, $3, $4, $5)", [
      row.sessionId,
      row.code,
      row.severity,
      row.message,
      row.at,
    ]);
  }
  async listDiagnostics(sessionId: string, limit: number): Promise<DiagnosticRow[]> {
    const rows = await this.c.rows<{
      session_id: string | null;
      code: string;
      severity: DiagnosticRow["severity"];
      message: string;
      at: string;
    }>("SELECT session_id, code, severity, message, at FROM diagnostics WHERE session_id = $1 ORDER BY id DESC LIMIT $2", [
      sessionId,
      Number.isSafeInteger(limit) ? limit : null,
    ]);
    return rows.reverse().map((r) => ({ sessionId: r.session_id, code: r.code, severity: r.severity, message: r.message, at: r.at }));
  }
}

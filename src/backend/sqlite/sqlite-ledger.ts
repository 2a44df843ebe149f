/** The trajectory ledger's queries on SQLite (tables from migration 5). */
import type { LedgerNodeRef, LedgerNodeRow, LedgerQueries } from "../contract.js";
import type { Prepare } from "./sqlite-types.js";

interface RawNode {
  no: number;
  node_id: string;
  session_id: string;
  seq: number;
  at: string;
  tool: string;
  status: string;
  target: string | null;
  bytes: number;
  body: string;
}

const toRow = (r: RawNode): LedgerNodeRow => ({
  no: r.no,
  nodeId: r.node_id,
  sessionId: r.session_id,
  seq: r.seq,
  at: r.at,
  toolName: r.tool,
  status: r.status,
  target: r.target,
  bytes: r.bytes,
  body: r.body,
});

/**
 * A LIMIT written into the SQL: a bound LIMIT makes SQLite 3.47+ re-prepare the statement on
 * every call (see docs/benchmarks.md). The statement cache gains one entry per distinct limit.
 */
function limitSql(limit: number): string {
  return `LIMIT ${Number.isSafeInteger(limit) && limit >= 0 ? limit : 1000}`;
}

export class SqliteLedgerQueries implements LedgerQueries {
  readonly #stmt: Prepare;
  constructor(stmt: Prepare) {
    this.#stmt = stmt;
  }
  async lastNode(sessionId: string): Promise<LedgerNodeRef | undefined> {
    return this.#stmt(
      "SELECT node_id AS nodeId, seq, tool AS toolName, status FROM ledger_nodes WHERE session_id = ? ORDER BY seq DESC LIMIT 1",
    ).get(sessionId) as LedgerNodeRef | undefined;
  }
  async lastOnTarget(sessionId: string, target: string): Promise<LedgerNodeRef | undefined> {
    return this.#stmt(
      "SELECT node_id AS nodeId, seq, tool AS toolName, status FROM ledger_nodes WHERE session_id = ? AND target = ? ORDER BY seq DESC LIMIT 1",
    ).get(sessionId, target) as LedgerNodeRef | undefined;
  }
  async getNode(nodeId: string): Promise<LedgerNodeRow | undefined> {
    const r = this.#stmt("SELECT * FROM ledger_nodes WHERE node_id = ?").get(nodeId) as RawNode | undefined;
    return r && toRow(r);
  }
  async insertNode(r: Omit<LedgerNodeRow, "no">): Promise<void> {
    this.#stmt(
      "INSERT INTO ledger_nodes (node_id, session_id, seq, at, tool, status, target, bytes, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    ).run(r.nodeId, r.sessionId, r.seq, r.at, r.toolName, r.status, r.target, r.bytes, r.body);
  }
  async pruneSession(sessionId: string, throughSeq: number): Promise<number> {
    return this.#stmt("DELETE FROM ledger_nodes WHERE session_id = ? AND seq <= ?").run(sessionId, throughSeq).changes;
  }
  async totals(): Promise<{ nodes: number; bytes: number }> {
    return this.#stmt("SELECT nodes, bytes FROM ledger_totals WHERE id = 1").get() as { nodes: number; bytes: number };
  }
  async pruneOldest(bytes: number): Promise<number> {
    // The oldest rows whose sizes add up to `bytes`: one pass with a running sum, only when over the cap.
    return this.#stmt(
      `DELETE FROM ledger_nodes WHERE no <= coalesce(
         (SELECT no FROM (SELECT no, sum(bytes) OVER (ORDER BY no) AS freed FROM ledger_nodes) WHERE freed >= @bytes ORDER BY no LIMIT 1),
         (SELECT max(no) FROM ledger_nodes))`,
    ).run({ bytes }).changes;
  }
  async sessionNodes(sessionId: string, afterSeq: number, limit: number): Promise<LedgerNodeRow[]> {
    const rows = this.#stmt(`SELECT * FROM ledger_nodes WHERE session_id = ? AND seq > ? ORDER BY seq ${limitSql(limit)}`).all(
      sessionId,
      afterSeq,
    ) as RawNode[];
    return rows.map(toRow);
  }
  async allNodes(afterNo: number, limit: number): Promise<LedgerNodeRow[]> {
    const rows = this.#stmt(`SELECT * FROM ledger_nodes WHERE no > ? ORDER BY no ${limitSql(limit)}`).all(afterNo) as RawNode[];
    return rows.map(toRow);
  }
}

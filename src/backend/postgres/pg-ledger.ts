/** The trajectory ledger's queries on PostgreSQL (totals kept by a trigger in 16 slots). */
import type { LedgerNodeRef, LedgerNodeRow, LedgerQueries } from "../contract.js";
import type { PgCtx } from "./pg-types.js";

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

const lim = (limit: number) => (Number.isSafeInteger(limit) && limit >= 0 ? limit : 1000);

export class PgLedgerQueries implements LedgerQueries {
  readonly #c: PgCtx;
  constructor(c: PgCtx) {
    this.#c = c;
  }
  async lastNode(sessionId: string): Promise<LedgerNodeRef | undefined> {
    const [r] = await this.#c.rows<LedgerNodeRef>(
      `SELECT node_id AS "nodeId", seq, tool AS "toolName", status FROM ledger_nodes WHERE session_id = $1 ORDER BY seq DESC LIMIT 1`,
      [sessionId],
    );
    return r;
  }
  async lastOnTarget(sessionId: string, target: string): Promise<LedgerNodeRef | undefined> {
    const [r] = await this.#c.rows<LedgerNodeRef>(
      `SELECT node_id AS "nodeId", seq, tool AS "toolName", status FROM ledger_nodes WHERE session_id = $1 AND target = $2 ORDER BY seq DESC LIMIT 1`,
      [sessionId, target],
    );
    return r;
  }
  async getNode(nodeId: string): Promise<LedgerNodeRow | undefined> {
    const [r] = await this.#c.rows<RawNode>("SELECT * FROM ledger_nodes WHERE node_id = $1", [nodeId]);
    return r && toRow(r);
  }
  async insertNode(r: Omit<LedgerNodeRow, "no">): Promise<void> {
    await this.#c.run(
      "INSERT INTO ledger_nodes (node_id, session_id, seq, at, tool, status, target, bytes, body) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
      [r.nodeId, r.sessionId, r.seq, r.at, r.toolName, r.status, r.target, r.bytes, r.body],
    );
  }
  async pruneSession(sessionId: string, throughSeq: number): Promise<number> {
    return this.#c.run("DELETE FROM ledger_nodes WHERE session_id = $1 AND seq <= $2", [sessionId, throughSeq]);
  }
  async totals(): Promise<{ nodes: number; bytes: number }> {
    const [r] = await this.#c.rows<{ nodes: number; bytes: number }>(
      "SELECT coalesce(sum(nodes), 0)::bigint AS nodes, coalesce(sum(bytes), 0)::bigint AS bytes FROM ledger_totals",
    );
    return { nodes: r?.nodes ?? 0, bytes: r?.bytes ?? 0 };
  }
  async pruneOldest(bytes: number): Promise<number> {
    return this.#c.run(
      `DELETE FROM ledger_nodes WHERE no <= coalesce(
         (SELECT no FROM (SELECT no, sum(bytes) OVER (ORDER BY no) AS freed FROM ledger_nodes) w WHERE freed >= $1 ORDER BY no LIMIT 1),
         (SELECT max(no) FROM ledger_nodes))`,
      [bytes],
    );
  }
  async sessionNodes(sessionId: string, afterSeq: number, limit: number): Promise<LedgerNodeRow[]> {
    const rows = await this.#c.rows<RawNode>("SELECT * FROM ledger_nodes WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3", [
      sessionId,
      afterSeq,
      lim(limit),
    ]);
    return rows.map(toRow);
  }
  async allNodes(afterNo: number, limit: number): Promise<LedgerNodeRow[]> {
    const rows = await this.#c.rows<RawNode>("SELECT * FROM ledger_nodes WHERE no > $1 ORDER BY no LIMIT $2", [afterNo, lim(limit)]);
    return rows.map(toRow);
  }
}

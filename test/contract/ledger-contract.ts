/**
 * The trajectory ledger's storage contract: what every backend's LedgerQueries must do, checked
 * through the backend directly (seq and target lookups, idempotent ids, pruning, totals, paging,
 * relaxed-durability transactions).
 */
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { Backend, LedgerNodeRow } from "../../src/backend/contract.js";
import { cleanupDirs, tempDir } from "../helpers.js";
import type { StoreFactory } from "./journal-contract.js";

export function ledgerContract(name: string, factory: StoreFactory): void {
  describe(`ledger contract: ${name}`, () => {
    const backends: Backend[] = [];
    afterEach(async () => {
      for (const b of backends.splice(0)) await b.close();
    });
    afterAll(() => cleanupDirs());

    async function fresh(): Promise<Backend> {
      const { backend } = await factory(tempDir());
      backends.push(backend);
      return backend;
    }
    const row = (sessionId: string, seq: number, over: Partial<LedgerNodeRow> = {}): Omit<LedgerNodeRow, "no"> => {
      const body = JSON.stringify({ nodeId: `${sessionId}-${seq}`, sessionId, seq, pad: "x".repeat(seq) });
      return {
        nodeId: `${sessionId}-${seq}`,
        sessionId,
        seq,
        at: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString(),
        toolName: seq % 2 ? "click" : "read",
        status: seq % 3 ? "success" : "error",
        target: seq % 2 ? "t-click" : null,
        bytes: body.length,
        body,
        ...over,
      };
    };

    it("finds the last node and the last node on a target; ids are unique", async () => {
      const b = await fresh();
      await b.transaction("write", async (tx) => {
        for (let i = 1; i <= 5; i++) await tx.ledger.insertNode(row("a", i));
        await tx.ledger.insertNode(row("b", 1));
      });
      await b.transaction("read", async (tx) => {
        expect((await tx.ledger.lastNode("a"))?.seq).toBe(5);
        expect((await tx.ledger.lastOnTarget("a", "t-click"))?.seq).toBe(5);
        expect(await tx.ledger.lastOnTarget("a", "nothing")).toBeUndefined();
        expect(await tx.ledger.lastNode("none")).toBeUndefined();
        expect((await tx.ledger.getNode("a-3"))?.status).toBe("error");
        expect(await tx.ledger.getNode("zz")).toBeUndefined();
      });
      await expect(b.transaction("write", (tx) => tx.ledger.insertNode(row("a", 9, { nodeId: "a-1" })))).rejects.toThrow();
    });

    it("prunes a session through a seq, and the oldest of the whole ledger by bytes; totals follow", async () => {
      const b = await fresh();
      const rows = [...[1, 2, 3, 4, 5, 6].map((i) => row("a", i)), ...[1, 2, 3].map((i) => row("b", i))];
      await b.transaction("write", async (tx) => {
        for (const r of rows) await tx.ledger.insertNode(r);
      });
      const sum = (rs: Omit<LedgerNodeRow, "no">[]) => rs.reduce((n, r) => n + r.bytes, 0);
      expect(await b.transaction("read", (tx) => tx.ledger.totals())).toEqual({ nodes: 9, bytes: sum(rows) });
      expect(await b.transaction("write", (tx) => tx.ledger.pruneSession("a", 2))).toBe(2);
      const left = rows.filter((r) => !(r.sessionId === "a" && r.seq <= 2));
      expect(await b.transaction("read", (tx) => tx.ledger.totals())).toEqual({ nodes: 7, bytes: sum(left) });
      // Free at least the first two remaining rows' bytes: exactly those two go (insertion order).
      const need = (left[0]?.bytes ?? 0) + 1;
      expect(await b.transaction("write", (tx) => tx.ledger.pruneOldest(need))).toBe(2);
      const all = await b.transaction("read", (tx) => tx.ledger.allNodes(0, 100));
      expect(all.map((r) => r.nodeId)).toEqual(left.slice(2).map((r) => r.nodeId));
      expect(await b.transaction("read", (tx) => tx.ledger.totals())).toEqual({ nodes: 5, bytes: sum(left.slice(2)) });
    });

    it("pages a session by seq and the ledger by insertion order", async () => {
      const b = await fresh();
      await b.transaction("write", async (tx) => {
        for (let i = 1; i <= 7; i++) {
          await tx.ledger.insertNode(row("a", i));
          await tx.ledger.insertNode(row("b", i));
        }
      });
      const page1 = await b.transaction("read", (tx) => tx.ledger.sessionNodes("a", 0, 3));
      const page2 = await b.transaction("read", (tx) => tx.ledger.sessionNodes("a", page1.at(-1)?.seq ?? 0, 3));
      expect([...page1, ...page2].map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6]);
      const all = await b.transaction("read", (tx) => tx.ledger.allNodes(0, 100));
      expect(all.map((r) => r.nodeId).slice(0, 4)).toEqual(["a-1", "b-1", "a-2", "b-2"]);
      const rest = await b.transaction("read", (tx) => tx.ledger.allNodes(all[9]?.no ?? 0, 100));
      expect(rest.map((r) => r.nodeId)).toEqual(all.slice(10).map((r) => r.nodeId));
      expect(all[0]).toMatchObject({ sessionId: "a", seq: 1, toolName: "click", target: "t-click" });
      expect(JSON.parse(all[0]?.body ?? "")).toMatchObject({ nodeId: "a-1" });
    });

    it("commits relaxed-durability transactions like any other, and rolls them back on a throw", async () => {
      const b = await fresh();
      await b.transaction("write", (tx) => tx.ledger.insertNode(row("a", 1)), { durability: "relaxed" });
      await expect(
        b.transaction(
          "write",
          async (tx) => {
            await tx.ledger.insertNode(row("a", 2));
            throw new Error("abandon");
          },
          { durability: "relaxed" },
        ),
      ).rejects.toThrow("abandon");
      await b.transaction("write", (tx) => tx.ledger.insertNode(row("a", 3)));
      expect((await b.transaction("read", (tx) => tx.ledger.sessionNodes("a", 0, 10))).map((r) => r.seq)).toEqual([1, 3]);
    });
  });
}

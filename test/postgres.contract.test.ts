import { createHash } from "node:crypto";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { StoreTx } from "../src/backend/contract.js";
import { PostgresBackend, projectSchema } from "../src/backend/postgres/pg-backend.js";
import { openBaton } from "../src/compose.js";

import { checkpointsContract } from "./contract/checkpoints-contract.js";
import { concurrencyContract } from "./contract/concurrency-contract.js";
import { idempotencyContract } from "./contract/idempotency-contract.js";
import { journalContract, type StoreFactory } from "./contract/journal-contract.js";
import { ledgerContract } from "./contract/ledger-contract.js";
import { locksContract } from "./contract/locks-contract.js";
import { queueContract } from "./contract/queue-contract.js";
import { storeContract } from "./contract/store-contract.js";
import { tempDir } from "./helpers.js";
import { type PgCluster, pgAvailable, startCluster } from "./pg-cluster.js";

const available = pgAvailable();

let cluster: PgCluster | undefined;
const schemasByTest = new Map<string, string>();
let failed = false;

/** One project (schema) per workspace root, so reopening a root reopens its store. */
const projectOf = (root: string) => `t_${createHash("sha256").update(root).digest("hex").slice(0, 16)}`;

export const pgStore: StoreFactory = async (root) => {
  if (!cluster) throw new Error("the PostgreSQL test cluster is not running");
  const project = projectOf(root);
  schemasByTest.set(expect.getState().currentTestName ?? root, projectSchema(project));
  const backend = await PostgresBackend.open({ url: cluster.url, project });
  const url = cluster.url;
  const query = async (sql: string) => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      await c.query(`SET search_path TO ${projectSchema(project)}`);
      return (await c.query(sql)).rows as Record<string, unknown>[];
    } finally {
      await c.end();
    }
  };
  return {
    backend,
    async raw(sql) {
      await query(sql);
    },
    rows: query,
  };
};

if (available) {
  beforeAll(async () => {
    cluster = await startCluster();
  });
  afterEach((ctx) => {
    if (ctx.task.result?.state === "fail") {
      failed = true;
      console.error(`test "${ctx.task.name}" failed; its schema: ${schemasByTest.get(expect.getState().currentTestName ?? "") ?? "?"}`);
    }
  });
  afterAll(() => cluster?.stop(failed));

  journalContract("postgres", pgStore);
  queueContract("postgres", pgStore);
  ledgerContract("postgres", pgStore);
  locksContract("postgres", pgStore);
  concurrencyContract("postgres", pgStore, "separate");
  idempotencyContract("postgres", pgStore, "separate");
  storeContract("postgres", pgStore);
  checkpointsContract("postgres", pgStore, "separate");

  /** A Baton on a fresh project, with a live-variant session `lv`. */
  async function liveVariant() {
    const root = tempDir();
    const { backend } = await pgStore(root);
    const baton = await openBaton({ root, backend });
    await baton.sessions.start({ flow: "live-variant", id: "lv" });
    return { root, backend, baton };
  }

  /** Two connections (as two processes) on one project, with a live-variant session holding one steer. */
  async function twoConnections() {
    const { root, backend, baton } = await liveVariant();
    const b = await pgStore(root);
    await baton.events.append("lv", { type: "steer", actor: "browser", data: { text: "x" } });
    return { a: { backend }, b, baton };
  }

  /**
   * Notices `backend` hears from other processes: `heard()` so far, and `until(n)` resolves once
   * it has heard n (the first is the LISTEN connection coming up, which wakes every listener).
   */
  function notices(backend: { onChange(listener: () => void): () => void }) {
    let heard = 0;
    let hear: (() => void) | undefined;
    const off = backend.onChange(() => {
      heard++;
      hear?.();
    });
    const until = (n: number) =>
      new Promise<void>((r) => {
        hear = () => heard >= n && r();
        hear();
      });
    return { heard: () => heard, until, off };
  }

  describe("postgres: rows a writer acts on are held", () => {
    it("a crashed run's leased work, listed while an ack is finishing it, is not handed back", async () => {
      const { a, b, baton } = await twoConnections();
      try {
        const lease = await baton.work.lease("run-1");
        const itemId = lease!.item.itemId;
        let listed: unknown[] | undefined;
        let lister: Promise<void> | undefined;
        // The ack's transaction holds the item; meanwhile another connection lists run-1's work.
        await b.backend.transaction("write", async (tx) => {
          await tx.queue.getItem(itemId);
          lister = a.backend.transaction("write", async (t2) => {
            listed = (await t2.queue.leasedBy(["run-1"])).map((i) => i.itemId);
          });
          await new Promise((r) => setTimeout(r, 300));
          await tx.queue.setFinal(itemId, { state: "done", doneAt: new Date().toISOString(), doneBy: "lease:x", resultSeq: null });
        });
        await lister;
        expect(listed, "the lister waited for the ack and saw the item done").toEqual([]);
      } finally {
        await baton.close();
        await b.backend.close();
      }
    });
  });

  describe("postgres: a shared claim gives each caller its own lease", () => {
    it("concurrent leases with different owners and lengths each get theirs, as handed back and as stored", async () => {
      const { baton } = await liveVariant();
      try {
        for (let i = 0; i < 6; i++) await baton.events.append("lv", { type: "steer", actor: "browser", data: { text: `s${i}` } });
        const before = Date.now();
        // Six leases at once: one claim statement serves them (services/work/coalesce.ts).
        const leases = await Promise.all(
          Array.from({ length: 6 }, (_, i) => baton.work.lease(`owner-${i}`, { leaseMs: 60_000 + i * 10_000 })),
        );
        const after = Date.now();
        expect(new Set(leases.map((l) => l?.item.itemId)).size).toBe(6);
        const stored = new Map((await baton.work.pending("lv")).map((p) => [p.lease?.leaseId, p.lease]));
        // Expiries are on the database's clock, read as this host's plus an offset measured at
        // open to within half a round trip (pg-clock.ts): a few ms either way under load.
        const skew = 250;
        leases.forEach((l, i) => {
          expect(l?.owner).toBe(`owner-${i}`);
          const expires = Date.parse(l?.expiresAt ?? "");
          expect(expires).toBeGreaterThanOrEqual(before + 60_000 + i * 10_000 - skew);
          expect(expires).toBeLessThanOrEqual(after + 60_000 + i * 10_000 + skew);
          expect(stored.get(l?.leaseId)).toMatchObject({ owner: `owner-${i}`, expiresAt: l?.expiresAt });
        });
      } finally {
        await baton.close();
      }
    });
  });

  describe("postgres: one-statement and quiet transactions", () => {
    it("runs a one-statement transaction without BEGIN, and refuses a second statement without sending it", async () => {
      const { backend, baton } = await liveVariant();
      try {
        const err = await backend
          .transaction(
            "write",
            async (tx) => {
              await tx.queue.ackHeld(["lse_none"], new Date().toISOString());
              await tx.queue.ackHeld(["lse_none"], new Date().toISOString());
            },
            { oneStatement: true },
          )
          .catch((e: unknown) => e);
        expect(err).toMatchObject({ code: "internal" });
        // The statement is the transaction: when the server refuses it (two claims under one
        // lease id), nothing of it lands, and the connection serves the next one.
        await baton.events.append("lv", { type: "steer", actor: "browser", data: { text: "a" } });
        await baton.events.append("lv", { type: "steer", actor: "browser", data: { text: "b" } });
        const now = Date.now();
        const twice = { leaseId: "lse_twice", owner: "w", expiresMs: now + 60_000 };
        await expect(
          backend.transaction("write", (tx) => tx.queue.claimReady({ nowMs: now }, [twice, twice], new Date(now).toISOString()), {
            oneStatement: true,
          }),
        ).rejects.toBeInstanceOf(Error);
        expect((await baton.work.pending("lv")).map((w) => w.state)).toEqual(["ready", "ready"]);
        expect((await baton.work.lease("w"))?.item.kind).toBe("steer");
      } finally {
        await baton.close();
      }
    });

    it("relaxes a write transaction in BEGIN's own round trip, and it commits", async () => {
      const { backend, baton } = await liveVariant();
      const sent: string[] = [];
      const query = pg.Client.prototype.query;
      pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
        const c = args[0] as { text?: unknown } | string;
        sent.push(typeof c === "string" ? c : String(c?.text ?? ""));
        return (query as (...a: unknown[]) => unknown).apply(this, args);
      } as typeof query;
      try {
        await baton.events.append("lv", { type: "steer", actor: "browser", data: { text: "relaxed" } }, { durability: "relaxed" });
        await backend.transaction(
          "write",
          (tx) => tx.insertDiagnostic({ sessionId: null, code: "x", severity: "info", message: "x", at: new Date().toISOString() }),
          {
            durability: "relaxed",
          },
        );
      } finally {
        pg.Client.prototype.query = query;
      }
      try {
        const begins = sent.filter((t) => t.startsWith("BEGIN"));
        expect(begins).toEqual(["BEGIN; SET LOCAL synchronous_commit = off", "BEGIN; SET LOCAL synchronous_commit = off"]);
        expect(sent.filter((t) => t.startsWith("SET LOCAL"))).toEqual([]);
        const { events } = await baton.events.list("lv");
        expect(events.at(-1)?.data).toEqual({ text: "relaxed" });
      } finally {
        await baton.close();
      }
    });

    it("a relaxed BEGIN whose SET LOCAL fails leaves its pooled connection clean for the next transaction", async () => {
      const root = tempDir();
      const backend = await PostgresBackend.open({ url: (cluster as PgCluster).url, project: projectOf(root), poolSize: 1 });
      const query = pg.Client.prototype.query;
      let once = true;
      pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
        const c = args[0] as { text?: unknown };
        // Stands for any failure after BEGIN in that query (a cancel, a server that refuses the setting).
        if (once && typeof c === "object" && c?.text === "BEGIN; SET LOCAL synchronous_commit = off") {
          once = false;
          args[0] = { ...c, text: "BEGIN; SET LOCAL synchronous_commit = bogus" };
        }
        return (query as (...a: unknown[]) => unknown).apply(this, args);
      } as typeof query;
      const diagnostic = (code: string) => (tx: StoreTx) =>
        tx.insertDiagnostic({ sessionId: null, code, severity: "info", message: code, at: new Date().toISOString() });
      try {
        await expect(backend.transaction("write", diagnostic("relaxed"), { durability: "relaxed" })).rejects.toBeInstanceOf(Error);
        // The one connection serves the next transactions (before, they failed: "current transaction is aborted").
        await expect(backend.transaction("write", diagnostic("after"))).resolves.toBeUndefined();
        await expect(backend.transaction("write", diagnostic("single"), { oneStatement: true })).resolves.toBeUndefined();
        await expect(backend.transaction("read", (tx) => tx.listSessions({ includeCompleted: true }))).resolves.toEqual([]);
      } finally {
        pg.Client.prototype.query = query;
        await backend.close();
      }
    });

    it("tells other processes of a quiet change too (a claim, an ack)", async () => {
      const { b, baton } = await twoConnections();
      try {
        const b1 = notices(b.backend);
        await b1.until(1);
        const leasing = b1.until(b1.heard() + 1);
        const lease = (await baton.work.lease("w"))!;
        await leasing;
        const acking = b1.until(b1.heard() + 1);
        await baton.work.ack(lease.leaseId);
        await acking;
        b1.off();
      } finally {
        await baton.close();
        await b.backend.close();
      }
    });

    it("tells other processes of appends told late (TxOptions.lateNotice), the last one even when its process closes at once", async () => {
      const root = tempDir();
      const a = await pgStore(root);
      const b = await pgStore(root);
      try {
        const b1 = notices(b.backend);
        await b1.until(1);
        const before = b1.heard();
        // A fresh process's first late-told commit is told at once, the second (one round trip
        // later, within the gap) by a NOTIFY once the gap has passed. (Were they further apart,
        // each would be told at once: as many notices still.)
        const late = (code: string) =>
          a.backend.transaction(
            "write",
            (tx) => tx.insertDiagnostic({ sessionId: null, code, severity: "info", message: code, at: new Date().toISOString() }),
            { oneStatement: true, lateNotice: true },
          );
        // Two pooled connections open first, so the second commit need not wait to connect
        // while the first NOTIFY holds one.
        await Promise.all([1, 2].map(() => a.backend.transaction("read", (tx) => tx.listSessions({ includeCompleted: true }))));
        await late("first");
        await late("second");
        await b1.until(before + 2);
        // Just after that NOTIFY: due when close() runs, which sends it before the pool ends.
        await late("third");
        await a.backend.close();
        await b1.until(before + 3);
        b1.off();
      } finally {
        await a.backend.close();
        await b.backend.close();
      }
    });
  });
} else {
  describe("postgres contract", () => {
    it.skip("needs PostgreSQL server binaries (apt-get install -y postgresql); CI installs them", () => undefined);
  });
}

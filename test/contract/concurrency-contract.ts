/**
 * Many writers at once: the cases only an engine with concurrent write transactions can fail.
 * Each "connection" is its own Baton over its own backend from the factory (`separate`), as N
 * processes or hosts would be. SQLite runs them over one shared backend (`shared`): one
 * process must not open two write connections to one file (the second would wait on the
 * first's lock inside the same thread); its cross-process case is test/concurrency.int.test.ts.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { Backend } from "../../src/backend/contract.js";
import { openBaton } from "../../src/compose.js";
import { type Baton, isBatonError } from "../../src/index.js";
import { cleanupDirs, tempDir } from "../helpers.js";
import type { StoreFactory } from "./journal-contract.js";

const N = 8;

export function concurrencyContract(name: string, factory: StoreFactory, connections: "separate" | "shared"): void {
  describe(`concurrency contract: ${name}`, () => {
    const open: Baton[] = [];
    const backends: Backend[] = [];
    afterEach(async () => {
      for (const b of open.splice(0)) await b.close();
      for (const be of backends.splice(0)) await be.close();
    });
    afterAll(() => cleanupDirs());

    /** N Batons on one store. */
    async function many(n: number): Promise<Baton[]> {
      const root = tempDir();
      const out: Baton[] = [];
      let shared: Backend | undefined;
      for (let i = 0; i < n; i++) {
        let backend: Backend;
        if (connections === "shared") {
          shared ??= (await factory(root)).backend;
          backend = shared;
        } else backend = (await factory(root)).backend;
        // Closing a Baton closes its backend: with a shared backend only the last one may.
        const b = await openBaton({ root, backend: connections === "shared" ? unclosable(backend) : backend });
        out.push(b);
        open.push(b);
      }
      if (shared) backends.push(shared);
      return out;
    }

    it(`${N} connections appending to one session get contiguous seqs and no errors`, async () => {
      const bs = await many(N);
      await bs[0]!.sessions.start({ flow: "task", id: "t" });
      const per = 6;
      const settled = await Promise.allSettled(
        bs.flatMap((b, i) =>
          Array.from({ length: per }, (_, k) => b.events.append("t", { type: "note:added", data: { text: `c${i}-${k}` } })),
        ),
      );
      const failed = settled.filter((s) => s.status === "rejected").map((s) => String((s as PromiseRejectedResult).reason));
      expect(failed).toEqual([]);
      const seqs = settled.map((s) => (s as PromiseFulfilledResult<{ event: { seq: number } }>).value.event.seq).sort((a, b) => a - b);
      expect(seqs).toEqual(Array.from({ length: N * per }, (_, i) => i + 2)); // seq 1 is session:started
      const { events } = await bs[N - 1]!.events.list("t");
      expect(events.map((e) => e.seq)).toEqual(Array.from({ length: N * per + 1 }, (_, i) => i + 1));
      expect((await bs[1]!.sessions.snapshot("t")).lastSeq).toBe(N * per + 1);
    });

    it("turns recorded at once on several connections are each judged with the others': exactly one detects the spiral", async () => {
      // A repeated failing call is a spiral from its third turn (the default threshold). Judged on
      // a state read before the append, turns recorded at once would each miss the others'.
      const bs = await many(3);
      await bs[0]!.sessions.start({ flow: "task", id: "sp" });
      const same = { tool: "Edit", argsHash: "patch-1", status: "error" as const };
      const turns = await Promise.all(bs.flatMap((b) => [b.turns.record("sp", same), b.turns.record("sp", same)]));
      const detected = turns.filter((t) => t.detected);
      expect(detected).toHaveLength(1);
      const { events } = await bs[2]!.events.list("sp");
      const spiral = events.filter((e) => e.type === "spiral:detected");
      expect(spiral).toHaveLength(1);
      // The detection lands with the third turn recorded, whichever connection recorded it.
      const turnSeqs = events.filter((e) => e.type === "turn:recorded").map((e) => e.seq);
      expect(detected[0]!.turn.seq).toBe(turnSeqs[2]);
      expect((await bs[1]!.sessions.snapshot("sp")).facets.spiral?.paused).toBe(true);
    });

    it("two connections taking turns on one session: each append folds from the other's, work is made once per event", async () => {
      // Each connection keeps the state it last appended from; after the other appended, that
      // state is old, and its next append must see the other's events (phase, seq), not overwrite them.
      const [a, b] = await many(2);
      await a!.sessions.start({ flow: "live-variant", id: "lv" });
      await b!.events.append("lv", { type: "generate", actor: "browser" });
      await a!.events.append("lv", { type: "source_wrapped", actor: "agent", data: { file: "a.html" } });
      await b!.events.append("lv", { type: "variants_written", actor: "agent", data: { count: 1, expected: 1 } });
      await a!.events.append("lv", { type: "cycling", actor: "browser" });
      const turns: Promise<unknown>[] = [];
      for (let i = 0; i < 6; i++)
        turns.push((i % 2 ? a! : b!).events.append("lv", { type: "steer", actor: "browser", data: { text: `t${i}` } }));
      await Promise.all(turns);
      const r = await a!.events.append("lv", { type: "accept", actor: "browser" });
      expect(r.event.seq).toBe(12);
      expect(r.phase).toBe("accept_pending");
      const { events } = await b!.events.list("lv");
      expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
      const work = await b!.work.pending("lv");
      expect(work.map((w) => w.kind).sort()).toEqual(["accept", ...Array(6).fill("steer")]);
      expect(new Set(work.map((w) => w.seq)).size).toBe(7);
      expect((await a!.sessions.snapshot("lv")).lastSeq).toBe(12);
    });

    it(`${N} connections leasing one queue get each item once`, async () => {
      const bs = await many(N);
      await bs[0]!.sessions.start({ flow: "live-variant", id: "lv" });
      const items = 24;
      for (let i = 0; i < items; i++) await bs[0]!.events.append("lv", { type: "steer", actor: "browser", data: { text: `s${i}` } });
      const got: string[] = [];
      await Promise.all(
        bs.map(async (b, i) => {
          for (;;) {
            const l = await b.work.lease(`worker-${i}`);
            if (!l) return;
            got.push(l.item.itemId);
            await b.work.ack(l.leaseId);
          }
        }),
      );
      expect(got.length).toBe(items);
      expect(new Set(got).size).toBe(items);
      expect(await bs[0]!.work.lease("late")).toBeUndefined();
    });

    it(`${N} connections checkpointing one session under retention: unique seqs, no errors, every live checkpoint restorable`, async () => {
      const root = tempDir();
      const bs: Baton[] = [];
      let shared: Backend | undefined;
      for (let i = 0; i < N; i++) {
        let backend: Backend;
        if (connections === "shared") {
          shared ??= (await factory(root)).backend;
          backend = unclosable(shared);
        } else backend = (await factory(root)).backend;
        const b = await openBaton({ root, backend, checkpoints: { retain: 3 } });
        bs.push(b);
        open.push(b);
      }
      if (shared) backends.push(shared);
      await bs[0]!.sessions.start({ flow: "task", id: "t" });
      // Each connection checkpoints its own file (targeted) a few times, with new content each time:
      // retention prunes, and the collector deletes blobs while others reference new ones.
      const settled = await Promise.allSettled(
        bs.map(async (b, i) => {
          for (let k = 0; k < 4; k++) {
            writeFileSync(join(root, `f${i}.txt`), `connection ${i} round ${k}\n`);
            await b.checkpoints.create("t", { files: [`f${i}.txt`] });
          }
        }),
      );
      expect(settled.filter((s) => s.status === "rejected").map((s) => String((s as PromiseRejectedResult).reason))).toEqual([]);
      const all = await bs[0]!.checkpoints.list("t", { includePruned: true });
      expect(all.map((c) => c.seq)).toEqual(Array.from({ length: N * 4 }, (_, i) => i + 1));
      for (const c of await bs[0]!.checkpoints.list("t")) {
        const plan = await bs[1]!.checkpoints.rollback("t", { to: c.id, dryRun: true });
        expect(plan.target.id).toBe(c.id);
      }
    });

    it(`${N} connections checkpointing ${N} sessions of one project past retention: no deadlock, no re-run`, async () => {
      // Each writer prunes (collecting blobs) while the others add references: a writer that held
      // the collector's lock shared and then asked for it exclusively deadlocked with the next one.
      const root = tempDir();
      const bs: Baton[] = [];
      const engines: Backend[] = [];
      let shared: Backend | undefined;
      for (let i = 0; i < N; i++) {
        let backend: Backend;
        if (connections === "shared") {
          shared ??= (await factory(root)).backend;
          backend = unclosable(shared);
        } else backend = (await factory(root)).backend;
        engines.push(backend);
        const b = await openBaton({ root, backend, checkpoints: { retain: 2 } });
        bs.push(b);
        open.push(b);
      }
      if (shared) backends.push(shared);
      for (let i = 0; i < N; i++) await bs[i]!.sessions.start({ flow: "task", id: `s${i}` });
      const rounds = 6;
      const settled = await Promise.allSettled(
        bs.map(async (b, i) => {
          for (let k = 0; k < rounds; k++) {
            writeFileSync(join(root, `g${i}.txt`), `session ${i} round ${k}\n`);
            await b.checkpoints.create(`s${i}`, { files: [`g${i}.txt`] });
          }
        }),
      );
      expect(settled.filter((s) => s.status === "rejected").map((s) => String((s as PromiseRejectedResult).reason))).toEqual([]);
      for (let i = 0; i < N; i++) {
        const live = await bs[i]!.checkpoints.list(`s${i}`);
        expect(live.length).toBe(2);
        await bs[i]!.checkpoints.rollback(`s${i}`, { to: live[0]!.id, dryRun: true });
      }
      // An engine that re-runs transactions (deadlock, serialisation failure) counts them: none here.
      const retries = engines.map((e) => (e as { writeStats?: { retries?: number } }).writeStats?.retries ?? 0);
      expect(retries.reduce((a, b) => a + b, 0)).toBe(0);
    });

    it("two lock challengers: exactly one wins, the other hears lock_held", async () => {
      for (let round = 0; round < 5; round++) {
        const [a, b] = await many(2);
        const settled = await Promise.allSettled([
          a!.locks.acquire("deploy", { owner: "a", pid: process.pid }),
          b!.locks.acquire("deploy", { owner: "b", pid: process.pid }),
        ]);
        const won = settled.filter((s) => s.status === "fulfilled");
        const lost = settled.filter((s) => s.status === "rejected").map((s) => (s as PromiseRejectedResult).reason);
        expect(won.length).toBe(1);
        expect(
          lost.every((e) => isBatonError(e, "lock_held")),
          String(lost[0]),
        ).toBe(true);
        expect((won[0] as PromiseFulfilledResult<{ epoch: number }>).value.epoch).toBe(1);
        for (const x of open.splice(0)) await x.close();
        for (const be of backends.splice(0)) await be.close();
      }
    });
  });
}

/** The same backend with close() a no-op, so several Batons can share it. */
export function unclosable(backend: Backend): Backend {
  return new Proxy(backend, {
    get(target, prop) {
      if (prop === "close") return () => Promise.resolve();
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

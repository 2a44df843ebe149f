/**
 * Idempotency keys, on every backend: what lets an agent hook be answered twice (by the server,
 * then by its own process after the answer was lost) and act once. A checkpoint created with a
 * caller's id, a rollback with a key, a run started with a run id: the second attempt returns
 * what the first did. Two "processes" are two Batons on one store (`separate` backends, or one
 * `shared` backend where one process must not open two write connections: SQLite).
 *
 * The properties run the two attempts at once, with the files changing meanwhile and one
 * attempt sometimes cancelled by its deadline; fast-check's scheduler decides the order in which
 * their store transactions start (the stores are real; only when each transaction begins is
 * chosen), so the interleavings the race needs are reached, and replayed from a seed. Whatever
 * the interleaving, there is exactly one checkpoint, or one rollback.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { Backend, StoreTx } from "../../src/backend/contract.js";
import { openBaton } from "../../src/compose.js";
import { type Baton, isBatonError } from "../../src/index.js";
import { cleanupDirs, tempDir } from "../helpers.js";
import { unclosable } from "./concurrency-contract.js";
import type { StoreFactory } from "./journal-contract.js";

/** Who decides when the store transactions of one Baton begin: nobody (at once), or a fast-check scheduler. */
interface Gate {
  s: fc.Scheduler | undefined;
}

/** The real backend; with a scheduler in the gate, each transaction begins when the scheduler releases it. */
function gated(backend: Backend, gate: Gate, who: string): Backend {
  return new Proxy(backend, {
    get(target, prop) {
      if (prop === "transaction") {
        return (mode: "read" | "write", fn: (tx: StoreTx) => Promise<unknown>) =>
          gate.s === undefined
            ? target.transaction(mode, fn)
            : gate.s.schedule(Promise.resolve(), `${who} ${mode}`).then(() => target.transaction(mode, fn));
      }
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

async function settle<T>(p: Promise<T>): Promise<{ ok: T } | { code: string }> {
  try {
    return { ok: await p };
  } catch (err) {
    if (!isBatonError(err)) throw err;
    return { code: err.code };
  }
}

export function idempotencyContract(name: string, factory: StoreFactory, connections: "separate" | "shared"): void {
  describe(`idempotency contract: ${name}`, () => {
    const open: Baton[] = [];
    const backends: Backend[] = [];
    afterEach(async () => {
      for (const b of open.splice(0)) await b.close();
      for (const be of backends.splice(0)) await be.close();
    });
    afterAll(() => cleanupDirs());

    /**
     * Two Batons on one fresh store with session `s` and `a.txt`, as the server and a hook
     * process would be; `gate.s` set, a scheduler orders their transactions.
     */
    async function two(): Promise<{ root: string; a: Baton; b: Baton; gate: Gate }> {
      const root = tempDir();
      const gate: Gate = { s: undefined };
      const first = (await factory(root)).backend;
      const second = connections === "shared" ? first : (await factory(root)).backend;
      if (connections === "shared") backends.push(first);
      const wrap = (be: Backend, who: string) => gated(connections === "shared" ? unclosable(be) : be, gate, who);
      const a = await openBaton({ root, backend: wrap(first, "server"), durability: "relaxed" });
      const b = await openBaton({ root, backend: wrap(second, "retry"), durability: "relaxed" });
      open.push(a, b);
      await a.sessions.start({ flow: "task", id: "s" });
      writeFileSync(join(root, "a.txt"), "v1\n");
      return { root, a, b, gate };
    }

    it("a checkpoint created again with its id returns the first, reading nothing; another session's id is conflict", async () => {
      const { root, a, b } = await two();
      const first = await a.checkpoints.create("s", { files: ["a.txt"], id: "cp-call-1" });
      expect(first.checkpoint.id).toBe("cp-call-1");
      expect(first.duplicate).toBeUndefined();
      writeFileSync(join(root, "a.txt"), "changed since\n");
      const again = await b.checkpoints.create("s", { all: true, id: "cp-call-1" });
      expect(again.duplicate).toBe(true);
      expect(again.checkpoint.files, "the first checkpoint, as it was taken").toEqual(first.checkpoint.files);
      expect(again.stats.read).toBe(0);
      expect((await b.checkpoints.list("s")).map((c) => c.id)).toEqual(["cp-call-1"]);
      await b.sessions.start({ flow: "task", id: "t" });
      await expect(b.checkpoints.create("t", { files: ["a.txt"], id: "cp-call-1" })).rejects.toMatchObject({ code: "conflict" });
      for (const id of ["call-1", "cp-", "cp-a b", `cp-${"x".repeat(61)}`])
        await expect(a.checkpoints.create("s", { files: ["a.txt"], id }), id).rejects.toMatchObject({ code: "bad_input" });
      await expect(
        a.checkpoints.create("s", { files: ["a.txt"], id: "cp-late", deadline: Date.now() - 1 }),
        "past its deadline: refused, nothing stored",
      ).rejects.toMatchObject({ code: "deadline_exceeded" });
      expect((await a.checkpoints.list("s")).map((c) => c.id)).toEqual(["cp-call-1"]);
    });

    it("a rollback with a key done again returns the first's result and rolls back nothing more", async () => {
      const { root, a, b } = await two();
      await a.checkpoints.create("s", { files: ["a.txt"] });
      writeFileSync(join(root, "a.txt"), "v2\n");
      await a.checkpoints.create("s", { files: ["a.txt"] });
      writeFileSync(join(root, "a.txt"), "v3\n");
      const first = await a.checkpoints.rollback("s", { key: "req-1" });
      expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("v2\n");
      const again = await b.checkpoints.rollback("s", { key: "req-1" });
      expect(again.repeated).toBe(true);
      expect(readFileSync(join(root, "a.txt"), "utf8"), "one step back, not two").toBe("v2\n");
      expect({ ...again, repeated: undefined, changes: again.changes.map((c) => c.path) }).toEqual({
        ...first,
        repeated: undefined,
        changes: first.changes.filter((c) => c.action !== "unchanged").map((c) => c.path),
      });
      // Another key is another request: it rolls back (one more step).
      await b.checkpoints.rollback("s", { key: "req-2" });
      expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("v1\n");
    });

    it("a run started again with its id is that run", async () => {
      const { a, b } = await two();
      const first = await a.runs.start("s", { agent: "Claude Code", runId: "claude-x-1", pid: process.pid });
      const again = await b.runs.start("s", { agent: "Claude Code", runId: "claude-x-1", pid: process.pid });
      expect(again.result.duplicate).toBe(true);
      expect(again.result.event.seq).toBe(first.result.event.seq);
      const runs = (await a.sessions.snapshot("s")).facets.runs ?? [];
      expect(runs.map((r) => r.runId)).toEqual(["claude-x-1"]);
      await expect(b.runs.start("s", { agent: "Codex", runId: "claude-x-1", pid: process.pid })).rejects.toMatchObject({
        code: "conflict",
      });
    });

    it("property: any interleaving of two attempts at one checkpoint id gives exactly one checkpoint", async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.scheduler(),
          fc.record({
            whole: fc.boolean(),
            edit: fc.boolean(),
            /** The first attempt (the server's) gave up: its deadline had passed. */
            late: fc.boolean(),
          }),
          async (sched, { whole, edit, late }) => {
            const { root, a, b, gate } = await two();
            gate.s = sched;
            const input = whole ? { all: true } : { files: ["a.txt"] };
            const attempt = (who: Baton, deadline?: number) =>
              who.checkpoints.create("s", { ...input, id: "cp-call-1", ...(deadline ? { deadline } : {}) });
            // The agent's files may change between the attempts (the tool ran after the server's answer was lost).
            const edited = edit
              ? sched.schedule(Promise.resolve(), "edit").then(() => writeFileSync(join(root, "a.txt"), "edited\n"))
              : undefined;
            const [ra, rb] = await sched.waitFor(
              Promise.all([settle(attempt(a, late ? Date.now() - 1 : undefined)), settle(attempt(b)), edited]),
            );
            gate.s = undefined;
            const list = await a.checkpoints.list("s");
            expect(list.map((c) => c.id)).toEqual(["cp-call-1"]);
            const stored = await a.checkpoints.get("cp-call-1");
            // Late, the first attempt stores nothing: it fails, or finds the retry's checkpoint.
            if (late) expect("code" in ra ? ra.code : ra.ok.duplicate).toBe("code" in ra ? "deadline_exceeded" : true);
            for (const r of [ra, rb]) {
              if ("code" in r) continue;
              expect(r.ok.checkpoint.id).toBe("cp-call-1");
              expect(r.ok.checkpoint.files, "each attempt answers with the stored checkpoint").toEqual(stored.files);
            }
            expect("ok" in rb, "the retry always answers").toBe(true);
          },
        ),
        { numRuns: 30 },
      );
    }, 120_000);

    it("property: any interleaving of two attempts at one rollback key rolls back exactly once", async () => {
      await fc.assert(
        fc.asyncProperty(fc.scheduler(), fc.integer({ min: 1, max: 5 }), fc.boolean(), async (sched, files, late) => {
          const { root, a, b, gate } = await two();
          const all = ["a.txt", ...Array.from({ length: files - 1 }, (_, i) => `f${i}.txt`)];
          await a.checkpoints.create("s", { files: all });
          for (const f of all) writeFileSync(join(root, f), "v2\n");
          await a.checkpoints.create("s", { files: all });
          for (const f of all) writeFileSync(join(root, f), "v3\n");
          gate.s = sched;
          const attempt = (who: Baton, deadline?: number) =>
            who.checkpoints.rollback("s", { key: "req-1", ...(deadline ? { deadline } : {}) });
          const [ra, rb] = await sched.waitFor(Promise.all([settle(attempt(a, late ? Date.now() - 1 : undefined)), settle(attempt(b))]));
          gate.s = undefined;
          for (const f of all) expect(readFileSync(join(root, f), "utf8"), `${f}: one step back`).toBe("v2\n");
          const { events } = await a.events.list("s");
          expect(events.filter((e) => e.type === "rollback:started")).toHaveLength(1);
          expect(events.filter((e) => e.type === "rollback:applied")).toHaveLength(1);
          expect(
            (await a.checkpoints.list("s")).filter((c) => c.kind === "safety"),
            "one safety checkpoint",
          ).toHaveLength(1);
          // Late, the first attempt changes nothing: it fails at its deadline, finds the retry's
          // rollback done (repeated), or in progress (conflict: it cannot wait past its deadline).
          if (late) expect("code" in ra ? ["deadline_exceeded", "conflict"] : [true]).toContain("code" in ra ? ra.code : ra.ok.repeated);
          const ids = [ra, rb].flatMap((r) => ("ok" in r ? [r.ok.rollbackId] : []));
          expect(new Set(ids).size).toBe(1);
          expect("ok" in rb, "the retry always answers").toBe(true);
        }),
        { numRuns: 30 },
      );
    }, 120_000);
  });
}

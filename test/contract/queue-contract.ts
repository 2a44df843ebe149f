/**
 * The delivery queue's contract: every backend must show these behaviours. A fake clock
 * drives lease expiry, so nothing here sleeps.
 */
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { openBaton, servicesOf } from "../../src/compose.js";
import { type Baton, isBatonError } from "../../src/index.js";
import { cleanupDirs, tempDir } from "../helpers.js";
import type { StoreFactory } from "./journal-contract.js";

async function expectCode(p: Promise<unknown>, code: string): Promise<void> {
  try {
    await p;
  } catch (err) {
    if (!isBatonError(err)) throw err;
    expect(err.code, err.message).toBe(code);
    return;
  }
  throw new Error(`expected ${code}, but the call succeeded`);
}

export function queueContract(name: string, factory: StoreFactory): void {
  describe(`queue contract: ${name}`, () => {
    const open: Baton[] = [];
    let root = "";
    const clock = { ms: Date.parse("2026-01-01T00:00:00Z") };
    const now = () => new Date(clock.ms);
    const advance = (ms: number) => {
      clock.ms += ms;
    };

    async function fresh(opts: { maxAttempts?: number } = {}): Promise<Baton> {
      root = tempDir();
      const store = await factory(root);
      const b = await openBaton({ root, backend: store.backend, now, ...opts });
      open.push(b);
      return b;
    }
    async function reopen(opts: { maxAttempts?: number } = {}): Promise<Baton> {
      const store = await factory(root);
      const b = await openBaton({ root, backend: store.backend, now, ...opts });
      open.push(b);
      return b;
    }
    afterEach(async () => {
      for (const b of open.splice(0)) await b.close();
    });
    afterAll(() => cleanupDirs());

    async function cycling(b: Baton, id = "lv") {
      await b.sessions.start({ flow: "live-variant", id });
      await b.events.append(id, { type: "generate", actor: "browser" });
      await b.events.append(id, { type: "source_wrapped", actor: "agent", data: { file: "a.html" } });
      await b.events.append(id, { type: "variants_written", actor: "agent", data: { count: 2, expected: 2 } });
      await b.events.append(id, { type: "cycling", actor: "browser" });
      return id;
    }

    it("creates work in the event's transaction and hands it out by priority lane, ties by seq", async () => {
      const b = await fresh();
      const id = await cycling(b); // the generate was finished by source_wrapped
      expect(await b.work.pending(id)).toEqual([]);
      await b.events.append(id, { type: "exit", actor: "browser" });
      await b.events.append(id, { type: "steer", actor: "browser", data: { text: "bluer" } });
      await b.events.append(id, { type: "steer", actor: "browser", data: { text: "rounder" } });
      await b.events.append(id, { type: "accept", actor: "browser", data: { variantId: "v2" } });
      const order: string[] = [];
      for (;;) {
        const l = await b.work.lease("w1", { sessionId: id });
        if (!l) break;
        order.push(`${l.item.kind}:${l.item.seq}`);
      }
      expect(order).toEqual(["accept:9", "steer:7", "steer:8", "exit:6"]);
    });

    it("acks once: the result is journaled with the ack, a repeat is a duplicate, and nothing is delivered again", async () => {
      const b = await fresh();
      const id = await cycling(b);
      await b.events.append(id, { type: "accept", actor: "browser", data: { variantId: "v2" } });
      const l = (await b.work.lease("agent-1"))!;
      expect(l).toMatchObject({ attempt: 1, owner: "agent-1", item: { kind: "accept", sessionId: id } });
      expect(l.item.event.data).toEqual({ variantId: "v2" });
      const r = await b.work.ack(l.leaseId, { type: "accepted", data: { carbonize: true } });
      expect(r.duplicate).toBe(false);
      expect(r.result?.phase).toBe("accepted_source_pending");
      const again = await b.work.ack(l.leaseId, { type: "accepted", data: { carbonize: true } });
      expect(again.duplicate).toBe(true);
      expect((await b.events.list(id)).events.filter((e) => e.type === "accepted")).toHaveLength(1);
      advance(10 * 60_000);
      expect(await b.work.lease("agent-2")).toBeUndefined();
    });

    it("redelivers an expired lease and refuses the stale holder's ack with lease_lost", async () => {
      const b = await fresh();
      const id = await cycling(b);
      await b.events.append(id, { type: "accept", actor: "browser", data: { variantId: "v1" } });
      const first = (await b.work.lease("dies", { leaseMs: 1_000 }))!;
      expect(await b.work.lease("other")).toBeUndefined();
      advance(1_001);
      const second = (await b.work.lease("fresh", { leaseMs: 1_000 }))!;
      expect(second.item.itemId).toBe(first.item.itemId);
      expect(second.attempt).toBe(2);
      expect(second.leaseId).not.toBe(first.leaseId);
      await expectCode(b.work.ack(first.leaseId, { type: "accepted", data: { carbonize: true } }), "lease_lost");
      await expectCode(b.work.heartbeat(first.leaseId), "lease_lost");
      expect((await b.work.ack(second.leaseId)).duplicate).toBe(false);
      expect((await b.sessions.snapshot(id)).phase).toBe("accept_pending"); // the stale ack appended nothing
    });

    it("honours a late ack when the lease expired but nobody else took the item", async () => {
      const b = await fresh();
      const id = await cycling(b);
      await b.events.append(id, { type: "accept", actor: "browser", data: { variantId: "v1" } });
      const l = (await b.work.lease("slow", { leaseMs: 500 }))!;
      advance(5_000);
      expect((await b.work.pending(id))[0]?.lease).toMatchObject({ owner: "slow", expired: true });
      const r = await b.work.ack(l.leaseId, { type: "accepted", data: {} });
      expect(r.result?.phase).toBe("complete");
      expect(await b.work.lease("late")).toBeUndefined();
    });

    it("heartbeat keeps a lease alive past its first expiry", async () => {
      const b = await fresh();
      const id = await cycling(b);
      await b.events.append(id, { type: "accept", actor: "browser" });
      const l = (await b.work.lease("worker", { leaseMs: 1_000 }))!;
      for (let i = 0; i < 5; i++) {
        advance(800);
        await b.work.heartbeat(l.leaseId, { leaseMs: 1_000 });
        expect(await b.work.lease("thief")).toBeUndefined();
      }
      expect((await b.work.ack(l.leaseId)).duplicate).toBe(false);
    });

    it("nack gives the item back, after an optional delay", async () => {
      const b = await fresh();
      const id = await cycling(b);
      await b.events.append(id, { type: "accept", actor: "browser" });
      const l = (await b.work.lease("w"))!;
      const r = await b.work.nack(l.leaseId, { delayMs: 5_000, reason: "busy" });
      expect(r.state).toBe("ready");
      await expectCode(b.work.ack(l.leaseId), "lease_lost");
      expect(await b.work.lease("w")).toBeUndefined();
      advance(5_000);
      expect((await b.work.lease("w"))?.attempt).toBe(2);
    });

    it("dead-letters an item after max attempts, with a diagnostic in status", async () => {
      const b = await fresh({ maxAttempts: 2 });
      const id = await cycling(b);
      await b.events.append(id, { type: "accept", actor: "browser" });
      await b.work.lease("a", { leaseMs: 100 });
      advance(200);
      await b.work.lease("b", { leaseMs: 100 });
      advance(200);
      expect(await b.work.lease("c")).toBeUndefined();
      expect(await b.work.pending(id)).toEqual([]);
      const st = (await b.sessions.status({ sessionId: id })).sessions[0]!;
      const d = st.diagnostics.find((x) => x.code === "work_dead_lettered");
      expect(d?.message).toContain("accept, seq 6");
    });

    it("keeps dead work unhandled, however many diagnostics follow, until a doneBy event or an event naming it", async () => {
      const b = await fresh({ maxAttempts: 1 });
      const id = await cycling(b);
      await b.events.append(id, { type: "steer", actor: "browser", data: { text: "x" } }); // seq 6
      const s = (await b.work.lease("c"))!;
      await b.work.nack(s.leaseId, { reason: "no" });
      await b.events.append(id, { type: "accept", actor: "browser" }); // seq 7
      await b.work.lease("a", { leaseMs: 100 });
      advance(200);
      expect(await b.work.lease("b")).toBeUndefined();
      // 25 stored diagnostics of another kind: the dead items are not pushed out of status.
      await b.targets.set(id, { kind: "job", id: "j1" });
      for (let i = 0; i < 13; i++) {
        await b.targets.resolve(id, { kind: "job", id: "j2" }, { allowNavigate: true });
        await b.targets.resolve(id, { kind: "job", id: "j1" });
      }
      const dead = async () => (await b.sessions.status({ sessionId: id })).sessions[0]!.nextAction;
      expect((await dead()).action).toBe("handle_dead_work");
      expect((await dead()).reason).toContain("steer (seq 6), accept (seq 7)");
      // Another event does not handle them; each is handled by what would have finished it.
      await b.events.append(id, { type: "checkpoint", actor: "agent" });
      expect((await dead()).reason).toContain("2 work item(s)");
      await b.events.append(id, { type: "checkpoint", actor: "agent", data: { handles: 6 } });
      expect((await dead()).reason).toContain("1 work item(s) were dead-lettered and will not be delivered again: accept (seq 7)");
      await b.events.append(id, { type: "accepted", actor: "agent" });
      expect((await dead()).action).not.toBe("handle_dead_work");
    });

    it("release gives back only work its lease still holds as leased; anything stale is lease_lost and changes nothing", async () => {
      const b = await fresh();
      const id = await cycling(b);
      await b.events.append(id, { type: "accept", actor: "browser" });
      const l = (await b.work.lease("w", { leaseMs: 1_000 }))!;
      expect(await b.work.release(l.leaseId, { reason: "the agent is stuck" })).toMatchObject({ itemId: l.item.itemId, state: "ready" });
      await expectCode(b.work.ack(l.leaseId), "lease_lost");
      await expectCode(b.work.release(l.leaseId), "lease_lost"); // released already
      // Re-leased to someone else: the old lease releases nothing.
      const again = (await b.work.lease("x", { leaseMs: 1_000 }))!;
      expect(again.attempt).toBe(2);
      await expectCode(b.work.release(l.leaseId), "lease_lost");
      // Expired and already back in the queue (a lease call reaped it): nothing to release, though
      // the holder itself could still nack it.
      advance(2_000);
      await b.work.lease("y", { kinds: ["nothing"] }); // reaps expired leases, takes nothing
      expect((await b.work.pending(id))[0]).toMatchObject({ state: "ready" });
      await expectCode(b.work.release(again.leaseId), "lease_lost");
      // Acked: nothing to release.
      const third = (await b.work.lease("z"))!;
      await b.work.ack(third.leaseId);
      await expectCode(b.work.release(third.leaseId), "lease_lost");
      await expectCode(b.work.release("lse_nope"), "not_found");
      expect(await b.work.pending(id)).toEqual([]);
    });

    it("retries dead work with fresh attempts; work no longer dead, or handled since, is a conflict and changes nothing", async () => {
      const b = await fresh({ maxAttempts: 1 });
      const id = await cycling(b);
      await b.events.append(id, { type: "steer", actor: "browser", data: { text: "x" } }); // seq 6
      const s = (await b.work.lease("c"))!;
      await b.work.nack(s.leaseId, { reason: "no" });
      const [dead] = await b.work.dead(id);
      expect(dead).toMatchObject({ itemId: s.item.itemId, kind: "steer", seq: 6 });
      expect(await b.work.retry(s.item.itemId)).toEqual({ itemId: s.item.itemId, state: "ready", kind: "steer", seq: 6 });
      expect(await b.work.dead(id)).toEqual([]);
      expect((await b.sessions.status({ sessionId: id })).sessions[0]!.nextAction.action).not.toBe("handle_dead_work");
      await expectCode(b.work.retry(s.item.itemId), "conflict"); // back in the queue already
      await expectCode(b.work.ack(s.leaseId), "lease_lost"); // the old lease stays dead
      const l = (await b.work.lease("d"))!;
      expect(l).toMatchObject({ attempt: 1, item: { itemId: s.item.itemId } });
      await b.work.ack(l.leaseId, { type: "note:added", data: { text: "steered" } });
      await expectCode(b.work.retry(s.item.itemId), "conflict"); // finished
      // Dead again, then handled by an event naming it: not retried.
      await b.events.append(id, { type: "steer", actor: "browser", data: { text: "y" } });
      const t = (await b.work.lease("e"))!;
      await b.work.nack(t.leaseId);
      await b.events.append(id, { type: "checkpoint", actor: "agent", data: { handles: t.item.seq } });
      await expectCode(b.work.retry(t.item.itemId), "conflict");
      expect(await b.work.pending(id)).toEqual([]);
      await expectCode(b.work.retry("wi_nope"), "not_found");
    });

    it("finishes work when the agent records the result event itself (doneBy), and the lease's ack is then a duplicate", async () => {
      const b = await fresh();
      const id = await cycling(b);
      await b.events.append(id, { type: "accept", actor: "browser", data: { variantId: "v2" } });
      const l = (await b.work.lease("agent"))!;
      await b.events.append(id, { type: "accepted", actor: "agent", data: { carbonize: true } });
      expect(await b.work.pending(id)).toEqual([]);
      expect((await b.work.ack(l.leaseId)).duplicate).toBe(true);
    });

    it("keeps leases across a restart: nothing lost, nothing replayed", async () => {
      const b = await fresh();
      const id = await cycling(b);
      await b.events.append(id, { type: "steer", actor: "browser", data: { text: "x" } });
      await b.events.append(id, { type: "accept", actor: "browser" });
      const l = (await b.work.lease("before-restart"))!;
      await b.close();
      const b2 = await reopen();
      const pending = await b2.work.pending(id);
      expect(pending.map((p) => [p.kind, p.state, p.lease?.owner])).toEqual([
        ["accept", "leased", "before-restart"],
        ["steer", "ready", undefined],
      ]);
      expect((await b2.work.lease("after"))?.item.kind).toBe("steer");
      expect((await b2.work.ack(l.leaseId)).duplicate).toBe(false);
    });

    it("status shows pending work with leases, and handle_pending_work for work the phase does not cover", async () => {
      const b = await fresh();
      const id = await cycling(b);
      await b.events.append(id, { type: "steer", actor: "browser", data: { text: "bluer" } });
      let st = (await b.sessions.status()).sessions[0]!;
      expect(st.nextAction).toMatchObject({ action: "handle_pending_work", command: `baton poll --session ${id} --json` });
      expect(st.pendingWork.map((w) => [w.kind, w.state])).toEqual([["steer", "ready"]]);
      const l = (await b.work.lease("agent-7", { leaseMs: 30_000 }))!;
      st = (await b.sessions.status()).sessions[0]!;
      expect(st.pendingWork[0]?.lease).toMatchObject({ leaseId: l.leaseId, owner: "agent-7", expired: false });
      expect(st.nextAction.action).toBe("poll_for_pending_event"); // being handled
      await b.events.append(id, { type: "accept", actor: "browser", data: { variantId: "v1" } });
      st = (await b.sessions.status()).sessions[0]!;
      expect(st.nextAction.action).toBe("run_accept_cleanup"); // the accept's own action covers it
    });

    it("filters by session and kind", async () => {
      const b = await fresh();
      await cycling(b, "one");
      await cycling(b, "two");
      await b.events.append("one", { type: "steer", actor: "browser" });
      await b.events.append("two", { type: "accept", actor: "browser" });
      expect((await b.work.lease("w", { sessionId: "one" }))?.item.sessionId).toBe("one");
      expect(await b.work.lease("w", { kinds: ["discard"] })).toBeUndefined();
      expect((await b.work.lease("w", { kinds: ["accept", "discard"] }))?.item.sessionId).toBe("two");
    });

    it("wakes a parked waitForWork when work is appended, in this process or another", async () => {
      const b = await fresh();
      const id = await cycling(b);
      const waiting = b.work.waitFor("parked", { sessionId: id, timeoutMs: 10_000 });
      setTimeout(() => void b.events.append(id, { type: "steer", actor: "browser" }), 20);
      expect((await waiting)?.item.kind).toBe("steer");
      const other = await reopen(); // a second connection: another process's view
      const waiting2 = b.work.waitFor("parked", { sessionId: id, timeoutMs: 10_000 });
      setTimeout(() => void other.events.append(id, { type: "accept", actor: "browser" }), 20);
      expect((await waiting2)?.item.kind).toBe("accept");
      expect(await b.work.waitFor("parked", { sessionId: id, timeoutMs: 30 })).toBeUndefined();
    });

    it("hands concurrent lessees distinct items and fences concurrent acks one by one", async () => {
      const b = await fresh();
      const id = await cycling(b);
      for (let i = 0; i < 12; i++) await b.events.append(id, { type: "steer", actor: "browser", data: { text: `s${i}` } });
      const leases = await Promise.all(Array.from({ length: 16 }, (_, i) => b.work.lease(`w${i}`, { sessionId: id, leaseMs: 1_000 })));
      const got = leases.filter((l) => l !== undefined);
      expect(got).toHaveLength(12);
      expect(new Set(got.map((l) => l.item.itemId)).size).toBe(12);
      expect(new Set(got.map((l) => l.leaseId)).size).toBe(12);
      // One lease expires and is handed to someone else; then every holder acks at once.
      const [stale, ...live] = got as [NonNullable<(typeof got)[0]>, ...NonNullable<(typeof got)[0]>[]];
      advance(500);
      await Promise.all(live.map((l) => b.work.heartbeat(l.leaseId, { leaseMs: 60_000 })));
      advance(600);
      const thief = (await b.work.lease("thief", { sessionId: id }))!;
      expect(thief.item.itemId).toBe(stale.item.itemId);
      const acks = await Promise.allSettled([stale, ...live].map((l) => b.work.ack(l.leaseId)));
      expect(acks[0]!.status).toBe("rejected");
      expect(((acks[0] as PromiseRejectedResult).reason as { code?: string }).code).toBe("lease_lost");
      expect(acks.slice(1).every((a) => a.status === "fulfilled" && !a.value.duplicate)).toBe(true);
      await b.work.ack(thief.leaseId);
      expect(await b.work.pending(id)).toEqual([]);
      expect(await (await reopen()).work.lease("late", { sessionId: id })).toBeUndefined();
    });

    it("answers every one of many concurrent leases (they share claims): each item once, each filter kept, the rest empty", async () => {
      const b = await fresh();
      await cycling(b, "one");
      await cycling(b, "two");
      for (let i = 0; i < 5; i++) await b.events.append("one", { type: "steer", actor: "browser", data: { text: `one-${i}` } });
      for (let i = 0; i < 3; i++) await b.events.append("two", { type: "steer", actor: "browser", data: { text: `two-${i}` } });
      await b.events.append("two", { type: "accept", actor: "browser" });
      // 8 callers for session one's 5 items, 6 for session two's 4, 3 for accepts anywhere, 2 for a kind nobody sent.
      const asks = [
        ...Array.from({ length: 8 }, (_, i) => ({ owner: `one-${i}`, req: { sessionId: "one" } })),
        ...Array.from({ length: 6 }, (_, i) => ({ owner: `two-${i}`, req: { sessionId: "two" } })),
        ...Array.from({ length: 3 }, (_, i) => ({ owner: `acc-${i}`, req: { kinds: ["accept"] } })),
        ...Array.from({ length: 2 }, (_, i) => ({ owner: `none-${i}`, req: { kinds: ["discard"] } })),
      ];
      const got = await Promise.all(asks.map((a) => b.work.lease(a.owner, { ...a.req, leaseMs: 5_000 })));
      const leases = got.filter((l) => l !== undefined);
      expect(new Set(leases.map((l) => l.item.itemId)).size, "no item handed out twice").toBe(leases.length);
      expect(new Set(leases.map((l) => l.leaseId)).size, "a lease id per delivery").toBe(leases.length);
      asks.forEach((a, i) => {
        const l = got[i];
        if (!l) return;
        expect(l.owner, `caller ${a.owner} got its own lease`).toBe(a.owner);
        if ("sessionId" in a.req) expect(l.item.sessionId, `caller ${a.owner} stayed in its session`).toBe(a.req.sessionId);
        if ("kinds" in a.req) expect(a.req.kinds, `caller ${a.owner} got a kind it asked for`).toContain(l.item.kind);
        expect(l.item.event.seq).toBe(l.item.seq);
      });
      // Every one of the 9 items went to someone (the accept to one of session two's callers or an accept caller).
      expect(leases).toHaveLength(9);
      expect(got.slice(17).every((l) => l === undefined)).toBe(true);
      expect(await b.work.lease("late")).toBeUndefined();
      // Each caller's lease is its own fencing token: they ack, all together, and each is done once.
      const acks = await Promise.all(leases.map((l) => b.work.ack(l.leaseId)));
      expect(acks.every((r, i) => r.itemId === leases[i]!.item.itemId && !r.duplicate)).toBe(true);
      expect(await b.work.pending()).toEqual([]);
    });

    it("answers concurrent acks (they share a statement) each with its own outcome", async () => {
      const b = await fresh();
      const id = await cycling(b);
      for (let i = 0; i < 4; i++) await b.events.append(id, { type: "steer", actor: "browser", data: { text: `s${i}` } });
      await b.events.append(id, { type: "accept", actor: "browser" });
      const accept = (await b.work.lease("a", { kinds: ["accept"], leaseMs: 1_000 }))!;
      const [s0, s1, s2, s3] = (await Promise.all([0, 1, 2, 3].map((i) => b.work.lease(`s${i}`, { leaseMs: 1_000 })))) as NonNullable<
        Awaited<ReturnType<Baton["work"]["lease"]>>
      >[];
      await b.work.ack(s3!.leaseId); // acked before: its next ack is a duplicate
      advance(1_001);
      const thief = (await b.work.lease("thief", { kinds: ["steer"] }))!; // s0's item, delivered again
      expect(thief.item.itemId).toBe(s0!.item.itemId);
      const settled = await Promise.allSettled([
        b.work.ack(s1!.leaseId), // expired, nobody took it: honoured
        b.work.ack(s0!.leaseId), // its item went to the thief: lease_lost
        b.work.ack(s2!.leaseId), // honoured
        b.work.ack(s2!.leaseId), // the same lease twice at once: one of them is the duplicate
        b.work.ack(s3!.leaseId), // duplicate
        b.work.ack("lse_unknown"), // not_found
        b.work.ack(accept.leaseId, { type: "accepted", data: {} }), // with a result: journaled with it
        b.work.ack(thief.leaseId),
      ]);
      const outcome = (s: PromiseSettledResult<Awaited<ReturnType<Baton["work"]["ack"]>>>) =>
        s.status === "fulfilled" ? (s.value.duplicate ? "duplicate" : "acked") : ((s.reason as { code?: string }).code ?? "?");
      const seen = settled.map(outcome);
      expect(seen[0]).toBe("acked");
      expect(seen[1]).toBe("lease_lost");
      expect([seen[2], seen[3]].sort()).toEqual(["acked", "duplicate"]);
      expect(seen.slice(4)).toEqual(["duplicate", "not_found", "acked", "acked"]);
      expect((settled[6] as PromiseFulfilledResult<Awaited<ReturnType<Baton["work"]["ack"]>>>).value.result?.event.type).toBe("accepted");
      expect(await b.work.pending(id)).toEqual([]);
    });

    it("returns an expired lease's item first when it comes before the ready ones, as its priority says", async () => {
      const b = await fresh();
      const id = await cycling(b);
      await b.events.append(id, { type: "steer", actor: "browser", data: { text: "x" } }); // priority 20
      await b.events.append(id, { type: "accept", actor: "browser" }); // priority 10
      const first = (await b.work.lease("dies", { leaseMs: 1_000 }))!;
      expect(first.item.kind).toBe("accept");
      advance(1_001);
      const again = await Promise.all([b.work.lease("x"), b.work.lease("y")]);
      expect(again.map((l) => `${l?.item.kind}:${l?.attempt}`)).toEqual(["accept:2", "steer:1"]);
      expect(again[0]!.item.itemId).toBe(first.item.itemId);
    });

    it("rejects bad lease requests without changing anything", async () => {
      const b = await fresh();
      await cycling(b);
      await expectCode(b.work.lease("", {}), "bad_input");
      await expectCode(b.work.lease("w", { leaseMs: 1 }), "bad_input");
      await expectCode(b.work.ack("lse_nope"), "not_found");
      await expectCode(b.work.nack("lse_nope"), "not_found");
    });

    it("reads a session's work version in one statement: its last seq, every lease an item has had, its dead ones counted", async () => {
      const b = await fresh({ maxAttempts: 1 });
      await b.sessions.start({ flow: "live-variant", id: "once" });
      const version = () => servicesOf(b).backend.transaction("read", (tx) => tx.queue.workVersion("once"));
      const tag = async () => (await b.sessions.versions("once")).work;
      const none = { count: 0, leases: 0, lastAt: null };
      const tags = [await tag()];
      expect(await version()).toEqual({ lastSeq: 1, open: [], dead: none });
      await b.events.append("once", { type: "generate", actor: "browser" });
      const [item] = await b.work.pending("once");
      const itemId = item!.itemId;
      tags.push(await tag());
      const ready = { itemId, state: "ready", attempts: 0, leaseId: null, leaseExpiresMs: null, availableMs: clock.ms, leases: 0 };
      expect(await version()).toEqual({ lastSeq: 2, open: [ready], dead: none });
      const first = (await b.work.lease("w1", { sessionId: "once", leaseMs: 60_000 }))!;
      tags.push(await tag());
      expect((await version()).open).toEqual([
        { ...ready, state: "leased", attempts: 1, leaseId: first.leaseId, leaseExpiresMs: clock.ms + 60_000, leases: 1 },
      ]);
      advance(1_000);
      await b.work.heartbeat(first.leaseId, { leaseMs: 60_000 });
      tags.push(await tag()); // the same lease, a later expiry
      await b.work.nack(first.leaseId, { reason: "gave up" }); // its last attempt: dead
      tags.push(await tag());
      expect(await version()).toEqual({ lastSeq: 2, open: [], dead: { count: 1, leases: 1, lastAt: new Date(clock.ms).toISOString() } });
      advance(1_000);
      await b.work.retry(itemId);
      tags.push(await tag()); // ready with fresh attempts, as at first
      expect((await version()).open).toEqual([{ ...ready, availableMs: clock.ms, leases: 1 }]);
      const second = (await b.work.lease("w2", { sessionId: "once" }))!;
      tags.push(await tag());
      await b.work.ack(second.leaseId); // done, no result: nothing open or dead, as at first
      tags.push(await tag());
      expect(await version()).toEqual({ lastSeq: 2, open: [], dead: none });
      expect(new Set(tags).size).toBe(tags.length);
      expect(await servicesOf(b).backend.transaction("read", (tx) => tx.queue.workVersion("nobody"))).toEqual({
        lastSeq: null,
        open: [],
        dead: none,
      });
    });

    it("counts each dead item once and every lease each has had, beside the open items", async () => {
      const b = await fresh({ maxAttempts: 1 });
      await b.sessions.start({ flow: "live-variant", id: "dead" });
      const version = () => servicesOf(b).backend.transaction("read", (tx) => tx.queue.workVersion("dead"));
      const steer = (n: number) => b.events.append("dead", { type: "steer", actor: "browser", data: { n } });
      const kill = async () => {
        const l = (await b.work.lease("w", { sessionId: "dead" }))!;
        expect((await b.work.nack(l.leaseId)).state).toBe("dead");
        return l.item.itemId;
      };
      await steer(1);
      await steer(2);
      const a = await kill();
      await b.work.retry(a);
      expect(await kill()).toBe(a); // dead again: two leases
      const lastAt = new Date(clock.ms).toISOString();
      expect(await kill()).not.toBe(a); // the other: one lease
      await steer(3);
      await steer(4);
      const v = await version();
      expect(v.dead).toEqual({ count: 2, leases: 3, lastAt });
      expect(v.open.map((o) => o.state)).toEqual(["ready", "ready"]);
    });

    it("tags work a lease revived by its heartbeat after it expired, and expired again, left in a new state", async () => {
      const b = await fresh({ maxAttempts: 3 });
      await b.sessions.start({ flow: "live-variant", id: "short" });
      await b.events.append("short", { type: "generate", actor: "browser" });
      const tag = async () => (await b.sessions.versions("short")).work;
      const lease = (await b.work.lease("w1", { sessionId: "short", leaseMs: 1_000 }))!;
      const tags = [await tag()];
      advance(2_000);
      await servicesOf(b).queue.reapExpired(); // back in the queue, not delivered again yet
      tags.push(await tag());
      await b.work.heartbeat(lease.leaseId, { leaseMs: 1_000 }); // the same lease holds it again
      expect((await b.work.pending("short")).map((w) => [w.state, w.lease?.leaseId])).toEqual([["leased", lease.leaseId]]);
      tags.push(await tag());
      advance(2_000);
      await servicesOf(b).queue.reapExpired(); // and back again: as after the first expiry, but later
      tags.push(await tag());
      expect(new Set(tags).size).toBe(tags.length);
    });
  });
}

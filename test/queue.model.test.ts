/**
 * Model-based test of the delivery queue: random sequences of enqueue, lease, ack with a fresh
 * or stale lease, nack, clock advances, worker deaths and database reopens, checked against
 * the invariants the queue promises:
 *   - no acked item is delivered again;
 *   - never two live leases on one item;
 *   - an ack with a stale lease (its item went to someone else) is refused;
 *   - every item ends acked or dead-lettered once the workers drain the queue.
 */
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { type Baton, isBatonError, openBaton } from "../src/index.js";
import { cleanupDirs, tempDir } from "./helpers.js";

afterAll(() => cleanupDirs());

const LEASE_MS = 1_000;
const MAX_ATTEMPTS = 4;

interface Held {
  leaseId: string;
  itemId: string;
  worker: number;
  expiresMs: number;
}

interface Model {
  enqueued: Set<string>;
  acked: Set<string>;
  /** Live and lapsed leases the workers still remember. */
  held: Held[];
  /** The latest lease per item: only it may ack. */
  latest: Map<string, string>;
  clockMs: number;
}

interface Real {
  baton: Baton;
  root: string;
  clock: { ms: number };
  sessionId: string;
  reopen(): Promise<void>;
}

type Cmd = fc.AsyncCommand<Model, Real>;

const enqueue = (): Cmd => ({
  check: () => true,
  async run(m, r) {
    const res = await r.baton.events.append(r.sessionId, { type: "steer", actor: "browser", data: { n: m.enqueued.size } });
    m.enqueued.add(`${r.sessionId}:${res.event.seq}`);
  },
  toString: () => "enqueue",
});

const lease = (worker: number): Cmd => ({
  check: () => true,
  async run(m, r) {
    const l = await r.baton.work.lease(`w${worker}`, { leaseMs: LEASE_MS });
    if (!l) return;
    const itemId = l.item.itemId;
    expect(m.acked.has(itemId), `acked item ${itemId} was delivered again`).toBe(false);
    const live = m.held.filter((h) => h.itemId === itemId && h.expiresMs > m.clockMs);
    expect(live, `item ${itemId} leased to w${worker} while ${live.map((h) => `w${h.worker}`).join(",")} holds a live lease`).toEqual([]);
    m.held.push({ leaseId: l.leaseId, itemId, worker, expiresMs: m.clockMs + LEASE_MS });
    m.latest.set(itemId, l.leaseId);
  },
  toString: () => `lease(w${worker})`,
});

const ack = (pick: number): Cmd => ({
  check: (m) => m.held.length > 0,
  async run(m, r) {
    const h = m.held[pick % m.held.length] as Held;
    m.held = m.held.filter((x) => x !== h);
    const fresh = m.latest.get(h.itemId) === h.leaseId;
    try {
      const res = await r.baton.work.ack(h.leaseId);
      expect(fresh, `stale lease ${h.leaseId} (w${h.worker}) acked ${h.itemId}`).toBe(true);
      if (!res.duplicate) {
        expect(m.acked.has(h.itemId), `${h.itemId} acked twice`).toBe(false);
        m.acked.add(h.itemId);
      }
    } catch (err) {
      if (!isBatonError(err, "lease_lost")) throw err;
      // Refused: either stale, or its item was dead-lettered / released meanwhile.
      expect(fresh && m.acked.has(h.itemId), `fresh lease refused after its own ack`).toBe(false);
    }
  },
  toString: () => `ack(#${pick})`,
});

const nack = (pick: number): Cmd => ({
  check: (m) => m.held.length > 0,
  async run(m, r) {
    const h = m.held[pick % m.held.length] as Held;
    m.held = m.held.filter((x) => x !== h);
    try {
      await r.baton.work.nack(h.leaseId);
      m.latest.delete(h.itemId);
    } catch (err) {
      if (!isBatonError(err, "lease_lost")) throw err;
    }
  },
  toString: () => `nack(#${pick})`,
});

const advance = (ms: number): Cmd => ({
  check: () => true,
  async run(m, r) {
    m.clockMs += ms;
    r.clock.ms += ms;
  },
  toString: () => `advance(${ms})`,
});

const killWorker = (worker: number): Cmd => ({
  check: (m) => m.held.some((h) => h.worker === worker),
  async run(m) {
    m.held = m.held.filter((h) => h.worker !== worker); // it dies holding its leases
  },
  toString: () => `kill(w${worker})`,
});

const reopen = (): Cmd => ({
  check: () => true,
  async run(_m, r) {
    await r.reopen();
  },
  toString: () => "reopen",
});

describe("queue model", () => {
  it("keeps its invariants under random enqueue / lease / ack / nack / clock / kill / reopen", async () => {
    // Leases and acks are listed twice: stale-lease races need lease → expire → re-lease → ack.
    const commands = [
      fc.constant(null).map(enqueue),
      fc.integer({ min: 0, max: 2 }).map(lease),
      fc.integer({ min: 0, max: 2 }).map(lease),
      fc.nat().map(ack),
      fc.nat().map(ack),
      fc.nat().map(nack),
      fc.integer({ min: 100, max: 2_500 }).map(advance),
      fc.integer({ min: 0, max: 2 }).map(killWorker),
      fc.constant(null).map(reopen),
    ];
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 60, size: "large" }), async (cmds) => {
        const root = tempDir("baton-model-");
        const clock = { ms: Date.parse("2026-01-01T00:00:00Z") };
        const open = () =>
          openBaton({ root, now: () => new Date(clock.ms), durability: "none", maxAttempts: MAX_ATTEMPTS, defaultLeaseMs: LEASE_MS });
        const real: Real = {
          baton: await open(),
          root,
          clock,
          sessionId: "lv",
          async reopen() {
            await this.baton.close();
            this.baton = await open();
          },
        };
        const b = real.baton;
        await b.sessions.start({ flow: "live-variant", id: "lv" });
        await b.events.append("lv", { type: "generate", actor: "browser" });
        await b.events.append("lv", { type: "source_wrapped", actor: "agent", data: { file: "a" } });
        await b.events.append("lv", { type: "variants_written", actor: "agent", data: { count: 1, expected: 1 } });
        await b.events.append("lv", { type: "cycling", actor: "browser" });
        const model: Model = { enqueued: new Set(), acked: new Set(), held: [], latest: new Map(), clockMs: clock.ms };
        try {
          await fc.asyncModelRun(() => ({ model, real }), cmds);
          // Drain: all workers gone, time passes, one fresh worker finishes everything.
          for (let i = 0; i < 1_000; i++) {
            clock.ms += LEASE_MS + 1;
            const l = await real.baton.work.lease("drain", { leaseMs: LEASE_MS });
            if (!l) break;
            expect(model.acked.has(l.item.itemId), `acked ${l.item.itemId} delivered again while draining`).toBe(false);
            await real.baton.work.ack(l.leaseId);
            model.acked.add(l.item.itemId);
          }
          expect(await real.baton.work.pending()).toEqual([]);
          const diagnostics = (await real.baton.sessions.read("lv")).readDiagnostics.filter((d) => d.code === "work_dead_lettered");
          const dead = new Set(diagnostics.map((d) => /work item (\S+)/.exec(d.message)?.[1]));
          for (const id of model.enqueued) {
            expect(model.acked.has(id) || dead.has(id), `${id} ended neither acked nor dead-lettered`).toBe(true);
          }
        } finally {
          await real.baton.close();
        }
      }),
      { numRuns: 150 },
    );
  });
});

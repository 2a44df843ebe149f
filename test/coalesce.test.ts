import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Coalescer, type Outcome } from "../src/services/work/coalesce.js";

/** A call that takes a few turns of the event loop, like a statement on its way to a server. */
const later = () => new Promise<void>((r) => setTimeout(r, 1));

describe("Coalescer (group commit of requests)", () => {
  it("answers every caller with its own outcome, carries those made meanwhile together, and runs at most `parallel` calls per key", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ key: fc.constantFrom("a", "b"), fail: fc.boolean(), gap: fc.boolean() }), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 1, max: 3 }),
        async (asks, parallel) => {
          const running = new Map<string, number>();
          let most = 0;
          const calls: number[][] = [];
          const c = new Coalescer<{ n: number; key: string; fail: boolean }, number>(
            async (reqs) => {
              const key = reqs[0]!.key;
              expect(
                reqs.every((r) => r.key === key),
                "one key per call",
              ).toBe(true);
              running.set(key, (running.get(key) ?? 0) + 1);
              most = Math.max(most, running.get(key)!);
              calls.push(reqs.map((r) => r.n));
              await later();
              running.set(key, running.get(key)! - 1);
              return reqs.map((r): Outcome<number> => (r.fail ? { error: new Error(`no ${r.n}`) } : { value: r.n * 10 }));
            },
            { parallel },
          );
          const pending: Promise<PromiseSettledResult<number>>[] = [];
          for (const [n, a] of asks.entries()) {
            pending.push(
              c.submit(a.key, { n, key: a.key, fail: a.fail }).then(
                (value) => ({ status: "fulfilled", value }) as const,
                (reason) => ({ status: "rejected", reason }) as const,
              ),
            );
            if (a.gap) await later();
          }
          const settled = await Promise.all(pending);
          settled.forEach((s, n) => {
            if (asks[n]!.fail) expect(s.status === "rejected" && String(s.reason), `caller ${n}`).toBe(`Error: no ${n}`);
            else expect(s.status === "fulfilled" && s.value, `caller ${n}`).toBe(n * 10);
          });
          expect(most).toBeLessThanOrEqual(parallel);
          expect(
            calls.flat().sort((x, y) => x - y),
            "each request carried once",
          ).toEqual(asks.map((_, n) => n));
          // Requests made in one synchronous stretch, with no call in flight, share a call.
          if (asks.every((a) => !a.gap && a.key === "a")) expect(calls.length).toBeLessThanOrEqual(parallel);
        },
      ),
      { numRuns: 60 },
    );
  });

  it("rejects every request a failed call carried, and only those", async () => {
    let call = 0;
    const c = new Coalescer<number, number>(async (reqs) => {
      call++;
      await later();
      if (call === 1) throw new Error("the commit failed");
      return reqs.map((n) => ({ value: n }));
    });
    const first = c.submit("k", 1);
    const rest = [c.submit("k", 2), c.submit("k", 3)];
    await expect(first).rejects.toThrow("the commit failed");
    await expect(Promise.all(rest)).rejects.toThrow("the commit failed"); // same synchronous stretch: same call
    await expect(c.submit("k", 4)).resolves.toBe(4);
  });
});

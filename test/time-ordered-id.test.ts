/**
 * timeOrderedId (core/canonical.ts): the ids Baton gives events. They must be unique, keep one
 * process's order (so the events' id index grows at its edge), and survive a clock that steps
 * back or a burst of more ids than a millisecond's sequence holds.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { timeOrderedId, timeOrderedIds } from "../src/core/canonical.js";

const UUID7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("timeOrderedId", () => {
  it("is a version-7 UUID whose first 48 bits are the millisecond", () => {
    const at = Date.UTC(2030, 0, 2, 3, 4, 5, 678);
    const id = timeOrderedId(at);
    expect(id).toMatch(UUID7);
    expect(Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16)).toBe(at);
  });

  it("keeps its order and never repeats, whatever the clock does (steps back, stands still, jumps)", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -5_000, max: 5_000 }), { minLength: 1, maxLength: 300 }), (steps) => {
        const next = timeOrderedIds(); // a fresh generator: each run starts from its own clock
        let clock = Date.UTC(2031, 5, 1);
        let previous = next(clock);
        const seen = new Set([previous]);
        for (const step of steps) {
          clock += step;
          const id = next(clock);
          expect(id).toMatch(UUID7);
          expect(id > previous, `${id} after ${previous}`).toBe(true);
          expect(seen.has(id)).toBe(false);
          seen.add(id);
          previous = id;
        }
      }),
    );
  });

  it("a burst past the 4,096 ids of one millisecond moves on to the next millisecond, still in order", () => {
    const at = Date.UTC(2032, 0, 1);
    const next = timeOrderedIds();
    const ids = Array.from({ length: 10_000 }, () => next(at));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(Number.parseInt(ids.at(-1)?.replace("-", "").slice(0, 12) ?? "", 16)).toBe(at + 2);
  });
});

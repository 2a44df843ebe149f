/** User JSON of any depth or width is refused with a reason before anything walks it recursively. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson, JSON_LIMITS, jsonBoundsProblem } from "../src/core/canonical.js";

const nest = (depth: number, leaf: unknown = 1): unknown => {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = i % 2 ? { k: v } : [v];
  return v;
};

describe("jsonBoundsProblem", () => {
  it("takes exactly the allowed depth and refuses one more", () => {
    // A scalar is depth 1: n containers around it are n + 1 levels.
    expect(jsonBoundsProblem(nest(JSON_LIMITS.depth))).toBeUndefined();
    expect(jsonBoundsProblem(nest(JSON_LIMITS.depth + 1))).toMatch(/nested deeper than 64 levels/);
  });

  it("answers for any depth without overflowing the stack (100,000 levels)", () => {
    const deep = JSON.parse(`${"[".repeat(100_000)}${"]".repeat(100_000)}`);
    expect(jsonBoundsProblem(deep)).toMatch(/nested deeper/);
  });

  it("refuses more values than the limit, wide or spread out", () => {
    expect(jsonBoundsProblem(new Array(JSON_LIMITS.nodes).fill(0))).toMatch(/more than 100000 values/);
    const wide = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`k${i}`, new Array(600).fill(i)]));
    expect(jsonBoundsProblem(wide)).toMatch(/more than 100000 values/);
    expect(jsonBoundsProblem({ a: new Array(1000).fill("x") })).toBeUndefined();
  });

  it("accepts every ordinary JSON value (property)", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 10 }), (v) => {
        expect(jsonBoundsProblem(v)).toBeUndefined();
      }),
    );
  });
});

describe("canonicalJson", () => {
  it("throws a RangeError past 1,000 levels instead of overflowing the stack", () => {
    expect(() => canonicalJson(nest(999))).not.toThrow();
    expect(() => canonicalJson(JSON.parse(`${"[".repeat(50_000)}${"]".repeat(50_000)}`))).toThrow(RangeError);
  });
});

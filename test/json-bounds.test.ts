/** User JSON of any depth or width is refused with a reason before anything walks it recursively. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  canonicalJson,
  copyJson,
  isPlainJson,
  JSON_LIMITS,
  jsonBoundsProblem,
  jsonTextDepth,
  SETTINGS_TEXT_DEPTH,
} from "../src/core/canonical.js";
import { parseFlowFile } from "../src/core/flows/validate.js";

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

/** The definition canonicalJson keeps byte for byte: JSON.stringify through a key-sorting replacer. */
const sortedCopy = (v: unknown): string | undefined =>
  JSON.stringify(v, (_k, x: unknown) => {
    if (!x || typeof x !== "object" || Array.isArray(x)) return x;
    const o: Record<string, unknown> = {};
    for (const k of Object.keys(x).sort()) o[k] = (x as Record<string, unknown>)[k];
    return o;
  });

const awkwardKey = fc.oneof(
  fc.string(),
  fc.constantFrom("0", "1", "10", "2", "4294967294", "4294967295", "01", "-1", "__proto__", "a", "B", ""),
);
const awkward = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.jsonValue({ maxDepth: 2 }),
    fc.double(),
    fc.constant(undefined),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(awkwardKey, tie("value"), { maxKeys: 6 }),
  ),
})).value;

describe("isPlainJson", () => {
  it("is true of whatever JSON.parse gives, and false of what JSON.stringify would write otherwise (property)", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), (v) => {
        expect(isPlainJson(v)).toBe(true);
        expect(isPlainJson(JSON.parse(JSON.stringify(v)))).toBe(true);
      }),
    );
    class Note {
      text = "x";
    }
    for (const v of [
      undefined,
      Number.NaN,
      1n,
      () => 1,
      new Date(0),
      Object("a"),
      new Note(),
      { a: undefined },
      [1, undefined],
      { u: new URL("https://x.test/") },
    ])
      expect(isPlainJson(v), String(v)).toBe(false);
    expect(isPlainJson(Object.assign(Object.create(null), { a: [1, "b", null, { c: true }] }))).toBe(true);
    expect(isPlainJson(nest(JSON_LIMITS.depth - 1))).toBe(true);
    expect(isPlainJson(nest(JSON_LIMITS.depth + 1))).toBe(false);
  });
});

describe("copyJson", () => {
  it("gives what a JSON round trip gives, sharing nothing with the original (property)", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), (v) => {
        const copy = copyJson(v);
        expect(copy).toStrictEqual(JSON.parse(JSON.stringify(v)));
        expect(JSON.stringify(copy)).toBe(JSON.stringify(v));
        if (typeof v === "object" && v !== null && JSON.stringify(v).length > 2) expect(copy).not.toBe(v);
      }),
      { numRuns: 1000 },
    );
    const own = JSON.parse('{"__proto__":{"b":1},"a":[1,{"c":null}]}') as Record<string, unknown>;
    const copy = copyJson(own);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.keys(copy)).toEqual(["__proto__", "a"]);
    expect(JSON.stringify(copy)).toBe(JSON.stringify(own));
    (copy.a as unknown[]).push(2);
    expect(own.a).toEqual([1, { c: null }]);
    expect(copyJson({ a: undefined, b: [undefined, 1] })).toStrictEqual({ b: [null, 1] });
    expect(Object.is(copyJson({ z: -0 }).z, 0)).toBe(true);
  });
});

describe("canonicalJson", () => {
  it("is JSON.stringify with keys sorted, for values in any key order and for their sorted copies (property)", () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue({ maxDepth: 6 }), awkward), (v) => {
        const expected = sortedCopy(v) ?? "null";
        expect(canonicalJson(v)).toBe(expected);
        expect(canonicalJson(v, JSON.stringify(v))).toBe(expected);
        // The same value parsed back from canonical text has its keys in order (own "__proto__" keys included).
        const sorted = JSON.parse(expected) as unknown;
        expect(canonicalJson(sorted, JSON.stringify(sorted))).toBe(sortedCopy(sorted) ?? "null");
      }),
      { numRuns: 2000 },
    );
  });

  it("takes toJSON, boxed values, an own __proto__ key and integer-like keys as the sorted copy does", () => {
    const own = JSON.parse('{"__proto__":{"b":1},"a":2}') as unknown;
    const cases: unknown[] = [
      { when: new Date(0), a: 1 },
      { s: Object("boxed"), n: Object(3) },
      own,
      { 10: "x", 2: "y", b: 1, a: 0 },
      { a: [undefined, () => 1, Symbol("s")], b: undefined, c: Number.NaN, d: -0 },
      Object.assign(Object.create(null), { a: 1, b: 2 }),
      [{ toJSON: () => ({ z: 1, y: 2 }) }],
    ];
    for (const v of cases) {
      expect(canonicalJson(v)).toBe(sortedCopy(v));
      expect(canonicalJson(v, JSON.stringify(v))).toBe(sortedCopy(v));
    }
  });

  it("drops a function, even one with a toJSON, whatever the order of the keys around it (as earlier builds hashed it)", () => {
    const f = Object.assign(() => 1, { toJSON: () => ({ z: 1, a: 2 }) });
    for (const v of [{ a: f }, { b: 1, a: f }, { a: f, b: 1 }, [f]]) {
      const expected = Array.isArray(v) ? "[null]" : "b" in v ? '{"b":1}' : "{}";
      expect(canonicalJson(v)).toBe(expected);
      expect(canonicalJson(v, JSON.stringify(v))).toBe(expected);
    }
  });

  it("throws a RangeError past 1,000 levels instead of overflowing the stack", () => {
    expect(() => canonicalJson(nest(999))).not.toThrow();
    expect(() => canonicalJson(JSON.parse(`${"[".repeat(50_000)}${"]".repeat(50_000)}`))).toThrow(RangeError);
  });
});

/** The depth of a parsed value: containers count one each, as brackets do in its text. */
function depthOf(v: unknown): number {
  if (v === null || typeof v !== "object") return 0;
  const inner = Object.values(v as object).map(depthOf);
  return 1 + (inner.length > 0 ? Math.max(...inner) : 0);
}

describe("jsonTextDepth", () => {
  it("is the nesting of the value the text holds, whatever its strings and (JSONC) comments contain", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 12 }), fc.integer({ min: 0, max: 2 }), (v, indent) => {
        const text = JSON.stringify(v, null, indent);
        expect(jsonTextDepth(text)).toBe(depthOf(v));
        // Brackets and quotes in comments count for nothing.
        expect(jsonTextDepth(`// "[[{\n/* {"[ */${text}`)).toBe(depthOf(v));
      }),
      { numRuns: 2_000 },
    );
  });

  it("counts as jsonc-parser reads: brackets after a line break in a string or a line comment, and stray closers, hide no depth", async () => {
    const { parseTree } = await import("jsonc-parser");
    const n = 20_000;
    const texts = [
      `{"name":"x"${"]".repeat(n)},"b":${"[".repeat(n)}${"]".repeat(n)}}`, // a stray ] closes nothing in an object
      `${'{"k":1],"k":'.repeat(n)}1${"}".repeat(n)}`,
      `{"s":"a\n${"[".repeat(n)}`, // a string ends at a line break
      `// x\r{"plugin":${"[".repeat(n)}`, // so does a line comment, at \r too
    ];
    for (const t of texts) expect(jsonTextDepth(t)).toBeGreaterThan(SETTINGS_TEXT_DEPTH);
    // What the count keeps Baton from: the parser's stack overflow on these texts.
    for (const i of [0, 1, 3]) expect(() => parseTree(texts[i] as string, [], { allowTrailingComma: true })).toThrow(RangeError);
  });

  it("a flow file nested deeper than the limit is a problem of the file, not a stack overflow", () => {
    const deep = `{"name":"d","x":${"[".repeat(10_000)}${"]".repeat(10_000)}}`;
    expect(() => JSON.parse(deep)).not.toThrow();
    expect(parseFlowFile(deep).problems).toEqual([
      { path: "", message: `nested deeper than ${JSON_LIMITS.depth} levels`, line: 1, column: 1 },
    ]);
  });
});

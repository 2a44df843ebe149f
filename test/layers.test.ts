/**
 * The layer map's checker (scripts/layers.mjs, run by `npm run lint`): it must see a circle of
 * imports, types included, and a room without its README, or the checks it runs cannot fail.
 */
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs script without types
import { circles, longWithoutReason, roomsWithoutReadme, sourceGraph, violation } from "../scripts/layers.mjs";

describe("the layer map's checker", () => {
  it("finds every circle, and only circles", () => {
    const edges = [
      ["a", "b"],
      ["b", "c"],
      ["c", "a"],
      ["c", "d"],
      ["d", "e"],
      ["e", "d"],
      ["f", "a"],
    ];
    const found = (circles(edges) as string[][]).map((c) => c.join(" ")).sort();
    expect(found).toEqual(["a b c", "d e"]);
    expect(
      circles([
        ["a", "b"],
        ["b", "c"],
      ]),
    ).toEqual([]);
  });

  it("counts an `import type` as an import, and finds no circle in src/", () => {
    const edges = sourceGraph() as [string, string][];
    // A type-only import the runtime graph does not see.
    expect(edges).toContainEqual(["src/service-set.ts", "src/platform/workspace.ts"]);
    expect(circles(edges)).toEqual([]);
  });

  it("knows every room of core and services says what it holds", () => {
    expect(roomsWithoutReadme()).toEqual([]);
  });

  it("knows every long file of src/ says at its top why it is long", () => {
    expect(longWithoutReason()).toEqual([]);
    // Without a reason, the longest files would be named.
    expect((longWithoutReason(100) as string[]).length).toBeGreaterThan(10);
  });

  it("refuses an import up the layers", () => {
    expect(violation("src/core/time-travel/paths.ts", "src/services/time-travel/blobs.ts")).toMatch(/layer above/);
    expect(violation("src/services/time-travel/blobs.ts", "src/core/time-travel/paths.ts")).toBeUndefined();
  });
});

/**
 * The layer map's checker (scripts/layers.mjs, run by `npm run lint`): it must see a circle of
 * imports, types included, and a room without its README, or the checks it runs cannot fail.
 */
import { afterAll, describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs script without types
import { circles, longWithoutReason, roomCircles, roomsWithoutReadme, sourceGraph, violation } from "../scripts/layers.mjs";
import { cleanupDirs, tempDir, writeAt } from "./helpers.js";

afterAll(() => cleanupDirs());

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
    // A tree whose only circle is made of types, which the runtime graph never sees.
    const root = tempDir();
    writeAt(root, "src/core/a/README.md", "# a\n");
    writeAt(root, "src/core/a/one.ts", 'import type { Two } from "./two.js";\nexport type One = { two?: Two };\n');
    writeAt(root, "src/core/a/two.ts", 'import type { One } from "./one.js";\nexport type Two = { one?: One };\n');
    writeAt(root, "src/services/README.md", "");
    expect(circles(sourceGraph(root))).toEqual([["src/core/a/one.ts", "src/core/a/two.ts"]]);
    expect(circles(sourceGraph())).toEqual([]);
  });

  it("finds two rooms that use each other, though no two files do", () => {
    const edges = [
      ["src/core/a/one.ts", "src/core/b/two.ts"],
      ["src/core/b/three.ts", "src/core/a/four.ts"],
      ["src/core/a/one.ts", "src/core/types.ts"],
      ["src/services/x/y.ts", "src/core/a/one.ts"],
    ];
    expect(circles(edges)).toEqual([]);
    expect(roomCircles(edges)).toEqual([["src/core/a/", "src/core/b/"]]);
    expect(roomCircles(sourceGraph())).toEqual([]);
  });

  it("knows every room of core and services says what it holds, and names one that does not", () => {
    expect(roomsWithoutReadme()).toEqual([]);
    const root = tempDir();
    writeAt(root, "src/core/said/README.md", "# said\n");
    writeAt(root, "src/core/said/x.ts", "export {};\n");
    writeAt(root, "src/services/unsaid/y.ts", "export {};\n");
    expect(roomsWithoutReadme(root)).toEqual(["src/services/unsaid"]);
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

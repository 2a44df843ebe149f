/**
 * The dashboard's diff placement (src/web/dashboard/diff-view.tsx) against the diffs the server
 * sends (`diff`'s createTwoFilesPatch): every line lands on its own line number, and side by
 * side keeps every line exactly once, in order.
 */
import { createTwoFilesPatch } from "diff";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type DiffLine, parseUnified, sideBySide } from "../src/web/dashboard/diff-view.js";

const text = fc
  .array(fc.constantFrom("a", "b", "c", "d", "", "  x", "-y", "+z", "\\w", "@@ q"), { maxLength: 30 })
  .map((ls) => ls.join("\n"));

describe("dashboard diff view", () => {
  it("places each line of a unified diff on its line in the old and new text", () => {
    fc.assert(
      fc.property(text, text, (a, b) => {
        const { lines, note } = parseUnified(createTwoFilesPatch("a/f", "b/f", a, b, undefined, undefined, { context: 3 }));
        const oldLines = a.split("\n");
        const newLines = b.split("\n");
        if (a === b) {
          expect(lines).toEqual([]);
          expect(note).toBeDefined();
          return;
        }
        for (const l of lines) {
          if (l.kind === "del" || l.kind === "ctx") expect(oldLines[(l.oldNo as number) - 1]).toBe(l.text);
          if (l.kind === "add" || l.kind === "ctx") expect(newLines[(l.newNo as number) - 1]).toBe(l.text);
        }
        // Every removed and added line is there.
        const dels = lines.filter((l) => l.kind === "del").length;
        const adds = lines.filter((l) => l.kind === "add").length;
        expect(dels > 0 || adds > 0).toBe(true);
      }),
    );
  });

  it("side by side keeps every line once, in order, deletions left and additions right", () => {
    fc.assert(
      fc.property(text, text, (a, b) => {
        const { lines } = parseUnified(createTwoFilesPatch("a/f", "b/f", a, b));
        const rows = sideBySide(lines);
        const left = rows.flatMap((r) => (r.left && r.left.kind !== "add" ? [r.left] : []));
        const right = rows.flatMap((r) => (r.right && r.right.kind !== "del" ? [r.right] : []));
        const want = (k: DiffLine["kind"][]) => lines.filter((l) => k.includes(l.kind));
        expect(left).toEqual(want(["ctx", "del"]));
        expect(right).toEqual(want(["ctx", "add"]));
        expect(rows.filter((r) => r.hunk !== undefined).length).toBe(lines.filter((l) => l.kind === "hunk").length);
        for (const r of rows) {
          if (r.left) expect(r.left.kind).not.toBe("add");
          if (r.right) expect(r.right.kind).not.toBe("del");
        }
      }),
    );
  });

  it("names a binary or too large file instead of showing lines", () => {
    expect(parseUnified("Binary files a/logo.bin and b/logo.bin differ\n").note).toBe("Binary files a/logo.bin and b/logo.bin differ");
    expect(parseUnified("--- a/big.txt\n+++ b/big.txt\n(900000 → 900001 bytes: too large to diff)\n").note).toBe(
      "(900000 → 900001 bytes: too large to diff)",
    );
  });
});

/**
 * Redaction remembers the names and keys it judged lately (core/redaction/scan.ts `kindAt`,
 * core/redaction/keys.ts `remembered`). A name cut from a text with `slice` is, in V8, a view of
 * that text when it is 13 characters or more: remembered as it is, it would keep the whole text
 * alive. A long-running server redacts large tool outputs; thousands of remembered names must
 * not hold thousands of outputs.
 */

import { expect, it } from "vitest";
import { redactText } from "../src/core/redaction/text.js";
import { heapAfterGc as heap } from "./helpers.js";

it("does not keep the texts its remembered names were cut from", () => {
  const filler = "lorem ipsum dolor sit amet ".repeat(7_000); // about 190 KB
  const before = heap();
  for (let i = 0; i < 200; i++) {
    // A fresh text each time (not a view of `filler`), with a name of its own: every one a miss.
    const text = `${filler.slice(i)}\nDATABASE_PASSWORD_NUMBER_${i}=s3cr3tV4lue-99xQz${i}\nconfig.accessTokenForService${i}: "Zx9Qw2Lk7Vb3Nm8Pq4Rt${i}"\n`;
    expect(redactText(text)).toContain("[redacted");
  }
  const grown = heap() - before;
  // 200 texts of 190 KB are 38 MB (76 MB as two-byte): kept by their names, the heap would grow by that.
  expect(grown).toBeLessThan(8 * 1024 * 1024);
});

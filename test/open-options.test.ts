/**
 * openBaton refuses an option it does not know (a JavaScript caller's typo, or an option that
 * was renamed) instead of ignoring it: `synchronous` was once read by nothing, and a benchmark
 * believed it ran without fsync.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openBaton } from "../src/index.js";
import { tempDir } from "./helpers.js";

describe("openBaton's options", () => {
  it("refuses an unknown one by name, before anything is created", async () => {
    const root = tempDir();
    const open = openBaton({ root, synchronous: "NORMAL" } as Parameters<typeof openBaton>[0]);
    await expect(open).rejects.toMatchObject({ code: "bad_input", message: expect.stringContaining('unknown option "synchronous"') });
    await expect(open).rejects.toThrow(/durability/);
    expect(existsSync(join(root, ".baton"))).toBe(false);
  });

  it("accepts every known one, and an unknown one left undefined", async () => {
    const b = await openBaton({ root: tempDir(), durability: "relaxed", busyTimeoutMs: 1000, ...{ extra: undefined } });
    await b.close();
  });
});

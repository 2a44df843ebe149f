/**
 * The session's context is folded key by key from event data that comes from JSON (the HTTP
 * API, MCP, the CLI): an own "__proto__" key (JSON.parse makes one) must never become the
 * context's prototype, and a `context:set` that sets nothing is refused, not journalled.
 */
import { afterAll, describe, expect, it } from "vitest";
import { isBatonError, openBaton } from "../src/index.js";
import { cleanupDirs, cli, tempDir } from "./helpers.js";

afterAll(() => cleanupDirs());

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    if (isBatonError(err)) return err.code;
    throw err;
  }
  return "appended";
}

describe("context keys", () => {
  it("refuses __proto__ and an empty context:set; a flow event's __proto__ never becomes the context's prototype", async () => {
    const root = tempDir("baton-context-");
    const b = await openBaton({ root });
    try {
      await b.sessions.start({ flow: "task", id: "s1", title: "t" });
      const before = (await b.events.list("s1")).events.length;
      const hostile = JSON.parse('{"__proto__": {"polluted": true}, "kept": 1}');
      expect(await codeOf(b.facets.setContext("s1", hostile))).toBe("bad_input");
      expect(await codeOf(b.facets.setContext("s1", {}))).toBe("bad_input");
      expect((await b.events.list("s1")).events.length, "nothing journalled").toBe(before);

      // A flow event's data is merged into the context too.
      expect(await codeOf(b.events.append("s1", { type: "start", data: hostile }))).toBe("appended");
      const ctx = (await b.sessions.snapshot("s1")).context;
      expect(Object.getPrototypeOf(ctx)).toBe(Object.prototype);
      expect((ctx as Record<string, unknown>).polluted).toBeUndefined();
      expect(ctx.kept).toBe(1);
      // A refold from the journal (the row holds the own "__proto__" key) says the same.
      await b.sessions.rebuild("s1");
      const rebuilt = await b.sessions.snapshot("s1");
      expect(Object.getPrototypeOf(rebuilt.context)).toBe(Object.prototype);
      expect((rebuilt.context as Record<string, unknown>).polluted).toBeUndefined();
    } finally {
      await b.close();
    }
    const r = cli(["--root", root, "--json", "context", "set", "__proto__={}", "--session", "s1"]);
    expect([r.code, r.json().error.code]).toEqual([2, "bad_input"]);
  });
});

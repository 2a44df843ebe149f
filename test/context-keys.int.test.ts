/**
 * The session's context is folded key by key from event data that comes from JSON (the HTTP
 * API, MCP, the CLI): an own "__proto__" key (JSON.parse makes one) must never become the
 * context's prototype, and a `context:set` that sets nothing is refused, not journalled.
 */
import { afterAll, describe, expect, it } from "vitest";
import type { FlowDefinition } from "../src/core/flows/flow.js";
import { emptySnapshot, foldEvent } from "../src/core/session/fold.js";
import type { JournalEvent } from "../src/core/types.js";
import { isBatonError, openBaton } from "../src/index.js";
import { BUILTIN_FLOWS } from "../src/services/flows.js";
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
  it("refuses __proto__ in a context:set or a flow event, and a context:set of nothing; nothing is journalled", async () => {
    const root = tempDir("baton-context-");
    const b = await openBaton({ root });
    try {
      await b.sessions.start({ flow: "task", id: "s1", title: "t" });
      const before = (await b.events.list("s1")).events.length;
      const hostile = JSON.parse('{"__proto__": {"polluted": true}, "kept": 1}');
      expect(await codeOf(b.facets.setContext("s1", hostile))).toBe("bad_input");
      expect(await codeOf(b.facets.setContext("s1", {}))).toBe("bad_input");
      expect((await b.events.list("s1")).events.length, "nothing journalled").toBe(before);

      // A flow event's data is merged into the context too: refused the same way.
      expect(await codeOf(b.events.append("s1", { type: "start", data: hostile }))).toBe("bad_input");
      expect((await b.events.list("s1")).events.length, "nothing journalled").toBe(before);
    } finally {
      await b.close();
    }
    const r = cli(["--root", root, "--json", "context", "set", "__proto__={}", "--session", "s1"]);
    expect([r.code, r.json().error.code]).toEqual([2, "bad_input"]);
  });

  it("the fold never takes a stored own __proto__ (a journal written before appends refused it) as the context's prototype", () => {
    const flow = BUILTIN_FLOWS.task as FlowDefinition;
    const snap = emptySnapshot("s", flow, "2026-06-01T12:00:00Z");
    const at = "2026-06-01T12:00:00Z";
    for (const [seq, type] of [
      [1, "context:set"],
      [2, "start"],
    ] as const) {
      // As the row is read back: JSON.parse makes "__proto__" an own key.
      const data = JSON.parse(`{"__proto__": {"polluted${seq}": true}, "kept${seq}": ${seq}}`);
      foldEvent(flow, snap, { sessionId: "s", seq, id: `e${seq}`, actor: "agent", at, type, data } as JournalEvent);
    }
    expect(Object.getPrototypeOf(snap.context)).toBe(Object.prototype);
    expect({ ...snap.context }).toEqual({ kept1: 1, kept2: 2 });
    expect((snap.context as Record<string, unknown>).polluted1).toBeUndefined();
    expect((snap.context as Record<string, unknown>).polluted2).toBeUndefined();
  });
});

/**
 * The supervisor's reads (services/session/overview.ts, behind the dashboard's sessions view and
 * filtered timeline): rows with the last run, active first; a filtered scan that reads at most
 * `scanMax` events per call and says where to continue.
 */
import { describe, expect, it } from "vitest";
import { servicesOf } from "../src/compose.js";
import { openBaton } from "../src/index.js";
import { scanEvents } from "../src/services/session/overview.js";
import { tempDir } from "./helpers.js";

describe("session overview", () => {
  it("lists every session with its last run and length, active first", async () => {
    const b = await openBaton({ root: tempDir() });
    try {
      await b.sessions.start({ flow: "task", id: "quiet" });
      await b.sessions.start({ flow: "task", id: "busy" });
      await b.runs.start("busy", { agent: "claude" });
      const rows = await b.sessions.overview();
      const busy = rows.find((r) => r.sessionId === "busy");
      expect(busy).toMatchObject({ status: "active", lastRun: { agent: "claude", status: "running" } });
      expect(busy?.events).toBe((await b.sessions.snapshot("busy")).lastSeq);
      expect(rows.find((r) => r.sessionId === "quiet")?.lastRun).toBeUndefined();
      expect(rows.map((r) => r.sessionId)).toEqual(["busy", "quiet"]); // most recent activity first
      // Only the rows asked for; an unknown id is left out.
      const some = await b.sessions.overview(["quiet", "nope", "quiet"]);
      expect(some.map((r) => r.sessionId)).toEqual(["quiet"]);
      expect(some[0]).toEqual(rows[1]);
    } finally {
      await b.close();
    }
  });

  it("scans a long journal for a filter in bounded slices, continuing where it got to", async () => {
    const b = await openBaton({ root: tempDir() });
    try {
      await b.sessions.start({ flow: "task", id: "long" });
      const notes = Array.from({ length: 2_500 }, (_, i) => ({
        type: "note:added",
        actor: i === 2_400 ? "reviewer" : "agent",
        data: { text: `n${i}` },
      }));
      await b.events.appendBatch("long", notes);
      const first = await scanEvents(servicesOf(b).journal, "long", { after: 0, limit: 10, actor: "reviewer", scanMax: 1_000 });
      expect(first).toMatchObject({ events: [], done: false });
      expect(first.scannedTo).toBe(1_000);
      let at = first.scannedTo;
      const found = [];
      for (;;) {
        const r = await scanEvents(servicesOf(b).journal, "long", { after: at, limit: 10, actor: "reviewer", scanMax: 1_000 });
        found.push(...r.events);
        at = r.scannedTo;
        if (r.done) break;
      }
      expect(found.map((e) => (e.data as { text: string }).text)).toEqual(["n2400"]);
      expect(await b.events.scan("long", { after: 0, limit: 3, type: "note:added" })).toMatchObject({ done: false, scannedTo: 4 });
    } finally {
      await b.close();
    }
  });
});

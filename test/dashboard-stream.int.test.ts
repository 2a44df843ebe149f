/**
 * The dashboard's streams against a real `baton serve` child. The workspace stream
 * (`GET /v1/dashboard/stream`): an append is one message naming its session (not also a
 * "something changed" without one, which makes the page reload every row), and a change that
 * grows no journal (a lock) is one message without a session. The session view's stream
 * (`GET /v1/dashboard/sessions/:id/stream`): the journal, plus `versions` when the session's
 * ledger, checkpoints or work change, also when nothing is journaled.
 */
import { writeFileSync } from "node:fs";
import { get, type IncomingMessage } from "node:http";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openBaton } from "../src/index.js";
import { tempDir } from "./helpers.js";
import { api, liveSession, type Served, serve } from "./server-helpers.js";

/** A stream's `event` messages' data (parsed), as they arrive; `until` resolves once a test holds. */
function sseStream<T>(s: Served, path: string, event: string) {
  const changes: T[] = [];
  const waiters: { test: () => boolean; resolve: () => void }[] = [];
  let res: IncomingMessage | undefined;
  let ready: () => void = () => undefined;
  const readyP = new Promise<void>((r) => {
    ready = r;
  });
  get(
    {
      host: "127.0.0.1",
      port: s.port,
      path,
      headers: { authorization: `Bearer ${s.token}` },
      agent: false,
    },
    (r) => {
      res = r;
      let buf = "";
      r.setEncoding("utf8");
      r.on("data", (chunk: string) => {
        buf += chunk;
        for (let i = buf.indexOf("\n\n"); i >= 0; i = buf.indexOf("\n\n")) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          if (block.includes("event: ready")) ready();
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (block.includes(`event: ${event}`) && data) changes.push(JSON.parse(data));
          for (const w of [...waiters]) if (w.test()) w.resolve();
        }
      });
      r.on("error", () => undefined);
    },
  );
  return {
    changes,
    ready: readyP,
    until: (test: () => boolean) =>
      new Promise<void>((resolve, reject) => {
        if (test()) return resolve();
        const timer = setTimeout(() => reject(new Error(`stream: got ${JSON.stringify(changes)}`)), 10_000);
        waiters.push({
          test,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      }),
    close: () => res?.destroy(),
  };
}

describe("the dashboard's workspace stream", () => {
  it("sends an append as its session's change only, and a lock as one change without a session", async () => {
    const root = tempDir();
    await liveSession(root);
    const s = await serve(root);
    const live = sseStream<{ sessionId: string | null; lastSeq?: number }>(s, "/v1/dashboard/stream", "change");
    try {
      await live.ready;
      expect((await api(s, "POST", "/v1/sessions/hero/events", { type: "generate", actor: "browser" })).status).toBe(201);
      await live.until(() => live.changes.some((c) => c.sessionId === "hero"));
      // A change that grows no journal, from another process: the marker that ends the run.
      const b = await openBaton({ root });
      try {
        await b.locks.acquire("marker", { owner: "test" });
      } finally {
        await b.close();
      }
      await live.until(() => live.changes.some((c) => c.sessionId === null));
      expect(live.changes).toEqual([{ sessionId: "hero", lastSeq: 2 }, { sessionId: null }]);
    } finally {
      live.close();
      await s.stop();
    }
  });
});

interface Versions {
  ledger: string;
  checkpoints: string;
  work: string;
}

describe("the session view's stream", () => {
  it("sends the session's versions on open and when its ledger, checkpoints or work change without a journal event", async () => {
    const root = tempDir();
    writeFileSync(join(root, "page.html"), "<p>one</p>\n");
    await liveSession(root);
    const s = await serve(root);
    const live = sseStream<Versions>(s, "/v1/dashboard/sessions/hero/stream?after=0", "versions");
    const b = await openBaton({ root });
    try {
      await live.ready;
      await live.until(() => live.changes.length === 1);
      const last = () => live.changes[live.changes.length - 1] as Versions;
      const journal = (await b.sessions.snapshot("hero")).lastSeq;
      // Each change in another process, each journaling nothing: one tag moves, the others stay.
      const steps: [keyof Versions, () => Promise<unknown>][] = [
        ["ledger", () => b.ledger.record("hero", { toolName: "Edit", status: "success" })],
        ["checkpoints", () => b.checkpoints.create("hero", { files: ["page.html"], toolName: "Edit" })],
      ];
      for (const [part, act] of steps) {
        const before = last();
        await act();
        await live.until(() => last()[part] !== before[part]);
        for (const other of ["ledger", "checkpoints", "work"] as const) if (other !== part) expect(last()[other]).toBe(before[other]);
      }
      expect((await b.sessions.snapshot("hero")).lastSeq).toBe(journal);
      // Work: an append makes it (journaled), a lease changes it (not journaled).
      const none = last().work;
      await b.events.append("hero", { type: "generate", actor: "browser" });
      await live.until(() => last().work !== none);
      const queued = last().work;
      expect(await b.work.lease("agent-1", { sessionId: "hero" })).toBeDefined();
      await live.until(() => last().work !== queued);
    } finally {
      live.close();
      await b.close();
      await s.stop();
    }
  });

  it("refuses a bad release reason, and names unknown work, changing nothing", async () => {
    const root = tempDir();
    await liveSession(root, [{ type: "generate", actor: "browser" }]);
    const s = await serve(root);
    const b = await openBaton({ root });
    try {
      const lease = (await b.work.lease("agent-1", { sessionId: "hero" }))!;
      const long = await api(s, "POST", `/v1/leases/${lease.leaseId}/release`, { reason: "x".repeat(501) });
      expect(long.status).toBe(400);
      expect(long.json().error.code).toBe("bad_input");
      expect((await b.work.pending("hero"))[0]).toMatchObject({ state: "leased", lease: { leaseId: lease.leaseId } });
      expect((await api(s, "POST", "/v1/leases/lse_nope/release", {})).status).toBe(404);
      expect((await api(s, "POST", "/v1/work/wi_nope/retry", {})).status).toBe(404);
      expect((await api(s, "GET", "/v1/sessions/nope/work")).status).toBe(404);
      const work = await api(s, "GET", "/v1/sessions/hero/work");
      expect(work.json()).toMatchObject({ pending: [{ kind: "generate", state: "leased" }], dead: [] });
      expect((await api(s, "POST", `/v1/leases/${lease.leaseId}/release`, { reason: "stuck" })).json()).toMatchObject({ state: "ready" });
    } finally {
      await b.close();
      await s.stop();
    }
  });
});

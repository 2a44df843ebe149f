/**
 * The dashboard's workspace stream (`GET /v1/dashboard/stream`) against a real `baton serve`
 * child: an append is one message naming its session (not also a "something changed" without
 * one, which makes the page reload every row), and a change that grows no journal (a lock) is
 * one message without a session.
 */
import { get, type IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { openBaton } from "../src/index.js";
import { tempDir } from "./helpers.js";
import { api, liveSession, type Served, serve } from "./server-helpers.js";

/** The stream's `change` messages' data, as they arrive; `until` resolves once one matches. */
function workspaceStream(s: Served) {
  const changes: { sessionId: string | null; lastSeq?: number }[] = [];
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
      path: "/v1/dashboard/stream",
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
          if (block.includes("event: change") && data) changes.push(JSON.parse(data));
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
    const live = workspaceStream(s);
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

/**
 * The local server's JSON API and SSE stream against a real `baton serve` child: durable seqs
 * and idempotent re-sends, the stream's `Last-Event-ID` resume and live push, and the
 * lease lifecycle over HTTP (poll, heartbeat, nack, ack, a poller that leaves mid-poll).
 */
import { get, type IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { tempDir } from "./helpers.js";
import { api, liveSession, raw, type Served, serve } from "./server-helpers.js";

interface SseMessage {
  event?: string;
  id?: string;
  data: string;
}

/** Open the stream and collect its messages; `next(n)` resolves once n messages have arrived. */
function openStream(s: Served, headers: Record<string, string> = {}, query = "") {
  const messages: SseMessage[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  let res: IncomingMessage | undefined;
  const opened = new Promise<IncomingMessage>((resolve, reject) => {
    const req = get(
      {
        host: "127.0.0.1",
        port: s.port,
        path: `/v1/sessions/hero/stream${query}`,
        headers: { authorization: `Bearer ${s.token}`, ...headers },
        agent: false,
      },
      (r) => {
        res = r;
        let buf = "";
        r.setEncoding("utf8");
        r.on("data", (chunk: string) => {
          buf += chunk;
          let i = buf.indexOf("\n\n");
          while (i >= 0) {
            const block = buf.slice(0, i);
            buf = buf.slice(i + 2);
            const m: SseMessage = { data: "" };
            const data: string[] = [];
            for (const line of block.split("\n")) {
              if (line.startsWith("data: ")) data.push(line.slice(6));
              else if (line.startsWith("event: ")) m.event = line.slice(7);
              else if (line.startsWith("id: ")) m.id = line.slice(4);
            }
            m.data = data.join("\n");
            if (data.length) messages.push(m);
            for (const w of [...waiters]) if (messages.length >= w.n) w.resolve();
            i = buf.indexOf("\n\n");
          }
        });
        r.on("error", () => undefined);
        resolve(r);
      },
    );
    req.on("error", reject);
  });
  return {
    opened,
    messages,
    next: (n: number) =>
      new Promise<void>((resolve, reject) => {
        if (messages.length >= n) return resolve();
        const timer = setTimeout(() => reject(new Error(`expected ${n} SSE messages, got ${JSON.stringify(messages)}`)), 10_000);
        waiters.push({
          n,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      }),
    close: () => res?.destroy(),
  };
}

async function withServer(fn: (s: Served) => Promise<void>): Promise<void> {
  const root = tempDir();
  await liveSession(root);
  const s = await serve(root);
  try {
    await fn(s);
  } finally {
    await s.stop();
  }
}

describe("baton serve: API", () => {
  it("answers an event with its durable seq; a re-send with the same id is a duplicate, another body a conflict", async () => {
    await withServer(async (s) => {
      const ev = { id: "br-1", type: "generate", actor: "browser", data: { prompt: "bolder" } };
      const first = await api(s, "POST", "/v1/sessions/hero/events", ev);
      expect(first.status).toBe(201);
      expect(first.json()).toMatchObject({ seq: 2, id: "br-1", duplicate: false, outcome: "moved", phase: "generating" });
      const again = await api(s, "POST", "/v1/sessions/hero/events", ev);
      expect(again.status).toBe(200);
      expect(again.json()).toMatchObject({ seq: 2, duplicate: true });
      const other = await api(s, "POST", "/v1/sessions/hero/events", { ...ev, data: { prompt: "calmer" } });
      expect(other.status).toBe(409);
      expect(other.json().error).toMatchObject({ code: "conflict", seq: 2 });
      const bad = await api(s, "POST", "/v1/sessions/hero/events", { type: "accepted" });
      expect(bad.status).toBe(409);
      expect(bad.json().error).toMatchObject({ code: "invalid_transition", phase: "generating" });
      const session = (await api(s, "GET", "/v1/sessions/hero")).json();
      expect(session.snapshot).toMatchObject({ lastSeq: 2, phase: "generating", context: { prompt: "bolder" } });
      expect(session.status.nextAction.action).toBe("write_variants");
    });
  });

  it("streams the journal, pushes new events, and resumes after Last-Event-ID", async () => {
    await withServer(async (s) => {
      await api(s, "POST", "/v1/sessions/hero/events", { type: "generate", actor: "browser" });
      const live = openStream(s);
      const res = await live.opened;
      expect(res.headers["content-type"]).toBe("text/event-stream");
      expect(res.headers["cache-control"]).toBe("no-cache");
      await live.next(3);
      expect(live.messages[0]).toMatchObject({ event: "ready" });
      expect(live.messages.slice(1).map((m) => [m.id, JSON.parse(m.data).type])).toEqual([
        ["1", "session:started"],
        ["2", "generate"],
      ]);
      await api(s, "POST", "/v1/sessions/hero/events", { type: "source_wrapped", actor: "agent", data: { file: "a.html" } });
      await live.next(4);
      expect(JSON.parse(live.messages[3]?.data ?? "{}")).toMatchObject({ seq: 3, type: "source_wrapped", data: { file: "a.html" } });
      live.close();

      const resumed = openStream(s, { "last-event-id": "2" });
      await resumed.next(2);
      expect(resumed.messages.slice(1).map((m) => m.id)).toEqual(["3"]);
      resumed.close();
      const byQuery = openStream(s, {}, "?after=1");
      await byQuery.next(3);
      expect(byQuery.messages.slice(1).map((m) => m.id)).toEqual(["2", "3"]);
      byQuery.close();
      expect((await api(s, "GET", "/v1/sessions/nope/stream")).status).toBe(404);
      // A Last-Event-ID no seq can be is refused as the same ?after= is, not echoed back as 1e+23.
      const huge = await raw(s.port, {
        path: "/v1/sessions/hero/stream",
        headers: { authorization: `Bearer ${s.token}`, "last-event-id": "99999999999999999999999" },
      });
      expect([huge.status, huge.json().error.code]).toEqual([400, "bad_input"]);
    });
  });

  it("leases over HTTP: long-poll wakes on an append, heartbeat, nack, ack; a poller that leaves gives its lease back", async () => {
    await withServer(async (s) => {
      expect((await api(s, "POST", "/v1/poll", { timeout: 0 })).json()).toEqual({ lease: null });
      const waiting = api(s, "POST", "/v1/poll", { timeout: 10_000, owner: "agent-1", leaseMs: 5000 });
      await api(s, "POST", "/v1/sessions/hero/events", { type: "generate", actor: "browser" });
      const { lease } = (await waiting).json();
      expect(lease).toMatchObject({ attempt: 1, owner: "agent-1", item: { kind: "generate", seq: 2, sessionId: "hero" } });

      const hb = await api(s, "POST", `/v1/leases/${lease.leaseId}/heartbeat`, { leaseMs: 20_000 });
      expect(hb.status).toBe(200);
      expect(Date.parse(hb.json().expiresAt)).toBeGreaterThan(Date.parse(lease.expiresAt));
      expect((await api(s, "POST", `/v1/leases/${lease.leaseId}/nack`, { reason: "not now" })).status).toBe(200);

      const second = (await api(s, "POST", "/v1/poll", { timeout: 5000 })).json().lease;
      expect(second).toMatchObject({ attempt: 2, item: { itemId: lease.item.itemId } });
      expect((await api(s, "POST", `/v1/leases/${lease.leaseId}/ack`, {})).json().error.code, "the nacked lease is gone").toBe(
        "lease_lost",
      );
      // Polls that could never lease anything, and a reason past the bound: said, not answered "no lease".
      for (const bad of [{ owner: "" }, { session: "../x" }]) {
        const r = await api(s, "POST", "/v1/poll", { timeout: 0, ...bad });
        expect([r.status, r.json().error.code], JSON.stringify(bad)).toEqual([400, "bad_input"]);
      }
      const long = await api(s, "POST", `/v1/leases/${second.leaseId}/nack`, { reason: "x".repeat(501) });
      expect([long.status, long.json().error.code]).toEqual([400, "bad_input"]);
      // A result that says nothing to journal, or an actor with control characters: refused, the lease still held.
      for (const bad of [
        { type: "", data: { anything: 1 } },
        { data: { anything: 1 } },
        { actor: "agent" },
        { type: "source_wrapped", actor: "\u0000\u001b[2J", data: { file: "a.html" } },
      ]) {
        const r = await api(s, "POST", `/v1/leases/${second.leaseId}/ack`, bad);
        expect([r.status, r.json().error.code], JSON.stringify(bad)).toEqual([400, "bad_input"]);
      }
      const ack = await api(s, "POST", `/v1/leases/${second.leaseId}/ack`, {
        type: "source_wrapped",
        actor: "agent",
        data: { file: "a.html" },
      });
      expect(ack.status).toBe(200);
      expect(ack.json()).toMatchObject({ duplicate: false, result: { phase: "source_wrapped" } });
      expect(
        (
          await api(s, "POST", `/v1/leases/${second.leaseId}/ack`, { type: "source_wrapped", actor: "agent", data: { file: "a.html" } })
        ).json(),
      ).toMatchObject({
        duplicate: true,
      });

      // A poller that disconnects: the item it would have got stays available to the next one.
      const controller = new AbortController();
      const gone = fetch(`${s.url}/v1/poll`, {
        method: "POST",
        headers: { authorization: `Bearer ${s.token}`, "content-type": "application/json" },
        body: JSON.stringify({ timeout: 10_000 }),
        signal: controller.signal,
      }).catch(() => "aborted");
      await new Promise((r) => setTimeout(r, 100));
      controller.abort();
      expect(await gone).toBe("aborted");
      await api(s, "POST", "/v1/sessions/hero/events", { type: "variants_written", actor: "agent", data: { count: 3, expected: 3 } });
      await api(s, "POST", "/v1/sessions/hero/events", { type: "accept", actor: "browser", data: { variantId: "v1" } });
      const next = (await api(s, "POST", "/v1/poll", { timeout: 2000 })).json().lease;
      expect(next, "the accept is not stuck under a lease held by the departed poller").toMatchObject({
        attempt: 1,
        item: { kind: "accept" },
      });
    });
  });
});

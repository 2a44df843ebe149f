/**
 * A client too slow to send its request holds a connection: the server cuts it at its request
 * timeout (src/server/server.ts) and says why, 408, whether the head or the body stalled, and
 * goes on serving.
 */
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { openBaton } from "../src/index.js";
import { startServer } from "../src/server/server.js";
import { tempDir } from "./helpers.js";

/** What the server sends on a connection given `request`, until it closes it. */
function answer(port: number, request: string): Promise<{ text: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const sock = connect(port, "127.0.0.1");
    let text = "";
    sock.setEncoding("utf8");
    sock.on("data", (d: string) => {
      text += d;
    });
    sock.on("error", reject);
    sock.on("close", () => resolve({ text, ms: Date.now() - started }));
    sock.write(request);
  });
}

describe("a request too slow to arrive", () => {
  it("is answered 408 and its connection closed, the head or the body stalled; the server goes on", async () => {
    const root = tempDir();
    const baton = await openBaton({ root });
    const server = await startServer(baton, { port: 0, requestTimeoutMs: 1_000 });
    try {
      const head = `POST /v1/sessions/s/events HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nAuthorization: Bearer ${server.token}\r\nContent-Type: application/json\r\n`;
      const body = await answer(server.port, `${head}Content-Length: 100\r\n\r\n{"type":`);
      expect(body.text).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
      expect(body.ms).toBeLessThan(5_000);
      const stalledHead = await answer(server.port, head);
      expect(stalledHead.text).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
      const ok = await fetch(`${server.url}/v1/health`, { headers: { authorization: `Bearer ${server.token}` } });
      expect(ok.status).toBe(200);
      await expect(startServer(baton, { port: 0, requestTimeoutMs: 0 })).rejects.toMatchObject({ code: "bad_input" });
    } finally {
      await server.close();
      await baton.close();
    }
  });
});

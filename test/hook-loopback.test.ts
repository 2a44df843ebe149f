/**
 * The hook client's loopback exchange (src/platform/loopback.ts) against a real local server:
 * libuv's TCP handle where the runtime has the interface it knows, node:net otherwise, and
 * the same bytes and errors either way.
 */
import { createServer, type Server } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { exchange } from "../src/platform/loopback.js";

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
  delete process.env.BATON_HOOK_TRANSPORT;
});

/** A server that reads one request (until `\n\n`) and answers `reply(request)`, then closes. */
async function echoServer(reply: (req: string) => string): Promise<number> {
  const server = createServer((sock) => {
    let req = "";
    sock.on("data", (d) => {
      req += d;
      if (req.includes("\n\n")) sock.end(reply(req));
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return (server.address() as { port: number }).port;
}

function run(port: number, request: string) {
  return new Promise<{ transport: string; data: string; end: boolean; error?: string }>((resolve) => {
    const chunks: Buffer[] = [];
    const conn = exchange(port, request, {
      data: (c) => chunks.push(c),
      end: () => resolve({ transport: conn.transport, data: Buffer.concat(chunks).toString(), end: true }),
      error: (error) => resolve({ transport: conn.transport, data: Buffer.concat(chunks).toString(), end: false, error }),
    });
  });
}

describe("loopback exchange", () => {
  const major = Number(process.versions.node.split(".")[0]);

  it("sends the request and delivers the whole response (large, in several reads), then the end", async () => {
    const big = "é".repeat(300_000);
    const port = await echoServer((req) => `got ${req.length} chars\n${big}`);
    const r = await run(port, `hello ${"x".repeat(100_000)}\n\n`);
    expect(r.end).toBe(true);
    expect(r.data).toBe(`got ${100_008} chars\n${big}`);
    // Node 20-24 have the TCP handle interface the exchange knows; a later one may not, and then
    // the exchange must have fallen back to node:net (and still delivered everything above).
    expect(major > 24 ? ["tcp_wrap", "net"] : ["tcp_wrap"]).toContain(r.transport);
  });

  it("BATON_HOOK_TRANSPORT=net uses node:net, with the same result", async () => {
    process.env.BATON_HOOK_TRANSPORT = "net";
    const port = await echoServer((req) => `echo ${req}`);
    const r = await run(port, "ping\n\n");
    expect(r).toEqual({ transport: "net", data: "echo ping\n\n", end: true });
  });

  it("a refused connection is an error on both transports", async () => {
    const port = await echoServer(() => "");
    await new Promise((r) => servers.pop()?.close(r));
    const handle = await run(port, "x\n\n");
    expect(handle.end).toBe(false);
    expect(handle.error).toMatch(/connect|ECONNREFUSED/);
    process.env.BATON_HOOK_TRANSPORT = "net";
    const net = await run(port, "x\n\n");
    expect(net.end).toBe(false);
    expect(net.error).toContain("ECONNREFUSED");
  });

  it("destroy() stops the exchange: no events after it", async () => {
    let closedByClient = false;
    const server = createServer((sock) => {
      // Accepts, reads, never answers; sees the client close.
      sock.resume();
      sock.on("end", () => {
        closedByClient = true;
        sock.end();
      });
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    const port = (server.address() as { port: number }).port;
    const events: string[] = [];
    const conn = exchange(port, "x\n\n", {
      data: () => events.push("data"),
      end: () => events.push("end"),
      error: () => events.push("error"),
    });
    await new Promise((r) => setTimeout(r, 100));
    conn.destroy();
    await new Promise((r) => setTimeout(r, 100));
    expect(events).toEqual([]);
    expect(closedByClient, "the connection was closed").toBe(true);
  });
});

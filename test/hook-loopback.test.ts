/**
 * The hook client's loopback exchange (src/platform/loopback.ts) against a real local server:
 * libuv's TCP handle where the runtime has the interface it knows, node:net otherwise, and
 * the same bytes and errors either way.
 */
import { createServer, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { type Connection, open } from "../src/platform/loopback.js";

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
  delete process.env.BATON_HOOK_TRANSPORT;
});

/** A server that reads one request (until `\n\n`) and answers `reply(request)`, then closes. */
function echoServer(reply: (req: string) => string): Promise<number> {
  return listen((sock) => {
    let req = "";
    sock.on("data", (d) => {
      req += d;
      if (req.includes("\n\n")) sock.end(reply(req));
    });
  });
}

/** A server that accepts, reads and never answers, and sees whether the client closed the connection. */
async function silentServer(): Promise<{ port: number; closedByClient: () => boolean }> {
  let closed = false;
  const port = await listen((sock) => {
    sock.resume();
    sock.on("end", () => {
      closed = true;
      sock.end();
    });
  });
  return { port, closedByClient: () => closed };
}

/** Listen on a loopback port with `onSocket`; the port. */
async function listen(onSocket: (sock: Socket) => void): Promise<number> {
  const server = createServer(onSocket);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return (server.address() as { port: number }).port;
}

function run(port: number, request: string, on?: Connection) {
  return new Promise<{ transport: string; data: string; end: boolean; error?: string }>((resolve) => {
    const chunks: Buffer[] = [];
    const ev = {
      data: (c: Buffer) => chunks.push(c),
      end: () => resolve({ transport: conn.transport, data: Buffer.concat(chunks).toString(), end: true }),
      error: (error: string) => resolve({ transport: conn.transport, data: Buffer.concat(chunks).toString(), end: false, error }),
    };
    const conn = (on ?? open(port)).send(request, ev);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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
    const { port, closedByClient } = await silentServer();
    const events: string[] = [];
    const conn = open(port).send("x\n\n", {
      data: () => events.push("data"),
      end: () => events.push("end"),
      error: () => events.push("error"),
    });
    await new Promise((r) => setTimeout(r, 100));
    conn.destroy();
    await new Promise((r) => setTimeout(r, 100));
    expect(events).toEqual([]);
    expect(closedByClient(), "the connection was closed").toBe(true);
  });
});

/** How a connection the server dropped ends for the request sent on it. */
const NO_ANSWER = /^end$|(?:read|write) failed|ECONNRESET|EPIPE/;

describe.each(["tcp_wrap", "net"])("a connection opened before its request (%s)", (want) => {
  const use = () => {
    if (want === "net") process.env.BATON_HOOK_TRANSPORT = "net";
  };
  // A Node after 24 may not have the TCP handle interface the exchange knows: node:net then.
  const transport =
    want === "tcp_wrap" && Number(process.versions.node.split(".")[0]) > 24 ? expect.stringMatching(/^(tcp_wrap|net)$/) : want;

  it("connects at once and sends the request when it is ready", async () => {
    use();
    const seen: string[] = [];
    const port = await listen((sock) => {
      seen.push("connected");
      let req = "";
      sock.on("data", (d) => {
        req += d;
        if (req.includes("\n\n")) {
          seen.push(`request ${JSON.stringify(req)}`);
          sock.end(`echo ${req}`);
        }
      });
    });
    const conn = open(port);
    await sleep(100);
    expect(seen, "the server accepted the connection before any request").toEqual(["connected"]);
    const r = await run(port, "ping\n\n", conn);
    expect(r).toEqual({ transport, data: "echo ping\n\n", end: true });
    expect(seen).toEqual(["connected", 'request "ping\\n\\n"']);
  });

  it("a request sent before the connection is up goes out once it is", async () => {
    use();
    const port = await echoServer((req) => `echo ${req}`);
    const r = await run(port, "now\n\n", open(port));
    expect(r).toEqual({ transport, data: "echo now\n\n", end: true });
  });

  it("a refused connection is the request's error, sent before or after the refusal", async () => {
    use();
    const port = await echoServer(() => "");
    await new Promise((r) => servers.pop()?.close(r));
    const early = await run(port, "x\n\n", open(port));
    expect(early.end).toBe(false);
    expect(early.error).toMatch(/connect|ECONNREFUSED/);
    const conn = open(port);
    await sleep(100);
    const late = await run(port, "x\n\n", conn);
    expect(late.end).toBe(false);
    expect(late.error).toMatch(/connect|ECONNREFUSED/);
  });

  // Dropped before the request is written: either way no answer, never a hang. A reset makes
  // the write (or read) fail at once, and run() reads the exchange's handle in its callbacks,
  // which a report from inside send() would reach before the handle exists (a ReferenceError,
  // not an error event).
  it.each([
    ["closed", (sock: Socket) => sock.destroy()],
    ["reset", (sock: Socket) => setTimeout(() => sock.resetAndDestroy(), 20)],
  ] as const)("a connection the server %s before the request: no answer, reported after send() returns", async (_how, onSocket) => {
    use();
    const port = await listen(onSocket);
    const conn = open(port);
    await sleep(150);
    const r = await run(port, "x\n\n", conn);
    expect(r.data).toBe("");
    // The end of the stream, or the write's or read's failure.
    expect(r.end ? "end" : r.error).toMatch(NO_ANSWER);
  });

  it("destroyed unused, it closes the connection and reports nothing; a second send is an error", async () => {
    use();
    const { port, closedByClient } = await silentServer();
    const conn = open(port);
    await sleep(50);
    conn.destroy();
    await sleep(100);
    expect(closedByClient(), "the connection was closed").toBe(true);
    const again = await run(port, "x\n\n", conn);
    expect(again).toMatchObject({ end: false, error: expect.stringContaining("already used or closed") });
  });
});

/**
 * The server's request body reader (src/server/hook-route.ts `readBody`, used by every route a
 * process or an agent posts to): on a real node:http server, a whole body, a chunked one, one
 * over the limit, and a request that is gone before its body was read: each settles, none hangs.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { isBatonError } from "../src/errors.js";
import { readBody } from "../src/server/hook-route.js";

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A server whose handler waits `delayMs`, then reads the body; what readBody gave, once. */
async function reader(delayMs: number, max = 1024): Promise<{ port: number; outcome: Promise<unknown> }> {
  let settle!: (v: unknown) => void;
  const outcome = new Promise((r) => (settle = r));
  const server = createServer((req: IncomingMessage, res) => {
    const read = async () => {
      if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
      return readBody(req, max);
    };
    read().then(
      (body) => {
        settle({ body });
        res.end("{}");
      },
      (err) => {
        settle({ code: isBatonError(err) ? err.code : String(err) });
        res.destroy();
      },
    );
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return { port: (server.address() as { port: number }).port, outcome };
}

function send(port: number, text: string, thenDestroy = false): void {
  const sock = connect(port, "127.0.0.1", () => {
    sock.write(text);
    if (thenDestroy) setTimeout(() => sock.destroy(), 10);
  });
  sock.on("error", () => undefined);
}

const head = (length: number | "chunked") =>
  `POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${length === "chunked" ? "Transfer-Encoding: chunked" : `Content-Length: ${length}`}\r\n\r\n`;

describe("readBody", () => {
  it("reads a whole body and a chunked one", async () => {
    const a = await reader(0);
    send(a.port, `${head(9)}{"a":"b"}`);
    expect(await a.outcome).toEqual({ body: { a: "b" } });
    const b = await reader(0);
    send(b.port, `${head("chunked")}4\r\n{"a"\r\n5\r\n:"b"}\r\n0\r\n\r\n`);
    expect(await b.outcome).toEqual({ body: { a: "b" } });
  });

  it("a body over the limit is payload_too_large", async () => {
    const r = await reader(0, 16);
    send(r.port, `${head(40)}{"a":"${"x".repeat(32)}"}`);
    expect(await r.outcome).toEqual({ code: "payload_too_large" });
  });

  it("a request gone before its body arrives, or before it is read, is bad_input, never a wait", async () => {
    const early = await reader(0);
    send(early.port, `${head(100)}{"a":`, true);
    expect(await early.outcome).toEqual({ code: "bad_input" });
    const late = await reader(100);
    send(late.port, `${head(100)}{"a":`, true);
    expect(await late.outcome).toEqual({ code: "bad_input" });
  });
});

/**
 * `baton mcp`: the MCP server over stdin/stdout, until the client closes stdin or a signal
 * arrives. The entry of dist/mcp.cjs, which the CLI's `mcp` command requires on use.
 * stdout carries protocol messages only: nothing else may write there while this runs.
 */
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import { createMcpServer, type McpServerOptions } from "./server.js";

export type { McpServerOptions } from "./server.js";

/** How long a stop waits for requests in flight (a rollback half done is worse than a late exit). */
const DRAIN_MS = 10_000;

/** Serve until the connection ends; resolves once the server is closed. */
export async function serveStdio(opts: McpServerOptions): Promise<void> {
  const server = createMcpServer(opts);
  const transport = new StdioServerTransport();
  readLinesOwnWay(transport);
  // A line the transport cannot take is said on stderr (stdout carries protocol messages only)
  // and answered as JSON-RPC says: with the message's own id when it can be read (else null), so
  // a client waiting on it is not left hanging in silence. One past the read buffer ends the
  // connection: said too.
  transport.onerror = (err: Error & { requestId?: string | number }) => {
    const code = err instanceof SyntaxError ? -32700 : err.name === "ZodError" ? -32600 : undefined;
    const message =
      code === -32700
        ? `Parse error: ${err.message}`
        : code === -32600
          ? "Invalid Request: not a JSON-RPC 2.0 request, notification or response (its jsonrpc, method, id and params as JSON-RPC has them)"
          : err.message.split("\n")[0];
    process.stderr.write(`baton mcp: ${message}\n`);
    if (code === undefined) return;
    void transport.send({ jsonrpc: "2.0", id: err.requestId ?? null, error: { code, message } } as never).catch(() => undefined);
  };
  const closed = new Promise<void>((resolve) => {
    server.server.onclose = resolve;
  });
  const inflight = new Inflight();
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    void inflight
      .drained(DRAIN_MS)
      .then(() => server.close())
      .catch(() => undefined);
  };
  const signals = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
  process.stdin.once("end", stop); // the client went away (or closed our stdin to stop us)
  process.stdout.on("error", stop); // EPIPE: nobody reads our answers any more
  for (const s of signals) process.once(s, stop);
  try {
    await server.connect(transport);
    inflight.watch(transport);
    await closed;
  } finally {
    process.stdin.off("end", stop);
    process.stdout.off("error", stop);
    for (const s of signals) process.off(s, stop);
    process.stdin.destroy(); // nothing more to read; do not keep the process alive
  }
}

/**
 * Requests received and not yet answered, seen on the transport (its public `onmessage` and
 * `send`), so a stop lets a tool call that is writing finish before the workspace is closed.
 */
class Inflight {
  readonly #ids = new Set<string | number>();
  #idle: (() => void) | undefined;

  watch(t: StdioServerTransport): void {
    const receive = t.onmessage;
    t.onmessage = (m: JSONRPCMessage) => {
      if ("method" in m && "id" in m) this.#ids.add(m.id);
      receive?.(m);
    };
    const send = t.send.bind(t);
    t.send = async (m: JSONRPCMessage) => {
      try {
        await send(m);
      } finally {
        if (!("method" in m) && "id" in m && m.id !== undefined && this.#ids.delete(m.id) && this.#ids.size === 0) this.#idle?.();
      }
    };
  }

  drained(timeoutMs: number): Promise<void> {
    if (this.#ids.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.#idle = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}

/**
 * The SDK's line reader, with two changes: a blank line is skipped (not a parse error), and a
 * message that is JSON but not JSON-RPC carries its id on the error (`requestId`), so the answer
 * names the request it refuses. Left as it is should a later SDK read lines another way.
 */
function readLinesOwnWay(transport: StdioServerTransport): void {
  const rb = (transport as unknown as { _readBuffer?: { _buffer?: Buffer; readMessage(): JSONRPCMessage | null } })._readBuffer;
  if (rb === undefined || typeof rb.readMessage !== "function") return;
  rb.readMessage = () => {
    for (;;) {
      const buf = rb._buffer;
      const nl = buf === undefined ? -1 : buf.indexOf("\n");
      if (buf === undefined || nl === -1) return null;
      const line = buf.toString("utf8", 0, nl).replace(/\r$/, "");
      rb._buffer = buf.subarray(nl + 1);
      if (line.trim() === "") continue;
      const value: unknown = JSON.parse(line); // a SyntaxError: -32700
      const parsed = JSONRPCMessageSchema.safeParse(value);
      if (parsed.success) return parsed.data;
      const id = (value as { id?: unknown } | null)?.id;
      throw Object.assign(parsed.error, typeof id === "string" || typeof id === "number" ? { requestId: id } : {});
    }
  };
}

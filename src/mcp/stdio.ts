/**
 * `baton mcp`: the MCP server over stdin/stdout, until the client closes stdin or a signal
 * arrives. The entry of dist/mcp.cjs, which the CLI's `mcp` command requires on use.
 * stdout carries protocol messages only: nothing else may write there while this runs.
 */
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { createMcpServer, type McpServerOptions } from "./server.js";

export type { McpServerOptions } from "./server.js";

/** How long a stop waits for requests in flight (a rollback half done is worse than a late exit). */
const DRAIN_MS = 10_000;

/** Serve until the connection ends; resolves once the server is closed. */
export async function serveStdio(opts: McpServerOptions): Promise<void> {
  const server = createMcpServer(opts);
  const transport = new StdioServerTransport();
  // A line the transport cannot take is said on stderr (stdout carries protocol messages only)
  // and answered as JSON-RPC says, with a null id (its own cannot be told): a client waiting on
  // it is not left hanging in silence. One past the read buffer ends the connection: said too.
  transport.onerror = (err: Error) => {
    process.stderr.write(`baton mcp: ${err.message.split("\n")[0]}\n`);
    const code = err instanceof SyntaxError ? -32700 : err.name === "ZodError" ? -32600 : undefined;
    if (code === undefined) return;
    const message =
      code === -32700 ? `Parse error: ${err.message}` : "Invalid Request: not a JSON-RPC 2.0 request, notification or response";
    void transport.send({ jsonrpc: "2.0", id: null, error: { code, message } } as never).catch(() => undefined);
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

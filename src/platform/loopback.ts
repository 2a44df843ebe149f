/**
 * One request and its response on a loopback TCP connection, for the processes that ask the
 * workspace's running server (the hook client, hooks/client.ts; `status` and `resume`,
 * cli/ask.ts), and the reading of that response.
 *
 * A hook process sends one request per run, and node:net costs it far more than the request:
 * loading net and Node's stream machinery, then running a Socket's connect, write and read
 * paths for the first time, measured ~8-11 ms of a ~30 ms process (docs/benchmarks.md,
 * "Agent hooks"). So where the runtime has the libuv TCP handle that node:net itself is built
 * on (`process.binding("tcp_wrap")`, the same handle, connect request and write request net
 * uses), the exchange drives it directly: connect, one write, read until the server closes.
 *
 * That binding is Node's internal interface, so it is used only when it has exactly the shape
 * this code knows (checked field by field: a later Node that changed it gets node:net), never
 * under --pending-deprecation (which would print a warning for it), and never with
 * BATON_HOOK_TRANSPORT=net. Anything it throws falls back to node:net as well.
 */
import { createRequire } from "node:module";

export interface ExchangeEvents {
  data(chunk: Buffer): void;
  /** The server closed the connection (all data delivered). */
  end(): void;
  error(reason: string): void;
}

export interface Exchange {
  /** Which transport carried it ("tcp_wrap" or "net"). */
  readonly transport: "tcp_wrap" | "net";
  /** Close the connection; no more events. */
  destroy(): void;
}

/**
 * A connection opened before its request is ready. A server idle since the agent's last call
 * takes a millisecond or more to wake, accept and set the connection up (more on a virtual
 * machine's idle core); opened first, that happens while this process still reads its settings
 * and builds the request. The server reads nothing until the request comes.
 */
export interface Connection {
  /** Write `request` (once) and report the response's bytes until the server closes; reports nothing before it returns. */
  send(request: string, ev: ExchangeEvents): Exchange;
  /** Close it unused (or used: then as the exchange's destroy). */
  destroy(): void;
}

/** Start connecting to 127.0.0.1:`port`. Never throws: a failure is reported to the request sent on it. */
export function open(port: number): Connection {
  const raw = rawTcp();
  if (raw) {
    try {
      return rawOpen(raw, port);
    } catch {
      // the internal handle did not behave as expected: node:net below
    }
  }
  return netOpen(port);
}

interface RawTcp {
  TCP: new (type: number) => TcpHandle;
  TCPConnectWrap: new () => { oncomplete?: (status: number) => void; address?: string; port?: number };
  WriteWrap: new () => { handle?: unknown; oncomplete?: (status: number) => void; async?: boolean };
  socket: number;
  state: Int32Array;
  kReadBytesOrError: number;
  kArrayBufferOffset: number;
  eof: number;
}

interface TcpHandle {
  connect(req: object, address: string, port: number): number;
  readStart(): number;
  writeUtf8String(req: object, text: string): number;
  close(cb?: () => void): void;
  onread?: (buf: ArrayBuffer | undefined) => void;
}

function rawTcp(): RawTcp | undefined {
  if (process.env.BATON_HOOK_TRANSPORT === "net") return undefined;
  if (
    process.env.NODE_PENDING_DEPRECATION === "1" ||
    process.execArgv.includes("--pending-deprecation") ||
    (process.env.NODE_OPTIONS ?? "").includes("--pending-deprecation")
  )
    return undefined;
  try {
    const binding = (process as unknown as { binding?: (name: string) => Record<string, unknown> }).binding;
    if (typeof binding !== "function") return undefined;
    const tcp = binding("tcp_wrap");
    const sw = binding("stream_wrap");
    const uv = binding("uv");
    const constants = tcp.constants as Record<string, unknown> | undefined;
    // The shape of Node 12-24's interface: a write request passed in, its result an error number,
    // whether it went async in kLastWriteWasAsync. (Later Nodes return the write request instead.)
    if (
      typeof tcp.TCP !== "function" ||
      typeof tcp.TCPConnectWrap !== "function" ||
      typeof sw.WriteWrap !== "function" ||
      typeof constants?.SOCKET !== "number" ||
      !(sw.streamBaseState instanceof Int32Array) ||
      typeof sw.kReadBytesOrError !== "number" ||
      typeof sw.kArrayBufferOffset !== "number" ||
      typeof sw.kLastWriteWasAsync !== "number" ||
      "kLastWriteErr" in sw
    )
      return undefined;
    return {
      TCP: tcp.TCP as RawTcp["TCP"],
      TCPConnectWrap: tcp.TCPConnectWrap as RawTcp["TCPConnectWrap"],
      WriteWrap: sw.WriteWrap as RawTcp["WriteWrap"],
      socket: constants.SOCKET as number,
      state: sw.streamBaseState,
      kReadBytesOrError: sw.kReadBytesOrError,
      kArrayBufferOffset: sw.kArrayBufferOffset,
      eof: typeof uv.UV_EOF === "number" ? uv.UV_EOF : -4095,
    };
  } catch {
    return undefined;
  }
}

/** A send on a connection already used or closed: reported, as a failed exchange, once the caller has its handle. */
function refused(transport: Exchange["transport"], ev: ExchangeEvents, reason: string): Exchange {
  let live = true;
  queueMicrotask(() => {
    if (live) ev.error(reason);
  });
  return {
    transport,
    destroy: () => {
      live = false;
    },
  };
}

function rawOpen(b: RawTcp, port: number): Connection {
  const handle = new b.TCP(b.socket);
  let closed = false;
  let connected = false;
  let failed: string | undefined;
  let sent: { request: string; ev: ExchangeEvents } | undefined;
  const close = () => {
    if (closed) return;
    closed = true;
    handle.onread = () => undefined;
    try {
      handle.close();
    } catch {
      // closing already
    }
  };
  const fail = (reason: string) => {
    if (closed) return;
    close();
    sent?.ev.error(reason);
  };
  // Kept referenced until they complete: the native side calls back into them.
  const connect = new b.TCPConnectWrap();
  let write: InstanceType<RawTcp["WriteWrap"]> | undefined;
  const start = ({ request, ev }: { request: string; ev: ExchangeEvents }) => {
    handle.onread = (buf) => {
      const n = b.state[b.kReadBytesOrError] as number;
      if (n > 0 && buf) ev.data(Buffer.from(new Uint8Array(buf, b.state[b.kArrayBufferOffset], n)));
      else if (n === b.eof) {
        close();
        ev.end();
      } else if (n < 0) fail(`read failed (${n})`);
    };
    const readErr = handle.readStart();
    if (readErr) return fail(`read failed (${readErr})`);
    write = new b.WriteWrap();
    write.handle = handle;
    write.async = false;
    write.oncomplete = (st: number) => {
      if (st < 0) fail(`write failed (${st})`);
    };
    const writeErr = handle.writeUtf8String(write, request);
    if (writeErr) fail(`write failed (${writeErr})`);
  };
  connect.address = "127.0.0.1";
  connect.port = port;
  connect.oncomplete = (status: number) => {
    if (closed) return;
    if (status < 0) {
      failed = `connect failed (${status})`;
      return fail(failed);
    }
    connected = true;
    if (sent) start(sent);
  };
  const err = handle.connect(connect, "127.0.0.1", port);
  if (err) {
    close();
    throw new Error(`connect failed (${err})`);
  }
  return {
    send(request, ev) {
      if (failed !== undefined) return refused("tcp_wrap", ev, failed);
      if (sent || closed) return refused("tcp_wrap", ev, "the connection was already used or closed");
      const call = { request, ev };
      sent = call;
      // Never inside send(): a failure is reported once the caller holds the exchange.
      if (connected)
        queueMicrotask(() => {
          if (!closed) start(call);
        });
      return { transport: "tcp_wrap", destroy: close };
    },
    destroy: close,
  };
}

function netOpen(port: number): Connection {
  let sock: import("node:net").Socket | undefined;
  let done = false;
  let sent: ExchangeEvents | undefined;
  // What happened before the request was sent, told to it then.
  let early: ((ev: ExchangeEvents) => void) | undefined;
  const finish = (f: (ev: ExchangeEvents) => void) => {
    if (done) return;
    done = true;
    sock?.destroy();
    if (sent) f(sent);
    else early = f;
  };
  try {
    // Through createRequire: bin/baton.cjs runs the bundle in a vm.Script, where import() is unavailable.
    const net = createRequire(import.meta.url)("node:net") as typeof import("node:net");
    sock = net.connect({ port, host: "127.0.0.1" });
    sock.on("data", (chunk: Buffer) => {
      if (!done) sent?.data(chunk);
    });
    sock.on("end", () => finish((ev) => ev.end()));
    sock.on("close", () => finish((ev) => ev.end()));
    sock.on("error", (e: NodeJS.ErrnoException) => finish((ev) => ev.error(`connection failed: ${e.code ?? e.message}`)));
  } catch (err) {
    finish((ev) => ev.error(`cannot connect: ${(err as Error).message}`));
  }
  const destroy = () => {
    sent ??= { data: () => undefined, end: () => undefined, error: () => undefined };
    finish(() => undefined);
  };
  return {
    send(request, ev) {
      if (sent) return refused("net", ev, "the connection was already used or closed");
      sent = ev;
      const told = early;
      if (told) {
        early = undefined;
        queueMicrotask(() => told(ev));
      } else sock?.write(request);
      return { transport: "net", destroy };
    },
    destroy,
  };
}

/** An HTTP/1.1 response once complete (by Content-Length, chunked end, or the connection's end); else undefined. */
export function parseResponse(buf: Buffer, ended: boolean): { status: number; body: string } | undefined {
  const end = buf.indexOf("\r\n\r\n");
  if (end < 0) return undefined;
  const lines = buf.subarray(0, end).toString("latin1").split("\r\n");
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? "");
  if (!m) return ended ? { status: 0, body: "" } : undefined;
  const status = Number(m[1]);
  let length: number | undefined;
  let chunked = false;
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === "content-length") length = Number(value);
    else if (name === "transfer-encoding") chunked = value.toLowerCase().includes("chunked");
  }
  const rest = buf.subarray(end + 4);
  if (chunked) {
    const parts: Buffer[] = [];
    let at = 0;
    for (;;) {
      const eol = rest.indexOf("\r\n", at);
      if (eol < 0) return undefined;
      const size = Number.parseInt(rest.subarray(at, eol).toString("latin1"), 16);
      if (!Number.isFinite(size)) return { status, body: "" };
      if (size === 0) return { status, body: Buffer.concat(parts).toString("utf8") };
      if (rest.length < eol + 2 + size + 2) return undefined;
      parts.push(rest.subarray(eol + 2, eol + 2 + size));
      at = eol + 2 + size + 2;
    }
  }
  if (length !== undefined && Number.isSafeInteger(length)) {
    return rest.length >= length ? { status, body: rest.subarray(0, length).toString("utf8") } : ended ? { status, body: "" } : undefined;
  }
  return ended ? { status, body: rest.toString("utf8") } : undefined;
}

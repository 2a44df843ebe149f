/**
 * `startServer(baton)`: the workspace's local HTTP server. Binds 127.0.0.1 only, claims
 * `.baton/server.json`, guards every request (security.ts) before Hono routes it (app.ts), and
 * shuts down gracefully: long-polls and SSE streams end, in-flight writes finish, the server
 * file is removed.
 */

import { setMaxListeners } from "node:events";
import { statSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";
import type { Baton } from "../api.js";
import { BUILD } from "../core/build.js";
import { BatonError, badInput } from "../errors.js";
import { httpHooksOn } from "../platform/claude-http-hooks.js";
import { startRunSweeper } from "../platform/run-sweeper.js";
import { readServerFile, releaseServerFile, type ServerInfo, serverAlive } from "../platform/server-file.js";
import { type AppOptions, buildApp } from "./app.js";
import { cliHttpHandler, isCliRequest } from "./cli-route.js";
import { childAnswersDueBy } from "./hook-child.js";
import { hookClientHttpHandler, isHookClientRequest } from "./hook-client-route.js";
import { hookAnswerer, hookHttpHandler, isHookRequest, servedWorkspace } from "./hook-route.js";
import { isNativeHookRequest, nativeHookHttpHandler, nativeHookRefused } from "./native-hook-route.js";
import { allowedHosts, allowedOrigins, BAD_PORTS, checkRequest, corsHeaders, type GuardConfig, newToken, parseOrigin } from "./security.js";
import { claimServerFile, ownServerKey, ownStartTime, writeServerKey } from "./server-file.js";

export interface ServerOptions {
  /** Port to bind. Default: the port this workspace's server used last time if free, else any free port. 0: any free port. */
  port?: number;
  /** Largest request body, in bytes. Default 256 KiB. */
  maxBodyBytes?: number;
  /** Largest request head (request line + headers), in bytes. Default 16 KiB. */
  maxHeaderBytes?: number;
  /** How long a request (head and body) may take to arrive; a slower one is answered 408. Default 30 s. */
  requestTimeoutMs?: number;
  /** Make a new token instead of reusing the workspace's. Default false. */
  rotateToken?: boolean;
  /**
   * Other origins whose pages may call the API (e.g. `http://localhost:5173`, a dev server that
   * embeds the browser client). They get exact-origin CORS headers; every other origin is refused.
   * Default none: only the server's own pages.
   */
  allowOrigins?: readonly string[];
  /** The demo page's assets. */
  asset?: AppOptions["asset"];
  /**
   * Stop after this long without a request (none in flight), and when `.baton/config.json`
   * changes (hooks then refuse to use it: a new server reads the new settings), unless the
   * workspace has Claude Code's HTTP hooks, which only a server answers. Default: never.
   */
  idleExitMs?: number;
}

/** Why a server stopped by itself. */
export type StopReason = "idle" | "workspace_gone" | "config_changed";

export interface RunningServer {
  readonly port: number;
  readonly token: string;
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly info: ServerInfo;
  /** Stop accepting, end streams and polls, remove server.json. Idempotent. */
  close(): Promise<void>;
  /**
   * Resolves when the server stops by itself, after closing: idle past `idleExitMs`, its
   * workspace's `.baton` directory gone (removed or replaced), or (with `idleExitMs`)
   * `.baton/config.json` changed. Never resolves otherwise.
   */
  readonly stopped: Promise<StopReason>;
}

export const DEFAULT_MAX_BODY_BYTES = 256 * 1024;
/**
 * Largest body of Claude Code's own hook payloads (`/v1/agent-hooks/`): a PostToolUse for Edit
 * carries the whole file (`tool_response.originalFile`), and a refused one runs unanswered.
 */
export const AGENT_HOOK_MAX_BODY_BYTES = 32 * 1024 * 1024;
export const DEFAULT_MAX_HEADER_BYTES = 16 * 1024;
/** How long a request may take to arrive, head and body (a stalled client holds a connection). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** How long close() lets in-flight requests finish before cutting connections. */
const CLOSE_GRACE_MS = 2_000;
/** How long shutdown keeps a connection whose hook a child process is answering. */
const CHILD_GRACE_MS = 8_000;
/** How often the server looks for its workspace (and, with an idle exit, at its idleness). */
const WATCH_EVERY_MS = 2_000;

/** Throws bad_input for a port no server should take: past TCP's, or one browsers will not connect to. */
export function checkPort(port: number | undefined): void {
  if (port === undefined) return;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw badInput(`--port must be a TCP port, 0 to 65535 (0: any free one), got ${port}`);
  if (BAD_PORTS.has(port))
    throw badInput(
      `--port ${port} is one browsers and Node's fetch refuse to connect to (the fetch standard's bad ports), so the dashboard could not reach the server: pick another, or 0 for any free one`,
    );
}

export async function startServer(baton: Baton, opts: ServerOptions = {}): Promise<RunningServer> {
  checkPort(opts.port);
  const dir = baton.workspace.dir;
  const key = opts.rotateToken ? undefined : ownServerKey(dir);
  const maxBodyBytes = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const shutdown = new AbortController();
  // Every open stream and poll listens to it: many at once are expected, not a leak.
  setMaxListeners(0, shutdown.signal);
  const extraOrigins = new Set<string>();
  for (const o of opts.allowOrigins ?? []) {
    const parsed = parseOrigin(o);
    if (!parsed)
      throw badInput(`--allow-origin ${JSON.stringify(o)} is not an origin; give scheme, host and port, e.g. http://localhost:5173`);
    extraOrigins.add(parsed);
  }
  const guard: {
    cfg?: GuardConfig;
    app?: ReturnType<typeof getRequestListener>;
    hooks?: ReturnType<typeof hookHttpHandler>;
    cli?: ReturnType<typeof cliHttpHandler>;
    nativeHooks?: ReturnType<typeof nativeHookHttpHandler>;
    hookClients?: ReturnType<typeof hookClientHttpHandler>;
    /** The identity of the `.baton` directory served (dirIdentity), once serving. */
    served?: string;
  } = {};
  const idleExitMs = opts.idleExitMs;
  if (idleExitMs !== undefined && (!Number.isFinite(idleExitMs) || idleExitMs <= 0))
    throw badInput(`the idle exit must be a positive duration, got ${idleExitMs} ms`);
  // Requests in flight and the time the last one ended, for the idle exit.
  const activity = { inFlight: 0, lastMs: Date.now() };

  const requestTimeout = opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  if (!Number.isFinite(requestTimeout) || requestTimeout <= 0)
    throw badInput(`the request timeout must be a positive duration, got ${requestTimeout} ms`);
  const server = createServer(
    {
      maxHeaderSize: opts.maxHeaderBytes ?? DEFAULT_MAX_HEADER_BYTES,
      requestTimeout,
      headersTimeout: Math.min(10_000, requestTimeout),
      // Node checks the timeouts this often: a slow request is cut within a few seconds of its
      // timeout, not up to 30 s after it.
      connectionsCheckingInterval: Math.min(2_000, requestTimeout / 2),
    },
    (req: IncomingMessage, res: ServerResponse) => {
      activity.inFlight++;
      res.once("close", () => {
        activity.inFlight--;
        activity.lastMs = Date.now();
      });
      const nativeHook = isNativeHookRequest(req);
      const hookClient = !nativeHook && isHookClientRequest(req);
      const cfg =
        guard.cfg && (nativeHook || hookClient)
          ? { ...guard.cfg, maxBodyBytes: Math.max(maxBodyBytes, AGENT_HOOK_MAX_BODY_BYTES) }
          : guard.cfg;
      const failure = cfg
        ? checkRequest(
            {
              method: req.method ?? "GET",
              host: req.headers.host,
              origin: req.headers.origin,
              contentType: req.headers["content-type"],
              contentLength: req.headers["content-length"],
            },
            cfg,
          )
        : { status: 503, code: "forbidden" as const, message: "starting" };
      if (failure) {
        // Claude Code takes a refused HTTP hook as "go on": its call runs unanswered. Say so, for
        // what Claude Code can have sent: never a web page's request (browsers send an Origin on
        // every POST, rebinding ones included), which could fill the log with false alarms and
        // rotate the real ones out.
        if (nativeHook && req.headers.origin === undefined)
          nativeHookRefused(dir, req.url, { code: failure.code, message: failure.message });
        const body = JSON.stringify({ error: { code: failure.code, message: failure.message } });
        // Close the connection: the refused request's body (if any) is never read.
        res.writeHead(failure.status, {
          "Content-Type": "application/json",
          "Content-Length": Buffer.byteLength(body),
          Connection: "close",
        });
        res.end(body);
        return;
      }
      const origin = req.headers.origin?.toLowerCase();
      if (origin !== undefined && extraOrigins.has(origin)) {
        const preflight = req.method === "OPTIONS";
        for (const [k, v] of Object.entries(corsHeaders(origin, preflight))) res.setHeader(k, v);
        if (preflight) {
          res.writeHead(204).end();
          return;
        }
      }
      // A write to a workspace removed (or replaced) since the last watch tick would be
      // acknowledged and lost with the deleted database: refused, and the server stops now.
      if (req.method !== "GET" && req.method !== "HEAD" && guard.served !== undefined && dirIdentity(dir) !== guard.served) {
        stopBy?.("workspace_gone");
        const body = JSON.stringify({
          error: {
            code: "shutting_down",
            message: `the workspace's .baton directory (${dir}) was removed or replaced: nothing was written; the server is stopping`,
          },
        });
        res.writeHead(503, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body), Connection: "close" });
        res.end(body);
        return;
      }
      // Agent hooks: the hot path (every tool call), served without Hono (hook-route.ts).
      if (guard.hooks && isHookRequest(req)) void guard.hooks(req, res);
      else if (guard.nativeHooks && nativeHook) void guard.nativeHooks(req, res);
      else if (guard.hookClients && hookClient) void guard.hookClients(req, res);
      // `status` and `resume --json` for the CLI (every turn of an agent), also without Hono.
      else if (guard.cli && isCliRequest(req)) void guard.cli(req, res);
      else void guard.app?.(req, res);
    },
  );
  // A malformed request line, an oversized head, a request too slow to arrive: answered here,
  // never a crash.
  server.on("clientError", (err: NodeJS.ErrnoException, socket) => {
    const status =
      err.code === "HPE_HEADER_OVERFLOW"
        ? "431 Request Header Fields Too Large"
        : err.code === "ERR_HTTP_REQUEST_TIMEOUT"
          ? "408 Request Timeout"
          : "400 Bad Request";
    if (socket.writable) socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    else socket.destroy();
  });

  // Refuse early when a live server holds the workspace (the claim below is the atomic check).
  const holder = readServerFile(dir);
  if (holder && holder.pid !== process.pid && serverAlive(holder) && (await answersHealth(holder.port))) throw running(holder);
  // A remembered port on the fetch standard's list (an older build took `--port 6000`) is not taken again.
  const remembered = key?.port !== undefined && !BAD_PORTS.has(key.port) ? key.port : undefined;
  const port = await listen(server, opts.port ?? remembered, opts.port !== undefined);
  // A token is only ever sent to one port: Claude Code's HTTP hooks keep POSTing it to the port
  // they name, and whoever holds that port now would read it. On another port, a new token (the
  // old entries then fail closed, and `baton hooks status` says to install them again).
  const token = key !== undefined && key.port === port ? key.token : newToken();
  guard.cfg = { hosts: allowedHosts(port), origins: new Set([...allowedOrigins(port), ...extraOrigins]), maxBodyBytes };
  let stopBy: ((reason: StopReason) => void) | undefined;
  const app = buildApp({ baton, token, port, maxBodyBytes, shutdown: shutdown.signal, asset: opts.asset ?? (() => undefined) });
  const servedWs = servedWorkspace({
    baton,
    shutdown: shutdown.signal,
    // A hook-started server stops so that the next hook starts one that reads the new settings.
    // Not while it answers Claude Code's HTTP hooks: no hook process would start the next one
    // before the next prompt, and the calls until then would run unanswered. It answers each
    // of them in a new process instead (native-hook-route.ts) until it stops when idle.
    ...(idleExitMs !== undefined
      ? {
          onConfigChanged: () => {
            if (!httpHooksOn(baton.root)) stopBy?.("config_changed");
          },
        }
      : {}),
  });
  const answerer = hookAnswerer({ baton, shutdown: shutdown.signal }, servedWs);
  guard.hooks = hookHttpHandler({ answerer, token, maxBodyBytes });
  guard.nativeHooks = nativeHookHttpHandler({ baton, answerer, token, maxBodyBytes: Math.max(maxBodyBytes, AGENT_HOOK_MAX_BODY_BYTES) });
  guard.hookClients = hookClientHttpHandler({ answerer, token, maxBodyBytes: Math.max(maxBodyBytes, AGENT_HOOK_MAX_BODY_BYTES) });
  guard.cli = cliHttpHandler({ baton, ws: servedWs, token, maxBodyBytes });
  guard.app = getRequestListener(app.fetch, {
    errorHandler: () => new Response(JSON.stringify({ error: { code: "internal", message: "request failed" } }), { status: 500 }),
  });

  const info: ServerInfo = { pid: process.pid, port, token, startedAt: new Date().toISOString(), version: BUILD };
  const startTime = ownStartTime();
  if (startTime !== undefined) info.startTime = startTime;
  if (idleExitMs !== undefined) info.idleExitMs = idleExitMs;
  info.settings = servedWs.settings;
  // Whatever stops the start from here (another server, a full disk) closes the listener: a
  // server that cannot say where it is must not keep the port and the database.
  const stopListening = () => new Promise<void>((resolve) => server.close(() => resolve()));
  let claim: Awaited<ReturnType<typeof claimServerFile>>;
  try {
    claim = await claimServerFile(dir, info, async (holder) => serverAlive(holder) && (await answersHealth(holder.port)));
  } catch (err) {
    await stopListening();
    throw err;
  }
  if (!claim.claimed) {
    await stopListening();
    throw running(claim.holder);
  }
  try {
    writeServerKey(dir, { token, port });
  } catch (err) {
    releaseServerFile(dir);
    await stopListening();
    throw err;
  }

  // Runs whose process or host died are marked crashed, and their work given back, without
  // waiting for someone to run status (platform/run-sweeper.ts).
  const stopSweeping = startRunSweeper(() => baton.runs.detectCrashed(), {
    onCrashed: (runs) => {
      for (const r of runs)
        console.error(
          `baton serve: run ${r.runId} (${r.agent}) of session ${r.sessionId} crashed (${r.proof}); ${r.releasedWork.length} work item(s) given back`,
        );
    },
    onError: (err) => console.error("baton serve: looking for crashed runs failed:", err instanceof Error ? err.message : err),
  });
  let closing: Promise<void> | undefined;
  let watch: NodeJS.Timeout | undefined;
  const close = () => {
    closing ??= (async () => {
      stopSweeping();
      if (watch) clearInterval(watch);
      shutdown.abort();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Keep-alive connections become idle as their last response ends (streams and polls end
      // on the abort above): close each as soon as it is idle, and cut the rest after the grace.
      server.closeIdleConnections();
      const sweep = setInterval(() => server.closeIdleConnections(), 20);
      // A hook answered by a child process (refused while shutting down) keeps its connection
      // until the child is done or its deadline passes, however slow the machine.
      // At most CHILD_GRACE_MS in all: `serve --replace` waits 10 s for the old server to go.
      const latest = Date.now() + CHILD_GRACE_MS;
      const cut = () => {
        const due = Math.min(childAnswersDueBy() ?? 0, latest);
        if (due > Date.now()) timer = setTimeout(cut, due - Date.now());
        else server.closeAllConnections();
      };
      let timer = setTimeout(cut, CLOSE_GRACE_MS);
      await closed;
      clearInterval(sweep);
      clearTimeout(timer);
      releaseServerFile(dir);
    })();
    return closing;
  };
  const stopped = new Promise<StopReason>((resolve) => {
    stopBy = (reason) => {
      stopBy = undefined;
      void close().then(() => resolve(reason));
    };
  });
  // The workspace's .baton directory, by identity: a server for a removed (or replaced)
  // workspace serves nothing and would hold its port and database files for nobody.
  const served = dirIdentity(dir);
  guard.served = served;
  watch = setInterval(
    () => {
      if (dirIdentity(dir) !== served) stopBy?.("workspace_gone");
      else if (idleExitMs !== undefined && activity.inFlight === 0 && Date.now() - activity.lastMs >= idleExitMs) stopBy?.("idle");
    },
    Math.max(50, Math.min(WATCH_EVERY_MS, Math.floor((idleExitMs ?? WATCH_EVERY_MS) / 4))),
  );
  watch.unref();
  return { port, token, url: `http://127.0.0.1:${port}`, info, close, stopped };
}

function dirIdentity(dir: string): string | undefined {
  try {
    const s = statSync(dir);
    return s.isDirectory() ? `${s.dev}:${s.ino}` : undefined;
  } catch {
    return undefined;
  }
}

function running(holder: ServerInfo): BatonError {
  return new BatonError(
    "server_running",
    `a baton server (pid ${holder.pid}) already serves this workspace at http://127.0.0.1:${holder.port}; stop it first (kill ${holder.pid})`,
    { pid: holder.pid, port: holder.port },
  );
}

/** Bind 127.0.0.1: the preferred port if given and free (a remembered one falls back to any port). */
async function listen(server: Server, preferred: number | undefined, explicit: boolean): Promise<number> {
  const bind = (port: number) =>
    new Promise<number>((resolve, reject) => {
      const onError = (err: Error) => {
        server.off("listening", onListening);
        reject(err);
      };
      const onListening = () => {
        server.off("error", onError);
        resolve((server.address() as AddressInfo).port);
      };
      server.once("error", onError);
      server.once("listening", onListening);
      server.listen(port, "127.0.0.1");
    });
  try {
    return await bind(preferred ?? 0);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE" && preferred !== undefined && !explicit) return bind(0);
    if (code === "EADDRINUSE" && preferred !== undefined) {
      throw new BatonError(
        "server_running",
        `port ${preferred} is in use on 127.0.0.1; pass --port 0 for any free port, or another --port`,
        {
          port: preferred,
        },
      );
    }
    throw new BatonError("io_error", `cannot listen on 127.0.0.1:${preferred ?? 0}: ${(err as Error).message}`, {}, { cause: err });
  }
}

/** Whether something answers our health route on the port (a live pid may be a reused one). */
async function answersHealth(port: number): Promise<boolean> {
  try {
    const r = await fetch(`http://127.0.0.1:${port}/v1/health`, { signal: AbortSignal.timeout(1_000) });
    return r.ok;
  } catch {
    return false;
  }
}

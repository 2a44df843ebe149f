/**
 * Hands a hook to the workspace's running server (`POST /v1/hooks/:agent/:event`, see
 * docs/http-api.md) and reads its answer. One HTTP/1.1 request written by hand on a loopback
 * connection (loopback.ts): node:http would cost more to load and run than the whole exchange,
 * and a hook process sends exactly one request.
 *
 * The request carries the neutral event this process translated, its request id and deadline;
 * the server answers with the neutral response, which this process renders. The outcome is:
 * - `answered`: the server's response;
 * - `retry`: anything else (refused, not taken, broken off, unreadable). The caller answers the
 *   hook in its own process with the same request id and deadline: every step the server may
 *   have taken is keyed (core/hooks/keys.ts), so whatever it committed is found, not repeated.
 *
 * The server starts its answer (the status line and headers) as soon as it takes the hook and
 * sends the body when done: a server that has not taken the hook within `acceptMs` (stopped,
 * or busy with a long synchronous step) is not waited for; one that took it is waited for until
 * the deadline it enforces itself, plus `graceMs` for its answer to arrive.
 */
import type { HookEvent, HookResponse } from "../core/hooks/types.js";
import { readHookResponse } from "../core/hooks/wire.js";
import { type Connection, type Exchange, open, parseResponse } from "../platform/loopback.js";
import type { ServerInfo } from "../platform/server-file.js";

export type ServerOutcome = { kind: "answered"; response: HookResponse } | { kind: "retry"; reason: string };

export interface HookRequest {
  event: HookEvent;
  /** The hook's workspace root. */
  root: string;
  agentPid: number;
  requestId: string;
  deadline: number;
  /** The store this process would open (store-config.ts `storeIdentity`): a server on another refuses. */
  store?: string;
  /** The settings this process's environment sets (env-options.ts `envSettings`): a server started with others refuses. */
  settings?: string;
}

export interface ClientTimeouts {
  /** No status line by then: the server did not take the hook; answer it here. */
  acceptMs: number;
  /** After the deadline, how long the answer of a server that took the hook may still take to arrive. */
  graceMs: number;
}

export const CLIENT_TIMEOUTS: ClientTimeouts = { acceptMs: 1_000, graceMs: 2_000 };
/** The server's body limit (DEFAULT_MAX_BODY_BYTES in server.ts): larger requests are answered here. */
export const MAX_HOOK_BODY_BYTES = 256 * 1024;

/** Whether server.json's token and port can be put in a request. */
export function validServer(info: ServerInfo): boolean {
  return /^[A-Za-z0-9_-]+$/.test(info.token) && Number.isInteger(info.port) && info.port > 0 && info.port <= 65535;
}

/**
 * Send the hook to the server named in server.json and wait for its answer, on `conn` when the
 * caller opened one to it already (it is closed in every case). Never throws.
 */
export async function askServer(
  info: ServerInfo,
  req: HookRequest,
  timeouts: ClientTimeouts = CLIENT_TIMEOUTS,
  conn?: Connection,
): Promise<ServerOutcome> {
  const outcome = await ask(info, req, timeouts, conn);
  conn?.destroy();
  return outcome;
}

async function ask(info: ServerInfo, req: HookRequest, timeouts: ClientTimeouts, opened: Connection | undefined): Promise<ServerOutcome> {
  if (!validServer(info)) return { kind: "retry", reason: "server.json does not name a usable server" };
  let body: string;
  try {
    body = JSON.stringify({
      root: req.root,
      agentPid: req.agentPid,
      requestId: req.requestId,
      deadline: req.deadline,
      store: req.store,
      settings: req.settings,
      event: req.event,
    });
  } catch (err) {
    return { kind: "retry", reason: `the event cannot be sent (${(err as Error).message})` };
  }
  const length = Buffer.byteLength(body);
  if (length > MAX_HOOK_BODY_BYTES) return { kind: "retry", reason: "the request is larger than the server accepts" };
  const head =
    `POST /v1/hooks/${encodeURIComponent(req.event.agent)}/${encodeURIComponent(req.event.native)} HTTP/1.1\r\n` +
    `Host: 127.0.0.1:${info.port}\r\nAuthorization: Bearer ${info.token}\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${length}\r\nConnection: close\r\n\r\n`;

  return new Promise<ServerOutcome>((resolve) => {
    let settled = false;
    let conn: Exchange | undefined;
    let received: Buffer = Buffer.alloc(0);
    const finish = (o: ServerOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(acceptTimer);
      clearTimeout(answerTimer);
      conn?.destroy();
      resolve(o);
    };
    const retry = (reason: string) => finish({ kind: "retry", reason });
    // Set once the request is on its way (below): a process's first timer costs ~0.3 ms, spent
    // while the server works rather than before it starts. The exchange reports nothing before.
    let acceptTimer: NodeJS.Timeout | undefined;
    let answerTimer: NodeJS.Timeout | undefined;
    const settle = (ended: boolean) => {
      if (received.indexOf("\r\n\r\n") >= 0) clearTimeout(acceptTimer);
      const r = parseResponse(received, ended);
      if (r === undefined) {
        if (ended) retry("the server closed the connection without an answer");
        return;
      }
      if (r.status >= 200 && r.status < 300) {
        try {
          const response = readHookResponse((JSON.parse(r.body) as { response?: unknown }).response);
          if (response) return finish({ kind: "answered", response });
        } catch {
          // not an answer: below
        }
        return retry("the server's answer is not a hook response");
      }
      let code = "";
      try {
        const c = (JSON.parse(r.body) as { error?: { code?: unknown } }).error?.code;
        if (typeof c === "string") code = ` (${c})`;
      } catch {
        // no error body
      }
      retry(`the server answered ${r.status}${code}`);
    };
    conn = (opened ?? open(info.port)).send(head + body, {
      data: (chunk) => {
        received = received.length === 0 ? chunk : Buffer.concat([received, chunk]);
        settle(false);
      },
      end: () => settle(true),
      error: (reason) => retry(reason),
    });
    if (settled) return;
    acceptTimer = setTimeout(() => retry(`the server did not take the hook within ${timeouts.acceptMs} ms`), timeouts.acceptMs);
    answerTimer = setTimeout(
      () => retry("the server took the hook but did not answer by its deadline"),
      Math.max(0, req.deadline - Date.now()) + timeouts.graceMs,
    );
  });
}

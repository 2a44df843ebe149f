/**
 * Hands a hook to the workspace's running server (`POST /v1/hooks/:agent/:event`, see
 * docs/http-api.md) and reads its answer. One HTTP/1.1 request written by hand on a loopback
 * connection (loopback.ts): node:http would cost more to load and run than the whole exchange,
 * and a hook process sends exactly one request.
 *
 * The outcome is one of:
 * - `answered`: print this (the server's answer, or the answer it recorded in the claim);
 * - `fallback`: the server did not act and never will (this process holds the claim, or the
 *   request was never sent): answer in this process;
 * - `lost`: the server took the hook (it holds the claim) but gave no answer: it stopped or was
 *   killed while acting. Running the hook again could act twice, so the agent goes on and the
 *   failure is logged.
 */
import type { ServerInfo } from "../services/server-file.js";
import type { Workspace } from "../services/workspace.js";
import { claim, claimedAnswer, newRequestId, sweepClaims } from "./claims.js";
import { type Exchange, exchange } from "./loopback.js";

export type ServerOutcome = { kind: "answered"; stdout: string } | { kind: "fallback"; reason: string } | { kind: "lost"; reason: string };

export interface HookRequest {
  agent: string;
  native: string;
  /** The payload exactly as read from stdin (a JSON object). */
  text: string;
  cwd: string;
  agentPid: number;
  /** The store this process would open (store-config.ts `storeIdentity`): a server on another refuses. */
  store?: string;
}

export interface ClientTimeouts {
  /** With no answer by then, take the claim if the server has not: the hook runs here. */
  acceptMs: number;
  /** The server took the hook but has not answered by then: give up (`lost`). */
  answerMs: number;
}

export const CLIENT_TIMEOUTS: ClientTimeouts = { acceptMs: 1_000, answerMs: 45_000 };
/** The server's body limit (DEFAULT_MAX_BODY_BYTES in server.ts): larger payloads run here. */
export const MAX_HOOK_BODY_BYTES = 256 * 1024;

/** Send the hook to the server named in server.json and wait for its answer. Never throws. */
export async function askServer(
  info: ServerInfo,
  ws: Workspace,
  req: HookRequest,
  timeouts: ClientTimeouts = CLIENT_TIMEOUTS,
): Promise<ServerOutcome> {
  if (!/^[A-Za-z0-9_-]+$/.test(info.token) || !Number.isInteger(info.port) || info.port <= 0 || info.port > 65535)
    return { kind: "fallback", reason: "server.json does not name a usable server" };
  const raw = req.text.trim();
  const id = newRequestId();
  const store = req.store === undefined ? "" : `"store":${JSON.stringify(req.store)},`;
  const body = `{"requestId":"${id}","root":${JSON.stringify(ws.root)},"cwd":${JSON.stringify(req.cwd)},"agentPid":${req.agentPid},${store}"payload":${raw.startsWith("{") ? raw : "{}"}}`;
  const length = Buffer.byteLength(body);
  if (length > MAX_HOOK_BODY_BYTES) return { kind: "fallback", reason: "the payload is larger than the server accepts" };
  const head =
    `POST /v1/hooks/${encodeURIComponent(req.agent)}/${encodeURIComponent(req.native)} HTTP/1.1\r\n` +
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
    // No answer: whoever claims the request first runs it (claims.ts).
    const giveUp = (reason: string): ServerOutcome => {
      let mine: boolean;
      try {
        mine = claim(ws.dir, id);
      } catch {
        mine = true; // the server cannot claim it either, so it refuses it
      }
      if (mine) {
        sweepClaims(ws.dir); // the server sweeps as it answers; one that does not answer must not leave them piling up
        return { kind: "fallback", reason };
      }
      const stdout = claimedAnswer(ws.dir, id);
      return stdout !== undefined ? { kind: "answered", stdout } : { kind: "lost", reason };
    };
    const acceptTimer = setTimeout(() => {
      let mine: boolean;
      try {
        mine = claim(ws.dir, id);
      } catch {
        mine = true;
      }
      // Not taken yet: it is ours, run it here. Taken: the server is on it; wait for the answer.
      if (mine) {
        sweepClaims(ws.dir);
        finish({ kind: "fallback", reason: `the server did not take the hook within ${timeouts.acceptMs} ms` });
      }
    }, timeouts.acceptMs);
    const answerTimer = setTimeout(
      () => finish(giveUp(`the server took the hook but did not answer within ${timeouts.answerMs} ms`)),
      timeouts.answerMs,
    );
    const settle = (ended: boolean) => {
      const r = parseResponse(received, ended);
      if (r === undefined) {
        if (ended) finish(giveUp("the server closed the connection without an answer"));
        return;
      }
      if (r.status >= 200 && r.status < 300) {
        try {
          const v = JSON.parse(r.body) as { stdout?: unknown };
          if (typeof v.stdout === "string") return finish({ kind: "answered", stdout: v.stdout });
        } catch {
          // not an answer: below
        }
      }
      finish(giveUp(`the server answered ${r.status}`));
    };
    conn = exchange(info.port, head + body, {
      data: (chunk) => {
        received = received.length === 0 ? chunk : Buffer.concat([received, chunk]);
        settle(false);
      },
      end: () => settle(true),
      error: (reason) => finish(giveUp(reason)),
    });
  });
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

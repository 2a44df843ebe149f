/**
 * A small Node client for the workspace's running server, for CLI commands that should go
 * through it when it is up (`baton poll`): find it from `.baton/server.json`, then call the
 * JSON API with its token. Errors come back as the server's BatonError (same code, message and
 * details); a server that does not answer is `server_unreachable`.
 */
import { createRequire } from "node:module";
import type { Baton } from "../api.js";
import type { JsonObject } from "../core/types.js";
import { BatonError, type ErrorCode } from "../errors.js";
import { liveServer, type ServerInfo } from "../platform/server-file.js";
import { challengeProof } from "./server-file.js";

export type { ServerInfo } from "../platform/server-file.js";

export type Lease = NonNullable<Awaited<ReturnType<Baton["work"]["lease"]>>>;

/**
 * The workspace's running server, once it has proven it holds the token (a health challenge
 * bound to its port), or undefined: then use the database directly. The token is never sent to
 * a process that has not proven it: a stale server file may name a pid and port that now
 * belong to something else.
 */
export async function findServer(batonDir: string): Promise<ServerInfo | undefined> {
  const info = liveServer(batonDir);
  return info && (await answersChallenge(info)) ? info : undefined;
}

/** Whether the process on the file's port answers a fresh challenge with the token's proof. */
export async function answersChallenge(info: ServerInfo, timeoutMs = 2_000): Promise<boolean> {
  // createRequire, not import(): the CLI bundle runs from a V8 code cache with no dynamic import.
  const { randomBytes, timingSafeEqual } = createRequire(import.meta.url)("node:crypto") as typeof import("node:crypto");
  const challenge = randomBytes(16).toString("hex");
  try {
    const res = await fetch(`http://127.0.0.1:${info.port}/v1/health?challenge=${challenge}`, { signal: AbortSignal.timeout(timeoutMs) });
    const body = (await res.json()) as { proof?: unknown };
    const want = Buffer.from(challengeProof(info.token, info.port, challenge));
    const got = Buffer.from(typeof body.proof === "string" ? body.proof : "");
    return res.ok && got.length === want.length && timingSafeEqual(got, want);
  } catch {
    return false;
  }
}

export interface RequestOptions {
  body?: unknown;
  signal?: AbortSignal;
  /** Give up after this long. Default 10 s (long-polls add their own wait). */
  timeoutMs?: number;
}

/** Call the server's API; resolves with the parsed JSON body (undefined for 204). */
export async function serverRequest<T>(info: ServerInfo, method: string, path: string, opts: RequestOptions = {}): Promise<T> {
  const url = `http://127.0.0.1:${info.port}${path}`;
  const timeout = AbortSignal.timeout(opts.timeoutMs ?? 10_000);
  const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      headers: { authorization: `Bearer ${info.token}`, ...(method === "GET" ? {} : { "content-type": "application/json" }) },
      ...(method === "GET" ? {} : { body: JSON.stringify(opts.body ?? {}) }),
      signal,
    });
  } catch (err) {
    if (opts.signal?.aborted) throw err;
    throw new BatonError(
      "server_unreachable",
      `the baton server (pid ${info.pid}) at http://127.0.0.1:${info.port} did not answer (${(err as Error).message}); check it is running, or stop it so commands use the database directly`,
      { port: info.port, pid: info.pid },
      { cause: err },
    );
  }
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new BatonError("server_unreachable", `the server at port ${info.port} answered ${res.status} with a body that is not JSON`, {
      port: info.port,
      status: res.status,
    });
  }
  if (!res.ok) {
    const e = (body as { error?: { code?: string; message?: string } & Record<string, unknown> }).error ?? {};
    const { code, message, ...details } = e;
    throw new BatonError((code ?? "internal") as ErrorCode, message ?? `the server answered ${res.status}`, {
      ...details,
      status: res.status,
    });
  }
  return body as T;
}

export interface PollOptions {
  owner?: string;
  sessionId?: string;
  kinds?: string[];
  leaseMs?: number;
  /** How long the server waits for work before answering with none. */
  timeoutMs: number;
  /**
   * How much longer its answer may take: a store that freezes or goes away as the server looks
   * for work holds the answer up to the store's statement bound and a connect timeout (then
   * `503 storage_unavailable`). Default 10 s more than that with the default bounds (30 s, 5 s).
   */
  answerSlackMs?: number;
  signal?: AbortSignal;
}

/** Long-poll the server for work: a lease, or undefined when none came within the timeout. */
export async function pollServer(info: ServerInfo, o: PollOptions): Promise<Lease | undefined> {
  const body: JsonObject = { timeout: o.timeoutMs };
  if (o.owner) body.owner = o.owner;
  if (o.sessionId) body.session = o.sessionId;
  if (o.kinds?.length) body.kinds = o.kinds;
  if (o.leaseMs !== undefined) body.leaseMs = o.leaseMs;
  const r = await serverRequest<{ lease: Lease | null } | undefined>(info, "POST", "/v1/poll", {
    body,
    timeoutMs: o.timeoutMs + (o.answerSlackMs ?? 10_000 + 31_000 + 2 * 5_000),
    ...(o.signal ? { signal: o.signal } : {}),
  });
  return r?.lease ?? undefined;
}

export function ackServer(info: ServerInfo, leaseId: string, result?: { type?: string; data?: JsonObject; actor?: string }) {
  return serverRequest<Awaited<ReturnType<Baton["work"]["ack"]>>>(info, "POST", `/v1/leases/${encodeURIComponent(leaseId)}/ack`, {
    body: result ?? {},
  });
}

export function nackServer(info: ServerInfo, leaseId: string, opts: { delayMs?: number; reason?: string } = {}) {
  return serverRequest<Awaited<ReturnType<Baton["work"]["nack"]>>>(info, "POST", `/v1/leases/${encodeURIComponent(leaseId)}/nack`, {
    body: opts,
  });
}

export function heartbeatServer(info: ServerInfo, leaseId: string, opts: { leaseMs?: number } = {}) {
  return serverRequest<{ leaseId: string; expiresAt: string }>(info, "POST", `/v1/leases/${encodeURIComponent(leaseId)}/heartbeat`, {
    body: opts,
  });
}

/**
 * A one-time login link's path and expiry from the server (`/dashboard#login=<code>`, or the
 * demo page's `/#login=<code>`): what `baton dashboard` and `baton serve` print.
 */
export function requestLoginCode(info: ServerInfo, page: "dashboard" | "demo"): Promise<{ path: string; expiresAt: string }> {
  return serverRequest(info, "POST", "/v1/dashboard/login-codes", { body: { page } });
}

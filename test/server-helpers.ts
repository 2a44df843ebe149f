/**
 * Helpers for tests of `baton serve`: start the real CLI server as a tracked child, wait for
 * its ready line, talk to it with raw HTTP (so tests control every header, Host included),
 * and stop it the way a user would (SIGTERM / SIGINT) or the way a crash does (SIGKILL).
 */
import { readFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { connect } from "node:net";
import { type EventInput, openBaton } from "../src/index.js";
import { type Exit, type LineChild, spawnCommand, waitExit } from "./child-process.js";
import { CLI } from "./helpers.js";

export interface Served {
  child: LineChild;
  port: number;
  token: string;
  url: string;
  pageUrl: string;
  pid: number;
  /** Stop with a signal and wait for the exit. */
  stop(signal?: NodeJS.Signals): Promise<Exit>;
}

/**
 * `baton serve --json` on a workspace (with `env` added to this process's); resolves once it
 * printed its ready line. `o.cwd`: started in that folder, with no `--root` (it finds its
 * workspace as a user's `baton serve` does).
 */
export async function serve(root: string, args: string[] = [], env?: Record<string, string>, o: { cwd?: string } = {}): Promise<Served> {
  const child = spawnCommand(
    process.execPath,
    [CLI, "serve", "--json", ...(o.cwd ? [] : ["--root", root]), ...args],
    "baton serve",
    env ? { ...process.env, ...env } : undefined,
    o.cwd,
  );
  const line = await child.waitForLine((l) => l.startsWith("{"), 15_000, "its ready line");
  const ready = JSON.parse(line) as { url: string; port: number; pageUrl: string; pid: number; serverFile: string; error?: unknown };
  if (ready.error) throw new Error(`baton serve failed: ${line}`);
  const { token } = JSON.parse(readFileSync(ready.serverFile, "utf8")) as { token: string };
  return {
    child,
    port: ready.port,
    token,
    url: ready.url,
    pageUrl: ready.pageUrl,
    pid: ready.pid,
    async stop(signal: NodeJS.Signals = "SIGTERM") {
      if (child.proc.exitCode === null && child.proc.signalCode === null) child.proc.kill(signal);
      return waitExit(child, 10_000);
    },
  };
}

/** A one-time login link (`/#login=<code>` for the demo page, `/dashboard#login=<code>`), as `baton dashboard [--demo]` prints. */
export async function loginLink(served: Served, page: "demo" | "dashboard" = "demo"): Promise<string> {
  const res = await fetch(`${served.url}/v1/dashboard/login-codes`, {
    method: "POST",
    headers: { authorization: `Bearer ${served.token}`, "content-type": "application/json" },
    body: JSON.stringify({ page }),
  });
  if (res.status !== 201) throw new Error(`login-codes answered ${res.status}: ${await res.text()}`);
  return `${served.url}${((await res.json()) as { path: string }).path}`;
}

/** A workspace with a live-variant session `hero`, then `events` appended to it (through the library: fast). */
export async function liveSession(root: string, events: EventInput[] = []): Promise<void> {
  const b = await openBaton({ root });
  try {
    await b.sessions.start({ flow: "live-variant", id: "hero" });
    for (const e of events) await b.events.append("hero", e);
  } finally {
    await b.close();
  }
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: () => any;
}

export interface RawRequest {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Send the body with chunked encoding (no Content-Length). */
  chunked?: boolean;
  /** Omit the Host header entirely. */
  noHost?: boolean;
}

/** One HTTP request with exactly the headers given (Host defaults to 127.0.0.1:<port>). */
export function raw(port: number, r: RawRequest): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...(r.noHost ? {} : { host: `127.0.0.1:${port}` }), ...r.headers };
    if (r.body !== undefined && !r.chunked) headers["content-length"] = String(Buffer.byteLength(r.body));
    const req = httpRequest({ host: "127.0.0.1", port, path: r.path, method: r.method ?? "GET", headers, setHost: false, agent: false });
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          text,
          json: () => {
            try {
              return JSON.parse(text);
            } catch {
              throw new Error(`${r.method ?? "GET"} ${r.path} answered ${res.statusCode} with non-JSON: ${text}`);
            }
          },
        });
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    if (r.body !== undefined) req.write(r.body);
    req.end();
  });
}

/** Authorized JSON request helper. */
export function api(s: Served, method: string, path: string, body?: unknown): Promise<RawResponse> {
  return raw(s.port, {
    method,
    path,
    headers: { authorization: `Bearer ${s.token}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

/** Write raw bytes on a fresh connection and return whatever comes back before it closes. */
export function rawBytes(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, "127.0.0.1");
    let out = "";
    sock.setEncoding("utf8");
    sock.on("data", (d: string) => {
      out += d;
    });
    sock.on("end", () => resolve(out));
    sock.on("close", () => resolve(out));
    sock.on("error", (err) => ((err as NodeJS.ErrnoException).code === "ECONNRESET" ? resolve(out) : reject(err)));
    sock.setTimeout(5_000, () => {
      sock.destroy();
      resolve(out);
    });
    sock.write(bytes);
  });
}

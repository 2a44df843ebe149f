/**
 * The local server's request guard: every request passes these checks, on its headers alone,
 * before any route runs or any body is read. The server is local, but a web page in the user's
 * browser can reach loopback, so it defends against three things:
 *
 * - another page posting to it (CSRF): a token on every request, an Origin allowlist, and a
 *   JSON content type on writes (a cross-site form cannot send one without a CORS preflight,
 *   and no preflight is ever answered with CORS headers);
 * - DNS rebinding (a hostile name resolving to 127.0.0.1): the Host header must be exactly one
 *   of our loopback names with our port;
 * - a local process guessing the token: it is 256 random bits, compared in constant time.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** A new server token: 32 random bytes, base64url (43 characters). */
export function newToken(): string {
  return randomBytes(32).toString("base64url");
}

/**
 * Constant-time token comparison. Both sides are hashed first so the comparison takes the same
 * time whatever the length of the guess (timingSafeEqual itself needs equal lengths).
 */
export function tokenMatches(expected: string, given: string | undefined): boolean {
  if (given === undefined || given === "") return false;
  const a = createHash("sha256").update(expected).digest();
  const b = createHash("sha256").update(given).digest();
  return timingSafeEqual(a, b);
}

/**
 * The only Host values we answer: loopback names with our port (no `localhost6`, no bare IPs of
 * other interfaces). On port 80, HTTP's default, browsers and Node's client leave the port out.
 */
export function allowedHosts(port: number): Set<string> {
  const names = ["127.0.0.1", "localhost", "[::1]"];
  return new Set([...names.map((n) => `${n}:${port}`), ...(port === 80 ? names : [])]);
}

/**
 * The fetch standard's "bad ports" (https://fetch.spec.whatwg.org/#port-blocking): browsers and
 * Node's fetch refuse to connect to them, so a server there could not be reached by its own
 * dashboard, nor check itself.
 */
export const BAD_PORTS: ReadonlySet<number> = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110, 111, 113, 115, 117,
  119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636,
  989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

/** Origins allowed to call us: our own pages, on any of the allowed host names. */
export function allowedOrigins(port: number): Set<string> {
  return new Set([...allowedHosts(port)].map((h) => `http://${h}`));
}

/**
 * Parse an origin given with `--allow-origin` (a page on another origin, e.g. the project's dev
 * server, that embeds the browser client): `http(s)://host[:port]`, nothing else.
 */
export function parseOrigin(text: string): string | undefined {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    return undefined;
  }
  if ((u.protocol !== "http:" && u.protocol !== "https:") || u.username || u.password) return undefined;
  if (u.pathname !== "/" || u.search || u.hash || text.replace(/\/+$/, "").toLowerCase() !== `${u.protocol}//${u.host}`) return undefined;
  return `${u.protocol}//${u.host}`.toLowerCase();
}

/**
 * CORS for the origins allowed with `--allow-origin` only: the response names that exact
 * origin (never a wildcard, never an echo of an origin that is not configured) and never
 * allows credentials; such pages use the bearer token and stream tickets.
 */
export function corsHeaders(origin: string, preflight: boolean): Record<string, string> {
  const h: Record<string, string> = { "Access-Control-Allow-Origin": origin, Vary: "Origin" };
  if (preflight) {
    h["Access-Control-Allow-Methods"] = "GET, POST";
    h["Access-Control-Allow-Headers"] = "authorization, content-type, last-event-id";
    h["Access-Control-Max-Age"] = "600";
  }
  return h;
}

export interface GuardFailure {
  status: number;
  code: "forbidden" | "unauthorized" | "unsupported_media_type" | "payload_too_large";
  message: string;
}

export interface GuardInput {
  method: string;
  host: string | undefined;
  origin: string | undefined;
  contentType: string | undefined;
  contentLength: string | undefined;
}

export interface GuardConfig {
  hosts: ReadonlySet<string>;
  origins: ReadonlySet<string>;
  maxBodyBytes: number;
}

const WRITE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * Checks that need no route: Host, Origin, content type and declared length. The token is
 * checked per route (a few routes are open). Returns the first failure, or undefined.
 */
export function checkRequest(req: GuardInput, cfg: GuardConfig): GuardFailure | undefined {
  // Host names are case-insensitive; the port must be ours exactly.
  const host = req.host?.toLowerCase();
  if (host === undefined || !cfg.hosts.has(host)) {
    return {
      status: 403,
      code: "forbidden",
      message: "this server answers only requests addressed to 127.0.0.1, localhost or [::1] with its own port",
    };
  }
  // `Origin: null` (sandboxed frames, file: pages, some redirects) is refused like any foreign origin.
  if (req.origin !== undefined && !cfg.origins.has(req.origin.toLowerCase())) {
    return { status: 403, code: "forbidden", message: `origin ${JSON.stringify(req.origin)} is not allowed` };
  }
  if (WRITE_METHODS.has(req.method)) {
    const type = req.contentType?.split(";")[0]?.trim().toLowerCase();
    if (type !== "application/json") {
      return { status: 415, code: "unsupported_media_type", message: "send the request body as JSON with Content-Type: application/json" };
    }
    if (req.contentLength !== undefined) {
      const n = Number(req.contentLength);
      if (!/^\d+$/.test(req.contentLength.trim()) || n > cfg.maxBodyBytes) {
        return { status: 413, code: "payload_too_large", message: `the request body is limited to ${cfg.maxBodyBytes} bytes` };
      }
    }
  }
  return undefined;
}

/** The bearer token of an `Authorization: Bearer <token>` header. */
export function bearerToken(header: string | undefined): string | undefined {
  const m = header === undefined ? null : /^Bearer[ ]+([^\s]+)\s*$/i.exec(header);
  return m?.[1];
}

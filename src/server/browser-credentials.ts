/**
 * What a browser holds instead of the server's token. Browsers share cookies between every port
 * of a host, so any page served from 127.0.0.1 (a dev server, a listener another local user
 * runs) would receive a cookie meant for this server. So no cookie is ever set, and the token
 * never reaches a page through the dashboard: a browser gets
 *
 * - a **browser session** at login (`bs1.<expiry>.<nonce>.<mac>`): an HMAC keyed with the
 *   server's token over this server's port, the expiry and a random nonce. The page keeps it in
 *   localStorage, which the browser scopes to the exact origin (scheme, host and port), and
 *   sends it as `Authorization: Bearer`; the browser never sends it by itself. It lasts
 *   BROWSER_SESSION_MS and the page renews it while open. Stateless, so a server restarted with
 *   its token (`.baton/server.key`) still accepts it; a new token (`baton serve --new-token`)
 *   ends every one.
 * - a **stream ticket** for each EventSource (which cannot send headers): random, spent on first
 *   use, good for STREAM_TICKET_MS, kept in memory only. A ticket in a stream's URL opens that
 *   stream once and nothing else.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** A browser session is good for this long after it was issued (the page renews it hourly). */
export const BROWSER_SESSION_MS = 12 * 60 * 60_000;
/** A stream ticket is good for this long, and once. */
export const STREAM_TICKET_MS = 60_000;
/** Outstanding tickets kept at most (the oldest are dropped first). */
export const MAX_STREAM_TICKETS = 256;

const PREFIX = "bs1";

function mac(token: string, port: number, expiry: string, nonce: string): Buffer {
  return createHmac("sha256", token).update(`baton-browser-session:${port}:${expiry}:${nonce}`).digest();
}

/** A new browser session for this server (its token and port), expiring BROWSER_SESSION_MS from `now`. */
export function issueBrowserSession(token: string, port: number, now: number): { session: string; expiresAt: string } {
  const exp = now + BROWSER_SESSION_MS;
  const expiry = exp.toString(36);
  const nonce = randomBytes(16).toString("base64url");
  return {
    session: `${PREFIX}.${expiry}.${nonce}.${mac(token, port, expiry, nonce).toString("base64url")}`,
    expiresAt: new Date(exp).toISOString(),
  };
}

/** Whether `given` is a live browser session issued by a server with this token and port. */
export function browserSessionValid(token: string, port: number, given: string, now: number): boolean {
  const parts = given.split(".");
  if (parts.length !== 4 || parts[0] !== PREFIX) return false;
  const [, expiry, nonce, sig] = parts as [string, string, string, string];
  if (!/^[0-9a-z]{1,12}$/.test(expiry) || !/^[A-Za-z0-9_-]{22}$/.test(nonce) || !/^[A-Za-z0-9_-]{43}$/.test(sig)) return false;
  const exp = Number.parseInt(expiry, 36);
  // Expired, or further ahead than any session this server issues.
  if (!(exp > now) || exp > now + BROWSER_SESSION_MS) return false;
  // Compared as text: decoding would accept other spellings of the same bytes (base64url's
  // last character carries spare bits).
  return timingSafeEqual(Buffer.from(mac(token, port, expiry, nonce).toString("base64url")), Buffer.from(sig));
}

/** Single-use tickets that open one stream each (see above). */
export class StreamTickets {
  readonly #tickets = new Map<string, number>(); // ticket → expiry (ms)
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  issue(): { ticket: string; expiresAt: string } {
    const t = this.#now();
    for (const [k, exp] of this.#tickets) if (exp <= t) this.#tickets.delete(k);
    while (this.#tickets.size >= MAX_STREAM_TICKETS) this.#tickets.delete(this.#tickets.keys().next().value as string);
    const ticket = randomBytes(24).toString("base64url");
    this.#tickets.set(ticket, t + STREAM_TICKET_MS);
    return { ticket, expiresAt: new Date(t + STREAM_TICKET_MS).toISOString() };
  }

  /** Spend a ticket: true once for a ticket issued within STREAM_TICKET_MS, false after. */
  spend(ticket: string | undefined): boolean {
    if (ticket === undefined || ticket === "") return false;
    const exp = this.#tickets.get(ticket);
    this.#tickets.delete(ticket);
    return exp !== undefined && exp > this.#now();
  }
}

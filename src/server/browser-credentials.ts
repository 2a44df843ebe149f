/**
 * What a browser holds instead of the server's token. Browsers share cookies between every port
 * of a host, so any page served from 127.0.0.1 (a dev server, a listener another local user
 * runs) would receive a cookie meant for this server. So no cookie is ever set, and the token
 * never reaches a page through the dashboard: a browser gets
 *
 * - a **browser session** at login (`bs2.<expiry>.<login>.<nonce>.<mac>`): an HMAC keyed with
 *   the server's token over this server's port, the expiry, the login time and a random nonce.
 *   The page keeps it in localStorage, which the browser scopes to the exact origin (scheme,
 *   host and port), and sends it as `Authorization: Bearer`; the browser never sends it by
 *   itself. It lasts BROWSER_SESSION_MS and the open page renews it, for at most
 *   BROWSER_LOGIN_MS after the login. Stateless, so a server restarted with its token
 *   (`.baton/server.key`) still accepts it; a new token (`baton serve --rotate-token`) ends
 *   every one.
 * - a **stream ticket** for each EventSource (which cannot send headers): random, spent on first
 *   use, good for STREAM_TICKET_MS, kept in memory only. A ticket in a stream's URL opens that
 *   stream once and nothing else.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** A browser session is good for this long after it was issued (the page renews it hourly). */
export const BROWSER_SESSION_MS = 12 * 60 * 60_000;
/** Renewals go on for at most this long after the login: then the user logs in again. */
export const BROWSER_LOGIN_MS = 7 * 24 * 60 * 60_000;
/** A stream ticket is good for this long, and once. */
export const STREAM_TICKET_MS = 60_000;
/** Outstanding tickets kept at most (the oldest are dropped first). */
export const MAX_STREAM_TICKETS = 256;

const PREFIX = "bs2";

function mac(token: string, port: number, expiry: string, born: string, nonce: string): string {
  return createHmac("sha256", token).update(`baton-browser-session:${port}:${expiry}:${born}:${nonce}`).digest("base64url");
}

/**
 * A new browser session for this server (its token and port), expiring BROWSER_SESSION_MS from
 * `now`; `born` is when its user logged in (a renewal keeps it).
 */
export function issueBrowserSession(token: string, port: number, now: number, born = now): { session: string; expiresAt: string } {
  const exp = now + BROWSER_SESSION_MS;
  const expiry = exp.toString(36);
  const login = born.toString(36);
  const nonce = randomBytes(16).toString("base64url");
  return {
    session: `${PREFIX}.${expiry}.${login}.${nonce}.${mac(token, port, expiry, login, nonce)}`,
    expiresAt: new Date(exp).toISOString(),
  };
}

/** When the user logged in, if `given` is a live browser session issued by a server with this token and port. */
export function verifyBrowserSession(token: string, port: number, given: string, now: number): { born: number } | undefined {
  const parts = given.split(".");
  if (parts.length !== 5 || parts[0] !== PREFIX) return undefined;
  const [, expiry, login, nonce, sig] = parts as [string, string, string, string, string];
  if (
    !/^[0-9a-z]{1,12}$/.test(expiry) ||
    !/^[0-9a-z]{1,12}$/.test(login) ||
    !/^[A-Za-z0-9_-]{22}$/.test(nonce) ||
    !/^[A-Za-z0-9_-]{43}$/.test(sig)
  )
    return undefined;
  const exp = Number.parseInt(expiry, 36);
  const born = Number.parseInt(login, 36);
  // Expired, further ahead than any session this server issues, or born in the future.
  if (!(exp > now) || exp > now + BROWSER_SESSION_MS || born > now) return undefined;
  // Compared as text: decoding would accept other spellings of the same bytes (base64url's
  // last character carries spare bits).
  if (!timingSafeEqual(Buffer.from(mac(token, port, expiry, login, nonce)), Buffer.from(sig))) return undefined;
  return { born };
}

/** Whether `given` is a live browser session issued by a server with this token and port. */
export function browserSessionValid(token: string, port: number, given: string, now: number): boolean {
  return verifyBrowserSession(token, port, given, now) !== undefined;
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

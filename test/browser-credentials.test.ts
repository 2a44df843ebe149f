/**
 * What a browser holds instead of the server's token (server/browser-credentials.ts): browser
 * sessions signed for one server's token and port, and single-use stream tickets.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  BROWSER_SESSION_MS,
  browserSessionValid,
  issueBrowserSession,
  MAX_STREAM_TICKETS,
  STREAM_TICKET_MS,
  StreamTickets,
  verifyBrowserSession,
} from "../src/server/browser-credentials.js";

const T0 = Date.parse("2026-11-29T10:00:00Z");

describe("browser sessions", () => {
  it("are good for their server's token and port until they expire, and hold neither", () => {
    const { session, expiresAt } = issueBrowserSession("token-a", 4821, T0);
    expect(session).not.toContain("token-a");
    expect(Date.parse(expiresAt)).toBe(T0 + BROWSER_SESSION_MS);
    expect(browserSessionValid("token-a", 4821, session, T0)).toBe(true);
    expect(browserSessionValid("token-a", 4821, session, T0 + BROWSER_SESSION_MS - 1)).toBe(true);
    expect(browserSessionValid("token-a", 4821, session, T0 + BROWSER_SESSION_MS)).toBe(false);
    expect(browserSessionValid("token-b", 4821, session, T0), "another token (a new server token)").toBe(false);
    expect(browserSessionValid("token-a", 4822, session, T0), "another port").toBe(false);
    // The server's token itself is not a browser session.
    expect(browserSessionValid("token-a", 4821, "token-a", T0)).toBe(false);
    // A renewal keeps the login's time.
    const renewed = issueBrowserSession("token-a", 4821, T0 + 3_600_000, T0).session;
    expect(verifyBrowserSession("token-a", 4821, renewed, T0 + 3_600_000)).toEqual({ born: T0 });
  });

  it("refuse any other spelling: a changed character anywhere, or an expiry pushed later", () => {
    const { session } = issueBrowserSession("tok", 1, T0);
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.";
    fc.assert(
      fc.property(fc.nat(session.length - 1), fc.constantFrom(...alphabet), (i, ch) => {
        fc.pre(session[i] !== ch);
        const changed = session.slice(0, i) + ch + session.slice(i + 1);
        expect(browserSessionValid("tok", 1, changed, T0)).toBe(false);
      }),
      { numRuns: 500 },
    );
    const [p, , born, nonce, sig] = session.split(".");
    const later = `${p}.${(T0 + 2 * BROWSER_SESSION_MS).toString(36)}.${born}.${nonce}.${sig}`;
    expect(browserSessionValid("tok", 1, later, T0)).toBe(false);
    const younger = `${p}.${(T0 + BROWSER_SESSION_MS).toString(36)}.${(T0 + 1000).toString(36)}.${nonce}.${sig}`;
    expect(browserSessionValid("tok", 1, younger, T0 + 2000), "a login time moved later (to renew past the cap)").toBe(false);
    for (const junk of ["", "bs2", "bs2....", `${session}.x`, session.toUpperCase()])
      expect(browserSessionValid("tok", 1, junk, T0)).toBe(false);
  });
});

describe("stream tickets", () => {
  it("open once, within their time", () => {
    const clock = { t: T0 };
    const tickets = new StreamTickets(() => clock.t);
    const a = tickets.issue().ticket;
    const b = tickets.issue().ticket;
    expect(tickets.spend(a)).toBe(true);
    expect(tickets.spend(a), "spent").toBe(false);
    clock.t += STREAM_TICKET_MS;
    expect(tickets.spend(b), "expired").toBe(false);
    expect(tickets.spend(undefined)).toBe(false);
    expect(tickets.spend("")).toBe(false);
  });

  it(`keep at most ${MAX_STREAM_TICKETS} outstanding, dropping the oldest`, () => {
    const tickets = new StreamTickets(() => T0);
    const all = Array.from({ length: MAX_STREAM_TICKETS + 1 }, () => tickets.issue().ticket);
    expect(tickets.spend(all[0])).toBe(false);
    expect(tickets.spend(all[1])).toBe(true);
    expect(tickets.spend(all[MAX_STREAM_TICKETS])).toBe(true);
  });
});

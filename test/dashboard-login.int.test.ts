/**
 * The dashboard's one-time login (server/dashboard-routes.ts): a code expires after
 * LOGIN_CODE_TTL_MS and is good once; at most MAX_LOGIN_CODES are outstanding (the oldest
 * goes first); the answers are never cached; and only the server's own page may trade a code
 * (an Origin is required, and one `--allow-origin` admits to the API is not enough).
 */
import { spawnSync } from "node:child_process";
import type { HttpBindings } from "@hono/node-server";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { openBaton } from "../src/index.js";
import { browserSessionValid } from "../src/server/browser-credentials.js";
import { LOGIN_CODE_TTL_MS, MAX_LOGIN_CODES, registerDashboard } from "../src/server/dashboard-routes.js";
import { errorResponse } from "../src/server/http-errors.js";
import { allowedOrigins } from "../src/server/security.js";
import { tempDir } from "./helpers.js";
import { liveSession, raw, type Served, serve } from "./server-helpers.js";

async function inProcess(fn: (app: Hono<{ Bindings: HttpBindings }>, clock: { t: number }) => Promise<void>) {
  const baton = await openBaton({ root: tempDir() });
  const clock = { t: Date.parse("2026-01-01T00:00:00Z") };
  const app = new Hono<{ Bindings: HttpBindings }>();
  app.onError((err, c) => {
    const { status, body } = errorResponse(err);
    return c.json(body, status as 400);
  });
  const shutdown = new AbortController();
  registerDashboard(
    app,
    {
      baton,
      token: "tok",
      port: 4000,
      shutdown: shutdown.signal,
      asset: () => undefined,
      origins: allowedOrigins(4000),
      now: () => clock.t,
    },
    async (c) => (await c.req.json()) as Record<string, unknown>,
  );
  try {
    await fn(app, clock);
  } finally {
    shutdown.abort();
    await baton.close();
  }
}

const json = { "content-type": "application/json" };
const newCode = async (app: Hono<{ Bindings: HttpBindings }>) => {
  const r = await app.request("/v1/dashboard/login-codes", { method: "POST", headers: json, body: "{}" });
  expect(r.headers.get("cache-control")).toBe("no-store");
  return ((await r.json()) as { code: string }).code;
};
const login = (app: Hono<{ Bindings: HttpBindings }>, code: string, origin: string | null = "http://127.0.0.1:4000") =>
  app.request("/v1/dashboard/login", {
    method: "POST",
    headers: { ...json, ...(origin ? { origin } : {}) },
    body: JSON.stringify({ code }),
  });

/** A login code from a running server, asked with its token (as `baton dashboard` does). */
async function serverCode(s: Served): Promise<string> {
  const r = await raw(s.port, {
    method: "POST",
    path: "/v1/dashboard/login-codes",
    headers: { authorization: `Bearer ${s.token}`, ...json },
    body: "{}",
  });
  return r.json().code as string;
}

describe("dashboard login codes", () => {
  it("name the page they log in to: the dashboard by default, the demo page on request, nothing else", async () => {
    await inProcess(async (app) => {
      const ask = (body: string) => app.request("/v1/dashboard/login-codes", { method: "POST", headers: json, body });
      expect(((await (await ask("{}")).json()) as { path: string }).path).toMatch(/^\/dashboard#login=[A-Za-z0-9_-]{32}$/);
      const demo = await ask('{"page":"demo"}');
      const { path, code } = (await demo.json()) as { path: string; code: string };
      expect(path).toBe(`/#login=${code}`);
      expect((await login(app, code)).status).toBe(200);
      const bad = await ask('{"page":"../admin"}');
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { error: { code: string } }).error.code).toBe("bad_input");
    });
  });

  it("expire after their time, are good once, and the answer is never cached", async () => {
    await inProcess(async (app, clock) => {
      const early = await newCode(app);
      const late = await newCode(app);
      clock.t += LOGIN_CODE_TTL_MS - 1;
      const ok = await login(app, early);
      expect(ok.status).toBe(200);
      expect(ok.headers.get("cache-control")).toBe("no-store");
      const got = (await ok.json()) as { session: string; expiresAt: string };
      expect(browserSessionValid("tok", 4000, got.session, clock.t)).toBe(true);
      // Renewed with itself, keeping its login's time; not with the server's token; not after 7 days.
      const renew = (bearer: string) =>
        app.request("/v1/dashboard/session", { method: "POST", headers: { ...json, authorization: `Bearer ${bearer}` }, body: "{}" });
      const again = await renew(got.session);
      expect(again.status).toBe(200);
      expect((await renew("tok")).status).toBe(401);
      let current = ((await again.json()) as { session: string }).session;
      // An open page renews every 11 hours: 165 hours after its login, still fine...
      for (let i = 0; i < 15; i++) {
        clock.t += 11 * 60 * 60_000;
        const r = await renew(current);
        expect(r.status, `renewal ${i}`).toBe(200);
        current = ((await r.json()) as { session: string }).session;
      }
      // ...170 hours after it, with a session still live: refused, log in again.
      clock.t += 5 * 60 * 60_000;
      const capped = await renew(current);
      expect(capped.status).toBe(401);
      expect(((await capped.json()) as { error: { message: string } }).error.message).toContain("7 days");
      expect(JSON.stringify(got)).not.toContain("tok");
      expect((await login(app, early)).status).toBe(401); // spent
      clock.t += 1;
      const expired = await login(app, late);
      expect(expired.status).toBe(401);
      expect(((await expired.json()) as { error: { message: string } }).error.message).toContain("expired");
    });
  });

  it(`keep at most ${MAX_LOGIN_CODES} outstanding, dropping the oldest`, async () => {
    await inProcess(async (app) => {
      const codes: string[] = [];
      for (let i = 0; i <= MAX_LOGIN_CODES; i++) codes.push(await newCode(app));
      expect((await login(app, codes[0] as string)).status).toBe(401);
      expect((await login(app, codes[1] as string)).status).toBe(200);
      expect((await login(app, codes[MAX_LOGIN_CODES] as string)).status).toBe(200);
    });
  });

  it("are traded only by a request with the server's own Origin", async () => {
    await inProcess(async (app) => {
      const code = await newCode(app);
      expect((await login(app, code, null)).status).toBe(403); // no Origin: not a browser page
      expect((await login(app, code, "http://127.0.0.1:4001")).status).toBe(403);
      expect((await login(app, code, "http://localhost:4000")).status).toBe(200);
    });
  });

  it("refuses a same-site page on another loopback port, even one --allow-origin admits to the API", async () => {
    const root = tempDir();
    await liveSession(root);
    const other = "http://127.0.0.1:5173";
    const s = await serve(root, ["--allow-origin", other]);
    try {
      const code = await serverCode(s);
      const post = (origin?: string) =>
        raw(s.port, {
          method: "POST",
          path: "/v1/dashboard/login",
          headers: { ...json, ...(origin ? { origin } : {}) },
          body: JSON.stringify({ code }),
        });
      expect((await post(other)).status).toBe(403);
      expect((await post(`http://127.0.0.1:${s.port + 1}`)).status).toBe(403);
      expect((await post()).status).toBe(403);
      const ok = await post(`http://127.0.0.1:${s.port}`);
      expect(ok.status).toBe(200);
      expect(ok.headers["cache-control"]).toBe("no-store");
      // The answer is a browser session, not the token, and sets no cookie; the session opens
      // reads, writes and the costly reads (doctor, a rollback preview, a comparison) as a
      // bearer header, and renews itself.
      expect(ok.headers["set-cookie"]).toBeUndefined();
      expect(ok.text).not.toContain(s.token);
      const session = ok.json().session as string;
      const bearer = { authorization: `Bearer ${session}` };
      expect((await raw(s.port, { path: "/v1/dashboard/sessions", headers: bearer })).status).toBe(200);
      expect((await raw(s.port, { path: "/v1/doctor", headers: bearer })).status).toBe(200);
      const note = await raw(s.port, {
        method: "POST",
        path: "/v1/sessions/hero/events",
        headers: { ...bearer, ...json },
        body: JSON.stringify({ type: "note:added", data: { text: "from the dashboard" } }),
      });
      expect(note.status).toBe(201);
      const renewed = await raw(s.port, { method: "POST", path: "/v1/dashboard/session", headers: { ...bearer, ...json }, body: "{}" });
      expect(renewed.status).toBe(200);
      expect(renewed.json().session).not.toBe(session);
      // A session with one character changed, or signed for another port, opens nothing.
      const last = session.at(-1) === "A" ? "B" : "A";
      const forged = `${session.slice(0, -1)}${last}`;
      expect((await raw(s.port, { path: "/v1/status", headers: { authorization: `Bearer ${forged}` } })).status).toBe(401);
    } finally {
      await s.stop();
    }
  });

  it.skipIf(process.getuid?.() !== 0)(
    "refuses a code traded by another local user's process, even with the page's Origin; the code stays good (needs root to act as another user)",
    async () => {
      const root = tempDir();
      await liveSession(root);
      const s = await serve(root);
      try {
        const code = await serverCode(s);
        // The attacker read the code off the opener's command line and sends exactly what the
        // page would, as user nobody.
        const script = `fetch("http://127.0.0.1:${s.port}/v1/dashboard/login", { method: "POST", headers: { "content-type": "application/json", origin: "http://127.0.0.1:${s.port}" }, body: JSON.stringify({ code: ${JSON.stringify(code)} }) }).then(async (r) => process.stdout.write(JSON.stringify({ status: r.status, body: await r.text() })))`;
        const other = spawnSync(process.execPath, ["-e", script], { uid: 65534, gid: 65534, encoding: "utf8", cwd: "/" });
        expect(other.status, other.stderr).toBe(0);
        const answer = JSON.parse(other.stdout) as { status: number; body: string };
        expect(answer.status).toBe(403);
        expect(answer.body).toContain("another user");
        expect(answer.body).not.toContain("bs2.");
        // And from another loopback address bound to the server's own port, so that a lookup by
        // ports alone would find the server's row: still refused, every try.
        const body = JSON.stringify({ code });
        const request = `POST /v1/dashboard/login HTTP/1.1\r\nHost: 127.0.0.1:${s.port}\r\nOrigin: http://127.0.0.1:${s.port}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`;
        const spoof = `const net = require("node:net"); let out = ""; const c = net.connect({ host: "127.0.0.1", port: ${s.port}, localAddress: "127.0.0.2", localPort: ${s.port} }, () => c.write(${JSON.stringify(request)})); c.on("data", (d) => (out += d)); c.on("end", () => process.stdout.write(out.split("\\r\\n")[0])); c.on("error", (e) => process.stdout.write("error " + e.code));`;
        for (let i = 0; i < 3; i++) {
          const tried = spawnSync(process.execPath, ["-e", spoof], { uid: 65534, gid: 65534, encoding: "utf8", cwd: "/" });
          expect(tried.stdout, tried.stderr).toMatch(/^HTTP\/1\.1 403|^error /);
        }
        const mine = await raw(s.port, {
          method: "POST",
          path: "/v1/dashboard/login",
          headers: { ...json, origin: `http://127.0.0.1:${s.port}` },
          body: JSON.stringify({ code }),
        });
        expect(mine.status, "the code stays good for its user's page").toBe(200);
      } finally {
        await s.stop();
      }
    },
  );
});

/**
 * The dashboard's login and its guard, in a real Chromium against the real `baton serve` and
 * `baton dashboard` (the same on any store), then the sessions view on SQLite
 * (test/dashboard-sessions.suite.ts). Waits are on page states, never on sleeps.
 */
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openBaton } from "../src/index.js";
import { connection, dashboardLink, launch, screenshot } from "./dashboard-helpers.js";
import { sessionsSuite } from "./dashboard-sessions.suite.js";
import { sqliteStore } from "./dashboard-store.js";
import { tempDir } from "./helpers.js";
import { liveSession, raw, serve } from "./server-helpers.js";

let browser: Browser;

function row(page: Page, id: string) {
  return page.locator(`tr[data-session="${id}"]`);
}

async function lastSeq(root: string, id: string): Promise<number> {
  const lib = await openBaton({ root });
  try {
    return (await lib.sessions.snapshot(id)).lastSeq;
  } finally {
    await lib.close();
  }
}

/** Stop a server `baton dashboard` started in the background (not a child of this test). */
async function stopPid(pid: number): Promise<void> {
  try {
    process.kill(pid, "SIGTERM");
  } catch {
    return;
  }
  for (let i = 0; i < 200; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  process.kill(pid, "SIGKILL");
}

describe("dashboard: login and guard", () => {
  beforeAll(async () => {
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it("baton dashboard starts the server; its link logs in once with a browser session that is not the token, and no cookie", async () => {
    const root = tempDir();
    await liveSession(root);
    const link = dashboardLink(root);
    expect(link.started).toBe(true);
    expect(link.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/dashboard#login=[A-Za-z0-9_-]+$/);
    const token = (JSON.parse(readFileSync(join(root, ".baton", "server.json"), "utf8")) as { token: string }).token;
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const context = await browser.newContext();
    // Every answer the browser gets (but the endless streams): the token is in none of them.
    const bodies: Promise<string>[] = [];
    context.on("response", (r) => {
      if (!String(r.headers()["content-type"]).startsWith("text/event-stream")) bodies.push(r.text().catch(() => ""));
    });
    try {
      const page = await context.newPage();
      await page.goto(link.url);
      await row(page, "hero").waitFor();
      await connection(page, "live");
      // The code left the address bar; the page holds a browser session, in its origin's storage.
      expect(page.url()).not.toContain("login=");
      const held = await page.evaluate(() => localStorage.getItem("baton.dashboard.session"));
      expect(JSON.parse(held as string).session).toMatch(/^bs2\./);
      expect(held).not.toContain(token);
      expect(await context.cookies(), "no cookie, for any port").toEqual([]);
      await screenshot(page, "dashboard-sessions-login");

      // A second `baton dashboard` reuses the running server.
      const again = dashboardLink(root);
      expect(again).toMatchObject({ started: false, port: link.port, pid: link.pid });

      // The same link a second time: spent.
      const other = await browser.newContext();
      try {
        const p2 = await other.newPage();
        await p2.goto(link.url);
        await expect(p2.getByRole("alert").textContent()).resolves.toContain("already used");
      } finally {
        await other.close();
      }

      // Another tab of the same browser on the same origin: logged in, and it can act.
      const tab = await context.newPage();
      await tab.goto(`http://127.0.0.1:${link.port}/dashboard`);
      await row(tab, "hero").waitFor();
      await connection(tab, "live");
      await tab.close();
      for (const body of await Promise.all(bodies)) expect(body).not.toContain(token);
    } finally {
      await context.close();
      await stopPid(link.pid);
    }
  });

  it("a page on another 127.0.0.1 port, after a login, gets no credential and can read or change nothing", async () => {
    const root = tempDir();
    await liveSession(root);
    const link = dashboardLink(root);
    // The other port: a local listener (a dev server, or another user's) that records what the
    // browser sends it, and serves a page that tries the dashboard's server with what it has.
    const seen: { path: string; cookie: string | undefined; authorization: string | undefined }[] = [];
    const listener = createServer((req, res) => {
      seen.push({ path: req.url ?? "", cookie: req.headers.cookie, authorization: req.headers.authorization });
      res.setHeader("content-type", "text/html");
      res.end("<!doctype html><title>dev server</title><p>hello</p>");
    });
    await new Promise<void>((r) => listener.listen(0, "127.0.0.1", r));
    const otherPort = (listener.address() as AddressInfo).port;
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(link.url);
      await row(page, "hero").waitFor();
      await connection(page, "live");
      const before = await lastSeq(root, "hero");

      const foreign = await context.newPage();
      await foreign.goto(`http://127.0.0.1:${otherPort}/v1/index.html`);
      await foreign.evaluate(() => fetch("/v1/ping", { credentials: "include" }).then((r) => r.status));
      expect(seen.length).toBeGreaterThanOrEqual(2);
      for (const r of seen)
        expect(r, `what the browser sent to port ${otherPort}`).toMatchObject({ cookie: undefined, authorization: undefined });
      // Its own storage holds nothing of ours.
      expect(await foreign.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }))).toBe("{}{}");
      // What it can make the browser send to the dashboard's server: no credential goes with it.
      // Cross-origin, so the page cannot read the answers; the server's log of effects is the
      // journal, checked below.
      const sent = await foreign.evaluate(async (port) => {
        const base = `http://127.0.0.1:${port}`;
        const tries = [
          fetch(`${base}/v1/sessions/hero/checkpoints/cp_x/preview`, { credentials: "include", mode: "no-cors" }),
          fetch(`${base}/v1/sessions/hero/events`, {
            method: "POST",
            credentials: "include",
            mode: "no-cors",
            headers: { "content-type": "text/plain" },
            body: JSON.stringify({ type: "note:added", data: { text: "from another port" } }),
          }),
        ];
        return (await Promise.allSettled(tries)).length;
      }, link.port);
      expect(sent).toBe(2);
      expect(await lastSeq(root, "hero")).toBe(before);
      await connection(page, "live"); // the real page is unaffected
    } finally {
      await context.close();
      await new Promise((r) => listener.close(r));
      await stopPid(link.pid);
    }
  });

  it("refuses a wrong Host or Origin on the dashboard's routes, and a login code used twice", async () => {
    const root = tempDir();
    await liveSession(root);
    const server = await serve(root);
    try {
      const port = server.port;
      const page = await raw(port, { path: "/dashboard" });
      expect(page.status).toBe(200);
      expect(page.headers["content-security-policy"]).toContain("default-src 'self'");
      expect((await raw(port, { path: "/dashboard", headers: { host: `evil.example:${port}` } })).status).toBe(403);
      expect((await raw(port, { path: "/dashboard.js", headers: { host: `127.0.0.1:${port + 1}` } })).status).toBe(403);
      expect((await raw(port, { path: "/v1/dashboard/sessions" })).status).toBe(401);
      const codeRes = await raw(port, {
        method: "POST",
        path: "/v1/dashboard/login-codes",
        headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
        body: "{}",
      });
      expect(codeRes.status).toBe(201);
      const code = codeRes.json().code as string;
      const login = (origin?: string) =>
        raw(port, {
          method: "POST",
          path: "/v1/dashboard/login",
          headers: { "content-type": "application/json", ...(origin ? { origin } : {}) },
          body: JSON.stringify({ code }),
        });
      // A foreign origin is refused before the code is looked at, so the code stays good...
      expect((await login("http://evil.example")).status).toBe(403);
      expect((await login("null")).status).toBe(403);
      // ...for our own page, once.
      const ok = await login(`http://127.0.0.1:${port}`);
      expect(ok.status).toBe(200);
      expect(ok.json().session).toMatch(/^bs2\./);
      expect(ok.text).not.toContain(server.token);
      expect(ok.headers["set-cookie"]).toBeUndefined();
      const twice = await login(`http://127.0.0.1:${port}`);
      expect(twice.status).toBe(401);
      expect(twice.json().error.message).toContain("already used");
    } finally {
      await server.stop();
    }
  });
});

sessionsSuite(sqliteStore);

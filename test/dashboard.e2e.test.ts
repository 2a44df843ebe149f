/**
 * The dashboard's login and its guard, in a real Chromium against the real `baton serve` and
 * `baton dashboard` (the same on any store), then the sessions view on SQLite
 * (test/dashboard-sessions.suite.ts). Waits are on page states, never on sleeps.
 */
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

  it("baton dashboard starts the server; its link logs in once, sets the HttpOnly cookie, and the cookie alone changes nothing", async () => {
    const root = tempDir();
    await liveSession(root);
    const link = dashboardLink(root);
    expect(link.started).toBe(true);
    expect(link.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/dashboard#login=[A-Za-z0-9_-]+$/);
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(link.url);
      await row(page, "hero").waitFor();
      await connection(page, "live");
      // The code left the address bar; the token is in this tab only.
      expect(page.url()).not.toContain("login=");
      expect(await page.evaluate(() => sessionStorage.getItem("baton.dashboard.token"))).toBeTruthy();
      const cookies = await context.cookies(`http://127.0.0.1:${link.port}/v1/`);
      const cookie = cookies.find((c) => c.name === `baton_token_${link.port}`);
      expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/v1" });
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

      // A tab without the token (same browser, so the cookie): reads work, writes are refused.
      const before = await lastSeq(root, "hero");
      const tab = await context.newPage();
      await tab.goto(`http://127.0.0.1:${link.port}/dashboard`);
      await row(tab, "hero").waitFor();
      await tab.getByText("read-only").waitFor();
      const tries = await tab.evaluate(async () => {
        const post = (path: string, body: unknown) =>
          fetch(path, {
            method: "POST",
            credentials: "same-origin",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(body),
          }).then((r) => r.status);
        return [
          await post("/v1/sessions/hero/events", { type: "note:added", data: { text: "cookie only" } }),
          await post("/v1/dashboard/login-codes", {}),
          await post("/v1/sessions", { flow: "task", id: "sneaky" }),
          await post("/v1/sessions/hero/rollback", { to: "cp_x" }),
          await post("/v1/sessions/hero/spiral", { action: "unpause" }),
          await post("/v1/checkpoints/cp_x/pin", { pinned: true }),
          await post("/v1/lessons/les-x", { version: "v", pinned: true }),
          await post("/v1/lessons/les-x/delete", { version: "v" }),
          await post("/v1/doctor/fix", {}),
          await post("/v1/doctor/fix", { codes: ["lease_expired"] }),
          await post("/v1/leases/lse_x/release", {}),
          await post("/v1/work/wi_x/retry", {}),
        ];
      });
      expect(tries).toEqual(Array(12).fill(401));
      expect(await lastSeq(root, "hero")).toBe(before);
      const lib = await openBaton({ root });
      try {
        expect((await lib.sessions.list({ includeCompleted: true })).map((s) => s.id)).toEqual(["hero"]);
      } finally {
        await lib.close();
      }
    } finally {
      await context.close();
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
      expect(ok.json().token).toBe(server.token);
      expect(String(ok.headers["set-cookie"])).toMatch(/HttpOnly; SameSite=Strict/);
      const twice = await login(`http://127.0.0.1:${port}`);
      expect(twice.status).toBe(401);
      expect(twice.json().error.message).toContain("already used");
    } finally {
      await server.stop();
    }
  });
});

sessionsSuite(sqliteStore);

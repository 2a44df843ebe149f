/**
 * The dashboard's health view in a real Chromium against the real `baton serve`: doctor's
 * findings with their fix, and the safe repairs applied with a button, checked in the store.
 */
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openBaton } from "../src/index.js";
import { dashboardLink, launch, screenshot, seriousViolations, tabTo } from "./dashboard-helpers.js";
import { tempDir } from "./helpers.js";
import { liveSession, serve } from "./server-helpers.js";

let browser: Browser;
beforeAll(async () => {
  browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

describe("dashboard: health", () => {
  it("shows doctor's findings and applies the safe fixes from a button", async () => {
    const root = tempDir();
    await liveSession(root, [{ type: "generate", actor: "browser", data: { prompt: "bolder" } }]);
    const lib = await openBaton({ root });
    const server = await serve(root);
    const context = await browser.newContext({ bypassCSP: true });
    try {
      // A lease whose holder went away: doctor's `lease_expired`, a safe fix.
      const lease = await lib.work.lease("agent-gone", { sessionId: "hero", leaseMs: 50 });
      expect(lease).toBeDefined();
      await expect.poll(async () => (await lib.work.pending("hero"))[0]?.lease?.expired, { timeout: 10_000, interval: 25 }).toBe(true);

      const page = await context.newPage();
      await page.goto(dashboardLink(root).url);
      await page.locator('a[href="#/session/hero"]').waitFor();
      await page.getByRole("link", { name: "Health" }).click();
      const row = page.locator('tr[data-code="lease_expired"]');
      await row.getByText("agent-gone").waitFor();
      await row.getByText("baton poll --session hero --json").waitFor();
      expect(await seriousViolations(page)).toEqual([]);
      await screenshot(page, "dashboard-health");

      expect(await tabTo(page, 'button[data-action="fix"]')).toBe(true);
      await page.keyboard.press("Enter");
      await page.getByRole("status").filter({ hasText: "expired lease(s) returned to the queue" }).waitFor();
      await row.waitFor({ state: "detached" });
      const work = await lib.work.pending("hero");
      expect(work.map((w) => [w.kind, w.state])).toEqual([["generate", "ready"]]);
    } finally {
      await context.close();
      await server.stop();
      await lib.close();
    }
  });
});

/**
 * The dashboard's session view in a real Chromium: a long journal's virtualised timeline (paged
 * from the server as it scrolls), expanding an event, filtering by type and actor, the facets
 * and STATE.md, and live appends, against the real `baton serve`.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type Baton, type EventInput, openBaton } from "../src/index.js";
import { connection, launch, openDashboard, refuseFirst, screenshot, seriousViolations, tabTo } from "./dashboard-helpers.js";
import type { DashboardStore } from "./dashboard-store.js";
import { type Served, serve } from "./server-helpers.js";

/** One session's view (timeline, facets, STATE.md) tests, on the store given. */
export function sessionSuite(store: DashboardStore): void {
  describe(store.name, () => {
    /** Long enough that only paging makes it cheap (the ≤ 1 s first paint of 100k is a benchmark's job). */
    const EVENTS = 30_000;

    let browser: Browser;
    let root: string;
    let server: Served;
    let lib: Baton;
    let total: number;
    beforeAll(async () => {
      browser = await launch();
      root = store.workspace();
      lib = await openBaton({ root });
      await lib.sessions.start({ flow: "task", id: "big", title: "A long session" });
      await lib.facets.addDecision("big", { decision: "Keep the v1 routes", reason: "clients still call them" });
      await lib.facets.addBlocker("big", { text: "the staging database is down" });
      const batch: EventInput[] = [];
      for (let i = 0; i < EVENTS; i++) {
        batch.push({ type: "note:added", actor: i % 3 === 0 ? "user" : "agent", data: { text: `note ${i}` } });
        if (batch.length === 2_000) await lib.events.appendBatch("big", batch.splice(0));
      }
      if (batch.length) await lib.events.appendBatch("big", batch.splice(0));
      total = (await lib.sessions.snapshot("big")).lastSeq;
    }, 120_000);
    afterAll(async () => {
      await browser?.close();
      await lib?.close();
    });
    // A server per test: the suite's leak check stops every child process after each test.
    beforeEach(async () => {
      server = await serve(root);
    });
    afterEach(async () => {
      await server?.stop();
    });

    async function openSession(context: BrowserContext): Promise<Page> {
      const page = await context.newPage();
      page.on("pageerror", (err) => console.error(`page error: ${err.message}`));
      await openDashboard(page, root, 'a[href="#/session/big"]');
      await page.locator('a[href="#/session/big"]').click();
      await page.locator("#session-title").waitFor();
      await connection(page, "live");
      return page;
    }

    function timelineRow(page: Page, seq: number) {
      return page.locator(".timeline li.row", { has: page.locator(".seq", { hasText: new RegExp(`^#${seq}$`) }) });
    }

    describe("dashboard: a session", () => {
      it("pages a long timeline as it scrolls, expands an event, and follows appends live", async () => {
        const context = await browser.newContext();
        try {
          const page = await openSession(context);
          await timelineRow(page, 1).locator(".type", { hasText: "session:started" }).waitFor();
          await page.getByText(`${total} events`, { exact: true }).waitFor();
          // Only what is in view is in the page.
          expect(await page.locator(".timeline li.row").count()).toBeLessThan(100);

          await page.locator("section.timeline").evaluate((el) => {
            el.scrollTop = el.scrollHeight;
          });
          await timelineRow(page, total)
            .locator(".summary", { hasText: `note ${EVENTS - 1}` })
            .waitFor();
          expect(await page.locator(".timeline li.row").count()).toBeLessThan(100);

          await page.getByRole("button", { name: `Show event ${total}` }).click();
          const detail = page.getByTestId("event-detail");
          await expect(detail.textContent()).resolves.toContain(`"seq": ${total}`);
          await expect(detail.textContent()).resolves.toContain(`"text": "note ${EVENTS - 1}"`);

          // Facets and STATE.md.
          await page.locator('.grid .card:has(h2:text-is("Decisions"))').getByText("Keep the v1 routes").waitFor();
          await page.locator('.grid .card:has(h2:text-is("Blockers"))').getByText("the staging database is down").waitFor();
          await page.locator("pre.state", { hasText: "Keep the v1 routes" }).waitFor();
          await screenshot(page, "dashboard-session-timeline");

          // An event appended elsewhere shows up without a reload.
          await lib.events.append("big", { type: "note:added", actor: "agent", data: { text: "appended while watching" } });
          await page
            .getByText(`${total + 1} events`, { exact: true })
            .first()
            .waitFor();
          // Scrolled to the end, the timeline follows: the new row comes into view by itself.
          await timelineRow(page, total + 1)
            .locator(".summary", { hasText: "appended while watching" })
            .waitFor();
          // The page only read: the journal holds what the test wrote and nothing else.
          expect((await lib.sessions.snapshot("big")).lastSeq).toBe(total + 1);
          total += 1;
        } finally {
          await context.close();
        }
      });

      it("filters by type and by actor, a slice at a time", async () => {
        const context = await browser.newContext();
        try {
          const page = await openSession(context);
          await page.getByLabel("Filter by event type").fill("decision:added");
          await page.getByText("1 matching event").waitFor();
          await page.locator(".timeline li.row .type", { hasText: "decision:added" }).waitFor();

          await page.getByLabel("Filter by event type").fill("note:added");
          await page.getByLabel("Filter by actor").fill("user");
          await page.waitForFunction(() => {
            const actors = [...document.querySelectorAll(".timeline li.row .actor")].map((e) => e.textContent);
            return actors.length === 200 && actors.every((a) => a === "user");
          });
          await page.getByText(/^200 matching events/).waitFor();
          await page.getByRole("button", { name: "Load more" }).click();
          await page.getByText(/^400 matching events/).waitFor();
          expect(new Set(await page.locator(".timeline li.row .actor").allTextContents())).toEqual(new Set(["user"]));
          await screenshot(page, "dashboard-session-filtered");
        } finally {
          await context.close();
        }
      });

      it("says so when the session does not exist", async () => {
        const context = await browser.newContext();
        try {
          const page = await context.newPage();
          await openDashboard(page, root, 'a[href="#/session/big"]');
          const asked: string[] = [];
          page.on("request", (r) => {
            if (r.url().includes("/v1/sessions/no-such-session")) asked.push(r.url());
          });
          await page.evaluate(() => {
            location.hash = "#/session/no-such-session";
          });
          await expect(page.getByRole("alert").first().textContent()).resolves.toMatch(/no-such-session/);
          // Not found is an answer, not a failure that may pass: it is not asked again and again.
          const first = asked.length;
          await page.waitForTimeout(2_500);
          expect(asked.length).toBe(first);
        } finally {
          await context.close();
        }
      });

      it("reads the session again when a read failed, though the session is quiet", async () => {
        const context = await browser.newContext();
        try {
          const page = await context.newPage();
          // The server refuses the first two reads of the session (as one busy or restarting would).
          const refused = await refuseFirst(page, /\/v1\/sessions\/big$/, 2);
          await openDashboard(page, root, 'a[href="#/session/big"]');
          await page.locator('a[href="#/session/big"]').click();
          await page.locator("pre.state", { hasText: "Keep the v1 routes" }).waitFor();
          await page.getByText(`${total} events`).first().waitFor();
          expect(refused.count).toBeGreaterThanOrEqual(3);
          await expect.poll(() => page.locator('[role="alert"]').count()).toBe(0);
        } finally {
          await context.close();
        }
      });

      it("has no serious accessibility violations, and its actions are reachable by keyboard", async () => {
        const context = await browser.newContext({ bypassCSP: true });
        try {
          const page = await openSession(context);
          await timelineRow(page, 1).waitFor();
          await page.locator("pre.state", { hasText: "Keep the v1 routes" }).waitFor();
          expect(await seriousViolations(page)).toEqual([]);
          // Rows still loading are read too: hold the page of events the scroll asks for, check, then let it through.
          let release: () => void = () => undefined;
          const held = new Promise<void>((r) => {
            release = r;
          });
          await page.route(/\/v1\/sessions\/[^/]+\/events\?after=/, async (route) => {
            await held;
            await route.continue().catch(() => undefined);
          });
          await page.locator("section.timeline").evaluate((el) => {
            el.scrollTop = el.scrollHeight / 2;
          });
          await page.locator(".timeline li.row.loading").first().waitFor();
          expect(await seriousViolations(page), "with rows still loading").toEqual([]);
          release();
          await page.unroute(/\/v1\/sessions\/[^/]+\/events\?after=/);
          await page.locator(".timeline li.row.loading").first().waitFor({ state: "detached" });
          await page.locator("section.timeline").evaluate((el) => {
            el.scrollTop = 0;
          });
          await page.locator("#session-title").click();
          expect(await tabTo(page, 'input[aria-label="Filter by event type"]')).toBe(true);
          expect(await tabTo(page, "button.expand")).toBe(true);
          await page.keyboard.press("Enter");
          await page.getByTestId("event-detail").waitFor();
        } finally {
          await context.close();
        }
      });
    });
  });
}

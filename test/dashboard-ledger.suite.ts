/**
 * The dashboard's ledger in a real Chromium against the real `baton serve`: the chart (a uPlot
 * canvas with the statuses) and the table with the failure fingerprint and the recovery linked
 * to its failure; secrets given to the ledger never reach the page.
 */
import { describe, expect, it } from "vitest";
import { openBaton } from "../src/index.js";
import { connection, openDashboard, screenshot, seriousViolations, suiteBrowser } from "./dashboard-helpers.js";
import type { DashboardStore } from "./dashboard-store.js";
import { serve } from "./server-helpers.js";

/** The ledger view's tests, on the store given. */
export function ledgerSuite(store: DashboardStore): void {
  describe(store.name, () => {
    const SECRET = "ghp_CANARYgithub0123456789abcdefghijklmn";

    const browser = suiteBrowser();

    describe("dashboard: ledger", () => {
      it("charts the trajectory and lists it, redacted, with recoveries linked to their failures", async () => {
        const root = store.workspace();
        const lib = await openBaton({ root });
        await lib.sessions.start({ flow: "task", id: "shop" });
        const failed = await lib.ledger.record("shop", {
          toolName: "click",
          status: "error",
          args: { selector: "#buy", token: SECRET },
          error: `element is detached from the DOM (auth ${SECRET})`,
        });
        await lib.ledger.record("shop", { toolName: "read_page", status: "success", args: { url: "https://shop.test/cart" } });
        await lib.ledger.record("shop", { toolName: "click", status: "success", args: { selector: "#buy" }, observation: "ordered" });
        await lib.ledger.record("shop", { toolName: "wait", status: "no_progress", progress: "stalled" });
        const server = await serve(root);
        const context = await browser().newContext({ bypassCSP: true });
        try {
          const page = await context.newPage();
          await openDashboard(page, root, 'a[href="#/session/shop"]');
          await page.locator('a[href="#/session/shop"]').click();
          await connection(page, "live");
          const table = page.getByRole("table", { name: "Ledger" });
          await table.locator('tr[data-node="3"]').getByText("recovers #1").waitFor();
          await table.locator('tr[data-node="3"]').getByText("recovered").waitFor();
          await table
            .locator('tr[data-node="1"]')
            .getByText(failed?.fingerprint as string)
            .waitFor();
          await table.locator('tr[data-node="4"]').getByText("stalled").waitFor();
          // The chart: a canvas with a legend naming the statuses.
          await page.locator(".ledger-chart canvas").first().waitFor();
          for (const st of ["success", "recovered", "error", "no_progress"])
            await page.locator(".ledger-chart .u-legend").getByText(st).first().waitFor();
          // Redacted before it was stored: the secret is nowhere in the page.
          expect(await page.content()).not.toContain(SECRET);
          expect(await table.locator('tr[data-node="1"]').innerText()).toContain("element is detached from the DOM");
          expect(await seriousViolations(page)).toEqual([]);
          await page.locator(".ledger-chart").scrollIntoViewIfNeeded();
          await screenshot(page, "dashboard-ledger");

          // A new call shows up by itself, though recording it journals nothing.
          const journal = (await lib.sessions.snapshot("shop")).lastSeq;
          await lib.ledger.record("shop", { toolName: "screenshot", status: "success" });
          await table.locator('tr[data-node="5"]').getByText("screenshot").waitFor();
          expect((await lib.sessions.snapshot("shop")).lastSeq).toBe(journal);
        } finally {
          await context.close();
          await server.stop();
          await lib.close();
        }
      });
    });
  });
}

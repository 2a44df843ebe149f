/**
 * A spiral pause in the dashboard, in a real Chromium against the real `baton serve`: the
 * pattern and the repeated calls, the proposed rollback point, and the three answers (stay
 * paused with a note, roll back then unpause, unpause), plus a stale page answering a pause
 * that was cleared meanwhile. Asserts on the page, the files and the journal.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { type Baton, openBaton } from "../src/index.js";
import { connection, openDashboard, screenshot, seriousViolations, suiteBrowser, tabTo } from "./dashboard-helpers.js";
import type { DashboardStore } from "./dashboard-store.js";
import { failUntilPaused } from "./helpers.js";
import { serve } from "./server-helpers.js";

/** The spiral pause's tests, on the store given. */
export function spiralSuite(store: DashboardStore): void {
  describe(store.name, () => {
    const browser = suiteBrowser();

    /** Session `loop`: a checkpoint of app.ts, then the same failing Edit until the detector pauses. */
    async function spiralling(): Promise<{ root: string; lib: Baton; checkpoint: string }> {
      const root = store.workspace();
      writeFileSync(join(root, "app.ts"), "good\n");
      const lib = await openBaton({ root });
      await lib.sessions.start({ flow: "task", id: "loop" });
      const cp = (await lib.checkpoints.create("loop", { files: ["app.ts"], toolName: "Edit" })).checkpoint.id;
      writeFileSync(join(root, "app.ts"), "broken\n");
      await failUntilPaused(lib, "loop", { checkpointId: cp });
      expect((await lib.sessions.snapshot("loop")).facets.spiral?.paused).toBe(true);
      return { root, lib, checkpoint: cp };
    }

    async function openLoop(root: string, page: Page): Promise<void> {
      await openDashboard(page, root, 'a[href="#/session/loop"]');
      await page.locator('a[href="#/session/loop"]').click();
      await connection(page, "live");
      await page.locator("#spiral-title").waitFor();
    }

    async function typesOf(lib: Baton): Promise<string[]> {
      return (await lib.events.list("loop", { afterSeq: 0, limit: 1_000 })).events.map((e) => e.type);
    }

    describe("dashboard: spiral pause", () => {
      it("shows why, keeps it paused with a note the agent reads, then rolls back and unpauses", async () => {
        const { root, lib, checkpoint } = await spiralling();
        const server = await serve(root);
        const context = await browser().newContext({ bypassCSP: true });
        try {
          const page = await context.newPage();
          await openLoop(root, page);
          const panel = page.locator("section.spiral");
          await panel.getByText("same_signature").first().waitFor();
          await panel.getByRole("table", { name: "The repeated calls" }).getByText("TypeError@app.ts:1").first().waitFor();
          await panel.getByText(checkpoint).waitFor();
          expect(await seriousViolations(page)).toEqual([]);
          await screenshot(page, "dashboard-spiral-pause");

          // Stay paused with a note, by keyboard.
          await page.getByLabel("Note for the agent").fill("Stop editing app.ts; read the failing test first.");
          expect(await tabTo(page, 'button[data-choice="note"]')).toBe(true);
          await page.keyboard.press("Enter");
          await page.getByRole("status").filter({ hasText: "stays paused" }).waitFor();
          const snap = await lib.sessions.snapshot("loop");
          expect(snap.facets.spiral?.paused).toBe(true);
          const note = snap.facets.decisions.at(-1);
          expect(note).toMatchObject({ reason: "Stop editing app.ts; read the failing test first." });
          // The agent reads it: STATE.md and the resume context carry the user's decisions.
          expect(await lib.sessions.stateMarkdown("loop")).toContain("read the failing test first");

          // Roll back to the proposed point, then unpause.
          await page.getByRole("button", { name: "Roll back, then unpause" }).click();
          await page.getByRole("status").filter({ hasText: "Rolled back" }).waitFor();
          expect(readFileSync(join(root, "app.ts"), "utf8")).toBe("good\n");
          const types = await typesOf(lib);
          expect(types.slice(-3)).toEqual(["rollback:started", "rollback:applied", "spiral:cleared"]);
          expect((await lib.sessions.snapshot("loop")).facets.spiral?.paused).toBe(false);
          await page.locator("#spiral-title").waitFor({ state: "detached" });
        } finally {
          await context.close();
          await server.stop();
          await lib.close();
        }
      });

      it("unpauses; a stale page answering a pause cleared meanwhile changes nothing", async () => {
        const { root, lib } = await spiralling();
        const server = await serve(root);
        const context = await browser().newContext();
        try {
          const stale = await context.newPage();
          await openLoop(root, stale);
          const detectedAt = (await lib.sessions.snapshot("loop")).facets.spiral?.detectedAt;
          expect(detectedAt).toBeDefined();
          // Unpause from a second page.
          const other = await context.newPage();
          await openDashboard(other, root, 'a[href="#/session/loop"]');
          await other.locator('a[href="#/session/loop"]').click();
          await other.getByRole("button", { name: "Unpause", exact: true }).click();
          await other.getByRole("status").filter({ hasText: "Unpaused" }).waitFor();
          expect((await typesOf(lib)).at(-1)).toBe("spiral:cleared");
          const before = (await lib.sessions.snapshot("loop")).lastSeq;

          // The stale page may still show the pause for a moment; if it acts, nothing changes.
          const acted = await stale.evaluate(async (detectedAt) => {
            const t = JSON.parse(localStorage.getItem("baton.dashboard.session") as string).session;
            const r = await fetch("/v1/sessions/loop/spiral", {
              method: "POST",
              headers: { "content-type": "application/json", authorization: `Bearer ${t}` },
              body: JSON.stringify({ action: "unpause", detectedAt }),
            });
            return { status: r.status, body: await r.json() };
          }, detectedAt);
          expect(acted.status).toBe(409);
          expect(acted.body.error.message).toContain("not paused any more");
          expect((await lib.sessions.snapshot("loop")).lastSeq).toBe(before);
          expect(readFileSync(join(root, "app.ts"), "utf8")).toBe("broken\n");
          // And the stale page follows the journal: the pause disappears without a reload.
          await stale.locator("#spiral-title").waitFor({ state: "detached" });
        } finally {
          await context.close();
          await server.stop();
          await lib.close();
        }
      });
    });
  });
}

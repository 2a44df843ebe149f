/**
 * The dashboard's lessons in a real Chromium against the real `baton serve`: search, edit, pin,
 * delete, and an edit made in LESSONS.md by hand while the page was open, which the page's save
 * must not overwrite. Asserts on the page and on LESSONS.md.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { openBaton } from "../src/index.js";
import { connection, openDashboard, screenshot, seriousViolations, suiteBrowser, tabTo } from "./dashboard-helpers.js";
import type { DashboardStore } from "./dashboard-store.js";
import { serve } from "./server-helpers.js";

/** The lessons view's tests, on the store given. */
export function lessonsSuite(store: DashboardStore): void {
  describe(store.name, () => {
    const browser = suiteBrowser();

    async function workspace(): Promise<string> {
      const root = store.workspace();
      const lib = await openBaton({ root });
      try {
        await lib.sessions.start({ flow: "task", id: "s1" });
        await lib.lessons.add({
          id: "les-migrations",
          scope: "workspace",
          text: "Run the migrations before the API tests.",
          tools: ["Bash"],
        });
        await lib.lessons.add({
          id: "les-css",
          scope: "session",
          sessionId: "s1",
          text: "Never edit the generated CSS; change the tokens.",
          paths: ["src/styles/**"],
        });
      } finally {
        await lib.close();
      }
      return root;
    }

    function card(page: Page, id: string) {
      return page.locator(`article[data-lesson="${id}"]`);
    }

    async function openLessons(root: string, page: Page): Promise<void> {
      await openDashboard(page, root, 'a[href="#/lessons"]');
      await page.getByRole("link", { name: "Lessons" }).click();
      await card(page, "les-css").waitFor();
    }

    describe("dashboard: lessons", () => {
      it("holds the workspace stream while open, so it shows the server going away (and keeps a started server up)", async () => {
        const root = await workspace();
        const server = await serve(root);
        const context = await browser().newContext();
        try {
          const page = await context.newPage();
          await openLessons(root, page);
          await connection(page, "live");
          await server.stop();
          await connection(page, "reconnecting");
        } finally {
          await context.close();
          await server.stop();
        }
      });

      it("searches, edits, pins and deletes lessons in LESSONS.md", async () => {
        const root = await workspace();
        const server = await serve(root);
        const context = await browser().newContext({ bypassCSP: true });
        const md = () => readFileSync(join(root, "LESSONS.md"), "utf8");
        try {
          const page = await context.newPage();
          await openLessons(root, page);
          expect(await seriousViolations(page)).toEqual([]);

          await page.getByLabel("Search lessons").fill("tokens");
          await card(page, "les-migrations").waitFor({ state: "detached" });
          await page.getByText("1 of 2 lessons").waitFor();
          await page.getByLabel("Search lessons").fill("");

          // Edit, by keyboard.
          await card(page, "les-css").getByRole("button", { name: "Edit" }).focus();
          await page.keyboard.press("Enter");
          await card(page, "les-css").getByLabel("Lesson text").fill("Never edit generated CSS; change the design tokens in tokens.json.");
          expect(await tabTo(page, 'article[data-lesson="les-css"] button:first-child')).toBe(true);
          await page.keyboard.press("Enter");
          await page.getByRole("status").filter({ hasText: "Saved lesson les-css" }).waitFor();
          await card(page, "les-css").getByText("change the design tokens in tokens.json").waitFor();
          expect(md()).toContain("Never edit generated CSS; change the design tokens in tokens.json.");
          expect(md()).toContain("- session: s1");
          expect(md()).toContain("Run the migrations before the API tests.");

          await card(page, "les-migrations").getByRole("button", { name: "Pin" }).click();
          await card(page, "les-migrations").locator(".badge", { hasText: "pinned" }).waitFor();
          expect(md()).toMatch(/### les-migrations[\s\S]*- pinned: yes/);
          await screenshot(page, "dashboard-lessons");

          await card(page, "les-migrations").getByRole("button", { name: "Delete…" }).click();
          await card(page, "les-migrations").getByRole("button", { name: "Confirm delete" }).click();
          await card(page, "les-migrations").waitFor({ state: "detached" });
          expect(md()).not.toContain("les-migrations");
          const lib = await openBaton({ root });
          try {
            expect((await lib.lessons.list({ all: true })).lessons.map((l) => l.id)).toEqual(["les-css"]);
          } finally {
            await lib.close();
          }
        } finally {
          await context.close();
          await server.stop();
        }
      });

      it("never overwrites a lesson edited in LESSONS.md while the page had it open", async () => {
        const root = await workspace();
        const server = await serve(root);
        const context = await browser().newContext();
        const file = join(root, "LESSONS.md");
        try {
          const page = await context.newPage();
          await openLessons(root, page);
          await card(page, "les-css").getByRole("button", { name: "Edit" }).click();
          await card(page, "les-css").getByLabel("Lesson text").fill("The page's version.");

          // Someone edits the same lesson by hand meanwhile.
          writeFileSync(
            file,
            readFileSync(file, "utf8").replace("Never edit the generated CSS; change the tokens.", "The hand-edited version."),
          );
          const handEdited = readFileSync(file, "utf8");

          await card(page, "les-css").getByRole("button", { name: "Save" }).click();
          const alert = page.getByRole("alert");
          await alert.waitFor();
          expect(await alert.textContent()).toContain("was changed in LESSONS.md since this page read it");
          expect(readFileSync(file, "utf8")).toBe(handEdited);
          // The user's text is kept for them to apply again, knowingly.
          expect(await card(page, "les-css").getByLabel("Lesson text").inputValue()).toBe("The page's version.");

          // Deleting a lesson removed by hand meanwhile: a clear message, nothing written.
          await card(page, "les-migrations").getByRole("button", { name: "Delete…" }).click();
          const lib = await openBaton({ root });
          try {
            await lib.lessons.remove("les-migrations");
          } finally {
            await lib.close();
          }
          const afterRemove = readFileSync(file, "utf8");
          await card(page, "les-migrations").getByRole("button", { name: "Confirm delete" }).click();
          await page.getByRole("alert").filter({ hasText: "removed meanwhile" }).waitFor();
          expect(readFileSync(file, "utf8")).toBe(afterRemove);
        } finally {
          await context.close();
          await server.stop();
        }
      });
    });
  });
}

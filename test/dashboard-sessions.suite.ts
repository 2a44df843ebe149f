/**
 * The dashboard's sessions view in a real Chromium against the real `baton serve`: every
 * session live over SSE (new sessions, blockers, runs, pending work and leases, spiral pauses),
 * search and filters, the reconnecting state while the server is gone, accessibility and the
 * keyboard. Waits are on page states, never on sleeps.
 */
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { openBaton } from "../src/index.js";
import { connection, openDashboard, refuseFirst, screenshot, seriousViolations, suiteBrowser, tabTo } from "./dashboard-helpers.js";
import type { DashboardStore } from "./dashboard-store.js";
import { liveSession, serve } from "./server-helpers.js";

function row(page: Page, id: string) {
  return page.locator(`tr[data-session="${id}"]`);
}

/** One column of a session's row (the next action's reason may name the same things). */
function cell(page: Page, id: string, col: "session" | "flow" | "next" | "blockers" | "pending" | "run" | "activity") {
  return row(page, id).locator(`td[data-col="${col}"]`);
}

/** The sessions view's tests, on the store given. */
export function sessionsSuite(store: DashboardStore): void {
  describe(store.name, () => {
    const browser = suiteBrowser();

    describe("dashboard: sessions view", () => {
      it("shows every session live: new sessions, blockers, runs, pending work and leases, spiral pauses; search and filter", async () => {
        const root = store.workspace();
        await liveSession(root);
        const server = await serve(root);
        const lib = await openBaton({ root });
        const context = await browser().newContext();
        try {
          const page = await context.newPage();
          await openDashboard(page, root, 'tr[data-session="hero"]');
          await connection(page, "live");

          // Written elsewhere while the page is open: the page follows without a reload.
          await lib.sessions.start({ flow: "task", id: "api-refactor", title: "Refactor the API layer" });
          await lib.facets.addBlocker("api-refactor", { text: "waiting for the schema review" });
          await lib.runs.start("api-refactor", { agent: "claude" });
          // In the blockers column (the next action's reason names the blocker too).
          await cell(page, "api-refactor", "blockers").getByText("waiting for the schema review").waitFor();
          await cell(page, "api-refactor", "run").getByText("claude").waitFor();

          await lib.events.append("hero", { type: "generate", actor: "browser", data: { prompt: "bolder" } });
          await cell(page, "hero", "pending").getByText("generate").waitFor();
          const lease = await lib.work.lease("agent-7", { sessionId: "hero" });
          expect(lease).toBeDefined();
          await cell(page, "hero", "pending").getByText("held by agent-7").waitFor();

          await lib.sessions.start({ flow: "task", id: "looping" });
          await lib.events.append("looping", {
            type: "spiral:detected",
            actor: "system",
            data: {
              pattern: "same_signature",
              summary: "Edit of src/api.ts with the same arguments 3 times",
              turns: ["t1", "t2", "t3"],
              from: "t1",
            },
          });
          await row(page, "looping").locator(".badge.bad", { hasText: "paused: same_signature" }).waitFor();

          // Two agents at once in one session (core/lanes.ts): each is listed with what it is writing.
          await lib.sessions.start({ flow: "task", id: "pair", title: "Pair on the signup page" });
          await lib.runs.start("pair", { agent: "Claude Code", runId: "r-claude", lane: "claude:4f1c" });
          await lib.runs.start("pair", { agent: "Codex", runId: "r-codex", lane: "codex:0199" });
          await lib.turns.record("pair", { tool: "Write", files: [{ path: "src/signup.ts", hash: "a".repeat(64) }], lane: "claude:4f1c" });
          const agents = cell(page, "pair", "run");
          await agents.locator('[data-lane="claude:4f1c"]', { hasText: "writing src/signup.ts" }).waitFor();
          await agents.locator('[data-lane="codex:0199"]', { hasText: "Codex" }).getByText("working").waitFor();
          await screenshot(page, "dashboard-sessions-live");

          // Search and filter narrow the list.
          await page.getByLabel("Search sessions").fill("schema");
          await page.waitForFunction(() => document.querySelectorAll("tbody tr").length === 1);
          expect(await page.locator("tbody tr").getAttribute("data-session")).toBe("api-refactor");
          await page.getByLabel("Search sessions").fill("");
          await page.getByLabel("Show").selectOption("paused");
          await page.waitForFunction(() => document.querySelectorAll("tbody tr").length === 1);
          expect(await page.locator("tbody tr").getAttribute("data-session")).toBe("looping");
          await page.getByLabel("Show").selectOption("pending");
          await page.waitForFunction(() => document.querySelectorAll("tbody tr").length === 1);
          expect(await page.locator("tbody tr").getAttribute("data-session")).toBe("hero");

          // Looking changed nothing: the journal holds only what the test wrote.
          expect((await lib.sessions.snapshot("hero")).lastSeq).toBe(2);
        } finally {
          await context.close();
          await lib.close();
          await server.stop();
        }
      });

      it("shows reconnecting while the server is gone and catches up when it returns", async () => {
        const root = store.workspace();
        await liveSession(root);
        let server = await serve(root);
        const context = await browser().newContext();
        try {
          const page = await context.newPage();
          await openDashboard(page, root, 'tr[data-session="hero"]');
          await connection(page, "live");
          await server.stop();
          await connection(page, "reconnecting");
          await screenshot(page, "dashboard-reconnecting");
          // Written while no server runs.
          const lib = await openBaton({ root });
          try {
            await lib.sessions.start({ flow: "task", id: "while-away" });
          } finally {
            await lib.close();
          }
          server = await serve(root); // same port and token (server.key)
          await connection(page, "live", 20_000);
          await row(page, "while-away").waitFor();
        } finally {
          await context.close();
          await server.stop();
        }
      });

      it("reads the list again when a read failed, though nothing changes in the workspace", async () => {
        const root = store.workspace();
        await liveSession(root);
        const server = await serve(root);
        const context = await browser().newContext();
        try {
          const page = await context.newPage();
          // The server refuses the first two reads of the list (as one busy or restarting would).
          const refused = await refuseFirst(page, /\/v1\/dashboard\/sessions$/, 2);
          await openDashboard(page, root, 'tr[data-session="hero"]');
          expect(refused.count).toBeGreaterThanOrEqual(3);
          await expect.poll(() => page.locator('[role="alert"]').count()).toBe(0);
        } finally {
          await context.close();
          await server.stop();
        }
      });

      it("has no serious accessibility violations, and every action is reachable by keyboard", async () => {
        const root = store.workspace();
        await liveSession(root);
        const server = await serve(root);
        const context = await browser().newContext({ bypassCSP: true });
        try {
          const page = await context.newPage();
          await openDashboard(page, root, 'tr[data-session="hero"]');
          expect(await seriousViolations(page)).toEqual([]);
          expect(await tabTo(page, 'input[aria-label="Search sessions"]')).toBe(true);
          expect(await tabTo(page, 'a[href="#/session/hero"]')).toBe(true);
          await page.keyboard.press("Enter");
          await page.locator("#session-title").waitFor();
          expect(page.url()).toContain("#/session/hero");
        } finally {
          await context.close();
          await server.stop();
        }
      });
    });
  });
}

/**
 * A session's pending work in the dashboard, in a real Chromium against the real `baton serve`:
 * a lease given back to the queue and dead-lettered work delivered again, each behind a
 * confirmation; a stale page (the lease acked meanwhile, the item retried meanwhile) gets a
 * clear message and changes nothing. The panel follows leases taken elsewhere, which journal
 * nothing. Asserts on the page, the queue and the journal.
 */
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { type Baton, isBatonError, openBaton } from "../src/index.js";
import { connection, openDashboard, screenshot, seriousViolations, suiteBrowser, tabTo } from "./dashboard-helpers.js";
import type { DashboardStore } from "./dashboard-store.js";
import { stuckSession } from "./helpers.js";
import { serve } from "./server-helpers.js";

/** The pending work panel's tests, on the store given. */
export function workSuite(store: DashboardStore): void {
  describe(store.name, () => {
    const browser = suiteBrowser();

    /** Session `hero` with its `generate` leased by agent-7; session `stuck` with a dead-lettered `generate`. */
    async function workspace(): Promise<{ root: string; lib: Baton }> {
      const root = store.workspace();
      await stuckSession(root);
      const lib = await openBaton({ root });
      expect(await lib.work.dead("stuck")).toHaveLength(1);
      expect(lib.store.kind, "the store the suite runs on").toBe(store.name);
      await lib.sessions.start({ flow: "live-variant", id: "hero" });
      await lib.events.append("hero", { type: "generate", actor: "browser", data: { prompt: "bolder" } });
      expect(await lib.work.lease("agent-7", { sessionId: "hero", leaseMs: 600_000 })).toBeDefined();
      return { root, lib };
    }

    async function openSession(root: string, page: Page, id: string): Promise<void> {
      await openDashboard(page, root, `a[href="#/session/${id}"]`);
      await page.locator(`a[href="#/session/${id}"]`).click();
      await connection(page, "live");
    }

    const panel = (page: Page) => page.locator('[data-panel="work"]');

    async function seqOf(lib: Baton, id: string): Promise<number> {
      return (await lib.sessions.snapshot(id)).lastSeq;
    }

    describe("dashboard: pending work", () => {
      it("gives a lease back to the queue behind a confirmation; a lease acked meanwhile is refused and nothing changes", async () => {
        const { root, lib } = await workspace();
        const server = await serve(root);
        const context = await browser().newContext({ bypassCSP: true });
        try {
          const page = await context.newPage();
          await openSession(root, page, "hero");
          await panel(page).getByText("held by agent-7").waitFor();
          const journal = await seqOf(lib, "hero");

          // By keyboard: the button, then the confirmation.
          expect(await tabTo(page, 'button[aria-label^="Release… (generate"]')).toBe(true);
          await page.keyboard.press("Enter");
          const confirm = page.getByRole("group", { name: "Confirm the release" });
          await confirm.getByText("agent-7 loses its lease").waitFor();
          expect(await seriousViolations(page)).toEqual([]);
          await screenshot(page, "dashboard-work-release");
          expect((await lib.work.pending("hero"))[0]).toMatchObject({ state: "leased", lease: { owner: "agent-7" } });
          await confirm.getByRole("button", { name: "Confirm release" }).click();
          await panel(page).getByRole("status").filter({ hasText: "Released generate (seq 2) from agent-7" }).waitFor();
          expect((await lib.work.pending("hero")).map((w) => w.state)).toEqual(["ready"]);
          // Releasing journals nothing: the journal holds what it held.
          expect(await seqOf(lib, "hero")).toBe(journal);

          // Leased elsewhere (journals nothing): the panel follows.
          const other = (await lib.work.lease("agent-8", { sessionId: "hero", leaseMs: 600_000 }))!;
          await panel(page).getByText("held by agent-8").waitFor();
          await panel(page)
            .getByRole("button", { name: /^Release… \(generate/ })
            .click();
          // ...and acked before the user confirms: the page is stale.
          await lib.work.ack(other.leaseId, { type: "note:added", data: { text: "variants written by agent-8" } });
          await page.getByRole("group", { name: "Confirm the release" }).getByRole("button", { name: "Confirm release" }).click();
          const alert = panel(page).getByRole("alert");
          await alert.waitFor();
          expect(await alert.textContent()).toMatch(/changed since the page showed it, so nothing was changed.*already finished/);
          await panel(page).getByText("none").waitFor();
          const events = (await lib.events.list("hero", { afterSeq: journal, limit: 10 })).events;
          expect(events.map((e) => [e.type, e.actor])).toEqual([["note:added", "agent"]]);
          expect(await lib.work.pending("hero")).toEqual([]);
        } finally {
          await context.close();
          await server.stop();
          await lib.close();
        }
      });

      it("delivers dead-lettered work again behind a confirmation; an item retried meanwhile is refused and nothing changes", async () => {
        const { root, lib } = await workspace();
        const server = await serve(root);
        const context = await browser().newContext({ bypassCSP: true });
        try {
          const page = await context.newPage();
          await openSession(root, page, "stuck");
          const [dead] = await lib.work.dead("stuck");
          await panel(page).getByText("dead-lettered").waitFor();
          await panel(page).getByText("the agent gave up").waitFor();

          // Stale: retried by someone else between the page's offer and the user's confirmation.
          await panel(page).getByRole("button", { name: "Retry… (generate, seq 2)" }).click();
          await lib.work.retry(dead!.itemId);
          await page.getByRole("group", { name: "Confirm the retry" }).getByRole("button", { name: "Confirm retry" }).click();
          const alert = panel(page).getByRole("alert");
          await alert.waitFor();
          expect(await alert.textContent()).toMatch(/nothing was changed.*already back in the queue/);
          expect((await lib.work.pending("stuck")).map((w) => [w.state, w.attempts])).toEqual([["ready", 0]]);

          // Dead again (its one delivery nacked), shown again, and retried from the page.
          const again = (await lib.work.lease("agent-2", { sessionId: "stuck" }))!;
          await panel(page).getByText("held by agent-2").waitFor();
          await lib.work.nack(again.leaseId, { reason: "still failing" });
          await panel(page).getByText("still failing").waitFor();
          await panel(page).getByRole("button", { name: "Retry… (generate, seq 2)" }).click();
          const confirm = page.getByRole("group", { name: "Confirm the retry" });
          await confirm.getByText("fresh attempts").waitFor();
          expect(await seriousViolations(page)).toEqual([]);
          const journal = await seqOf(lib, "stuck");
          await confirm.getByRole("button", { name: "Confirm retry" }).click();
          await panel(page).getByRole("status").filter({ hasText: "back in the queue with fresh attempts" }).waitFor();
          expect(await lib.work.dead("stuck")).toEqual([]);
          // The old lease stays dead; the next poll delivers it, and its result is journaled.
          const late = await lib.work.ack(again.leaseId).catch((e: unknown) => e);
          expect(isBatonError(late, "lease_lost")).toBe(true);
          const next = (await lib.work.lease("agent-3", { sessionId: "stuck" }))!;
          expect(next).toMatchObject({ attempt: 1, item: { itemId: dead!.itemId, kind: "generate" } });
          await panel(page).getByText("held by agent-3").waitFor();
          await lib.work.ack(next.leaseId, { type: "note:added", data: { text: "generated on the retry" } });
          const events = (await lib.events.list("stuck", { afterSeq: journal, limit: 10 })).events;
          expect(events.map((e) => [e.type, e.data])).toEqual([["note:added", { text: "generated on the retry" }]]);
          await panel(page).getByText("none").waitFor();
          await screenshot(page, "dashboard-work-retry");
        } finally {
          await context.close();
          await server.stop();
          await lib.close();
        }
      });
    });
  });
}

/**
 * The dashboard's health view in a real Chromium against the real `baton serve`: doctor's
 * findings with their fix, the safe repairs applied all at once or one finding's from its own
 * button, and a finding gone meanwhile refused with a message; checked in the store and journal.
 */
import { spawnSync } from "node:child_process";
import type { BrowserContext } from "playwright-core";
import { describe, expect, it } from "vitest";
import { type Baton, openBaton } from "../src/index.js";
import { openDashboard, screenshot, seriousViolations, suiteBrowser, tabTo } from "./dashboard-helpers.js";
import type { DashboardStore } from "./dashboard-store.js";
import { liveSession, serve } from "./server-helpers.js";

/** The health view's tests, on the store given (spec files: dashboard-health.e2e.test.ts, dashboard-postgres.e2e.test.ts). */
export function healthSuite(store: DashboardStore): void {
  describe(store.name, () => {
    const browser = suiteBrowser();

    /** Session `hero` with a `generate` to do, served, and a browser context; everything closed after `fn`. */
    async function withHero(fn: (t: { root: string; lib: Baton; context: BrowserContext }) => Promise<void>): Promise<void> {
      const root = store.workspace();
      await liveSession(root, [{ type: "generate", actor: "browser", data: { prompt: "bolder" } }]);
      const lib = await openBaton({ root });
      const server = await serve(root);
      const context = await browser().newContext({ bypassCSP: true });
      try {
        await fn({ root, lib, context });
      } finally {
        await context.close();
        await server.stop();
        await lib.close();
      }
    }

    describe("dashboard: health", () => {
      it("shows doctor's findings and applies the safe fixes from a button", () =>
        withHero(async ({ root, lib, context }) => {
          // A lease whose holder went away: doctor's `lease_expired`, a safe fix.
          const lease = await lib.work.lease("agent-gone", { sessionId: "hero", leaseMs: 50 });
          expect(lease).toBeDefined();
          await expect.poll(async () => (await lib.work.pending("hero"))[0]?.lease?.expired, { timeout: 10_000, interval: 25 }).toBe(true);

          const page = await context.newPage();
          await openDashboard(page, root, 'a[href="#/session/hero"]');
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
        }));

      it("applies one finding's fix from its own button, and says so when the finding went away meanwhile", () =>
        withHero(async ({ root, lib, context }) => {
          // Three safe findings: an expired lease, a run whose process is gone, a lock held by a dead pid.
          expect(await lib.work.lease("agent-gone", { sessionId: "hero", leaseMs: 50 })).toBeDefined();
          await lib.runs.start("hero", { agent: "claude-code", runId: "r-dead", pid: deadPid() });
          await lib.locks.acquire("deploy", { pid: deadPid(), owner: "deployer" });
          await expect.poll(async () => (await lib.work.pending("hero"))[0]?.lease?.expired, { timeout: 10_000, interval: 25 }).toBe(true);
          const journal = (await lib.sessions.snapshot("hero")).lastSeq;

          const page = await context.newPage();
          await openDashboard(page, root, 'a[href="#/session/hero"]');
          await page.getByRole("link", { name: "Health" }).click();
          const row = (code: string) => page.locator(`tr[data-code="${code}"]`);
          for (const code of ["lease_expired", "run_crashed", "lock_stale"]) await row(code).waitFor();
          expect(await seriousViolations(page)).toEqual([]);

          // Only that fix: the run is marked crashed (journaled); the lease and the lock stay as they were.
          expect(await tabTo(page, 'button[data-fix="run_crashed"]')).toBe(true);
          await page.keyboard.press("Enter");
          await page.getByRole("status").filter({ hasText: "1 run(s) marked crashed" }).waitFor();
          await row("run_crashed").waitFor({ state: "detached" });
          await row("lease_expired").waitFor();
          await row("lock_stale").waitFor();
          const events = (await lib.events.list("hero", { afterSeq: journal, limit: 10 })).events;
          expect(events.map((e) => [e.type, (e.data as { runId?: string }).runId])).toEqual([["run:crashed", "r-dead"]]);
          expect((await lib.work.pending("hero"))[0]).toMatchObject({ state: "leased", lease: { owner: "agent-gone" } });
          expect((await lib.locks.inspect("deploy")).state).toBe("held");
          await screenshot(page, "dashboard-health-one-fix");

          // The lock is reclaimed elsewhere before the user presses its button: a clear message, nothing done.
          const elsewhere = await lib.health.doctor({ fix: ["lock_stale"] });
          expect(elsewhere.repairs.map((r) => r.code)).toEqual(["lock_stale"]);
          const epoch = (await lib.locks.inspect("deploy")).epoch;
          await row("lock_stale").getByRole("button", { name: "Apply this fix (lock_stale)" }).click();
          await page.getByRole("status").filter({ hasText: "no lock_stale finding needs fixing now" }).waitFor();
          expect(await page.locator("[data-stale]").textContent()).toContain("nothing was changed");
          await row("lock_stale").waitFor({ state: "detached" });
          await row("lease_expired").waitFor();
          expect((await lib.locks.inspect("deploy")).epoch).toBe(epoch);
          expect((await lib.sessions.snapshot("hero")).lastSeq).toBe(journal + 1);
        }));
    });
  });
}

function deadPid(): number {
  return spawnSync(process.execPath, ["-e", "0"]).pid as number;
}

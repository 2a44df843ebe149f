/**
 * The dashboard on a phone (390×844 CSS px, a touch screen at 3×) and its polish on a desktop
 * (1280 px), in a real Chromium against the real `baton serve`, over a workspace seeded the way a
 * busy project looks: long session ids, titles and commands, two agents in one session, a lease,
 * dead-lettered work, a spiral pause, checkpoints, a ledger, doctor's findings and lessons.
 *
 * On the phone every view fits the screen's width (Chromium on a phone zooms the page out to fit
 * whatever overflows, so the layout viewport must stay 390 px and nothing may be wider), the
 * navigation and the connection badge are on screen, every control is reachable (on screen once
 * scrolled to, and what a tap at its centre hits), and commands wrap between words, not letter
 * by letter. On the desktop: status words stay whole, placeholders fit their inputs, the ledger
 * chart's legend and time axis read well, counts are in the singular when there is one, a
 * rollback is offered without comparing first, and a completed session's open blockers are
 * history, not red and active. SQLite only: layout does not depend on the store.
 */
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Browser, BrowserContextOptions, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type Baton, openBaton } from "../src/index.js";
import { spawnNode, waitExit } from "./child-process.js";
import { connection, launch, openDashboard, screenshot, seriousViolations } from "./dashboard-helpers.js";
import { failUntilPaused, REPO, stuckSession, tempDir, writeAt } from "./helpers.js";
import { type Served, serve } from "./server-helpers.js";

// bypassCSP: the accessibility check injects axe-core into the page.
const PHONE: BrowserContextOptions = {
  viewport: { width: 390, height: 844 },
  deviceScaleFactor: 3,
  isMobile: true,
  hasTouch: true,
  bypassCSP: true,
};
const DESKTOP: BrowserContextOptions = { viewport: { width: 1280, height: 800 } };

/** A session id as long as generated ones get. */
const LONG = "checkout-refactor-2026-11-25-7f3a9c1e5b2d4f6a8c0e";
const ADAPTER = "src/checkout/payment-provider-adapter.ts";
const TEST_COMMAND = "npm run test -- --filter=src/checkout/payment-provider-adapter.test.ts --reporter=verbose --coverage";

/**
 * The workspace: `LONG` (a task in progress: two agents, a long blocker, checkpoints of a file
 * changed since, a ledger), `hero` (a live variant, its work leased), `stuck` (dead-lettered
 * work), `loop` (paused by the spiral detector), `shipped` (completed with a blocker still
 * open), `stale` (a lease expired: doctor's safe fix) and two lessons.
 */
async function seed(root: string): Promise<Baton> {
  await stuckSession(root);
  writeAt(root, ADAPTER, "export const provider = 'legacy';\n");
  writeAt(root, "app.ts", "good\n");
  const lib = await openBaton({ root });
  await lib.sessions.start({
    flow: "task",
    id: LONG,
    title: "Move the payment provider behind an adapter and migrate every caller in src/checkout",
  });
  await lib.events.append(LONG, { type: "start", actor: "agent" });
  await lib.facets.setProgress(LONG, { total: 7, completed: 3 });
  await lib.facets.addBlocker(LONG, { text: "waiting for the schema review of db/migrations/0042_payment_provider_adapter.sql" });
  await lib.facets.addDecision(LONG, {
    decision: "Keep the legacy provider behind a feature flag",
    reason: "a way back for the first week",
  });
  await lib.runs.start(LONG, { agent: "Claude Code", runId: "r-claude", lane: "claude:4f1c" });
  await lib.runs.start(LONG, { agent: "Codex", runId: "r-codex", lane: "codex:0199" });
  await lib.turns.record(LONG, { tool: "Write", files: [{ path: ADAPTER, hash: "a".repeat(64) }], lane: "claude:4f1c" });
  await lib.checkpoints.create(LONG, { files: [ADAPTER], toolName: "Edit", label: "before the adapter" });
  writeAt(
    root,
    ADAPTER,
    "export const provider = 'adapter';\nexport const chargeCustomerWithIdempotencyKeyAndRetryPolicyForTheNewProvider = (id: string) => id;\n",
  );
  await lib.checkpoints.create(LONG, { files: [ADAPTER], toolName: "Write" });
  writeAt(root, ADAPTER, "export const provider = 'adapter';\n// callers migrated\n");
  const failed = await lib.ledger.record(LONG, {
    toolName: "Bash",
    status: "error",
    args: { command: TEST_COMMAND },
    error: "TypeError: Cannot read properties of undefined (reading 'chargeCustomerWithIdempotencyKey')",
  });
  await lib.ledger.record(LONG, { toolName: "Edit", status: "success", args: { file_path: ADAPTER } });
  await lib.ledger.record(LONG, { toolName: "Bash", status: "recovered", args: { command: TEST_COMMAND }, recoveryTool: "Edit" });
  await lib.ledger.record(LONG, {
    toolName: "Read",
    status: "no_progress",
    args: { file_path: ADAPTER },
    progress: "same file, same content",
  });
  expect(failed).toBeDefined();

  await lib.sessions.start({ flow: "live-variant", id: "hero" });
  await lib.events.append("hero", { type: "generate", actor: "browser", data: { prompt: "bolder" } });
  expect(await lib.work.lease("agent-7", { sessionId: "hero", leaseMs: 3_600_000 })).toBeDefined();

  await lib.sessions.start({ flow: "task", id: "loop" });
  const cp = (await lib.checkpoints.create("loop", { files: ["app.ts"], toolName: "Edit" })).checkpoint.id;
  writeAt(root, "app.ts", "broken\n");
  await failUntilPaused(lib, "loop", { checkpointId: cp, fingerprint: "TypeError@src/checkout/payment-provider-adapter.ts:12" });
  expect((await lib.sessions.snapshot("loop")).facets.spiral?.paused).toBe(true);

  await lib.sessions.start({ flow: "task", id: "shipped", title: "Ship the invoice e-mails" });
  await lib.events.append("shipped", { type: "start", actor: "agent" });
  await lib.facets.addBlocker("shipped", { text: "the e2e test of the e-mail preview is flaky on CI" });
  await lib.sessions.complete("shipped");

  await lib.sessions.start({ flow: "live-variant", id: "stale" });
  await lib.events.append("stale", { type: "generate", actor: "browser", data: { prompt: "calmer" } });
  expect(await lib.work.lease("agent-gone", { sessionId: "stale", leaseMs: 50 })).toBeDefined();
  while (!(await lib.work.pending("stale"))[0]?.lease?.expired) await new Promise((r) => setTimeout(r, 25));

  await lib.lessons.add({
    id: "les-adapter",
    scope: "workspace",
    text: "Run the adapter's contract tests before migrating a caller.",
    tools: ["Bash"],
    paths: ["src/checkout/**/payment-provider-adapter.ts"],
  });
  await lib.lessons.add({
    id: "les-flag",
    scope: "session",
    sessionId: LONG,
    text: "Keep the legacy provider's flag on until the review.",
  });
  return lib;
}

/** The page's width against the screen's: the layout viewport and everything in it, with the widest offenders named. */
async function width(page: Page): Promise<{ innerWidth: number; scrollWidth: number; wider: string[] }> {
  return page.evaluate(() => {
    const screen = innerWidth;
    const wider: string[] = [];
    for (const el of document.querySelectorAll("body *")) {
      const r = el.getBoundingClientRect();
      if (r.right > 390.5 && wider.length < 5)
        wider.push(`${el.tagName.toLowerCase()}.${el.className} (${Math.round(r.right)} px): ${(el.textContent ?? "").slice(0, 40)}`);
    }
    return { innerWidth: screen, scrollWidth: (document.scrollingElement as Element).scrollWidth, wider };
  });
}

async function expectFits(page: Page, view: string): Promise<void> {
  const w = await width(page);
  expect({ innerWidth: w.innerWidth, scrollWidth: w.scrollWidth }, `${view}: wider than the phone: ${w.wider.join(" | ")}`).toEqual({
    innerWidth: 390,
    scrollWidth: 390,
  });
}

/**
 * The controls a person cannot reach: every link, button, field, summary and the connection
 * badge that is shown, scrolled to, must lie on screen and be what a tap at its centre hits.
 */
async function unreachable(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const name = (el: Element) =>
      `${el.tagName.toLowerCase()} "${(el.getAttribute("aria-label") ?? (el as HTMLElement).innerText ?? "").trim().slice(0, 60)}"`;
    const out: string[] = [];
    const controls = document.querySelectorAll<HTMLElement>(
      "header a, header [data-connection], main a[href], main button, main input, main select, main textarea, main summary",
    );
    for (const el of controls) {
      if (!el.isConnected || !el.checkVisibility()) continue;
      el.scrollIntoView({ block: "center", inline: "nearest" });
      const r = el.getBoundingClientRect();
      if (r.width < 1 || r.height < 1) out.push(`${name(el)} has no size`);
      else if (r.left < -0.5 || r.right > innerWidth + 0.5 || r.top < -0.5 || r.bottom > innerHeight + 0.5)
        out.push(
          `${name(el)} is off screen (${Math.round(r.left)}..${Math.round(r.right)} × ${Math.round(r.top)}..${Math.round(r.bottom)})`,
        );
      else {
        const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
        if (!hit || !(hit === el || el.contains(hit))) out.push(`${name(el)} is covered by ${hit ? name(hit) : "nothing"}`);
      }
    }
    window.scrollTo(0, 0);
    return out;
  });
}

/** Each element's text and how many lines it takes (an inline element's line boxes). */
async function lineCounts(page: Page, selector: string): Promise<{ text: string; lines: number }[]> {
  return page
    .locator(selector)
    .evaluateAll((els) =>
      els.filter((el) => el.checkVisibility()).map((el) => ({ text: el.textContent ?? "", lines: el.getClientRects().length })),
    );
}

/** Commands wrap between words: none takes more lines than its length allows at `chars` characters a line. */
async function expectWrapsByWords(page: Page, selector: string, chars = 12): Promise<void> {
  const found = await lineCounts(page, selector);
  expect(found.length, `no ${selector} on the page`).toBeGreaterThan(0);
  for (const c of found)
    expect(c.lines, `"${c.text}" (${selector}) in ${c.lines} lines: broken letter by letter`).toBeLessThanOrEqual(
      Math.max(1, Math.ceil(c.text.length / chars)),
    );
}

/** Inputs whose placeholder is wider than the room inside them. */
async function cutPlaceholders(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const ctx = document.createElement("canvas").getContext("2d") as CanvasRenderingContext2D;
    const out: string[] = [];
    for (const el of document.querySelectorAll<HTMLInputElement>("input[placeholder]")) {
      if (!el.checkVisibility()) continue;
      const s = getComputedStyle(el);
      ctx.font = `${s.fontStyle} ${s.fontWeight} ${s.fontSize} ${s.fontFamily}`;
      const need = ctx.measureText(el.placeholder).width;
      const room = el.clientWidth - Number.parseFloat(s.paddingLeft) - Number.parseFloat(s.paddingRight);
      if (need > room) out.push(`"${el.placeholder}" needs ${Math.ceil(need)} px, has ${Math.floor(room)} px`);
    }
    return out;
  });
}

describe("dashboard on a phone, and its polish on a desktop", () => {
  let browser: Browser;
  let root: string;
  let lib: Baton;
  let server: Served;
  beforeAll(async () => {
    browser = await launch();
    root = tempDir();
    lib = await seed(root);
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

  async function open(options: BrowserContextOptions, hash = "#/sessions"): Promise<Page> {
    const context = await browser.newContext(options);
    const page = await context.newPage();
    page.on("pageerror", (err) => console.error(`page error: ${err.message}`));
    await openDashboard(page, root, `tr[data-session="hero"]`);
    if (hash !== "#/sessions") await page.evaluate((h) => (location.hash = h), hash);
    await connection(page, "live");
    return page;
  }

  async function openSession(options: BrowserContextOptions, id: string): Promise<Page> {
    const page = await open(options, `#/session/${encodeURIComponent(id)}`);
    await page.locator("#session-title").waitFor();
    await page.locator('table[aria-label="Checkpoints"]').or(page.getByText("No checkpoints yet.")).waitFor();
    return page;
  }

  describe("phone", () => {
    it("the sessions list fits the screen; the nav and the live badge are on it; every session and control is reachable", async () => {
      const page = await open(PHONE);
      try {
        await page.locator(`tr[data-session="${LONG}"]`).getByText("Codex").waitFor();
        await expectFits(page, "sessions");
        expect(await unreachable(page)).toEqual([]);
        // The nav and the badge, in the first screen without scrolling.
        for (const el of [
          page.getByRole("link", { name: "Sessions" }),
          page.getByRole("link", { name: "Health" }),
          page.locator("[data-connection]"),
        ]) {
          const box = await el.boundingBox();
          expect(
            box && box.x >= 0 && box.x + box.width <= 390 && box.y + box.height <= 844,
            `${await el.textContent()} at ${JSON.stringify(box)}`,
          ).toBe(true);
        }
        // Status words whole; commands broken between words.
        for (const c of await lineCounts(page, 'td[data-col="flow"] code, .badge')) expect(c.lines, `"${c.text}" wraps`).toBe(1);
        await expectWrapsByWords(page, ".next-action code");
        expect(await cutPlaceholders(page)).toEqual([]);
        // The rows as cards keep what a screen reader needs.
        expect(await seriousViolations(page)).toEqual([]);
        await screenshot(page, "dashboard-phone-sessions");

        // Search, then open a session by its link.
        await page.getByLabel("Search sessions").fill("adapter");
        await page.waitForFunction(() => document.querySelectorAll("tbody tr").length === 1);
        await page.locator(`a[href="#/session/${LONG}"]`).first().tap();
        await page.locator("#session-title").waitFor();
        await expectFits(page, "the session, from the list");
        // The session's tab in the nav: on screen though its id is long.
        const tab = page.locator('header nav a[aria-current="page"]');
        expect(await tab.textContent()).toContain(LONG);
        expect(await unreachable(page)).toEqual([]);
      } finally {
        await page.context().close();
      }
    });

    it("a busy session fits: status, agents, blockers, checkpoints, timeline, ledger, STATE.md; every control reachable", async () => {
      const page = await openSession(PHONE, LONG);
      try {
        await page.getByRole("table", { name: "Ledger" }).locator('tr[data-node="4"]').waitFor();
        await page.locator(".ledger-chart canvas").first().waitFor();
        await page.locator(".timeline li.row .type").first().waitFor();
        await expectFits(page, "session");
        expect(await unreachable(page)).toEqual([]);
        for (const c of await lineCounts(page, "h2 + p code, .badge")) expect(c.lines, `"${c.text}" wraps`).toBe(1);
        expect(await cutPlaceholders(page)).toEqual([]);
        expect(await seriousViolations(page)).toEqual([]);
        await screenshot(page, "dashboard-phone-session");

        // An event opened from the timeline, on screen.
        await page.getByRole("button", { name: "Show event 1" }).tap();
        await page.getByTestId("event-detail").waitFor();
        await expectFits(page, "session, an event open");
        expect(await unreachable(page)).toEqual([]);
      } finally {
        await page.context().close();
      }
    });

    it("rolls back from a phone: Roll back… on a checkpoint opens its preview with the confirmation; side by side scrolls in its own box", async () => {
      const page = await openSession(PHONE, LONG);
      try {
        const row = page.locator('table[aria-label="Checkpoints"] tbody tr').filter({ hasText: "before the adapter" });
        await row.getByRole("button", { name: /^Roll back… \(#1/ }).tap();
        const confirm = page.getByRole("group", { name: "Confirm the rollback" });
        await confirm.getByText("1 file to checkpoint #1").waitFor();
        await page.getByRole("region", { name: "Rollback preview" }).getByText("1 file would change").waitFor();
        await expectFits(page, "rollback preview");
        expect(await unreachable(page)).toEqual([]);
        await page.getByRole("region", { name: "Rollback preview" }).getByLabel("side by side").tap();
        await page.getByRole("table", { name: `${ADAPTER}, side by side diff` }).waitFor();
        await expectFits(page, "side by side diff");
        expect(await unreachable(page)).toEqual([]);
        await screenshot(page, "dashboard-phone-rollback");
        await confirm.getByRole("button", { name: "Confirm rollback" }).tap();
        await page.getByRole("status").filter({ hasText: "1 file restored" }).waitFor();
        expect(readFileSync(join(root, ADAPTER), "utf8")).toBe("export const provider = 'legacy';\n");
        await expectFits(page, "after the rollback");
        expect(await unreachable(page)).toEqual([]);
      } finally {
        await page.context().close();
      }
    });

    it("leased and dead-lettered work, and a spiral pause, fit with their buttons reachable", async () => {
      for (const [id, button] of [
        ["hero", /^Release… \(generate/],
        ["stuck", /^Retry… \(generate/],
        ["loop", /^Unpause$/],
      ] as const) {
        const page = await openSession(PHONE, id);
        try {
          await page.getByRole("button", { name: button }).waitFor();
          if (id === "loop") {
            await page.getByRole("table", { name: "The repeated calls" }).locator("tbody tr").first().waitFor();
            // The reason names the turns it saw.
            expect(await page.locator(".next-action").first().innerText()).toMatch(/\(turns \d+(, \d+)*\)/);
          }
          await expectFits(page, id);
          expect(await unreachable(page), id).toEqual([]);
          await screenshot(page, `dashboard-phone-${id}`);
        } finally {
          await page.context().close();
        }
      }
    });

    it("lessons and health fit; a fix command wraps between words and copies with a tap", async () => {
      const page = await open(PHONE, "#/lessons");
      try {
        await page.locator('article[data-lesson="les-adapter"]').waitFor();
        await expectFits(page, "lessons");
        expect(await unreachable(page)).toEqual([]);
        expect(await cutPlaceholders(page)).toEqual([]);
        await screenshot(page, "dashboard-phone-lessons");

        await page.getByRole("link", { name: "Health" }).tap();
        const stale = page.locator('tr[data-code="lease_expired"]');
        await stale.getByText("agent-gone").waitFor();
        await page.locator('tr[data-code="files_changed_since_checkpoint"]').first().waitFor();
        await expectFits(page, "health");
        expect(await unreachable(page)).toEqual([]);
        await expectWrapsByWords(page, "td[data-col=fix] code");
        expect(await seriousViolations(page)).toEqual([]);
        await screenshot(page, "dashboard-phone-health");
        await page.context().grantPermissions(["clipboard-read", "clipboard-write"]);
        await stale.getByRole("button", { name: /^Copy/ }).tap();
        await stale.getByRole("button", { name: /^Copied/ }).waitFor();
        expect(await page.evaluate(() => navigator.clipboard.readText())).toBe("baton poll --session stale --json");
      } finally {
        await page.context().close();
      }
    });
  });

  describe("desktop", () => {
    it("keeps status words whole, fits placeholders, and wraps long commands between words", async () => {
      const page = await open(DESKTOP);
      try {
        await page.locator(`tr[data-session="${LONG}"]`).getByText("Codex").waitFor();
        const phases = await lineCounts(page, 'td[data-col="flow"] code');
        expect(phases.map((p) => p.text)).toEqual(expect.arrayContaining(["in_progress", "generating"]));
        for (const c of phases.concat(await lineCounts(page, ".badge"))) expect(c.lines, `"${c.text}" wraps`).toBe(1);
        await expectWrapsByWords(page, ".next-action code");
        expect(await cutPlaceholders(page)).toEqual([]);
        const desktop = await width(page);
        expect(desktop.scrollWidth, desktop.wider.join(" | ")).toBeLessThanOrEqual(1280);
        // The spiral's reason names its turns.
        expect(await page.locator('tr[data-session="loop"] .next-action').innerText()).not.toContain("(turns )");

        await page.evaluate((id) => (location.hash = `#/session/${encodeURIComponent(id)}`), LONG);
        await page.locator(".timeline li.row .type").first().waitFor();
        expect(await cutPlaceholders(page)).toEqual([]);
        for (const c of await lineCounts(page, "h2 + p code")) expect(c.lines, `"${c.text}" wraps`).toBe(1);

        await page.getByRole("link", { name: "Health" }).click();
        await page.locator('tr[data-code="lease_expired"]').waitFor();
        await expectWrapsByWords(page, "td[data-col=fix] code");
        await page.getByRole("link", { name: "Lessons" }).click();
        await page.locator('article[data-lesson="les-adapter"]').waitFor();
        expect(await cutPlaceholders(page)).toEqual([]);
      } finally {
        await page.context().close();
      }
    });

    it("the ledger chart: a legend of the statuses (no '--'), a time axis in hours:minutes:seconds", async () => {
      const page = await openSession(DESKTOP, LONG);
      try {
        const chart = page.locator(".ledger-chart");
        await chart.locator("canvas").first().waitFor();
        const legend = (await chart.locator(".u-legend").textContent()) ?? "";
        for (const st of ["success", "recovered", "error", "no_progress"]) expect(legend).toContain(st);
        expect(legend).not.toContain("--");
        expect(legend.toLowerCase()).not.toContain("time");
        // The axis as drawn (the chart keeps its tick labels in an attribute: the canvas has no text).
        const ticks = JSON.parse((await chart.getAttribute("data-time-ticks")) ?? "[]") as string[];
        expect(ticks.filter(Boolean).length).toBeGreaterThan(0);
        for (const t of ticks.filter(Boolean)) expect(t).toMatch(/^\d\d:\d\d:\d\d$/);
        await chart.scrollIntoViewIfNeeded();
        await screenshot(page, "dashboard-desktop-ledger");
      } finally {
        await page.context().close();
      }
    });

    it("offers Roll back… on each checkpoint without comparing first, and counts one file as 1 file", async () => {
      const page = await openSession(DESKTOP, "loop");
      try {
        const row = page.locator('table[aria-label="Checkpoints"] tbody tr').first();
        await row.getByRole("button", { name: "Compare with now" }).waitFor();
        await row.getByRole("button", { name: /^Roll back… \(#1/ }).click();
        const confirm = page.getByRole("group", { name: "Confirm the rollback" });
        await confirm.getByText("Restore 1 file to checkpoint #1").waitFor();
        await page
          .getByRole("region", { name: "Rollback preview" })
          .getByText("Now → checkpoint #1 before Edit: 1 file would change")
          .waitFor();
        // Cancel goes back to the preview and its button.
        await confirm.getByRole("button", { name: "Cancel" }).click();
        await page.getByRole("button", { name: /^Roll back to #1/ }).waitFor();
        expect(readFileSync(join(root, "app.ts"), "utf8")).toBe("broken\n");
        expect(await page.locator("body").innerText()).not.toMatch(/\b1 files\b/);
      } finally {
        await page.context().close();
      }
    });

    it("a completed session's open blocker is history: no red active badge, not under 'with active blockers'", async () => {
      const page = await open(DESKTOP);
      try {
        const cell = page.locator('tr[data-session="shipped"] td[data-col="blockers"]');
        await cell.getByText("flaky on CI").waitFor();
        expect(await cell.locator(".badge.bad").count()).toBe(0);
        expect(await cell.locator(".badge").innerText()).toBe("open at completion");
        await page.getByLabel("Show").selectOption("blocked");
        await page.waitForFunction(() => !document.querySelector('tr[data-session="shipped"]'));
        expect(await page.locator(`tr[data-session="${LONG}"]`).count()).toBe(1);

        await page.evaluate(() => (location.hash = "#/session/shipped"));
        const blockers = page.locator(".card", { has: page.getByRole("heading", { name: "Blockers" }) });
        await blockers.getByText("flaky on CI").waitFor();
        expect(await blockers.locator(".badge.bad").count()).toBe(0);
        expect(await blockers.locator(".badge").innerText()).toBe("open at completion");
      } finally {
        await page.context().close();
      }
    });
  });

  it("scripts/dashboard-screenshot.mjs draws the README's picture from a seeded workspace", async () => {
    const out = join(tempDir(), "dashboard-sessions.png");
    const child = spawnNode(join(REPO, "scripts/dashboard-screenshot.mjs"), ["--out", out], "scripts/dashboard-screenshot.mjs");
    const exit = await waitExit(child, 90_000);
    expect(exit.code, `${child.lines.join("\n")}\n${child.stderr()}`).toBe(0);
    const png = readFileSync(out);
    expect(png.subarray(1, 4).toString()).toBe("PNG");
    expect(statSync(out).size).toBeGreaterThan(20_000);
  }, 120_000);
});

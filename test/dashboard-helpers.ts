/**
 * Helpers for the dashboard's end-to-end tests: Debian's Chromium through playwright-core, a
 * login link from the real `baton dashboard`, screenshots under test-artifacts/ (git-ignored),
 * and an axe-core check run inside the page.
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { type Browser, type ConsoleMessage, chromium, type Page, type Request, type Response } from "playwright-core";
import { afterAll, beforeAll } from "vitest";
import { cli, REPO } from "./helpers.js";

const CHROMIUM = "/usr/bin/chromium";
const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export async function launch(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium)`);
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS });
}

/** A Chromium for the tests of the enclosing describe: launched before them, closed after them. */
export function suiteBrowser(): () => Browser {
  let browser: Browser | undefined;
  beforeAll(async () => {
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
  });
  return () => {
    if (!browser) throw new Error("the suite's Chromium is not running");
    return browser;
  };
}

/**
 * Open the dashboard in `page` with a fresh login link and wait for `selector` (the view the
 * test starts from). When it never shows, the error says what the page showed and what it saw:
 * its text, console messages, failed or refused requests, and the link (`started` says
 * whether `baton dashboard` found the test's server or started its own).
 */
export async function openDashboard(page: Page, root: string, selector: string, timeout = 30_000): Promise<void> {
  const t0 = Date.now();
  const seen: string[] = [];
  const at = () => `+${Date.now() - t0}ms`;
  const onConsole = (m: ConsoleMessage) => seen.push(`${at()} console.${m.type()}: ${m.text()}`);
  const onError = (e: Error) => seen.push(`${at()} page error: ${e.message}`);
  const onFailed = (r: Request) => seen.push(`${at()} failed: ${r.method()} ${r.url()} (${r.failure()?.errorText})`);
  const onResponse = (r: Response) => {
    if (r.status() >= 400) seen.push(`${at()} ${r.status()}: ${r.request().method()} ${r.url()}`);
  };
  page.on("console", onConsole);
  page.on("pageerror", onError);
  page.on("requestfailed", onFailed);
  page.on("response", onResponse);
  const link = dashboardLink(root);
  try {
    await page.goto(link.url);
    await page.locator(selector).first().waitFor({ timeout });
  } catch (err) {
    const text = await page
      .locator("body")
      .innerText({ timeout: 2_000 })
      .catch((e: Error) => `(unreadable: ${e.message})`);
    throw new Error(
      `the dashboard never showed ${selector}: ${(err as Error).message}\nlink: ${JSON.stringify(link)}\npage text: ${text}\nseen:\n${seen.join("\n")}`,
    );
  } finally {
    page.off("console", onConsole);
    page.off("pageerror", onError);
    page.off("requestfailed", onFailed);
    page.off("response", onResponse);
  }
}

/**
 * Answer the first `n` requests to URLs matching `pattern` with a 503 (as a server busy or
 * restarting would), and let the rest through; `count` is how many were asked for so far.
 */
export async function refuseFirst(page: Page, pattern: RegExp, n: number): Promise<{ count: number }> {
  const asked = { count: 0 };
  await page.route(pattern, (route) => {
    if (asked.count++ < n) {
      return route.fulfill({ status: 503, contentType: "application/json", body: '{"error":{"code":"unavailable","message":"busy"}}' });
    }
    return route.continue();
  });
  return asked;
}

/** `baton dashboard --json` on a workspace: the one-time login link (and whether it started a server). */
export function dashboardLink(root: string): { url: string; port: number; pid: number; started: boolean } {
  const r = cli(["--root", root, "--json", "dashboard"]);
  if (r.code !== 0) throw new Error(`baton dashboard exited ${r.code}: ${r.stdout}${r.stderr}`);
  return r.json();
}

export const ARTIFACTS = join(REPO, "test-artifacts");

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/** Violations of impact serious or critical on the page as it is now (needs a context with bypassCSP). */
export async function seriousViolations(page: Page): Promise<{ id: string; impact: string; nodes: string[] }[]> {
  await page.addScriptTag({ content: AXE });
  return page.evaluate(async () => {
    const axe = (globalThis as any).axe;
    const r = await axe.run(document, { resultTypes: ["violations"] });
    return r.violations
      .filter((v: any) => v.impact === "serious" || v.impact === "critical")
      .map((v: any) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n: any) => n.target.join(" ")) }));
  });
}

/** Press Tab until the focused element matches `selector` (at most `max` presses); false if never. */
export async function tabTo(page: Page, selector: string, max = 80): Promise<boolean> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press("Tab");
    if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector)) return true;
  }
  return false;
}

export function connection(page: Page, state: "live" | "reconnecting" | "connecting", timeout = 15_000) {
  return page.waitForSelector(`[data-connection="${state}"]`, { timeout });
}

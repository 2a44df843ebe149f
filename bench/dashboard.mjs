/**
 * The dashboard in a real Chromium (Debian's, through playwright-core) against a real
 * `baton serve` on loopback, with a 100,000-event session:
 *
 * - first paint: from `page.goto` of the session's view to its first timeline rows, its event
 *   count and its status shown (a fresh page each time: no cache, the browser session in the origin's storage only).
 * - append → page: from sending one event to the server (`POST /v1/sessions/:id/events`, which
 *   answers once it is committed) to its row showing in the open page, which follows the
 *   journal's end over SSE. Sequential, one event at a time.
 *
 * Timings are taken in this process around the page's own state, so they include the CDP round
 * trips (a millisecond or two): a conservative measure.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { gc, hr, loadBaton, ratio, scaled, summarise, TARGET, tempDir } from "./lib.mjs";

export const name = "dashboard";
export const title = "Dashboard: first paint of a 100k-event session, and append → page";

const CHROMIUM = "/usr/bin/chromium";
const SESSION = "long";

async function startServer(root) {
  const child = spawn(process.execPath, [join(TARGET, "bin", "baton.cjs"), "serve", "--json", "--root", root, "--port", "0"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const line = await new Promise((resolve, reject) => {
    const rl = createInterface({ input: child.stdout });
    rl.once("line", resolve);
    child.once("exit", (code) => reject(new Error(`baton serve exited ${code}`)));
  });
  const ready = JSON.parse(line);
  const { token } = JSON.parse(readFileSync(join(root, ".baton", "server.json"), "utf8"));
  return { child, url: ready.url, token };
}

async function api(server, method, path, body) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

export async function run() {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
  const { chromium } = await import("playwright-core");
  const { openBaton } = await loadBaton();
  const root = tempDir("dashboard");
  const total = scaled(100_000, 2_000);
  {
    const baton = await openBaton({ root, durability: "relaxed" });
    await baton.sessions.start({ flow: "task", id: SESSION, title: "a long session" });
    for (let done = 0; done < total; done += 2_000) {
      const events = [];
      for (let i = done; i < Math.min(total, done + 2_000); i++)
        events.push({
          type: "note:added",
          actor: i % 3 ? "agent" : "user",
          data: { text: `tool call ${i}: edited src/file-${i % 50}.ts` },
        });
      await baton.events.appendBatch(SESSION, events);
    }
    await baton.close();
  }
  const lastSeq = total + 1;
  const server = await startServer(root);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  try {
    const context = await browser.newContext();
    // Log in once (the browser session in the origin's localStorage then serves every page of this context).
    const login = await api(server, "POST", "/v1/dashboard/login-codes", {});
    const first = await context.newPage();
    await first.goto(`${server.url}${login.path}`);
    await first.waitForSelector("tr[data-session]");
    await first.close();

    const paintSamples = [];
    const reps = scaled(10, 3);
    for (let r = 0; r < reps + 1; r++) {
      const page = await context.newPage();
      gc();
      const t = hr();
      await page.goto(`${server.url}/dashboard#/session/${SESSION}`);
      await page
        .waitForFunction(
          (n) =>
            document.querySelector(".timeline li.row:not(.loading) .seq")?.textContent === "#1" &&
            document.body.innerText.includes(`${n} events`) &&
            document.querySelector(".next-action") !== null,
          lastSeq,
          { polling: 5, timeout: 30_000 },
        )
        .catch(async (err) => {
          throw new Error(`${err.message}\npage text: ${(await page.evaluate(() => document.body.innerText)).slice(0, 600)}`);
        });
      if (r > 0) paintSamples.push(Number(hr() - t)); // the first warms the server's caches
      await page.close();
    }

    // Append → page: the open page at the end of the timeline, following it.
    const page = await context.newPage();
    await page.goto(`${server.url}/dashboard#/session/${SESSION}`);
    await page.waitForSelector('[data-connection="live"]');
    await page.waitForSelector(".timeline li.row:not(.loading)");
    await page.locator("section.timeline").evaluate((el) => {
      el.scrollTop = el.scrollHeight;
    });
    await page.waitForFunction((n) => [...document.querySelectorAll(".timeline .seq")].some((e) => e.textContent === `#${n}`), lastSeq);
    const appendSamples = [];
    const appends = scaled(300, 30);
    for (let i = 0; i < appends + 10; i++) {
      const text = `appended ${i}`;
      const seen = page.waitForFunction(
        (want) => [...document.querySelectorAll(".timeline li.row .summary")].some((e) => e.textContent?.includes(want)),
        `"${text}"`,
        { polling: 2, timeout: 10_000 },
      );
      const t = hr();
      await api(server, "POST", `/v1/sessions/${SESSION}/events`, { type: "note:added", actor: "agent", data: { text } });
      await seen;
      if (i >= 10) appendSamples.push(Number(hr() - t)); // ten to warm up
    }
    await context.close();

    const paint = summarise(paintSamples);
    const append = summarise(appendSamples);
    return {
      rows: [
        { subject: `first paint, session of ${lastSeq.toLocaleString("en-US")} events`, unit: "pages", ...paint },
        { subject: "append (HTTP, committed) → row shown in the open page", unit: "events", ...append },
      ],
      ratios: [ratio("first paint p99", paint.p99Ms, "<=", 1000, "ms"), ratio("append → page p99", append.p99Ms, "<=", 100, "ms")],
      notes: [
        `${reps} fresh pages (after one warm-up); ${appends} appends, one at a time, after ten to warm up`,
        "the page fetches only the rows in view (pages of 200 events); the server answers each page from the journal",
      ],
    };
  } finally {
    await browser.close();
    server.child.kill("SIGTERM");
    await new Promise((r) => server.child.once("exit", r));
  }
}

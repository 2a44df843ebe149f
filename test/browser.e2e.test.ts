/**
 * The live-variant story end to end: a real Chromium on the demo page served by a real
 * `baton serve`, and agents that are real `baton` CLI processes (`baton poll`, `ack`, `status`).
 * Nothing here sleeps for an event: every wait is on a page state or a process line.
 */
import { existsSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Baton, openBaton } from "../src/index.js";
import { killAll, type LineChild, spawnFixture, waitExit } from "./child-process.js";
import { CLI, cli, tempDir } from "./helpers.js";
import { api, liveSession, loginLink, type Served, serve } from "./server-helpers.js";

const CHROMIUM = "/usr/bin/chromium";
const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--no-first-run",
];

let browser: Browser;
beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium), as .ci/run does`);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
});
afterAll(async () => {
  await browser?.close();
});

/** `baton --root <root> --json ...args`, parsed. */
function baton(root: string, ...args: string[]): any {
  const r = cli(["--root", root, "--json", ...args]);
  const out = r.json();
  if (r.code !== 0 && !out.error) throw new Error(`baton ${args.join(" ")} exited ${r.code}: ${r.stdout}${r.stderr}`);
  return { ...out, exitCode: r.code };
}

/** What a fresh agent process sees: `baton status` from a new process. */
function freshStatus(root: string): any {
  return baton(root, "status", "--session", "hero").sessions[0];
}

/** A workspace with session `hero` whose variants are written (the user can cycle, tune, accept). */
function variantsReady(root: string): Promise<void> {
  // source_wrapped finishes the generate work (its doneBy), so no work is queued.
  return liveSession(root, [
    { type: "generate", actor: "browser", data: { prompt: "bolder" } },
    { type: "source_wrapped", actor: "agent", data: { file: "src/Hero.html" } },
    { type: "variants_written", actor: "agent", data: { count: 3, expected: 3 } },
  ]);
}

interface Env {
  root: string;
  lib: Baton;
  server: Served;
  context: BrowserContext;
  agents: LineChild[];
}

async function withEnv(setup: (root: string) => Promise<void>, fn: (env: Env) => Promise<void>, serveArgs: string[] = []): Promise<void> {
  const root = tempDir();
  await setup(root);
  const server = await serve(root, serveArgs);
  const context = await browser.newContext();
  const lib = await openBaton({ root });
  const env: Env = { root, lib, server, context, agents: [] };
  try {
    await fn(env);
  } finally {
    await context.close();
    await killAll(env.agents);
    await env.server.stop();
    await lib.close();
  }
}

async function openPage(env: Env, session = "hero"): Promise<Page> {
  const page = await env.context.newPage();
  page.on("pageerror", (err) => console.error(`page error: ${err.message}`));
  const link = new URL(await loginLink(env.server));
  await page.goto(`${env.server.url}/?session=${session}${link.hash}`);
  await ready(page);
  return page;
}

async function ready(page: Page): Promise<void> {
  await page.waitForSelector('body[data-ready="true"]', { timeout: 15_000 });
  await connection(page, "connected");
}

function connection(page: Page, state: string, timeout = 15_000) {
  return page.waitForSelector(`#conn[data-state="${state}"]`, { timeout });
}

function pending(page: Page, n: number, timeout = 15_000) {
  return page.waitForSelector(`#pending[data-count="${n}"]`, { state: "attached", timeout });
}

function phase(page: Page, p: string, timeout = 15_000) {
  return page.waitForFunction((want) => document.getElementById("phase")?.textContent === want, p, { timeout });
}

async function slide(page: Page, id: "hue" | "density", value: number): Promise<void> {
  await page.locator(`#${id}`).evaluate((el, v) => {
    (el as HTMLInputElement).value = String(v);
    el.dispatchEvent(new Event("input", { bubbles: true }));
  }, value);
}

/** Wait until every checkpoint/event the page sent is confirmed. */
async function settled(page: Page): Promise<void> {
  await page.waitForFunction(() => {
    const c = (globalThis as any).batonDemo;
    return c && c.state.pending === 0 && document.body.dataset.dirty === undefined;
  });
}

/** An agent process that polls through the real CLI and then works until killed. */
function agent(env: Env, ...pollArgs: string[]): LineChild {
  const a = spawnFixture("agent-poll.mjs", [CLI, env.root, ...pollArgs]);
  env.agents.push(a);
  return a;
}

async function leaseOf(a: LineChild): Promise<any> {
  const line = await a.waitForLine((l) => l.startsWith("{"), 20_000, "the poll result");
  await a.waitForLine((l) => l === "working", 5_000, "working");
  return JSON.parse(line);
}

/** The session's status, read in this process (the test's own view; agents use the CLI). */
async function statusOf(env: Env): Promise<any> {
  return (await env.lib.sessions.status({ sessionId: "hero" })).sessions[0];
}

async function journal(env: Env): Promise<any[]> {
  return (await env.lib.events.list("hero", { afterSeq: 0, limit: 1_000 })).events;
}

describe("live variants in a real browser", () => {
  it("Generate while no agent polls; a later `baton poll` receives it and the agent completes it", async () => {
    await withEnv(
      (root) => liveSession(root),
      async (env) => {
        const page = await openPage(env);
        await page.click("#generate");
        await phase(page, "generating");
        await pending(page, 0);
        expect((await statusOf(env)).nextAction.action).toBe("write_variants");

        const polled = baton(env.root, "poll", "--timeout", "5000");
        expect(polled).toMatchObject({ via: "server", lease: { attempt: 1, item: { kind: "generate", sessionId: "hero" } } });
        expect(polled.lease.item.event.data).toMatchObject({ prompt: "Make the hero section bolder", expected: 3 });
        const acked = baton(env.root, "ack", polled.lease.leaseId, "--result", '{"type":"source_wrapped","data":{"file":"src/Hero.html"}}');
        expect(acked).toMatchObject({ duplicate: false, result: { phase: "source_wrapped" } });
        await env.lib.events.append("hero", { type: "variants_written", actor: "agent", data: { count: 3, expected: 3 } });

        // The page learns it over SSE, without a reload.
        await phase(page, "variants_written");
        const s = await statusOf(env);
        expect(s.phase).toBe("variants_written");
        expect(s.pendingWork).toEqual([]);
        expect(baton(env.root, "poll", "--timeout", "0").lease, "nothing left to do").toBeNull();
      },
    );
  });

  it("The printed link logs in once with a code; the server's token never reaches the page", async () => {
    await withEnv(variantsReady, async (env) => {
      // `baton serve` printed a demo link: a login code, not the token.
      expect(env.server.pageUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#login=[A-Za-z0-9_-]{16,}$/);
      expect(env.server.pageUrl).not.toContain(env.server.token);
      const page = await env.context.newPage();
      await page.goto(`${env.server.pageUrl.replace("/#", "/?session=hero#")}`);
      await ready(page);
      expect(page.url()).not.toContain("login");
      const kept = await page.evaluate(() => JSON.stringify({ ...localStorage, ...sessionStorage, url: location.href }));
      expect(kept).not.toContain(env.server.token);
      expect(kept).toContain("bs2.");
      // The code was spent: a fresh browser given the same link is refused and told what to do.
      const other = await page.context().browser()?.newContext();
      if (!other) throw new Error("no browser");
      try {
        const again = await other.newPage();
        await again.goto(`${env.server.pageUrl.replace("/#", "/?session=hero#")}`);
        await again.waitForFunction(() => /baton dashboard --demo/.test(document.getElementById("message")?.textContent ?? ""));
        expect(await again.textContent("#message")).toContain("already used");
      } finally {
        await other.close();
      }
    });
  });

  it("Change params, reload the page: status reports the same param values", async () => {
    await withEnv(variantsReady, async (env) => {
      const page = await openPage(env);
      await page.click("#next-variant");
      await slide(page, "hue", 42);
      await slide(page, "density", 3);
      await settled(page);
      // The login code left the address bar (and so the history) as the page loaded.
      expect(page.url()).not.toContain("login");
      await page.reload();
      await ready(page);
      expect(page.url()).not.toContain("login");
      expect(await page.inputValue("#hue")).toBe("42");
      expect(await page.inputValue("#density")).toBe("3");
      expect(await page.textContent("#variant")).toBe("v2");
      const s = await statusOf(env);
      expect(s.context).toMatchObject({ variantId: "v2", paramValues: { hue: 42, density: 3 } });
      expect(s.phase).toBe("cycling");
    });
  });

  it("Accept; the agent process is killed; a fresh agent's status says run_accept_cleanup with the variant id and params", async () => {
    await withEnv(variantsReady, async (env) => {
      const page = await openPage(env);
      const a = agent(env, "--timeout", "30000", "--kinds", "accept");
      await page.click("#next-variant");
      await page.click("#next-variant");
      await slide(page, "hue", 120);
      await settled(page);
      await page.click("#accept");
      await phase(page, "accept_pending");
      const got = await leaseOf(a);
      expect(got).toMatchObject({ via: "server", lease: { item: { kind: "accept" } } });
      expect(got.lease.item.event.data).toEqual({ variantId: "v3", paramValues: { hue: 120, density: 2 } });
      a.proc.kill("SIGKILL");
      expect((await waitExit(a, 5_000)).signal).toBe("SIGKILL");

      const fresh = freshStatus(env.root);
      expect(fresh.nextAction.action).toBe("run_accept_cleanup");
      expect(fresh.nextAction.reason).toContain("v3");
      expect(fresh.nextAction.reason).toContain('"hue":120');
      expect(fresh.context).toMatchObject({ variantId: "v3", paramValues: { hue: 120, density: 2 } });
      expect(await page.isDisabled("#accept"), "the page does not offer a second accept").toBe(true);
    });
  });

  it("The server restarts with a generate queued; the resumed server still delivers it", async () => {
    await withEnv(
      (root) => liveSession(root),
      async (env) => {
        const page = await openPage(env);
        await page.click("#generate");
        await pending(page, 0);
        const port = env.server.port;
        expect((await env.server.stop("SIGTERM")).code).toBe(0);
        await connection(page, "reconnecting");

        env.server = await serve(env.root);
        expect(env.server.port, "the restarted server reuses the workspace's port").toBe(port);
        await connection(page, "connected");
        const polled = baton(env.root, "poll", "--timeout", "5000");
        expect(polled).toMatchObject({ via: "server", lease: { item: { kind: "generate", seq: 2 } } });
      },
    );
  });

  it("An agent leases an event through the real `baton poll` and dies before acking; it is redelivered after the lease expires; the eventual ack is idempotent", async () => {
    await withEnv(
      (root) => liveSession(root),
      async (env) => {
        const page = await openPage(env);
        await page.click("#generate");
        await pending(page, 0);
        const a = agent(env, "--timeout", "10000", "--lease-ms", "700");
        const first = (await leaseOf(a)).lease;
        expect(first).toMatchObject({ attempt: 1, item: { kind: "generate" } });
        a.proc.kill("SIGKILL");
        await waitExit(a, 5_000);

        const again = baton(env.root, "poll", "--timeout", "10000").lease;
        expect(again.item.itemId, "the same work item comes back").toBe(first.item.itemId);
        expect(again.attempt).toBe(2);
        expect(again.leaseId).not.toBe(first.leaseId);
        expect(Date.parse(again.expiresAt)).toBeGreaterThan(Date.parse(first.expiresAt));

        const result = '{"type":"source_wrapped","data":{"file":"src/Hero.html"}}';
        const ack1 = baton(env.root, "ack", again.leaseId, "--result", result);
        expect(ack1).toMatchObject({ duplicate: false, exitCode: 0 });
        const ack2 = baton(env.root, "ack", again.leaseId, "--result", result);
        expect(ack2).toMatchObject({ duplicate: true, exitCode: 0 });
        const late = baton(env.root, "ack", first.leaseId, "--result", result);
        expect(late.exitCode, "the dead agent's lease no longer acks").toBe(3);
        expect(late.error.code).toBe("lease_lost");

        await phase(page, "source_wrapped");
        expect((await journal(env)).filter((e) => e.type === "source_wrapped")).toHaveLength(1);
        expect((await statusOf(env)).pendingWork).toEqual([]);
      },
    );
  });

  it("A checkpoint from a stale tab after accept does not regress; a duplicate accept and a late discard do not corrupt anything", async () => {
    await withEnv(variantsReady, async (env) => {
      const old = await openPage(env);
      const current = await openPage(env); // opened later: a newer owner epoch
      await slide(current, "hue", 300);
      await settled(current);
      await slide(old, "hue", 10);
      await settled(old);
      expect((await statusOf(env)).context.paramValues, "the older tab's checkpoint is stale").toEqual({ hue: 300, density: 2 });

      await current.click("#accept");
      await phase(current, "accept_pending");
      await phase(old, "accept_pending");
      const acceptId = (await journal(env)).find((e) => e.type === "accept").id;

      const replies = await old.evaluate(async (id) => {
        const c = (globalThis as any).batonDemo;
        const r = (p: Promise<any>): Promise<any> =>
          p.then(
            (x) => ({ outcome: x.outcome, duplicate: x.duplicate }),
            (e) => ({ error: e.code }),
          );
        return {
          checkpoint: await r(c.checkpoint({ variantId: "v1", paramValues: { hue: 10, density: 1 } })),
          sameAccept: await r(c.send("accept", { variantId: "v1", paramValues: { hue: 300, density: 2 } }, { id })),
          otherAccept: await r(c.send("accept", { variantId: "v2", paramValues: { hue: 10, density: 1 } })),
          discard: await r(c.send("discard", {})),
        };
      }, acceptId);
      expect(replies.checkpoint.outcome).toMatch(/^(stale|fenced)$/);
      expect(replies.sameAccept).toEqual({ outcome: "moved", duplicate: true });
      expect(replies.otherAccept).toMatchObject({ outcome: "fenced", duplicate: false });
      expect(replies.discard).toMatchObject({ outcome: "fenced", duplicate: false });

      const s = await statusOf(env);
      expect(s.phase).toBe("accept_pending");
      expect(s.context).toMatchObject({ variantId: "v1", paramValues: { hue: 300, density: 2 } });
      expect(s.nextAction.action).toBe("run_accept_cleanup");
      expect(
        s.pendingWork.map((w: any) => w.kind),
        "one accept to do, no discard",
      ).toEqual(["accept"]);
      const polled = baton(env.root, "poll", "--timeout", "0").lease;
      expect(polled.item.event.id).toBe(acceptId);
    });
  });

  it("Accept while the server is down: the page shows it pending and delivers it after reconnect", async () => {
    await withEnv(variantsReady, async (env) => {
      const page = await openPage(env);
      await page.click("#next-variant");
      await settled(page);
      await env.server.stop("SIGTERM");
      await connection(page, "reconnecting");
      await page.click("#accept");
      await pending(page, 1);
      expect(await page.textContent("#pending")).toBe("1 pending confirmation");
      expect(await page.textContent("#message")).toContain("waiting for the server");
      expect((await statusOf(env)).phase, "the accept has not reached the journal").toBe("cycling");

      env.server = await serve(env.root);
      await pending(page, 0);
      await connection(page, "connected");
      await phase(page, "accept_pending");
      const s = await statusOf(env);
      expect(s).toMatchObject({ phase: "accept_pending", context: { variantId: "v2" } });
      expect(s.nextAction.action).toBe("run_accept_cleanup");
      expect((await journal(env)).filter((e) => e.type === "accept")).toHaveLength(1);
    });
  });

  it("an unconfirmed event survives a reload and is re-sent with the same id", async () => {
    await withEnv(variantsReady, async (env) => {
      const page = await openPage(env);
      // A refusal re-sending cannot fix is final: rejected with the server's code, not kept.
      const refused = await page.evaluate(() =>
        (globalThis as any).batonDemo.send("accepted", {}).then(
          () => "sent",
          (e: any) => `${e.name}:${e.code}:${e.status}`,
        ),
      );
      expect(refused).toBe("BatonClientError:invalid_transition:409");
      await pending(page, 0);
      // The server never sees the POST: as if the connection dropped before it arrived.
      await page.route("**/v1/sessions/hero/events", (route) => route.abort("connectionreset"));
      await page.click("#discard");
      await pending(page, 1);
      const [kept] = await page.evaluate(() => (globalThis as any).batonDemo.pendingEvents());
      expect(kept).toMatchObject({ type: "discard", actor: "browser" });
      // Leave the page (its retries stop with it), let requests through, and come back.
      await page.goto("about:blank");
      await page.unroute("**/v1/sessions/hero/events");
      await page.goBack();
      await ready(page);
      await pending(page, 0);
      await phase(page, "discard_pending");
      const discards = (await journal(env)).filter((e) => e.type === "discard");
      expect(discards.map((e) => e.id)).toEqual([kept.id]);
      expect((await api(env.server, "GET", "/v1/sessions/hero")).json().status.nextAction.action).toBe("restore_discard");
    });
  });

  it("a page on another origin allowed with --allow-origin uses the client with single-use stream tickets", async () => {
    // The project's own dev server, on another port: it embeds the client from baton's server.
    let baton = { url: "", token: "" };
    const dev = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(`<!doctype html><script type="module">
        import { connect } from "${baton.url}/browser.js";
        const c = connect({ url: "${baton.url}", token: "${baton.token}", sessionId: "hero" });
        globalThis.seen = [];
        c.subscribe((e) => globalThis.seen.push(e.type));
        globalThis.conn = c;
      </script>`);
    });
    await new Promise<void>((resolve) => dev.listen(0, "127.0.0.1", resolve));
    const devOrigin = `http://localhost:${(dev.address() as AddressInfo).port}`;
    try {
      await withEnv(
        (root) => liveSession(root),
        async (env) => {
          baton = { url: env.server.url, token: env.server.token };
          const page = await env.context.newPage();
          await page.goto(`${devOrigin}/`);
          await page.waitForFunction(() => (globalThis as any).conn?.state.connection === "connected");
          const sent = await page.evaluate(() => (globalThis as any).conn.send("generate", { prompt: "from the dev server" }));
          expect(sent).toMatchObject({ seq: 2, duplicate: false, phase: "generating" });
          await page.waitForFunction(() => (globalThis as any).seen.includes("generate"));
          expect((await statusOf(env)).context.prompt).toBe("from the dev server");
        },
        ["--allow-origin", devOrigin],
      );
    } finally {
      await new Promise((resolve) => dev.close(resolve));
    }
  });
});

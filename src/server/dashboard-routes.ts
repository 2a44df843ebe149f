/**
 * The dashboard's routes (docs/http-api.md, "The dashboard"): its page and assets, the
 * one-time login, and the read-only views it needs beyond the general API.
 *
 * Login. `baton dashboard` (holding the token from `.baton/server.json`) asks for a one-time
 * login code and prints `/dashboard#login=<code>`. The page trades the code, once, for a browser
 * session (browser-credentials.ts), never for the token. The fragment never reaches a server or
 * a log, and the code is spent on first use and expires within minutes, so the link left in the
 * terminal or the browser's history opens nothing later. The page keeps the session in its
 * origin's localStorage and sends it as a bearer header; streams open with single-use tickets.
 * No cookie is set: a browser would send it to every port on 127.0.0.1.
 */
import { randomBytes } from "node:crypto";
import type { HttpBindings } from "@hono/node-server";
import type { Context, Hono } from "hono";
import { streamSSE } from "hono/streaming";
import type { Baton } from "../api.js";
import { LEDGER_STATUSES, type LedgerStatus } from "../core/ledger/nodes.js";
import { BatonError, badInput } from "../errors.js";
import { peerUid } from "../platform/peer-uid.js";
import type { SessionOverview } from "../services/session/overview.js";
import { BROWSER_LOGIN_MS, issueBrowserSession, verifyBrowserSession } from "./browser-credentials.js";
import { bearerToken } from "./security.js";
import { lastEventId, SSE_KEEPALIVE_MS, SSE_RETRY_MS, streamJournal } from "./sse.js";

type Env = { Bindings: HttpBindings };

export type DashboardAsset = "dashboard.html" | "dashboard.js" | "dashboard.js.map";

export interface DashboardOptions {
  baton: Baton;
  /** The server's token: the key browser sessions are signed with; never sent to a page. */
  token: string;
  port: number;
  shutdown: AbortSignal;
  asset: (name: DashboardAsset) => string | undefined;
  /** The server's own origins (security.ts `allowedOrigins`): only its page may log in. */
  origins: ReadonlySet<string>;
  now?: () => number;
}

/** A login code is good for this long, and once. */
export const LOGIN_CODE_TTL_MS = 5 * 60_000;
/** Outstanding codes kept at most (the oldest are dropped first). */
export const MAX_LOGIN_CODES = 64;

/**
 * How long the workspace stream holds a store change that named no session before sending it:
 * the journal watcher reads which session grew within milliseconds of the same signal.
 */
const OTHER_HOLD_MS = 150;

/** The paths the token check lets through: the login trades a code for a browser session. */
export const DASHBOARD_OPEN_PATHS: ReadonlySet<string> = new Set(["/v1/dashboard/login"]);

/** One row of the sessions view (services/session/overview.ts). */
export type DashboardSession = SessionOverview;

export function registerDashboard(app: Hono<Env>, o: DashboardOptions, readJson: (c: Context<Env>) => Promise<Record<string, unknown>>) {
  const { baton } = o;
  const now = o.now ?? Date.now;
  const codes = new Map<string, number>(); // code → expiry (ms)

  // `{"page": "demo"}` links the code to the demo page (`/#login=`); the default is the dashboard.
  // Either page logs the whole origin in: both keep the browser session in its localStorage.
  app.post("/v1/dashboard/login-codes", async (c) => {
    const page = (await readJson(c)).page ?? "dashboard";
    if (page !== "dashboard" && page !== "demo") throw badInput('"page" must be "dashboard" or "demo"');
    const t = now();
    for (const [code, exp] of codes) if (exp <= t) codes.delete(code);
    while (codes.size >= MAX_LOGIN_CODES) codes.delete(codes.keys().next().value as string);
    const code = randomBytes(24).toString("base64url");
    codes.set(code, t + LOGIN_CODE_TTL_MS);
    c.header("Cache-Control", "no-store");
    return c.json(
      { code, expiresAt: new Date(t + LOGIN_CODE_TTL_MS).toISOString(), path: `${page === "demo" ? "/" : "/dashboard"}#login=${code}` },
      201,
    );
  });

  app.post("/v1/dashboard/login", async (c) => {
    // Only the dashboard page served here trades a code: a browser sends Origin with every POST,
    // so one without it (a script) or from another origin (even one `--allow-origin` admits to
    // the API, or a same-site page on another loopback port) is refused before the code is
    // looked at, and the code stays good for the page it was meant for.
    const origin = c.req.header("origin");
    if (origin === undefined || !o.origins.has(origin.toLowerCase()))
      throw new BatonError(
        "forbidden",
        "log in from a page this server serves: open the link `baton dashboard` (or `baton serve`) printed",
      );
    // And only a process of the user this server runs as: another local user's process can
    // send the page's Origin, but its socket is listed under its own uid.
    const socket = c.env?.incoming?.socket;
    if (socket?.remoteAddress !== undefined && socket.remotePort !== undefined && process.platform === "linux" && process.getuid) {
      const uid = peerUid({
        clientAddress: socket.remoteAddress,
        clientPort: socket.remotePort,
        serverAddress: socket.localAddress ?? "127.0.0.1",
        serverPort: socket.localPort ?? o.port,
      });
      if (uid !== process.getuid())
        throw new BatonError(
          "forbidden",
          uid === undefined
            ? "cannot tell which user opened this connection, so the login is refused; open the link `baton dashboard` (or `baton serve`) printed again"
            : "this login comes from another user's process on this machine; only the user who runs the server may log in",
        );
    }
    const b = await readJson(c);
    const code = b.code;
    if (typeof code !== "string" || code === "") throw badInput('"code" must be the login code from `baton dashboard`');
    const exp = codes.get(code);
    codes.delete(code);
    if (exp === undefined || exp <= now()) {
      throw new BatonError(
        "unauthorized",
        "this login link was already used or has expired; run `baton dashboard` (`baton dashboard --demo` for the demo page) for a new one",
      );
    }
    c.header("Cache-Control", "no-store"); // the answer holds a credential
    return c.json(issueBrowserSession(o.token, o.port, now()));
  });

  // A fresh browser session for one that is still good: an open page renews its own hourly, so
  // it stays logged in while open, for at most BROWSER_LOGIN_MS after its login (a copied
  // session renewed by a thief ends then too).
  app.post("/v1/dashboard/session", async (c) => {
    await readJson(c);
    const t = now();
    const given = bearerToken(c.req.header("authorization"));
    const held = given === undefined ? undefined : verifyBrowserSession(o.token, o.port, given, t);
    if (!held) throw new BatonError("unauthorized", "renew a dashboard's browser session with that session; the server's token needs none");
    if (t - held.born > BROWSER_LOGIN_MS)
      throw new BatonError("unauthorized", "this login is more than 7 days old; run `baton dashboard` for a new link");
    c.header("Cache-Control", "no-store");
    return c.json(issueBrowserSession(o.token, o.port, t, held.born));
  });

  // Every session, active first, most recent activity first within each group.
  // With `?id=<a>&id=<b>`, only those sessions' rows (unknown ids left out), at most 100.
  app.get("/v1/dashboard/sessions", async (c) => {
    const ids = c.req.queries("id");
    if (ids && (ids.length > 100 || ids.some((id) => id === ""))) throw badInput('give at most 100 non-empty "id"s');
    return c.json({ sessions: await baton.sessions.overview(ids) });
  });

  // The whole workspace's changes as SSE: one `change` message per session that grew, so the
  // page refreshes what it shows. A GET that only reads: a stream ticket opens it.
  app.get("/v1/dashboard/stream", (c) => {
    c.header("X-Accel-Buffering", "no");
    return streamSSE(c, async (stream) => {
      // Coalesced per session: a burst of appends is one message with the newest seq.
      const pending = new Map<string, number>();
      let wake: (() => void) | undefined;
      const poke = () => {
        const w = wake;
        wake = undefined;
        w?.();
      };
      // Leases, runs' liveness and locks change the store without growing a journal: those come
      // as one `change` without a session (the backend's change signal, which the journal
      // watcher already listens to, so this costs no extra polling). The signal also fires for
      // every append, before the watcher has read which session grew, so it is held for
      // OTHER_HOLD_MS and dropped when a session's change comes meanwhile: an append is one
      // message naming its session, not also a "something changed" that reloads everything.
      let otherSince: number | undefined;
      const unwatch = baton.events.watch((change) => {
        pending.set(change.sessionId, Math.max(change.lastSeq, pending.get(change.sessionId) ?? 0));
        otherSince = undefined;
        poke();
      });
      const unlisten = baton.events.onStoreChange(() => {
        otherSince ??= Date.now();
        poke();
      });
      stream.onAbort(poke);
      const stop = () => {
        if (!stream.aborted) stream.abort();
        poke();
      };
      o.shutdown.addEventListener("abort", stop, { once: true });
      try {
        await stream.writeSSE({ event: "ready", data: "{}", retry: SSE_RETRY_MS });
        while (!stream.aborted && !o.shutdown.aborted) {
          if (pending.size > 0) {
            const batch = [...pending];
            pending.clear();
            for (const [sessionId, lastSeq] of batch)
              await stream.writeSSE({ event: "change", data: JSON.stringify({ sessionId, lastSeq }) });
            continue;
          }
          const held = otherSince === undefined ? undefined : otherSince + OTHER_HOLD_MS - Date.now();
          if (held !== undefined && held <= 0) {
            otherSince = undefined;
            await stream.writeSSE({ event: "change", data: JSON.stringify({ sessionId: null }) });
            continue;
          }
          const timedOut = await new Promise<boolean>((resolve) => {
            const timer = setTimeout(() => {
              wake = undefined;
              resolve(held === undefined);
            }, held ?? SSE_KEEPALIVE_MS);
            wake = () => {
              clearTimeout(timer);
              resolve(false);
            };
          });
          if (timedOut && !stream.aborted) await stream.write(": keep-alive\n\n");
        }
      } finally {
        unwatch();
        unlisten();
        o.shutdown.removeEventListener("abort", stop);
      }
    });
  });

  // The session's trajectory ledger: nodes are redacted and bounded before they are stored, so
  // this returns what the store holds. The newest `limit` (default 2,000, at most 10,000).
  app.get("/v1/sessions/:id/ledger", async (c) => {
    const id = c.req.param("id");
    const limit = Math.min(Math.max(wholeQuery(c.req.query("limit"), "limit") ?? 2_000, 1), 10_000);
    await baton.sessions.read(id); // 404 for an unknown session
    const status = c.req.query("status") || undefined;
    if (status !== undefined && !LEDGER_STATUSES.includes(status as LedgerStatus))
      throw badInput(`query "status" must be one of ${LEDGER_STATUSES.join(", ")}`);
    const tool = c.req.query("tool") || undefined;
    const nodes = await baton.ledger.list(id, { limit, ...(status ? { status: status as LedgerStatus } : {}), ...(tool ? { tool } : {}) });
    return c.json({ nodes });
  });

  // The session's journal as the general stream sends it (`/v1/sessions/:id/stream`), plus
  // `event: versions` when its ledger, checkpoints or work change, also without a journal event.
  app.get("/v1/dashboard/sessions/:id/stream", async (c) => {
    const id = c.req.param("id");
    const after = lastEventId(c.req.header("last-event-id")) ?? wholeQuery(c.req.query("after"), "after") ?? 0;
    await baton.sessions.read(id); // 404 before the stream starts
    return streamJournal(c, baton, id, after, o.shutdown, () => baton.sessions.versions(id));
  });

  // STATE.md as the agent reads it (rendered now, not written to disk).
  app.get("/v1/dashboard/sessions/:id/state", async (c) => {
    return c.json({ markdown: await baton.sessions.stateMarkdown(c.req.param("id")) });
  });

  // A session's events matching a type and/or actor, in seq order after `after`, in bounded
  // slices (`scannedTo`, `done`: services/session/overview.ts).
  app.get("/v1/dashboard/sessions/:id/events", async (c) => {
    const id = c.req.param("id");
    const after = wholeQuery(c.req.query("after"), "after") ?? 0;
    const limit = Math.min(Math.max(wholeQuery(c.req.query("limit"), "limit") ?? 200, 1), 1_000);
    const type = c.req.query("type") || undefined;
    const actor = c.req.query("actor") || undefined;
    await baton.sessions.read(id); // 404 for an unknown session
    return c.json(await baton.events.scan(id, { after, limit, ...(type ? { type } : {}), ...(actor ? { actor } : {}) }));
  });

  const page = (name: DashboardAsset, type: string) => (c: Context<Env>) => {
    const text = o.asset(name);
    if (text === undefined) throw new BatonError("not_found", `${name} is not built; run \`npm run build\``);
    c.header("Content-Type", type);
    c.header("Cache-Control", "no-store");
    c.header("X-Content-Type-Options", "nosniff");
    if (name === "dashboard.html") {
      c.header(
        "Content-Security-Policy",
        "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
      );
      c.header("Referrer-Policy", "no-referrer");
    }
    return c.body(text);
  };
  app.get("/dashboard", page("dashboard.html", "text/html; charset=utf-8"));
  app.get("/dashboard.js", page("dashboard.js", "text/javascript; charset=utf-8"));
  app.get("/dashboard.js.map", page("dashboard.js.map", "application/json"));
}

function wholeQuery(v: string | undefined, key: string): number | undefined {
  if (v === undefined || v === "") return undefined;
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(Number(v))) throw badInput(`query "${key}" must be a whole number ≥ 0`);
  return Number(v);
}

/**
 * The routes of the local server (`/v1/...` JSON API and the demo page), on Hono; agent hooks
 * (`POST /v1/hooks/...`) are answered before Hono, on node:http (hook-route.ts). Requests
 * reach this only after the guard in server.ts has checked Host, Origin, content type and
 * declared length. Every route calls the `Baton` object; none touches storage directly.
 * The API is documented in docs/http-api.md.
 */
import type { HttpBindings } from "@hono/node-server";
import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { Baton } from "../api.js";
import { SESSION_ID } from "../core/canonical.js";
import type { EventInput, JsonObject } from "../core/types.js";
import { BatonError, badInput } from "../errors.js";
import { browserSessionValid, StreamTickets } from "./browser-credentials.js";
import { registerCheckpointRoutes } from "./checkpoint-routes.js";
import { DASHBOARD_OPEN_PATHS, type DashboardAsset, registerDashboard } from "./dashboard-routes.js";
import { registerHealthRoutes } from "./health-routes.js";
import { jsonObjectBody } from "./hook-route.js";
import { errorResponse } from "./http-errors.js";
import { registerLessonRoutes } from "./lesson-routes.js";
import { allowedOrigins, bearerToken, tokenMatches } from "./security.js";
import { challengeProof } from "./server-file.js";
import { registerSpiralRoutes } from "./spiral-routes.js";
import { lastEventId, streamJournal } from "./sse.js";
import { registerWorkRoutes } from "./work-routes.js";

export interface AppOptions {
  baton: Baton;
  token: string;
  port: number;
  maxBodyBytes: number;
  /** Aborted when the server shuts down: ends long-polls and SSE streams. */
  shutdown: AbortSignal;
  /** Static assets (the demo page and its scripts); undefined when not built. */
  asset: (name: AssetName) => string | undefined;
  /** The clock for credentials' expiry (tests move it). */
  now?: () => number;
}

type Env = { Bindings: HttpBindings };

export type AssetName = "demo.html" | "demo.js" | "browser.js" | "demo.js.map" | "browser.js.map" | DashboardAsset;

/** Long-poll bounds: the default wait, and the longest a client may ask for. */
export const POLL_DEFAULT_MS = 30_000;
export const POLL_MAX_MS = 120_000;

/**
 * The routes a stream ticket opens (browser-credentials.ts): the GET streams, which EventSource
 * opens without headers. A session may be named "stream": only these exact shapes.
 */
const STREAM_ROUTES = /^\/v1\/(sessions\/[^/]+\/stream|dashboard\/stream|dashboard\/sessions\/[^/]+\/stream)$/;

export function buildApp(o: AppOptions): Hono<Env> {
  const { baton } = o;
  const app = new Hono<Env>();
  const now = o.now ?? Date.now;
  const tickets = new StreamTickets(now);

  app.onError((err, c) => {
    // A client that went away mid-body (a chunked one is read by bodyLimit, before readJson): its failure.
    const gone = (err as NodeJS.ErrnoException).code === "ECONNRESET" || (err as Error).message === "aborted";
    const { status, body } = errorResponse(gone ? badInput("the request body could not be read (the client went away)") : err);
    if (status === 500) console.error(`baton serve: ${c.req.method} ${c.req.path} failed:`, err);
    return c.json(body, status as 500);
  });
  app.notFound((c) => c.json(errorResponse(new BatonError("not_found", `no route ${c.req.method} ${c.req.path}`)).body, 404));

  // Bodies over the limit without a Content-Length (chunked) are cut off here.
  app.use(
    "/v1/*",
    bodyLimit({
      maxSize: o.maxBodyBytes,
      onError: (c) =>
        c.json(errorResponse(new BatonError("payload_too_large", `the request body is limited to ${o.maxBodyBytes} bytes`)).body, 413),
    }),
  );

  // Every /v1 answer: never cached, never sniffed as another type, never framed.
  app.use("/v1/*", async (c, next) => {
    await next();
    if (!c.res.headers.has("Cache-Control")) c.header("Cache-Control", "no-store"); // streams say no-cache themselves
    c.header("X-Content-Type-Options", "nosniff");
    c.header("X-Frame-Options", "DENY");
  });

  // Every /v1 route but health and the login needs a credential: the server's token or a
  // dashboard's browser session as a bearer header, or on a stream a single-use ticket. Never a
  // cookie: browsers send a host's cookies to every port on it.
  app.use("/v1/*", async (c, next) => {
    if (c.req.path === "/v1/health" || DASHBOARD_OPEN_PATHS.has(c.req.path)) return next();
    const given = bearerToken(c.req.header("authorization"));
    const ok =
      given !== undefined
        ? tokenMatches(o.token, given) || browserSessionValid(o.token, o.port, given, now())
        : c.req.method === "GET" && STREAM_ROUTES.test(c.req.path) && tickets.spend(c.req.query("ticket"));
    if (!ok) {
      throw new BatonError(
        "unauthorized",
        given === undefined && c.req.query("ticket") !== undefined
          ? "this stream ticket was already used or has expired; ask `POST /v1/stream-tickets` for a new one"
          : "send the server's token as `Authorization: Bearer <token>` (see .baton/server.json)",
      );
    }
    return next();
  });

  // Open, and reveals nothing; with `?challenge=<hex>` it proves this server holds the token
  // (clients check that before they send it: server/client.ts).
  app.get("/v1/health", (c) => {
    const challenge = c.req.query("challenge");
    if (challenge === undefined) return c.json({ ok: true });
    if (!/^[0-9a-f]{32,128}$/.test(challenge)) throw badInput("challenge must be 32-128 lowercase hex characters");
    return c.json({ ok: true, proof: challengeProof(o.token, o.port, challenge) });
  });

  // A single-use ticket that opens one stream (EventSource cannot send a bearer header).
  app.post("/v1/stream-tickets", async (c) => {
    await readJson(c);
    return c.json(tickets.issue(), 201);
  });

  app.post("/v1/sessions", async (c) => {
    const b = await readJson(c);
    const snap = await baton.sessions.start({
      flow: str(b, "flow", true) as string,
      ...opt("id", str(b, "id")),
      ...opt("title", str(b, "title")),
      ...opt("deadline", str(b, "deadline")),
      actor: str(b, "actor") ?? "user",
    });
    return c.json({ sessionId: snap.sessionId, flow: snap.flow, phase: snap.phase, lastSeq: snap.lastSeq }, 201);
  });

  app.get("/v1/sessions/:id", async (c) => {
    const id = c.req.param("id");
    const view = await baton.sessions.read(id);
    const status = (await baton.sessions.status({ sessionId: id })).sessions[0];
    return c.json({ snapshot: view.snapshot, status, diagnostics: view.readDiagnostics });
  });

  // Answers only once the event is committed (fsynced under the default durability).
  app.post("/v1/sessions/:id/events", async (c) => {
    const b = await readJson(c);
    const input: EventInput = { type: str(b, "type", true) as string };
    if (b.id !== undefined) input.id = str(b, "id");
    if (b.actor !== undefined) input.actor = str(b, "actor");
    if (b.data !== undefined) input.data = b.data as JsonObject;
    if (b.revision !== undefined) input.revision = b.revision as number;
    const r = await baton.events.append(c.req.param("id"), input);
    const e = r.event;
    return c.json({ seq: e.seq, id: e.id, duplicate: r.duplicate, outcome: r.outcome, phase: r.phase, event: e }, r.duplicate ? 200 : 201);
  });

  app.get("/v1/sessions/:id/events", async (c) => {
    const afterSeq = intQuery(c, "after", 0) ?? 0;
    const limit = Math.min(intQuery(c, "limit", 1) ?? 500, 1_000);
    return c.json(await baton.events.list(c.req.param("id"), { afterSeq, limit }));
  });

  app.get("/v1/sessions/:id/stream", async (c) => {
    const id = c.req.param("id");
    const after = lastEventId(c.req.header("last-event-id")) ?? intQuery(c, "after", 0) ?? 0;
    await baton.sessions.read(id); // 404 before the stream starts
    return streamJournal(c, baton, id, after, o.shutdown);
  });

  app.get("/v1/status", async (c) => {
    const sessionId = c.req.query("session");
    const all = c.req.query("all");
    return c.json(await baton.sessions.status({ all: all === "1" || all === "true", ...opt("sessionId", sessionId) }));
  });

  // Long-poll for work: leases the best ready item as soon as there is one. A lease changes
  // state, so this is a POST with a bearer credential: a GET never leases (a page could make the
  // browser send one with an <img>).
  app.get("/v1/poll", () => {
    throw badInput("polling leases work, so it is `POST /v1/poll` with `Authorization: Bearer <token>` and a JSON body");
  });
  app.post("/v1/poll", async (c) => {
    const b = await readJson(c);
    const timeoutMs = Math.min(num(b, "timeout") ?? POLL_DEFAULT_MS, POLL_MAX_MS);
    const leaseMs = num(b, "leaseMs");
    if (leaseMs === 0) throw badInput('"leaseMs" must be a whole number ≥ 1');
    const kinds = b.kinds === undefined ? undefined : strings(b, "kinds");
    const session = str(b, "session");
    const owner = str(b, "owner") ?? "http";
    if (owner === "") throw badInput('"owner" is empty: name the poller, or leave it out');
    // A session id the journal could never hold names no work: said, not answered "no lease".
    if (session !== undefined && !SESSION_ID.test(session)) throw badInput(`"session" ${JSON.stringify(session)} is not a session id`);
    const both = linkedSignal(c.req.raw.signal, o.shutdown);
    let lease: Awaited<ReturnType<typeof baton.work.waitFor>>;
    try {
      lease = await baton.work.waitFor(owner, {
        timeoutMs,
        signal: both.signal,
        ...opt("sessionId", session),
        ...opt("kinds", kinds?.length ? kinds : undefined),
        ...opt("leaseMs", leaseMs),
      });
    } finally {
      both.done();
    }
    if (lease && c.req.raw.signal.aborted) {
      // The poller left while we leased: hand the item straight back rather than wait out the lease.
      await baton.work.nack(lease.leaseId, { reason: "the poller disconnected before the lease was delivered" }).catch(() => undefined);
      return c.body(null, 204);
    }
    return c.json({ lease: lease ?? null });
  });

  app.post("/v1/leases/:leaseId/ack", async (c) => {
    const b = await readJson(c);
    const result: { type?: string; data?: JsonObject; actor?: string } = {};
    if (b.type !== undefined) result.type = str(b, "type");
    if (b.actor !== undefined) result.actor = str(b, "actor");
    if (b.data !== undefined) result.data = obj(b, "data");
    return c.json(await baton.work.ack(c.req.param("leaseId"), Object.keys(result).length ? result : undefined));
  });

  app.post("/v1/leases/:leaseId/nack", async (c) => {
    const b = await readJson(c);
    const delayMs = num(b, "delayMs");
    const reason = str(b, "reason");
    return c.json(await baton.work.nack(c.req.param("leaseId"), { ...opt("delayMs", delayMs), ...opt("reason", reason) }));
  });

  app.post("/v1/leases/:leaseId/heartbeat", async (c) => {
    const b = await readJson(c);
    return c.json(await baton.work.heartbeat(c.req.param("leaseId"), opt("leaseMs", num(b, "leaseMs"))));
  });

  registerCheckpointRoutes(app, baton, readJson);
  registerSpiralRoutes(app, baton, readJson);
  registerHealthRoutes(app, baton, readJson);
  registerLessonRoutes(app, baton, readJson);
  registerWorkRoutes(app, baton, readJson);
  registerDashboard(
    app,
    { baton, token: o.token, port: o.port, shutdown: o.shutdown, asset: o.asset, origins: allowedOrigins(o.port), now },
    readJson,
  );

  // The demo page and its scripts: no secrets in them (the token comes from the URL fragment).
  const page = (name: AssetName, type: string) => (c: Context<Env>) => {
    const text = o.asset(name);
    if (text === undefined) throw new BatonError("not_found", `${name} is not built; run \`npm run build\``);
    c.header("Content-Type", type);
    c.header("Cache-Control", "no-store");
    c.header("X-Content-Type-Options", "nosniff");
    if (name === "demo.html") {
      c.header("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'");
      c.header("Referrer-Policy", "no-referrer");
    }
    return c.body(text);
  };
  app.get("/", page("demo.html", "text/html; charset=utf-8"));
  app.get("/demo", page("demo.html", "text/html; charset=utf-8"));
  app.get("/demo.js", page("demo.js", "text/javascript; charset=utf-8"));
  app.get("/browser.js", page("browser.js", "text/javascript; charset=utf-8"));
  app.get("/demo.js.map", page("demo.js.map", "application/json"));
  app.get("/browser.js.map", page("browser.js.map", "application/json"));
  app.get("/favicon.ico", (c) => c.body(null, 204));

  return app;
}

/** The request body as a JSON object; an empty body is `{}`. */
async function readJson(c: Context<Env>): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await c.req.text();
  } catch (err) {
    // The client went away mid-body (ECONNRESET, "aborted"): its failure, not the server's.
    throw badInput(`the request body could not be read (${(err as Error).message})`);
  }
  return jsonObjectBody(text);
}

function str(b: Record<string, unknown>, key: string, required = false): string | undefined {
  const v = b[key];
  if (v === undefined && !required) return undefined;
  if (typeof v !== "string") throw badInput(`"${key}" must be a string`);
  return v;
}

function num(b: Record<string, unknown>, key: string): number | undefined {
  const v = b[key];
  if (v === undefined) return undefined;
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0) throw badInput(`"${key}" must be a whole number ≥ 0`);
  return v;
}

function strings(b: Record<string, unknown>, key: string): string[] {
  const v = b[key];
  if (!Array.isArray(v) || v.length > 100 || v.some((k) => typeof k !== "string" || k.trim() === ""))
    throw badInput(`"${key}" must be an array of at most 100 non-empty strings`);
  return v as string[];
}

function obj(b: Record<string, unknown>, key: string): JsonObject {
  const v = b[key];
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw badInput(`"${key}" must be a JSON object`);
  return v as JsonObject;
}

function intQuery(c: Context<Env>, key: string, min: number): number | undefined {
  const v = c.req.query(key);
  if (v === undefined || v === "") return undefined;
  if (!/^\d+$/.test(v) || Number(v) < min || !Number.isSafeInteger(Number(v)))
    throw badInput(`query "${key}" must be a whole number ≥ ${min}`);
  return Number(v);
}

/** `{key: value}` when value is defined, else `{}`: for optional fields under exactOptionalPropertyTypes-style APIs. */
function opt<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

/**
 * A signal aborted when the request or the server's shutdown is, whose listeners go with the
 * request: on Node 20, AbortSignal.any with the long-lived shutdown signal kept a listener and a
 * WeakRef per call (the server's heap grew with every poll).
 */
export function linkedSignal(request: AbortSignal, shutdown: AbortSignal): { signal: AbortSignal; done(): void } {
  const c = new AbortController();
  const abort = () => c.abort();
  if (request.aborted || shutdown.aborted) c.abort();
  request.addEventListener("abort", abort, { once: true });
  shutdown.addEventListener("abort", abort, { once: true });
  return {
    signal: c.signal,
    done: () => {
      request.removeEventListener("abort", abort);
      shutdown.removeEventListener("abort", abort);
    },
  };
}

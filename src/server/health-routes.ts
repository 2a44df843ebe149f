/**
 * `baton doctor` over HTTP for the dashboard's health view (docs/http-api.md, "Health"): the
 * findings with their evidence and fix, and the safe repairs (only what the system would do on
 * its own, e.g. returning expired leases to the queue) as one POST with the bearer token.
 */
import type { HttpBindings } from "@hono/node-server";
import type { Context, Hono } from "hono";
import type { Baton } from "../api.js";
import { badInput } from "../errors.js";

type Env = { Bindings: HttpBindings };

export function registerHealthRoutes(app: Hono<Env>, baton: Baton, readJson: (c: Context<Env>) => Promise<Record<string, unknown>>) {
  app.get("/v1/doctor", async (c) => {
    const sessionId = c.req.query("session") || undefined;
    return c.json(await baton.health.doctor({ ...(sessionId ? { sessionId } : {}) }));
  });

  app.post("/v1/doctor/fix", async (c) => {
    const b = await readJson(c);
    if (b.session !== undefined && (typeof b.session !== "string" || b.session === "")) throw badInput('"session" must be a session id');
    return c.json(await baton.health.doctor({ fix: true, ...(typeof b.session === "string" ? { sessionId: b.session } : {}) }));
  });
}

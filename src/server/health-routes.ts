/**
 * `baton doctor` over HTTP for the dashboard's health view (docs/http-api.md, "Health"): the
 * findings with their evidence and fix, and the safe repairs (only what the system would do on
 * its own, e.g. returning expired leases to the queue) as a POST with the bearer token: every
 * one, or only those of the finding codes named (each finding's own button in the page).
 */
import type { HttpBindings } from "@hono/node-server";
import type { Context, Hono } from "hono";
import type { Baton } from "../api.js";
import { BatonError, badInput } from "../errors.js";

type Env = { Bindings: HttpBindings };

export function registerHealthRoutes(app: Hono<Env>, baton: Baton, readJson: (c: Context<Env>) => Promise<Record<string, unknown>>) {
  app.get("/v1/doctor", async (c) => {
    const sessionId = c.req.query("session") || undefined;
    return c.json(await baton.health.doctor({ ...(sessionId ? { sessionId } : {}) }));
  });

  app.post("/v1/doctor/fix", async (c) => {
    const b = await readJson(c);
    if (b.session !== undefined && (typeof b.session !== "string" || b.session === "")) throw badInput('"session" must be a session id');
    const codes = b.codes;
    if (codes !== undefined && (!Array.isArray(codes) || codes.length === 0 || codes.some((x) => typeof x !== "string" || x === "")))
      throw badInput('"codes" must be a non-empty list of finding codes, e.g. ["lease_expired"]');
    const report = await baton.health.doctor({
      fix: (codes as string[] | undefined) ?? true,
      ...(typeof b.session === "string" ? { sessionId: b.session } : {}),
    });
    // A page asking for one finding's fix read the findings a while ago: when none of the codes
    // it names is found now (fixed by someone else, or gone on its own), nothing ran. Say so.
    if (codes !== undefined && report.repairs.length === 0) {
      throw new BatonError(
        "conflict",
        `no ${(codes as string[]).join(" or ")} finding${b.session ? ` in session ${b.session}` : ""} needs fixing now: it was fixed or went away since the page read it; nothing was changed`,
        { codes: codes as string[] },
      );
    }
    return c.json(report);
  });
}

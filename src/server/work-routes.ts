/**
 * A person acting on a session's work over HTTP (the dashboard's pending work): read it (open
 * items with their leases, and dead-lettered items no event handled), give someone's leased work
 * back to the queue, and deliver dead-lettered work again. Writes are POSTs with the bearer
 * token like every write; each names exactly what the page showed (the lease, the item), so a
 * page acting on work that moved meanwhile is refused (`409 lease_lost` / `409 conflict`) and
 * nothing changes. The same operations as `baton lease release` and `baton retry`.
 */
import type { HttpBindings } from "@hono/node-server";
import type { Context, Hono } from "hono";
import type { Baton } from "../api.js";
import { badInput } from "../errors.js";

type Env = { Bindings: HttpBindings };

export function registerWorkRoutes(app: Hono<Env>, baton: Baton, readJson: (c: Context<Env>) => Promise<Record<string, unknown>>) {
  app.get("/v1/sessions/:id/work", async (c) => {
    const id = c.req.param("id");
    await baton.sessions.read(id); // 404 for an unknown session
    const [pending, dead] = await Promise.all([baton.work.pending(id), baton.work.dead(id)]);
    return c.json({ pending, dead });
  });

  app.post("/v1/leases/:leaseId/release", async (c) => {
    const b = await readJson(c);
    if (b.reason !== undefined && typeof b.reason !== "string") throw badInput('"reason" must be text');
    return c.json(await baton.work.release(c.req.param("leaseId"), b.reason ? { reason: b.reason as string } : {}));
  });

  app.post("/v1/work/:itemId/retry", async (c) => {
    await readJson(c);
    return c.json(await baton.work.retry(c.req.param("itemId")));
  });
}

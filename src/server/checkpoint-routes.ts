/**
 * Checkpoints and rollback over HTTP, for the dashboard (docs/http-api.md, "Checkpoints and
 * rollback"). Reads are GETs; a rollback and a pin change state, so they are POSTs that need the
 * bearer credential (the server's token, or a dashboard's browser session). Every route calls the `Baton` object, so a
 * rollback here is exactly `baton rollback`: a safety checkpoint first, journaled as
 * `rollback:started` / `rollback:applied`, and undone by rolling back to that safety checkpoint.
 */
import type { HttpBindings } from "@hono/node-server";
import type { Context, Hono } from "hono";
import type { Baton } from "../api.js";
import { badInput } from "../errors.js";

type Env = { Bindings: HttpBindings };

/** Who a rollback over HTTP is journaled as: the dashboard's user, or an agent using the API. */
const ACTORS: readonly unknown[] = ["user", "agent"];

export function registerCheckpointRoutes(app: Hono<Env>, baton: Baton, readJson: (c: Context<Env>) => Promise<Record<string, unknown>>) {
  // Newest first, pruned ones included (marked `prunedAt`), so a page can say why one is gone.
  app.get("/v1/sessions/:id/checkpoints", async (c) => {
    const list = await baton.checkpoints.list(c.req.param("id"), { includePruned: true });
    return c.json({ checkpoints: [...list].reverse() });
  });

  // What rolling back to a checkpoint would do to each file, with its unified diff (current →
  // restored); binary and large files are named, not dumped. Changes nothing.
  app.get("/v1/sessions/:id/checkpoints/:cp/preview", async (c) => {
    const r = await baton.checkpoints.rollback(c.req.param("id"), { to: c.req.param("cp"), dryRun: true });
    return c.json({ target: r.target, plan: r.plan, changes: r.changes, warnings: r.warnings });
  });

  // What changed between two checkpoints of the session, per file (only paths both recorded are
  // compared; see services/time-travel/checkpoint-diff.ts). Changes nothing.
  app.get("/v1/sessions/:id/checkpoints/:cp/diff", async (c) => {
    const to = c.req.query("to");
    if (!to) throw badInput('query "to" must name the checkpoint to compare with');
    const r = await baton.checkpoints.diff(c.req.param("cp"), to);
    if (r.from.sessionId !== c.req.param("id")) throw badInput(`checkpoint ${r.from.id} is not one of session ${c.req.param("id")}'s`);
    return c.json(r);
  });

  // Roll back to `to` (a checkpoint id), by the user unless `actor` says otherwise. A checkpoint
  // pruned since the page showed it is `checkpoint_pruned` and nothing changes. With `plan` (the
  // preview's, which the page sends for the rollback the user confirmed), a plan that differs
  // now (an agent wrote a file meanwhile) is `409 conflict` and nothing changes.
  app.post("/v1/sessions/:id/rollback", async (c) => {
    const b = await readJson(c);
    const to = b.to;
    if (typeof to !== "string" || to === "") throw badInput('"to" must be the id of the checkpoint to restore');
    const files = b.files;
    if (files !== undefined && (!Array.isArray(files) || files.some((f) => typeof f !== "string" || f === "")))
      throw badInput('"files" must be a list of workspace paths');
    if (b.actor !== undefined && !ACTORS.includes(b.actor as string)) throw badInput(`"actor" must be one of ${ACTORS.join(", ")}`);
    const actor = (b.actor as string | undefined) ?? "user";
    if (b.plan !== undefined && (typeof b.plan !== "string" || b.plan === "")) throw badInput('"plan" must be the preview\'s plan');
    const r = await baton.checkpoints.rollback(c.req.param("id"), {
      to,
      actor,
      ...(files ? { files: files as string[] } : {}),
      ...(typeof b.plan === "string" ? { expectPlan: b.plan } : {}),
    });
    const { diff: _diff, ...rest } = r;
    return c.json(rest);
  });

  app.post("/v1/checkpoints/:cp/pin", async (c) => {
    const b = await readJson(c);
    if (typeof b.pinned !== "boolean") throw badInput('"pinned" must be true or false');
    return c.json(await baton.checkpoints.pin(c.req.param("cp"), b.pinned));
  });
}

/**
 * The user's answer to a spiral pause, over HTTP (docs/http-api.md, "Spiral pause"): unpause,
 * roll back to the proposed checkpoint then unpause, or stay paused with a note for the agent.
 * A POST with the bearer token like every write. Each choice first checks the pause the page
 * showed is still the session's (paused, same proposed checkpoint): a page acting on a state
 * that changed meanwhile gets `409 conflict` and nothing changes.
 */
import type { HttpBindings } from "@hono/node-server";
import type { Context, Hono } from "hono";
import type { Baton } from "../baton.js";
import { BatonError, badInput } from "../errors.js";

type Env = { Bindings: HttpBindings };

const NOTE_MAX = 2_000;

export function registerSpiralRoutes(app: Hono<Env>, baton: Baton, readJson: (c: Context<Env>) => Promise<Record<string, unknown>>) {
  app.post("/v1/sessions/:id/spiral", async (c) => {
    const id = c.req.param("id");
    const b = await readJson(c);
    const action = b.action;
    if (action !== "unpause" && action !== "rollback_unpause" && action !== "note")
      throw badInput('"action" must be "unpause", "rollback_unpause" or "note"');
    const note = b.note === undefined ? undefined : typeof b.note === "string" ? b.note.trim() : null;
    if (note === null || (note !== undefined && note.length > NOTE_MAX))
      throw badInput(`"note" must be text of at most ${NOTE_MAX} characters`);
    if (action === "note" && !note) throw badInput('staying paused needs a "note" for the agent');

    const sp = (await baton.snapshot(id)).facets.spiral;
    if (!sp?.paused)
      throw new BatonError("conflict", `session ${id} is not paused any more (it was unpaused meanwhile); nothing was changed`);
    if (b.detectedAt !== undefined && b.detectedAt !== sp.detectedAt)
      throw new BatonError(
        "conflict",
        `session ${id} was paused again since this page loaded; nothing was changed: look at the new pause first`,
      );

    if (action === "note") {
      const r = await baton.addDecision(
        id,
        {
          decision: "Stay paused until the user says otherwise",
          reason: note as string,
          context: `spiral pause (${sp.pattern ?? "spiral"})`,
        },
        "user",
      );
      return c.json({ paused: true, noteSeq: r.event.seq });
    }
    let rollback: { target: string; safety?: string; restored: number; removed: number } | undefined;
    if (action === "rollback_unpause") {
      const to = b.checkpoint;
      if (typeof to !== "string" || to === "") throw badInput('"checkpoint" must be the proposed checkpoint the page showed');
      if (to !== sp.proposedCheckpoint)
        throw new BatonError("conflict", `the proposed rollback point is no longer ${to}; nothing was changed: look at the pause again`);
      const r = await baton.rollback(id, { to, actor: "user" });
      rollback = { target: r.target.id, restored: r.restored, removed: r.removed, ...(r.safety ? { safety: r.safety } : {}) };
    }
    const reason =
      note || (rollback ? `the user rolled back to ${rollback.target} from the dashboard` : "the user unpaused from the dashboard");
    const u = await baton.unpause(id, { reason, actor: "user" });
    return c.json({ paused: false, unpaused: u.unpaused, ...(rollback ? { rollback } : {}) });
  });
}

/**
 * The user's answer to a spiral pause, over HTTP (docs/http-api.md, "Spiral pause"): unpause,
 * roll back to the proposed checkpoint then unpause, or stay paused with a note for the agent.
 * A POST with the bearer token like every write. The route checks the shape of the request; the
 * orchestration (check the pause, roll back, unpause with the pause re-checked inside the
 * write) is services/agents/spiral-answer.ts: a page acting on a pause that changed meanwhile gets
 * `409 conflict`.
 */
import type { HttpBindings } from "@hono/node-server";
import type { Context, Hono } from "hono";
import type { Baton } from "../api.js";
import { SPIRAL_CHOICES, SPIRAL_NOTE_MAX, type SpiralChoice } from "../core/spiral/choices.js";
import { badInput } from "../errors.js";

type Env = { Bindings: HttpBindings };

export function registerSpiralRoutes(app: Hono<Env>, baton: Baton, readJson: (c: Context<Env>) => Promise<Record<string, unknown>>) {
  app.post("/v1/sessions/:id/spiral", async (c) => {
    const b = await readJson(c);
    if (!SPIRAL_CHOICES.includes(b.action as SpiralChoice)) throw badInput(`"action" must be one of ${SPIRAL_CHOICES.join(", ")}`);
    if (b.note !== undefined && typeof b.note !== "string") throw badInput(`"note" must be text of at most ${SPIRAL_NOTE_MAX} characters`);
    if (typeof b.detectedAt !== "string" || b.detectedAt === "")
      throw badInput('"detectedAt" must be the pause\'s detectedAt as the page showed it');
    if (b.checkpoint !== undefined && typeof b.checkpoint !== "string") throw badInput('"checkpoint" must be a checkpoint id');
    return c.json(
      await baton.turns.answerSpiralPause(c.req.param("id"), {
        action: b.action as SpiralChoice,
        detectedAt: b.detectedAt,
        ...(b.note !== undefined ? { note: b.note as string } : {}),
        ...(b.checkpoint !== undefined ? { checkpoint: b.checkpoint as string } : {}),
      }),
    );
  });
}

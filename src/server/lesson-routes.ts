/**
 * Lessons over HTTP for the dashboard (docs/http-api.md, "Lessons"). LESSONS.md stays the
 * truth: the list carries each lesson's `version` (its block in the file), and an edit or delete
 * must name the version it was made from, so a lesson changed by hand (or by another page)
 * meanwhile is refused with `409 conflict` and never silently overwritten.
 */
import type { HttpBindings } from "@hono/node-server";
import type { Context, Hono } from "hono";
import type { Baton } from "../api.js";
import { badInput } from "../errors.js";

type Env = { Bindings: HttpBindings };

export function registerLessonRoutes(app: Hono<Env>, baton: Baton, readJson: (c: Context<Env>) => Promise<Record<string, unknown>>) {
  app.get("/v1/lessons", async (c) => {
    const all = c.req.query("all");
    // One read of LESSONS.md gives both the lessons and their versions (see LessonService.list).
    const list = await baton.lessons.list({ all: all === "1" || all === "true", versions: true });
    return c.json({ ...list, lessons: list.lessons.map((l) => ({ ...l, version: l.version ?? null })) });
  });

  app.post("/v1/lessons/:id", async (c) => {
    const b = await readJson(c);
    const version = versionOf(b);
    const change: { text?: string; pinned?: boolean } = {};
    if (b.text !== undefined) {
      if (typeof b.text !== "string") throw badInput('"text" must be a string');
      change.text = b.text;
    }
    if (b.pinned !== undefined) {
      if (typeof b.pinned !== "boolean") throw badInput('"pinned" must be true or false');
      change.pinned = b.pinned;
    }
    if (change.text === undefined && change.pinned === undefined) throw badInput('give "text" and/or "pinned"');
    return c.json(await baton.lessons.edit(c.req.param("id"), version, change));
  });

  app.post("/v1/lessons/:id/delete", async (c) => {
    const b = await readJson(c);
    const r = await baton.lessons.remove(c.req.param("id"), { version: versionOf(b) });
    return c.json({ id: r.id });
  });
}

function versionOf(b: Record<string, unknown>): string {
  if (typeof b.version !== "string" || b.version === "") throw badInput('"version" must be the lesson\'s version from GET /v1/lessons');
  return b.version;
}

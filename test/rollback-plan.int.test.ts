/**
 * A rollback confirmed from a preview applies exactly the previewed plan: the preview's `plan`
 * goes back with the confirmation, and a plan that differs by then (an agent wrote a file
 * between the preview and the confirmation) is refused with `409 conflict`, changing nothing.
 * Over HTTP, `actor` is one of a short list.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openBaton } from "../src/index.js";
import { tempDir } from "./helpers.js";
import { api, serve } from "./server-helpers.js";

async function setUp(root: string): Promise<string> {
  const b = await openBaton({ root });
  try {
    await b.sessions.start({ flow: "live-variant", id: "hero" });
    writeFileSync(join(root, "a.txt"), "good\n");
    const cp = (await b.checkpoints.create("hero", { all: true })).checkpoint.id;
    writeFileSync(join(root, "a.txt"), "bad\n");
    return cp;
  } finally {
    await b.close();
  }
}

describe("rollback tied to its preview", () => {
  it("refuses a confirmation whose plan changed since the preview and changes nothing; the new preview's plan applies", async () => {
    const root = tempDir();
    const cp = await setUp(root);
    const s = await serve(root);
    try {
      const preview = (await api(s, "GET", `/v1/sessions/hero/checkpoints/${cp}/preview`)).json();
      expect(preview.plan).toMatch(/^[0-9a-f]{32}$/);
      // The same state previews the same plan.
      expect((await api(s, "GET", `/v1/sessions/hero/checkpoints/${cp}/preview`)).json().plan).toBe(preview.plan);
      // An agent writes the file after the user saw the preview.
      writeFileSync(join(root, "a.txt"), "the agent's newer work\n");
      const events = async () => (await api(s, "GET", "/v1/sessions/hero")).json().snapshot.lastSeq;
      const before = await events();
      const refused = await api(s, "POST", "/v1/sessions/hero/rollback", { to: cp, plan: preview.plan });
      expect(refused.status).toBe(409);
      expect(refused.json().error).toMatchObject({ code: "conflict", message: expect.stringContaining("preview it again") });
      expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("the agent's newer work\n");
      expect(await events()).toBe(before);
      expect((await api(s, "GET", "/v1/sessions/hero/checkpoints")).json().checkpoints).toHaveLength(1); // no safety checkpoint

      const again = (await api(s, "GET", `/v1/sessions/hero/checkpoints/${cp}/preview`)).json();
      expect(again.plan).not.toBe(preview.plan);
      const done = await api(s, "POST", "/v1/sessions/hero/rollback", { to: cp, plan: again.plan });
      expect(done.status).toBe(200);
      expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("good\n");
    } finally {
      await s.stop();
    }
  });

  it("journals the rollback as the user, and refuses an actor outside the list", async () => {
    const root = tempDir();
    const cp = await setUp(root);
    const s = await serve(root);
    try {
      const bad = await api(s, "POST", "/v1/sessions/hero/rollback", { to: cp, actor: "root" });
      expect(bad.status).toBe(400);
      expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("bad\n");
      expect((await api(s, "POST", "/v1/sessions/hero/rollback", { to: cp })).status).toBe(200);
      const b = await openBaton({ root });
      try {
        const { events } = await b.events.list("hero", { afterSeq: 0 });
        expect(events.filter((e) => e.type.startsWith("rollback:")).map((e) => [e.type, e.actor])).toEqual([
          ["rollback:started", "user"],
          ["rollback:applied", "user"],
        ]);
      } finally {
        await b.close();
      }
    } finally {
      await s.stop();
    }
  });
});

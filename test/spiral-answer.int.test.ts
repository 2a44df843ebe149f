/**
 * The user's answer to a spiral pause (services/agents/spiral-answer.ts, behind `POST
 * /v1/sessions/:id/spiral`): it names the pause it was made on, and a pause cleared or renewed
 * meanwhile, even during the rollback, is a conflict re-checked inside the write, so the answer
 * never clears a pause the user has not seen.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { servicesOf } from "../src/compose.js";
import { type Baton, openBaton } from "../src/index.js";
import { answerSpiralPause } from "../src/services/agents/spiral-answer.js";
import { failUntilPaused, tempDir } from "./helpers.js";

const pause = (b: Baton, cp: string) => failUntilPaused(b, "loop", { checkpointId: cp });

async function spiralling(fn: (b: Baton, root: string, cp: string, detectedAt: string) => Promise<void>) {
  const root = tempDir();
  writeFileSync(join(root, "app.ts"), "good\n");
  const b = await openBaton({ root });
  try {
    await b.sessions.start({ flow: "task", id: "loop" });
    const cp = (await b.checkpoints.create("loop", { files: ["app.ts"], toolName: "Edit" })).checkpoint.id;
    writeFileSync(join(root, "app.ts"), "broken\n");
    await fn(b, root, cp, await pause(b, cp));
  } finally {
    await b.close();
  }
}

const cleared = async (b: Baton) => (await b.events.list("loop")).events.filter((e) => e.type === "spiral:cleared").length;

describe("answering a spiral pause", () => {
  it("does not clear a pause renewed while the files were rolled back, and says the files were", async () => {
    await spiralling(async (b, root, cp, detectedAt) => {
      let renewed = "";
      const deps = {
        journal: servicesOf(b).journal,
        rollback: async (id: string, to: string) => {
          const r = await b.checkpoints.rollback(id, { to, actor: "user" });
          // Meanwhile the pause is cleared elsewhere and the agent spirals again.
          await b.turns.unpause(id, { reason: "cleared by the CLI" });
          await new Promise((r) => setTimeout(r, 5));
          renewed = await pause(b, cp);
          return r;
        },
      };
      await expect(answerSpiralPause(deps, "loop", { action: "rollback_unpause", detectedAt, checkpoint: cp })).rejects.toMatchObject({
        code: "conflict",
        message: expect.stringMatching(/paused again.*rolled back to .* but the session was not unpaused/),
      });
      expect(readFileSync(join(root, "app.ts"), "utf8")).toBe("good\n");
      const sp = (await b.sessions.snapshot("loop")).facets.spiral;
      expect([sp?.paused, sp?.detectedAt]).toEqual([true, renewed]);
      expect(await cleared(b)).toBe(1); // the CLI's only
      // On the pause shown now, the answer goes through.
      await b.turns.answerSpiralPause("loop", { action: "unpause", detectedAt: renewed });
      expect((await b.sessions.snapshot("loop")).facets.spiral?.paused).toBe(false);
    });
  });

  it("needs detectedAt, and refuses an answer to a pause that is gone, changing nothing", async () => {
    await spiralling(async (b, _root, _cp, detectedAt) => {
      await expect(b.turns.answerSpiralPause("loop", { action: "unpause" } as never)).rejects.toMatchObject({ code: "bad_input" });
      await expect(b.turns.answerSpiralPause("loop", { action: "unpause", detectedAt: "2020-01-01T00:00:00.000Z" })).rejects.toMatchObject({
        code: "conflict",
      });
      expect(await cleared(b)).toBe(0);
      const r = await b.turns.answerSpiralPause("loop", { action: "note", detectedAt, note: "Wait for the schema fix." });
      expect(r).toMatchObject({ paused: true });
      await b.turns.answerSpiralPause("loop", { action: "unpause", detectedAt });
      await expect(b.turns.answerSpiralPause("loop", { action: "unpause", detectedAt })).rejects.toMatchObject({
        code: "conflict",
        message: expect.stringContaining("session loop is not paused any more (it was unpaused meanwhile); nothing was changed"),
      });
      expect(await cleared(b)).toBe(1);
      // A session never paused is not said to have been unpaused.
      await b.sessions.start({ flow: "task", id: "calm" });
      await expect(b.turns.answerSpiralPause("calm", { action: "unpause", detectedAt })).rejects.toMatchObject({
        code: "conflict",
        message: "session calm is not paused; nothing was changed",
      });
    });
  });
  it("answers an agent lane's pause: its rollback stays in that lane, and only that lane is unpaused", async () => {
    const root = tempDir();
    writeFileSync(join(root, "app.ts"), "good\n");
    writeFileSync(join(root, "other.ts"), "theirs\n");
    const b = await openBaton({ root });
    try {
      await b.sessions.start({ flow: "task", id: "loop" });
      const lane = "claude:looping-1";
      await b.runs.start("loop", { agent: "Claude Code", runId: "r-1", lane });
      await b.runs.start("loop", { agent: "Codex", runId: "r-2", lane: "codex:other-1" });
      const cp = (await b.checkpoints.create("loop", { files: ["app.ts"], toolName: "Edit", lane })).checkpoint.id;
      writeFileSync(join(root, "app.ts"), "broken\n");
      // The other agent writes its own file after the looping agent's checkpoint.
      await b.checkpoints.create("loop", { files: ["other.ts"], toolName: "Edit", lane: "codex:other-1" });
      writeFileSync(join(root, "other.ts"), "theirs, changed\n");
      const detectedAt = await failUntilPaused(b, "loop", { checkpointId: cp, lane });
      const st = (await b.sessions.status({ sessionId: "loop" })).sessions[0];
      expect(st?.spiral).toMatchObject({ paused: true, lane, proposedCheckpoint: cp, detectedAt });
      const r = await b.turns.answerSpiralPause("loop", { action: "rollback_unpause", detectedAt, checkpoint: cp });
      expect(r).toMatchObject({ paused: false, unpaused: true, rollback: { target: cp } });
      expect(readFileSync(join(root, "app.ts"), "utf8")).toBe("good\n");
      expect(readFileSync(join(root, "other.ts"), "utf8"), "the other agent's file is not its to take back").toBe("theirs, changed\n");
      const snap = await b.sessions.snapshot("loop");
      expect(snap.facets.lanes?.[lane]?.spiral?.paused).toBe(false);
      const clear = (await b.events.list("loop")).events.filter((e) => e.type === "spiral:cleared");
      expect(clear.map((e) => e.data.lane)).toEqual([lane]);
    } finally {
      await b.close();
    }
  });
});

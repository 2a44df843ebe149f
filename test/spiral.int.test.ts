import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SNAPSHOT_LIMITS } from "../src/core/types.js";
import type { Baton } from "../src/index.js";
import { cleanupDirs, heapAfterGc, tempBaton, writeConfig } from "./helpers.js";

afterAll(() => cleanupDirs());

async function session(fn: (b: Baton, root: string) => Promise<void>): Promise<void> {
  const { baton, root } = await tempBaton({ durability: "relaxed" });
  try {
    await baton.sessions.start({ flow: "task", id: "s1" });
    await baton.events.append("s1", { type: "start" });
    await fn(baton, root);
  } finally {
    await baton.close();
  }
}

const same = { tool: "Edit", argsHash: "patch-1", status: "error" as const };

describe("spiral detector in a session", () => {
  it("pauses on a spiral: the turn and spiral:detected land together, status asks the user, STATE.md shows it", async () => {
    await session(async (b) => {
      const t1 = await b.turns.record("s1", { ...same, checkpointId: "cp-a" });
      const t2 = await b.turns.record("s1", { ...same, checkpointId: "cp-b" });
      expect([t1.detected, t2.detected, t2.spiral.paused]).toEqual([false, false, false]);
      expect((await b.sessions.status()).sessions[0]?.nextAction.action).toBe("continue_task");
      const t3 = await b.turns.record("s1", { ...same, checkpointId: "cp-c" });
      expect(t3.detected).toBe(true);
      expect(t3.spiral).toMatchObject({
        paused: true,
        pattern: "same_signature",
        turns: [t1.turn.seq, t2.turn.seq, t3.turn.seq],
        proposedCheckpoint: "cp-a",
      });
      expect(t3.nextAction?.action).toBe("ask_user");

      // One batch: the detection is the event right after its turn, with the same time.
      const { events } = await b.events.list("s1", { afterSeq: t3.turn.seq - 1 });
      expect(events.map((e) => e.type)).toEqual(["turn:recorded", "spiral:detected"]);
      expect(events[1]?.at).toBe(events[0]?.at);
      expect(events[1]?.data).toMatchObject({ pattern: "same_signature", from: t1.turn.id, proposedCheckpoint: "cp-a" });

      const status = (await b.sessions.status()).sessions[0]!;
      expect(status.nextAction.action).toBe("ask_user");
      expect(status.nextAction.choices?.map((c) => c.command)).toEqual([
        "baton rollback --session s1 --to cp-a && baton resume s1 --unpause",
        "baton resume s1 --unpause",
      ]);
      expect(status.spiral).toMatchObject({ paused: true, pattern: "same_signature" });
      const md = await b.sessions.stateMarkdown("s1");
      expect(md).toContain("## Spiral (paused)");
      expect(md).toContain(`turns (journal seq): ${t1.turn.seq}, ${t2.turn.seq}, ${t3.turn.seq}`);
      expect(md).toContain("checkpoint `cp-a`");

      // More turns while paused are recorded, not judged again.
      const t4 = await b.turns.record("s1", same);
      expect([t4.detected, t4.spiral.paused]).toEqual([false, true]);
      expect((await b.events.list("s1")).events.filter((e) => e.type === "spiral:detected")).toHaveLength(1);
      // Replaying the journal gives the same snapshot.
      expect((await b.sessions.rebuild("s1"))[0]?.repaired).toBe(false);
    });
  });

  it("unpause clears it with spiral:cleared and starts the window over; unpausing again appends nothing", async () => {
    await session(async (b) => {
      for (let i = 0; i < 3; i++) await b.turns.record("s1", same);
      expect((await b.sessions.snapshot("s1")).facets.spiral?.paused).toBe(true);
      const before = (await b.sessions.snapshot("s1")).lastSeq;
      expect(await b.turns.unpause("s1", { reason: "user rolled back" })).toEqual({ unpaused: true, seq: before + 1 });
      const snap = await b.sessions.snapshot("s1");
      expect(snap.facets.spiral).toMatchObject({ paused: false, window: [], turns: 3 });
      expect(snap.facets.spiral?.evidence).toBeUndefined();
      expect((await b.sessions.status()).sessions[0]?.nextAction.action).toBe("continue_task");
      expect((await b.sessions.status()).sessions[0]?.spiral).toBeUndefined();
      expect(await b.turns.unpause("s1")).toEqual({ unpaused: false });
      expect((await b.sessions.snapshot("s1")).lastSeq).toBe(before + 1);
      // The old turns do not count again: two more identical calls are not yet a spiral.
      await b.turns.record("s1", same);
      expect((await b.turns.record("s1", same)).spiral.paused).toBe(false);
      expect((await b.turns.record("s1", same)).detected).toBe(true);
    });
  });

  it("detects file churn from files hashed at record time, proposing the checkpoint before the spiral", async () => {
    await session(async (b, root) => {
      const path = join(root, "app.ts");
      const write = async (text: string, cp: string, n: number) => {
        writeFileSync(path, text);
        return b.turns.record("s1", { tool: "Edit", argsHash: `e${n}`, files: ["app.ts"], checkpointId: cp });
      };
      await write("export const a = 1;\n", "cp-1", 1);
      await write("export const a = 1;\nexport const b = 2;\n", "cp-2", 2);
      // One revert is an approach abandoned, not yet a loop; making the same change again is.
      expect((await write("export const a = 1;\n", "cp-3", 3)).spiral.paused).toBe(false);
      const t = await write("export const a = 1;\nexport const b = 2;\n", "cp-4", 4);
      expect(t.spiral).toMatchObject({ paused: true, pattern: "file_churn", proposedCheckpoint: "cp-2" });
      const turn = (await b.events.list("s1")).events.find((e) => e.id === t.turn.id);
      expect(turn?.data.files).toEqual([{ path: "app.ts", hash: expect.stringMatching(/^[0-9a-f]{64}$/), size: 40 }]);
    });
  });

  it("a file edited on every turn with real progress is not a spiral", async () => {
    await session(async (b, root) => {
      let text = "";
      for (let i = 0; i < 8; i++) {
        text += `export const v${i} = ${i};\n`;
        writeFileSync(join(root, "app.ts"), text);
        const t = await b.turns.record("s1", { tool: "Edit", argsHash: `e${i}`, files: ["app.ts"] });
        expect(t.spiral.paused, `turn ${i}`).toBe(false);
      }
    });
  });

  it("recording progress (progress:set raising completed) resets the detector", async () => {
    await session(async (b) => {
      const failing = { tool: "Bash", argsHash: "test", status: "error" as const, fingerprint: "F1" };
      await b.turns.record("s1", failing);
      await b.turns.record("s1", failing);
      await b.facets.setProgress("s1", { total: 5, completed: 1 });
      expect((await b.sessions.snapshot("s1")).facets.spiral?.window).toEqual([]);
      expect((await b.turns.record("s1", failing)).spiral.paused).toBe(false);
      await b.facets.setProgress("s1", { total: 6 }); // more work is not progress
      await b.turns.record("s1", failing);
      expect((await b.turns.record("s1", failing)).detected).toBe(true);
    });
  });

  it("reads thresholds from .baton/config.json; a bad setting is bad_input naming file and key, and records nothing", async () => {
    await session(async (b, root) => {
      writeConfig(root, { server: { port: 1 }, spiral: { sameFailure: 4 } });
      for (let i = 0; i < 3; i++) expect((await b.turns.record("s1", same)).detected).toBe(false);
      expect((await b.turns.record("s1", same)).detected).toBe(true);
      await b.turns.unpause("s1");
      const seq = (await b.sessions.snapshot("s1")).lastSeq;
      writeConfig(root, { spiral: { sameSignature: 1, enabled: false } });
      await expect(b.turns.record("s1", same)).rejects.toMatchObject({
        code: "bad_input",
        message: expect.stringMatching(/config\.json: spiral\.sameSignature must be 0 \(off\) or a whole number from 2/),
      });
      writeConfig(root, "{oops");
      await expect(b.turns.record("s1", { tool: "Read" })).rejects.toMatchObject({
        code: "bad_input",
        message: expect.stringMatching(/config\.json is not valid JSON/),
      });
      expect((await b.sessions.snapshot("s1")).lastSeq).toBe(seq);
      writeConfig(root, { spiral: { sameSignature: 0, sameFailure: 0 } });
      for (let i = 0; i < 5; i++) expect((await b.turns.record("s1", same)).detected).toBe(false);
    });
  });

  it("a retried turn (same id) is a duplicate and is not judged twice; bad turns change nothing", async () => {
    await session(async (b) => {
      await b.turns.record("s1", same);
      await b.turns.record("s1", same);
      const first = await b.turns.record("s1", { ...same, id: "hook-42" });
      const retry = await b.turns.record("s1", { ...same, id: "hook-42" });
      expect(first.detected).toBe(true);
      expect(retry).toMatchObject({ detected: false, turn: { id: "hook-42", seq: first.turn.seq, duplicate: true } });
      const seq = (await b.sessions.snapshot("s1")).lastSeq;
      await expect(b.turns.record("s1", { tool: "", status: "success" })).rejects.toMatchObject({ code: "bad_input" });
      await expect(b.turns.record("s1", { tool: "Edit", status: "weird" as never })).rejects.toMatchObject({ code: "bad_input" });
      await expect(b.turns.record("s1", { tool: "Edit", files: [{ path: "a", size: -1 }] } as never)).rejects.toMatchObject({
        code: "bad_input",
      });
      expect((await b.sessions.snapshot("s1")).lastSeq).toBe(seq);
    });
  });

  it("`also` appends its events right after the turn and the spiral's, all or none, once on a retry", async () => {
    await session(async (b) => {
      const note = (id: string) => ({ id, type: "resume:updated", actor: "agent", data: { openQuestions: [`after ${id}`] } });
      await b.turns.record("s1", same);
      const plain = await b.turns.record("s1", { ...same, id: "t2", also: [note("t2.more")] });
      expect(plain.detected).toBe(false);
      // The turn that completes the spiral: its detection still says so, with the extra event after it.
      const third = await b.turns.record("s1", { ...same, id: "t3", also: [note("t3.more")] });
      expect(third).toMatchObject({ detected: true, spiral: { paused: true } });
      const types = (await b.events.list("s1", { afterSeq: plain.turn.seq - 1 })).events.map((e) => `${e.type}:${e.id}`);
      expect(types).toEqual([
        "turn:recorded:t2",
        "resume:updated:t2.more",
        "turn:recorded:t3",
        "spiral:detected:t3.spiral",
        "resume:updated:t3.more",
      ]);
      expect((await b.sessions.snapshot("s1")).facets.resume.openQuestions).toEqual(["after t2.more", "after t3.more"]);
      // A retry stores nothing twice and is not judged again.
      const seq = (await b.sessions.snapshot("s1")).lastSeq;
      expect(await b.turns.record("s1", { ...same, id: "t3", also: [note("t3.more")] })).toMatchObject({
        detected: false,
        turn: { duplicate: true },
      });
      expect((await b.sessions.snapshot("s1")).lastSeq).toBe(seq);
      // An event without its id, or one the journal refuses: nothing of the turn is stored.
      for (const also of [
        [{ type: "resume:updated", data: {} }],
        [undefined],
        [{ id: "t5", type: "resume:updated", data: {} }],
        [{ id: "t5.more", type: "spiral:cleared", data: {} }],
        [{ id: "t5.more", type: "turn:recorded", data: { tool: "Edit", status: "success" } }],
      ])
        await expect(b.turns.record("s1", { ...same, id: "t5", also } as never)).rejects.toMatchObject({
          code: "bad_input",
          message: expect.stringContaining("`also`"),
        });
      await expect(
        b.turns.record("s1", {
          ...same,
          id: "t6",
          also: [{ id: "t6.bad", type: "resume:updated", data: { filesModified: [{ path: "../x" }] } }],
        }),
      ).rejects.toMatchObject({ code: "bad_input" });
      expect((await b.sessions.snapshot("s1")).lastSeq).toBe(seq);
    });
  });

  it("keeps memory flat over a 1,000-turn session", async () => {
    const heap = heapAfterGc; // the heap bound below runs in every test run
    await session(async (b) => {
      const sizes: Record<number, { snapshot: number; window: number; heap: number }> = {};
      for (let i = 1; i <= 1_000; i++) {
        // Varied, progressing work, with a spiral every 100 turns that the user clears (four identical calls).
        const spiral = i % 100 >= 50 && i % 100 < 54;
        const r = await b.turns.record("s1", {
          tool: spiral ? "Edit" : ["Edit", "Bash", "Read"][i % 3]!,
          argsHash: spiral ? "stuck" : `args-${i}`,
          status: !spiral && i % 7 === 0 ? "error" : "success",
          ...(!spiral && i % 7 === 0 ? { fingerprint: `F${i}` } : {}),
          files: spiral
            ? [{ path: "src/file-0.ts", hash: "stuck", size: 10 }]
            : Array.from({ length: 40 }, (_, j) => ({ path: `src/file-${j}.ts`, hash: `h${i}-${j}`, size: 1000 + i + j })),
          checkpointId: `cp-${i}`,
        });
        if (r.spiral.paused) await b.turns.unpause("s1");
        if (i === 100 || i === 1_000) {
          const snap = await b.sessions.snapshot("s1");
          sizes[i] = { snapshot: JSON.stringify(snap).length, window: snap.facets.spiral?.window.length ?? -1, heap: heap() };
        }
      }
      const snap = await b.sessions.snapshot("s1");
      expect(snap.facets.spiral?.turns).toBe(1_000);
      expect(sizes[100]!.window).toBe(SNAPSHOT_LIMITS.turns);
      expect(sizes[1_000]!.window).toBe(SNAPSHOT_LIMITS.turns);
      expect(snap.facets.spiral?.window.every((t) => t.files.length <= SNAPSHOT_LIMITS.filesPerTurn)).toBe(true);
      // Ten times the turns: the snapshot grows only by a few digits in its counters.
      expect(sizes[1_000]!.snapshot, JSON.stringify(sizes)).toBeLessThan(sizes[100]!.snapshot * 1.1);
      expect((await b.events.list("s1", { afterSeq: 0, limit: 5_000 })).events.filter((e) => e.type === "spiral:detected").length).toBe(10);
      expect(sizes[1_000]!.heap - sizes[100]!.heap, JSON.stringify(sizes)).toBeLessThan(16 * 1024 * 1024);
    });
  });
});

/**
 * Eight real processes contend for one lock while the test SIGKILLs two holders and SIGSTOPs
 * a third past its ttl. Each holder writes "enter"/"exit" notes to a session under its epoch
 * (the guarded resource). Checked: the guarded writes never interleave (epochs only grow along
 * the journal, one writer per epoch), the holding intervals of holders that released cleanly
 * never overlap, a killed holder's lock is reclaimed with `dead_pid` long before its ttl, and
 * the stopped holder, continued after someone took the lock over, has its write refused with
 * lock_lost.
 */
import { afterAll, describe, expect, it } from "vitest";
import { openBaton } from "../src/index.js";
import { killAll, type LineChild, spawnFixture, waitExit } from "./child-process.js";
import { cleanupDirs, tempDir } from "./helpers.js";

afterAll(() => cleanupDirs());

const WORKERS = 8;
const ROUNDS = 5;
const TTL_MS = 2_500;
const STOP_MS = TTL_MS + 1_000;

type Interval = { epoch: number; t0: number; t1: number };

describe("lock contention with SIGKILL and SIGSTOP", () => {
  it("never lets two holders write under the lock at once, and refuses the stale holder's write", async () => {
    const root = tempDir();
    const setup = await openBaton({ root });
    await setup.sessions.start({ flow: "task", id: "guarded" });
    await setup.close();

    // Roles: w0 is killed while holding (round 1), w1 is stopped while holding (round 2), w2 is killed (round 3).
    const linger: Record<number, [number, number]> = { 0: [1, 60_000], 1: [2, 1_500], 2: [3, 60_000] };
    const children: LineChild[] = [];
    try {
      for (let i = 0; i < WORKERS; i++) {
        const [round, ms] = linger[i] ?? [0, 0];
        const args = [root, "resource", "guarded", `w${i}`, String(ROUNDS), String(TTL_MS), String(round), String(ms)];
        children.push(spawnFixture("lock-contender.mjs", args));
      }
      const [w0, w1, w2] = children as [LineChild, LineChild, LineChild];
      const lingering = (c: LineChild) => c.waitForLine((l) => l.startsWith("lingering"), 45_000, "lingering");

      const kills: number[] = [];
      const killWhenLingering = (c: LineChild) =>
        lingering(c).then((l) => {
          c.proc.kill("SIGKILL");
          kills.push(Number(l.split(" ")[1]));
        });

      // While w1 is stopped, a thief in this process takes the lock over once it expires (so a
      // takeover happens however the workers are scheduled), writes under its epoch and lets
      // go; only then, and not before STOP_MS, is w1 continued.
      let stoppedEpoch = 0;
      const thief: (Interval & { proof: string })[] = [];
      const stopWhenLingering = lingering(w1).then(async (l) => {
        w1.proc.kill("SIGSTOP");
        const stoppedAt = Date.now();
        stoppedEpoch = Number(l.split(" ")[1]);
        const b = await openBaton({ root });
        const g = await b.locks.acquire("resource", { owner: "thief", ttlMs: TTL_MS, waitMs: 30_000 });
        const t0 = Date.now();
        await b.locks.append("resource", g.epoch, "guarded", { type: "note:added", data: { text: `enter ${g.epoch} thief` } });
        await b.locks.append("resource", g.epoch, "guarded", { type: "note:added", data: { text: `exit ${g.epoch} thief` } });
        const t1 = Date.now();
        await b.locks.release("resource", g.epoch);
        await b.close();
        thief.push({ epoch: g.epoch, proof: g.reclaimed?.proof ?? "-", t0, t1 });
        await new Promise((r) => setTimeout(r, Math.max(0, STOP_MS - (Date.now() - stoppedAt))));
        w1.proc.kill("SIGCONT");
      });

      await Promise.all(children.map((c) => c.waitForLine((l) => l === "ready", 30_000, "ready")));
      for (const c of children) c.sendLast("go\n");
      await Promise.all([killWhenLingering(w0), killWhenLingering(w2), stopWhenLingering]);

      const exits = await Promise.all(children.map((c) => waitExit(c, 45_000)));
      children.forEach((c, i) => {
        if (i === 0 || i === 2) expect(exits[i]?.signal, `w${i} was killed`).toBe("SIGKILL");
        else expect(exits[i], `w${i} exits cleanly; stderr: ${c.stderr()}`).toEqual({ code: 0, signal: null });
      });

      // Every acquisition is one epoch: 1..max, each granted once.
      const acquired = [
        ...children.flatMap((c, i) =>
          c.lines
            .filter((l) => l.startsWith("acquired"))
            .map((l) => ({ worker: `w${i}`, epoch: Number(l.split(" ")[1]), proof: l.split(" ")[2] })),
        ),
        ...thief.map((t) => ({ worker: "thief", epoch: t.epoch, proof: t.proof })),
      ];
      const epochs = acquired.map((a) => a.epoch).sort((a, b) => a - b);
      expect(epochs).toEqual(epochs.map((_, i) => i + 1));
      // w0 held once, w2 three times, the other six five times each, plus the thief.
      expect(epochs.length).toBe(1 + 3 + (WORKERS - 2) * ROUNDS + 1);

      // Killed holders were reclaimed on proof of death. A killed holder may have been the last
      // (the others finished first on a busy machine): then the next acquisition is this test's.
      expect(kills).toHaveLength(2);
      for (const k of kills) {
        let next = acquired.find((a) => a.epoch === k + 1);
        if (next === undefined && k === Math.max(...epochs)) {
          const after = await openBaton({ root });
          const g = await after.locks.acquire("resource", { owner: "after", ttlMs: TTL_MS, waitMs: 1_000 });
          await after.locks.release("resource", g.epoch);
          await after.close();
          next = { worker: "after", epoch: g.epoch, proof: g.reclaimed?.proof ?? "-" };
          expect(next.epoch).toBe(k + 1);
        }
        expect(next?.proof, `epoch ${k + 1} reclaimed from the killed epoch ${k}`).toBe("dead_pid");
      }
      // The stopped holder lost the lock by expiry, and its write after SIGCONT was refused.
      expect(stoppedEpoch).toBeGreaterThan(0);
      expect(acquired.find((a) => a.epoch === stoppedEpoch + 1)?.proof).toBe("expired");
      expect(w1.lines).toContain(`lost ${stoppedEpoch}`);

      // The guarded resource: epochs never go backwards along the journal, one writer per epoch.
      const b = await openBaton({ root });
      const { events } = await b.events.list("guarded", { limit: 10_000 });
      await b.close();
      const notes = events
        .filter((e) => e.type === "note:added")
        .map((e) => {
          const [what, epoch, worker] = String(e.data.text).split(" ");
          return { what, epoch: Number(epoch), worker, seq: e.seq };
        });
      for (let i = 1; i < notes.length; i++) {
        const [a, z] = [notes[i - 1], notes[i]] as [(typeof notes)[0], (typeof notes)[0]];
        expect(z.epoch, `seq ${z.seq} (epoch ${z.epoch}) after seq ${a.seq} (epoch ${a.epoch})`).toBeGreaterThanOrEqual(a.epoch);
        if (z.epoch === a.epoch) expect(z.worker).toBe(a.worker);
      }
      const byEpoch = (e: number) => notes.filter((n) => n.epoch === e).map((n) => n.what);
      expect(byEpoch(stoppedEpoch)).toEqual(["enter"]);
      for (const k of kills) expect(byEpoch(k)).toEqual(["enter"]);

      // Holding intervals of holders that released cleanly never overlap.
      const intervals: Interval[] = children
        .flatMap((c) => c.lines.filter((l) => l.startsWith("released")))
        .map((l) => l.split(" ").map(Number) as [number, number, number, number])
        .map(([, epoch, t0, t1]) => ({ epoch, t0, t1 }))
        .concat(thief.map(({ epoch, t0, t1 }) => ({ epoch, t0, t1 })))
        .sort((a, b) => a.epoch - b.epoch);
      expect(intervals.length).toBeGreaterThanOrEqual(25);
      for (let i = 1; i < intervals.length; i++) {
        const [a, z] = [intervals[i - 1], intervals[i]] as [Interval, Interval];
        expect(z.t0, `epoch ${z.epoch} began before epoch ${a.epoch} let go`).toBeGreaterThanOrEqual(a.t1);
      }
      for (const iv of intervals) expect(byEpoch(iv.epoch)).toEqual(["enter", "exit"]);
    } finally {
      for (const c of children) if (c.proc.signalCode === null && c.proc.exitCode === null) c.proc.kill("SIGCONT");
      await killAll(children);
    }
  });
});

/**
 * Crash loop: queue workers are killed with SIGKILL at random moments, mid-lease or between
 * calls, for at least 200 iterations. Afterwards nothing is lost (every item is finished) and
 * nothing is acked twice (one acked lease per item; no item reported acked by two workers).
 * bench/crash-loop.mjs runs the same loop for 10,000 iterations.
 */
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { openBaton } from "../src/index.js";
import { spawnFixture } from "./child-process.js";
import { cleanupDirs, tempDir } from "./helpers.js";

afterAll(() => cleanupDirs());

const ITERATIONS = Number(process.env.BATON_CRASH_ITERATIONS ?? 200);
const ITEMS = 300;
const LEASE_MS = 250;

describe("queue crash loop", () => {
  it(`loses nothing and acks nothing twice across ${ITERATIONS} SIGKILLed workers`, async () => {
    const root = tempDir("baton-crashloop-");
    // Items keep the max attempts they were created with: high, so a run of unlucky kills on one
    // item does not dead-letter it (dead-lettering has its own tests).
    const setup = await openBaton({ root, maxAttempts: 1000 });
    await setup.sessions.start({ flow: "live-variant", id: "lv" });
    await setup.events.append("lv", { type: "generate", actor: "browser" });
    await setup.events.append("lv", { type: "source_wrapped", actor: "agent", data: { file: "a" } });
    await setup.events.append("lv", { type: "variants_written", actor: "agent", data: { count: 1, expected: 1 } });
    await setup.events.append("lv", { type: "cycling", actor: "browser" });
    await setup.events.appendBatch(
      "lv",
      Array.from({ length: ITEMS }, (_, i) => ({ type: "steer", actor: "browser", data: { n: i } })),
    );
    await setup.close();

    const ackedBy = new Map<string, string[]>();
    let kills = 0;
    let leasesSeen = 0;
    const runWorker = async (n: number) => {
      const w = spawnFixture("queue-worker.mjs", [root, `w${n}`, String(LEASE_MS), "400"]);
      await w.waitForLine((l) => l === "ready", 20_000, "worker ready");
      // Kill after a random number of lines: often right after a lease, before its ack.
      const target = 1 + Math.floor(Math.random() * 6);
      await Promise.race([
        w.waitForLine(() => w.lines.filter((l) => l.startsWith("leased") || l.startsWith("acked")).length >= target, 10_000, "progress"),
        w.exited,
      ]).catch(() => undefined);
      if (w.proc.exitCode === null && w.proc.signalCode === null) {
        w.proc.kill("SIGKILL");
        kills++;
      }
      await w.exited;
      for (const line of w.lines) {
        const [verb, itemId, leaseId, kind] = line.split(" ");
        if (verb === "leased") leasesSeen++;
        if (verb === "acked" && kind === "new")
          ackedBy.set(itemId as string, [...(ackedBy.get(itemId as string) ?? []), `w${n}:${leaseId}`]);
      }
    };
    for (let i = 0; i < ITERATIONS; i += 2) await Promise.all([runWorker(i), runWorker(i + 1)]);

    // Drain what the killed workers left: their leases expire and a last worker finishes.
    const drain = await openBaton({ root });
    await new Promise((r) => setTimeout(r, LEASE_MS + 50));
    for (;;) {
      const l = await drain.work.lease("drain", { leaseMs: 10_000 });
      if (!l) break;
      await drain.work.ack(l.leaseId);
    }
    expect(await drain.work.pending()).toEqual([]);
    await drain.close();

    expect(kills, "the loop should actually kill workers").toBeGreaterThan(ITERATIONS / 2);
    expect(leasesSeen).toBeGreaterThan(ITERATIONS);
    const twice = [...ackedBy].filter(([, by]) => by.length > 1);
    expect(twice, `items acked by two workers: ${JSON.stringify(twice.slice(0, 3))}`).toEqual([]);
    const db = new Database(`${root}/.baton/baton.db`, { readonly: true });
    try {
      const states = db.prepare("SELECT state, count(*) AS n FROM work_items GROUP BY state").all() as { state: string; n: number }[];
      // ITEMS steers, plus the generate that source_wrapped finished.
      expect(states, "every item finished, none lost or dead").toEqual([{ state: "done", n: ITEMS + 1 }]);
      const multi = db.prepare("SELECT item_id, count(*) AS n FROM leases WHERE state = 'acked' GROUP BY item_id HAVING n > 1").all();
      expect(multi, "an item with two acked leases").toEqual([]);
      const acked = (db.prepare("SELECT count(DISTINCT item_id) AS n FROM leases WHERE state = 'acked'").get() as { n: number }).n;
      expect(acked).toBe(ITEMS);
    } finally {
      db.close();
    }
  }, 240_000);
});

/**
 * A writer killed with SIGKILL mid-stream: every append it acknowledged must survive with the
 * seq it was given, the journal must fold cleanly, and the next append must continue the
 * sequence. Repeated on one workspace so each round recovers from the previous crash; again
 * with appends that do not wait for the disk (`durability: "relaxed"`, what agent hooks record
 * after a tool call): a process crash must lose none of those either.
 */
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import type { JournalEvent } from "../src/index.js";
import { openBaton } from "../src/index.js";
import { killAll, type LineChild, spawnFixture, waitExit } from "./child-process.js";
import { cleanupDirs, tempDir } from "./helpers.js";

const ROUNDS = 5;
const SESSION = "crashy";

afterAll(() => cleanupDirs());

async function allEvents(root: string): Promise<{ events: JournalEvent[]; corrupt: unknown[] }> {
  const baton = await openBaton({ root });
  try {
    const events: JournalEvent[] = [];
    const corrupt: unknown[] = [];
    for (;;) {
      const page = await baton.events.list(SESSION, { afterSeq: events.at(-1)?.seq ?? 0, limit: 1_000 });
      corrupt.push(...page.corrupt);
      if (page.events.length === 0) return { events, corrupt };
      events.push(...page.events);
    }
  } finally {
    await baton.close();
  }
}

describe("a writer killed with SIGKILL", () => {
  it.each([
    ["full", ROUNDS],
    ["relaxed", 3],
  ] as const)(
    "loses no acknowledged %s append, and the journal stays consistent (%i kills on one workspace)",
    async (durability, rounds) => {
      const root = tempDir();
      const setup = await openBaton({ root });
      await setup.sessions.start({ flow: "task", id: SESSION });
      await setup.close();
      let lastSeq = 1;

      for (let round = 0; round < rounds; round++) {
        const tag = `r${round}`;
        const killAfter = 200 + Math.floor(Math.random() * 300);
        const children: LineChild[] = [];
        let acks: { seq: number; id: string }[];
        try {
          const child = spawnFixture("crash-appender.mjs", [root, SESSION, tag, "100000", durability]);
          children.push(child);
          await child.waitForLine(
            (l) => l.endsWith(` ${tag}-${killAfter - 1}`),
            40_000,
            `the ack of append #${killAfter} (round ${round})`,
          );
          child.proc.kill("SIGKILL");
          const exit = await waitExit(child, 10_000);
          expect(exit, `round ${round}: expected the writer to die from SIGKILL, not exit on its own`).toEqual({
            code: null,
            signal: "SIGKILL",
          });
          acks = child.lines.flatMap((l) => {
            const m = /^ack (\d+) (\S+)$/.exec(l);
            return m ? [{ seq: Number(m[1]), id: m[2] as string }] : [];
          });
        } finally {
          await killAll(children);
        }
        expect(acks.length, `round ${round}: expected at least ${killAfter} acknowledged appends before the kill`).toBeGreaterThanOrEqual(
          killAfter,
        );
        // The writer is alone, so its acks are the next seqs in order.
        const badAck = acks.findIndex((a, i) => a.seq !== lastSeq + 1 + i || a.id !== `${tag}-${i}`);
        expect(
          badAck,
          `round ${round}: expected ack #${badAck} to be seq ${lastSeq + 1 + badAck} id ${tag}-${badAck}; found ${JSON.stringify(acks[badAck])}`,
        ).toBe(-1);

        const { events, corrupt } = await allEvents(root);
        expect(corrupt, `round ${round}: expected no corrupt rows after the crash`).toEqual([]);
        const badSeq = events.findIndex((e, i) => e.seq !== i + 1);
        expect(badSeq, `round ${round}: expected contiguous seqs from 1; position ${badSeq} holds seq ${events[badSeq]?.seq}`).toBe(-1);
        const lost = acks.filter((a) => events[a.seq - 1]?.id !== a.id);
        expect(
          lost.slice(0, 10),
          `round ${round}: expected every acknowledged append at its seq; ${lost.length} of ${acks.length} missing or moved`,
        ).toEqual([]);
        // At most the append in flight at the kill committed without being acknowledged.
        const lastAcked = acks.at(-1)?.seq ?? lastSeq;
        const journalLast = events.at(-1)?.seq ?? 0;
        expect(
          journalLast - lastAcked,
          `round ${round}: expected the journal to end at the last ack (${lastAcked}) or one past it`,
        ).toBeOneOf([0, 1]);
        if (journalLast > lastAcked)
          expect(events.at(-1)?.id, "expected the unacknowledged event to be the one in flight").toBe(`${tag}-${acks.length}`);

        const baton = await openBaton({ root });
        try {
          const rebuilt = await baton.sessions.rebuild(SESSION);
          expect(rebuilt[0], `round ${round}: expected rebuild to find the snapshot consistent with the journal`).toMatchObject({
            repaired: false,
            lastSeq: journalLast,
          });
          const snap = await baton.sessions.snapshot(SESSION);
          expect(snap.lastSeq, `round ${round}: expected the snapshot at the journal's last seq`).toBe(journalLast);
          expect(snap.counts.corrupt, `round ${round}: expected the fold to find no corrupt rows`).toBe(0);
          const next = await baton.events.append(SESSION, {
            id: `parent-${round}`,
            type: "note:added",
            data: { text: `after crash ${round}` },
          });
          expect(next.event.seq, `round ${round}: expected the next append to continue at lastSeq+1`).toBe(journalLast + 1);
          lastSeq = next.event.seq;
        } finally {
          await baton.close();
        }
        const db = new Database(join(root, ".baton", "baton.db"), { readonly: true });
        try {
          expect(db.pragma("integrity_check", { simple: true }), `round ${round}: expected SQLite integrity_check to pass`).toBe("ok");
        } finally {
          db.close();
        }
      }
    },
  );
});

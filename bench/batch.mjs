/**
 * Batched ingest: 1,000 events per write transaction (one commit, one fsync per batch).
 *
 * - Baton `appendBatch()` of 1,000 `note:added` events.
 * - Raw better-sqlite3: `BEGIN IMMEDIATE`, 1,000 INSERTs of equivalent rows into the same
 *   table, `COMMIT`.
 *
 * Both WAL + synchronous=FULL, interleaved in rounds. Throughput is events per second.
 */
import { join } from "node:path";
import {
  eventId,
  FIXED_HASH,
  info,
  interleave,
  loadBaton,
  openRaw,
  peekJournalMode,
  pragmas,
  ratio,
  scaled,
  summarise,
  tempDir,
} from "./lib.mjs";

export const name = "batch";
export const title = "Batched ingest (1,000 events per transaction)";

const SESSION = "bench-batch";
const BATCH = 1_000;
const text = (i) => `tool call ${i}: read src/auth/login.ts (212 lines), no changes`;

export async function run() {
  const { openBaton } = await loadBaton();
  const baton = await openBaton({ root: tempDir("batch-baton"), durability: "full" });
  await baton.sessions.start({ flow: "task", id: SESSION, title: "batch benchmark" });
  const raw = openRaw(join(tempDir("batch-raw"), "raw.db"), "FULL");
  let rawSeq = 0;

  const sides = [
    {
      label: "Baton appendBatch",
      op: (b) => {
        const events = new Array(BATCH);
        for (let i = 0; i < BATCH; i++) events[i] = { type: "note:added", data: { text: text(b * BATCH + i) } };
        return baton.events.appendBatch(SESSION, events);
      },
    },
    {
      label: "raw better-sqlite3 batched INSERT",
      op: (b) => {
        raw.db.exec("BEGIN IMMEDIATE");
        const at = new Date().toISOString();
        for (let i = 0; i < BATCH; i++) {
          raw.insert.run(
            SESSION,
            ++rawSeq,
            eventId(),
            "note:added",
            "user",
            JSON.stringify({ text: text(b * BATCH + i) }),
            null,
            at,
            FIXED_HASH,
            "recorded",
          );
        }
        raw.db.exec("COMMIT");
      },
    },
  ];
  const batches = scaled(100, 4);
  const rounds = 10;
  const samples = await interleave(sides, { rounds, perRound: Math.ceil(batches / rounds), warmup: scaled(5, 1) });
  const durability = {
    // Baton's connection is private: journal_mode is persistent and read back through a second
    // connection; synchronous is per connection and is what SqliteBackend was asked to set.
    "Baton appendBatch": { journalMode: peekJournalMode(join(baton.root, ".baton", "baton.db")), synchronous: "FULL" },
    "raw better-sqlite3 batched INSERT": pragmas(raw.db),
  };
  await baton.close();
  raw.db.close();

  const rows = Object.entries(samples).map(([label, v]) => ({
    subject: `${label} (FULL)`,
    unit: "events",
    ...summarise(v, BATCH),
    durability: durability[label],
  }));
  const b = rows[0].opsPerSec;
  const r = rows[1].opsPerSec;
  return {
    rows,
    ratios: [
      ratio("Baton / raw batched throughput (FULL)", b / r, ">=", 0.7),
      info("raw / Baton median batch time (FULL, robustness check)", rows[1].medianMs / rows[0].medianMs),
    ],
    notes: ["median and p99 are per batch of 1,000 events; ops/s counts events"],
  };
}

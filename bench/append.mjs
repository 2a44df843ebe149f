/**
 * Durable append: one event per write transaction, acknowledged only after it is on disk.
 *
 * - Baton `append()` of a `note:added` facet event (validation, idempotency hash, fold, event
 *   row, the snapshot every 64 events, one commit).
 * - Raw better-sqlite3: one INSERT of an equivalent row (an id made as Baton makes one) into the
 *   same table, inside an explicit `BEGIN IMMEDIATE … COMMIT`.
 * - LangGraph `SqliteSaver.put()` of a small checkpoint (one INSERT OR REPLACE, autocommit).
 *
 * All three run WAL + synchronous=FULL (verified by reading the pragmas back), interleaved in
 * rounds. A second pass at synchronous=NORMAL (no fsync per commit) shows the CPU cost
 * per operation that the fsync otherwise hides; it has no goal.
 */
import { join } from "node:path";
import { emptyCheckpoint } from "@langchain/langgraph-checkpoint";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import {
  eventId,
  FIXED_HASH,
  gc,
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
  walPagesPerOp,
} from "./lib.mjs";

export const name = "append";
export const title = "Durable append (one event per transaction)";

const SESSION = "bench-append";
const text = (i) => `step ${i}: ran the unit tests, 3 failures left in src/auth/login.ts`;

async function contestants(synchronous) {
  const { openBaton } = await loadBaton();

  // durability "relaxed" is synchronous=NORMAL on SQLite (src/compose.ts).
  const baton = await openBaton({ root: tempDir(`append-baton-${synchronous}`), durability: synchronous === "FULL" ? "full" : "relaxed" });
  await baton.sessions.start({ flow: "task", id: SESSION, title: "append benchmark" });

  const rawPath = join(tempDir(`append-raw-${synchronous}`), "raw.db");
  const raw = openRaw(rawPath, synchronous);
  let rawSeq = 0;

  const saverPath = join(tempDir(`append-langgraph-${synchronous}`), "checkpoints.db");
  const saver = SqliteSaver.fromConnString(saverPath);
  saver.setup();
  saver.db.pragma("journal_mode = WAL");
  saver.db.pragma(`synchronous = ${synchronous}`);
  let parent;

  const sides = [
    {
      label: "Baton append",
      op: (i) => baton.events.append(SESSION, { type: "note:added", data: { text: text(i) } }),
    },
    {
      label: "raw better-sqlite3 INSERT",
      op: (i) => {
        raw.db.exec("BEGIN IMMEDIATE");
        raw.insert.run(
          SESSION,
          ++rawSeq,
          eventId(),
          "note:added",
          "user",
          JSON.stringify({ text: text(i) }),
          null,
          new Date().toISOString(),
          FIXED_HASH,
          "recorded",
        );
        raw.db.exec("COMMIT");
      },
    },
    {
      label: "LangGraph SqliteSaver.put",
      op: async (i) => {
        // A small, realistic superstep checkpoint: one new message, bumped channel versions.
        const checkpoint = emptyCheckpoint();
        checkpoint.channel_values = { messages: [{ role: "assistant", content: text(i) }], step: i };
        checkpoint.channel_versions = { __start__: 1, messages: i + 2, step: i + 2 };
        checkpoint.versions_seen = { __input__: {}, agent: { messages: i + 1 } };
        const config = { configurable: { thread_id: SESSION, checkpoint_ns: "", ...(parent ? { checkpoint_id: parent } : {}) } };
        const metadata = { source: "loop", step: i, parents: {} };
        const next = await saver.put(config, checkpoint, metadata, { messages: i + 2, step: i + 2 });
        parent = next.configurable.checkpoint_id;
      },
    },
  ];

  const durability = {
    // Baton's connection is private: journal_mode is persistent, so a second connection reads it;
    // synchronous is per connection and is what SqliteBackend was asked to set.
    "Baton append": { journalMode: peekJournalMode(join(baton.root, ".baton", "baton.db")), synchronous },
    "raw better-sqlite3 INSERT": pragmas(raw.db),
    "LangGraph SqliteSaver.put": pragmas(saver.db),
  };
  const close = async () => {
    await baton.close();
    raw.db.close();
    saver.db.close();
  };
  const paths = {
    "Baton append": join(baton.root, ".baton", "baton.db"),
    "raw better-sqlite3 INSERT": rawPath,
    "LangGraph SqliteSaver.put": saverPath,
  };
  return { sides, durability, paths, close };
}

export async function run() {
  const rows = [];
  const ratios = [];
  const extra = {};
  for (const [synchronous, n] of [
    ["FULL", scaled(5_000, 60)],
    ["NORMAL", scaled(5_000, 60)],
  ]) {
    const { sides, durability, paths, close } = await contestants(synchronous);
    // Many short rounds: a burst of outside load (other processes, the disk) hits every side alike.
    const rounds = 25;
    const samples = await interleave(sides, { rounds, perRound: Math.ceil(n / rounds), warmup: scaled(300, 20) });
    if (synchronous === "FULL") {
      // What each commit writes: WAL frames (pages) per operation, outside the timed loop.
      extra.walPagesPerOp = {};
      for (const side of sides) extra.walPagesPerOp[side.label] = await walPagesPerOp(paths[side.label], 40, (i) => side.op(1e6 + i));
    }
    await close();
    gc();
    const s = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, summarise(v)]));
    for (const [label, st] of Object.entries(s)) rows.push({ subject: `${label} (${synchronous})`, ...st, durability: durability[label] });
    const b = s["Baton append"].opsPerSec;
    const r = s["raw better-sqlite3 INSERT"].opsPerSec;
    const l = s["LangGraph SqliteSaver.put"].opsPerSec;
    const bm = s["Baton append"].medianMs;
    if (synchronous === "FULL") {
      ratios.push(ratio("Baton / raw INSERT throughput (FULL)", b / r, ">=", 0.8));
      ratios.push(ratio("Baton / LangGraph put throughput (FULL)", b / l, ">=", 4));
      // Throughput is total ops / total time, so a few stalls move it; the medians do not.
      ratios.push(info("raw / Baton median latency (FULL, robustness check)", s["raw better-sqlite3 INSERT"].medianMs / bm));
      ratios.push(info("LangGraph / Baton median latency (FULL, robustness check)", s["LangGraph SqliteSaver.put"].medianMs / bm));
    } else {
      ratios.push(info("Baton / raw INSERT throughput (NORMAL, CPU-bound, no goal)", b / r));
      ratios.push(info("Baton / LangGraph put throughput (NORMAL, CPU-bound, no goal)", b / l));
      extra.cpuMicrosPerOpNormal = Object.fromEntries(Object.entries(s).map(([k, v]) => [k, v.meanMs * 1000]));
    }
  }
  const notes = [
    `WAL pages written per operation: ${Object.entries(extra.walPagesPerOp)
      .map(([k, v]) => `${k} ${v.toFixed(1)}`)
      .join(", ")}`,
    `mean time per operation at NORMAL (≈ CPU cost): ${Object.entries(extra.cpuMicrosPerOpNormal)
      .map(([k, v]) => `${k} ${v.toFixed(0)} µs`)
      .join(", ")}`,
  ];
  return { rows, ratios, notes, extra };
}

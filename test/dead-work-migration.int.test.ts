/**
 * Migration 11 (dead-work-handled): dead items from before it count as handled by any later
 * flow event (how status judged them), so an upgrade brings back no dead work already dealt
 * with, and keeps the rest as news.
 */
import Database from "better-sqlite3";
import { afterAll, expect, it } from "vitest";
import { SQLITE_MIGRATIONS } from "../src/backend/sqlite/sqlite-migrations.js";
import { cleanupDirs, tempDir } from "./helpers.js";

afterAll(() => cleanupDirs());

it("backfills handled_seq from the first later flow event; facet events do not count", () => {
  const db = new Database(`${tempDir("baton-mig-")}/t.db`);
  try {
    const mine = SQLITE_MIGRATIONS.find((x) => x.name === "dead-work-handled");
    expect(mine?.version).toBe(11);
    for (const m of SQLITE_MIGRATIONS.filter((x) => x.version < (mine?.version ?? 0))) db.exec(m.sql);
    const ev = db.prepare(
      "INSERT INTO events (session_id, seq, id, type, actor, data, at, body_hash, outcome) VALUES (?, ?, ?, ?, 'agent', '{}', '2026-01-01T00:00:00Z', 'h', 'moved')",
    );
    const item = db.prepare(
      "INSERT INTO work_items (item_id, session_id, seq, kind, priority, state, max_attempts, available_ms, created_at) VALUES (?, ?, ?, 'exit', 90, ?, 5, 0, '2026-01-01T00:00:00Z')",
    );
    // s1: dead at seq 3, a facet event at 4, a flow event at 5. s2: dead at 2, only a facet event after.
    ev.run("s1", 3, "e3", "exit");
    ev.run("s1", 4, "e4", "blocker:added");
    ev.run("s1", 5, "e5", "source_wrapped");
    item.run("s1:3", "s1", 3, "dead");
    ev.run("s2", 2, "f2", "exit");
    ev.run("s2", 3, "f3", "decision:added");
    item.run("s2:2", "s2", 2, "dead");
    item.run("s2:9", "s2", 9, "ready");
    db.exec(mine?.sql ?? "");
    const rows = db.prepare("SELECT item_id, handled_seq FROM work_items ORDER BY item_id").all();
    expect(rows).toEqual([
      { item_id: "s1:3", handled_seq: 5 },
      { item_id: "s2:2", handled_seq: null },
      { item_id: "s2:9", handled_seq: null },
    ]);
  } finally {
    db.close();
  }
});

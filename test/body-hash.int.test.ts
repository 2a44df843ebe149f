/**
 * An event's body hash (the sha256 of its canonical body: type, actor, data with keys sorted,
 * revision) is what makes a re-sent event id a duplicate rather than a conflict, so it must never
 * change for the same event: a journal written by an earlier build keeps recognising re-sends.
 * The hashes below were stored by the build before the append hashed from the data's own text
 * and left events with generated ids unhashed; the stored data keeps the caller's key order.
 */
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { type RawEvent, toEvent } from "../src/backend/rows.js";
import { openBaton } from "../src/compose.js";
import type { EventInput } from "../src/core/types.js";
import { isBatonError } from "../src/index.js";
import { storedBodyHash } from "../src/services/journal/rows.js";
import { cleanupDirs, tempDir } from "./helpers.js";

afterEach(() => cleanupDirs());

const EVENTS: EventInput[] = [
  { type: "note", data: {} },
  { type: "note", actor: "agent", data: { text: "a" } },
  {
    type: "note",
    data: { z: 1, a: [3, { y: 2, b: null }], 10: "ten", 2: "two", m: "é\u2028\ud800" },
    revision: 7,
  },
  { type: "start", actor: "agent", data: { b: { d: 1, c: 2 }, a: -0, e: 1e21, f: 1.5 } },
  { type: "note", data: { __x: 1, A: 2, a: 3, "": 4 } },
  { type: "decision:added", id: "ev-fixed-1", data: { reason: "w", decision: "d" } },
];

const STORED: [string, string][] = [
  ["ae64c14c5050e82bfdcb836dba147f10120887c49b225a9248281aa7f50a3705", "{}"],
  ["0dbcc689ad667b5a8e35b61810a985f701c9461418ec2b721b455ac4f1082a83", '{"text":"a"}'],
  [
    "138f04518a5d359ac5fa9f9d181059164b93ba818c2908e1f315f2716389aff0",
    '{"2":"two","10":"ten","z":1,"a":[3,{"y":2,"b":null}],"m":"é\u2028\\ud800"}',
  ],
  ["7d55ced8939e4dd166cd3c309b5023b6db762ae0e45cbb9bd56c7779ee99ff84", '{"b":{"d":1,"c":2},"a":0,"e":1e+21,"f":1.5}'],
  ["196f754870d7a5e06449625c4c78538927176d4f38ce5a74a68426fb4a6a277d", '{"__x":1,"A":2,"a":3,"":4}'],
  ["f37c5270e791be23af93b1d9f8f3995705cf9b643f2569fe9d2db8d44508c33e", '{"reason":"w","decision":"d"}'],
];

describe("an event's body hash", () => {
  it("is the one earlier builds stored, whatever the order of the data's keys; the data keeps its own order", async () => {
    const root = tempDir();
    const baton = await openBaton({ root });
    try {
      await baton.sessions.start({ flow: "task", id: "s1", title: "x" });
      for (const e of EVENTS) await baton.events.append("s1", e);
      // The same decision re-sent with its keys in another order is the same event.
      const again = await baton.events.append("s1", { type: "decision:added", id: "ev-fixed-1", data: { decision: "d", reason: "w" } });
      expect(again.duplicate).toBe(true);
      const changed = await baton.events
        .append("s1", { type: "decision:added", id: "ev-fixed-1", data: { decision: "d", reason: "other" } })
        .catch((e: unknown) => e);
      expect(isBatonError(changed, "conflict")).toBe(true);
    } finally {
      await baton.close();
    }
    const db = new BetterSqlite3(join(root, ".baton", "baton.db"), { readonly: true });
    try {
      const rows = (db.prepare("SELECT * FROM events WHERE session_id = 's1' AND seq > 1 ORDER BY seq").all() as RawEvent[]).map(toEvent);
      expect(rows.map((r) => [storedBodyHash(r), r.data])).toEqual(STORED);
      // Hashed when appended only where the caller chose the id; the others are worked out when asked.
      expect(rows.map((r) => r.bodyHash !== "")).toEqual([false, false, false, false, false, true]);
    } finally {
      db.close();
    }
  });

  it("of an event whose id was generated, is worked out when that id is sent again: the same body is a duplicate, another a conflict", async () => {
    const root = tempDir();
    const baton = await openBaton({ root });
    try {
      await baton.sessions.start({ flow: "task", id: "s1" });
      const first = await baton.events.append("s1", { type: "note", data: { z: 1, a: { y: 2, b: [1, "é"] } }, revision: 3 });
      const id = first.event.id;
      const same = await baton.events.append("s1", { id, type: "note", data: { a: { b: [1, "é"], y: 2 }, z: 1 }, revision: 3 });
      expect(same).toMatchObject({ duplicate: true, event: { seq: first.event.seq } });
      for (const other of [
        { id, type: "note", data: { z: 1, a: { y: 2, b: [1, "e"] } }, revision: 3 },
        { id, type: "note", data: { z: 1, a: { y: 2, b: [1, "é"] } }, revision: 4 },
        { id, type: "note", actor: "agent", data: { z: 1, a: { y: 2, b: [1, "é"] } }, revision: 3 },
      ]) {
        const err = await baton.events.append("s1", other).catch((e: unknown) => e);
        expect(isBatonError(err, "conflict"), JSON.stringify(other)).toBe(true);
      }
      expect((await baton.events.list("s1")).events).toHaveLength(2);
    } finally {
      await baton.close();
    }
  });
});

/**
 * An append on SQLite from the state this process kept (services/journal/journal.ts #storeAt):
 * no read of the session before the write, a compare-and-set insert instead, and the full
 * append whenever the kept state is not the journal's. Real SQLite files; a second Baton on the
 * same file is another connection, as another process would be.
 */
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Baton } from "../src/api.js";
import { SqliteBackend } from "../src/backend/sqlite/sqlite-backend.js";
import { SqliteJournalQueries } from "../src/backend/sqlite/sqlite-journal.js";
import { openBaton } from "../src/compose.js";
import type { JsonObject } from "../src/core/types.js";
import { BatonError } from "../src/errors.js";
import { isBatonError } from "../src/index.js";
import { FlowRegistry } from "../src/services/flows.js";
import { Journal } from "../src/services/journal/journal.js";
import { cleanupDirs, tempDir } from "./helpers.js";

afterEach(() => {
  vi.restoreAllMocks();
  cleanupDirs();
});

/** Two Batons on one workspace (two connections, as two processes would have), closed after `body`. */
async function twoConnections(body: (a: Baton, b: Baton) => Promise<void>): Promise<void> {
  const root = tempDir();
  const a = await openBaton({ root });
  const b = await openBaton({ root });
  try {
    await body(a, b);
  } finally {
    await a.close();
    await b.close();
  }
}

describe("appending from the kept state (SQLite)", () => {
  it("an append after this process's own reads the session no more; one after another connection's does, and sees its event", async () => {
    await twoConnections(async (a, b) => {
      await a.sessions.start({ flow: "task", id: "t" });
      await a.events.append("t", { type: "start" });
      const reads = vi.spyOn(SqliteJournalQueries.prototype, "getSession");
      await a.events.append("t", { type: "note:added", data: { text: "one" } });
      await a.events.append("t", { type: "note:added", data: { text: "two" } });
      expect(reads).not.toHaveBeenCalled();
      await b.events.append("t", { type: "block" });
      reads.mockClear();
      // a's kept state is at seq 4, the journal at 5: the insert lands nowhere, and a reads and folds again.
      const r = await a.events.append("t", { type: "unblock" });
      expect(reads).toHaveBeenCalled();
      expect([r.event.seq, r.phase]).toEqual([6, "in_progress"]);
      const { events } = await b.events.list("t");
      expect(events.map((e) => [e.seq, e.type])).toEqual([
        [1, "session:started"],
        [2, "start"],
        [3, "note:added"],
        [4, "note:added"],
        [5, "block"],
        [6, "unblock"],
      ]);
    });
  });

  it("an append inside another service's transaction (a run's start) is kept once it commits: the next append reads nothing", async () => {
    const a = await openBaton({ root: tempDir() });
    try {
      await a.sessions.start({ flow: "task", id: "t" });
      await a.events.append("t", { type: "start" });
      await a.runs.start("t", { agent: "claude-code", runId: "r1" });
      const reads = vi.spyOn(SqliteJournalQueries.prototype, "getSnapshot");
      const r = await a.events.append("t", { type: "note:added", data: { text: "after the run" } });
      expect(reads).not.toHaveBeenCalled();
      expect(r.event.seq).toBe(4);
      // A second start of the same run changes nothing, and the next append still sees the journal.
      expect((await a.runs.start("t", { agent: "claude-code", runId: "r1" })).result.duplicate).toBe(true);
      expect((await a.events.append("t", { type: "note:added", data: { text: "again" } })).event.seq).toBe(5);
      const snap = await a.sessions.snapshot("t");
      expect(snap.lastSeq).toBe(5);
      expect(JSON.stringify(snap.facets.runs)).toContain('"r1"');
    } finally {
      await a.close();
    }
  });

  it("a batch that fails half way on the kept state leaves nothing, and the next append is right", async () => {
    const a = await openBaton({ root: tempDir() });
    try {
      await a.sessions.start({ flow: "task", id: "t" });
      await a.events.append("t", { type: "start" });
      const refused = await a.events.appendBatch("t", [{ type: "block" }, { type: "complete" }]).catch((e) => e);
      expect(isBatonError(refused, "invalid_transition")).toBe(true);
      const s = await a.sessions.snapshot("t");
      expect([s.phase, s.lastSeq]).toEqual(["in_progress", 2]);
      const r = await a.events.append("t", { type: "complete" });
      expect([r.event.seq, r.phase]).toEqual([3, "done"]);
      const rows = await a.sessions.list({ includeCompleted: true });
      expect(rows.map((x) => [x.id, x.phase, x.status, x.lastSeq])).toEqual([["t", "done", "completed", 3]]);
    } finally {
      await a.close();
    }
  });

  it("two connections taking turns moving the phase: the session row follows the journal", async () => {
    await twoConnections(async (a, b) => {
      await a.sessions.start({ flow: "task", id: "t" });
      await a.events.append("t", { type: "start" });
      await b.events.append("t", { type: "block" });
      await a.events.append("t", { type: "unblock" });
      await b.events.append("t", { type: "block" });
      await a.events.append("t", { type: "unblock" });
      await b.events.append("t", { type: "verify" });
      const [row] = await a.sessions.list({ includeCompleted: true });
      const snap = await b.sessions.snapshot("t");
      expect([row?.phase, row?.lastSeq]).toEqual([snap.phase, snap.lastSeq]);
      expect((await a.events.append("t", { type: "complete" })).phase).toBe("done");
      const [done] = await b.sessions.list({ includeCompleted: true });
      expect([done?.phase, done?.status]).toEqual(["done", "completed"]);
      expect(await b.sessions.list()).toEqual([]);
    });
  });

  it("a refusal inside a group whose commit fails keeps no state: another connection's append is seen, not a phantom phase", async () => {
    const root = tempDir();
    const flows = new FlowRegistry(join(root, "flows"));
    const ba = new SqliteBackend({ path: join(root, "a.db") });
    const bb = new SqliteBackend({ path: join(root, "a.db") });
    const a = new Journal(ba, flows);
    const b = new Journal(bb, flows);
    try {
      await a.startSession({ flow: "task", id: "t" });
      await a.append("t", { type: "start" });
      const exec = BetterSqlite3.prototype.exec;
      let fail = true;
      const full = vi.spyOn(BetterSqlite3.prototype, "exec").mockImplementation(function (this: BetterSqlite3.Database, sql: string) {
        if (sql === "COMMIT" && fail) {
          fail = false;
          throw Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });
        }
        return exec.call(this, sql);
      });
      // One group: a phase move, then a refused conditional append that reads the move uncommitted.
      const moved = a.append("t", { type: "block" });
      const refused = a.appendIf("t", { type: "note:added", data: { text: "x" } }, () => {
        throw new BatonError("conflict", "refused");
      });
      const settled = await Promise.allSettled([moved, refused]);
      full.mockRestore();
      expect(settled.map((x) => x.status)).toEqual(["rejected", "rejected"]);
      await b.append("t", { type: "note:added", data: { text: "the other connection's seq 3" } });
      // The journal's phase is in_progress: unblock is invalid there, whatever this process saw.
      await expect(a.append("t", { type: "unblock" })).rejects.toMatchObject({ code: "invalid_transition" });
      expect((await a.verifySnapshot("t")).matches).toBe(true);
    } finally {
      await ba.close();
      await bb.close();
    }
  });

  it("a decision that throws, or names an event without its id, appends nothing", async () => {
    const root = tempDir();
    const j = new Journal(new SqliteBackend({ path: join(root, "a.db") }), new FlowRegistry(join(root, "flows")));
    await j.startSession({ flow: "task", id: "t" });
    await expect(
      j.appendFrom(
        "t",
        async () => {
          throw new BatonError("conflict", "no");
        },
        () => 0,
      ),
    ).rejects.toMatchObject({ code: "conflict" });
    await expect(
      j.appendFrom(
        "t",
        async () => [{ type: "note:added", data: { text: "no id" } }],
        () => 0,
      ),
    ).rejects.toMatchObject({
      code: "internal",
    });
    const ok = await j.appendFrom(
      "t",
      async (snap) => [{ id: `n${snap.lastSeq}`, type: "note:added", data: { text: "kept" } }],
      (snap) => snap.lastSeq,
    );
    expect([ok.results[0]?.event.id, ok.after]).toEqual(["n1", 2]);
    expect((await j.read("t")).snapshot.lastSeq).toBe(2);
  });
});

describe("reading from the kept state", () => {
  /** A read by a connection that keeps nothing (it never appends): what the journal folds to. */
  async function cold(root: string, id: string) {
    const c = await openBaton({ root });
    try {
      return await c.sessions.read(id);
    } finally {
      await c.close();
    }
  }

  it("reads what the journal folds to without parsing the stored snapshot or reading events, and hands out a copy", async () => {
    const root = tempDir();
    const a = await openBaton({ root });
    try {
      await a.sessions.start({ flow: "task", id: "t", title: "kept" });
      await a.events.append("t", { type: "start" });
      for (let i = 0; i < 70; i++) await a.events.append("t", { type: "note:added", data: { text: `n${i}` } });
      await a.events.append("t", { type: "decision:added", data: { decision: "keep the fold" } });
      const events = vi.spyOn(SqliteJournalQueries.prototype, "readEvents");
      const view = await a.sessions.read("t");
      expect(events).not.toHaveBeenCalled();
      events.mockRestore();
      expect(view.snapshot).toEqual((await cold(root, "t")).snapshot);
      expect(view.snapshot.lastSeq).toBe(73);
      // The caller owns what it was given: changing it changes nothing kept.
      view.snapshot.facets.decisions.length = 0;
      view.snapshot.phase = "done";
      const again = await a.sessions.read("t");
      expect([again.snapshot.phase, again.snapshot.facets.decisions.map((d) => d.decision)]).toEqual(["in_progress", ["keep the fold"]]);
      expect((await a.events.append("t", { type: "complete" })).phase).toBe("done");
    } finally {
      await a.close();
    }
  });

  it("a process that only reads keeps what its first read folded, until another connection appends", async () => {
    await twoConnections(async (a, b) => {
      await a.sessions.start({ flow: "task", id: "t" });
      for (let i = 0; i < 10; i++) await a.events.append("t", { type: "note:added", data: { text: `n${i}` } });
      const events = vi.spyOn(SqliteJournalQueries.prototype, "readEvents");
      const first = await b.sessions.read("t");
      expect(events).toHaveBeenCalled();
      events.mockClear();
      const second = await b.sessions.read("t");
      expect(events).not.toHaveBeenCalled();
      expect(second.snapshot).toEqual(first.snapshot);
      // What the first read was given is the caller's: changing it changes nothing kept.
      first.snapshot.facets.decisions.push({ seq: 1, decision: "mine", date: "x", alternatives: [] });
      expect((await b.sessions.read("t")).snapshot.facets.decisions).toEqual([]);
      await a.events.append("t", { type: "decision:added", data: { decision: "from a" } });
      events.mockClear();
      const third = await b.sessions.read("t");
      expect(events).toHaveBeenCalled();
      expect(third.snapshot.facets.decisions.map((d) => d.decision)).toEqual(["from a"]);
      // b's own append starts from the state its read kept: no read of the session first.
      const sessions = vi.spyOn(SqliteJournalQueries.prototype, "getSession");
      expect((await b.events.append("t", { type: "start" })).event.seq).toBe(13);
      expect(sessions).not.toHaveBeenCalled();
      expect((await a.sessions.read("t")).snapshot).toEqual((await b.sessions.read("t")).snapshot);
    });
  });

  it("a finished session read by a process that did not finish it is not kept (a list of old sessions would push out active ones)", async () => {
    await twoConnections(async (a, b) => {
      await a.sessions.start({ flow: "task", id: "t" });
      await a.events.appendBatch("t", [{ type: "start" }, { type: "verify" }, { type: "complete" }]);
      const events = vi.spyOn(SqliteJournalQueries.prototype, "readEvents");
      for (let i = 0; i < 2; i++) await b.sessions.read("t");
      expect(events).toHaveBeenCalledTimes(2);
      expect((await b.sessions.read("t")).snapshot.phase).toBe("done");
    });
  });

  it("keeps its own copy of what was appended: the caller changing its data or the event it got back changes no read", async () => {
    const root = tempDir();
    const a = await openBaton({ root });
    try {
      await a.sessions.start({ flow: "task", id: "t" });
      const data = { cfg: { a: 1 }, list: [1, 2] };
      const r = await a.events.append("t", { type: "start", data });
      data.cfg.a = 2;
      data.list.push(3);
      (r.event.data.cfg as Record<string, unknown>).b = "x";
      const files = [{ path: "src/a.ts", hash: "a".repeat(64) }];
      await a.events.append("t", { type: "resume:updated", data: { filesModified: files } });
      files[0]!.path = "changed";
      const view = await a.sessions.read("t");
      expect(view.snapshot.context).toEqual({ cfg: { a: 1 }, list: [1, 2] });
      expect(view.snapshot).toEqual((await cold(root, "t")).snapshot);
      expect(view.snapshot.facets.resume.filesModified.map((f) => f.path)).toEqual(["src/a.ts"]);
    } finally {
      await a.close();
    }
  });

  it("goes back to the journal when another connection appended, rebuilt, or the stored snapshot was damaged or lost", async () => {
    await twoConnections(async (a, b) => {
      await a.sessions.start({ flow: "task", id: "t" });
      await a.events.append("t", { type: "start" });
      await b.events.append("t", { type: "block" });
      expect((await a.sessions.read("t")).snapshot.phase).toBe("blocked");
      await a.events.append("t", { type: "unblock" });
      const db = new BetterSqlite3(join(a.workspace.dir, "baton.db"));
      try {
        db.prepare(`UPDATE snapshots SET body = replace(body, '"phase":"in_progress"', '"phase":"blocked"') WHERE session_id = 't'`).run();
        const damaged = await a.sessions.read("t");
        expect(damaged.snapshot.phase).toBe("in_progress");
        expect(damaged.readDiagnostics.map((d) => d.code)).toContain("snapshot_corrupt");
        await b.sessions.rebuild("t");
        const repaired = await a.sessions.read("t");
        expect(repaired.readDiagnostics.map((d) => d.code)).toEqual(["snapshot_repaired"]);
        await a.events.append("t", { type: "note:added", data: { text: "x" } });
        db.prepare(`UPDATE events SET data = '{not json' WHERE session_id = 't' AND seq = 5`).run();
        db.prepare(`DELETE FROM snapshots WHERE session_id = 't'`).run();
        const lost = await a.sessions.read("t");
        expect(lost.snapshot.diagnostics.find((d) => d.code === "corrupt_event")?.seq).toBe(5);
      } finally {
        db.close();
      }
    });
  });

  it("every read by appending connections equals a read by one that keeps nothing (model)", async () => {
    const command = fc.oneof(
      fc.record({
        who: fc.constantFrom(0, 1),
        type: fc.constantFrom("start", "block", "unblock", "verify", "note:added", "decision:added", "progress:set", "blocker:added"),
        n: fc.nat(9),
      }),
      fc.record({ who: fc.constantFrom(0, 1), read: fc.constant(true) }),
      fc.record({ who: fc.constantFrom(0, 1), rebuild: fc.constant(true) }),
    );
    const data = (type: string, n: number): JsonObject =>
      type === "note:added"
        ? { text: `note ${n}` }
        : type === "decision:added"
          ? { decision: `d${n}` }
          : type === "progress:set"
            ? { total: 10, completed: n }
            : type === "blocker:added"
              ? { id: `b${n % 3}`, text: `blocked ${n}` }
              : {};
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 40 }), async (commands) => {
        await twoConnections(async (a, b) => {
          const both = [a, b];
          await a.sessions.start({ flow: "task", id: "t" });
          for (const c of commands) {
            const x = both[c.who] as Baton;
            if ("read" in c) {
              const view = await x.sessions.read("t");
              const truth = await cold(x.root, "t");
              expect(view.snapshot).toEqual(truth.snapshot);
              expect(view.readDiagnostics).toEqual(truth.readDiagnostics);
            } else if ("rebuild" in c) await x.sessions.rebuild("t");
            else await x.events.append("t", { type: c.type, data: data(c.type, c.n) }).catch((e) => expect(isBatonError(e)).toBe(true));
          }
        });
      }),
      { numRuns: 25 },
    );
  });
});

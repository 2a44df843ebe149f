/**
 * The backend contract suite: journal behaviour every backend must show. A backend's spec file
 * is one call: `journalContract("sqlite", factory)`. The factory gives a fresh, empty store and
 * a raw statement hook, used only to corrupt data the way a disk or a hand edit would.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { Backend } from "../../src/backend/contract.js";
import { openBaton } from "../../src/compose.js";
import { type Baton, type EventInput, isBatonError } from "../../src/index.js";
import { cleanupDirs, tempDir } from "../helpers.js";

export interface ContractStore {
  backend: Backend;
  /** Run one raw SQL statement with no parameters (test-only corruption). */
  raw(sql: string): Promise<void>;
  /** The rows of one raw query with no parameters (test-only checks of what is stored). */
  rows(sql: string): Promise<Record<string, unknown>[]>;
}

export type StoreFactory = (root: string) => Promise<ContractStore>;

async function expectError(p: Promise<unknown>, code: string): Promise<Record<string, unknown>> {
  try {
    await p;
  } catch (err) {
    if (!isBatonError(err)) throw err;
    expect(err.code, `expected error code ${code}, got ${err.code}: ${err.message}`).toBe(code);
    return err.details;
  }
  throw new Error(`expected a ${code} error, but the call succeeded`);
}

export function journalContract(name: string, factory: StoreFactory): void {
  describe(`journal contract: ${name}`, () => {
    const open: Baton[] = [];
    let root = "";
    let store: ContractStore;

    async function fresh(): Promise<Baton> {
      root = tempDir();
      store = await factory(root);
      const b = await openBaton({ root, backend: store.backend });
      open.push(b);
      return b;
    }
    /** A second instance on the same store, as a new process would see it. */
    async function reopen(): Promise<Baton> {
      const again = await factory(root);
      const b = await openBaton({ root, backend: again.backend });
      open.push(b);
      return b;
    }

    afterEach(async () => {
      for (const b of open.splice(0)) await b.close();
    });
    afterAll(() => cleanupDirs());

    async function liveSession(b: Baton, id = "lv") {
      await b.sessions.start({ flow: "live-variant", id, title: "Hero" });
      await b.events.append(id, { type: "generate", actor: "browser", data: { variants: 3 } });
      await b.events.append(id, { type: "source_wrapped", actor: "agent", data: { file: "src/Hero.html" } });
      await b.events.append(id, { type: "variants_written", actor: "agent", data: { count: 3, expected: 3 } });
      return id;
    }

    it("folds generate → variants → accept into the latest phase and selected variant, and a new instance reads the same", async () => {
      const b = await fresh();
      const id = await liveSession(b);
      const r = await b.events.append(id, { type: "accept", actor: "browser", data: { variantId: "v2", paramValues: { hue: 210 } } });
      expect(r.phase).toBe("accept_pending");
      expect(r.outcome).toBe("moved");
      const st = (await b.sessions.status()).sessions[0]!;
      expect(st.phase).toBe("accept_pending");
      expect(st.context.variantId).toBe("v2");
      expect(st.nextAction.action).toBe("run_accept_cleanup");
      const other = await reopen();
      const again = (await other.sessions.status()).sessions[0]!;
      expect(again.phase).toBe("accept_pending");
      expect(again.context).toEqual(st.context);
      expect(again.lastSeq).toBe(5);
    });

    it("lists a session's lastSeq and updatedAt as its last append's, whether or not the phase moved", async () => {
      const b = await fresh();
      await b.sessions.start({ flow: "task", id: "t" });
      const listed = async (x: Baton) => (await x.sessions.list({ includeCompleted: true })).find((s) => s.id === "t");
      const steps: EventInput[] = [
        { type: "note:added", data: { text: "a note: the phase stays" } },
        { type: "start", data: {} }, // planned → in_progress
        { type: "note:added", data: { text: "another" } },
        { type: "note:added", data: { text: "and a third" } },
      ];
      for (const step of steps) {
        const r = await b.events.append("t", step);
        expect(await listed(b), `after ${step.type}`).toMatchObject({ lastSeq: r.event.seq, updatedAt: r.event.at, phase: r.phase });
        expect((await b.sessions.status({ sessionId: "t" })).sessions[0]?.lastSeq).toBe(r.event.seq);
      }
      expect(await listed(await reopen())).toMatchObject({ lastSeq: 5, phase: "in_progress", status: "active" });
      const done = await b.events.append("t", { type: "abandon", data: { reason: "not needed" } });
      expect(await listed(b)).toMatchObject({ lastSeq: 6, updatedAt: done.event.at, status: "completed" });
      expect((await b.sessions.list()).map((s) => s.id)).not.toContain("t");
    });

    it("gives contiguous seqs starting at 1 (session:started)", async () => {
      const b = await fresh();
      await b.sessions.start({ flow: "task", id: "t" });
      for (let i = 0; i < 20; i++) await b.events.append("t", { type: "note:added", data: { text: `n${i}` } });
      const { events } = await b.events.list("t");
      expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 21 }, (_, i) => i + 1));
      expect(events[0]!.type).toBe("session:started");
    });

    it("treats a repeated id with the same body as a duplicate and refuses a different body", async () => {
      const b = await fresh();
      const id = await liveSession(b);
      const first = await b.events.append(id, { id: "acc-1", type: "accept", actor: "browser", data: { variantId: "v1" } });
      const dup = await b.events.append(id, { id: "acc-1", type: "accept", actor: "browser", data: { variantId: "v1" } });
      expect(dup.duplicate).toBe(true);
      expect(dup.event.seq).toBe(first.event.seq);
      expect(dup.outcome).toBe("moved");
      const details = await expectError(
        b.events.append(id, { id: "acc-1", type: "accept", actor: "browser", data: { variantId: "v3" } }),
        "conflict",
      );
      expect(details.seq).toBe(first.event.seq);
      const { events } = await b.events.list(id);
      expect(events.filter((e) => e.type === "accept")).toHaveLength(1);
      expect((await b.sessions.snapshot(id)).context.variantId).toBe("v1");
    });

    it("refuses an invalid transition with the phase and allowed events, and appends nothing", async () => {
      const b = await fresh();
      await b.sessions.start({ flow: "live-variant", id: "lv" });
      const details = await expectError(
        b.events.append("lv", { type: "accepted", actor: "agent", data: { carbonize: true } }),
        "invalid_transition",
      );
      expect(details.phase).toBe("configuring");
      expect(details.allowed).toContain("generate");
      expect((await b.events.list("lv")).events).toHaveLength(1);
      expect((await b.sessions.snapshot("lv")).phase).toBe("configuring");
    });

    it("refuses unknown event types and bad facet data without appending", async () => {
      const b = await fresh();
      await b.sessions.start({ flow: "task", id: "t" });
      await expectError(b.events.append("t", { type: "launch_rockets" }), "bad_input");
      await expectError(b.events.append("t", { type: "decision:added", data: { reason: "no decision field" } }), "bad_input");
      await expectError(b.events.append("t", { type: "made:up" }), "bad_input");
      await expectError(b.events.append("nope", { type: "start" }), "not_found");
      expect((await b.events.list("t")).events).toHaveLength(1);
    });

    it("appends a batch atomically: one bad event rejects the whole batch", async () => {
      const b = await fresh();
      await b.sessions.start({ flow: "task", id: "t" });
      await expectError(
        b.events.appendBatch("t", [{ type: "start" }, { type: "note:added", data: { text: "ok" } }, { type: "start" }]),
        "invalid_transition",
      );
      expect((await b.events.list("t")).events).toHaveLength(1);
      const ok = await b.events.appendBatch("t", [{ type: "start" }, { type: "note:added", data: { text: "a" } }, { type: "verify" }]);
      expect(ok.map((r) => r.event.seq)).toEqual([2, 3, 4]);
      expect((await b.sessions.snapshot("t")).phase).toBe("verifying");
    });

    it("appends that do not wait for the disk (relaxed) are appends like any other: ids, transitions, batches, reads", async () => {
      const b = await fresh();
      await b.sessions.start({ flow: "task", id: "t" });
      const relaxed = { durability: "relaxed" } as const;
      const first = await b.events.append("t", { id: "r-1", type: "start" }, relaxed);
      expect([first.event.seq, first.phase, first.duplicate]).toEqual([2, "in_progress", false]);
      // The same id again, relaxed or not: the original.
      expect((await b.events.append("t", { id: "r-1", type: "start" })).duplicate).toBe(true);
      expect((await b.events.append("t", { id: "r-1", type: "start" }, relaxed)).duplicate).toBe(true);
      await expectError(b.events.append("t", { type: "start" }, relaxed), "invalid_transition");
      await expectError(
        b.events.appendBatch("t", [{ type: "note:added", data: { text: "x" } }, { type: "start" }], relaxed),
        "invalid_transition",
      );
      const batch = await b.events.appendBatch("t", [{ type: "note:added", data: { text: "a" } }, { type: "verify" }], relaxed);
      expect(batch.map((r) => r.event.seq)).toEqual([3, 4]);
      // A full append after relaxed ones, and a reader that keeps nothing, see them all.
      await b.events.append("t", { type: "note:added", data: { text: "full" } });
      const other = await reopen();
      const { events } = await other.events.list("t");
      expect(events.map((e) => e.type)).toEqual(["session:started", "start", "note:added", "verify", "note:added"]);
      expect((await other.sessions.snapshot("t")).phase).toBe("verifying");
    });

    it("keeps a stale checkpoint and late events after accept as diagnostics without regressing the phase", async () => {
      const b = await fresh();
      const id = await liveSession(b);
      await b.events.append(id, { type: "cycling", actor: "browser" });
      await b.events.append(id, { type: "checkpoint", actor: "browser", revision: 5, data: { paramValues: { hue: 100 } } });
      const stale = await b.events.append(id, { type: "checkpoint", actor: "browser", revision: 4, data: { paramValues: { hue: 1 } } });
      expect(stale.outcome).toBe("stale");
      await b.events.append(id, { type: "accept", actor: "browser", data: { variantId: "v2", paramValues: { hue: 120 } } });
      const late = await b.events.append(id, { type: "checkpoint", actor: "browser", revision: 6, data: { paramValues: { hue: 999 } } });
      expect(late.outcome).toBe("fenced");
      const discard = await b.events.append(id, { type: "discard", actor: "browser" });
      expect(discard.outcome).toBe("fenced");
      const snap = await b.sessions.snapshot(id);
      expect(snap.phase).toBe("accept_pending");
      expect(snap.context.paramValues).toEqual({ hue: 120 });
      expect(snap.diagnostics.map((d) => d.code)).toEqual(["stale_revision", "late_event", "late_event"]);
      const st = (await b.sessions.status()).sessions[0]!;
      expect(st.nextAction.action).toBe("run_accept_cleanup");
    });

    it("hides completed sessions unless asked, and says no_active_session", async () => {
      const b = await fresh();
      await b.sessions.start({ flow: "task", id: "t" });
      await b.events.append("t", { type: "start" });
      await b.events.append("t", { type: "complete" });
      const st = await b.sessions.status();
      expect(st.sessions).toHaveLength(0);
      expect(st.nextAction?.action).toBe("no_active_session");
      const all = await b.sessions.status({ all: true });
      expect(all.sessions.map((s) => [s.sessionId, s.status])).toEqual([["t", "completed"]]);
      expect(await b.sessions.list()).toHaveLength(0);
    });

    it("refolds a corrupted snapshot on read without writing, and rebuild repairs it with a diagnostic", async () => {
      const b = await fresh();
      const id = await liveSession(b);
      await store.raw(
        `UPDATE snapshots SET body = replace(body, '"phase":"variants_written"', '"phase":"configuring"') WHERE session_id = '${id}'`,
      );
      const view = await b.sessions.read(id);
      expect(view.snapshot.phase).toBe("variants_written");
      expect(view.readDiagnostics.map((d) => d.code)).toContain("snapshot_corrupt");
      // The read did not repair it: a second read still reports it.
      expect((await b.sessions.read(id)).readDiagnostics.map((d) => d.code)).toContain("snapshot_corrupt");
      const [r] = await b.sessions.rebuild(id);
      expect(r).toMatchObject({ sessionId: id, repaired: true, phase: "variants_written", lastSeq: 4 });
      const after = await b.sessions.read(id);
      expect(after.readDiagnostics.map((d) => d.code)).toEqual(["snapshot_repaired"]);
      const [again] = await b.sessions.rebuild(id);
      expect(again!.repaired).toBe(false);
    });

    it("reports a corrupt journal row as a diagnostic while the rows before and after still fold", async () => {
      const b = await fresh();
      await b.sessions.start({ flow: "task", id: "t" });
      await b.events.append("t", { type: "start" });
      await b.events.append("t", { type: "decision:added", data: { decision: "use sqlite" } });
      await b.events.append("t", { type: "decision:added", data: { decision: "keep the journal" } });
      await store.raw(`UPDATE events SET data = '{not json' WHERE session_id = 't' AND seq = 3`);
      await store.raw(`DELETE FROM snapshots WHERE session_id = 't'`);
      const view = await b.sessions.read("t");
      expect(view.snapshot.phase).toBe("in_progress");
      expect(view.snapshot.facets.decisions.map((d) => d.decision)).toEqual(["keep the journal"]);
      expect(view.snapshot.diagnostics.find((d) => d.code === "corrupt_event")?.seq).toBe(3);
      const { events, corrupt } = await b.events.list("t");
      expect(events.map((e) => e.seq)).toEqual([1, 2, 4]);
      expect(corrupt.map((d) => d.seq)).toEqual([3]);
      // Appends continue after the corrupt row.
      const next = await b.events.append("t", { type: "verify" });
      expect(next.event.seq).toBe(5);
    });

    it("keeps reads exact while the stored snapshot lags, and interleaved writers never fold from a stale cache", async () => {
      const b = await fresh();
      await b.sessions.start({ flow: "task", id: "t" });
      const other = await reopen();
      for (let i = 0; i < 150; i++) {
        const writer = i % 7 === 3 ? other : b;
        await writer.events.append("t", { type: "decision:added", data: { decision: `d${i}` } });
      }
      for (const reader of [b, other]) {
        const snap = await reader.sessions.snapshot("t");
        expect(snap.lastSeq).toBe(151);
        expect(snap.facets.decisions.map((d) => d.decision)).toEqual(Array.from({ length: 100 }, (_, i) => `d${i + 50}`));
      }
      const [r] = await b.sessions.rebuild("t");
      expect(r).toMatchObject({ repaired: false, lastSeq: 151 });
    });

    it("resolves markers from files: carbonize → run_carbonize_cleanup, original-only wrapper → continue_writing_variants", async () => {
      const b = await fresh();
      const _id = await liveSession(b);
      mkdirSync(join(root, "src"), { recursive: true });
      const file = join(root, "src/Hero.html");
      writeFileSync(
        file,
        "<section>\n<!-- baton-variants-start -->\n<div data-baton-original>Hi</div>\n<!-- baton-variants-end -->\n</section>\n",
      );
      expect((await b.sessions.status()).sessions[0]!.nextAction.action).toBe("continue_writing_variants");
      writeFileSync(file, "<section>\n<!-- baton-carbonize-start -->\n<div>v2</div>\n<!-- baton-carbonize-end -->\n</section>\n");
      const st = (await b.sessions.status()).sessions[0]!;
      expect(st.nextAction.action).toBe("run_carbonize_cleanup");
      expect(st.markers[0]).toMatchObject({ file: "src/Hero.html", line: 2, marker: "carbonize" });
    });

    it("runs concurrent writers as if one after another: a failing one changes nothing, the others all land", async () => {
      const b = await fresh();
      await b.sessions.start({ flow: "task", id: "t" });
      await b.sessions.start({ flow: "live-variant", id: "lv" });
      await b.events.append("t", { id: "pre", type: "note:added", data: { text: "pre" } });
      const notes = Array.from({ length: 30 }, (_, i) => b.events.append("t", { type: "note:added", data: { text: `n${i}` } }));
      // Started together: a batch whose second event is refused (its id was used for another
      // body) stores neither of its events; an invalid transition and a conflicting id fail alone.
      const batch = b.events.appendBatch("t", [
        { type: "note:added", data: { text: "batch-1" } },
        { id: "pre", type: "note:added", data: { text: "changed" } },
      ]);
      const invalid = b.events.append("lv", { type: "accepted", actor: "agent", data: { carbonize: true } });
      const first = b.events.append("t", { id: "same", type: "note:added", data: { text: "one" } });
      const clash = b.events.append("t", { id: "same", type: "note:added", data: { text: "two" } });
      const settled = await Promise.allSettled([...notes, batch, invalid, first, clash]);
      expect(settled.slice(0, 30).every((s) => s.status === "fulfilled")).toBe(true);
      const failed = settled.slice(30).map((s) => (s.status === "rejected" ? (s.reason as { code?: string }).code : "ok"));
      expect(failed).toEqual(["conflict", "invalid_transition", "ok", "conflict"]);
      const check = async (x: Baton) => {
        const { events } = await x.events.list("t");
        expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 33 }, (_, i) => i + 1));
        const texts = events.map((e) => (e.data as { text?: string }).text);
        expect(texts).not.toContain("batch-1");
        expect(texts).not.toContain("changed");
        expect(texts).toContain("one");
        expect(texts.filter((t) => t?.startsWith("n"))).toHaveLength(30);
        expect((await x.events.list("lv")).events).toHaveLength(1);
      };
      await check(b);
      await check(await reopen());
    });

    it("keeps request order between reads and writes: a read sees the writes asked for before it, not after", async () => {
      const b = await fresh();
      await b.sessions.start({ flow: "task", id: "t" });
      const before = b.events.append("t", { type: "note:added", data: { text: "before" } });
      const read = b.events.list("t");
      const after = b.events.append("t", { type: "note:added", data: { text: "after" } });
      await Promise.all([before, after]);
      const seen = (await read).events.map((e) => (e.data as { text?: string }).text);
      expect(seen).toContain("before");
      expect(seen).not.toContain("after");
      expect((await b.events.list("t")).events).toHaveLength(3);
    });

    it("recovers a lost completion: markers gone after accept cleanup → acknowledge_completion, and complete resolves it", async () => {
      const b = await fresh();
      const id = await liveSession(b);
      mkdirSync(join(root, "src"), { recursive: true });
      const file = join(root, "src/Hero.html");
      writeFileSync(file, "<!-- baton-carbonize-start -->\n<div>v2</div>\n<!-- baton-carbonize-end -->\n");
      await b.events.append(id, { type: "accept", actor: "browser", data: { variantId: "v2" } });
      await b.events.append(id, { type: "accepted", actor: "agent", data: { carbonize: true } });
      await expectError(b.sessions.complete(id), "source_dirty");
      writeFileSync(file, "<div>v2</div>\n");
      expect((await b.sessions.status()).sessions[0]!.nextAction.action).toBe("acknowledge_completion");
      const done = await b.sessions.complete(id);
      expect(done).toMatchObject({ phase: "complete", alreadyComplete: false });
      expect((await b.sessions.complete(id)).alreadyComplete).toBe(true);
      expect((await b.sessions.status()).nextAction?.action).toBe("no_active_session");
    });

    it("insertEventsAt stores only while the session is where the caller saw it, and changes nothing otherwise", async () => {
      const b = await fresh();
      await b.sessions.start({ flow: "task", id: "t" }); // seq 1
      const at = new Date().toISOString();
      const row = (seq: number) => ({
        sessionId: "t",
        seq,
        id: `ev-${seq}`,
        type: "note:added",
        actor: "user",
        data: JSON.stringify({ text: `n${seq}` }),
        revision: null,
        at,
        bodyHash: "0".repeat(64),
        outcome: "recorded",
      });
      const move = (lastSeq: number) => ({ id: "t", phase: "in_progress", status: "active" as const, updatedAt: at, lastSeq });
      const put = (expect: { lastSeq: number; flow: string }, seq: number) =>
        store.backend.transaction("write", (tx) => tx.insertEventsAt(expect, [row(seq)], move(seq)), { oneStatement: true });
      expect(await put({ lastSeq: 1, flow: "task" }, 2), "at seq 1: stored").toBe(true);
      expect(await put({ lastSeq: 1, flow: "task" }, 2), "no longer at seq 1").toBe(false);
      // PostgreSQL's row update checks the flow too (SQLite takes it as given: a flow never changes).
      if (name === "postgres") expect(await put({ lastSeq: 2, flow: "live-variant" }, 3), "another flow").toBe(false);
      await b.events.append("t", { type: "note:added", data: { text: "by another writer" } }); // seq 3
      expect(await put({ lastSeq: 2, flow: "task" }, 3), "another writer appended since").toBe(false);
      expect(await put({ lastSeq: 3, flow: "task" }, 4)).toBe(true);
      const { events } = await b.events.list("t");
      expect(events.map((e) => [e.seq, e.id])).toEqual([
        [1, events[0]!.id],
        [2, "ev-2"],
        [3, events[2]!.id],
        [4, "ev-4"],
      ]);
      expect(events[2]!.data).toEqual({ text: "by another writer" });
      expect((await b.sessions.snapshot("t")).lastSeq).toBe(4);
    });
  });
}

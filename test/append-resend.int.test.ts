/**
 * On a server store a connection can drop during COMMIT: the append may or may not have landed.
 * The journal re-sends the batch once with the same event ids (generated ones included), so the
 * caller hears one outcome and the journal holds each event once. Simulated over a real SQLite
 * store: the wrapper commits, then reports the commit's outcome as unknown.
 */
import { afterAll, describe, expect, it } from "vitest";
import type { Backend } from "../src/backend/contract.js";
import { SqliteBackend } from "../src/backend/sqlite/sqlite-backend.js";
import { openBaton } from "../src/compose.js";
import { BatonError } from "../src/index.js";
import { ensureWorkspace, workspaceAt } from "../src/platform/workspace.js";
import { cleanupDirs, tempDir } from "./helpers.js";

/** A backend that behaves like a server store and loses the answer to the next `lose` commits. */
function flaky(inner: Backend, state: { lose: number; committedButLost: number; rolledBack?: boolean }): Backend {
  return new Proxy(inner, {
    get(target, prop) {
      if (prop === "capabilities") return { ...target.capabilities, serialWrites: false, uncertainCommits: true };
      if (prop === "transaction") {
        return async (mode: "read" | "write", fn: (tx: unknown) => Promise<unknown>, opts?: never) => {
          if (mode === "write" && state.lose > 0 && state.rolledBack) {
            // The lost COMMIT did not land: run the work, roll it back, report the outcome unknown.
            const undo = new Error("undo");
            await target
              .transaction(
                mode,
                (async (tx: unknown) => {
                  await fn(tx);
                  throw undo;
                }) as never,
                opts,
              )
              .catch((e) => {
                if (e !== undo && (e as { cause?: unknown }).cause !== undo) throw e;
              });
            state.lose--;
            throw new BatonError("storage_unavailable", "the connection was lost during COMMIT", { outcome: "unknown" });
          }
          const result = await target.transaction(mode, fn as never, opts);
          if (mode === "write" && state.lose > 0) {
            state.lose--;
            state.committedButLost++;
            throw new BatonError("storage_unavailable", "the connection was lost during COMMIT", { outcome: "unknown" });
          }
          return result;
        };
      }
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

describe("append with an unknown commit outcome", () => {
  afterAll(() => cleanupDirs());

  it("re-sends once with the same ids: each event is stored once and the caller hears success", async () => {
    const root = tempDir();
    const ws = workspaceAt(root);
    ensureWorkspace(ws);
    const state = { lose: 0, committedButLost: 0 };
    const b = await openBaton({ root, backend: flaky(new SqliteBackend({ path: ws.dbPath }), state) });
    try {
      await b.sessions.start({ flow: "task", id: "t" });
      state.lose = 1;
      const r = await b.events.appendBatch("t", [
        { type: "note:added", data: { text: "generated id" } },
        { type: "note:added", id: "mine", data: { text: "caller id" } },
      ]);
      expect(state.committedButLost).toBe(1);
      expect(r.map((x) => x.duplicate)).toEqual([false, false]);
      const texts = (await b.events.list("t")).events.map((e) => (e.data as { text?: string }).text).filter(Boolean);
      expect(texts).toEqual(["generated id", "caller id"]);
      // Twice in a row: the second loss is reported, not retried forever.
      state.lose = 2;
      const err = await b.events.append("t", { type: "note:added", data: { text: "twice" } }).catch((e) => e);
      expect(err.code).toBe("storage_unavailable");
      // ...as an unknown outcome, with the id that makes a later re-send store it at most once.
      expect(err.details).toMatchObject({ outcome: "unknown", ids: [expect.stringMatching(/^ev_/)] });
      expect(err.message).toContain("outcome is unknown");
      const twice = () => b.events.list("t").then((l) => l.events.filter((e) => (e.data as { text?: string }).text === "twice").length);
      expect(await twice()).toBe(1);
      const again = await b.events.append("t", { type: "note:added", id: err.details.ids[0], data: { text: "twice" } });
      expect(again.duplicate).toBe(true);
      expect(await twice()).toBe(1);
    } finally {
      await b.close();
    }
  });

  it("keeps a caller id that was already in the journal a duplicate after the re-send", async () => {
    const root = tempDir();
    const ws = workspaceAt(root);
    ensureWorkspace(ws);
    const state = { lose: 0, committedButLost: 0 };
    const b = await openBaton({ root, backend: flaky(new SqliteBackend({ path: ws.dbPath }), state) });
    try {
      await b.sessions.start({ flow: "task", id: "t" });
      await b.events.append("t", { type: "note:added", id: "mine", data: { text: "caller id" } });
      state.lose = 1;
      const r = await b.events.appendBatch("t", [
        { type: "note:added", data: { text: "new" } },
        { type: "note:added", id: "mine", data: { text: "caller id" } },
      ]);
      expect(state.committedButLost).toBe(1);
      expect(r.map((x) => x.duplicate)).toEqual([false, true]);
      const texts = (await b.events.list("t")).events.map((e) => (e.data as { text?: string }).text).filter(Boolean);
      expect(texts).toEqual(["caller id", "new"]);
    } finally {
      await b.close();
    }
  });

  it("re-sends before a read the same caller asked for after the append", async () => {
    const root = tempDir();
    const ws = workspaceAt(root);
    ensureWorkspace(ws);
    const state = { lose: 0, committedButLost: 0, rolledBack: true };
    const b = await openBaton({ root, backend: flaky(new SqliteBackend({ path: ws.dbPath }), state) });
    try {
      await b.sessions.start({ flow: "task", id: "t" });
      state.lose = 1;
      const appended = b.events.append("t", { type: "note:added", data: { text: "asked first" } });
      const read = b.events.list("t");
      const [a, { events }] = await Promise.all([appended, read]);
      expect(a.duplicate).toBe(false);
      expect(events.map((e) => e.seq)).toContain(a.event.seq);
    } finally {
      await b.close();
    }
  });

  it("a turn judged in its append, whose commit answer was lost, is re-sent as decided: the spiral it detected is reported once", async () => {
    for (const rolledBack of [false, true]) {
      const root = tempDir();
      const ws = workspaceAt(root);
      ensureWorkspace(ws);
      const state = { lose: 0, committedButLost: 0, rolledBack };
      const b = await openBaton({ root, backend: flaky(new SqliteBackend({ path: ws.dbPath }), state) });
      try {
        await b.sessions.start({ flow: "task", id: "sp" });
        const same = { tool: "Edit", argsHash: "patch-1", status: "error" as const };
        expect((await b.turns.record("sp", same)).detected).toBe(false);
        expect((await b.turns.record("sp", same)).detected).toBe(false);
        state.lose = 1;
        // The third repeat detects the spiral; its commit is lost (landed, or rolled back).
        const third = await b.turns.record("sp", same);
        expect(third).toMatchObject({ detected: true, turn: { duplicate: false }, spiral: { paused: true } });
        const types = (await b.events.list("sp")).events.map((e) => e.type);
        expect(types.filter((t) => t === "turn:recorded")).toHaveLength(3);
        expect(types.filter((t) => t === "spiral:detected")).toHaveLength(1);
        // Lost twice: an unknown outcome, with the ids of both events of the decision.
        state.lose = 2;
        const err = await b.turns.record("sp", { ...same, id: "turn-lost" }).catch((e) => e);
        expect(err.details).toMatchObject({ outcome: "unknown", ids: ["turn-lost"] });
      } finally {
        await b.close();
      }
    }
  });
});

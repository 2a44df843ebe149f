/**
 * The checkpoints contract: the storage primitives every backend serves for checkpoints and
 * their manifest runs, pins and pruning, the per-workspace stat cache and lessons index, and
 * the cases only an engine with concurrent writers can fail (two writers checkpointing one
 * session past retention while pins change). Lanes and pruning are decided in services
 * (services/time-travel/manifests.ts); a backend only stores and answers, so the same rows must come back
 * from every engine.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { Backend, CheckpointFileRow, CheckpointRow, ManifestRunRow } from "../../src/backend/contract.js";
import { openBaton, servicesOf } from "../../src/compose.js";
import type { CheckpointFile } from "../../src/core/time-travel/checkpoints.js";
import { type Baton, isBatonError } from "../../src/index.js";
import { cleanupDirs, tempDir, writeAt } from "../helpers.js";
import { unclosable } from "./concurrency-contract.js";
import type { ContractStore, StoreFactory } from "./journal-contract.js";

/** Runs that hold no live checkpoint of their lane: there must never be any. */
const DEAD_RUNS = `SELECT count(*) AS n FROM manifest_runs r WHERE NOT EXISTS (
  SELECT 1 FROM checkpoints c WHERE c.lane = r.lane AND c.pruned_at IS NULL
  AND c.seq >= r.from_seq AND (r.until_seq IS NULL OR c.seq < r.until_seq))`;

const file = (path: string, hash: string): CheckpointFileRow => ({ path, state: "file", hash, mode: 0o644, size: 1, note: null });
const H = (c: string) => c.repeat(64);

export function checkpointsContract(name: string, factory: StoreFactory, connections: "separate" | "shared"): void {
  describe(`checkpoints contract: ${name}`, () => {
    const open: Baton[] = [];
    const backends: Backend[] = [];
    afterEach(async () => {
      for (const b of open.splice(0)) await b.close();
      for (const be of backends.splice(0)) await be.close();
    });
    afterAll(() => cleanupDirs());

    async function fresh(root = tempDir(), opts: { retain?: number } = {}): Promise<{ baton: Baton; store: ContractStore }> {
      const store = await factory(root);
      const baton = await openBaton({ root, backend: store.backend, checkpoints: { retain: opts.retain ?? 100 } });
      open.push(baton);
      return { baton, store };
    }

    /** `n` Batons on one store: own connections (`separate`), or one shared backend (SQLite: one writer per process). */
    async function writers(root: string, n: number, retain: number): Promise<{ bs: Baton[]; store: ContractStore }> {
      const store = await factory(root);
      backends.push(store.backend);
      const bs: Baton[] = [];
      for (let i = 0; i < n; i++) {
        const backend = connections === "shared" ? unclosable(store.backend) : (await factory(root)).backend;
        const b = await openBaton({ root, backend, checkpoints: { retain } });
        bs.push(b);
        open.push(b);
      }
      return { bs, store };
    }

    const row = (id: string, seq: number, lane: string, extra: Partial<CheckpointRow> = {}): CheckpointRow => ({
      id,
      sessionId: "t",
      seq,
      kind: lane === id ? "targeted" : "tree",
      lane,
      runId: null,
      turn: null,
      toolName: null,
      parent: null,
      label: null,
      pinned: false,
      restores: null,
      createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString(),
      prunedAt: null,
      fileCount: 0,
      ...extra,
    });
    const run = (f: CheckpointFileRow, from: number, until: number | null = null): ManifestRunRow => ({ ...f, from, until });

    it("stores checkpoints and runs, and answers a lane's queries the same way", async () => {
      const { baton } = await fresh();
      await baton.sessions.start({ flow: "task", id: "t" });
      const be = servicesOf(baton).backend;
      const lane = "tree:t";
      // Three checkpoints of one lane: a.txt unchanged throughout, b.txt changed at 2, c.txt gone at 3.
      await be.transaction("write", async (tx) => {
        const q = tx.checkpoints;
        await q.insertCheckpoint(row("cp-1", 1, lane));
        await q.insertRuns(lane, [run(file("a.txt", H("a")), 1), run(file("b.txt", H("b")), 1), run(file("c.txt", H("c")), 1)]);
        await q.insertCheckpoint(row("cp-2", 2, lane));
        await q.closeRuns(lane, [{ path: "b.txt", from: 1 }], 2);
        await q.insertRuns(lane, [run(file("b.txt", H("d")), 2)]);
        await q.insertCheckpoint(row("cp-3", 3, lane));
        await q.closeRuns(lane, [{ path: "c.txt", from: 1 }], 3);
        await q.insertCheckpoint(row("cp-x", 4, "cp-x"));
        await q.insertRuns("cp-x", [run({ path: "z.txt", state: "absent", hash: null, mode: null, size: null, note: null }, 4)]);
      });
      await be.transaction("read", async (tx) => {
        const q = tx.checkpoints;
        expect((await q.runsAt(lane, 1)).map((f) => [f.path, f.hash])).toEqual([
          ["a.txt", H("a")],
          ["b.txt", H("b")],
          ["c.txt", H("c")],
        ]);
        expect((await q.runsAt(lane, 3)).map((f) => [f.path, f.hash])).toEqual([
          ["a.txt", H("a")],
          ["b.txt", H("d")],
        ]);
        expect((await q.openRuns(lane)).map((r) => [r.path, r.from, r.until]).sort()).toEqual([
          ["a.txt", 1, null],
          ["b.txt", 2, null],
        ]);
        expect((await q.laneHead(lane))?.id).toBe("cp-3");
        expect((await q.lastLiveInLane(lane))?.id).toBe("cp-3");
        expect(await q.liveNeighbours(lane, 2)).toEqual({ before: 1, after: 3 });
        expect(await q.liveNeighbours(lane, 1)).toEqual({ before: null, after: 2 });
        expect((await q.getCheckpoint("cp-x"))?.lane).toBe("cp-x");
        expect(await q.runsAt("cp-x", 4)).toEqual([{ path: "z.txt", state: "absent", hash: null, mode: null, size: null, note: null }]);
        expect((await q.referencedHashes()).sort()).toEqual([H("a"), H("b"), H("c"), H("d")]);
      });
      // Pruning cp-2 (live neighbours 1 and 3) deletes nothing: every run holding 2 holds 1 or 3.
      const gone = await be.transaction("write", async (tx) => {
        const q = tx.checkpoints;
        expect(await q.markPruned("cp-2", "2026-02-01T00:00:00.000Z")).toBe(true);
        return q.deleteRuns(lane, { holding: 2, fromAfter: 1, endsBy: 3 });
      });
      expect(gone).toEqual([]);
      // Pruning cp-1 then (no live one before, cp-3 after): c.txt's and b.txt's first runs die, each hash named once.
      const gone1 = await be.transaction("write", async (tx) => {
        const q = tx.checkpoints;
        expect(await q.markPruned("cp-1", "2026-02-01T00:00:00.000Z")).toBe(true);
        expect(await q.liveNeighbours(lane, 1)).toEqual({ before: null, after: 3 });
        return q.deleteRuns(lane, { holding: 1, fromAfter: -1, endsBy: 3 });
      });
      expect(gone1.sort()).toEqual([H("b"), H("c")]);
      // Pruning the newest (nothing after): runs holding 3 that began after 0 die, open ones included.
      const gone3 = await be.transaction("write", async (tx) => {
        expect(await tx.checkpoints.markPruned("cp-3", "2026-02-01T00:00:00.000Z")).toBe(true);
        return tx.checkpoints.deleteRuns(lane, { holding: 3, fromAfter: -1, endsBy: null });
      });
      expect(gone3.sort()).toEqual([H("a"), H("d")]);
      await be.transaction("read", async (tx) => {
        expect(await tx.checkpoints.openRuns(lane)).toEqual([]);
        expect(await tx.checkpoints.lastLiveInLane(lane)).toBeUndefined();
        expect((await tx.checkpoints.laneHead(lane))?.prunedAt).toBe("2026-02-01T00:00:00.000Z");
        expect(await tx.checkpoints.unreferenced([H("a"), H("z")])).toEqual([H("a"), H("z")]);
      });
    });

    it("keeps the agent lane that took a checkpoint, and finds a lane's last good point (its subagents' too, never a look-alike's)", async () => {
      const { baton } = await fresh();
      await baton.sessions.start({ flow: "task", id: "t" });
      const be = servicesOf(baton).backend;
      // `_` and `%` are LIKE wildcards: a lane whose id holds them must match only itself.
      const a = "claude:a_1%";
      await be.transaction("write", async (tx) => {
        const q = tx.checkpoints;
        await q.insertCheckpoint(row("cp-1", 1, "cp-1", { agentLane: a }));
        await q.insertCheckpoint(row("cp-2", 2, "cp-2", { agentLane: `${a}/sub-7` }));
        await q.insertCheckpoint(row("cp-3", 3, "cp-3", { agentLane: "claude:ab1x" }));
        await q.insertCheckpoint(row("cp-4", 4, "cp-4", { agentLane: `${a}x` }));
        await q.insertCheckpoint(row("cp-5", 5, "cp-5"));
        await q.insertCheckpoint(row("cp-6", 6, "cp-6", { agentLane: a, kind: "safety" }));
      });
      await be.transaction("read", async (tx) => {
        const q = tx.checkpoints;
        expect((await q.getCheckpoint("cp-2"))?.agentLane).toBe(`${a}/sub-7`);
        expect((await q.getCheckpoint("cp-5"))?.agentLane ?? null).toBeNull();
        expect((await q.listCheckpoints("t")).map((c) => c.agentLane ?? null)).toEqual([a, `${a}/sub-7`, "claude:ab1x", `${a}x`, null, a]);
        const end = new Date(Date.UTC(2026, 0, 1, 0, 1)).toISOString();
        expect(await q.lastGoodCheckpoint("t", end)).toBe("cp-5");
        expect(await q.lastGoodCheckpoint("t", end, a), "its subagent's, not a lane whose id only starts the same").toBe("cp-2");
        expect(await q.lastGoodCheckpoint("t", end, "claude:ab1x")).toBe("cp-3");
        expect(await q.lastGoodCheckpoint("t", end, "codex:none")).toBeUndefined();
        expect(await q.lastGoodCheckpoint("t", new Date(Date.UTC(2026, 0, 1, 0, 0, 1)).toISOString(), a)).toBe("cp-1");
      });
    });

    it("keeps a tree checkpoint's rules from outside the workspace, byte for byte, and none for the others", async () => {
      const { baton } = await fresh();
      await baton.sessions.start({ flow: "task", id: "t" });
      const be = servicesOf(baton).backend;
      const rules = JSON.stringify({
        exclude: "*.log",
        infoExclude: { prefix: "app/", text: "notes.txt\n" },
        above: [{ prefix: "app/", text: "ünï\n.env\n" }],
      });
      await be.transaction("write", async (tx) => {
        await tx.checkpoints.insertCheckpoint(row("cp-1", 1, "t-tree", { kind: "tree", outsideRules: rules }));
        await tx.checkpoints.insertCheckpoint(row("cp-2", 2, "cp-2"));
      });
      await be.transaction("read", async (tx) => {
        expect((await tx.checkpoints.getCheckpoint("cp-1"))?.outsideRules).toBe(rules);
        expect((await tx.checkpoints.getCheckpoint("cp-2"))?.outsideRules ?? null).toBeNull();
        expect((await tx.checkpoints.listCheckpoints("t")).map((c) => c.outsideRules ?? null)).toEqual([rules, null]);
      });
      // Pruned, it is never judged by again: its rules go (they would stay forever otherwise).
      await be.transaction("write", async (tx) => {
        expect(await tx.checkpoints.markPruned("cp-1", new Date(Date.UTC(2026, 0, 2)).toISOString())).toBe(true);
      });
      await be.transaction("read", async (tx) => {
        expect((await tx.checkpoints.getCheckpoint("cp-1"))?.outsideRules ?? null).toBeNull();
      });
    });

    it("keeps each lane's newest write of a path, and answers the lanes' queries the same way (services/agents/lanes.ts)", async () => {
      const { baton } = await fresh();
      await baton.sessions.start({ flow: "task", id: "t" });
      const be = servicesOf(baton).backend;
      const T = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
      const a = "claude:a_1%";
      const w = (path: string, lane: string, s: number, hash = `h${s}`) => ({ sessionId: "t", path, lane, at: T(s), hash });
      await be.transaction("write", async (tx) => {
        await tx.lanes.putWrites([w("src/x.ts", a, 1), w("src/y.ts", a, 2), w("src/x.ts", "codex:b", 3), w("README.md", `${a}/sub`, 4)]);
        await tx.lanes.putWrites([w("src/x.ts", a, 5, "")]); // the newest write of a path by a lane replaces the older
        await tx.lanes.putWrites([w("src/z.ts", `${a}x`, 6)]);
      });
      await be.transaction("read", async (tx) => {
        const q = tx.lanes;
        expect(await q.writesOn("t", ["src/x.ts", "nope"])).toEqual([w("src/x.ts", a, 5, ""), w("src/x.ts", "codex:b", 3)]);
        expect(await q.writesOn("other", ["src/x.ts"])).toEqual([]);
        expect(await q.laneWrites("t", a, T(2), 10)).toEqual([w("src/x.ts", a, 5, ""), w("src/y.ts", a, 2)]);
        expect(await q.laneWrites("t", a, T(0), 1)).toEqual([w("src/x.ts", a, 5, "")]);
        expect(await q.countWrites("t", a, T(3))).toBe(1);
        expect(await q.countWrites("t", a, T(0))).toBe(2);
        expect(await q.overlapping("t", [a, "codex:b"], T(0), 10)).toEqual([w("src/x.ts", a, 5, ""), w("src/x.ts", "codex:b", 3)]);
        expect(await q.overlapping("t", [a, "codex:b"], T(4), 10), "only writes since then count").toEqual([]);
        expect(await q.overlapping("t", [a], T(0), 10)).toEqual([]);
      });
      // A lane ends: its writes and its subagents' go; a lane whose id only starts the same stays.
      const dropped = await be.transaction("write", (tx) => tx.lanes.dropLane("t", a));
      expect(dropped).toBe(3);
      await be.transaction("read", async (tx) => {
        expect((await tx.lanes.writesOn("t", ["src/x.ts", "src/y.ts", "README.md", "src/z.ts"])).map((r) => r.lane).sort()).toEqual([
          "claude:a_1%x",
          "codex:b",
        ]);
      });
    });

    it("pins and prunes by compare-and-set: a pinned checkpoint is never pruned, a pruned one never pinned", async () => {
      const { baton } = await fresh();
      await baton.sessions.start({ flow: "task", id: "t" });
      await servicesOf(baton).backend.transaction("write", async (tx) => {
        await tx.checkpoints.insertCheckpoint(row("cp-a", 1, "cp-a"));
        await tx.checkpoints.insertCheckpoint(row("cp-b", 2, "cp-b"));
      });
      const at = "2026-02-01T00:00:00.000Z";
      await servicesOf(baton).backend.transaction("write", async (tx) => {
        const q = tx.checkpoints;
        expect(await q.setPinned("cp-a", true)).toBe(true);
        expect(await q.markPruned("cp-a", at), "pinned: not pruned").toBe(false);
        expect(await q.markPruned("cp-b", at)).toBe(true);
        expect(await q.markPruned("cp-b", at), "pruned once").toBe(false);
        expect(await q.setPinned("cp-b", true), "pruned: not pinned").toBe(false);
        expect(await q.setPinned("cp-b", false), "unpinning is always allowed").toBe(true);
        expect(await q.retentionCandidates("t", 0)).toEqual([]);
      });
      const rows = await servicesOf(baton).backend.transaction("read", (tx) => tx.checkpoints.listCheckpoints("t"));
      expect(rows.map((r) => [r.id, r.pinned, r.prunedAt])).toEqual([
        ["cp-a", true, null],
        ["cp-b", false, at],
      ]);
      await expect(baton.checkpoints.pin("cp-b")).rejects.toMatchObject({ code: "checkpoint_pruned" });
    });

    it("counts the changes of a checkpoint's pin, and only the changes", async () => {
      const { baton } = await fresh();
      await baton.sessions.start({ flow: "task", id: "t" });
      const be = servicesOf(baton).backend;
      await be.transaction("write", (tx) => tx.checkpoints.insertCheckpoint(row("cp-a", 1, "cp-a")));
      const changes = async () => (await be.transaction("read", (tx) => tx.checkpoints.getCheckpoint("cp-a")))?.pinChanges;
      expect(await changes(), "a new checkpoint").toBe(0);
      await be.transaction("write", async (tx) => {
        expect(await tx.checkpoints.setPinned("cp-a", true)).toBe(true);
        expect(await tx.checkpoints.setPinned("cp-a", true), "pinned again: the row matched").toBe(true);
      });
      expect(await changes(), "pinned, then pinned again").toBe(1);
      await be.transaction("write", async (tx) => {
        await tx.checkpoints.setPinned("cp-a", false);
        await tx.checkpoints.setPinned("cp-a", false);
      });
      expect(await changes(), "unpinned, then unpinned again").toBe(2);
      expect((await be.transaction("read", (tx) => tx.checkpoints.listCheckpoints("t"))).map((r) => [r.pinned, r.pinChanges])).toEqual([
        [false, 2],
      ]);
    });

    it("keeps one stat cache per workspace scope, and drops scopes nobody used", async () => {
      const { baton } = await fresh();
      const be = servicesOf(baton).backend;
      const stat = (path: string, hash: string) => ({ path, size: 1, mtimeMs: 1, ctimeMs: 1, ino: 1, mode: 0o644, hash, checkedMs: 2 });
      await be.transaction("write", async (tx) => {
        await tx.checkpoints.putStatCache("host-a:/w", [stat("x", H("1")), stat("y", H("2"))]);
        await tx.checkpoints.bumpStatCacheGeneration("host-a:/w", 1_000);
        await tx.checkpoints.putStatCache("host-b:/w", [stat("x", H("3"))]);
        await tx.checkpoints.bumpStatCacheGeneration("host-b:/w", 5_000);
      });
      await be.transaction("read", async (tx) => {
        expect((await tx.checkpoints.statCache("host-a:/w")).map((r) => r.hash).sort()).toEqual([H("1"), H("2")]);
        expect((await tx.checkpoints.statCache("host-b:/w")).map((r) => r.hash)).toEqual([H("3")]);
        expect(await tx.checkpoints.statCacheGeneration("host-a:/w")).toBe(1);
        expect(await tx.checkpoints.statCacheGeneration("host-c:/w")).toBe(0);
      });
      // A collected blob leaves every scope's cache, and only the scopes that lost an entry change generation.
      await be.transaction("write", (tx) => tx.checkpoints.forgetStatCacheHashes([H("3")]));
      await be.transaction("read", async (tx) => {
        expect(await tx.checkpoints.statCache("host-b:/w")).toEqual([]);
        expect(await tx.checkpoints.statCacheGeneration("host-b:/w")).toBe(2);
        expect(await tx.checkpoints.statCacheGeneration("host-a:/w")).toBe(1);
      });
      await be.transaction("write", (tx) => tx.checkpoints.deleteStatCache("host-a:/w", ["y"]));
      // Noted as used without a change: only when last noted before the threshold, the generation kept.
      await be.transaction("write", async (tx) => {
        await tx.checkpoints.touchStatScope("host-b:/w", 9_000, 6_000);
        await tx.checkpoints.touchStatScope("host-a:/w", 1_500, 500);
      });
      expect(await be.transaction("write", (tx) => tx.checkpoints.dropStatScopes(6_000))).toBe(1);
      expect(await be.transaction("read", (tx) => tx.checkpoints.statCacheGeneration("host-a:/w"))).toBe(0);
      await be.transaction("read", async (tx) => {
        expect(await tx.checkpoints.statCache("host-a:/w")).toEqual([]);
        expect(await tx.checkpoints.statCacheGeneration("host-b:/w")).toBe(2);
      });
    });

    it("storing a blob that is stored already keeps its content and moves its stored time forward, never back", async () => {
      const { baton } = await fresh();
      const be = servicesOf(baton).backend;
      const put = (data: string, ms: number) => be.transaction("write", (tx) => tx.checkpoints.putBlob(H("b"), Buffer.from(data), ms));
      const stored = async () => {
        const [listed, data] = await be.transaction("read", async (tx) => [
          await tx.checkpoints.listBlobs(),
          await tx.checkpoints.getBlob(H("b")),
        ]);
        return { listed, data: Buffer.from(data as Uint8Array).toString() };
      };
      expect(await put("Rfirst", 1_000), "stored now").toBe(true);
      // An old orphan a new checkpoint names again: young again for gc's grace period.
      expect(await put("Rfirst", 9_000), "stored already").toBe(false);
      expect(await stored()).toEqual({ listed: [{ hash: H("b"), storedMs: 9_000 }], data: "Rfirst" });
      expect(await put("Rfirst", 5_000)).toBe(false);
      expect((await stored()).listed).toEqual([{ hash: H("b"), storedMs: 9_000 }]);
    });

    it("keeps one lessons index per workspace scope", async () => {
      const { baton } = await fresh();
      const be = servicesOf(baton).backend;
      await be.transaction("write", async (tx) => {
        await tx.lessons.replaceIndex(
          "host-a:/w",
          "ha",
          [{ id: "a1", text: "Regenerate the lockfile after upgrading" }],
          "2026-01-01T00:00:00Z",
        );
        await tx.lessons.replaceIndex(
          "host-b:/w",
          "hb",
          [{ id: "b1", text: "Regenerate the schema before testing" }],
          "2026-03-01T00:00:00Z",
        );
      });
      await be.transaction("read", async (tx) => {
        expect((await tx.lessons.indexState("host-a:/w"))?.hash).toBe("ha");
        expect(await tx.lessons.indexState("host-b:/w")).toEqual({ hash: "hb", usedAt: "2026-03-01T00:00:00Z" });
        if (be.capabilities.fullTextSearch) {
          expect((await tx.lessons.search("host-a:/w", ["regenerate"], 10)).map((r) => r.id)).toEqual(["a1"]);
          expect((await tx.lessons.search("host-b:/w", ["regenerate"], 10)).map((r) => r.id)).toEqual(["b1"]);
        }
      });
      // Rebuilding one scope leaves the other's as it was.
      await be.transaction("write", (tx) => tx.lessons.replaceIndex("host-a:/w", "ha2", [], "2026-01-02T00:00:00Z"));
      expect((await be.transaction("read", (tx) => tx.lessons.indexState("host-b:/w")))?.hash).toBe("hb");
      // Noted as used only when last noted before the threshold; a used index is not dropped.
      await be.transaction("write", async (tx) => {
        await tx.lessons.touchIndex("host-b:/w", "2026-03-05T00:00:00Z", "2026-03-01T00:00:00Z");
        await tx.lessons.touchIndex("host-a:/w", "2026-02-15T00:00:00Z", "2026-02-10T00:00:00Z");
      });
      expect(await be.transaction("read", (tx) => tx.lessons.indexState("host-b:/w"))).toEqual({
        hash: "hb",
        usedAt: "2026-03-01T00:00:00Z",
      });
      expect(await be.transaction("write", (tx) => tx.lessons.dropIndexes("2026-02-01T00:00:00Z"))).toBe(0);
      expect(await be.transaction("write", (tx) => tx.lessons.dropIndexes("2026-02-20T00:00:00Z"))).toBe(1);
      expect(await be.transaction("read", (tx) => tx.lessons.indexState("host-a:/w"))).toBeUndefined();
    });

    it("a session's tree checkpoints share a lane: only changed paths add rows, and retention leaves no dead run", async () => {
      const root = tempDir();
      for (let i = 0; i < 20; i++) writeAt(root, `src/f${i}.txt`, `file ${i} v0\n`);
      const { baton, store } = await fresh(root, { retain: 3 });
      await baton.sessions.start({ flow: "task", id: "t" });
      const recorded = new Map<string, CheckpointFile[]>();
      const runs = async () => Number((await store.rows("SELECT count(*) AS n FROM manifest_runs"))[0]?.n);
      const first = await baton.checkpoints.create("t", { all: true });
      recorded.set(first.checkpoint.id, first.checkpoint.files);
      expect(await runs()).toBe(20);
      for (let k = 1; k <= 6; k++) {
        writeFileSync(join(root, `src/f${k}.txt`), `file ${k} v${k}\n`);
        const r = await baton.checkpoints.create("t", k % 3 === 0 ? { files: [`src/f${k}.txt`] } : { all: true });
        recorded.set(r.checkpoint.id, r.checkpoint.files);
        expect(Number((await store.rows(DEAD_RUNS))[0]?.n), `after checkpoint ${k}`).toBe(0);
      }
      const live = await baton.checkpoints.list("t");
      expect(live.length).toBe(3);
      for (const c of live) expect((await baton.checkpoints.get(c.id)).files).toEqual(recorded.get(c.id));
      // Retention kept 3 checkpoints: a tree lane's rows stay near the tree's size, not 20 per checkpoint.
      expect(await runs()).toBeLessThan(20 + 12);
    });

    it("lists only the checkpoints whose id starts with a prefix (an agent's call finds its own), live or pruned too", async () => {
      const root = tempDir();
      writeAt(root, "a.txt", "a\n");
      const { baton } = await fresh(root, { retain: 3 });
      await baton.sessions.start({ flow: "task", id: "t" });
      await baton.sessions.start({ flow: "task", id: "u" });
      for (const id of ["cp-call1", "cp-call1x", "cp-call2", "cp-other_1", "cp-otherX1", "cp-call1y"])
        await baton.checkpoints.create("t", { files: ["a.txt"], id });
      await baton.checkpoints.create("u", { files: ["a.txt"], id: "cp-call1u" }); // another session's
      // Retention (3) pruned cp-call1 and cp-call1x: live, only cp-call1y starts with cp-call1.
      expect((await baton.checkpoints.list("t", { idPrefix: "cp-call1" })).map((c) => c.id)).toEqual(["cp-call1y"]);
      expect((await baton.checkpoints.list("t", { idPrefix: "cp-call1", includePruned: true })).map((c) => c.id)).toEqual([
        "cp-call1",
        "cp-call1x",
        "cp-call1y",
      ]);
      // A character LIKE would read as a pattern matches only itself.
      expect((await baton.checkpoints.list("t", { idPrefix: "cp-other_" })).map((c) => c.id)).toEqual(["cp-other_1"]);
      expect(await baton.checkpoints.list("t", { idPrefix: "cp-nothing" })).toEqual([]);
      // What cannot start a checkpoint id is refused, the same on every store.
      for (const idPrefix of ["", "cp-other%", "cp-\0", "cp-é", "x".repeat(65)])
        await expect(baton.checkpoints.list("t", { idPrefix }), JSON.stringify(idPrefix)).rejects.toMatchObject({ code: "bad_input" });
    });

    it("two writers checkpointing one session past retention while pins change: no lost or double-pruned checkpoint, pins kept", async () => {
      const root = tempDir();
      for (let i = 0; i < 6; i++) writeAt(root, `t/f${i}.txt`, `tree ${i}\n`);
      const retain = 2;
      const { bs, store } = await writers(root, 3, retain);
      const [a, b, pinner] = bs as [Baton, Baton, Baton];
      await a.sessions.start({ flow: "task", id: "t" });
      const recorded = new Map<string, CheckpointFile[]>();
      const prunedBy: string[] = [];
      const rounds = 8;
      let stop = false;
      const pinned = new Set<string>();
      const refused: string[] = [];
      const writer = async (w: Baton, me: number) => {
        for (let k = 0; k < rounds; k++) {
          // Both write the same tree (one shared lane) and files of their own (lanes of their own).
          writeFileSync(join(root, `t/f${(k + me) % 6}.txt`), `tree ${me}-${k}\n`);
          writeFileSync(join(root, `own${me}.txt`), `writer ${me} round ${k}\n`);
          const r = await w.checkpoints.create("t", k % 2 === 0 ? { all: true } : { files: [`own${me}.txt`] });
          recorded.set(r.checkpoint.id, r.checkpoint.files);
          prunedBy.push(...r.pruned);
        }
      };
      const pinning = (async () => {
        // Pin whatever is live right now, racing the writers' retention.
        while (!stop) {
          const live = await pinner.checkpoints.list("t");
          const c = live[Math.floor(live.length / 2)];
          if (c && !pinned.has(c.id)) {
            try {
              await pinner.checkpoints.pin(c.id, true);
              pinned.add(c.id);
            } catch (err) {
              if (!isBatonError(err, "checkpoint_pruned")) throw err;
              refused.push(c.id);
            }
          }
          await new Promise((r) => setTimeout(r, 5));
        }
      })();
      const settled = await Promise.allSettled([writer(a, 0), writer(b, 1)]);
      stop = true;
      await pinning;
      expect(settled.filter((s) => s.status === "rejected").map((s) => String((s as PromiseRejectedResult).reason))).toEqual([]);
      // One more checkpoint, after every pin: retention's answer is now exact.
      const last = await a.checkpoints.create("t", { files: ["own0.txt"] });
      recorded.set(last.checkpoint.id, last.checkpoint.files);
      prunedBy.push(...last.pruned);

      const all = await a.checkpoints.list("t", { includePruned: true });
      expect(
        all.map((c) => c.seq),
        "every checkpoint has its own seq",
      ).toEqual(Array.from({ length: 2 * rounds + 1 }, (_, i) => i + 1));
      const pruned = all.filter((c) => c.prunedAt);
      expect(new Set(prunedBy).size, "no checkpoint was pruned twice").toBe(prunedBy.length);
      expect([...prunedBy].sort(), "every pruned checkpoint was pruned by one writer").toEqual(pruned.map((c) => c.id).sort());
      for (const c of all) {
        if (c.pinned) expect(c.prunedAt, `pinned ${c.id} is live`).toBeUndefined();
        if (pinned.has(c.id)) expect(c.pinned, `${c.id} stays pinned`).toBe(true);
      }
      for (const id of refused) expect(all.find((c) => c.id === id)?.prunedAt, `${id}'s pin was refused: it is pruned`).toBeDefined();
      const live = all.filter((c) => !c.prunedAt);
      expect(live.filter((c) => !c.pinned).length, "retention keeps exactly `retain` unpinned").toBe(retain);
      for (const c of live) {
        const back = await b.checkpoints.get(c.id);
        expect(back.files, `${c.id} reads back what it recorded`).toEqual(recorded.get(c.id));
        await b.checkpoints.rollback("t", { to: c.id, dryRun: true }); // every blob it names is there and verifies
      }
      expect(Number((await store.rows(DEAD_RUNS))[0]?.n), "runs that hold no live checkpoint").toBe(0);
    });

    it("a pin racing the retention that would prune its checkpoint: kept pinned and live, or pruned and the pin refused", async () => {
      const root = tempDir();
      writeAt(root, "x.txt", "x\n");
      const { bs } = await writers(root, 2, 1);
      const [a, b] = bs as [Baton, Baton];
      await a.sessions.start({ flow: "task", id: "t" });
      let kept = 0;
      let prunedFirst = 0;
      for (let round = 0; round < 8; round++) {
        writeFileSync(join(root, "x.txt"), `x ${round}\n`);
        const c = await a.checkpoints.create("t", { files: ["x.txt"] });
        const [pin, next] = await Promise.allSettled([
          b.checkpoints.pin(c.checkpoint.id, true),
          a.checkpoints.create("t", { files: ["x.txt"] }),
        ]);
        expect(next.status).toBe("fulfilled");
        const after = (await a.checkpoints.list("t", { includePruned: true })).find((x) => x.id === c.checkpoint.id);
        if (pin.status === "fulfilled") {
          kept++;
          expect(after, "pinned: live").toMatchObject({ pinned: true });
          expect(after?.prunedAt).toBeUndefined();
          await b.checkpoints.pin(c.checkpoint.id, false); // so the next round's retention may prune it
        } else {
          prunedFirst++;
          expect(isBatonError(pin.reason, "checkpoint_pruned"), String(pin.reason)).toBe(true);
          expect(after?.prunedAt).toBeDefined();
          expect(after?.pinned).toBe(false);
        }
      }
      expect(kept + prunedFirst).toBe(8);
    });
  });
}

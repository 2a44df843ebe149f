/**
 * Checkpoints, the blob store, rollback and artifacts on real files in temp workspaces, with
 * the real SQLite store (never mocked). Bad data is planted the way a disk, a hand edit or a
 * hostile process would: through the store's own queries and by writing files.
 */
import { spawnSync } from "node:child_process";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { CheckpointFileRow, CheckpointRow } from "../src/backend/contract.js";
import { servicesOf } from "../src/compose.js";
import { type Baton, isBatonError, openBaton } from "../src/index.js";
import { BlobStore, Blobs, packBlob } from "../src/services/time-travel/blobs.js";
import { cleanupDirs, cli, initWorkspace, tempDir, writeAt, writeConfig } from "./helpers.js";

const open: Baton[] = [];
afterEach(async () => {
  for (const b of open.splice(0)) await b.close();
});
afterAll(() => cleanupDirs());

/** A workspace at `<temp>/ws`, so tests can check that nothing beside it changed. */
async function workspace(opts: Parameters<typeof openBaton>[0] = {}): Promise<{ b: Baton; root: string; sid: string }> {
  const root = join(tempDir(), "ws");
  mkdirSync(root);
  const b = await openBaton({ root, ...opts });
  open.push(b);
  await b.sessions.start({ flow: "task", id: "s1" });
  return { b, root, sid: "s1" };
}

const write = writeAt;
const read = (root: string, rel: string) => readFileSync(join(root, rel), "utf8");

async function expectCode(p: Promise<unknown>, code: string): Promise<Record<string, unknown>> {
  try {
    await p;
  } catch (err) {
    if (!isBatonError(err)) throw err;
    expect(err.code, `expected ${code}, got ${err.code}: ${err.message}`).toBe(code);
    return err.details;
  }
  throw new Error(`expected a ${code} error, but the call succeeded`);
}

function blobFiles(root: string): string[] {
  const dir = join(root, ".baton", "blobs");
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((shard) => readdirSync(join(dir, shard)).map((n) => shard + n));
}

/** Raw SQL on the workspace's database, through its own file (another connection, as a hand edit or a disk would). */
function withDb<T>(root: string, fn: (db: Database.Database) => T): T {
  const db = new Database(join(root, ".baton", "baton.db"));
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

/** Blobs stored in the database: hash → stored form. */
function inlineBlobs(root: string): Map<string, Buffer> {
  return withDb(root, (db) => {
    const rows = db.prepare("SELECT hash, data FROM blobs").all() as { hash: string; data: Buffer }[];
    return new Map(rows.map((r) => [r.hash, r.data]));
  });
}

/** Every stored blob, in either place. */
const allBlobs = (root: string) => [...new Set([...inlineBlobs(root).keys(), ...blobFiles(root)])].sort();

/** Every file under `dir` (relative), for "nothing else changed" checks. */
function snapshotDir(dir: string, base = ""): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(join(dir, base), { withFileTypes: true })) {
    const rel = base ? `${base}/${e.name}` : e.name;
    if (e.name === ".baton") continue;
    if (e.isDirectory()) Object.assign(out, snapshotDir(dir, rel));
    else if (e.isFile()) out[rel] = readFileSync(join(dir, rel), "utf8");
  }
  return out;
}

describe("blob store", () => {
  it("stores equal content once, compressed, and the same blob serves two checkpoints", async () => {
    const { b, root, sid } = await workspace();
    const text = "the same line of text\n".repeat(200);
    write(root, "one.txt", text);
    write(root, "two.txt", text);
    const first = await b.checkpoints.create(sid, { files: ["one.txt", "two.txt"] });
    expect(first.stats.blobsStored, "two files with equal content → one new blob").toBe(1);
    const second = await b.checkpoints.create(sid, { files: ["one.txt"] });
    expect(second.stats.blobsStored, "content already stored → no new blob").toBe(0);
    const inline = inlineBlobs(root);
    expect([...inline.keys()]).toHaveLength(1);
    expect(blobFiles(root), "a small blob lives in the database, not in a file").toEqual([]);
    const [hash] = inline.keys();
    expect(first.checkpoint.files.map((f) => ("hash" in f ? f.hash : null))).toEqual([hash, hash]);
    const stored = inline.get(hash as string) as Buffer;
    expect(stored.length, `a ${text.length}-byte repetitive file should be stored compressed`).toBeLessThan(text.length / 4);
    expect(String.fromCharCode(stored[0] as number), "deflated: method byte D").toBe("D");
    expect((await b.artifacts.get(sid, (await b.artifacts.add(sid, { file: "one.txt" })).id)).content.toString()).toBe(text);
    expect([...inlineBlobs(root).keys()], "the artifact of the same content is the same blob").toEqual([hash]);
  });

  it("detects a corrupt blob on read and restores nothing", async () => {
    const { b, root, sid } = await workspace();
    write(root, "a.txt", "original content that will be checkpointed\n".repeat(10));
    write(root, "b.txt", "b original\n");
    const c = await b.checkpoints.create(sid, { files: ["a.txt", "b.txt"] });
    write(root, "a.txt", "changed a\n");
    write(root, "b.txt", "changed b\n");
    const aHash = (c.checkpoint.files[0] as { hash: string }).hash;
    const bHash = (c.checkpoint.files[1] as { hash: string }).hash;
    const blobs = new Blobs(servicesOf(b).backend, join(root, ".baton", "blobs"));
    expect((await blobs.read(aHash)).toString()).toContain("original content");
    // Flip a byte inside the stored (deflated) blob, keeping its hash, with raw SQL on the database file.
    withDb(root, (db) => {
      const raw = (db.prepare("SELECT data FROM blobs WHERE hash = ?").get(aHash) as { data: Buffer }).data;
      expect(String.fromCharCode(raw[0] as number)).toBe("D");
      raw[raw.length - 2] = (raw[raw.length - 2] as number) ^ 0xff;
      db.prepare("UPDATE blobs SET data = ? WHERE hash = ?").run(raw, aHash);
    });
    await expect(blobs.read(aHash)).rejects.toMatchObject({ code: "blob_corrupt", details: { hash: aHash } });
    const details = await expectCode(b.checkpoints.rollback(sid, { to: c.checkpoint.id }), "blob_corrupt");
    expect(details.hash).toBe(aHash);
    expect(read(root, "a.txt"), "nothing is restored when a blob is corrupt").toBe("changed a\n");
    expect(read(root, "b.txt"), "not even the files whose blobs are fine").toBe("changed b\n");
    // A raw (uncompressed, under 64 bytes) blob with a swapped byte is caught by the hash check too.
    withDb(root, (db) => {
      const raw = (db.prepare("SELECT data FROM blobs WHERE hash = ?").get(bHash) as { data: Buffer }).data;
      expect(String.fromCharCode(raw[0] as number)).toBe("R");
      raw[1] = "B".charCodeAt(0);
      db.prepare("UPDATE blobs SET data = ? WHERE hash = ?").run(raw, bHash);
    });
    await expect(blobs.read(bHash)).rejects.toThrow(/hashes to/);
    // An unknown method byte, and an empty stored form, are corrupt, not content.
    withDb(root, (db) => db.prepare("UPDATE blobs SET data = ? WHERE hash = ?").run(Buffer.from("Xoriginal"), bHash));
    await expect(blobs.read(bHash)).rejects.toMatchObject({ code: "blob_corrupt" });
    withDb(root, (db) => db.prepare("UPDATE blobs SET data = ? WHERE hash = ?").run(Buffer.alloc(0), bHash));
    await expect(blobs.read(bHash)).rejects.toMatchObject({ code: "blob_corrupt" });
    // A blob file (large content) is checked the same way.
    const store = new BlobStore(join(root, ".baton", "blobs"));
    const big = store.put(Buffer.from("tiny"));
    const sfile = store.path(big.hash);
    const sraw = readFileSync(sfile);
    sraw[1] = "T".charCodeAt(0);
    writeFileSync(sfile, sraw);
    await expect(blobs.read(big.hash)).rejects.toThrow(/hashes to/);
  });

  it("collects unreferenced blobs and temp files, in both places, keeps referenced ones", async () => {
    const { b, root, sid } = await workspace();
    write(root, "kept.txt", "kept\n");
    const kept = await b.checkpoints.create(sid, { files: ["kept.txt"] });
    const keptHash = (kept.checkpoint.files[0] as { hash: string }).hash;
    const store = new BlobStore(join(root, ".baton", "blobs"));
    const orphan = store.put(Buffer.from("written by a checkpoint that crashed before committing"));
    // Unfinished writes of a process that died: the name writeFileWhole gives, and the one from before it.
    const shard = join(root, ".baton", "blobs", orphan.hash.slice(0, 2));
    writeFileSync(join(shard, `${orphan.hash.slice(2)}.999999-0a1b2c3d4e5f.tmp`), "partial");
    writeFileSync(join(shard, ".tmp-999999-abc"), "partial");
    // Database blobs nothing references: one stored two hours ago, one just now (a large tree's checkpoint storing ahead).
    const oldText = Buffer.from("a blob whose checkpoint was pruned by hand");
    const newText = Buffer.from("a blob stored ahead of its checkpoint's commit");
    const { sha256 } = await import("../src/core/canonical.js");
    await servicesOf(b).backend.transaction("write", async (tx) => {
      await tx.checkpoints.putBlob(sha256(oldText), packBlob(oldText), Date.now() - 2 * 3_600_000);
      await tx.checkpoints.putBlob(sha256(newText), packBlob(newText), Date.now());
    });
    const fresh = await b.checkpoints.collectGarbage(); // default grace: an hour
    expect(fresh, "only the old database orphan is past the grace period").toMatchObject({ blobsRemoved: 1, tempsRemoved: 0 });
    expect(store.has(orphan.hash)).toBe(true);
    expect([...inlineBlobs(root).keys()].sort()).toEqual([keptHash, sha256(newText)].sort());
    const swept = await b.checkpoints.collectGarbage({ graceMs: -1 });
    expect(swept).toMatchObject({ blobsRemoved: 2, tempsRemoved: 2, blobsKept: 1 });
    expect(store.has(orphan.hash)).toBe(false);
    expect(allBlobs(root), "only the referenced blob is left").toEqual([keptHash]);
    expect(readFileSync(join(root, "kept.txt"), "utf8")).toBe("kept\n");
    write(root, "kept.txt", "changed\n");
    await b.checkpoints.rollback(sid, { to: kept.checkpoint.id });
    expect(read(root, "kept.txt")).toBe("kept\n");
  });
});

describe("retention and pins", () => {
  it("keeps at most `retain` per session, keeps pinned ones, deletes blobs only pruned checkpoints used, and answers checkpoint_pruned", async () => {
    const { b, root, sid } = await workspace({ checkpoints: { retain: 3 } });
    const ids: string[] = [];
    for (let i = 1; i <= 6; i++) {
      write(root, "f.txt", `version ${i}\n`);
      const r = await b.checkpoints.create(sid, { files: ["f.txt"], label: `v${i}` });
      ids.push(r.checkpoint.id);
      if (i === 2) await b.checkpoints.pin(r.checkpoint.id);
    }
    const live = await b.checkpoints.list(sid);
    expect(live.map((c) => c.label)).toEqual(["v2", "v4", "v5", "v6"]);
    expect(live.find((c) => c.label === "v2")?.pinned).toBe(true);
    const all = await b.checkpoints.list(sid, { includePruned: true });
    expect(all.filter((c) => c.prunedAt).map((c) => c.label)).toEqual(["v1", "v3"]);
    expect(allBlobs(root), "blobs of v1 and v3 are gone; v2, v4, v5, v6 remain").toHaveLength(4);
    expect(blobFiles(root), "all of them small: none is a file").toEqual([]);

    const expired = await expectCode(b.checkpoints.rollback(sid, { to: ids[0] }), "checkpoint_pruned");
    expect(expired.oldestAvailable).toMatchObject({ id: ids[1] });
    await expectCode(b.checkpoints.rollback(sid, { steps: 4 }), "checkpoint_pruned"); // v3 is 4 steps back
    await expectCode(b.checkpoints.rollback(sid, { steps: 7 }), "checkpoint_not_found");
    await expectCode(b.checkpoints.rollback(sid, { to: "cp-doesnotexist" }), "checkpoint_not_found");
    expect(read(root, "f.txt"), "a refused rollback changes nothing").toBe("version 6\n");

    // The pinned one still restores, past the pruned v3.
    const r = await b.checkpoints.rollback(sid, { to: ids[1] });
    expect(read(root, "f.txt")).toBe("version 2\n");
    expect(r.warnings.join(" ")).toMatch(/pruned/);

    // Unpinned, it is pruned by the next checkpoint.
    await b.checkpoints.pin(ids[1]!, false);
    await b.checkpoints.create(sid, { files: ["f.txt"] });
    expect((await b.checkpoints.list(sid)).some((c) => c.id === ids[1])).toBe(false);
  });
});

describe("configuration", () => {
  it("reads retain and excludes from .baton/config.json; an option wins; a bad value is bad_input", async () => {
    const { b, root, sid } = await workspace();
    writeConfig(root, { checkpoints: { retain: 2, exclude: ["*.log"] } });
    await b.close();
    const c = await openBaton({ root });
    open.push(c);
    write(root, "a.txt", "a");
    write(root, "debug.log", "noise");
    for (let i = 0; i < 3; i++) await c.checkpoints.create(sid);
    const live = await c.checkpoints.list(sid);
    expect(live).toHaveLength(2);
    expect((await c.checkpoints.get(live[0]!.id)).files.map((f) => f.path)).toEqual(["a.txt"]);
    const d = await openBaton({ root, checkpoints: { retain: 5 } });
    open.push(d);
    for (let i = 0; i < 3; i++) await d.checkpoints.create(sid);
    expect(await d.checkpoints.list(sid)).toHaveLength(5);
    writeConfig(root, { checkpoints: { retain: 0 } });
    const e = await openBaton({ root });
    open.push(e);
    await expectCode(e.checkpoints.create(sid), "bad_input");
    writeConfig(root, { checkpoints: { private: "*.env" } });
    const f = await openBaton({ root });
    open.push(f);
    await expectCode(f.checkpoints.create(sid), "bad_input");
  });

  it("stores no excluded path in any checkpoint: a targeted one records it skipped, and a rollback leaves it as it is", async () => {
    const { b, root, sid } = await workspace();
    write(root, "secrets/token.txt", "v1");
    write(root, "app.ts", "v1");
    // Checkpointed before the exclusion existed: the content is in that checkpoint.
    const before = await b.checkpoints.create(sid, { files: ["secrets/token.txt", "app.ts"] });
    await b.close();
    writeConfig(root, { checkpoints: { exclude: ["secrets/"] } });
    const c = await openBaton({ root });
    open.push(c);
    write(root, "secrets/token.txt", "v2");
    write(root, "app.ts", "v2");
    const cp = await c.checkpoints.create(sid, { files: ["secrets/token.txt", "app.ts"] });
    expect(cp.checkpoint.files).toEqual([
      { path: "app.ts", hash: expect.any(String), mode: expect.any(Number), size: 2 },
      { path: "secrets/token.txt", skipped: "excluded by checkpoints.exclude" },
    ]);
    expect((await c.checkpoints.create(sid, { all: true })).checkpoint.files.map((f) => f.path)).toEqual(["app.ts"]);
    // Not even the safety checkpoint stores it: the rollback keeps it, and says why.
    write(root, "secrets/token.txt", "v3");
    const r = await c.checkpoints.rollback(sid, { to: before.checkpoint.id });
    expect(r.changes.find((x) => x.path === "secrets/token.txt")).toMatchObject({
      action: "kept",
      reason: expect.stringMatching(/checkpoints\.exclude/),
    });
    expect(readFileSync(join(root, "secrets/token.txt"), "utf8")).toBe("v3");
    expect(readFileSync(join(root, "app.ts"), "utf8")).toBe("v1");
    expect((await c.checkpoints.get(r.safety as string)).files.map((f) => f.path)).toEqual(["app.ts"]);
  });

  it("keeps private files in the store on SQLite (it is this machine's), and redacts secrets from a dry run's diff", async () => {
    const { b, root, sid } = await workspace();
    write(root, ".env", "DATABASE_PASSWORD=hunter2-correct-horse\n");
    const cp = await b.checkpoints.create(sid, { files: [".env"] });
    expect(cp.checkpoint.files[0]).not.toHaveProperty("local");
    write(root, ".env", "DATABASE_PASSWORD=battery-staple-99\n");
    const dry = await b.checkpoints.rollback(sid, { to: cp.checkpoint.id, dryRun: true });
    expect(dry.diff).toMatch(/^-DATABASE_PASSWORD=\[redacted/m);
    expect(`${dry.diff}${JSON.stringify(dry.changes)}`).not.toMatch(/hunter2|battery-staple/);
    await b.checkpoints.rollback(sid, { to: cp.checkpoint.id });
    expect(readFileSync(join(root, ".env"), "utf8")).toBe("DATABASE_PASSWORD=hunter2-correct-horse\n");
  });
});

describe("rollback", () => {
  it("removes files a tool created and brings back files it deleted; the rollback is journaled and undoable", async () => {
    const { b, root, sid } = await workspace();
    write(root, "src/keep.ts", "export const a = 1;\n");
    write(root, "src/old.ts", "export const old = true;\n");
    const cp = await b.checkpoints.create(sid, { files: ["src/keep.ts", "src/old.ts", "src/new.ts", "gen/out.js"] });
    expect(cp.checkpoint.files.filter((f) => "absent" in f).map((f) => f.path)).toEqual(["gen/out.js", "src/new.ts"]);
    // The "tool" edits one file, deletes one and creates two.
    write(root, "src/keep.ts", "export const a = 2;\n");
    unlinkSync(join(root, "src/old.ts"));
    write(root, "src/new.ts", "export const n = 1;\n");
    write(root, "gen/out.js", "console.log(1)\n");

    const r = await b.checkpoints.rollback(sid);
    expect(r.target.id).toBe(cp.checkpoint.id);
    expect({ restored: r.restored, removed: r.removed }).toEqual({ restored: 2, removed: 2 });
    expect(read(root, "src/keep.ts")).toBe("export const a = 1;\n");
    expect(read(root, "src/old.ts")).toBe("export const old = true;\n");
    expect(existsSync(join(root, "src/new.ts"))).toBe(false);
    expect(existsSync(join(root, "gen/out.js"))).toBe(false);

    const { events } = await b.events.list(sid);
    const rb = events.filter((e) => e.type.startsWith("rollback:"));
    expect(rb.map((e) => e.type)).toEqual(["rollback:started", "rollback:applied"]);
    expect(rb[1]).toMatchObject({ id: r.rollbackId, data: { target: cp.checkpoint.id, safety: r.safety, restored: 2, removed: 2 } });
    const st = (await b.sessions.status()).sessions[0]!;
    expect(st.lastRollback).toMatchObject({ id: r.rollbackId, state: "applied", restored: 2, removed: 2, safety: r.safety });
    expect(st.suggestions).toEqual([
      expect.objectContaining({ action: "capture_lesson", command: expect.stringContaining(`--from-rollback ${r.rollbackId}`) }),
    ]);
    expect(await b.sessions.stateMarkdown(sid)).toContain(`\`${r.rollbackId}\` to checkpoint \`${cp.checkpoint.id}\``);

    // Undo: roll back to the safety checkpoint.
    const undo = await b.checkpoints.rollback(sid, { to: r.safety! });
    expect(undo.restored + undo.removed).toBe(4);
    expect(read(root, "src/keep.ts")).toBe("export const a = 2;\n");
    expect(existsSync(join(root, "src/old.ts"))).toBe(false);
    expect(read(root, "src/new.ts")).toBe("export const n = 1;\n");
  });

  it("steps: `rollback` twice goes two steps back, `rollback 2` composes the versions of both", async () => {
    const { b, root, sid } = await workspace();
    write(root, "a.txt", "a0\n");
    write(root, "b.txt", "b0\n");
    await b.checkpoints.create(sid, { files: ["a.txt"] });
    write(root, "a.txt", "a1\n");
    await b.checkpoints.create(sid, { files: ["b.txt"] });
    write(root, "b.txt", "b1\n");
    const dry = await b.checkpoints.rollback(sid, { steps: 2, dryRun: true });
    expect(dry.changes.map((c) => [c.path, c.action])).toEqual([
      ["a.txt", "restore"],
      ["b.txt", "restore"],
    ]);
    await b.checkpoints.rollback(sid);
    expect([read(root, "a.txt"), read(root, "b.txt")]).toEqual(["a1\n", "b0\n"]);
    await b.checkpoints.rollback(sid);
    expect([read(root, "a.txt"), read(root, "b.txt")]).toEqual(["a0\n", "b0\n"]);
    await expectCode(b.checkpoints.rollback(sid), "checkpoint_not_found");
  });

  it("--files restores only a subset", async () => {
    const { b, root, sid } = await workspace();
    write(root, "x/1.txt", "one\n");
    write(root, "x/2.txt", "two\n");
    write(root, "y.txt", "why\n");
    await b.checkpoints.create(sid, { files: ["x/1.txt", "x/2.txt", "y.txt"] });
    for (const f of ["x/1.txt", "x/2.txt", "y.txt"]) write(root, f, "edited\n");
    const r = await b.checkpoints.rollback(sid, { files: ["x"] });
    expect(r.changes.map((c) => c.path)).toEqual(["x/1.txt", "x/2.txt"]);
    expect([read(root, "x/1.txt"), read(root, "x/2.txt"), read(root, "y.txt")]).toEqual(["one\n", "two\n", "edited\n"]);
  });

  it("--dry-run shows a unified diff and changes nothing", async () => {
    const { b, root, sid } = await workspace();
    write(root, "doc.md", "# Title\n\nline one\nline two\nline three\n");
    await b.checkpoints.create(sid, { files: ["doc.md", "created.txt"] });
    write(root, "doc.md", "# Title\n\nline one\nline 2\nline three\n");
    write(root, "created.txt", "made by the tool\n");
    const before = snapshotDir(root);
    const r = await b.checkpoints.rollback(sid, { dryRun: true });
    expect(r.dryRun).toBe(true);
    expect(r.rollbackId).toBeUndefined();
    expect(r.diff).toBe(
      [
        "--- a/created.txt",
        "+++ /dev/null",
        "@@ -1,1 +0,0 @@",
        "-made by the tool",
        "--- a/doc.md",
        "+++ b/doc.md",
        "@@ -1,5 +1,5 @@",
        " # Title",
        " ",
        " line one",
        "-line 2",
        "+line two",
        " line three",
        "",
      ].join("\n"),
    );
    expect(snapshotDir(root), "a dry run writes nothing").toEqual(before);
    expect(
      (await b.events.list(sid)).events.some((e) => e.type.startsWith("rollback:")),
      "a dry run journals nothing",
    ).toBe(false);
    expect(await b.checkpoints.list(sid)).toHaveLength(1);
  });
});

describe("hostile manifests never write outside the workspace", () => {
  async function plant(b: Baton, root: string, sid: string, paths: string[]): Promise<string> {
    const store = new BlobStore(join(root, ".baton", "blobs"));
    const { hash } = store.put(Buffer.from("pwned\n"));
    const id = `cp-evil${Math.floor(Math.random() * 1e6)}`;
    const row: CheckpointRow = {
      id,
      sessionId: sid,
      seq: 1000 + Math.floor(Math.random() * 1e6),
      kind: "targeted",
      lane: id,
      runId: null,
      turn: null,
      toolName: null,
      parent: null,
      label: "hostile",
      pinned: true,
      restores: null,
      createdAt: new Date().toISOString(),
      prunedAt: null,
      fileCount: paths.length,
    };
    const files: CheckpointFileRow[] = paths.map((path) => ({ path, state: "file", hash, mode: 0o644, size: 6, note: null }));
    await servicesOf(b).backend.transaction("write", async (tx) => {
      await tx.checkpoints.insertCheckpoint(row);
      await tx.checkpoints.insertRuns(
        row.lane,
        files.map((f) => ({ ...f, from: row.seq, until: null })),
      );
    });
    return id;
  }

  it.each([
    ["../escape.txt"],
    ["../../escape.txt"],
    ["sub/../../escape.txt"],
    ["/tmp/baton-absolute-escape.txt"],
    ["C:/escape.txt"],
    ["sub\\..\\..\\escape.txt"],
    [".baton/baton.db"],
    [".git/hooks/pre-commit"],
    ["ok.txt\0/../../escape"],
  ])("refuses %j, and restores nothing else either", async (bad) => {
    const { b, root, sid } = await workspace();
    write(root, "ok.txt", "untouched\n");
    const id = await plant(b, root, sid, ["ok.txt", bad]);
    const before = snapshotDir(join(root, ".."));
    const details = await expectCode(b.checkpoints.rollback(sid, { to: id }), "unsafe_path");
    expect(details.paths, "the one bad path is named").toHaveLength(1);
    expect(read(root, "ok.txt")).toBe("untouched\n");
    expect(existsSync("/tmp/baton-absolute-escape.txt")).toBe(false);
    expect(snapshotDir(join(root, "..")), "nothing changed beside the workspace").toEqual(before);
  });

  it("refuses a path through a symlinked parent directory, before writing anything", async () => {
    const { b, root, sid } = await workspace();
    const outside = tempDir("baton-outside-");
    symlinkSync(outside, join(root, "link"));
    write(root, "ok.txt", "untouched\n");
    const id = await plant(b, root, sid, ["ok.txt", "link/evil.txt", "link/deeper/evil.txt"]);
    const details = await expectCode(b.checkpoints.rollback(sid, { to: id }), "unsafe_path");
    expect(String(details.reason)).toContain("symbolic link link");
    expect(readdirSync(outside), "nothing written through the link").toEqual([]);
    expect(read(root, "ok.txt")).toBe("untouched\n");
    await expectCode(b.checkpoints.create(sid, { files: ["link/evil.txt"] }), "unsafe_path");
  });

  it("never writes through a symlink at the leaf, nor replaces it (its safety checkpoint could not store the link)", async () => {
    const { b, root, sid } = await workspace();
    const outside = tempDir("baton-outside-");
    writeFileSync(join(outside, "secret.txt"), "outside content\n");
    const id = await plant(b, root, sid, ["target.txt"]);
    symlinkSync(join(outside, "secret.txt"), join(root, "target.txt"));
    const r = await b.checkpoints.rollback(sid, { to: id });
    expect(readFileSync(join(outside, "secret.txt"), "utf8"), "the link's target is untouched").toBe("outside content\n");
    expect(lstatSync(join(root, "target.txt")).isSymbolicLink(), "the link is kept").toBe(true);
    expect(r.changes.find((c) => c.path === "target.txt")?.action).toBe("kept");
    expect(r.warnings.join("\n")).toContain("target.txt: a symbolic link");
  });

  it("of a link to a file not there yet records it absent, so a rollback removes what a write through the link made", async () => {
    const { b, root, sid } = await workspace();
    symlinkSync("AGENTS.md", join(root, "CLAUDE.md"));
    // A loop and a link to a folder bring nothing.
    symlinkSync("loop-b", join(root, "loop-a"));
    symlinkSync("loop-a", join(root, "loop-b"));
    write(root, "src/x.ts", "x\n");
    symlinkSync("src", join(root, "code"));
    const cp = await b.checkpoints.create(sid, { files: ["CLAUDE.md", "loop-a", "code"] });
    expect(cp.checkpoint.files).toEqual([
      { path: "AGENTS.md", absent: true },
      expect.objectContaining({ path: "CLAUDE.md", skipped: expect.any(String) }),
      expect.objectContaining({ path: "code", skipped: expect.any(String) }),
      expect.objectContaining({ path: "loop-a", skipped: expect.any(String) }),
    ]);
    writeFileSync(join(root, "CLAUDE.md"), "made through the link\n");
    expect(read(root, "AGENTS.md")).toBe("made through the link\n");
    await b.checkpoints.rollback(sid, {});
    expect(existsSync(join(root, "AGENTS.md"))).toBe(false);
    expect(lstatSync(join(root, "CLAUDE.md")).isSymbolicLink()).toBe(true);
  });

  it("of a link, in a workspace opened through a link to its folder, takes the target by the workspace's own name", async () => {
    const real = join(tempDir(), "real-ws");
    mkdirSync(real);
    const via = join(tempDir(), "via");
    symlinkSync(real, via);
    const b = await openBaton({ root: via });
    open.push(b);
    await b.sessions.start({ flow: "task", id: "s1" });
    write(real, "AGENTS.md", "notes\n");
    symlinkSync("AGENTS.md", join(real, "CLAUDE.md"));
    const cp = await b.checkpoints.create("s1", { files: ["CLAUDE.md"] });
    expect(cp.checkpoint.files.map((f) => f.path)).toEqual(["AGENTS.md", "CLAUDE.md"]);
  });

  it("of a link inside the workspace keeps the file it leads to: an edit through CLAUDE.md -> AGENTS.md is undone", async () => {
    const { b, root, sid } = await workspace();
    write(root, "AGENTS.md", "the team's notes\n");
    symlinkSync("AGENTS.md", join(root, "CLAUDE.md"));
    write(root, "docs/real.md", "docs\n");
    symlinkSync("../AGENTS.md", join(root, "docs/agents.md"));
    // Links that lead out of the workspace or into Baton's own data add nothing.
    const outside = tempDir("baton-outside-");
    writeFileSync(join(outside, "secret.txt"), "outside content\n");
    symlinkSync(join(outside, "secret.txt"), join(root, "secret.txt"));
    symlinkSync(".baton/baton.db", join(root, "db"));
    const cp = await b.checkpoints.create(sid, { files: ["CLAUDE.md", "docs/agents.md", "secret.txt", "db"] });
    expect(cp.checkpoint.files.map((f) => f.path)).toEqual(["AGENTS.md", "CLAUDE.md", "db", "docs/agents.md", "secret.txt"]);
    expect(cp.checkpoint.files.find((f) => f.path === "AGENTS.md")).toMatchObject({ hash: expect.any(String) });

    writeFileSync(join(root, "CLAUDE.md"), "rewritten through the link\n");
    // Named by the link, as the user knows it: the file it leads to is what comes back.
    const named = await b.checkpoints.rollback(sid, { files: ["CLAUDE.md"], dryRun: true });
    expect(named.changes.find((c) => c.path === "AGENTS.md")?.action).toBe("restore");
    const r = await b.checkpoints.rollback(sid, {});
    expect(read(root, "AGENTS.md")).toBe("the team's notes\n");
    expect(lstatSync(join(root, "CLAUDE.md")).isSymbolicLink(), "the link is kept").toBe(true);
    expect(r.changes.find((c) => c.path === "AGENTS.md")?.action).toBe("restore");
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("outside content\n");
  });
});

describe("whole-tree checkpoints", () => {
  it("see a real `sed -i` edit, trust the stat cache for the rest, and catch an in-place same-size edit with its mtime reset", async () => {
    const { b, root, sid } = await workspace();
    for (let i = 0; i < 20; i++) write(root, `src/f${i}.txt`, `file ${i}: foo\n`);
    const old = new Date(Date.now() - 60_000);
    for (let i = 0; i < 20; i++) utimesSync(join(root, `src/f${i}.txt`), old, old);
    const first = await b.checkpoints.create(sid, { all: true });
    expect(first.stats).toMatchObject({ files: 20, read: 20, cached: 0 });

    const sed = spawnSync("sed", ["-i", "s/foo/bar/", join(root, "src/f3.txt")], { encoding: "utf8" });
    expect(sed.status, sed.stderr).toBe(0);
    expect(read(root, "src/f3.txt")).toBe("file 3: bar\n");
    const second = await b.checkpoints.create(sid, { all: true });
    expect(second.stats, "only the sed-edited file is read again").toMatchObject({ files: 20, read: 1, cached: 19 });
    const f3 = (cp: typeof first) => cp.checkpoint.files.find((f) => f.path === "src/f3.txt") as { hash: string };
    expect(f3(second).hash).not.toBe(f3(first).hash);

    // Same size, same inode, mtime put back: the ctime still gives it away.
    writeFileSync(join(root, "src/f7.txt"), "file 7: fo0\n");
    utimesSync(join(root, "src/f7.txt"), old, old);
    const third = await b.checkpoints.create(sid, { all: true });
    expect(third.checkpoint.files.find((f) => f.path === "src/f7.txt")).toMatchObject({
      hash: (await import("../src/core/canonical.js")).sha256("file 7: fo0\n"),
    });

    // Rolling back to the first tree checkpoint undoes the shell's edits.
    write(root, "made-by-shell.txt", "x\n");
    await b.checkpoints.rollback(sid, { to: first.checkpoint.id });
    expect(read(root, "src/f3.txt")).toBe("file 3: foo\n");
    expect(read(root, "src/f7.txt")).toBe("file 7: foo\n");
    expect(existsSync(join(root, "made-by-shell.txt")), "a file created after a tree checkpoint is removed").toBe(false);
  });

  it("write rows only for changed paths; pruning one keeps the runs newer checkpoints still use", async () => {
    const { b, root, sid } = await workspace({ checkpoints: { retain: 2 } });
    for (let d = 0; d < 5; d++) for (let i = 0; i < 10; i++) write(root, `dir${d}/f${i}.txt`, `d${d} f${i} v0\n`);
    const count = (sql: string) => withDb(root, (db) => (db.prepare(sql).get() as { n: number }).n);
    const runs = () => count("SELECT count(*) AS n FROM manifest_runs");
    const first = await b.checkpoints.create(sid, { all: true });
    expect(runs(), "the first tree checkpoint: one run per file").toBe(50);
    write(root, "dir2/f3.txt", "d2 f3 v1\n");
    unlinkSync(join(root, "dir4/f9.txt"));
    write(root, "dir5/new.txt", "new\n");
    const second = await b.checkpoints.create(sid, { all: true });
    expect(runs(), "one changed and one new file → two new runs (the changed and the removed file's runs are closed)").toBe(52);
    expect(count("SELECT count(*) AS n FROM manifest_runs WHERE until_seq IS NOT NULL")).toBe(2);
    expect(allBlobs(root)).toHaveLength(52);
    write(root, "dir2/f3.txt", "d2 f3 v2\n");
    const third = await b.checkpoints.create(sid, { all: true }); // retain 2: the first checkpoint is pruned
    expect((await b.checkpoints.list(sid)).map((c) => c.id)).not.toContain(first.checkpoint.id);
    expect(runs(), "v0 of dir2/f3.txt and dir4/f9.txt held only the first checkpoint: their runs went with it").toBe(51);
    expect(allBlobs(root), "their blobs too; v1 (second checkpoint) and v2 stay").toHaveLength(51);
    // Each live checkpoint still reads back exactly the files it recorded.
    for (const c of [second, third]) expect((await b.checkpoints.get(c.checkpoint.id)).files).toEqual(c.checkpoint.files);
    expect((await b.checkpoints.get(first.checkpoint.id)).files, "a pruned checkpoint has no files").toEqual([]);
    await expectCode(b.checkpoints.rollback(sid, { to: first.checkpoint.id }), "checkpoint_pruned");
    await b.checkpoints.rollback(sid, { steps: 2 });
    expect(read(root, "dir2/f3.txt")).toBe("d2 f3 v1\n");
    expect(existsSync(join(root, "dir4/f9.txt")), "removed before the second checkpoint: stays removed").toBe(false);
    expect(read(root, "dir5/new.txt")).toBe("new\n");
  });

  it("names the files it cannot store (newline, backslash, control character), and a rollback warns instead of a silent success", async () => {
    const { b, root, sid } = await workspace();
    const odd = ["line\nbreak.txt", "back\\slash.txt", "bell\u0007.txt"];
    for (const name of odd) write(root, name, "before\n");
    write(root, "ok.txt", "before\n");
    const cp = await b.checkpoints.create(sid, { all: true });
    expect(cp.checkpoint.files.map((f) => f.path)).toEqual(["ok.txt"]);
    expect((cp.skipped ?? []).map((f) => f.path).sort()).toEqual([...odd].sort());
    for (const name of [...odd, "ok.txt"]) write(root, name, "after\n");
    const r = await b.checkpoints.rollback(sid);
    expect(read(root, "ok.txt")).toBe("before\n");
    expect(r.warnings.join("\n")).toMatch(/3 path\(s\) Baton cannot store or restore safely were left as they are/);
    expect(r.warnings.join("\n")).toContain(JSON.stringify("line\nbreak.txt"));
    for (const name of odd) expect(read(root, name), `${JSON.stringify(name)} is left as it is`).toBe("after\n");
    const doctor = await b.health.doctor();
    expect(doctor.findings.find((f) => f.code === "files_not_checkpointed")).toMatchObject({
      severity: "warning",
      evidence: { count: 3, paths: expect.arrayContaining([JSON.stringify("line\nbreak.txt")]) },
    });
  });

  it("names a file or folder whose name is not valid UTF-8 instead of leaving it out silently or calling it absent", async () => {
    const { b, root, sid } = await workspace();
    // Latin-1 names, as an old archive or another OS leaves them: bytes Node decodes to U+FFFD.
    const bytes = (s: string) => Buffer.concat([Buffer.from(`${root}/`), Buffer.from(s, "latin1")]);
    writeFileSync(bytes("caf\u00e9.txt"), "before\n");
    // A valid name holding U+FFFD itself, spelled as the Latin-1 one decodes: it is a file like any other.
    writeFileSync(join(root, "caf\uFFFD.txt"), "real\n");
    writeFileSync(bytes("na\u00efve.txt"), "naive\n");
    mkdirSync(bytes("r\u00e9sum\u00e9"));
    writeFileSync(Buffer.concat([bytes("r\u00e9sum\u00e9"), Buffer.from("/cv.txt")]), "cv\n");
    write(root, "ok.txt", "before\n");
    const cp = await b.checkpoints.create(sid, { all: true });
    expect(cp.checkpoint.files.map((f) => f.path)).toEqual(["caf\uFFFD.txt", "ok.txt"]);
    expect(cp.skipped ?? []).toEqual([
      { path: "caf\uFFFD.txt", reason: expect.stringMatching(/not valid UTF-8/) },
      { path: "na\uFFFDve.txt", reason: expect.stringMatching(/not valid UTF-8/) },
      { path: "r\uFFFDsum\uFFFD", reason: expect.stringMatching(/not valid UTF-8/) },
    ]);
    // Named as Node names it (as a hook's payload or a shell argument would): never "absent",
    // which a rollback would take as "remove what is there".
    const targeted = await b.checkpoints.create(sid, {
      files: ["caf\uFFFD.txt", "na\uFFFDve.txt", "r\uFFFDsum\uFFFD/cv.txt", "gone\uFFFD.txt"],
    });
    expect(targeted.checkpoint.files).toEqual([
      { path: "caf\uFFFD.txt", hash: expect.any(String), mode: expect.any(Number), size: 5 }, // the valid twin
      { path: "gone\uFFFD.txt", absent: true },
      { path: "na\uFFFDve.txt", skipped: expect.stringMatching(/not valid UTF-8/) },
      { path: "r\uFFFDsum\uFFFD/cv.txt", skipped: expect.stringMatching(/not valid UTF-8/) },
    ]);
    writeFileSync(bytes("caf\u00e9.txt"), "after\n");
    write(root, "ok.txt", "after\n");
    await b.checkpoints.rollback(sid, { to: cp.checkpoint.id });
    expect(read(root, "ok.txt")).toBe("before\n");
    expect(readFileSync(bytes("caf\u00e9.txt"), "utf8"), "not stored, so left as it is").toBe("after\n");
  });

  it("status names the files the newest whole-tree checkpoint left out, until they are renamed", async () => {
    const root = initWorkspace("baton-skipped-status-", { "ok.txt": "ok\n", "line\nbreak.txt": "x\n", "tab\there.txt": "x\n" });
    const started = cli(["session", "start", "--flow", "task", "--title", "odd names", "--root", root]);
    expect(started.code, started.stderr).toBe(0);
    const cp = cli(["checkpoint", "--all", "--json", "--root", root]);
    expect(cp.code, cp.stderr).toBe(0);
    const cpId = cp.json().checkpoint.id as string;

    const st = cli(["status", "--json", "--root", root]);
    expect(st.code, st.stderr).toBe(0);
    const s = st.json().sessions[0];
    expect(s.notCheckpointed, "status --json carries the left-out files of the newest whole-tree checkpoint").toMatchObject({
      checkpointId: cpId,
      files: expect.arrayContaining([
        expect.objectContaining({ path: "line\nbreak.txt" }),
        expect.objectContaining({ path: "tab\there.txt" }),
      ]),
    });
    expect(s.diagnostics.map((d: { code: string }) => d.code)).toContain("files_not_checkpointed");
    const text = cli(["status", "--root", root]);
    expect(text.stdout).toMatch(/files_not_checkpointed: 2 path\(s\) were left out of whole-tree checkpoint/);
    expect(text.stdout).toContain(JSON.stringify("line\nbreak.txt"));

    // Renamed, and checkpointed again: status no longer warns (it reads the newest tree checkpoint).
    renameSync(join(root, "line\nbreak.txt"), join(root, "line-break.txt"));
    renameSync(join(root, "tab\there.txt"), join(root, "tab-here.txt"));
    expect(cli(["checkpoint", "--all", "--root", root]).code).toBe(0);
    const after = cli(["status", "--json", "--root", root]).json().sessions[0];
    expect(after.notCheckpointed).toBeUndefined();
    expect(after.diagnostics.map((d: { code: string }) => d.code)).not.toContain("files_not_checkpointed");
  });

  it("a name longer than the file system allows is unsafe_path, not internal", async () => {
    const { b, root, sid } = await workspace();
    write(root, "dir/x.txt", "x");
    await expectCode(b.checkpoints.create(sid, { files: [`dir/${"n".repeat(300)}.txt`] }), "unsafe_path");
    await expectCode(b.checkpoints.create(sid, { files: [`${"d".repeat(300)}/x.txt`] }), "unsafe_path");
  });

  it("leaves out .gitignore'd files, .batonignore and configured excludes, .baton/ and .git; nested repos stay untouched", async () => {
    const { b, root, sid } = await workspace({ checkpoints: { exclude: ["*.log"] } });
    write(root, ".gitignore", "node_modules/\n*.tmp\n!keep.tmp\n");
    write(root, ".batonignore", "secrets/\n");
    write(root, "node_modules/dep/index.js", "x");
    write(root, "a.tmp", "x");
    write(root, "keep.tmp", "x");
    write(root, "debug.log", "x");
    write(root, "secrets/key", "x");
    write(root, ".git/config", "[core]\n");
    write(root, "pkg/.gitignore", "build/\n");
    write(root, "pkg/build/out.js", "x");
    write(root, "pkg/src.js", "x");
    write(root, "vendor/lib/.git/HEAD", "ref: refs/heads/main\n");
    write(root, "vendor/lib/.gitignore", "*.o\n");
    write(root, "vendor/lib/x.js", "x");
    write(root, "vendor/lib/x.o", "x");
    const r = await b.checkpoints.create(sid);
    expect(r.checkpoint.kind).toBe("tree");
    expect(r.checkpoint.files.map((f) => f.path)).toEqual([
      ".batonignore",
      ".gitignore",
      "keep.tmp",
      "pkg/.gitignore",
      "pkg/src.js",
      "vendor/lib/.gitignore",
      "vendor/lib/x.js",
    ]);
    const headBefore = statSync(join(root, "vendor/lib/.git/HEAD"));
    write(root, "vendor/lib/x.js", "changed");
    await b.checkpoints.rollback(sid, { to: r.checkpoint.id });
    expect(read(root, "vendor/lib/x.js")).toBe("x");
    const headAfter = statSync(join(root, "vendor/lib/.git/HEAD"));
    expect(existsSync(join(root, "vendor/lib/.git/HEAD")), "the nested repository's .git is where it was").toBe(true);
    expect(headAfter.ino).toBe(headBefore.ino);
    expect(headAfter.mtimeMs).toBe(headBefore.mtimeMs);
    expect(read(root, "node_modules/dep/index.js"), "ignored files are not removed by a tree rollback").toBe("x");
  });
});

describe("artifacts", () => {
  it("are stored in the blob store, listed, read back, reported when missing, and released when the session completes", async () => {
    const { b, root, sid } = await workspace();
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3, 255, 254]);
    write(root, "shot.png", png);
    const a = await b.artifacts.add(sid, { file: "shot.png", label: "annotated screenshot", mediaType: "image/png" });
    expect(a).toMatchObject({ name: "shot.png", size: png.length, mediaType: "image/png" });
    expect((await b.artifacts.get(sid, "shot.png")).content.equals(png)).toBe(true);
    expect(await b.artifacts.list(sid)).toEqual([expect.objectContaining({ id: a.id, present: true })]);
    expect((await b.sessions.status()).sessions[0]!.diagnostics).toEqual([]);
    expect(inlineBlobs(root).has(a.hash), "a small artifact is a row of the database").toBe(true);

    // Lost (a damaged database, a hand edit): reported, and never returned.
    const saved = withDb(root, (db) => {
      const row = db.prepare("SELECT hash, stored_ms, data FROM blobs WHERE hash = ?").get(a.hash);
      db.prepare("DELETE FROM blobs WHERE hash = ?").run(a.hash);
      return row as { hash: string; stored_ms: number; data: Buffer };
    });
    const diags = (await b.sessions.status()).sessions[0]!.diagnostics;
    expect(diags).toEqual([expect.objectContaining({ code: "artifact_missing", severity: "warning" })]);
    expect(diags[0]!.message).toContain("shot.png");
    expect(await b.artifacts.list(sid)).toEqual([expect.objectContaining({ id: a.id, present: false })]);
    await expectCode(b.artifacts.get(sid, "shot.png"), "blob_missing");
    withDb(root, (db) => db.prepare("INSERT INTO blobs (hash, stored_ms, data) VALUES (@hash, @stored_ms, @data)").run(saved));
    expect((await b.sessions.status()).sessions[0]!.diagnostics).toEqual([]);

    await b.events.append(sid, { type: "start" });
    await b.events.append(sid, { type: "verify" });
    await b.sessions.complete(sid);
    expect(inlineBlobs(root).has(a.hash), "a completed session's artifact blob is released").toBe(false);
    await expectCode(b.artifacts.add(sid, { content: Buffer.from("late"), name: "late.txt" }), "invalid_transition");
  });

  it("are read from regular files only, never waiting on a FIFO nor reading past the file limit", async () => {
    const { b, root, sid } = await workspace({ checkpoints: { maxFileBytes: 1024 } });
    spawnSync("mkfifo", [join(root, "pipe")]);
    symlinkSync("/dev/zero", join(root, "zero"));
    mkdirSync(join(root, "folder"));
    write(root, "big.bin", Buffer.alloc(2048, 1));
    for (const [file, why] of [
      ["pipe", " (not a regular file)"],
      ["zero", " (not a regular file)"],
      ["folder", " (not a regular file)"],
      ["big.bin", " (2048 bytes, over the 1024-byte limit)"],
      ["missing.txt", ": there is no such file"],
      ["big.bin/inside", ": there is no such file"],
    ]) {
      const err = await b.artifacts.add(sid, { file: file as string }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isBatonError(err) && [err.code, err.message], file).toEqual(["bad_input", `cannot read ${file}${why}`]);
    }
    expect(await b.artifacts.list(sid)).toEqual([]);
  });

  it("over the inline limit, live in a file and are reported and released the same way", async () => {
    const { b, root, sid } = await workspace({ checkpoints: { inlineMaxBytes: 1024 } });
    const big = Buffer.alloc(4096, 7);
    const a = await b.artifacts.add(sid, { content: big, name: "big.bin" });
    const file = new BlobStore(join(root, ".baton", "blobs")).path(a.hash);
    expect(existsSync(file)).toBe(true);
    expect(inlineBlobs(root).has(a.hash)).toBe(false);
    expect((await b.artifacts.get(sid, "big.bin")).content.equals(big)).toBe(true);
    const saved = readFileSync(file);
    unlinkSync(file);
    expect((await b.sessions.status()).sessions[0]!.diagnostics).toEqual([expect.objectContaining({ code: "artifact_missing" })]);
    await expectCode(b.artifacts.get(sid, "big.bin"), "blob_missing");
    writeFileSync(file, saved);
    await b.events.append(sid, { type: "start" });
    await b.events.append(sid, { type: "verify" });
    await b.sessions.complete(sid);
    expect(existsSync(file), "released").toBe(false);
  });
});

describe("CLI", () => {
  it("checkpoint / checkpoints / rollback --dry-run / rollback / artifact, with --json", async () => {
    const root = tempDir();
    const run = (...args: string[]) => cli([...args, "--json", "--root", root]);
    expect(run("init").code).toBe(0);
    expect(run("session", "start", "--flow", "task", "--id", "c1").code).toBe(0);
    write(root, "a.txt", "alpha\n");
    const made = run("checkpoint", "--files", "a.txt", "b.txt", "--label", "before edit");
    expect(made.code, made.stdout + made.stderr).toBe(0);
    const j = made.json();
    expect(j.checkpointId).toMatch(/^cp-[0-9a-f]{10}$/);
    expect(j.checkpoint.files).toEqual([
      { path: "a.txt", hash: expect.stringMatching(/^[0-9a-f]{64}$/), mode: 0o644, size: 6 },
      { path: "b.txt", absent: true },
    ]);
    expect(run("checkpoints").json().checkpoints).toEqual([expect.objectContaining({ id: j.checkpointId, label: "before edit" })]);
    write(root, "a.txt", "ALPHA\n");
    write(root, "b.txt", "new\n");
    const dry = run("rollback", "--dry-run").json();
    expect(dry.diff).toContain("-ALPHA\n+alpha");
    expect(read(root, "a.txt")).toBe("ALPHA\n");
    const rb = run("rollback").json();
    expect(rb).toMatchObject({ restored: 1, removed: 1, target: { id: j.checkpointId } });
    expect(existsSync(join(root, "b.txt"))).toBe(false);
    const st = run("status").json().sessions[0];
    expect(st.suggestions[0].command).toBe(`baton lessons add "<one sentence>" --session c1 --from-rollback ${rb.rollbackId}`);
    expect(run("checkpoint", "pin", j.checkpointId).json().pinned).toBe(true);
    const expired = run("rollback", "--to", "cp-nope");
    expect(expired.code).toBe(4);
    expect(expired.json().error.code).toBe("checkpoint_not_found");
    // Renamed codes still say their former name for one release, for scripts that match on it.
    expect(expired.json().error.formerCode).toBe("no_snapshot");
    const unsafe = run("checkpoint", "--files", "../outside.txt");
    expect(unsafe.code).toBe(2);
    expect(unsafe.json().error.code).toBe("unsafe_path");
    expect(run("artifact", "add", "a.txt", "--label", "x").json().artifact.name).toBe("a.txt");
    const got = cli(["artifact", "get", "a.txt", "--root", root]);
    expect(got.stdout).toBe("alpha\n");
    // --out inside the workspace is written as a restore writes: never through a linked directory.
    expect(run("artifact", "get", "a.txt", "--out", join(root, "out", "a.txt")).code).toBe(0);
    expect(read(root, "out/a.txt")).toBe("alpha\n");
    const outside = tempDir();
    symlinkSync(outside, join(root, "linked"));
    const through = run("artifact", "get", "a.txt", "--out", join(root, "linked", "a.txt"));
    expect(through.json().error.code).toBe("unsafe_path");
    expect(readdirSync(outside)).toEqual([]);
  });
});

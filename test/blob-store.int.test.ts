/**
 * The blob store's two places (small blobs as rows of the database, written in the checkpoint's
 * own transaction; large ones as files), the migration from files-only stores and chunked
 * manifests, tree checkpoints' lanes of runs, and the tree walk's per-process cache. Real
 * SQLite files in temp workspaces; damage is planted with raw SQL through another connection.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import fc from "fast-check";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { Backend } from "../src/backend/contract.js";
import { SqliteBackend } from "../src/backend/sqlite/sqlite-backend.js";
import { SQLITE_MIGRATIONS } from "../src/backend/sqlite/sqlite-migrations.js";
import { type InternalOpenOptions as OpenBatonOptions, openBaton, servicesOf } from "../src/compose.js";
import { sha256 } from "../src/core/canonical.js";
import type { CheckpointFile } from "../src/core/time-travel/checkpoints.js";

import { type Baton, isBatonError } from "../src/index.js";
import { BlobStore, Blobs, INLINE_MAX_BYTES, packBlob } from "../src/services/time-travel/blobs.js";
import { cleanupDirs, tempDir, writeAt } from "./helpers.js";

const open: Baton[] = [];
afterEach(async () => {
  for (const b of open.splice(0)) await b.close();
});
afterAll(() => cleanupDirs());

async function workspace(opts: Omit<OpenBatonOptions, "root"> = {}): Promise<{ b: Baton; root: string; sid: string }> {
  const root = tempDir();
  const b = await openBaton({ root, ...opts });
  open.push(b);
  await b.sessions.start({ flow: "task", id: "s1" });
  return { b, root, sid: "s1" };
}

const write = writeAt;

function withDb<T>(root: string, fn: (db: Database.Database) => T): T {
  const db = new Database(join(root, ".baton", "baton.db"));
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

const inlineHashes = (root: string) =>
  withDb(root, (db) => (db.prepare("SELECT hash FROM blobs ORDER BY hash").all() as { hash: string }[]).map((r) => r.hash));

function fileHashes(root: string): string[] {
  const dir = join(root, ".baton", "blobs");
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .flatMap((shard) => readdirSync(join(dir, shard)).map((n) => shard + n))
    .filter((h) => /^[0-9a-f]{64}$/.test(h))
    .sort();
}

const hashOf = (f: CheckpointFile | undefined) => (f && "hash" in f ? f.hash : undefined);

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

describe("where blobs live", () => {
  it("content up to the inline limit is a row of the database, larger content a file; both restore", async () => {
    const { b, root, sid } = await workspace();
    const atLimit = Buffer.alloc(INLINE_MAX_BYTES, "a");
    const overLimit = Buffer.alloc(INLINE_MAX_BYTES + 1, "b");
    write(root, "small.txt", "small\n");
    write(root, "at-limit.bin", atLimit);
    write(root, "over-limit.bin", overLimit);
    const cp = await b.checkpoints.create(sid, { files: ["small.txt", "at-limit.bin", "over-limit.bin"] });
    expect(cp.stats.blobsStored).toBe(3);
    const [atHash, overHash, smallHash] = cp.checkpoint.files.map(hashOf);
    expect(inlineHashes(root)).toEqual([atHash, smallHash].sort());
    expect(fileHashes(root), "only the content over the limit is a file").toEqual([overHash]);
    // A file blob is fsynced and named before the commit; the database holds no copy of it.
    expect(withDb(root, (db) => db.prepare("SELECT 1 FROM blobs WHERE hash = ?").get(overHash))).toBeUndefined();

    write(root, "small.txt", "edited\n");
    write(root, "at-limit.bin", "x");
    write(root, "over-limit.bin", "y");
    const r = await b.checkpoints.rollback(sid, { to: cp.checkpoint.id });
    expect(r.restored).toBe(3);
    expect(readFileSync(join(root, "small.txt"), "utf8")).toBe("small\n");
    expect(readFileSync(join(root, "at-limit.bin")).equals(atLimit)).toBe(true);
    expect(readFileSync(join(root, "over-limit.bin")).equals(overLimit)).toBe(true);
    // The safety checkpoint's new versions (1-byte files) went to the database.
    expect(inlineHashes(root)).toEqual([atHash, smallHash, sha256("edited\n"), sha256("x"), sha256("y")].sort());
  });

  it("what a repository planted where a large file's blob goes (a folder, other bytes, a deflate bomb) is replaced, and the checkpoint restores", async () => {
    const { b, root, sid } = await workspace();
    const files = ["folder.bin", "wrong.bin", "bomb.bin"].map((name, i) => {
      const content = Buffer.alloc(INLINE_MAX_BYTES + 10, String.fromCharCode(0x61 + i));
      write(root, name, content);
      return { name, content, hash: sha256(content) };
    });
    const store = new BlobStore(join(root, ".baton", "blobs"));
    const at = (hash: string) => store.path(hash);
    // The hash of a file a repository ships is public: it can plant anything under that name.
    const [folder, wrong, bomb] = files as [(typeof files)[0], (typeof files)[0], (typeof files)[0]];
    mkdirSync(join(at(folder.hash), "inside"), { recursive: true });
    mkdirSync(join(at(wrong.hash), ".."), { recursive: true });
    writeFileSync(at(wrong.hash), packBlob(Buffer.from("the repository's own bytes\n")));
    mkdirSync(join(at(bomb.hash), ".."), { recursive: true });
    writeFileSync(at(bomb.hash), packBlob(Buffer.alloc(64 * 1024 * 1024))); // 64 MiB of zeros, 64 KiB stored

    const cp = await b.checkpoints.create(sid, { files: files.map((f) => f.name) });
    expect(cp.checkpoint.files.map(hashOf).sort()).toEqual(files.map((f) => f.hash).sort());
    for (const f of files) expect(new BlobStore(join(root, ".baton", "blobs")).get(f.hash).equals(f.content), f.name).toBe(true);

    for (const f of files) write(root, f.name, "broken\n");
    const r = await b.checkpoints.rollback(sid, { to: cp.checkpoint.id });
    expect(r.restored).toBe(3);
    for (const f of files) expect(readFileSync(join(root, f.name)).equals(f.content), f.name).toBe(true);
  });

  it("a whole-tree checkpoint stores its new small blobs in its own transaction and large ones as files", async () => {
    const { b, root, sid } = await workspace({ checkpoints: { inlineMaxBytes: 100 } });
    write(root, "a.txt", "short\n");
    write(root, "dir/big.txt", "long line of text\n".repeat(20));
    const cp = await b.checkpoints.create(sid, { all: true });
    expect(cp.stats).toMatchObject({ files: 2, read: 2, blobsStored: 2 });
    expect(inlineHashes(root)).toEqual([sha256("short\n")]);
    expect(fileHashes(root)).toEqual([sha256("long line of text\n".repeat(20))]);
    rmSync(join(root, "dir"), { recursive: true });
    write(root, "a.txt", "changed\n");
    await b.checkpoints.rollback(sid, { to: cp.checkpoint.id });
    expect(readFileSync(join(root, "dir/big.txt"), "utf8")).toBe("long line of text\n".repeat(20));
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("short\n");
  });

  it("deduplicates across the two places: content already in a file (stored before blobs moved) is not stored again", async () => {
    const { b, root, sid } = await workspace();
    const text = "stored as a file by an earlier Baton\n";
    const legacy = new BlobStore(join(root, ".baton", "blobs")).put(Buffer.from(text));
    write(root, "old.txt", text);
    const targeted = await b.checkpoints.create(sid, { files: ["old.txt"] });
    expect(targeted.stats.blobsStored, "the file blob serves it").toBe(0);
    expect(hashOf(targeted.checkpoint.files[0])).toBe(legacy.hash);
    const tree = await b.checkpoints.create(sid, { all: true });
    expect(tree.stats).toMatchObject({ read: 1, blobsStored: 0 });
    expect(inlineHashes(root), "no copy in the database").toEqual([]);
    // And a small blob already in the database is not written to a file or stored twice.
    write(root, "new.txt", "new content\n");
    expect((await b.checkpoints.create(sid, { files: ["new.txt"] })).stats.blobsStored).toBe(1);
    write(root, "copy.txt", "new content\n");
    expect((await b.checkpoints.create(sid, { files: ["copy.txt", "new.txt"] })).stats.blobsStored).toBe(0);
    expect(inlineHashes(root)).toEqual([sha256("new content\n")]);
    expect(fileHashes(root)).toEqual([legacy.hash]);
    write(root, "old.txt", "changed\n");
    await b.checkpoints.rollback(sid, { to: targeted.checkpoint.id });
    expect(readFileSync(join(root, "old.txt"), "utf8"), "restored from the file blob").toBe(text);
  });

  it("deletes blobs in both places in the transaction that finds them unreferenced, and bumps the blob epoch", async () => {
    const { b, root, sid } = await workspace({ checkpoints: { retain: 1, inlineMaxBytes: 64 } });
    const epoch = () => withDb(root, (db) => (db.prepare("SELECT blob_epoch AS e FROM checkpoint_meta").get() as { e: number }).e);
    write(root, "small.txt", "v1\n");
    write(root, "big.txt", "v1 ".repeat(40));
    const first = await b.checkpoints.create(sid, { files: ["small.txt", "big.txt"] });
    expect(inlineHashes(root)).toHaveLength(1);
    expect(fileHashes(root)).toHaveLength(1);
    const before = epoch();
    write(root, "small.txt", "v2\n");
    write(root, "big.txt", "v2 ".repeat(40));
    const second = await b.checkpoints.create(sid, { files: ["small.txt", "big.txt"] }); // retain 1: the first is pruned
    expect(second.pruned).toEqual([first.checkpoint.id]);
    expect(inlineHashes(root)).toEqual([sha256("v2\n")]);
    expect(fileHashes(root)).toEqual([sha256("v2 ".repeat(40))]);
    expect(epoch(), "a collection that deleted blobs moves the epoch").toBe(before + 1);
    // A blob still referenced elsewhere (an artifact of the active session) is kept when its checkpoint goes.
    await b.artifacts.add(sid, { content: Buffer.from("v2\n"), name: "v2.txt" });
    write(root, "small.txt", "v3\n");
    await b.checkpoints.create(sid, { files: ["small.txt"] });
    expect(inlineHashes(root)).toEqual([sha256("v2\n"), sha256("v3\n")].sort());
  });

  it("doctor: a referenced database blob that is gone is blob_missing; an old unreferenced one is blob_orphan, which gc removes", async () => {
    const { b, root, sid } = await workspace();
    write(root, "a.txt", "alpha\n");
    await b.checkpoints.create(sid, { files: ["a.txt"] });
    expect((await b.health.doctor()).findings.filter((f) => f.check === "blobs")).toEqual([]);
    const orphan = Buffer.from("nobody names me");
    await servicesOf(b).backend.transaction("write", (tx) =>
      tx.checkpoints.putBlob(sha256(orphan), packBlob(orphan), Date.now() - 2 * 3_600_000),
    );
    withDb(root, (db) => db.prepare("DELETE FROM blobs WHERE hash = ?").run(sha256("alpha\n")));
    const report = await b.health.doctor();
    const blobs = report.findings.filter((f) => f.check === "blobs");
    expect(blobs.map((f) => f.code).sort()).toEqual(["blob_missing", "blob_orphan"]);
    expect(blobs.find((f) => f.code === "blob_missing")?.evidence).toMatchObject({ count: 1, hashes: [sha256("alpha\n").slice(0, 16)] });
    expect(blobs.find((f) => f.code === "blob_orphan")?.evidence).toMatchObject({ blobs: 1, hashes: [sha256(orphan).slice(0, 16)] });
    const fixed = await b.health.doctor({ fix: true });
    expect(fixed.findings.find((f) => f.code === "blob_orphan")?.repaired).toBe(true);
    expect(inlineHashes(root)).toEqual([]);
  });

  it("reads many blobs in one go and names the missing one", async () => {
    const { b, root, sid } = await workspace({ checkpoints: { inlineMaxBytes: 8 } });
    write(root, "a.txt", "aa\n");
    write(root, "b.txt", "a larger file\n");
    const cp = await b.checkpoints.create(sid, { files: ["a.txt", "b.txt"] });
    const blobs = new Blobs(servicesOf(b).backend, join(root, ".baton", "blobs"));
    const [a, bb] = cp.checkpoint.files.map(hashOf) as string[];
    const got = await blobs.readMany([a as string, bb as string, a as string]);
    expect([...got.keys()].sort()).toEqual([a, bb].sort());
    expect(got.get(a as string)?.toString()).toBe("aa\n");
    expect(got.get(bb as string)?.toString()).toBe("a larger file\n");
    expect(await blobs.present([a as string, bb as string, sha256("nothing")])).toEqual(new Set([a, bb]));
    unlinkSync(new BlobStore(join(root, ".baton", "blobs")).path(bb as string));
    const details = await expectCode(blobs.readMany([a as string, bb as string]), "blob_missing");
    expect(details.hash).toBe(bb);
    await expectCode(blobs.read("not-a-hash"), "blob_corrupt");
  });
});

/** The chunked manifest of a checkpoint as migrations 3-6 stored it (one chunk per directory). */
function insertOldCheckpoint(
  db: Database.Database,
  c: { id: string; sessionId: string; seq: number; kind: "targeted" | "tree" },
  files: [string, "file" | "absent", string | null, number | null, number | null, null][],
): void {
  db.prepare("INSERT INTO checkpoints (id, session_id, seq, kind, pinned, created_at, file_count) VALUES (?, ?, ?, ?, 0, ?, ?)").run(
    c.id,
    c.sessionId,
    c.seq,
    c.kind,
    new Date().toISOString(),
    files.length,
  );
  const dirs = new Map<string, typeof files>();
  for (const f of [...files].sort((x, y) => (x[0] < y[0] ? -1 : 1))) {
    const dir = f[0].includes("/") ? f[0].slice(0, f[0].lastIndexOf("/")) : "";
    dirs.set(dir, [...(dirs.get(dir) ?? []), f]);
  }
  [...dirs.keys()].sort().forEach((dir, idx) => {
    const body = JSON.stringify(dirs.get(dir));
    const hash = sha256(body);
    if (db.prepare("INSERT OR IGNORE INTO manifest_chunks (hash, body) VALUES (?, ?)").run(hash, body).changes > 0) {
      for (const f of dirs.get(dir) ?? [])
        if (f[2]) db.prepare("INSERT OR IGNORE INTO chunk_blobs (chunk, blob) VALUES (?, ?)").run(hash, f[2]);
    }
    db.prepare("INSERT INTO checkpoint_chunks (checkpoint_id, idx, chunk) VALUES (?, ?, ?)").run(c.id, idx, hash);
  });
}

describe("migration 7", () => {
  it("keeps checkpoints recorded as chunks restorable from their blob files, and new checkpoints reuse those files", async () => {
    const root = tempDir();
    mkdirSync(join(root, ".baton"));
    const path = join(root, ".baton", "baton.db");
    const upTo6 = SQLITE_MIGRATIONS.filter((m) => m.version <= 6);
    const old = await openBaton({ root, backend: new SqliteBackend({ path, migrations: upTo6 }) });
    await old.sessions.start({ flow: "task", id: "s1" });
    await old.close();
    // Files and blob files as an earlier Baton left them.
    const store = new BlobStore(join(root, ".baton", "blobs"));
    const v = (p: string, n: number) => `${p} version ${n}\n`;
    for (const p of ["a.txt", "src/b.ts", "src/c.ts"]) write(root, p, v(p, 1));
    const h1 = Object.fromEntries(["a.txt", "src/b.ts", "src/c.ts"].map((p) => [p, store.put(Buffer.from(v(p, 1))).hash]));
    const hGone = store.put(Buffer.from("a.txt was this before")).hash;
    withDb(root, (db) => {
      insertOldCheckpoint(db, { id: "cp-old00001", sessionId: "s1", seq: 1, kind: "targeted" }, [
        ["a.txt", "file", hGone, 0o644, 21, null],
        ["new.txt", "absent", null, null, null, null],
      ]);
      insertOldCheckpoint(
        db,
        { id: "cp-old00002", sessionId: "s1", seq: 2, kind: "tree" },
        ["a.txt", "src/b.ts", "src/c.ts"].map((p) => [p, "file", h1[p] as string, 0o644, v(p, 1).length, null]),
      );
      // The stat cache, as the old tree checkpoint left it (trusted by the next tree checkpoint).
      for (const p of ["a.txt", "src/b.ts", "src/c.ts"]) {
        const st = statSync(join(root, p));
        db.prepare(
          "INSERT INTO stat_cache (path, size, mtime_ms, ctime_ms, ino, mode, hash, checked_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        ).run(p, st.size, st.mtimeMs, st.ctimeMs, st.ino, st.mode & 0o777, h1[p], st.mtimeMs + 1000);
      }
    });

    const b = await openBaton({ root });
    open.push(b);
    expect(withDb(root, (db) => db.prepare("SELECT name FROM baton_migrations WHERE version = 7").get())).toEqual({
      name: "blobs-and-runs",
    });
    const tables = withDb(root, (db) =>
      (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((r) => r.name),
    );
    expect(tables).toEqual(expect.arrayContaining(["blobs", "manifest_runs"]));
    expect(tables).not.toContain("manifest_chunks");
    expect((await b.checkpoints.get("cp-old00002")).files.map((f) => [f.path, hashOf(f)])).toEqual(
      ["a.txt", "src/b.ts", "src/c.ts"].map((p) => [p, h1[p]]),
    );
    expect((await b.checkpoints.get("cp-old00001")).files).toEqual([
      { path: "a.txt", hash: hGone, mode: 0o644, size: 21 },
      { path: "new.txt", absent: true },
    ]);

    // A new tree checkpoint names the old blob files and stores nothing for them (migration 14
    // dropped the old stat cache, now one per workspace, so it reads them again to know).
    write(root, "src/c.ts", v("src/c.ts", 2));
    const tree = await b.checkpoints.create("s1", { all: true });
    expect(tree.stats).toMatchObject({ files: 3, read: 3, blobsStored: 1 });
    expect(tree.checkpoint.files.map(hashOf)).toEqual([h1["a.txt"], h1["src/b.ts"], sha256(v("src/c.ts", 2))]);
    expect(inlineHashes(root), "only the new content went to the database").toEqual([sha256(v("src/c.ts", 2))]);

    // Old checkpoints restore from their files; doctor sees nothing missing; gc keeps what they name.
    write(root, "new.txt", "created later\n");
    write(root, "src/b.ts", "edited\n");
    await b.checkpoints.rollback("s1", { to: "cp-old00002" });
    expect(["a.txt", "src/b.ts", "src/c.ts"].map((p) => readFileSync(join(root, p), "utf8"))).toEqual(
      ["a.txt", "src/b.ts", "src/c.ts"].map((p) => v(p, 1)),
    );
    expect(existsSync(join(root, "new.txt")), "a tree checkpoint removes what was created since").toBe(false);
    await b.checkpoints.rollback("s1", { to: "cp-old00001" });
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("a.txt was this before");
    expect((await b.health.doctor()).findings.filter((f) => f.code === "blob_missing")).toEqual([]);
    expect((await b.checkpoints.collectGarbage({ graceMs: -1 })).blobsRemoved).toBe(0);
    for (const h of [...Object.values(h1), hGone]) expect(store.has(h)).toBe(true);
  });
});

describe("tree lanes", () => {
  it("survive interleaved targeted checkpoints, a pinned old tree checkpoint and retention pruning the newest tree checkpoint", async () => {
    const { b, root, sid } = await workspace({ checkpoints: { retain: 2 } });
    write(root, "a.txt", "a1\n");
    write(root, "d/b.txt", "b1\n");
    const t1 = await b.checkpoints.create(sid, { all: true, pinned: true });
    write(root, "a.txt", "a2\n");
    const t2 = await b.checkpoints.create(sid, { all: true });
    // Two targeted checkpoints push the newest tree checkpoint out (retain 2, t1 pinned).
    await b.checkpoints.create(sid, { files: ["a.txt"] });
    write(root, "d/b.txt", "b2\n");
    const k2 = await b.checkpoints.create(sid, { files: ["d/b.txt"] });
    expect(k2.pruned).toEqual([t2.checkpoint.id]);
    write(root, "c.txt", "c1\n");
    const t3 = await b.checkpoints.create(sid, { all: true });
    for (const c of [t1, t3]) expect((await b.checkpoints.get(c.checkpoint.id)).files).toEqual(c.checkpoint.files);
    await b.checkpoints.rollback(sid, { to: t1.checkpoint.id });
    expect([
      readFileSync(join(root, "a.txt"), "utf8"),
      readFileSync(join(root, "d/b.txt"), "utf8"),
      existsSync(join(root, "c.txt")),
    ]).toEqual(["a1\n", "b1\n", false]);
  });

  it("pruning a tree checkpoint between two live ones keeps the runs either still holds, and only those", async () => {
    const { b, root, sid } = await workspace({ checkpoints: { retain: 2 } });
    const runs = () => withDb(root, (db) => (db.prepare("SELECT count(*) AS n FROM manifest_runs").get() as { n: number }).n);
    write(root, "same.txt", "never changes\n");
    write(root, "x.txt", "x1\n");
    write(root, "y.txt", "y1\n");
    const t1 = await b.checkpoints.create(sid, { all: true, pinned: true });
    write(root, "y.txt", "y2\n");
    const t2 = await b.checkpoints.create(sid, { all: true }); // x1 and same.txt: runs from t1 through t2
    write(root, "x.txt", "x3\n");
    write(root, "y.txt", "y3\n");
    await b.checkpoints.create(sid, { all: true });
    expect(runs()).toBe(3 + 1 + 2);
    write(root, "x.txt", "x4\n");
    await b.checkpoints.create(sid, { all: true }); // retain 2 (t1 pinned): t2 is pruned
    expect((await b.checkpoints.list(sid)).map((c) => c.id)).not.toContain(t2.checkpoint.id);
    expect((await b.checkpoints.get(t1.checkpoint.id)).files, "t1 keeps x1 although its run also held t2").toEqual(t1.checkpoint.files);
    expect(runs(), "only y2's run held t2 alone").toBe(3 + 2 + 1);
    expect(inlineHashes(root)).not.toContain(sha256("y2\n"));
    expect(inlineHashes(root)).toContain(sha256("x1\n"));
    await b.checkpoints.rollback(sid, { to: t1.checkpoint.id });
    expect(["x.txt", "y.txt"].map((p) => readFileSync(join(root, p), "utf8"))).toEqual(["x1\n", "y1\n"]);
  });

  it("stay consistent when two processes take tree checkpoints of one session", async () => {
    const { b, root, sid } = await workspace();
    const other = await openBaton({ root });
    open.push(other);
    const taken: { id: string; files: CheckpointFile[] }[] = [];
    const take = async (who: Baton) => {
      const r = await who.checkpoints.create(sid, { all: true });
      taken.push({ id: r.checkpoint.id, files: r.checkpoint.files });
    };
    write(root, "x.txt", "1\n");
    await take(b);
    write(root, "x.txt", "2\n");
    write(root, "y.txt", "1\n");
    await take(other);
    unlinkSync(join(root, "x.txt"));
    await take(b); // its own copy of the lane is stale: another process added to it
    write(root, "x.txt", "3\n");
    await take(other);
    await take(b);
    for (const t of taken) expect((await b.checkpoints.get(t.id)).files, t.id).toEqual(t.files);
    expect(taken[2]?.files.map((f) => f.path)).toEqual(["y.txt"]);
  });

  it("model: random edits, tree and targeted checkpoints, pins, two processes and retention; every live checkpoint reads back what it recorded", async () => {
    const PATHS = ["a.txt", "b.txt", "d1/c.txt", "d1/e.txt", "d2/f.txt", "d2/sub/g.txt"];
    const op = fc.oneof(
      {
        weight: 4,
        arbitrary: fc.record({
          kind: fc.constant("write" as const),
          path: fc.constantFrom(...PATHS),
          version: fc.integer({ min: 0, max: 9 }),
        }),
      },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant("remove" as const), path: fc.constantFrom(...PATHS) }) },
      { weight: 4, arbitrary: fc.record({ kind: fc.constant("tree" as const), who: fc.integer({ min: 0, max: 1 }) }) },
      {
        weight: 2,
        arbitrary: fc.record({
          kind: fc.constant("targeted" as const),
          who: fc.integer({ min: 0, max: 1 }),
          paths: fc.subarray(PATHS, { minLength: 1 }),
        }),
      },
      { weight: 2, arbitrary: fc.record({ kind: fc.constant("pin" as const), pick: fc.nat(), pinned: fc.boolean() }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant("rollback" as const), pick: fc.nat() }) },
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 5, maxLength: 30 }), async (ops) => {
        const root = tempDir();
        const opts = { root, durability: "relaxed" as const, checkpoints: { retain: 3 } };
        const procs = [await openBaton(opts), await openBaton(opts)];
        try {
          await procs[0]?.sessions.start({ flow: "task", id: "m" });
          const recorded = new Map<string, CheckpointFile[]>();
          for (const o of ops) {
            const p = procs[("who" in o ? o.who : 0) as number] as Baton;
            if (o.kind === "write") write(root, o.path, `${o.path} v${o.version}\n`);
            else if (o.kind === "remove") rmSync(join(root, o.path), { force: true });
            else if (o.kind === "tree" || o.kind === "targeted") {
              const r = await p.checkpoints.create("m", o.kind === "tree" ? { all: true } : { files: o.paths });
              recorded.set(r.checkpoint.id, r.checkpoint.files);
            } else {
              const live = await p.checkpoints.list("m");
              const c = live[o.pick % Math.max(1, live.length)];
              if (!c) continue;
              if (o.kind === "pin") await p.checkpoints.pin(c.id, o.pinned);
              else {
                const r = await p.checkpoints.rollback("m", { to: c.id });
                if (r.safety) recorded.set(r.safety, (await p.checkpoints.get(r.safety)).files);
                for (const f of recorded.get(c.id) ?? []) {
                  const there = existsSync(join(root, f.path)) ? readFileSync(join(root, f.path), "utf8") : undefined;
                  if ("hash" in f) expect(there !== undefined && sha256(there) === f.hash, `${f.path} restored`).toBe(true);
                  else if ("absent" in f) expect(there, `${f.path} removed`).toBeUndefined();
                }
              }
            }
            const checker = procs[0] as Baton;
            const blobs = new Blobs(servicesOf(checker).backend, join(root, ".baton", "blobs"));
            for (const c of await checker.checkpoints.list("m", { includePruned: true })) {
              const files = (await checker.checkpoints.get(c.id)).files;
              if (c.prunedAt) {
                expect(files, `${c.id} is pruned`).toEqual([]);
                continue;
              }
              expect(files, `${c.id} reads back what it recorded`).toEqual(recorded.get(c.id));
              const hashes = files.flatMap((f) => ("hash" in f ? [f.hash] : []));
              const got = await blobs.readMany(hashes);
              for (const h of hashes) expect(sha256(got.get(h) as Buffer)).toBe(h);
            }
            // Every run in the table holds a live checkpoint of its lane (dead runs are deleted at once).
            const dead = withDb(root, (db) =>
              db
                .prepare(
                  `SELECT r.lane, r.path, r.from_seq, r.until_seq FROM manifest_runs r WHERE NOT EXISTS (
                     SELECT 1 FROM checkpoints c WHERE coalesce(c.lane, c.id) = r.lane AND c.pruned_at IS NULL
                     AND c.seq >= r.from_seq AND (r.until_seq IS NULL OR c.seq < r.until_seq))`,
                )
                .all(),
            );
            expect(dead, "runs that hold no live checkpoint").toEqual([]);
            const live = await checker.checkpoints.list("m");
            const liveHashes = new Set<string>();
            for (const c of live) for (const f of recorded.get(c.id) ?? []) if ("hash" in f) liveHashes.add(f.hash);
            const runHashes = withDb(root, (db) =>
              (db.prepare("SELECT DISTINCT hash FROM manifest_runs WHERE hash IS NOT NULL").all() as { hash: string }[]).map((r) => r.hash),
            );
            for (const h of runHashes) expect(liveHashes.has(h), `run hash ${h.slice(0, 8)} belongs to a live checkpoint`).toBe(true);
            for (const h of inlineHashes(root)) expect(liveHashes.has(h), `stored blob ${h.slice(0, 8)} is referenced`).toBe(true);
          }
        } finally {
          for (const p of procs) await p.close();
        }
      }),
      { numRuns: 40 },
    );
  }, 120_000);
});

/**
 * The real SQLite backend, passed through, except that `before` runs (once) just before the
 * next write transaction starts: another connection's work landing between a checkpoint's
 * reads and its commit, exactly where a concurrent process's could.
 */
function interposed(path: string): { backend: Backend; arm: (nth: number, before: () => Promise<void>) => void } {
  const inner = new SqliteBackend({ path });
  let pending: { nth: number; before: () => Promise<void> } | undefined;
  const backend = new Proxy(inner, {
    get(target, key) {
      if (key === "transaction") {
        return async (mode: "read" | "write", fn: never, opts: never) => {
          if (mode === "write" && pending && --pending.nth === 0) {
            const { before } = pending;
            pending = undefined;
            await before();
          }
          return target.transaction(mode, fn, opts);
        };
      }
      const v = Reflect.get(target, key, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  }) as Backend;
  return { backend, arm: (nth, before) => (pending = { nth, before }) };
}

describe("a collection between a tree checkpoint's reads and its commit", () => {
  it("makes it start again: it never commits a reference to a blob deleted under it", async () => {
    const root = tempDir();
    mkdirSync(join(root, ".baton"));
    const { backend, arm } = interposed(join(root, ".baton", "baton.db"));
    const b = await openBaton({ root, backend, checkpoints: { retain: 1 } });
    open.push(b);
    const other = await openBaton({ root, checkpoints: { retain: 1 } });
    open.push(other);
    await b.sessions.start({ flow: "task", id: "s1" });
    write(root, "a.txt", "alpha\n");
    await b.checkpoints.create("s1", { all: true });
    // The next tree checkpoint trusts a.txt's hash from the stat cache. Before it commits, the
    // other process's checkpoint prunes the first one (retain 1), whose blob nobody else names.
    write(root, "b.txt", "beta\n");
    arm(1, async () => {
      await other.checkpoints.create("s1", { files: ["b.txt"] });
    });
    const tree = await b.checkpoints.create("s1", { all: true });
    expect(tree.stats, "the retry read a.txt again (its cache entry went with its blob)").toMatchObject({ files: 2, read: 2 });
    expect(inlineHashes(root)).toContain(sha256("alpha\n"));
    write(root, "a.txt", "changed\n");
    await b.checkpoints.rollback("s1", { to: tree.checkpoint.id });
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("alpha\n");
  });

  it("a large first scan stores blobs ahead of its commit; a gc that sweeps them makes it start again", async () => {
    const root = tempDir();
    mkdirSync(join(root, ".baton"));
    const { backend, arm } = interposed(join(root, ".baton", "baton.db"));
    const b = await openBaton({ root, backend, checkpoints: { stageAheadBytes: 200 } });
    open.push(b);
    const other = await openBaton({ root });
    open.push(other);
    await b.sessions.start({ flow: "task", id: "s1" });
    // 10 files of ~100 incompressible bytes: stored ahead in batches of 3.
    const text = (i: number) => `${i} ${sha256(String(i))}${sha256(`x${i}`)}\n`;
    for (let i = 0; i < 10; i++) write(root, `f${i}.txt`, text(i));
    const swept: number[] = [];
    arm(2, async () => {
      // After the first batch was stored and before anything references it: swept with no grace.
      swept.push((await other.checkpoints.collectGarbage({ graceMs: -1 })).blobsRemoved);
    });
    const cp = await b.checkpoints.create("s1", { all: true });
    expect(swept, "the sweep removed the first stored-ahead batch").toEqual([3]);
    expect(cp.stats).toMatchObject({ files: 10, read: 10 });
    // Counted for the attempt that committed: the swept batch stored again, and the batch held for the commit.
    expect(cp.stats.blobsStored).toBeGreaterThanOrEqual(3);
    expect(cp.stats.blobsStored).toBeLessThan(10);
    expect(inlineHashes(root)).toEqual(Array.from({ length: 10 }, (_, i) => sha256(text(i))).sort());
    for (let i = 0; i < 10; i++) write(root, `f${i}.txt`, "gone\n");
    await b.checkpoints.rollback("s1", { to: cp.checkpoint.id });
    for (let i = 0; i < 10; i++) expect(readFileSync(join(root, `f${i}.txt`), "utf8")).toBe(text(i));
  });
});

describe("the tree walk's per-process cache", () => {
  it("notices .gitignore edits, new, removed and retyped entries and configured excludes between scans", async () => {
    const { b, root, sid } = await workspace();
    const paths = async () => (await b.checkpoints.create(sid, { all: true })).checkpoint.files.map((f) => f.path);
    write(root, ".gitignore", "*.tmp\n");
    write(root, "keep.txt", "k");
    write(root, "x.tmp", "t");
    write(root, "sub/one.txt", "1");
    write(root, "sub/two.log", "2");
    expect(await paths()).toEqual([".gitignore", "keep.txt", "sub/one.txt", "sub/two.log"]);
    write(root, ".gitignore", "*.log\n");
    expect(await paths(), "a changed .gitignore applies at once").toEqual([".gitignore", "keep.txt", "sub/one.txt", "x.tmp"]);
    write(root, "sub/.gitignore", "!two.log\none.txt\n");
    expect(await paths(), "a new nested .gitignore, the deepest opinion winning").toEqual([
      ".gitignore",
      "keep.txt",
      "sub/.gitignore",
      "sub/two.log",
      "x.tmp",
    ]);
    unlinkSync(join(root, "sub/.gitignore"));
    unlinkSync(join(root, "keep.txt"));
    mkdirSync(join(root, "keep.txt")); // a file replaced by a directory of the same name
    write(root, "keep.txt/inside.txt", "i");
    write(root, "a-new.txt", "n");
    expect(await paths()).toEqual([".gitignore", "a-new.txt", "keep.txt/inside.txt", "sub/one.txt", "x.tmp"]);
    unlinkSync(join(root, "a-new.txt"));
    symlinkSync(join(root, ".gitignore"), join(root, "a-new.txt")); // same name, now a link: never followed or stored
    expect(await paths()).toEqual([".gitignore", "keep.txt/inside.txt", "sub/one.txt", "x.tmp"]);
    unlinkSync(join(root, "a-new.txt"));
    write(root, "a-new.txt", "n");
    rmSync(join(root, "sub"), { recursive: true });
    writeFileSync(join(root, ".batonignore"), "x.tmp\n");
    expect(await paths(), "a removed directory and a new .batonignore").toEqual([
      ".batonignore",
      ".gitignore",
      "a-new.txt",
      "keep.txt/inside.txt",
    ]);
  });
});

/**
 * The caches a workspace keeps in its store (the whole-tree stat cache, the lessons search
 * index), on SQLite: the store is this machine's, so a renamed host keeps them; and a workspace
 * that keeps using them unchanged keeps them through `baton gc`, which drops only caches nobody
 * used for 30 days (services/cache-scope.ts).
 */
import { mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SqliteBackend } from "../src/backend/sqlite/sqlite-backend.js";
import { openBaton, servicesOf } from "../src/compose.js";
import type { Baton } from "../src/index.js";
import type { ProcessFacts } from "../src/platform/process-facts.js";
import { cleanupDirs, counting, tempDir } from "./helpers.js";

afterAll(() => cleanupDirs());

const DAY = 24 * 60 * 60 * 1000;
const LESSONS = "### les-lock\n\nRegenerate the lockfile after upgrading a dependency.\n- scope: workspace\n";

/** The workspace's SQLite store, counting write transactions. */
const countingStore = (root: string) => counting(new SqliteBackend({ path: join(root, ".baton", "baton.db") }));

function tree(root: string): void {
  const old = new Date(Date.now() - 60_000); // older than any scan: trusted from the cache
  mkdirSync(join(root, "src"), { recursive: true });
  for (let i = 0; i < 20; i++) {
    writeFileSync(join(root, "src", `f${i}.txt`), `${i}\n`);
    utimesSync(join(root, "src", `f${i}.txt`), old, old);
  }
  writeFileSync(join(root, "LESSONS.md"), LESSONS);
  utimesSync(join(root, "LESSONS.md"), old, old);
}

describe("workspace caches in the store (SQLite)", () => {
  async function open(root: string, host: string, now?: () => Date): Promise<{ b: Baton; backend: ReturnType<typeof countingStore> }> {
    mkdirSync(join(root, ".baton"), { recursive: true });
    const backend = countingStore(root);
    const facts: ProcessFacts = { host: () => host, machine: () => undefined, alive: () => true, startTime: () => "1" };
    const b = await openBaton({ root, backend, processFacts: facts, ...(now ? { now } : {}) });
    return { b, backend };
  }

  it("a renamed host keeps its stat cache and lessons index: nothing is read or rebuilt again", async () => {
    const root = tempDir();
    tree(root);
    const first = await open(root, "laptop-old");
    await first.b.sessions.start({ flow: "task", id: "s" });
    // 20 files; LESSONS.md is Baton's own, left out of whole-tree checkpoints.
    expect((await first.b.checkpoints.create("s", { all: true })).stats.read).toBe(20);
    expect((await first.b.lessons.search({ prompt: "regenerate lockfile" })).results.map((r) => r.lesson.id)).toEqual(["les-lock"]);
    await first.b.close();

    const renamed = await open(root, "laptop-new");
    expect((await renamed.b.checkpoints.create("s", { all: true })).stats).toMatchObject({ files: 20, read: 0, cached: 20 });
    const writes = renamed.backend.writes();
    expect((await renamed.b.lessons.search({ prompt: "regenerate lockfile" })).results.map((r) => r.lesson.id)).toEqual(["les-lock"]);
    expect(renamed.backend.writes() - writes, "write transactions of a search (an index rebuilt)").toBe(0);
    await renamed.b.close();
  });

  it("caches used without changing for longer than gc's 30 days stay through gc: their use is noted once a day", async () => {
    const root = tempDir();
    tree(root);
    // The lessons service's clock starts 40 days ago; gc judges by the real one.
    const clock = { ms: Date.now() - 40 * DAY };
    const { b, backend } = await open(root, "host", () => new Date(clock.ms));
    await b.sessions.start({ flow: "task", id: "s" });
    await b.checkpoints.create("s", { all: true });
    expect((await b.lessons.search({ prompt: "regenerate lockfile" })).results).toHaveLength(1); // index built 40 days ago
    const cps = (await servicesOf(b).checkpointing()).cps;
    const scope = cps.cacheScope();
    // The stat cache last changed 31 days ago.
    await backend.transaction("write", (tx) => tx.checkpoints.bumpStatCacheGeneration(scope, Date.now() - 31 * DAY));

    // Used since, unchanged: a tree checkpoint trusting every file, a search of the same LESSONS.md.
    expect((await b.checkpoints.create("s", { all: true })).stats.read).toBe(0);
    clock.ms = Date.now() - DAY / 2;
    expect((await b.lessons.search({ prompt: "regenerate lockfile" })).results).toHaveLength(1);
    const writes = backend.writes();
    expect((await b.lessons.search({ prompt: "lockfile" })).results).toHaveLength(1);
    expect(backend.writes() - writes, "a second search the same day writes nothing").toBe(0);

    await b.checkpoints.collectGarbage();
    const before = backend.writes();
    expect((await b.lessons.search({ prompt: "regenerate" })).results).toHaveLength(1);
    expect(backend.writes() - before, "write transactions of a search after gc (the index rebuilt)").toBe(0);
    writeFileSync(join(root, "new.txt"), "new\n");
    expect((await b.checkpoints.create("s", { all: true })).stats, "the stat cache after gc").toMatchObject({ read: 1, cached: 20 });
    await b.close();
  });
});

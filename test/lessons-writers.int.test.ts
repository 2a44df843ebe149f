/**
 * LESSONS.md is written outside any store transaction (services/lessons/lessons-file.ts): Baton's
 * writers take turns on a lock, and a change is made from the file as it is when written, so
 * a hand edit is never overwritten. Run on both engines: real processes adding, editing and
 * removing lessons at once, and write transactions re-run as PostgreSQL re-runs them after a
 * deadlock (a file write inside one used to be done twice).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Backend } from "../src/backend/contract.js";
import { SqliteBackend } from "../src/backend/sqlite/sqlite-backend.js";
import { openBaton, servicesOf } from "../src/compose.js";
import { parseLessonsMd } from "../src/core/lessons/lessons-md.js";
import { LessonService } from "../src/services/lessons/lessons.js";
import { type LineChild, spawnFixture } from "./child-process.js";
import { cleanupDirs, cli, rerunning, tempDir } from "./helpers.js";
import { type PgCluster, pgAvailable, startCluster } from "./pg-cluster.js";

const available = pgAvailable();

let cluster: PgCluster | undefined;
let failed = false;
let projects = 0;

beforeAll(async () => {
  if (available) cluster = await startCluster();
});
afterAll(() => {
  cluster?.stop(failed);
  cleanupDirs();
});

interface Engine {
  name: string;
  /** A workspace on this engine: children opening `root` find the same store. */
  workspace(): { root: string; backend: () => Promise<Backend> };
}

const sqlite: Engine = {
  name: "sqlite",
  workspace() {
    const root = tempDir();
    expect(cli(["init", "--root", root]).code).toBe(0);
    return { root, backend: async () => new SqliteBackend({ path: join(root, ".baton", "baton.db") }) };
  },
};

const postgres: Engine = {
  name: "postgres",
  workspace() {
    const root = tempDir();
    const url = (cluster as PgCluster).url;
    const project = `lw_${process.pid}_${projects++}`;
    const r = cli(["init", "--root", root, "--store", url, "--project", project, "--json"]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    return {
      root,
      backend: async () => (await import("../src/backend/postgres/pg-backend.js")).PostgresBackend.open({ url, project }),
    };
  },
};

for (const engine of [sqlite, postgres]) {
  describe.skipIf(engine === postgres && !available)(`LESSONS.md writers on ${engine.name}`, () => {
    it("several processes adding, editing and removing lessons at once: every change lands exactly once", async () => {
      const { root } = engine.workspace();
      const workers = 4;
      const rounds = 5;
      const children: LineChild[] = [];
      try {
        for (let w = 0; w < workers; w++) children.push(spawnFixture("lessons-writer.mjs", [root, String(w), String(rounds)]));
        await Promise.all(children.map((c) => c.waitForLine((l) => l === "ready", 30_000, "ready")));
        for (const c of children) c.sendLast("go\n");
        const exits = await Promise.all(children.map((c) => c.exited));
        expect(
          exits.map((e) => e.code),
          children.map((c) => c.stderr()).join("\n"),
        ).toEqual(Array(workers).fill(0));
      } catch (err) {
        failed = true;
        throw err;
      }
      const text = readFileSync(join(root, "LESSONS.md"), "utf8");
      const parsed = parseLessonsMd(text);
      expect(parsed.diagnostics, text).toEqual([]);
      const expected = new Map<string, string>();
      for (let w = 0; w < workers; w++) {
        for (let r = 2; r <= rounds; r++)
          expected.set(`w${w}-${r}`, r < rounds ? `Edited lesson ${r} of worker ${w}.` : `Lesson ${r} of worker ${w}.`);
      }
      expect(new Map(parsed.lessons.map((l) => [l.id, l.text]))).toEqual(expected);
      expect(parsed.blocks.length, "no block written twice").toBe(expected.size);
      expect(
        parsed.lessons
          .filter((l) => l.pinned)
          .map((l) => l.id)
          .sort(),
      ).toEqual(Array.from({ length: workers }, (_, w) => [`w${w}-2`]).flat());
      // The index follows the file: a search finds an edited lesson by its new words.
      const b = await openBaton({ root });
      try {
        const r = await b.lessons.search({ prompt: "edited lesson" });
        expect(r.results.length).toBeGreaterThan(0);
        expect(r.results.every((x) => expected.has(x.lesson.id))).toBe(true);
      } finally {
        await b.close();
      }
    }, 120_000);

    it("a write transaction re-run after it rolled back (a deadlock) still writes each change once", async () => {
      const { root, backend } = engine.workspace();
      const inner = await backend();
      const twice = rerunning(inner);
      const b = await openBaton({ root, backend: twice });
      try {
        await b.sessions.start({ flow: "task", id: "s" });
        const added = await b.lessons.add({ id: "once", text: "Write the file outside the transaction.", sessionId: "s" });
        expect(added.lesson.id).toBe("once");
        await b.lessons.add({ text: "A second lesson with a generated id.", scope: "workspace" });
        const v = (await b.lessons.list({ versions: true })).lessons.find((l) => l.id === "once")?.version as string;
        await b.lessons.edit("once", v, { pinned: true });
        await b.lessons.remove((await b.lessons.list()).lessons.find((l) => l.id !== "once")?.id as string, {});
        expect(twice.reruns(), "the wrapper re-ran write transactions").toBeGreaterThan(0);
        const parsed = parseLessonsMd(readFileSync(join(root, "LESSONS.md"), "utf8"));
        expect(parsed.lessons.map((l) => [l.id, l.pinned])).toEqual([["once", true]]);
        expect(parsed.diagnostics).toEqual([]);
        // Journaled once too (the journal's own append is idempotent under re-runs).
        const events = (await b.events.list("s")).events.filter((e) => e.type === "lesson:added");
        expect(events.map((e) => (e.data as { id: string }).id)).toEqual(["once"]);
        expect((await b.lessons.search({ prompt: "transaction file", sessionId: "s" })).results.map((r) => r.lesson.id)).toEqual(["once"]);
      } finally {
        await b.close();
      }
    });
  });
}

describe("LESSONS.md hand edits", () => {
  it("a hand edit landing between a writer's read and its write is kept: the change is made again from it", async () => {
    const root = tempDir();
    const file = join(root, "LESSONS.md");
    writeFileSync(file, "# Lessons\n\n### les-a\n\nAlpha.\n- scope: workspace\n");
    const b = await openBaton({ root });
    try {
      let reads = 0;
      // The writer's first read sees the file; then the human saves a note before the writer writes.
      const read = (f: string) => {
        const t = readFileSync(f, "utf8");
        if (++reads === 1) writeFileSync(f, t.replace("# Lessons\n", "# Lessons\n\nA note the human just saved.\n"));
        return t;
      };
      const svc = new LessonService(servicesOf(b).backend, servicesOf(b).journal, root, () => new Date(), read);
      await svc.add({ id: "les-b", text: "Beta.", scope: "workspace" });
      const text = readFileSync(file, "utf8");
      expect(text).toContain("A note the human just saved.");
      expect(parseLessonsMd(text).lessons.map((l) => l.id)).toEqual(["les-a", "les-b"]);
      expect(reads, "read again after the hand edit").toBeGreaterThan(2);
    } finally {
      await b.close();
    }
  });
});

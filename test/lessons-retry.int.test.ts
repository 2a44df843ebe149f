/**
 * LESSONS.md is written before anything else a lesson write does (the search index refresh,
 * the journal entry, the lock release, the directory fsync), and none of those can take the
 * write back. So a failure after it must never make the caller retry into a conflict or a
 * second copy: the index refresh and the release are warnings, the journal entry has an id the
 * lesson fixes, and adding a lesson the file holds answers it. A real SQLite store, with one
 * step made to fail by wrapping the real backend (the store itself is never replaced).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Backend, StoreTx } from "../src/backend/contract.js";
import { SqliteBackend } from "../src/backend/sqlite/sqlite-backend.js";
import { openBaton } from "../src/compose.js";
import { parseLessonsMd } from "../src/core/lessons/lessons-md.js";
import { type Baton, BatonError, isBatonError } from "../src/index.js";
import { LessonsFile } from "../src/services/lessons/lessons-file.js";
import { LockService } from "../src/services/work/locks.js";
import { cleanupDirs, tempDir } from "./helpers.js";

afterAll(() => cleanupDirs());

type Fault = "index" | "journal" | "release" | undefined;

/** The real SQLite backend of `root`, whose next write transaction doing `fault` fails as a busy store would. */
function faulty(root: string): { backend: Backend; fail: (f: Fault) => void } {
  const inner = new SqliteBackend({ path: join(root, ".baton-db.sqlite") });
  let fault: Fault;
  const busy = () => {
    fault = undefined; // once
    throw new BatonError("storage_busy", "simulated: the store was busy");
  };
  const swap = <T extends object>(target: T, name: string | symbol, fn: unknown): T =>
    new Proxy(target, {
      get(t, p) {
        if (p === name) return fn;
        const v = Reflect.get(t, p, t) as unknown;
        return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(t) : v;
      },
    });
  const wrapTx = (tx: StoreTx): StoreTx => {
    if (fault === "index") return swap(tx, "lessons", swap(tx.lessons, "replaceIndex", busy));
    if (fault === "journal") return swap(tx, "insertEvents", busy);
    if (fault === "release") return swap(tx, "locks", swap(tx.locks, "freeLock", busy));
    return tx;
  };
  const backend = swap(inner, "transaction", (mode: "read" | "write", fn: (tx: StoreTx) => Promise<unknown>, o?: never) =>
    inner.transaction(mode, (tx) => fn(mode === "write" ? wrapTx(tx) : tx), o),
  );
  return { backend, fail: (f) => (fault = f) };
}

describe("a lesson write that fails after LESSONS.md was written", () => {
  async function workspace(): Promise<{ b: Baton; root: string; fail: (f: Fault) => void }> {
    const root = tempDir();
    const { backend, fail } = faulty(root);
    const b = await openBaton({ root, backend });
    await b.sessions.start({ flow: "task", id: "s" });
    return { b, root, fail };
  }
  const blocks = (root: string) => parseLessonsMd(readFileSync(join(root, "LESSONS.md"), "utf8")).blocks.map((x) => x.id);
  const added = async (b: Baton) => (await b.events.list("s")).events.filter((e) => e.type === "lesson:added").length;
  const lesson = { id: "les-x", text: "Run the linter before committing.", sessionId: "s", tools: ["Bash"] };

  it("an index refresh that fails is a warning: the lesson is added and journaled once, and a retry changes nothing", async () => {
    const { b, root, fail } = await workspace();
    fail("index");
    const first = await b.lessons.add(lesson);
    expect(first.warnings, "the refresh failure is said").toEqual([expect.stringMatching(/search index was not refreshed \(storage_busy/)]);
    expect(blocks(root)).toEqual(["les-x"]);
    expect(await added(b)).toBe(1);
    const retry = await b.lessons.add(lesson);
    expect(retry.lesson).toEqual(first.lesson);
    expect(retry.journaled?.duplicate, "journaled once").toBe(true);
    expect(retry.warnings).toBeUndefined();
    // Without an id, the same lesson is the one already there.
    const again = await b.lessons.add({ text: lesson.text, sessionId: "s", tools: ["Bash"] });
    expect(again.lesson.id).toBe("les-x");
    expect(blocks(root)).toEqual(["les-x"]);
    expect(await added(b)).toBe(1);
    expect((await b.lessons.search({ prompt: "linter committing", sessionId: "s" })).results.map((r) => r.lesson.id)).toEqual(["les-x"]);
    // The same id for another lesson is still a conflict, and writes nothing.
    const other = await b.lessons.add({ ...lesson, text: "Something else entirely." }).catch((e) => e);
    expect(isBatonError(other, "conflict"), String(other)).toBe(true);
    expect(blocks(root)).toEqual(["les-x"]);
    await b.close();
  });

  it("a journal entry that fails leaves the lesson written: the retry journals it once and adds no second block", async () => {
    const { b, root, fail } = await workspace();
    fail("journal");
    const first = await b.lessons.add(lesson).catch((e) => e);
    expect(isBatonError(first, "storage_busy"), String(first)).toBe(true);
    expect(blocks(root)).toEqual(["les-x"]);
    expect(await added(b)).toBe(0);
    const retry = await b.lessons.add(lesson);
    expect(retry.journaled?.duplicate).toBe(false);
    const noId = await b.lessons.add({ text: lesson.text, sessionId: "s", tools: ["Bash"] });
    expect(noId.journaled?.duplicate).toBe(true);
    expect(blocks(root)).toEqual(["les-x"]);
    expect(await added(b)).toBe(1);
    // Removed and added again with other words: a new lesson, journaled anew.
    await b.lessons.remove("les-x");
    const renewed = await b.lessons.add({ ...lesson, text: "Run the formatter before committing." });
    expect(renewed.journaled?.duplicate).toBe(false);
    expect(await added(b)).toBe(2);
    await b.close();
  });

  it("remove, edit and a versioned remove succeed with a warning when the index refresh fails", async () => {
    const { b, root, fail } = await workspace();
    await b.lessons.add({ ...lesson, id: "les-a" });
    await b.lessons.add({ ...lesson, id: "les-b", text: "Pin the toolchain version." });
    await b.lessons.add({ ...lesson, id: "les-c", text: "Read the changelog first." });
    const v = await b.lessons.versions();
    fail("index");
    const edited = await b.lessons.edit("les-a", v.get("les-a") as string, { text: "Run the linter and the tests before committing." });
    expect(edited.warnings).toEqual([expect.stringMatching(/not refreshed/)]);
    fail("index");
    expect((await b.lessons.remove("les-b")).warnings).toEqual([expect.stringMatching(/not refreshed/)]);
    fail("index");
    expect((await b.lessons.remove("les-c", { version: v.get("les-c") as string })).warnings).toEqual([
      expect.stringMatching(/not refreshed/),
    ]);
    expect(blocks(root)).toEqual(["les-a"]);
    expect((await b.lessons.search({ prompt: "tests committing", sessionId: "s" })).results.map((r) => r.lesson.id)).toEqual(["les-a"]);
    await b.close();
  });
});

describe("LessonsFile.update after its rename", () => {
  function writer(root: string, backend: Backend, syncDir?: (dir: string) => void): LessonsFile {
    const locks = async () => new LockService(backend);
    return new LessonsFile(join(root, "LESSONS.md"), locks, () => "host-a", undefined, syncDir);
  }

  it("a lock release that fails does not turn the write into a failure; a change that fails keeps its own error", async () => {
    const root = tempDir();
    const { backend, fail } = faulty(root);
    fail("release");
    const w = writer(root, backend);
    const r = await w.update(() => ({ text: "# Lessons\n", result: 1 }));
    expect(r.result).toBe(1);
    expect(readFileSync(join(root, "LESSONS.md"), "utf8")).toBe("# Lessons\n");
    expect(r.warnings).toEqual([expect.stringMatching(/lock "lessons-md:.*" was not released \(storage_busy.*expires/)]);
    await backend.close();
    // Another workspace (the lock above stays held until it expires): the change refuses, the release fails too.
    const other = tempDir();
    const second = faulty(other);
    second.fail("release");
    const refused = await writer(other, second.backend)
      .update(() => {
        throw new BatonError("conflict", "refused by the change");
      })
      .catch((e) => e);
    expect(isBatonError(refused, "conflict"), String(refused)).toBe(true);
    await second.backend.close();
  });

  it("a directory fsync that fails after the rename is reported as a warning with the write's result, naming the I/O error", async () => {
    const root = tempDir();
    const { backend } = faulty(root);
    const w = writer(root, backend, () => {
      throw new BatonError("io_error", "cannot fsync the directory: EIO");
    });
    const r = await w.update(() => ({ text: "# Lessons\n\nwritten\n", result: "done" }));
    expect(r.result).toBe("done");
    expect(readFileSync(join(root, "LESSONS.md"), "utf8")).toBe("# Lessons\n\nwritten\n");
    expect(r.warnings).toEqual([
      expect.stringMatching(/was written, but its directory could not be fsynced \(io_error: .*EIO\).*power loss/),
    ]);
    // A change that leaves the text as it is writes nothing (and fsyncs nothing).
    const same = await w.update((t) => ({ text: t as string, result: "unchanged" }));
    expect(same).toEqual({ result: "unchanged", text: "# Lessons\n\nwritten\n", warnings: [] });
    await backend.close();
  });
});

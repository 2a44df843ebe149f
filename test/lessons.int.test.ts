import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Backend } from "../src/backend/contract.js";
import { SqliteBackend } from "../src/backend/sqlite/sqlite-backend.js";
import { openBaton, servicesOf } from "../src/compose.js";
import type { LessonIntent } from "../src/core/lessons/rank.js";
import type { Baton } from "../src/index.js";
import { spawnNode } from "./child-process.js";
import { CLI, cleanupDirs, tempBaton, tempDir } from "./helpers.js";

afterAll(() => cleanupDirs());

const lessonsFile = (root: string) => join(root, "LESSONS.md");

async function withBaton<T>(fn: (b: Baton, root: string) => Promise<T>, opts: { now?: () => Date } = {}): Promise<T> {
  const { baton, root } = await tempBaton({ durability: "relaxed", ...opts });
  try {
    return await fn(baton, root);
  } finally {
    await baton.close();
  }
}

/** A hand-written LESSONS.md for the ranking table. */
const RANKING_FILE = `# Lessons

### ws-text
Read the file before replacing text in it: the whitespace around tab wrappers is fragile.
- scope: workspace

### ws-text-weak
Whitespace matters in YAML files: indentation is syntax there, so one stray space changes what the whole document means.
- scope: workspace

### fp-only
Regenerate the lockfile instead of editing it.
- scope: workspace
- fingerprints: \`E_LOCK_MISMATCH\`

### tool-edit
Prefer one larger edit over many small ones.
- scope: workspace
- tools: Edit

### path-ui
Components under src/ui share a barrel file; update it too.
- scope: workspace
- paths: \`src/ui/**\`

### path-lib
The lib folder is generated; never edit it.
- scope: workspace
- paths: \`lib/**\`

### pinned-general
Run the formatter after editing.
- scope: workspace
- pinned: yes

### other-session
Replace whitespace carefully in Tabs.
- session: s-other

### mine
Replace whitespace carefully in Tabs, this session's own note.
- session: s-mine

### expired
Replacing whitespace was broken in the old editor.
- scope: workspace
- expires: 2020-01-01

### filler-1
Ask before deleting migrations.

### filler-2
Keep commit messages short.

### filler-3
Use the staging database for experiments.

### filler-4
Do not bump dependencies during a release freeze.

### filler-5
Prefer async file APIs in the server.

### filler-6
Document every new CLI flag.
`;

/** Each row: an intent and the ids expected, best first. `bm25` rows rely on stemming or IDF. */
const RANKING_TABLE: { name: string; intent: LessonIntent; expected: string[]; bm25?: boolean }[] = [
  {
    name: "BM25 puts the lesson matching more, rarer terms (stemmed) far above one matching a common term; pinned is always offered; other sessions' and expired lessons never",
    intent: { prompt: "replacing whitespace in tab wrappers", sessionId: "s-none" },
    expected: ["ws-text", "pinned-general", "ws-text-weak"],
    bm25: true,
  },
  {
    name: "a session sees its own lessons beside the workspace's",
    intent: { prompt: "replace whitespace tabs", sessionId: "s-mine" },
    expected: ["mine", "ws-text", "pinned-general", "ws-text-weak"],
    bm25: true,
  },
  {
    name: "the failure fingerprint outweighs the best text match",
    intent: { prompt: "whitespace", fingerprint: "E_LOCK_MISMATCH" },
    expected: ["fp-only", "ws-text", "ws-text-weak", "pinned-general"],
  },
  {
    name: "the tool trigger alone makes a lesson relevant (the tool's name is not a search word)",
    intent: { tool: "Edit" },
    expected: ["tool-edit", "pinned-general"],
  },
  {
    name: "a path glob matches the file about to be touched; other globs do not",
    intent: { paths: ["src/ui/Button.tsx"] },
    expected: ["path-ui", "pinned-general"],
  },
  {
    name: "the file's name is also a search word",
    intent: { paths: ["src/ui/Tabs.tsx"] },
    expected: ["ws-text", "path-ui", "pinned-general"],
    bm25: true,
  },
  {
    name: "boosts add up: text + path beat the tool alone",
    intent: { prompt: "generated lib folder", tool: "Edit", paths: ["lib/x.js"] },
    expected: ["path-lib", "tool-edit", "pinned-general"],
  },
];

describe("lessons: LESSONS.md is the truth, hand edits included", () => {
  it("round-trips through add, hand edits, search, add and rm; a malformed block is reported by line", async () => {
    await withBaton(async (b, root) => {
      await b.sessions.start({ flow: "task", id: "s1" });
      const added = await b.lessons.add({ text: "Run the tests before committing.", sessionId: "s1", tools: ["Bash"] });
      expect(added.lesson).toMatchObject({ scope: "session", sessionId: "s1", tools: ["Bash"] });
      expect((await b.lessons.search({ prompt: "committing tests", sessionId: "s1" })).results.map((r) => r.lesson.id)).toEqual([
        added.lesson.id,
      ]);

      // By hand: reword the lesson, add one, add a broken block.
      const file = lessonsFile(root);
      const handText = readFileSync(file, "utf8")
        .replace("Run the tests before committing.", "Run the linter before pushing.")
        .concat(
          "\n### hand-added\n\nNever force-push the main branch.\n- scope: workspace\n- tools: Bash\n\n### broken\n\nText.\n- pinned: sometimes\n",
        );
      writeFileSync(file, handText);
      const brokenLine = handText.split("\n").indexOf("- pinned: sometimes") + 1;

      const list = await b.lessons.list();
      expect(list.lessons.map((l) => l.id)).toEqual([added.lesson.id, "hand-added"]);
      expect(list.diagnostics).toEqual([expect.objectContaining({ line: brokenLine, severity: "error", id: "broken" })]);
      // The index follows the file: the old words are gone, the new ones found.
      expect((await b.lessons.search({ prompt: "committing", sessionId: "s1" })).results).toEqual([]);
      const pushing = await b.lessons.search({ prompt: "pushing linter force push", sessionId: "s1" });
      expect(pushing.results.map((r) => r.lesson.id)).toEqual([added.lesson.id, "hand-added"]);
      expect(pushing.diagnostics).toHaveLength(1);

      // A write keeps the hand edits (the broken block too) verbatim.
      const second = await b.lessons.add({ text: "Pin the node version.", scope: "workspace" });
      const after = readFileSync(file, "utf8");
      expect(after.startsWith(handText.trimEnd())).toBe(true);
      expect(after).toContain(`### ${second.lesson.id}`);

      // rm clears the broken block by its heading; the diagnostic goes with it.
      await b.lessons.remove("broken");
      expect((await b.lessons.list()).diagnostics).toEqual([]);
      await b.lessons.remove(added.lesson.id);
      expect((await b.lessons.list()).lessons.map((l) => l.id)).toEqual(["hand-added", second.lesson.id]);
      await expect(b.lessons.remove("nope")).rejects.toMatchObject({ code: "lesson_not_found" });
      expect(readFileSync(file, "utf8")).not.toContain("Run the linter");
    });
  });

  it("refuses bad input and changes nothing", async () => {
    await withBaton(async (b, root) => {
      await expect(b.lessons.add({ text: "No session." })).rejects.toMatchObject({ code: "bad_input" });
      await expect(b.lessons.add({ text: "x", sessionId: "missing" })).rejects.toMatchObject({ code: "not_found" });
      await expect(b.lessons.add({ text: "  ", scope: "workspace" })).rejects.toMatchObject({ code: "bad_input" });
      await expect(b.lessons.add({ text: "x", scope: "workspace", expires: "soon" })).rejects.toMatchObject({ code: "bad_input" });
      await expect(b.lessons.add({ text: "x", scope: "workspace", paths: ["`bad`"] })).rejects.toMatchObject({ code: "bad_input" });
      expect(() => readFileSync(lessonsFile(root))).toThrow(/ENOENT/);
      await b.lessons.add({ text: "x", scope: "workspace", id: "same" });
      await expect(b.lessons.add({ text: "y", scope: "workspace", id: "same" })).rejects.toMatchObject({ code: "conflict" });
      expect((await b.lessons.list()).lessons).toHaveLength(1);
    });
  });

  it("does not return expired lessons (list shows them with --all)", async () => {
    let now = new Date("2026-03-01T12:00:00Z");
    await withBaton(
      async (b) => {
        await b.lessons.add({ text: "Temporary workaround for the flaky proxy.", scope: "workspace", expires: "2026-03-02" });
        expect((await b.lessons.search({ prompt: "flaky proxy" })).results).toHaveLength(1);
        now = new Date("2026-03-03T00:00:00Z");
        expect((await b.lessons.search({ prompt: "flaky proxy" })).results).toEqual([]);
        expect((await b.lessons.inject({ prompt: "flaky proxy" })).markdown).toBe("");
        expect((await b.lessons.list()).lessons).toEqual([]);
        expect((await b.lessons.list({ all: true })).lessons).toMatchObject([{ expired: true }]);
      },
      { now: () => now },
    );
  });
});

describe("lessons: ranking", () => {
  it.each(RANKING_TABLE)("$name", async ({ intent, expected }) => {
    await withBaton(async (b, root) => {
      writeFileSync(lessonsFile(root), RANKING_FILE);
      const r = await b.lessons.search(intent);
      expect(r.fullText).toBe(true);
      expect(r.diagnostics).toEqual([]);
      expect(
        r.results.map((x) => x.lesson.id),
        JSON.stringify(r.results.map((x) => [x.lesson.id, x.score, x.why])),
      ).toEqual(expected);
      for (let i = 1; i < r.results.length; i++) expect(r.results[i - 1]!.score).toBeGreaterThanOrEqual(r.results[i]!.score);
    });
  });

  it("uses term overlap, with the same boosts, on a backend without full-text search", async () => {
    const root = tempDir();
    const inner = new SqliteBackend({ path: join(root, "db.sqlite"), synchronous: "NORMAL" });
    const noFts = new Proxy(inner, {
      get(target, prop) {
        if (prop === "capabilities") return { ...target.capabilities, fullTextSearch: false };
        const v = Reflect.get(target, prop, target);
        return typeof v === "function" ? v.bind(target) : v;
      },
    }) as Backend;
    const b = await openBaton({ root, backend: noFts });
    try {
      writeFileSync(lessonsFile(root), RANKING_FILE);
      for (const row of RANKING_TABLE.filter((r) => !r.bm25)) {
        const r = await b.lessons.search(row.intent);
        expect(r.fullText).toBe(false);
        expect(
          r.results.map((x) => x.lesson.id),
          row.name,
        ).toEqual(row.expected);
      }
      // The full-text index was never built.
      const scope = (await servicesOf(b).learning()).scope;
      expect(await inner.transaction("read", (tx) => tx.lessons.indexState(scope))).toBeUndefined();
    } finally {
      await b.close();
    }
  });

  it("inject respects k and max-chars, best first", async () => {
    await withBaton(async (b, root) => {
      writeFileSync(lessonsFile(root), RANKING_FILE);
      const intent: LessonIntent = { prompt: "whitespace editing", tool: "Edit", fingerprint: "E_LOCK_MISMATCH" };
      const ranked = (await b.lessons.search(intent)).results;
      const order = ranked.map((r) => r.lesson.id);
      expect(order.length).toBeGreaterThan(5);
      const k2 = await b.lessons.inject(intent, { k: 2 });
      expect(k2.included.map((x) => x.id)).toEqual(order.slice(0, 2));
      expect(k2.markdown.split("\n").slice(1)).toEqual(ranked.slice(0, 2).map((r) => `- ${r.lesson.text} (${r.lesson.id})`));
      for (const maxChars of [50, 120, 200, 400]) {
        const r = await b.lessons.inject(intent, { k: 5, maxChars });
        expect(r.markdown.length).toBeLessThanOrEqual(maxChars);
        const ids = r.included.map((x) => x.id);
        expect(ids).toEqual(order.filter((id) => ids.includes(id)));
      }
      expect((await b.lessons.inject(intent)).included).toHaveLength(5);
    });
  });
});

describe("lessons: sessions and rollbacks", () => {
  it("links a lesson to the rollback it came from, in the file and in the session's rollback record", async () => {
    await withBaton(async (b, root) => {
      await b.sessions.start({ flow: "task", id: "s1" });
      await b.events.append("s1", {
        type: "rollback:applied",
        actor: "user",
        data: { id: "rb-1", target: "cp-1", safety: "cp-2", restored: 1, removed: 0 },
      });
      expect((await b.sessions.status()).sessions[0]?.suggestions.map((s) => s.action)).toEqual(["capture_lesson"]);
      const r = await b.lessons.add({ text: "Rewrite the wrapper in one edit.", sessionId: "s1", rollback: "rb-1" });
      expect(readFileSync(lessonsFile(root), "utf8")).toContain("- rollback: rb-1");
      expect(r.journaled?.event).toMatchObject({ type: "lesson:added", data: { id: r.lesson.id, rollback: "rb-1" } });
      const snap = await b.sessions.snapshot("s1");
      expect(snap.facets.rollbacks?.find((x) => x.id === "rb-1")?.lesson).toBe(r.lesson.id);
      expect((await b.sessions.status()).sessions[0]?.suggestions).toEqual([]);
      // The fold is the same on replay.
      expect((await b.sessions.rebuild("s1"))[0]?.repaired).toBe(false);
    });
  });

  it("keeps every lesson when several processes add at once", async () => {
    const root = tempDir();
    const b = await openBaton({ root });
    await b.close();
    const children = Array.from({ length: 6 }, (_, i) =>
      spawnNode(
        CLI,
        ["lessons", "add", `Lesson number ${i}.`, "--workspace", "--id", `c-${i}`, "--root", root, "--json"],
        `lessons add ${i}`,
      ),
    );
    const exits = await Promise.all(children.map((c) => c.exited));
    expect(
      exits.map((e) => e.code),
      children.map((c) => c.stderr()).join("\n"),
    ).toEqual([0, 0, 0, 0, 0, 0]);
    const again = await openBaton({ root });
    try {
      const ids = (await again.lessons.list()).lessons.map((l) => l.id).sort();
      expect(ids).toEqual(["c-0", "c-1", "c-2", "c-3", "c-4", "c-5"]);
    } finally {
      await again.close();
    }
  });
});

import { describe, expect, it } from "vitest";
import {
  appendLessonBlock,
  isExpired,
  LESSONS_PREAMBLE,
  type Lesson,
  parseLessonsMd,
  removeLessonBlocks,
  renderLessonBlock,
} from "../src/core/lessons/lessons-md.js";
import {
  INJECTION_HEADING,
  pathMatches,
  pathsInText,
  queryTerms,
  type RankedLesson,
  renderInjection,
  termOverlapScores,
} from "../src/core/lessons/rank.js";

const lesson = (over: Partial<Lesson> = {}): Omit<Lesson, "line"> => ({
  id: "les-1",
  scope: "workspace",
  text: "Read the file before replacing text in it.",
  tools: [],
  paths: [],
  fingerprints: [],
  pinned: false,
  ...over,
});

describe("LESSONS.md format", () => {
  it("round-trips lessons through render and parse, awkward values included", () => {
    const tricky = lesson({
      id: "les-tricky",
      scope: "session",
      sessionId: "task-1a2b",
      text: "# not a heading\n- not a setting: really\n```\nnot a fence\n* nor a list",
      tools: ["Edit", "fs.replace"],
      paths: ["src/{a,b}/**/*.ts", "docs/*.md"],
      fingerprints: ["TS2322@src/a.ts:4", "E,WITH,COMMAS"],
      created: "2026-05-01T10:00:00.000Z",
      rollback: "rb-7c1d",
      pinned: true,
      expires: "2026-09-01",
    });
    const plain = lesson({ id: "les-plain" });
    const text = appendLessonBlock(appendLessonBlock(undefined, renderLessonBlock(tricky)), renderLessonBlock(plain));
    expect(text.startsWith(LESSONS_PREAMBLE.trimEnd())).toBe(true);
    const parsed = parseLessonsMd(text);
    expect(parsed.diagnostics).toEqual([]);
    expect(parsed.lessons.map(({ line: _line, ...l }) => l)).toEqual([tricky, plain]);
    expect(parsed.lessons[0]?.line).toBe(text.split("\n").indexOf("### les-tricky") + 1);
  });

  it("reads hand-written blocks: optional keys, backticks, yes/true, scope inferred from session", () => {
    const text = [
      "# Our lessons",
      "",
      "Some notes of our own, ignored.",
      "",
      "### hand-1",
      "",
      "Prefer read-then-replace.",
      "It breaks less.",
      "",
      "* tools: Edit,Write",
      "* paths: src/ui/**",
      "* pinned: true",
      "",
      "### hand-2",
      "Session advice.",
      "- session: s-9",
      "",
      "## Archive",
      "",
      "### hand-3",
      "",
      "No settings at all, just advice.",
    ].join("\n");
    const { lessons, diagnostics } = parseLessonsMd(text);
    expect(diagnostics).toEqual([]);
    expect(lessons.map((l) => [l.id, l.scope, l.sessionId, l.tools, l.paths, l.pinned, l.line])).toEqual([
      ["hand-1", "workspace", undefined, ["Edit", "Write"], ["src/ui/**"], true, 5],
      ["hand-2", "session", "s-9", [], [], false, 14],
      ["hand-3", "workspace", undefined, [], [], false, 20],
    ]);
    expect(lessons[0]?.text).toBe("Prefer read-then-replace.\nIt breaks less.");
  });

  it("reports a malformed block with its line and still loads the others", () => {
    const text = [
      "### good-1", // 1
      "", // 2
      "Keep this one.", // 3
      "", // 4
      "### bad 1", // 5: not an id
      "Text.", // 6
      "", // 7
      "### bad-2", // 8
      "Text.", // 9
      "", // 10
      "- scope: session", // 11: no session
      "- pinned: maybe", // 12
      "- expires: next tuesday", // 13
      "", // 14
      "### good-1", // 15: duplicate id
      "Again.", // 16
      "", // 17
      "### bad-3", // 18: no text
      "- tools: Edit", // 19
      "", // 20
      "### good-2", // 21
      "Also fine.", // 22
      "- tols: Edit", // 23: unknown key (warning only)
      "- paths: {a,b", // 24: unbalanced
    ].join("\n");
    const { lessons, diagnostics } = parseLessonsMd(text);
    expect(lessons.map((l) => l.id)).toEqual(["good-1"]);
    const at = (line: number) => diagnostics.filter((d) => d.line === line).map((d) => `${d.severity}: ${d.message}`);
    expect(at(5)[0]).toMatch(/^error: "### bad 1" is not a lesson id/);
    expect(at(11)[0]).toMatch(/^error: lesson bad-2 has scope session but no "- session: <id>"/);
    expect(at(12)[0]).toMatch(/pinned must be yes or no/);
    expect(at(13)[0]).toMatch(/expires "next tuesday" is not a date/);
    expect(at(15)[0]).toMatch(/lesson id "good-1" is used twice \(first at line 1\)/);
    expect(at(18)[0]).toMatch(/lesson bad-3 has no text/);
    expect(at(23)[0]).toMatch(/^warning: unknown key "tols"/);
    expect(at(24)[0]).toMatch(/paths: unbalanced/);
    expect(diagnostics.find((d) => d.line === 11)?.id).toBe("bad-2");
  });

  it("warns when a setting is separated from the list and read as text", () => {
    const { lessons, diagnostics } = parseLessonsMd("### a\n\nText.\n\n- scope: workspace\n\n- tools: Edit\n");
    expect(lessons[0]?.tools).toEqual(["Edit"]);
    expect(diagnostics).toMatchObject([{ line: 5, severity: "warning" }]);
  });

  it("ignores headings inside code fences", () => {
    const { lessons } = parseLessonsMd("### a\n\nUse this:\n\n```\n### not-a-lesson\n```\n\n- tools: Bash\n");
    expect(lessons.map((l) => l.id)).toEqual(["a"]);
    expect(lessons[0]?.text).toContain("### not-a-lesson");
  });

  it("removes a block by id without touching the rest of the file", () => {
    const text = "# Mine\n\nKeep   this   spacing.\n\n### a\n\nA.\n\n### b\n\nB.\n- tools: X\n\n\n## Notes\n\nkeep\n";
    const r = removeLessonBlocks(text, "b");
    expect(r.removed).toBe(1);
    expect(r.text).toBe("# Mine\n\nKeep   this   spacing.\n\n### a\n\nA.\n\n## Notes\n\nkeep\n");
    expect(removeLessonBlocks(text, "zzz")).toEqual({ text, removed: 0 });
    // A malformed block can be removed by its heading too.
    expect(removeLessonBlocks("### bad\n- scope: nope\n", "bad")).toEqual({ text: "\n", removed: 1 });
  });

  it("expires at the given time, or at the end of a bare date (UTC)", () => {
    expect(isExpired({ expires: "2026-03-01" }, new Date("2026-03-01T23:00:00Z"))).toBe(false);
    expect(isExpired({ expires: "2026-03-01" }, new Date("2026-03-02T00:00:00Z"))).toBe(true);
    expect(isExpired({ expires: "2026-03-01T12:00:00Z" }, new Date("2026-03-01T12:00:01Z"))).toBe(true);
    expect(isExpired({}, new Date())).toBe(false);
  });
});

describe("lesson retrieval helpers", () => {
  it("builds search terms from the prompt and file names, without stopwords or the tool", () => {
    expect(queryTerms({ prompt: "Fix the whitespace in a Tab", tool: "Edit", paths: ["src/ui/Tabs.tsx", "lib\\user_service.js"] })).toEqual(
      ["fix", "whitespace", "tab", "tabs", "user_service"],
    );
  });

  it("scores term overlap when there is no full-text index", () => {
    const ls = [
      lesson({ id: "x", text: "whitespace breaks tabs" }),
      lesson({ id: "y", text: "tabs only" }),
      lesson({ id: "z", text: "nothing" }),
    ];
    expect([...termOverlapScores(ls as Lesson[], ["whitespace", "tabs"])]).toEqual([
      ["x", 2],
      ["y", 1],
    ]);
  });

  it("matches trigger paths as globs, bare names anywhere, and directories as prefixes", () => {
    expect(pathMatches("src/ui/**", "src/ui/a/Tabs.tsx")).toBe(true);
    expect(pathMatches("*.tsx", "src/ui/Tabs.tsx")).toBe(true);
    expect(pathMatches("src/ui", "src/ui/Tabs.tsx")).toBe(true);
    expect(pathMatches("{src,lib}/*.ts", "lib/a.ts")).toBe(true);
    expect(pathMatches("lib/**", "src/ui/Tabs.tsx")).toBe(false);
    expect(pathMatches("src/u", "src/ui/Tabs.tsx")).toBe(false);
  });
});

describe("paths in an intent's words", () => {
  it("takes words with a slash or a known extension, without the punctuation and line numbers around them", () => {
    expect(pathsInText("edit index.js")).toEqual(["index.js"]);
    expect(pathsInText("see (src/ui/Tabs.tsx) and `lib/a.ts:12:3`, then README.md.")).toEqual(["src/ui/Tabs.tsx", "lib/a.ts", "README.md"]);
    expect(pathsInText('"package.json"? [docs/a.md] ./scripts/x.sh#L3-L9 .env')).toEqual([
      "package.json",
      "docs/a.md",
      "./scripts/x.sh",
      ".env",
    ]);
    expect(pathsInText("the src/ui directory, app/[id]/page.tsx")).toEqual(["src/ui", "app/[id]/page.tsx"]);
  });

  it("leaves prose, URLs and globs alone", () => {
    expect(pathsInText("e.g. bump v1.2 of Node.js and/or fix it at 9 a.m., i.e. now; w/o n/a")).toEqual([]);
    expect(pathsInText("open https://example.com/a/b.js or www.example.com/x, example.com")).toEqual([]);
    expect(pathsInText("glob src/**/*.ts and {a,b}.js, 3/4 done, ~/notes.md")).toEqual([]);
  });

  it("scans a bounded text and keeps at most 32 paths, each once", () => {
    expect(pathsInText("a.js a.js b.js")).toEqual(["a.js", "b.js"]);
    expect(pathsInText(Array.from({ length: 40 }, (_, i) => `f${i}.ts`).join(" "))).toHaveLength(32);
    expect(pathsInText(`${"word ".repeat(5_000)} late.js`)).toEqual([]);
  });
});

describe("injection block", () => {
  const ranked = (n: number, textLen = 40): RankedLesson[] =>
    Array.from({ length: n }, (_, i) => ({
      lesson: { ...lesson({ id: `les-${i}`, text: `${String(i).repeat(textLen)}` }), line: i + 1 } as Lesson,
      score: n - i,
      why: { text: 0, tool: false, fingerprint: false, pinned: false },
    }));

  it("includes at most k lessons, best first", () => {
    const r = renderInjection(ranked(8), { k: 3, maxChars: 10_000 });
    expect(r.included.map((x) => x.id)).toEqual(["les-0", "les-1", "les-2"]);
    expect(r.markdown.split("\n")).toHaveLength(4);
    expect(r.markdown.startsWith(INJECTION_HEADING)).toBe(true);
    expect(renderInjection(ranked(8), { k: 0, maxChars: 10_000 }).markdown).toBe("");
  });

  it("never exceeds max-chars; leaves out what does not fit, truncates only the best", () => {
    for (const maxChars of [40, 60, 100, 150, 200, 333, 500]) {
      const r = renderInjection(ranked(6), { k: 5, maxChars });
      expect(r.markdown.length, `maxChars ${maxChars}`).toBeLessThanOrEqual(maxChars);
    }
    // Each item is "\n- " + 40 chars + " (les-N)" = 51 characters after the heading.
    const two = renderInjection(ranked(6), { k: 5, maxChars: INJECTION_HEADING.length + 2 * 51 });
    expect(two.included.map((x) => x.id)).toEqual(["les-0", "les-1"]);
    expect(two.omitted).toEqual(["les-2", "les-3", "les-4"]);
    // A shorter, lower-ranked lesson still fits after a long one is left out.
    const mixed = [
      ...ranked(1, 40),
      ...ranked(2, 200).slice(1),
      { ...ranked(1, 5)[0]!, lesson: { ...ranked(1, 5)[0]!.lesson, id: "les-short" } },
    ];
    const m = renderInjection(mixed, { k: 5, maxChars: INJECTION_HEADING.length + 51 + 20 });
    expect(m.included.map((x) => x.id)).toEqual(["les-0", "les-short"]);
    // Not even the best fits whole: it is truncated, with its id kept.
    const t = renderInjection(ranked(3, 400), { k: 3, maxChars: 120 });
    expect(t.included).toEqual([{ id: "les-0", score: 3, truncated: true }]);
    expect(t.markdown).toMatch(/…\s\(les-0\)$/);
    expect(t.markdown.length).toBeLessThanOrEqual(120);
    expect(renderInjection(ranked(3), { k: 3, maxChars: 20 }).markdown).toBe("");
  });
});

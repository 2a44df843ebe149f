/**
 * The pure half of checkpoints: path safety, rollback intent in prompts, target choice (steps,
 * the undo cursor, pruned and unknown points), composing a restore, retention, and the
 * next-action rule and suggestion after a rollback. Table-driven, negatives included.
 */
import { describe, expect, it } from "vitest";
import { userWords } from "../src/core/hooks/prompt-words.js";
import { parseRollbackIntent } from "../src/core/hooks/rollback-intent.js";
import { emptySnapshot, foldEvent } from "../src/core/session/fold.js";
import { decideNextAction } from "../src/core/session/next-action.js";
import {
  type Checkpoint,
  type CheckpointInfo,
  chooseTarget,
  composeRestore,
  restoredAt,
  stepCursor,
} from "../src/core/time-travel/checkpoints.js";
import { isSafeRelativePath, pathProblem } from "../src/core/time-travel/paths.js";
import { finishRollbackRule, rollbackSuggestions } from "../src/core/time-travel/rollback.js";
import type { JournalEvent } from "../src/core/types.js";
import { BUILTIN_FLOWS } from "../src/services/flows.js";

describe("pathProblem: stored paths are workspace-relative POSIX paths", () => {
  it.each([
    ["src/a.ts"],
    ["a"],
    ["deep/er/file.txt"],
    [".gitignore"],
    ["..hidden"],
    ["a/.../b"],
    ["vendor/lib/x.js"],
    ["with space/ünïcode.md"],
  ])("accepts %j", (p) => {
    expect(pathProblem(p), `expected ${JSON.stringify(p)} to be accepted`).toBeUndefined();
    expect(isSafeRelativePath(p)).toBe(true);
  });

  it.each([
    ["", "is empty"],
    [".", '"." segment'],
    ["..", '".." segment'],
    ["../x", '".." segment'],
    ["a/../../x", '".." segment'],
    ["a/./b", '"." segment'],
    ["/etc/passwd", "absolute"],
    ["a//b", "empty segment"],
    ["a/", "empty segment"],
    ["a\0b", "NUL"],
    ["a\\b", "backslash"],
    ["..\\x", "backslash"],
    ["C:/Windows/x", "drive letter"],
    ["c:x", "drive letter"],
    ["a\nb", "control character"],
    [".baton/baton.db", ".baton"],
    [".BATON/baton.db", ".baton"],
    [".git/config", ".git"],
    ["vendor/lib/.git/HEAD", ".git"],
    ["x".repeat(5000), "longer"],
  ])("refuses %j (%s)", (p, why) => {
    const problem = pathProblem(p);
    expect(problem, `expected ${JSON.stringify(p.slice(0, 40))} to be refused`).toBeDefined();
    expect(problem).toContain(why);
  });

  it("refuses non-strings", () => {
    expect(pathProblem(42)).toBe("is not a string");
    expect(pathProblem(undefined)).toBe("is not a string");
  });
});

describe("parseRollbackIntent", () => {
  it.each<[string, ReturnType<typeof parseRollbackIntent>]>([
    ["/rollback", { steps: 1 }],
    ["/rollback 3", { steps: 3 }],
    ["  /rollback   2 ", { steps: 2 }],
    ["/undo", { steps: 1 }],
    ["/rollback cp-1a2b3c", { to: "cp-1a2b3c" }],
    ["/rollback --to cp-1a2b3c", { to: "cp-1a2b3c" }],
    ["undo that", { steps: 1 }],
    ["Undo that.", { steps: 1 }],
    ["revert that", { steps: 1 }],
    ["please revert that change", { steps: 1 }],
    ["can you undo that please?", { steps: 1 }],
    ["Oops, undo that!", { steps: 1 }],
    ["that broke the build, revert that", { steps: 1 }],
    ["undo the last change", { steps: 1 }],
    ["roll back your last edit", { steps: 1 }],
    ["rollback", { steps: 1 }],
    ["undo", { steps: 1 }],
    ["roll back two steps", { steps: 2 }],
    ["Roll back 3 steps", { steps: 3 }],
    ["undo the last 2 changes", { steps: 2 }],
    ["revert the last three edits", { steps: 3 }],
    ["go back two steps", { steps: 2 }],
    ["roll back to cp-9f8e7d", { to: "cp-9f8e7d" }],
    ["revert to checkpoint cp-9f8e7d please", { to: "cp-9f8e7d" }],
    ["It\u2019s wrong. Undo that", { steps: 1 }],
  ])("%j → %j", (prompt, want) => {
    expect(parseRollbackIntent(prompt), `prompt ${JSON.stringify(prompt)}`).toEqual(want);
  });

  it.each([
    "don't undo that test",
    "do not revert that",
    "Don\u2019t roll back",
    "never undo that",
    "how do I undo that?",
    "why did you revert that?",
    "undo that test",
    "revert that file to use tabs",
    "the undo button is broken",
    "add an undo feature to the editor",
    "write a rollback migration for the users table",
    "we should roll back the deploy tomorrow if it fails badly",
    "/rollback 0",
    "/rollback foo",
    "/rollbacks",
    "roll back zero steps",
    "",
    "   ",
  ])("does not fire on %j", (prompt) => {
    expect(parseRollbackIntent(prompt), `prompt ${JSON.stringify(prompt)} should not be a rollback`).toBeUndefined();
  });
});

/** Baton's session-start text as Gemini CLI hands it back inside every headless prompt. */
const BATON_CONTEXT = [
  "Baton: where this work stands (session s-1, task, phase build).",
  "Next action: continue: edit src/app.ts, then run the tests.",
  'If a change goes wrong, the user can say "undo that" or type /rollback 2; undo a rollback: baton rollback --to cp-1a2b.',
  "Lessons:",
  ...Array.from({ length: 40 }, (_, i) => `- Lesson ${i}: revert nothing by hand, restore files with baton, go back one step at a time.`),
].join("\n");

describe("the user's words in what the agents send", () => {
  it.each<[string, ReturnType<typeof parseRollbackIntent>]>([
    // Gemini CLI headless: SessionStart context, a blank line, then the user's words.
    [`<hook_context>${BATON_CONTEXT}</hook_context>\n\nundo that`, { steps: 1 }],
    [`<hook_context>${BATON_CONTEXT}</hook_context>\n\n/rollback 2`, { steps: 2 }],
    [`<hook_context>${BATON_CONTEXT}</hook_context>\n\nplease revert that change`, { steps: 1 }],
    // Claude Code and Codex context blocks before or after the words.
    ["<system-reminder>\nThe user opened a.ts.\n</system-reminder>\nundo that", { steps: 1 }],
    ["/rollback 3\n\n<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>", { steps: 3 }],
    ["roll back two steps\n\n<stdin>\nsome piped text\n</stdin>", { steps: 2 }],
  ])("%#: a rollback after or before a context block", (prompt, want) => {
    expect(prompt.length > 2_000 || prompt.includes("<")).toBe(true);
    expect(parseRollbackIntent(prompt)).toEqual(want);
  });

  it.each([
    // Baton's own text mentions rollbacks: alone it is no request.
    `<hook_context>${BATON_CONTEXT}</hook_context>`,
    `<hook_context>${BATON_CONTEXT}</hook_context>\n\nadd a rollback migration`,
    `<hook_context>undo that</hook_context>\n\nwhat does the undo button do?`,
    "<b>undo</b> that for me in the docs",
  ])("%#: no rollback from the context alone or from a tag in the sentence", (prompt) => {
    expect(parseRollbackIntent(prompt)).toBeUndefined();
  });

  it("keeps the user's words and removes only the blocks around them", () => {
    expect(userWords(`<hook_context>${BATON_CONTEXT}</hook_context>\n\nfix the login bug`)).toBe("fix the login bug");
    expect(userWords("<b>undo</b> that")).toBe("<b>undo</b> that");
    expect(userWords("compare <a> and <b>\n<x>1</x>")).toBe("compare <a> and <b>");
    expect(userWords("<system-reminder>x</system-reminder>\n<stdin>\ny\n</stdin>")).toBe("");
  });
});

function cp(seq: number, over: Partial<CheckpointInfo> = {}): CheckpointInfo {
  return { id: `cp-${seq}`, sessionId: "s", seq, kind: "targeted", pinned: false, createdAt: `t${seq}`, fileCount: 1, ...over };
}

describe("chooseTarget", () => {
  const four = [cp(1), cp(2), cp(3), cp(4)];

  it("counts steps back from the newest checkpoint", () => {
    const r = chooseTarget(four, { steps: 1 });
    expect(r.ok && r.target.id).toBe("cp-4");
    const r3 = chooseTarget(four, { steps: 3 });
    expect(r3.ok && r3.target.id).toBe("cp-2");
    expect(r3.ok && r3.range.map((c) => c.id)).toEqual(["cp-2", "cp-3", "cp-4"]);
  });

  it("after a rollback, steps count back from the checkpoint it restored (undo-like), and undoing it resets the cursor", () => {
    const afterRollback = [...four, cp(5, { kind: "safety", restores: "cp-3" })];
    expect(stepCursor(afterRollback)).toBe(2);
    const r = chooseTarget(afterRollback, { steps: 1 });
    expect(r.ok && r.target.id).toBe("cp-2");
    // the range still includes the safety checkpoint (it knows the files the rollback changed)
    expect(r.ok && r.range.map((c) => c.id)).toEqual(["cp-2", "cp-3", "cp-4", "cp-5"]);
    const afterUndo = [...afterRollback, cp(6, { kind: "safety", restores: "cp-5" })];
    expect(stepCursor(afterUndo)).toBe(4);
    const u = chooseTarget(afterUndo, { steps: 1 });
    expect(u.ok && u.target.id).toBe("cp-4");
  });

  it("after a rollback and changes since, the checkpoint it restored is the first step back (again)", () => {
    const afterRollback = [...four, cp(5, { kind: "safety", restores: "cp-3" })];
    expect(restoredAt(afterRollback)?.id).toBe("cp-3");
    const r = chooseTarget(afterRollback, { steps: 1, again: true });
    expect(r.ok && r.target.id).toBe("cp-3");
    const r2 = chooseTarget(afterRollback, { steps: 2, again: true });
    expect(r2.ok && r2.target.id).toBe("cp-2");
    // Back at the first checkpoint: it is the only step left.
    const atFirst = [...four, cp(5, { kind: "safety", restores: "cp-1" })];
    expect(chooseTarget(atFirst, { steps: 1 }).ok).toBe(false);
    const f = chooseTarget(atFirst, { steps: 1, again: true });
    expect(f.ok && f.target.id).toBe("cp-1");
    // A checkpoint taken since, or none restored: `again` changes nothing.
    expect(restoredAt(four)).toBeUndefined();
    const taken = [...afterRollback, cp(6)];
    expect(restoredAt(taken)).toBeUndefined();
    const t = chooseTarget(taken, { steps: 1, again: true });
    expect(t.ok && t.target.id).toBe("cp-6");
    // After undoing the rollback, the cursor is where it was: no checkpoint to restore again.
    expect(restoredAt([...afterRollback, cp(6, { kind: "safety", restores: "cp-5" })])).toBeUndefined();
  });

  it("a pruned target is checkpoint_pruned naming the oldest available; an unknown one is checkpoint_not_found", () => {
    const list = [cp(1, { prunedAt: "x" }), cp(2, { prunedAt: "x" }), cp(3), cp(4, { pinned: true })];
    const byId = chooseTarget(list, { to: "cp-1" });
    expect(byId).toMatchObject({ ok: false, code: "checkpoint_pruned", oldestAvailable: { id: "cp-3" } });
    const bySteps = chooseTarget(list, { steps: 3 });
    expect(bySteps).toMatchObject({ ok: false, code: "checkpoint_pruned", oldestAvailable: { id: "cp-3" } });
    expect(chooseTarget(list, { to: "cp-99" })).toMatchObject({ ok: false, code: "checkpoint_not_found" });
    expect(chooseTarget(list, { steps: 5 })).toMatchObject({ ok: false, code: "checkpoint_not_found" });
    expect(chooseTarget([], { steps: 1 })).toMatchObject({ ok: false, code: "checkpoint_not_found" });
  });

  it("reports pruned checkpoints inside the range", () => {
    const list = [cp(1, { pinned: true }), cp(2, { prunedAt: "x" }), cp(3)];
    const r = chooseTarget(list, { to: "cp-1" });
    expect(r.ok && r.prunedInRange).toEqual(["cp-2"]);
    expect(r.ok && r.range.map((c) => c.id)).toEqual(["cp-1", "cp-3"]);
  });
});

describe("composeRestore", () => {
  const file = (path: string, hash: string) => ({ path, hash, mode: 0o644, size: 1 });
  it("takes each path's version from the oldest checkpoint in the range that knows it", () => {
    const range: Checkpoint[] = [
      { ...cp(1), files: [file("a", "a1")] },
      { ...cp(2), files: [file("a", "a2"), { path: "b", absent: true }] },
      { ...cp(3), files: [file("b", "b3"), file("c", "c3")] },
    ];
    expect(composeRestore(range).map((e) => [e.path, "hash" in e.want ? e.want.hash : "absent", e.from])).toEqual([
      ["a", "a1", "cp-1"],
      ["b", "absent", "cp-2"],
      ["c", "c3", "cp-3"],
    ]);
  });

  it("a tree checkpoint knows every current path it does not list: those are removed", () => {
    const range: Checkpoint[] = [
      { ...cp(1, { kind: "tree" }), files: [file("keep", "k1"), { path: "big", skipped: "too large" }] },
      { ...cp(2), files: [file("new-by-tool", "n2")] },
    ];
    const r = composeRestore(range, ["keep", "big", "created-by-shell", "new-by-tool"]);
    expect(r.map((e) => [e.path, Object.keys(e.want).includes("absent") ? "absent" : "skipped" in e.want ? "skipped" : "file"])).toEqual([
      ["big", "skipped"],
      ["created-by-shell", "absent"],
      ["keep", "file"],
      ["new-by-tool", "absent"],
    ]);
  });
});

describe("composeRestore after a rollback", () => {
  const file = (path: string, hash: string) => ({ path, hash, mode: 0o644, size: 1 });
  it("a tree checkpoint also decides paths only a later checkpoint names: absent unless the walk ignores them", () => {
    // t1 tree (a), then a rollback's safety checkpoint recorded new.txt and ignored.log before removing them.
    const range: Checkpoint[] = [
      { ...cp(1, { kind: "tree" }), files: [file("a", "a1")] },
      { ...cp(2, { kind: "safety" }), files: [file("a", "a2"), file("new.txt", "x"), file("ignored.log", "l")] },
    ];
    const r = composeRestore(range, ["a"], (p) => !p.endsWith(".log"));
    expect(r.map((e) => [e.path, "hash" in e.want ? e.want.hash : "absent", e.from])).toEqual([
      ["a", "a1", "cp-1"],
      ["ignored.log", "l", "cp-2"],
      ["new.txt", "absent", "cp-1"],
    ]);
  });

  it("a path in the tree now that a tree checkpoint did not cover (ignored then) is left to later checkpoints", () => {
    const range: Checkpoint[] = [
      { ...cp(1, { kind: "tree" }), files: [file(".gitignore", "g1")] },
      { ...cp(2, { kind: "tree" }), files: [file(".gitignore", "g2"), file("debug.log", "d2")] },
    ];
    const asked: string[] = [];
    const covered = (p: string, c: Checkpoint) => {
      asked.push(`${c.id}:${p}`);
      return c.id !== "cp-1" || !p.endsWith(".log");
    };
    expect(
      composeRestore(range, [".gitignore", ".env", "x.log"], covered).map((e) => [
        e.path,
        "hash" in e.want ? e.want.hash : "absent",
        e.from,
      ]),
    ).toEqual([
      [".env", "absent", "cp-1"],
      [".gitignore", "g1", "cp-1"],
      ["debug.log", "d2", "cp-2"],
      ["x.log", "absent", "cp-2"],
    ]);
    expect(asked).toContain("cp-1:x.log");
  });

  it("a file at a and a file at a/b from different checkpoints: the older checkpoint's wins, the other is absent", () => {
    const range: Checkpoint[] = [
      { ...cp(1), files: [file("a", "a1")] }, // a was a file then
      { ...cp(2), files: [file("a/b", "b2"), file("c/d", "d2")] }, // later a was a directory
      { ...cp(3), files: [file("c", "c3")] }, // and c/ became a file after c/d's checkpoint
    ];
    expect(composeRestore(range).map((e) => [e.path, "hash" in e.want ? e.want.hash : "absent", e.from])).toEqual([
      ["a", "a1", "cp-1"],
      ["a/b", "absent", "cp-1"],
      ["c", "absent", "cp-2"],
      ["c/d", "d2", "cp-2"],
    ]);
  });

  it("an older targeted checkpoint still wins over a tree checkpoint after it", () => {
    const range: Checkpoint[] = [
      { ...cp(1), files: [{ path: "n", absent: true }, file("a", "a1")] },
      { ...cp(2, { kind: "tree" }), files: [file("a", "a2"), file("n", "n2")] },
      { ...cp(3, { kind: "safety" }), files: [file("m", "m3")] },
    ];
    expect(composeRestore(range, ["a", "n"]).map((e) => [e.path, "hash" in e.want ? e.want.hash : "absent", e.from])).toEqual([
      ["a", "a1", "cp-1"],
      ["m", "absent", "cp-2"],
      ["n", "absent", "cp-1"],
    ]);
  });
});

describe("rollback facet → next action and suggestions", () => {
  const flow = BUILTIN_FLOWS.task!;
  function fold(events: Pick<JournalEvent, "type" | "data">[]) {
    const snap = emptySnapshot("s", flow, "2026-01-01T00:00:00Z");
    for (const [i, e] of events.entries()) {
      foldEvent(flow, snap, { sessionId: "s", seq: i + 1, id: `e${i}`, actor: "user", at: "2026-01-01T00:00:00Z", ...e });
    }
    return snap;
  }
  const started = { type: "rollback:started", data: { id: "rb-1", target: "cp-3", safety: "cp-9", files: 4 } };
  const applied = { type: "rollback:applied", data: { id: "rb-1", target: "cp-3", safety: "cp-9", restored: 3, removed: 1 } };

  it("an interrupted rollback pre-empts everything with finish_rollback naming both commands", () => {
    const snap = fold([started]);
    const a = decideNextAction({ flow, snap, pendingWork: [{ kind: "x", seq: 1, state: "ready" }] }).nextAction;
    expect(a.action).toBe("finish_rollback");
    expect(a.command).toBe("baton rollback --session s --to cp-3");
    expect(a.reason).toContain("baton rollback --session s --to cp-9");
    expect(rollbackSuggestions(snap)).toEqual([]);
  });

  it("an applied rollback clears it and suggests capturing a lesson from it", () => {
    const snap = fold([started, applied]);
    expect(finishRollbackRule({ flow, snap, pendingWork: [] })).toBeUndefined();
    expect(snap.facets.rollbacks).toMatchObject([{ id: "rb-1", state: "applied", restored: 3, removed: 1, files: 4 }]);
    expect(rollbackSuggestions(snap)).toEqual([
      expect.objectContaining({ action: "capture_lesson", command: 'baton lessons add "<one sentence>" --session s --from-rollback rb-1' }),
    ]);
  });
});

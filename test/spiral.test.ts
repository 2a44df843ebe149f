import { describe, expect, it } from "vitest";
import { emptySnapshot } from "../src/core/session/fold.js";
import {
  DEFAULT_SPIRAL_THRESHOLDS,
  detectSpiral,
  pushTurn,
  type SpiralThresholds,
  spiralPauseRule,
  spiralThresholds,
  turnEntry,
} from "../src/core/spiral/detector.js";
import { SNAPSHOT_LIMITS, type TurnEntry, type TurnRecord } from "../src/core/types.js";
import { BUILTIN_FLOWS } from "../src/services/flows.js";
import { run, trajectories, trajectory } from "./trajectories.js";

/** Build a window from turn records, as the fold would (seq = position + 1; a turn a minute unless `at` says). */
function windowOf(records: (Partial<TurnRecord> & { tool?: string; at?: string })[]): TurnEntry[] {
  let w: TurnEntry[] = [];
  records.forEach(({ at, ...r }, i) => {
    const rec: TurnRecord = { tool: "Edit", status: "success", ...r } as TurnRecord;
    w = pushTurn(w, turnEntry(rec, { id: `t${i + 1}`, seq: i + 1, at: at ?? new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString() }));
  });
  return w;
}

const detect = (records: Parameters<typeof windowOf>[0], t: Partial<SpiralThresholds> = {}) =>
  detectSpiral(windowOf(records), { ...DEFAULT_SPIRAL_THRESHOLDS, ...t });
const ids = (d: ReturnType<typeof detect>) => d?.turns.map((t) => t.id);
const file = (path: string, hash: string, size?: number) => ({ path, hash, ...(size !== undefined ? { size } : {}) });

describe("spiral detector: the same call in a row", () => {
  it("fires on the same call with the same result the fourth time, not the third (every peer lets three through)", () => {
    const four = [1, 2, 3, 4].map(() => ({ argsHash: "a1", observationHash: "o1" }));
    expect(detect(four.slice(0, 3))).toBeUndefined();
    const d = detect(four);
    expect(d?.pattern).toBe("same_signature");
    expect(ids(d)).toEqual(["t1", "t2", "t3", "t4"]);
    expect(d?.signature).toBe("Edit#a1");
    // The peers' own cases: the OpenHands SDK's three identical `ls` are not stuck, four are.
    expect(run(trajectory("openhands-sdk/repeating-action-observation-less-than-4")).step).toBeUndefined();
    expect(run(trajectory("openhands-sdk/repeating-action-observation"))).toMatchObject({ step: 4, pattern: "same_signature", from: 1 });
    expect(run(trajectory("roo-code/custom-limit-2")).step).toBeUndefined();
  });

  it("a repeat whose result changed is a new step", () => {
    const polls = [1, 2, 3, 4, 5, 6].map((i) => ({ tool: "Bash", argsHash: "status", observationHash: `o${i}` }));
    expect(detect(polls)).toBeUndefined();
    expect(
      detect([...polls.slice(0, 2), ...[1, 2, 3, 4].map(() => ({ tool: "Bash", argsHash: "status", observationHash: "o9" }))])?.pattern,
    ).toBe("same_signature");
  });

  it("fires on the third failure of the same call when it fails the same way in the same place, on the fourth however it fails", () => {
    expect(run(trajectory("baton/identical-npm-test"))).toMatchObject({ step: 3, pattern: "same_signature", from: 1 });
    expect(run(trajectory("openhands/unterminated-string"))).toMatchObject({ step: 3, pattern: "same_signature" });
    // The reported line moves each time: not the same failure, so the fourth failure pauses.
    expect(run(trajectory("openhands/invalid-syntax-error-three-incidents")).step).toBeUndefined();
    expect(run(trajectory("openhands/incomplete-input-error-random-lines"))).toMatchObject({ step: 4, pattern: "same_signature" });
  });

  it("does not fire for the same tool with different args, or without an args hash", () => {
    expect(detect([1, 2, 3, 4, 5].map((i) => ({ argsHash: `a${i}` })))).toBeUndefined();
    expect(detect([{}, {}, {}, {}, {}])).toBeUndefined();
    expect(run(trajectory("roo-code/native-args-cwd")).step).toBeUndefined();
  });

  it("does not fire when every repeat wrote content never seen before (a generator run again)", () => {
    const runs = [1, 2, 3, 4].map((i) => ({ tool: "Bash", argsHash: "gen", files: [file("out.txt", `h${i}`, i * 10)] }));
    expect(detect(runs)).toBeUndefined();
    // The same call leaving the file as it was is a spiral.
    expect(detect([runs[0]!, runs[0]!, runs[0]!, runs[0]!])?.pattern).toBe("same_signature");
  });
});

describe("spiral detector: waiting", () => {
  const poll = (i: number, gap: number, out = "in_progress") => ({
    tool: "Bash",
    argsHash: "gh-run-view",
    observationHash: out,
    waiting: true,
    waitingOn: "gh run view 42 --json status",
    at: new Date(Date.UTC(2026, 0, 5) + i * gap * 1000).toISOString(),
  });
  const polls = (n: number, gap: number) => Array.from({ length: n }, (_, i) => poll(i, gap));

  it("polls that bring nothing new are progress until the budget: 30 minutes or 30 calls; the pause says what it waits on", () => {
    expect(detect(polls(28, 65))).toBeUndefined();
    const d = detect(polls(29, 65));
    expect(d?.pattern).toBe("waiting");
    expect(d?.summary).toBe("still waiting on gh run view 42 --json status: 29 calls over 30 min brought nothing new");
    expect(ids(d)?.[0]).toBe("t1");
    expect(detect(polls(29, 5))).toBeUndefined();
    expect(detect(polls(30, 5))?.summary).toBe("still waiting on gh run view 42 --json status: 30 calls over 2 min brought nothing new");
  });

  it("the budget counts from the last poll that brought something new, and is configurable", () => {
    // 20 polls, then the run moves on to its next step and 9 more polls see that: 29 calls over 30 minutes, 9 since the news.
    const moved = Array.from({ length: 29 }, (_, i) => poll(i, 65, i < 20 ? "in_progress" : "step 3"));
    expect(detect(moved)).toBeUndefined();
    expect(detect(moved.map((p) => ({ ...p, observationHash: "in_progress" })))?.pattern).toBe("waiting");
    expect(detect(polls(6, 65), { waitCalls: 6 })?.pattern).toBe("waiting");
    expect(detect(polls(6, 400), { waitMinutes: 30, waitCalls: 0 })?.pattern).toBe("waiting");
    expect(detect(polls(40, 65), { waitMinutes: 0, waitCalls: 0 })).toBeUndefined();
  });

  it("waiting on a CI run, a server, a database or a rate limit is not a loop (the peers pause them)", () => {
    for (const id of [
      "baton/waiting-ci-poll-completes",
      "baton/waiting-ci-poll-long-but-finishes",
      "baton/waiting-server-start",
      "baton/waiting-db-ready",
      "baton/waiting-rate-limit",
      "baton/waiting-sleep-then-check",
      "baton/waiting-bash-output",
    ])
      expect(run(trajectory(id)).step, id).toBeUndefined();
    // A server that never comes up: 30 unchanged health checks.
    expect(run(trajectory("baton/waiting-health-server-dead"))).toMatchObject({ step: 31, pattern: "waiting", from: 2 });
  });
});

describe("spiral detector: file churn", () => {
  it("fires when a change that was undone is made again, proposing the checkpoint before the first time", () => {
    const d = detect([
      { argsHash: "e1", files: [file("a.ts", "B")], checkpointId: "cp-1" },
      { tool: "Bash", argsHash: "test", status: "error", failurePlace: "F1", checkpointId: "cp-2" },
      { argsHash: "e2", files: [file("a.ts", "A")], checkpointId: "cp-3" },
      { tool: "Bash", argsHash: "test", status: "error", failurePlace: "F0", checkpointId: "cp-4" },
      { argsHash: "e1", files: [file("a.ts", "B")], checkpointId: "cp-5" },
    ]);
    expect(d?.pattern).toBe("file_churn");
    expect(d?.path).toBe("a.ts");
    expect(d?.from.id).toBe("t1");
    expect(d?.proposedCheckpoint).toBe("cp-1");
    expect(ids(d)).toEqual(["t1", "t3", "t5"]);
    expect(run(trajectory("baton/flipflop-tsconfig-module"))).toMatchObject({
      step: 5,
      pattern: "file_churn",
      from: 1,
      checkpointBefore: 1,
    });
    expect(run(trajectory("baton/flipflop-edit-revert-edit"))).toMatchObject({ step: 5, pattern: "file_churn" });
  });

  it("fires when a file goes through the same change again, whatever call makes it (A→B→A→B)", () => {
    const d = detect([
      { argsHash: "w1", files: [file("a.ts", "A")] },
      { argsHash: "e1", files: [file("a.ts", "B")] },
      { tool: "Read", argsHash: "r" },
      { argsHash: "e2", files: [file("a.ts", "A")] },
      { argsHash: "e3", files: [file("b.ts", "Z")] },
      { argsHash: "e4", files: [file("a.ts", "B")] },
    ]);
    expect(d?.pattern).toBe("file_churn");
    expect(d?.from.id).toBe("t2");
  });

  it("one edit reverted to try another approach is progress, and so is a redo after other files changed", () => {
    expect(run(trajectory("baton/fix-debug-print-and-remove")).step).toBeUndefined();
    expect(run(trajectory("baton/revert-once-new-approach")).step).toBeUndefined();
    expect(run(trajectory("baton/revert-twice-different-attempts")).step).toBeUndefined();
    expect(
      detect([
        { argsHash: "e1", files: [file("a.ts", "B")] },
        { argsHash: "e2", files: [file("a.ts", "A")] },
        { argsHash: "fix", files: [file("b.ts", "Y")] },
        { argsHash: "e1", files: [file("a.ts", "B")] },
      ]),
    ).toBeUndefined();
  });

  it("does not fire for a file edited with real progress, or a write that changed nothing after real edits", () => {
    expect(detect([100, 150, 200, 260].map((size, i) => ({ argsHash: `e${i}`, files: [file("a.ts", `h${i}`, size)] })))).toBeUndefined();
    // The size going back and forth is no loop by itself: an edit that grew a function, then one that trimmed it.
    expect(detect([100, 120, 101].map((size, i) => ({ argsHash: `e${i}`, files: [file("a.ts", `h${i}`, size)] })))).toBeUndefined();
    expect(
      detect([
        { argsHash: "e1", files: [file("a.ts", "h1")] },
        { argsHash: "e2", files: [file("a.ts", "h2")] },
        { argsHash: "e3", files: [file("a.ts", "h3")] },
        { argsHash: "e4", files: [file("a.ts", "h3")] },
      ]),
    ).toBeUndefined();
  });
});

describe("spiral detector: same failure", () => {
  const failing = (place: string, args = "test") => ({
    tool: "Bash",
    argsHash: args,
    status: "error" as const,
    fingerprint: "TS2322",
    failurePlace: place,
  });

  it("fires on the same failure in the same place 3 times, not necessarily in a row, with nothing changed in between", () => {
    const d = detect([
      failing("a.ts:4"),
      { tool: "Read", argsHash: "r1" },
      failing("a.ts:4", "tsc"),
      { tool: "Grep", argsHash: "g1" },
      failing("a.ts:4"),
    ]);
    expect(d?.pattern).toBe("same_failure");
    expect(d?.fingerprint).toBe("TS2322");
    expect(ids(d)).toEqual(["t1", "t3", "t5"]);
    expect(run(trajectory("baton/identical-pytest-reads-between"))).toMatchObject({ step: 5, pattern: "same_failure", from: 1 });
    // cargo clean in between changes no source, and its "Compiling" line is not part of the failure.
    expect(run(trajectory("baton/identical-cargo-after-clean"))).toMatchObject({ step: 4, pattern: "same_failure" });
  });

  it("a failure is new when its place moved or a file changed in between", () => {
    expect(detect([failing("a.ts:4"), failing("a.ts:9", "tsc"), failing("a.ts:14")])).toBeUndefined();
    expect(
      detect([
        failing("a.ts:4"),
        { argsHash: "fix1", files: [file("a.ts", "h1")] },
        failing("a.ts:4"),
        { argsHash: "fix2", files: [file("a.ts", "h2")] },
        failing("a.ts:4"),
      ]),
    ).toBeUndefined();
    expect(run(trajectory("baton/fix-tsc-errors-one-by-one")).step).toBeUndefined();
    expect(run(trajectory("baton/fix-same-place-three-attempts")).step).toBeUndefined();
  });

  it("does not fire when the failing call succeeded in between, or for different failures", () => {
    expect(
      detect([
        failing("F1"),
        failing("F1"),
        { tool: "Read", argsHash: "r" },
        { tool: "Bash", argsHash: "test", status: "success" },
        failing("F1", "lint"),
      ]),
    ).toBeUndefined();
    expect(detect([failing("F1", "a"), failing("F2", "b"), failing("F3", "c")])).toBeUndefined();
  });

  it("proposes the checkpoint before the change that led to the failures (before the first one, the files are as they are now)", () => {
    expect(run(trajectory("baton/loop-after-progress"))).toMatchObject({ step: 11, from: 9, checkpointBefore: 8 });
  });
});

describe("spiral detector: cycles", () => {
  const ab = (n: number) =>
    Array.from({ length: n }, (_, i) => (i % 2 === 0 ? { tool: "Edit", argsHash: "A" } : { tool: "Bash", argsHash: "B" }));

  it("fires on A-B-A-B-A-B with the same results (OpenHands' boundary)", () => {
    const d = detect(ab(6));
    expect(d?.pattern).toBe("cycle");
    expect(ids(d)).toEqual(["t1", "t2", "t3", "t4", "t5", "t6"]);
    expect(d?.signature).toBe("Edit#A | Bash#B");
    expect(detect(ab(5))).toBeUndefined();
    expect(run(trajectory("openhands/repeating-action-observation-pattern"))).toMatchObject({ step: 6, pattern: "cycle" });
  });

  it("fires on cycles of 3 and 5 calls the third time round, ten steps before Gemini CLI for five", () => {
    expect(run(trajectory("gemini-cli/cycle-3"))).toMatchObject({ step: 9, pattern: "cycle", from: 1 });
    expect(run(trajectory("gemini-cli/cycle-5"))).toMatchObject({ step: 15, pattern: "cycle", from: 1 });
    expect(run(trajectory("gemini-cli/different-tool-calls"))).toMatchObject({ step: 9, pattern: "cycle" });
  });

  it("does not fire when the results differ, for two rounds broken by another call, or for a cycle of polls", () => {
    const loop = [1, 2, 3].flatMap((i) => [
      { tool: "Edit", argsHash: `edit${i}` },
      { tool: "Bash", argsHash: "test" },
    ]);
    expect(detect(loop)).toBeUndefined();
    expect(run(trajectory("gemini-cli/alternating-that-varies")).step).toBeUndefined();
    expect(run(trajectory("baton/waiting-sleep-then-check")).step).toBeUndefined();
    expect(run(trajectory("baton/fix-tdd-cycles")).step).toBeUndefined();
  });
});

describe("spiral detector: same action, same observation (off unless set)", () => {
  const turns = (between: (i: number) => Partial<TurnRecord>) =>
    [1, 2, 3, 4].flatMap((i) => [between(i), { tool: "Bash", argsHash: "status", observationHash: "same-output" }]);

  it("fires on the same call returning the same result n times with only reads in between", () => {
    const reads = turns((i) => ({ tool: "Read", argsHash: `r${i}` }));
    expect(detect(reads)).toBeUndefined();
    const d = detect(reads, { sameObservation: 4 });
    expect(d?.pattern).toBe("same_observation");
    expect(ids(d)).toEqual(["t2", "t4", "t6", "t8"]);
  });

  it("does not fire when files change in between, or when the observation changes", () => {
    expect(
      detect(
        turns((i) => ({ argsHash: `e${i}`, files: [file(`f${i}.ts`, `h${i}`)] })),
        { sameObservation: 4 },
      ),
    ).toBeUndefined();
    const changing = [1, 2, 3, 4].flatMap((i) => [
      { tool: "Read", argsHash: `r${i}` },
      { tool: "Bash", argsHash: "status", observationHash: `out${i}` },
    ]);
    expect(detect(changing, { sameObservation: 4 })).toBeUndefined();
  });
});

describe("spiral detector: the labelled trajectories", () => {
  it("pauses every loop of the tuning set, never before it began, and no trajectory that is progress", () => {
    const wrong: string[] = [];
    for (const t of trajectories("tuning")) {
      const r = run(t);
      if (!t.label.loop && r.step !== undefined) wrong.push(`${t.id}: paused at step ${r.step} (${r.pattern}), but it is progress`);
      if (t.label.loop && r.step === undefined) wrong.push(`${t.id}: a loop from step ${t.label.from}, not paused`);
      if (t.label.loop && r.step !== undefined && r.step < (t.label.from as number))
        wrong.push(`${t.id}: paused at ${r.step}, before the loop began`);
    }
    expect(wrong).toEqual([]);
  });
});

describe("spiral detector: progress, thresholds and the window", () => {
  it("real progress resets it: a progress turn starts a new window", () => {
    const failing = { tool: "Bash", argsHash: "test", status: "error" as const, fingerprint: "F1" };
    const look = { tool: "Read", argsHash: "a.ts" };
    expect(detect([failing, failing, look, failing])?.pattern).toBe("same_failure");
    expect(detect([failing, failing, { ...look, progress: true }, failing])).toBeUndefined();
    const w = windowOf([failing, failing, { ...look, progress: true }, failing]);
    expect(w.map((t) => t.id)).toEqual(["t3", "t4"]);
  });

  it("proposes the latest checkpoint at or before the spiral's first turn", () => {
    const d = detect([
      { argsHash: "x", checkpointId: "cp-early" },
      { argsHash: "a1" },
      { argsHash: "a1" },
      { argsHash: "a1" },
      { argsHash: "a1", checkpointId: "cp-late" },
    ]);
    expect(d?.from.id).toBe("t2");
    expect(d?.proposedCheckpoint).toBe("cp-early");
    expect(detect([{ argsHash: "a1" }, { argsHash: "a1" }, { argsHash: "a1" }, { argsHash: "a1" }])?.proposedCheckpoint).toBeUndefined();
  });

  it("honours configured thresholds, and 0 or enabled:false turns patterns off", () => {
    const four = [{ argsHash: "a1" }, { argsHash: "a1" }, { argsHash: "a1" }, { argsHash: "a1" }];
    expect(detect(four, { sameSignature: 5 })).toBeUndefined();
    expect(detect([...four, { argsHash: "a1" }], { sameSignature: 5 })?.pattern).toBe("same_signature");
    expect(detect(four.slice(0, 3), { sameSignature: 3 })?.pattern).toBe("same_signature");
    expect(detect(four, { sameSignature: 0 })).toBeUndefined();
    expect(detect(four, { enabled: false })).toBeUndefined();
  });

  it("parses thresholds from config and reports bad values without throwing", () => {
    expect(spiralThresholds({ sameSignature: 5, sizeTolerance: 0.1, waitMinutes: 45, waitCalls: 0 }).thresholds).toMatchObject({
      sameSignature: 5,
      sizeTolerance: 0.1,
      fileChurn: 3,
      waitMinutes: 45,
      waitCalls: 0,
    });
    const bad = spiralThresholds({
      sameSignature: 1,
      alternation: 3,
      fileChurn: 99,
      sizeTolerance: 2,
      enabled: "yes",
      bogus: 1,
      waitMinutes: 1.5,
    });
    expect(bad.thresholds).toEqual(DEFAULT_SPIRAL_THRESHOLDS);
    expect(bad.problems).toHaveLength(7);
    expect(bad.problems.join("\n")).toMatch(/spiral\.bogus is not a setting/);
    expect(bad.problems.join("\n")).toMatch(/spiral\.waitMinutes must be 0 \(no limit\) or a whole number of minutes up to 1440/);
    expect(spiralThresholds([1]).problems).toHaveLength(1);
  });

  it("keeps the window bounded however many turns arrive", () => {
    const w = windowOf(
      Array.from({ length: 500 }, (_, i) => ({ argsHash: `a${i}`, files: Array.from({ length: 60 }, (_, j) => file(`f${j}`, `h${i}`)) })),
    );
    expect(w).toHaveLength(SNAPSHOT_LIMITS.turns);
    expect(w[0]?.id).toBe(`t${500 - SNAPSHOT_LIMITS.turns + 1}`);
    expect(w.every((t) => t.files.length === SNAPSHOT_LIMITS.filesPerTurn)).toBe(true);
  });
});

describe("spiral pause rule", () => {
  const flow = BUILTIN_FLOWS.task!;

  it("asks the user, naming the rollback and the take-over choices", () => {
    const snap = emptySnapshot("s1", flow, "2026-01-01T00:00:00Z");
    expect(spiralPauseRule({ flow, snap, pendingWork: [] })).toBeUndefined();
    snap.facets.spiral = {
      paused: true,
      pattern: "same_signature",
      evidence: { pattern: "same_signature", summary: "Edit was called with the same arguments 3 times in a row", turns: [4, 5, 6] },
      proposedCheckpoint: "cp-9",
      turns: 3,
      window: [],
    };
    const a = spiralPauseRule({ flow, snap, pendingWork: [] })?.action;
    expect(a?.action).toBe("ask_user");
    expect(a?.reason).toContain("turns 4, 5, 6");
    expect(a?.choices?.map((c) => c.command)).toEqual([
      "baton rollback --session s1 --to cp-9 && baton resume s1 --unpause",
      "baton resume s1 --unpause",
    ]);
    delete snap.facets.spiral.proposedCheckpoint;
    const none = spiralPauseRule({ flow, snap, pendingWork: [] })?.action;
    expect(none?.choices?.map((c) => c.choice)).toEqual(["take_over"]);
    expect(none?.reason).toContain("No checkpoint exists from before the spiral began (turn seq 4)");
  });
});

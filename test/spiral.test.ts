import { describe, expect, it } from "vitest";
import { emptySnapshot } from "../src/core/fold.js";
import {
  DEFAULT_SPIRAL_THRESHOLDS,
  detectSpiral,
  pushTurn,
  type SpiralThresholds,
  spiralPauseRule,
  spiralThresholds,
  turnEntry,
} from "../src/core/spiral.js";
import { SNAPSHOT_LIMITS, type TurnEntry, type TurnRecord } from "../src/core/types.js";
import { BUILTIN_FLOWS } from "../src/services/flows.js";

/** Build a window from turn records, as the fold would (seq = position + 1). */
function windowOf(records: (Partial<TurnRecord> & { tool?: string })[]): TurnEntry[] {
  let w: TurnEntry[] = [];
  records.forEach((r, i) => {
    const rec: TurnRecord = { tool: "Edit", status: "success", ...r } as TurnRecord;
    w = pushTurn(w, turnEntry(rec, { id: `t${i + 1}`, seq: i + 1, at: `2026-01-01T00:00:${String(i).padStart(2, "0")}Z` }));
  });
  return w;
}

const detect = (records: Parameters<typeof windowOf>[0], t: Partial<SpiralThresholds> = {}) =>
  detectSpiral(windowOf(records), { ...DEFAULT_SPIRAL_THRESHOLDS, ...t });
const ids = (d: ReturnType<typeof detect>) => d?.turns.map((t) => t.id);
const file = (path: string, hash: string, size?: number) => ({ path, hash, ...(size !== undefined ? { size } : {}) });

describe("spiral detector: same tool signature", () => {
  it("fires on the same call (tool + args hash) three times in a row", () => {
    const d = detect([{ argsHash: "a1" }, { argsHash: "a1" }, { argsHash: "a1" }]);
    expect(d?.pattern).toBe("same_signature");
    expect(ids(d)).toEqual(["t1", "t2", "t3"]);
    expect(d?.signature).toBe("Edit#a1");
  });

  it("does not fire for the same tool with different args, for two repeats, or without an args hash", () => {
    expect(detect([{ argsHash: "a1" }, { argsHash: "a2" }, { argsHash: "a3" }])).toBeUndefined();
    expect(detect([{ argsHash: "a0" }, { argsHash: "a1" }, { argsHash: "a1" }])).toBeUndefined();
    expect(detect([{}, {}, {}, {}])).toBeUndefined();
  });

  it("does not fire when every repeat wrote content never seen before (a generator run again)", () => {
    const runs = [1, 2, 3].map((i) => ({ tool: "Bash", argsHash: "gen", files: [file("out.txt", `h${i}`, i * 10)] }));
    expect(detect(runs)).toBeUndefined();
    // The same call leaving the file as it was is a spiral.
    expect(detect([runs[0]!, runs[0]!, runs[0]!])?.pattern).toBe("same_signature");
  });
});

describe("spiral detector: file churn", () => {
  it("fires when a file written on 3 consecutive turns is back at an earlier version, proposing the checkpoint after it", () => {
    const d = detect([
      { argsHash: "e1", files: [file("a.ts", "A")], checkpointId: "cp-1" },
      { argsHash: "e2", files: [file("a.ts", "B")], checkpointId: "cp-2" },
      { argsHash: "e3", files: [file("a.ts", "A")], checkpointId: "cp-3" },
    ]);
    expect(d?.pattern).toBe("file_churn");
    expect(d?.path).toBe("a.ts");
    // Version A was made by t1; the spiral began with t2, whose checkpoint holds A.
    expect(d?.from.id).toBe("t2");
    expect(d?.proposedCheckpoint).toBe("cp-2");
    expect(ids(d)).toEqual(["t1", "t2", "t3"]);
  });

  it("fires when the size goes back and forth with no net change, even with new hashes", () => {
    const d = detect([
      { argsHash: "e1", files: [file("a.ts", "h1", 100)] },
      { argsHash: "e2", files: [file("a.ts", "h2", 120)] },
      { argsHash: "e3", files: [file("a.ts", "h3", 101)] },
    ]);
    expect(d?.pattern).toBe("file_churn");
    expect(d?.summary).toContain("100 → 120 → 101");
  });

  it("does not fire for a file edited 3 times with real progress", () => {
    const progress = [100, 150, 200, 260].map((size, i) => ({ argsHash: `e${i}`, files: [file("a.ts", `h${i}`, size)] }));
    expect(detect(progress)).toBeUndefined();
    // Back and forth, but with a real net change (beyond the 5% tolerance).
    expect(
      detect([
        { argsHash: "e1", files: [file("a.ts", "h1", 100)] },
        { argsHash: "e2", files: [file("a.ts", "h2", 150)] },
        { argsHash: "e3", files: [file("a.ts", "h3", 140)] },
      ]),
    ).toBeUndefined();
    // One write that changed nothing after two real edits.
    expect(
      detect([
        { argsHash: "e1", files: [file("a.ts", "h1")] },
        { argsHash: "e2", files: [file("a.ts", "h2")] },
        { argsHash: "e3", files: [file("a.ts", "h3")] },
        { argsHash: "e4", files: [file("a.ts", "h3")] },
      ]),
    ).toBeUndefined();
  });

  it("needs consecutive turns on the file: a turn elsewhere breaks the run", () => {
    expect(
      detect([
        { argsHash: "e1", files: [file("a.ts", "A")] },
        { argsHash: "e2", files: [file("a.ts", "B")] },
        { argsHash: "x", files: [file("b.ts", "Z")] },
        { argsHash: "e3", files: [file("a.ts", "A")] },
      ]),
    ).toBeUndefined();
  });

  it("uses the size tolerance from the thresholds", () => {
    const turns = [
      { argsHash: "e1", files: [file("a.ts", "h1", 100)] },
      { argsHash: "e2", files: [file("a.ts", "h2", 150)] },
      { argsHash: "e3", files: [file("a.ts", "h3", 110)] },
    ];
    expect(detect(turns)).toBeUndefined();
    expect(detect(turns, { sizeTolerance: 0.1 })?.pattern).toBe("file_churn");
  });
});

describe("spiral detector: same failure", () => {
  it("fires on the same fingerprint 3 times, not necessarily in a row", () => {
    const d = detect([
      { tool: "Bash", argsHash: "test", status: "error", fingerprint: "TS2322@a.ts:4" },
      { argsHash: "fix1", files: [file("a.ts", "h1")] },
      { tool: "Bash", argsHash: "test", status: "error", fingerprint: "TS2322@a.ts:4" },
      { argsHash: "fix2", files: [file("a.ts", "h2")] },
      { tool: "Bash", argsHash: "test", status: "error", fingerprint: "TS2322@a.ts:4" },
    ]);
    expect(d?.pattern).toBe("same_failure");
    expect(d?.fingerprint).toBe("TS2322@a.ts:4");
    expect(ids(d)).toEqual(["t1", "t3", "t5"]);
  });

  it("does not fire when the failing call succeeded in between, or for different failures", () => {
    expect(
      detect([
        { tool: "Bash", argsHash: "test", status: "error", fingerprint: "F1" },
        { tool: "Bash", argsHash: "test", status: "error", fingerprint: "F1" },
        { argsHash: "fix", files: [file("a.ts", "h1")] },
        { tool: "Bash", argsHash: "test", status: "success" },
        { tool: "Bash", argsHash: "lint", status: "error", fingerprint: "F1" },
      ]),
    ).toBeUndefined();
    expect(
      detect([
        { argsHash: "a", status: "error", fingerprint: "F1" },
        { argsHash: "b", status: "error", fingerprint: "F2" },
        { argsHash: "c", status: "error", fingerprint: "F3" },
      ]),
    ).toBeUndefined();
  });
});

describe("spiral detector: alternation", () => {
  const ab = (n: number) =>
    Array.from({ length: n }, (_, i) => (i % 2 === 0 ? { tool: "Edit", argsHash: "A" } : { tool: "Bash", argsHash: "B" }));

  it("fires on A-B-A-B-A-B over 6 turns", () => {
    const d = detect(ab(6));
    expect(d?.pattern).toBe("alternation");
    expect(ids(d)).toEqual(["t1", "t2", "t3", "t4", "t5", "t6"]);
    expect(d?.signature).toBe("Edit#A | Bash#B");
  });

  it("does not fire over 5 turns, or for an edit-test loop whose edits differ", () => {
    expect(detect(ab(5))).toBeUndefined();
    const loop = [1, 2, 3].flatMap((i) => [
      { tool: "Edit", argsHash: `edit${i}` },
      { tool: "Bash", argsHash: "test" },
    ]);
    expect(detect(loop)).toBeUndefined();
  });
});

describe("spiral detector: same action, same observation", () => {
  it("fires on the same call returning the same result 4 times, interleaved with other work", () => {
    const turns = [1, 2, 3, 4].flatMap((i) => [
      { tool: "Edit", argsHash: `e${i}`, files: [file(`f${i}.ts`, `h${i}`)] },
      { tool: "Bash", argsHash: "test", observationHash: "same-output" },
    ]);
    const d = detect(turns);
    expect(d?.pattern).toBe("same_observation");
    expect(ids(d)).toEqual(["t2", "t4", "t6", "t8"]);
  });

  it("does not fire when the observation changes, or only 3 times", () => {
    const changing = [1, 2, 3, 4].flatMap((i) => [
      { tool: "Edit", argsHash: `e${i}` },
      { tool: "Bash", argsHash: "test", observationHash: `out${i}` },
    ]);
    expect(detect(changing)).toBeUndefined();
    const three = [1, 2, 3].flatMap((i) => [
      { tool: "Edit", argsHash: `e${i}` },
      { tool: "Bash", argsHash: "test", observationHash: "same" },
    ]);
    expect(detect(three)).toBeUndefined();
  });
});

describe("spiral detector: progress, thresholds and the window", () => {
  it("real progress resets it: a progress turn starts a new window", () => {
    const failing = { tool: "Bash", argsHash: "test", status: "error" as const, fingerprint: "F1" };
    const progress = { tool: "Edit", argsHash: "big-fix", files: [file("a.ts", "h9")] };
    expect(detect([failing, failing, progress, failing])?.pattern).toBe("same_failure");
    expect(detect([failing, failing, { ...progress, progress: true }, failing])).toBeUndefined();
    const w = windowOf([failing, failing, { ...progress, progress: true }, failing]);
    expect(w.map((t) => t.id)).toEqual(["t3", "t4"]);
  });

  it("proposes the latest checkpoint at or before the spiral's first turn", () => {
    const d = detect([
      { argsHash: "x", checkpointId: "cp-early" },
      { argsHash: "a1" },
      { argsHash: "a1" },
      { argsHash: "a1", checkpointId: "cp-late" },
    ]);
    expect(d?.from.id).toBe("t2");
    expect(d?.proposedCheckpoint).toBe("cp-early");
    expect(detect([{ argsHash: "a1" }, { argsHash: "a1" }, { argsHash: "a1" }])?.proposedCheckpoint).toBeUndefined();
  });

  it("honours configured thresholds, and 0 or enabled:false turns patterns off", () => {
    const three = [{ argsHash: "a1" }, { argsHash: "a1" }, { argsHash: "a1" }];
    expect(detect(three, { sameSignature: 4 })).toBeUndefined();
    expect(detect([...three, { argsHash: "a1" }], { sameSignature: 4 })?.pattern).toBe("same_signature");
    expect(detect(three, { sameSignature: 0 })).toBeUndefined();
    expect(detect(three, { enabled: false })).toBeUndefined();
  });

  it("parses thresholds from config and reports bad values without throwing", () => {
    expect(spiralThresholds({ sameSignature: 5, sizeTolerance: 0.1 }).thresholds).toMatchObject({
      sameSignature: 5,
      sizeTolerance: 0.1,
      fileChurn: 3,
    });
    const bad = spiralThresholds({ sameSignature: 1, alternation: 3, fileChurn: 99, sizeTolerance: 2, enabled: "yes", bogus: 1 });
    expect(bad.thresholds).toEqual(DEFAULT_SPIRAL_THRESHOLDS);
    expect(bad.problems).toHaveLength(6);
    expect(bad.problems.join("\n")).toMatch(/spiral\.bogus is not a setting/);
    expect(spiralThresholds([1]).problems).toHaveLength(1);
  });

  it("keeps the window bounded however many turns arrive", () => {
    const w = windowOf(
      Array.from({ length: 500 }, (_, i) => ({ argsHash: `a${i}`, files: Array.from({ length: 60 }, (_, j) => file(`f${j}`, `h${i}`)) })),
    );
    expect(w).toHaveLength(SNAPSHOT_LIMITS.turns);
    expect(w[0]?.id).toBe("t489");
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

/**
 * The next-action rules, one by one (pure: snapshots built in memory), then their order and
 * how competing facts are named: the table in docs/flows.md, "What decides the next action".
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type LaneWrite, liveClaims, sharedFiles } from "../src/core/lanes.js";
import { emptySnapshot } from "../src/core/session/fold.js";
import { decideNextAction, NEXT_ACTION_RULES, type NextActionInput, pendingWorkRule, phaseRule } from "../src/core/session/next-action.js";
import {
  activeBlockerRule,
  bypassedBlockerRule,
  changedFilesRule,
  crashedRunRule,
  deadlineRule,
  deadWorkRule,
  expiringLeaseRule,
  lockRule,
  markerRule,
  openQuestionsRule,
  sharedFileRule,
  targetMismatchRule,
  unrecordedCompletionRule,
} from "../src/core/session/next-action-rules.js";
import { shellQuote } from "../src/core/shell.js";
import { checkpointBeforeTurn, spiralPauseRule } from "../src/core/spiral/detector.js";
import { finishRollbackRule } from "../src/core/time-travel/rollback.js";
import type { Snapshot } from "../src/core/types.js";
import { BUILTIN_FLOWS } from "../src/services/flows.js";
import { REPO } from "./helpers.js";

const task = BUILTIN_FLOWS.task!;
const NOW = new Date("2026-03-01T12:00:00.000Z");

function snap(phase = "in_progress", flow = task): Snapshot {
  const s = emptySnapshot("s", flow, "2026-03-01T10:00:00.000Z");
  s.phase = phase;
  return s;
}

function input(s: Snapshot, more: Partial<NextActionInput> = {}): NextActionInput {
  return { flow: task, snap: s, pendingWork: [], now: NOW, ...more };
}

/** Two agents at work now (core/lanes.ts) that both wrote `path` in their current turns: the lanes and their writes. */
function twoLanes(s: Snapshot, path = "src/app.ts"): LaneWrite[] {
  const since = "2026-03-01T11:58:00.000Z";
  const at = "2026-03-01T11:59:00.000Z";
  const lane = (id: string, agent: string) => ({
    id,
    agent,
    status: "working" as const,
    run: `${id}-r`,
    since,
    started: since,
    lastAt: at,
  });
  s.facets.lanes = { "claude:s1": lane("claude:s1", "Claude Code"), "codex:t1": lane("codex:t1", "Codex") };
  return [
    { path, lane: "claude:s1", at, hash: "a" },
    { path, lane: "codex:t1", at, hash: "b" },
  ];
}

function sharedFile(s: Snapshot, i: NextActionInput): void {
  i.sharedFiles = sharedFiles(liveClaims(s, twoLanes(s), NOW.getTime()));
}

const blocker = (id: string, state: "active" | "bypassed" | "resolved", extra: { workaround?: string; affects?: string } = {}) => ({
  id,
  text: "No staging credentials",
  state,
  since: "2026-03-01T10:00:00.000Z",
  updated: "2026-03-01T10:00:00.000Z",
  ...extra,
});

describe("each rule alone", () => {
  it("1 interrupted rollback → finish_rollback", () => {
    const s = snap();
    expect(finishRollbackRule(input(s))).toBeUndefined();
    s.facets.rollbacks.push({
      id: "rb1",
      target: "cp-3",
      safety: "cp-9",
      state: "started",
      files: 2,
      startedAt: "2026-03-01T11:00:00.000Z",
    } as never);
    const a = finishRollbackRule(input(s));
    expect(a?.action).toMatchObject({ action: "finish_rollback", command: "baton rollback --session s --to cp-3" });
    expect(a?.fact).toBe("rollback rb1 to checkpoint cp-3 was interrupted");
  });

  it("2 spiral pause → ask_user, with the proposed checkpoint or a plain none", () => {
    const s = snap();
    expect(spiralPauseRule(input(s))).toBeUndefined();
    s.facets.spiral = { paused: true, pattern: "same_signature", turns: 3, window: [], proposedCheckpoint: "cp-2" };
    expect(spiralPauseRule(input(s))?.action.command).toBe("baton rollback --session s --to cp-2 && baton resume s --unpause");
    delete s.facets.spiral.proposedCheckpoint;
    s.facets.spiral.evidence = { pattern: "same_signature", summary: "Edit thrice", turns: [7, 8, 9] };
    const none = spiralPauseRule(input(s))?.action;
    expect(none?.command).toBe("baton resume s --unpause");
    expect(none?.reason).toContain("No checkpoint exists from before the spiral began (turn seq 7)");
    expect(none?.reason).toContain("Edit thrice (turns 7, 8, 9).");
    // A detection whose turns are not in the window (written by hand, or pushed out) names none,
    // rather than an empty "(turns )".
    s.facets.spiral.evidence = { pattern: "same_signature", summary: "Edit thrice", turns: [] };
    const unnamed = spiralPauseRule(input(s))?.action.reason;
    expect(unnamed).toContain("Spiral detected (same_signature): Edit thrice. The session is paused");
    expect(unnamed).not.toContain("(turns");
  });

  it("the spiral's fallback point: the newest non-safety checkpoint at or before its first turn", () => {
    const cps = [
      { id: "a", kind: "targeted", createdAt: "2026-03-01T10:00:00.000Z" },
      { id: "b", kind: "tree", createdAt: "2026-03-01T10:05:00.000Z" },
      { id: "safety", kind: "safety", createdAt: "2026-03-01T10:06:00.000Z" },
      { id: "late", kind: "targeted", createdAt: "2026-03-01T10:10:00.000Z" },
    ];
    expect(checkpointBeforeTurn(cps, { at: "2026-03-01T10:07:00.000Z" })).toBe("b");
    expect(checkpointBeforeTurn(cps, { at: "2026-03-01T10:05:00.000Z" })).toBe("b");
    expect(checkpointBeforeTurn(cps, { at: "2026-03-01T09:00:00.000Z" })).toBeUndefined();
  });

  it("3 dead-lettered work → handle_dead_work", () => {
    const s = snap();
    expect(deadWorkRule(input(s))).toBeUndefined();
    const a = deadWorkRule(
      input(s, { deadWork: [{ kind: "steer", seq: 4, at: NOW.toISOString(), why: "its lease expired on delivery 5" }] }),
    );
    expect(a?.action).toMatchObject({ action: "handle_dead_work", command: "baton export s --seq 4" });
    expect(a?.action.reason).toContain("steer (seq 4)");
    expect(a?.action.reason).toContain("its lease expired on delivery 5");
  });

  it("4 pending work the phase does not cover → handle_pending_work", () => {
    const s = snap();
    expect(pendingWorkRule(input(s))).toBeUndefined();
    expect(pendingWorkRule(input(s, { pendingWork: [{ kind: "x", seq: 2, state: "leased" }] }))).toBeUndefined();
    const a = pendingWorkRule(input(s, { pendingWork: [{ kind: "x", seq: 2, state: "leased", leaseExpired: true }] }));
    expect(a?.action).toMatchObject({ action: "handle_pending_work", command: "baton poll --session s --json" });
  });

  it("5 markers in the session's files → the flow's marker rule", () => {
    const lv = BUILTIN_FLOWS["live-variant"]!;
    const s = snap("cycling", lv);
    const files = [{ path: "src/a.tsx", findings: [{ file: "src/a.tsx", line: 3, marker: "carbonize", excerpt: "x" }] }];
    expect(markerRule({ flow: lv, snap: s, pendingWork: [], markerFiles: [] })).toBeUndefined();
    const a = markerRule({ flow: lv, snap: s, pendingWork: [], markerFiles: files });
    expect(a?.action.action).toBe("run_carbonize_cleanup");
    expect(a?.fact).toBe("marker carbonize remains at src/a.tsx:3");
  });

  it("6 files changed since recorded → review_changed_files, re-recording every recordable one", () => {
    const s = snap();
    expect(changedFilesRule(input(s, { changedFiles: [] }))).toBeUndefined();
    const a = changedFilesRule(
      input(s, {
        changedFiles: [
          { path: "src/a.ts", state: "changed" },
          { path: "gone.ts", state: "missing" },
        ],
      }),
    );
    // A missing file is recorded as absent: one run of the command settles both.
    expect(a?.action).toMatchObject({ action: "review_changed_files", command: "baton files add src/a.ts gone.ts --session s" });
    expect(a?.action.reason).toContain("src/a.ts (changed), gone.ts (missing)");
    expect(a?.action.reason).toContain("What changed them is not known");
    // Paths are shell-quoted: nothing in them expands; an unreadable one is left out.
    const odd = changedFilesRule(
      input(s, {
        changedFiles: [
          { path: "a $HOME `id`.ts", state: "changed" },
          { path: "it's.ts", state: "changed" },
          { path: "d.ts", state: "unreadable" },
        ],
      }),
    );
    expect(odd?.action.command).toBe(`baton files add 'a $HOME \`id\`.ts' 'it'\\''s.ts' --session s`);
    // A name that reads as an option (a repository can hold `--root=..`) stays a path, as `./--root=..`.
    const dashed = changedFilesRule(input(s, { changedFiles: [{ path: "--root=..", state: "changed" }] }));
    expect(dashed?.action.command).toBe("baton files add ./--root=.. --session s");
  });

  it("shellQuote: a POSIX shell reads every argument back unchanged", () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 40 }).filter((x) => !x.includes("\0")),
        (arg) => {
          const r = spawnSync("sh", ["-c", `printf %s ${shellQuote(arg)}`], { encoding: "utf8" });
          expect(r.stdout).toBe(arg);
        },
      ),
      { numRuns: 40 },
    );
  });

  it("7 a passed deadline → record_timeout where the flow has it, else deadline_passed for the user", () => {
    const s = snap();
    s.deadline = "2026-03-01T13:00:00.000Z";
    expect(deadlineRule(input(s))).toBeUndefined();
    s.deadline = "2026-03-01T11:00:00.000Z";
    const a = deadlineRule(input(s))?.action;
    expect(a).toMatchObject({ action: "deadline_passed", command: "" });
    expect(a?.choices?.map((c) => c.choice)).toEqual(["finish", "stop"]);
    const ext = BUILTIN_FLOWS["external-run"]!;
    const r = snap("running", ext);
    r.deadline = "2026-03-01T11:00:00.000Z";
    expect(deadlineRule({ flow: ext, snap: r, pendingWork: [], now: NOW })?.action).toMatchObject({
      action: "record_timeout",
      command: "baton event s timeout",
    });
  });

  it("8 an active blocker → resolve_blocker, naming it, with the phase's action suggested", () => {
    const s = snap();
    s.facets.blockers.push(blocker("b0", "resolved"));
    expect(activeBlockerRule(input(s))).toBeUndefined();
    s.facets.blockers.push(blocker("b1", "active", { affects: "deploy" }));
    const a = activeBlockerRule(input(s));
    expect(a?.action.action).toBe("resolve_blocker");
    expect(a?.action.reason).toContain('Blocker b1 "No staging credentials" is active (affects deploy)');
    expect(a?.action.reason).toContain("Work it does not affect can go on (continue_task: `baton resume s --json`)");
    expect(a?.suggest?.map((x) => x.action)).toEqual(["continue_task"]);
    // No runnable command: choices, each naming the session, with a placeholder to replace.
    expect(a?.action.command).toBe("");
    expect(a?.action.choices).toEqual([
      expect.objectContaining({ choice: "resolve", command: 'baton blocker resolve b1 --session s --resolution "<how it was resolved>"' }),
      expect.objectContaining({ choice: "bypass", command: 'baton blocker bypass b1 --session s --workaround "<the workaround>"' }),
    ]);
    // In the blocked phase, the phase's own command (unblock) follows.
    const b = activeBlockerRule(input(Object.assign(snap("blocked"), { facets: s.facets })));
    expect(b?.action.reason).toContain("`baton event s unblock`");
    expect(b?.suggest).toEqual([]);
  });

  it("9 progress n/n without completion → record_completion", () => {
    const s = snap("verifying");
    s.facets.progress = { total: 3, completed: 2 };
    expect(unrecordedCompletionRule(input(s))).toBeUndefined();
    s.facets.progress = { total: 3, completed: 3 };
    expect(unrecordedCompletionRule(input(s))?.action).toMatchObject({ action: "record_completion", command: "baton complete s" });
    const planned = snap("planned");
    planned.facets.progress = { total: 1, completed: 1 };
    // Completion not allowed yet: no command that does something else under this action's
    // name; the phase's step is in the reason and suggested with its own command.
    const early = unrecordedCompletionRule(input(planned));
    expect(early?.action.command).toBe("");
    expect(early?.action.reason).toContain("`baton event s start`");
    expect(early?.suggest?.map((x) => x.command)).toEqual(["baton event s start"]);
  });

  it("10 the phase rule always answers", () => {
    expect(phaseRule(input(snap()))?.action.action).toBe("continue_task");
  });

  it("11 a crashed run no later run picked up after → check_crashed_run", () => {
    const s = snap();
    s.facets.runs.push({
      runId: "r1",
      agent: "claude",
      started: "2026-03-01T10:00:00.000Z",
      ended: "2026-03-01T10:30:00.000Z",
      status: "crashed",
    });
    expect(crashedRunRule(input(s))?.action).toMatchObject({ action: "check_crashed_run", command: "baton resume s --json" });
    // A run started before the crash was known does not settle it.
    s.facets.runs.push({ runId: "r0", agent: "codex", started: "2026-03-01T10:20:00.000Z", status: "running" });
    expect(crashedRunRule(input(s))?.action.action).toBe("check_crashed_run");
    // The new agent's own run, still going, does.
    s.facets.runs.push({ runId: "r2", agent: "claude", started: "2026-03-01T10:40:00.000Z", status: "running" });
    expect(crashedRunRule(input(s))).toBeUndefined();
  });

  it("12 a lease about to expire → heartbeat_lease", () => {
    const lease = (ms: number) => ({ leaseId: "lse_1", owner: "cli:7", expiresAt: new Date(NOW.getTime() + ms).toISOString() });
    const s = snap();
    expect(expiringLeaseRule(input(s, { pendingWork: [{ kind: "x", seq: 2, state: "leased", lease: lease(600_000) }] }))).toBeUndefined();
    const a = expiringLeaseRule(input(s, { pendingWork: [{ kind: "x", seq: 2, state: "leased", lease: lease(10_000) }] }));
    // A lease of the default length, just taken, is not about to expire.
    expect(expiringLeaseRule(input(s, { pendingWork: [{ kind: "x", seq: 2, state: "leased", lease: lease(59_000) }] }))).toBeUndefined();
    expect(a?.action).toMatchObject({ action: "heartbeat_lease", command: "baton lease heartbeat lse_1" });
  });

  it("13 a lock of the session's runs → reclaim_stale_lock on proof, wait_for_lock (inspect) when held", () => {
    const s = snap();
    expect(lockRule(input(s))).toBeUndefined();
    const live = { stale: false as const, reason: "live" as const, evidence: "pid 7 on h is alive" };
    const held = { name: "deploy", owner: "cli:9", runId: "r1", expiresAt: "2026-03-01T12:05:00.000Z", decision: live };
    // Never a command that takes the lock: inspect it.
    const w = lockRule(input(s, { locks: [held] }))?.action;
    expect(w).toMatchObject({ action: "wait_for_lock", command: "baton lock inspect deploy" });
    expect(w?.reason).toContain("wait for it");
    // Held by the session's newest running run: the agent's own, to release, not to wait for.
    s.facets.runs.push({ runId: "r0", agent: "claude", started: "2026-03-01T09:00:00.000Z", status: "running" });
    s.facets.runs.push({ runId: "r1", agent: "claude", started: "2026-03-01T10:00:00.000Z", status: "running" });
    const own = lockRule(input(s, { locks: [held] }))?.action;
    expect(own?.reason).toContain("the lock is yours: release it");
    expect(own?.reason).toContain("baton lock release deploy");
    // Stale on the proof staleDecision gave (a dead pid, before any expiry).
    const dead = { stale: true as const, proof: "dead_pid" as const, evidence: "pid 7 on h is not running" };
    const stale = lockRule(input(s, { locks: [{ ...held, decision: dead }] }))?.action;
    expect(stale).toMatchObject({ action: "reclaim_stale_lock", command: "baton lock inspect deploy" });
    expect(stale?.reason).toContain("dead_pid: pid 7 on h is not running");
  });

  it("14 a target mismatch noted since the binding → check_target", () => {
    const s = snap();
    const m = { at: NOW.toISOString(), message: "differs in id." };
    expect(targetMismatchRule(input(s, { targetMismatch: m }))).toBeUndefined();
    s.target = { kind: "browser-tab", id: "tab-1", setAt: "2026-03-01T10:00:00.000Z", seq: 3 };
    expect(targetMismatchRule(input(s, { targetMismatch: m }))?.action).toMatchObject({
      action: "check_target",
      command: "baton target resolve s --kind browser-tab --id tab-1",
    });
  });

  it("15 a bypassed blocker → use_workaround, naming the workaround", () => {
    const s = snap();
    expect(bypassedBlockerRule(input(s))).toBeUndefined();
    s.facets.blockers.push(blocker("b1", "bypassed", { workaround: "use the preview env" }));
    expect(bypassedBlockerRule(input(s))?.fact).toBe(
      'blocker b1 "No staging credentials" is bypassed: use its workaround "use the preview env"',
    );
  });

  it("16 open questions → answer_open_questions", () => {
    const s = snap();
    expect(openQuestionsRule(input(s))).toBeUndefined();
    s.facets.resume.openQuestions.push("Which region?");
    expect(openQuestionsRule(input(s))?.fact).toBe('1 open question(s) remain: "Which region?"');
  });

  it("17 one file written by two agents at work now → review_shared_file", () => {
    const s = snap();
    expect(sharedFileRule(input(s))).toBeUndefined();
    const i = input(s);
    sharedFile(s, i);
    expect(sharedFileRule(i)?.action).toMatchObject({ action: "review_shared_file", command: "baton lanes --session s" });
    expect(sharedFileRule(i)?.action.reason).toContain(
      '"src/app.ts" was written in their current turns by Claude Code (lane claude:s1) and Codex (lane codex:t1)',
    );
  });

  it("17 what is shared: live claims of two families, not a turn that ended, a write before the run, nor a subagent and its parent", () => {
    const now = NOW.getTime();
    const s = snap();
    const writes = twoLanes(s);
    expect(sharedFiles(liveClaims(s, writes, now)).map((f) => f.path)).toEqual(["src/app.ts"]);
    s.facets.lanes!["codex:t1"]!.status = "idle";
    expect(sharedFiles(liveClaims(s, writes, now)), "a claim ends with its turn").toEqual([]);
    twoLanes(s);
    s.facets.lanes!["codex:t1"]!.since = "2026-03-01T11:59:30.000Z";
    expect(sharedFiles(liveClaims(s, writes, now)), "written before its running run began: not a claim").toEqual([]);
    twoLanes(s);
    const sub = [writes[0]!, { ...writes[1]!, lane: "claude:s1/sub" }];
    expect(sharedFiles(liveClaims(s, sub, now)), "a subagent and its parent are one family").toEqual([]);
    expect(liveClaims(s, writes, now + 3 * 60 * 60 * 1000), "no sign of life for hours: no claim").toEqual([]);
  });
});

describe("order and competing facts", () => {
  it("the rules are in the documented order, advisory ones last", () => {
    expect(NEXT_ACTION_RULES.map((r) => r.name)).toEqual([
      "interrupted_rollback",
      "spiral_pause",
      "dead_lettered_work",
      "pending_work",
      "markers",
      "changed_files",
      "deadline_passed",
      "active_blocker",
      "unrecorded_completion",
      "phase",
      "crashed_run",
      "expiring_lease",
      "lock",
      "target_mismatch",
      "bypassed_blocker",
      "open_questions",
      "shared_file",
    ]);
    expect(NEXT_ACTION_RULES.filter((r) => r.advisory).map((r) => r.name)).toEqual(NEXT_ACTION_RULES.slice(10).map((r) => r.name));
  });

  it("the first fact takes the action; the second is named in its reason and suggested", () => {
    const s = snap();
    s.facets.blockers.push(blocker("b1", "active"));
    const d = decideNextAction(input(s, { changedFiles: [{ path: "a.ts", state: "changed" }] }));
    expect(d.nextAction.action).toBe("review_changed_files");
    expect(d.nextAction.reason).toContain('Also: blocker b1 "No staging credentials" is active.');
    expect(d.suggestions.map((x) => x.action)).toEqual(["resolve_blocker"]);
    expect(d.rules).toEqual(["changed_files", "active_blocker"]);
  });

  it("advisory facts never take the action, and the displaced phase is suggested only when the winner says so", () => {
    const s = snap();
    s.facets.resume.openQuestions.push("Which region?");
    s.facets.blockers.push(blocker("b2", "bypassed", { workaround: "preview" }));
    const d = decideNextAction(input(s));
    expect(d.nextAction.action).toBe("continue_task");
    expect(d.nextAction.reason).toMatch(
      /Also: blocker b2 .* is bypassed: use its workaround "preview"; 1 open question\(s\) remain: "Which region\?"\.$/,
    );
    expect(d.suggestions.map((x) => x.action)).toEqual(["use_workaround", "answer_open_questions"]);
    s.facets.blockers.push(blocker("b1", "active"));
    const blocked = decideNextAction(input(s));
    expect(blocked.nextAction.action).toBe("resolve_blocker");
    expect(blocked.suggestions.map((x) => x.action)).toEqual(["continue_task", "use_workaround", "answer_open_questions"]);
  });

  it("an interrupted rollback outranks everything", () => {
    const s = snap();
    s.facets.rollbacks.push({ id: "rb1", target: "cp-3", safety: "cp-9", state: "started", files: 2, startedAt: "x" } as never);
    s.facets.spiral = { paused: true, turns: 3, window: [] };
    const d = decideNextAction(input(s, { pendingWork: [{ kind: "x", seq: 1, state: "ready" }] }));
    expect(d.nextAction.action).toBe("finish_rollback");
    expect(d.rules).toEqual(["interrupted_rollback", "spiral_pause", "pending_work"]);
  });
});

interface DocRow {
  n: number;
  name: string;
  advisory: boolean;
  /** snake_case codes named in the "Action (command)" column, in order. */
  codes: string[];
}

/** The table of record, parsed from docs/flows.md: an independent statement of the order. */
function docTable(): DocRow[] {
  const text = readFileSync(join(REPO, "docs", "flows.md"), "utf8");
  const section = text.slice(text.indexOf("## What decides the next action"), text.indexOf("## Writing a flow"));
  return [...section.matchAll(/^\| (\d+) \| `([a-z_]+)` \| [^|]+ \| [^|]+ \| (action|reason) \| (.+) \|$/gm)].map((r) => ({
    n: Number(r[1]),
    name: r[2] as string,
    advisory: r[3] === "reason",
    codes: [...(r[4] as string).matchAll(/`([a-z]+(?:_[a-z]+)+)`/g)].map((m) => m[1] as string),
  }));
}

describe("the table of record", () => {
  it("docs/flows.md lists the rules in the code's order, the advisory ones as shaping the reason", () => {
    const rows = docTable();
    expect(rows.map((r) => r.n)).toEqual(NEXT_ACTION_RULES.map((_, i) => i + 1));
    expect(rows.map((r) => r.name)).toEqual(NEXT_ACTION_RULES.map((r) => r.name));
    expect(rows.map((r) => r.advisory)).toEqual(NEXT_ACTION_RULES.map((r) => r.advisory === true));
  });

  it("each row's action codes are the ones its rule answers with", () => {
    const ext = BUILTIN_FLOWS["external-run"]!;
    const live = { stale: false as const, reason: "live" as const, evidence: "alive" };
    const dead = { stale: true as const, proof: "expired" as const, evidence: "expired" };
    const lock = { name: "deploy", owner: "o", runId: "r9", expiresAt: "2026-03-01T13:00:00.000Z" };
    // Every situation a rule can answer in, by rule (markers and the phase take the flow's own actions).
    const situations: Record<string, (() => NextActionInput)[]> = {};
    const add = (name: string, make: () => NextActionInput) => {
      situations[name] = [...(situations[name] ?? []), make];
    };
    for (const [key, apply] of Object.entries(FACTS)) {
      add(FACT_RULE[key] as string, () => {
        const s = snap();
        const i = input(s);
        apply(s, i);
        return i;
      });
    }
    add("deadline_passed", () => {
      const s = Object.assign(snap("polling", ext), { deadline: "2026-03-01T11:00:00.000Z" });
      return { ...input(s), flow: ext };
    });
    add("lock", () => input(snap(), { locks: [{ ...lock, decision: dead }] }));
    add("lock", () => input(snap(), { locks: [{ ...lock, decision: live }] }));
    for (const row of docTable()) {
      if (row.name === "markers" || row.name === "phase") continue;
      const entry = NEXT_ACTION_RULES.find((e) => e.name === row.name);
      const actions = (situations[row.name] ?? []).map((make) => entry?.rule(make())?.action.action);
      expect(actions.length, row.name).toBeGreaterThan(0);
      for (const a of actions) expect(row.codes, `row ${row.n} ${row.name}`).toContain(a);
      // The row leads with an action its rule gives.
      expect(actions, `row ${row.n} ${row.name}`).toContain(row.codes[0]);
    }
  });
});

/** Each fact, applied to a fresh snapshot and input. */
const FACTS: Record<string, (s: Snapshot, i: NextActionInput) => void> = {
  rollback: (s) => {
    s.facets.rollbacks.push({ id: "rb1", target: "cp-3", safety: "cp-9", state: "started", files: 1, startedAt: "x" } as never);
  },
  spiral: (s) => {
    s.facets.spiral = { paused: true, turns: 3, window: [] };
  },
  dead: (_, i) => {
    i.deadWork = [{ kind: "steer", seq: 4, at: NOW.toISOString(), why: "nacked" }];
  },
  pending: (_, i) => {
    i.pendingWork = [...i.pendingWork, { kind: "x", seq: 2, state: "ready" }];
  },
  changed: (_, i) => {
    i.changedFiles = [{ path: "a.ts", state: "changed" }];
  },
  deadline: (s) => {
    s.deadline = "2026-03-01T11:00:00.000Z";
  },
  active: (s) => {
    s.facets.blockers.push(blocker("b1", "active"));
  },
  done: (s) => {
    s.facets.progress = { total: 2, completed: 2 };
  },
  crashed: (s) => {
    s.facets.runs.push({
      runId: "r1",
      agent: "a",
      started: "2026-03-01T10:00:00.000Z",
      ended: "2026-03-01T10:01:00.000Z",
      status: "crashed",
    });
  },
  lease: (_, i) => {
    const lease = { leaseId: "l1", owner: "o", expiresAt: new Date(NOW.getTime() + 1_000).toISOString() };
    i.pendingWork = [...i.pendingWork, { kind: "y", seq: 3, state: "leased", lease }];
  },
  lock: (_, i) => {
    i.locks = [
      {
        name: "deploy",
        owner: "o",
        runId: "r9",
        expiresAt: "2026-03-01T13:00:00.000Z",
        decision: { stale: false, reason: "live", evidence: "alive" },
      },
    ];
  },
  target: (s, i) => {
    s.target = { kind: "job", id: "j1", setAt: "2026-03-01T10:00:00.000Z", seq: 2 };
    i.targetMismatch = { at: NOW.toISOString(), message: "differs in id." };
  },
  bypassed: (s) => {
    s.facets.blockers.push(blocker("b2", "bypassed", { workaround: "w" }));
  },
  questions: (s) => {
    s.facets.resume.openQuestions.push("Which region?");
  },
  shared: (s, i) => sharedFile(s, i),
};

/** The rule each fact is for. */
const FACT_RULE: Record<string, string> = {
  rollback: "interrupted_rollback",
  spiral: "spiral_pause",
  dead: "dead_lettered_work",
  pending: "pending_work",
  changed: "changed_files",
  deadline: "deadline_passed",
  active: "active_blocker",
  done: "unrecorded_completion",
  crashed: "crashed_run",
  lease: "expiring_lease",
  lock: "lock",
  target: "target_mismatch",
  bypassed: "bypassed_blocker",
  questions: "open_questions",
  shared: "shared_file",
};

describe("any mix of facts (property)", () => {
  it("the first non-advisory rule that answers wins; every other one is named in the reason and suggested", () => {
    const ORDER = docTable();
    expect(ORDER.length).toBe(NEXT_ACTION_RULES.length);
    fc.assert(
      fc.property(fc.subarray(Object.keys(FACTS)), (facts) => {
        const s = snap();
        const i = input(s);
        for (const f of facts) FACTS[f]?.(s, i);
        // The expected order is the table's (docs/flows.md), not the code's list.
        const answers = ORDER.flatMap((row) => {
          const rule = NEXT_ACTION_RULES.find((e) => e.name === row.name)?.rule;
          const a = rule?.(i);
          return a ? [{ e: { name: row.name, advisory: row.advisory }, a }] : [];
        });
        const win = answers.find((x) => !x.e.advisory);
        const d = decideNextAction(i);
        expect(d.nextAction.action).toBe(win?.a.action.action);
        expect(d.nextAction.command).toBe(win?.a.action.command);
        expect(d.rules[0]).toBe(win?.e.name);
        for (const x of answers) {
          if (x === win || x.e.name === "phase") continue;
          expect(d.nextAction.reason).toContain(x.a.fact);
          if (x.a.action.action !== d.nextAction.action) expect(d.suggestions.map((g) => g.action)).toContain(x.a.action.action);
        }
        expect(d.suggestions.some((g) => g.action === d.nextAction.action)).toBe(false);
        const keys = d.suggestions.map((g) => `${g.action} ${g.command}`);
        expect(new Set(keys).size).toBe(keys.length);
        // With none of the facts, the phase alone answers, with nothing else to name.
        if (facts.length === 0) expect(d).toMatchObject({ nextAction: { action: "continue_task" }, suggestions: [] });
      }),
      { numRuns: 300 },
    );
  });
});

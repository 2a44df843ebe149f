/**
 * The next action, one row of docs/flows.md's table ("What decides the next action") per test:
 * each builds the situation through the CLI as an interrupted agent would leave it, then asks
 * `baton resume --json` (and `baton status --json`) for the action, its reason and its command.
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupDirs, cli, tempDir } from "./helpers.js";

afterAll(() => cleanupDirs());

interface Ws {
  root: string;
  run: (...args: string[]) => ReturnType<typeof cli>;
  /** Run and parse `--json`, failing on a non-zero exit. */
  json: (...args: string[]) => any;
}

function workspace(): Ws {
  const root = tempDir("baton-next-");
  expect(cli(["init", "--root", root]).code).toBe(0);
  const run = (...args: string[]) => cli([...args, "--root", root]);
  const json = (...args: string[]) => {
    const r = run(...args, "--json");
    expect(r.code, `baton ${args.join(" ")}: ${r.stdout}${r.stderr}`).toBe(0);
    return r.json();
  };
  return { root, run, json };
}

/** A task session in progress, as most interrupted agents leave one. */
function taskInProgress(ws: Ws, id = "s1"): string {
  ws.json("session", "start", "--flow", "task", "--id", id, "--title", "Deploy the signup page");
  ws.json("event", id, "start");
  return id;
}

function resume(ws: Ws, sid: string): any {
  return ws.json("resume", sid);
}

describe("next action: the two reported examples", () => {
  it("an active blocker shapes a task in progress: resolve_blocker, naming the blocker, with continue_task suggested", () => {
    const ws = workspace();
    const sid = taskInProgress(ws);
    ws.json("blocker", "add", "No staging credentials", "--id", "b1", "--affects", "deploy to staging", "--session", sid);
    const r = resume(ws, sid);
    expect(r.phase).toBe("in_progress");
    expect(r.nextAction.action).toBe("resolve_blocker");
    expect(r.nextAction.reason).toContain('Blocker b1 "No staging credentials" is active (affects deploy to staging)');
    expect(r.nextAction.command).toBe("");
    expect(r.nextAction.choices.map((c: any) => c.command)).toEqual([
      `baton blocker resolve b1 --session ${sid} --resolution "<how it was resolved>"`,
      `baton blocker bypass b1 --session ${sid} --workaround "<the workaround>"`,
    ]);
    expect(r.suggestions.map((s: any) => s.action)).toContain("continue_task");
    // status answers the same.
    expect(ws.json("status", "--session", sid).sessions[0].nextAction).toEqual(r.nextAction);
  });

  it("a bypassed blocker lets the task continue, with its workaround in the reason", () => {
    const ws = workspace();
    const sid = taskInProgress(ws);
    ws.json("blocker", "add", "No staging credentials", "--id", "b1", "--session", sid);
    ws.json("blocker", "bypass", "b1", "--workaround", "deploy to the preview environment instead", "--session", sid);
    const r = resume(ws, sid);
    expect(r.nextAction.action).toBe("continue_task");
    expect(r.nextAction.command).toBe(`baton resume ${sid} --json`);
    expect(r.nextAction.reason).toContain(
      'Also: blocker b1 "No staging credentials" is bypassed: use its workaround "deploy to the preview environment instead"',
    );
    expect(r.suggestions.map((s: any) => s.action)).toContain("use_workaround");
  });

  it("a spiral whose turns named no checkpoint proposes the newest checkpoint taken before its first turn", () => {
    const ws = workspace();
    const sid = taskInProgress(ws);
    writeFileSync(join(ws.root, "a.ts"), "one\n");
    const older = ws.json("checkpoint", "--files", "a.ts", "--label", "older", "--session", sid).checkpointId as string;
    const good = ws.json("checkpoint", "--files", "a.ts", "--label", "before the loop", "--session", sid).checkpointId as string;
    const turn = ["turn", "record", "--tool", "Edit", "--args", '{"old":"x","new":"y"}', "--status", "error", "--session", sid];
    ws.json(...turn);
    ws.json(...turn);
    // A checkpoint taken after the spiral began is not a good point.
    ws.json("checkpoint", "--files", "a.ts", "--label", "inside the loop", "--session", sid);
    const third = ws.json(...turn);
    expect(third.detected).toBe(true);
    expect(third.spiral.proposedCheckpoint).toBe(good);
    expect(good).not.toBe(older);
    const r = resume(ws, sid);
    expect(r.nextAction.action).toBe("ask_user");
    expect(r.nextAction.reason).toContain(`roll back to checkpoint ${good} (the last good point, taken before the spiral began)`);
    expect(r.nextAction.command).toBe(`baton rollback --session ${sid} --to ${good} && baton resume ${sid} --unpause`);
  });

  it("a spiral with no checkpoint before it says plainly that none exists", () => {
    const ws = workspace();
    const sid = taskInProgress(ws);
    const turn = ["turn", "record", "--tool", "Edit", "--args", '{"old":"x","new":"y"}', "--status", "error", "--session", sid];
    const first = ws.json(...turn);
    ws.json(...turn);
    expect(ws.json(...turn).detected).toBe(true);
    const r = resume(ws, sid);
    expect(r.spiral.proposedCheckpoint).toBeUndefined();
    expect(r.nextAction.action).toBe("ask_user");
    expect(r.nextAction.reason).toContain(`No checkpoint exists from before the spiral began (turn seq ${first.turn.seq})`);
    expect(r.nextAction.command).toBe(`baton resume ${sid} --unpause`);
    expect(r.nextAction.choices.map((c: any) => c.choice)).toEqual(["take_over"]);
  });
});

/** A process id that is provably dead (the child ran and exited). */
function deadPid(): number {
  const r = spawnSync(process.execPath, ["-e", ""]);
  expect(r.status).toBe(0);
  return r.pid as number;
}

/** A live-variant session whose tab generated and then closed: `exit` waits for the agent. */
function closedTab(ws: Ws, id = "lv"): string {
  ws.json("session", "start", "--flow", "live-variant", "--id", id);
  ws.json("event", id, "generate", "--actor", "browser");
  ws.json("event", id, "exit", "--actor", "browser");
  return id;
}

describe("next action: every row of the table, built through the CLI", () => {
  it("row 1: an interrupted rollback → finish_rollback, with the undo in the reason", () => {
    const ws = workspace();
    const sid = taskInProgress(ws);
    ws.json("blocker", "add", "No staging credentials", "--id", "b1", "--session", sid);
    // What a `baton rollback` killed before it applied leaves in the journal.
    ws.json("event", sid, "rollback:started", "--actor", "user", "--data", '{"id":"rb-1","target":"cp-a","safety":"cp-s","files":2}');
    const r = resume(ws, sid);
    expect(r.nextAction.action).toBe("finish_rollback");
    expect(r.nextAction.command).toBe(`baton rollback --session ${sid} --to cp-a`);
    expect(r.nextAction.reason).toContain(`Rollback rb-1 to checkpoint cp-a`);
    expect(r.nextAction.reason).toContain(`baton rollback --session ${sid} --to cp-s`);
    // The competing blocker is named, and suggested.
    expect(r.nextAction.reason).toContain('Also: blocker b1 "No staging credentials" is active.');
    expect(r.suggestions.map((s: any) => s.action)).toContain("resolve_blocker");
  });

  // Row 2 (a spiral pause) is covered by the two examples above.

  it("row 3: dead-lettered work → handle_dead_work until a later event handles it", () => {
    const ws = workspace();
    const sid = closedTab(ws);
    for (let i = 0; i < 5; i++) {
      const lease = ws.json("poll", "--session", sid, "--kinds", "exit", "--timeout", "0").lease;
      expect(lease.item.kind).toBe("exit");
      ws.json("nack", lease.leaseId, "--reason", "cannot handle a closed tab");
    }
    const r = resume(ws, sid);
    expect(r.nextAction.action).toBe("handle_dead_work");
    expect(r.nextAction.reason).toContain("exit (seq 3)");
    expect(r.nextAction.reason).toContain("cannot handle a closed tab");
    expect(r.nextAction.command).toBe(`baton export ${sid} --seq 3`);
    // The command shows the one event to handle, not the whole journal.
    const one = ws.run(...r.nextAction.command.split(" ").slice(1));
    expect(
      one.stdout
        .trim()
        .split("\n")
        .map((l: string) => JSON.parse(l)),
    ).toEqual([expect.objectContaining({ seq: 3, type: "exit" })]);
    expect(r.nextAction.reason).toContain('any event with data {"handles": 3}');
    // Another flow event does not handle it (exit has no doneBy); one naming it does.
    ws.json("event", sid, "source_wrapped", "--data", '{"file":"a.html"}');
    expect(resume(ws, sid).nextAction.action).toBe("handle_dead_work");
    ws.json("event", sid, "checkpoint", "--data", '{"handles":3}');
    expect(resume(ws, sid).nextAction.action).not.toBe("handle_dead_work");
  });

  it("row 4 + row 11: work a crashed run had leased is given back → handle_pending_work, naming the crash", () => {
    const ws = workspace();
    const sid = closedTab(ws);
    const run = ws.json("run", "start", "--session", sid, "--agent", "claude", "--pid", String(deadPid())).runId as string;
    expect(ws.json("poll", "--session", sid, "--kinds", "exit", "--timeout", "0", "--owner", run).lease.item.kind).toBe("exit");
    const r = resume(ws, sid);
    expect(r.crashedRuns[0].releasedWork).toHaveLength(1);
    expect(r.nextAction.action).toBe("handle_pending_work");
    expect(r.nextAction.command).toBe(`baton poll --session ${sid} --json`);
    expect(r.nextAction.reason).toContain("exit (seq 3)");
    expect(r.nextAction.reason).toContain(`Also: run ${run} (claude) crashed at`);
    expect(r.suggestions.map((s: any) => s.action)).toContain("check_crashed_run");
  });

  it("row 5: markers in the session's file → the flow's marker action", () => {
    const ws = workspace();
    ws.json("session", "start", "--flow", "live-variant", "--id", "lv");
    writeFileSync(join(ws.root, "page.html"), "<div>\n<!-- baton-carbonize-start -->\n</div>\n");
    ws.json("context", "set", "file=page.html", "--session", "lv");
    const r = resume(ws, "lv");
    expect(r.nextAction.action).toBe("run_carbonize_cleanup");
    expect(r.nextAction.reason).toContain("Carbonize markers remain in the source");
    expect(r.nextAction.command).toBe("baton complete lv");
  });

  it("row 6: files changed since recorded → review_changed_files, then recording them again settles it", () => {
    const ws = workspace();
    const sid = taskInProgress(ws);
    writeFileSync(join(ws.root, "a.ts"), "one\n");
    writeFileSync(join(ws.root, "b.ts"), "two\n");
    ws.json("files", "add", "a.ts", "b.ts", "--session", sid);
    writeFileSync(join(ws.root, "a.ts"), "changed by someone else\n");
    const r = resume(ws, sid);
    expect(r.nextAction.action).toBe("review_changed_files");
    expect(r.nextAction.reason).toContain("a.ts (changed)");
    expect(r.nextAction.reason).not.toContain("b.ts");
    expect(r.nextAction.command).toBe(`baton files add a.ts --session ${sid}`);
    expect(ws.json("status", "--session", sid).sessions[0].nextAction).toEqual(r.nextAction);
    ws.json(...r.nextAction.command.split(" ").slice(1));
    expect(resume(ws, sid).nextAction.action).toBe("continue_task");
  });

  it("row 7: a deadline passed → deadline_passed for the user (task), record_timeout (external run)", () => {
    const ws = workspace();
    ws.json("session", "start", "--flow", "task", "--id", "t1", "--deadline", "2020-01-01T00:00:00Z");
    ws.json("event", "t1", "start");
    const r = resume(ws, "t1");
    expect(r.nextAction.action).toBe("deadline_passed");
    expect(r.nextAction.reason).toContain("deadline (2020-01-01T00:00:00.000Z) passed while it is in_progress");
    expect(r.nextAction.command).toBe("");
    expect(r.nextAction.choices.map((c: any) => c.command)).toEqual(["baton resume t1 --json", "baton event t1 abandon"]);
    ws.json("session", "start", "--flow", "external-run", "--id", "x1", "--deadline", "2020-01-01T00:00:00Z");
    ws.json("event", "x1", "started");
    const x = resume(ws, "x1");
    expect(x.nextAction).toMatchObject({ action: "record_timeout", command: "baton event x1 timeout" });
    expect(x.nextAction.reason).toContain("deadline (2020-01-01T00:00:00.000Z) passed");
  });

  // Row 8 (an active blocker) is the first example above.

  it("row 9: progress n/n but never completed → record_completion", () => {
    const ws = workspace();
    const sid = taskInProgress(ws);
    ws.json("progress", "set", "--total", "3", "--completed", "3", "--session", sid);
    const r = resume(ws, sid);
    expect(r.nextAction.action).toBe("record_completion");
    expect(r.nextAction.reason).toContain("Progress is 3/3 but the session was never completed");
    expect(r.nextAction.command).toBe(`baton complete ${sid}`);
  });

  it("row 10: nothing else known → the phase's own action", () => {
    const ws = workspace();
    const sid = taskInProgress(ws);
    const r = resume(ws, sid);
    expect(r.nextAction).toEqual({
      action: "continue_task",
      reason: "The task is in progress: read the position, decisions and resume context, then carry on.",
      command: `baton resume ${sid} --json`,
    });
    expect(r.suggestions).toEqual([]);
  });

  it("row 11: a crashed run with nothing left to redo still shapes the reason", () => {
    const ws = workspace();
    const sid = taskInProgress(ws);
    const run = ws.json("run", "start", "--session", sid, "--agent", "codex", "--pid", String(deadPid())).runId as string;
    const r = resume(ws, sid);
    expect(r.nextAction.action).toBe("continue_task");
    expect(r.nextAction.reason).toContain(`Also: run ${run} (codex) crashed at`);
    expect(r.suggestions).toContainEqual(expect.objectContaining({ action: "check_crashed_run", command: `baton resume ${sid} --json` }));
  });

  it("row 12: a lease about to expire is named with the heartbeat command", () => {
    const ws = workspace();
    const sid = closedTab(ws);
    const lease = ws.json("poll", "--session", sid, "--kinds", "exit", "--timeout", "0", "--lease-ms", "10000", "--owner", "agent-1").lease;
    const r = resume(ws, sid);
    expect(r.nextAction.action).toBe("write_variants");
    expect(r.nextAction.reason).toContain("Also: the lease on exit (seq 3) held by agent-1 runs out at");
    expect(r.suggestions).toContainEqual(
      expect.objectContaining({ action: "heartbeat_lease", command: `baton lease heartbeat ${lease.leaseId}` }),
    );
  });

  it("row 13: a lock held by the session's run is named: wait for it, or take it over once stale", () => {
    const ws = workspace();
    const sid = taskInProgress(ws);
    const pid = String(process.pid);
    const run = ws.json("run", "start", "--session", sid, "--agent", "claude", "--pid", pid).runId as string;
    ws.json("lock", "acquire", "deploy", "--run", run, "--pid", pid, "--ttl", "600000");
    const held = resume(ws, sid);
    expect(held.nextAction.action).toBe("continue_task");
    expect(held.nextAction.reason).toContain(`Also: lock deploy is held by run ${run} (running) until`);
    const wait = held.suggestions.find((s: any) => s.action === "wait_for_lock");
    expect(wait.command).toBe("baton lock inspect deploy");
    // The run holding it is the session's newest running run: the agent's own lock to release.
    expect(wait.reason).toContain("the lock is yours: release it");
    ws.json("lock", "acquire", "publish", "--run", run, "--pid", pid, "--ttl", "1000");
    ws.json("lock", "release", "deploy", "--pid", pid);
    spawnSync(process.execPath, ["-e", "setTimeout(() => {}, 1100)"]);
    const stale = resume(ws, sid);
    expect(stale.nextAction.reason).toContain(`Also: lock publish held by run ${run} is stale (expired)`);
    expect(stale.suggestions).toContainEqual(
      expect.objectContaining({ action: "reclaim_stale_lock", command: "baton lock inspect publish" }),
    );
  });

  it("row 14: a target that no longer matched is named until it matches again", () => {
    const ws = workspace();
    const sid = taskInProgress(ws);
    ws.json("target", "set", sid, "--kind", "browser-tab", "--id", "tab-1", "--url", "http://localhost:3000/app");
    const miss = ws.run("target", "resolve", sid, "--kind", "browser-tab", "--id", "tab-2", "--json");
    expect(miss.json().error.code).toBe("target_mismatch");
    const r = resume(ws, sid);
    expect(r.nextAction.action).toBe("continue_task");
    expect(r.nextAction.reason).toContain("Also: the target observed at");
    expect(r.nextAction.reason).toContain("was not the bound browser-tab tab-1");
    expect(r.suggestions).toContainEqual(
      expect.objectContaining({
        action: "check_target",
        command: `baton target resolve ${sid} --kind browser-tab --id tab-1 --url http://localhost:3000/app`,
      }),
    );
    expect(ws.json("target", "resolve", sid, "--kind", "browser-tab", "--id", "tab-1").status).toBe("matched");
    expect(resume(ws, sid).nextAction.reason).not.toContain("target observed");
  });

  // Row 15 (a bypassed blocker and its workaround) is the second example above.

  it("row 16: open questions in the resume context are named", () => {
    const ws = workspace();
    const sid = taskInProgress(ws);
    writeFileSync(join(ws.root, "a.ts"), "one\n");
    ws.json("files", "add", "a.ts", "--question", "Which region hosts staging?", "--session", sid);
    const r = resume(ws, sid);
    expect(r.nextAction.action).toBe("continue_task");
    expect(r.nextAction.reason).toContain('Also: 1 open question(s) remain: "Which region hosts staging?"');
    expect(r.suggestions).toContainEqual(expect.objectContaining({ action: "answer_open_questions" }));
  });

  it("row 17: one file written by two agents at work now is named, with `baton lanes`", () => {
    const ws = workspace();
    const sid = taskInProgress(ws);
    // Two Claude Code sessions, through the hook as the agent calls it: both write src/app.ts this turn.
    const hook = (session: string, event: string, more: Record<string, unknown>) => {
      const input = JSON.stringify({ session_id: session, cwd: ws.root, hook_event_name: event, ...more });
      const r = cli(["hook", "claude", event], { cwd: ws.root, input });
      expect(r.code, r.stderr).toBe(0);
      return r.stdout.trim() ? JSON.parse(r.stdout) : {};
    };
    const write = (session: string, call: string) => {
      const tool = {
        tool_name: "Write",
        tool_input: { file_path: join(ws.root, "src/app.ts"), content: `${session}\n` },
        tool_use_id: call,
      };
      const pre = hook(session, "PreToolUse", tool);
      if (pre.hookSpecificOutput?.permissionDecision === "deny") return false;
      hook(session, "PostToolUse", { ...tool, tool_response: { type: "create" } });
      return true;
    };
    for (const s of ["sess-a", "sess-b"]) hook(s, "SessionStart", { source: "startup" });
    expect(write("sess-a", "toolu_1")).toBe(true);
    expect(write("sess-b", "toolu_2"), "refused once: sess-a is writing it").toBe(false);
    expect(write("sess-b", "toolu_3"), "the retry goes through").toBe(true);
    const r = resume(ws, sid);
    expect(r.nextAction.reason).toContain('Also: "src/app.ts" was written by 2 agents at work now');
    expect(r.suggestions).toContainEqual(
      expect.objectContaining({ action: "review_shared_file", command: `baton lanes --session ${sid}` }),
    );
    // The turn of one ends: nothing is shared any more.
    hook("sess-a", "Stop", {});
    expect(resume(ws, sid).suggestions.map((x: any) => x.action)).not.toContain("review_shared_file");
  });

  it("two competing facts: the first gives the action, the second is named and suggested", () => {
    const ws = workspace();
    const sid = taskInProgress(ws);
    writeFileSync(join(ws.root, "a.ts"), "one\n");
    ws.json("files", "add", "a.ts", "--session", sid);
    ws.json("blocker", "add", "No staging credentials", "--id", "b1", "--session", sid);
    writeFileSync(join(ws.root, "a.ts"), "two\n");
    const r = resume(ws, sid);
    expect(r.nextAction.action).toBe("review_changed_files");
    expect(r.nextAction.reason).toContain('Also: blocker b1 "No staging credentials" is active.');
    expect(r.suggestions[0]).toMatchObject({ action: "resolve_blocker", command: "" });
    expect(r.suggestions[0].choices[0].command).toBe(`baton blocker resolve b1 --session ${sid} --resolution "<how it was resolved>"`);
  });
});

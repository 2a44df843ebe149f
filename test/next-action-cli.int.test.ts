/**
 * The next action, one row of docs/flows.md's table ("What decides the next action") per test:
 * each builds the situation through the CLI as an interrupted agent would leave it, then asks
 * `baton resume --json` (and `baton status --json`) for the action, its reason and its command.
 */
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
    expect(r.nextAction.reason).toContain("baton blocker bypass b1");
    expect(r.nextAction.command).toBe(`baton blocker resolve b1 --session ${sid} --resolution "<how it was resolved>"`);
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

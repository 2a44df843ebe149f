/**
 * The next action's facts, as a fresh agent meets them through the CLI: odd recorded paths,
 * many diagnostics, the default lease, two active sessions, and suggested commands run through
 * a shell exactly as printed (each must do what its reason says).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CLI, cleanupDirs, cli, tempDir } from "./helpers.js";

afterAll(() => cleanupDirs());

interface Ws {
  root: string;
  run: (...args: string[]) => ReturnType<typeof cli>;
  json: (...args: string[]) => any;
  /** Run a printed command through `sh -c` as an agent would, `baton` being this build. */
  sh: (command: string) => { code: number; stdout: string; stderr: string };
}

function workspace(): Ws {
  const root = tempDir("baton-facts-");
  expect(cli(["init", "--root", root]).code).toBe(0);
  const run = (...args: string[]) => cli([...args, "--root", root]);
  const json = (...args: string[]) => {
    const r = run(...args, "--json");
    expect(r.code, `baton ${args.join(" ")}: ${r.stdout}${r.stderr}`).toBe(0);
    return r.json();
  };
  const sh = (command: string) => {
    // The printed command runs in the workspace, with `baton` as a shell function for this build.
    const r = spawnSync("sh", ["-c", `baton() { "${process.execPath}" "${CLI}" "$@"; }\n${command}`], {
      cwd: root,
      encoding: "utf8",
      timeout: 60_000,
    });
    return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
  };
  return { root, run, json, sh };
}

function taskInProgress(ws: Ws, id = "s1"): string {
  ws.json("session", "start", "--flow", "task", "--id", id, "--title", `Task ${id}`);
  ws.json("event", id, "start");
  return id;
}

describe("recorded files that are not regular files", () => {
  it("a recorded path replaced by a directory: status answers for every session, naming it unreadable", () => {
    const ws = workspace();
    const s1 = taskInProgress(ws, "s1");
    taskInProgress(ws, "s2");
    writeFileSync(join(ws.root, "d.ts"), "x\n");
    ws.json("files", "add", "d.ts", "--session", s1);
    rmSync(join(ws.root, "d.ts"));
    mkdirSync(join(ws.root, "d.ts"));
    const st = ws.json("status");
    expect(st.sessions.map((s: any) => s.sessionId).sort()).toEqual(["s1", "s2"]);
    const one = st.sessions.find((s: any) => s.sessionId === s1);
    expect(one.nextAction.action).toBe("review_changed_files");
    expect(one.nextAction.reason).toContain("d.ts (unreadable)");
    expect(one.diagnostics.some((d: any) => d.code === "file_unreadable" && d.file === "d.ts")).toBe(true);
    const r = ws.json("resume", s1);
    expect(r.verification.files).toEqual([{ path: "d.ts", state: "unreadable", review: true }]);
    // Recording a directory is refused with a clear error, not `internal`.
    const add = ws.run("files", "add", "d.ts", "--session", s1, "--json");
    expect(add.code).not.toBe(0);
    expect(add.stdout + add.stderr).toContain("bad_input");
  });

  it.skipIf(process.platform === "win32")("a recorded path replaced by a FIFO: status neither hangs nor fails", () => {
    const ws = workspace();
    const s1 = taskInProgress(ws, "s1");
    writeFileSync(join(ws.root, "p.ts"), "x\n");
    ws.json("files", "add", "p.ts", "--session", s1);
    rmSync(join(ws.root, "p.ts"));
    expect(spawnSync("mkfifo", [join(ws.root, "p.ts")]).status).toBe(0);
    const st = ws.json("status");
    expect(st.sessions[0].nextAction.reason).toContain("p.ts (unreadable)");
    expect(ws.json("resume", s1).verification.files[0].state).toBe("unreadable");
  });
});

describe("leases", () => {
  it("a lease of the default length, just taken, is not about to expire", () => {
    const ws = workspace();
    ws.json("session", "start", "--flow", "live-variant", "--id", "lv");
    ws.json("event", "lv", "generate", "--actor", "browser");
    ws.json("event", "lv", "exit", "--actor", "browser");
    const lease = ws.json("poll", "--session", "lv", "--kinds", "exit", "--timeout", "0", "--owner", "agent-1").lease;
    expect(lease.leaseId).toBeTruthy();
    const r = ws.json("resume", "lv");
    expect(r.nextAction.reason).not.toContain("runs out at");
    expect(r.suggestions.map((s: any) => s.action)).not.toContain("heartbeat_lease");
  });
});

describe("STATE.md", () => {
  it("shows the same next action as resume, facts outside the journal included", () => {
    const ws = workspace();
    const sid = taskInProgress(ws);
    ws.json("target", "set", sid, "--kind", "browser-tab", "--id", "tab-1");
    expect(ws.run("target", "resolve", sid, "--kind", "browser-tab", "--id", "tab-2", "--json").code).not.toBe(0);
    const r = ws.json("resume", sid);
    expect(r.nextAction.reason).toContain("target observed");
    const md = ws.json("state", sid).markdown as string;
    expect(md).toContain(`**${r.nextAction.action}**: ${r.nextAction.reason}`);
  });
});

describe("suggested commands run through a shell as printed", () => {
  it("changed_files: one run of the printed command records every changed and missing file, odd names included", () => {
    const ws = workspace();
    const sid = taskInProgress(ws);
    const odd = "a $HOME `echo x`'s.ts";
    writeFileSync(join(ws.root, odd), "one\n");
    writeFileSync(join(ws.root, "gone.ts"), "one\n");
    ws.json("files", "add", odd, "gone.ts", "--session", sid);
    writeFileSync(join(ws.root, odd), "two\n");
    rmSync(join(ws.root, "gone.ts"));
    const r = ws.json("resume", sid);
    expect(r.nextAction.action).toBe("review_changed_files");
    expect(r.nextAction.reason).toContain("What changed them is not known");
    const ran = ws.sh(r.nextAction.command);
    expect(ran.code, ran.stderr).toBe(0);
    const after = ws.json("resume", sid);
    expect(after.nextAction.action).toBe("continue_task");
    expect(after.verification.files.map((f: any) => [f.path, f.state]).sort()).toEqual([
      [odd, "unchanged"],
      ["gone.ts", "unchanged"],
    ]);
  });
});

describe("two active sessions: every printed command names its session and runs", () => {
  it("resolve_blocker: the choices carry --session; run as printed, the placeholder is refused and the blocker stays", () => {
    const ws = workspace();
    const sid = taskInProgress(ws, "s1");
    taskInProgress(ws, "s2");
    ws.json("blocker", "add", "No staging credentials", "--id", "b1", "--session", sid);
    const r = ws.json("resume", sid);
    expect(r.nextAction.action).toBe("resolve_blocker");
    expect(r.nextAction.command).toBe("");
    const commands = [...r.nextAction.choices.map((c: any) => c.command), ...r.suggestions.map((s: any) => s.command).filter(Boolean)];
    // Each names its session (positionally or with --session): with two active, none is ambiguous.
    for (const c of commands) expect(c.split(" "), c).toContain(sid);
    for (const s of r.suggestions.filter((x: any) => x.command)) expect(ws.sh(s.command).code, s.command).toBe(0);
    for (const c of r.nextAction.choices) {
      const ran = ws.sh(c.command);
      expect(ran.code, c.command).not.toBe(0);
      expect(ran.stdout + ran.stderr).toContain("placeholder");
    }
    expect(ws.json("resume", sid).activeBlockers.map((b: any) => b.id)).toEqual(["b1"]);
    // With the placeholder replaced, the choice does what it says (no ambiguous_session).
    const fixed = (r.nextAction.choices[0].command as string).replace("<how it was resolved>", "the user gave the credentials");
    expect(ws.sh(fixed).code).toBe(0);
    expect(ws.json("resume", sid).activeBlockers).toEqual([]);
  });

  it("capture_lesson: run as printed, the placeholder lesson is refused", () => {
    const ws = workspace();
    const sid = taskInProgress(ws, "s1");
    taskInProgress(ws, "s2");
    writeFileSync(join(ws.root, "a.ts"), "one\n");
    const cp = ws.json("checkpoint", "--files", "a.ts", "--session", sid).checkpointId as string;
    writeFileSync(join(ws.root, "a.ts"), "two\n");
    ws.json("rollback", "--session", sid, "--to", cp);
    const lesson = ws.json("resume", sid).suggestions.find((s: any) => s.action === "capture_lesson");
    expect(lesson.command).toContain(`--session ${sid}`);
    const ran = ws.sh(lesson.command);
    expect(ran.code).not.toBe(0);
    expect(ran.stdout + ran.stderr).toContain("placeholder");
    expect(ws.json("lessons", "list", "--session", sid).lessons ?? []).toEqual([]);
  });
});

describe("locks", () => {
  it("wait_for_lock: the printed command inspects the lock and leaves it with its holder", () => {
    const ws = workspace();
    const sid = taskInProgress(ws);
    const pid = String(process.pid);
    const mine = ws.json("run", "start", "--session", sid, "--agent", "claude", "--pid", pid).runId as string;
    ws.json("lock", "acquire", "deploy", "--run", mine, "--pid", pid, "--ttl", "600000");
    // A newer run started: the lock belongs to the older one, which is still alive.
    ws.json("run", "start", "--session", sid, "--agent", "codex", "--pid", pid);
    const r = ws.json("resume", sid);
    const wait = r.suggestions.find((s: any) => s.action === "wait_for_lock");
    expect(wait.command).toBe("baton lock inspect deploy");
    expect(r.nextAction.reason).toContain(`Also: lock deploy is held by run ${mine}`);
    const ran = ws.sh(`${wait.command} --json`);
    expect(ran.code, ran.stderr).toBe(0);
    expect(JSON.parse(ran.stdout)).toMatchObject({ name: "deploy", state: "held" });
    const after = ws.json("lock", "inspect", "deploy");
    expect(after.state).toBe("held");
    expect(after.holder.runId ?? mine).toBe(mine);
  });

  it("a lock whose holder's pid is dead is stale before it expires: reclaim_stale_lock, with the proof", () => {
    const ws = workspace();
    const sid = taskInProgress(ws);
    const gone = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
    const pid = gone.stdout.trim();
    const run = ws.json("run", "start", "--session", sid, "--agent", "claude", "--pid", String(process.pid)).runId as string;
    ws.json("lock", "acquire", "deploy", "--run", run, "--pid", pid, "--ttl", "600000");
    const r = ws.json("resume", sid);
    expect(r.nextAction.reason).toContain(`Also: lock deploy held by run ${run} is stale (dead_pid)`);
    expect(r.suggestions).toContainEqual(expect.objectContaining({ action: "reclaim_stale_lock", command: "baton lock inspect deploy" }));
  });
});

describe("target mismatch", () => {
  it("check_target: the printed command, run once back on the bound target, settles it", () => {
    const ws = workspace();
    const sid = taskInProgress(ws, "s1");
    taskInProgress(ws, "s2");
    ws.json("target", "set", sid, "--kind", "browser-tab", "--id", "tab-1", "--url", "http://localhost:3000/app?x=1");
    expect(ws.run("target", "resolve", sid, "--kind", "browser-tab", "--id", "tab-2", "--json").code).not.toBe(0);
    const check = ws.json("resume", sid).suggestions.find((s: any) => s.action === "check_target");
    expect(check.command).toContain(`resolve ${sid} --kind browser-tab --id tab-1`);
    const ran = ws.sh(check.command);
    expect(ran.code, ran.stderr).toBe(0);
    const after = ws.json("resume", sid);
    expect(after.nextAction.reason).not.toContain("target observed");
    expect(after.suggestions.map((s: any) => s.action)).not.toContain("check_target");
    expect(after.diagnostics.filter((d: any) => d.code.startsWith("target_"))).toEqual([]);
  });

  it("one note per mismatch, however often it is observed; the match that settles it does not pile up", () => {
    const ws = workspace();
    const sid = taskInProgress(ws);
    ws.json("target", "set", sid, "--kind", "browser-tab", "--id", "tab-1");
    for (let i = 0; i < 3; i++) {
      expect(ws.run("target", "resolve", sid, "--kind", "browser-tab", "--id", "tab-2", "--json").code).not.toBe(0);
      expect(ws.json("target", "resolve", sid, "--kind", "browser-tab", "--id", "tab-2", "--navigate").status).toBe("navigate");
    }
    const st = ws.json("status", "--session", sid).sessions[0];
    expect(st.diagnostics.filter((d: any) => d.code === "target_mismatch")).toHaveLength(1);
    for (let i = 0; i < 2; i++) {
      expect(ws.json("target", "resolve", sid, "--kind", "browser-tab", "--id", "tab-1").status).toBe("matched");
      expect(ws.run("target", "resolve", sid, "--kind", "browser-tab", "--id", "tab-2", "--json").code).not.toBe(0);
    }
    const again = ws.json("status", "--session", sid).sessions[0];
    expect(again.diagnostics.filter((d: any) => d.code.startsWith("target_"))).toHaveLength(1);
    expect(again.nextAction.reason).toContain("target observed");
  });
});

describe("dead-lettered work", () => {
  it("stays the next action after more than 20 later diagnostics, until an event names it", () => {
    const ws = workspace();
    ws.json("session", "start", "--flow", "live-variant", "--id", "lv");
    ws.json("event", "lv", "generate", "--actor", "browser");
    ws.json("event", "lv", "exit", "--actor", "browser");
    for (let i = 0; i < 5; i++) {
      const lease = ws.json("poll", "--session", "lv", "--kinds", "exit", "--timeout", "0").lease;
      ws.json("nack", lease.leaseId, "--reason", "cannot handle a closed tab");
    }
    ws.json("target", "set", "lv", "--kind", "browser-tab", "--id", "t1");
    for (let i = 0; i < 11; i++) {
      expect(ws.json("target", "resolve", "lv", "--kind", "browser-tab", "--id", "t2", "--navigate").status).toBe("navigate");
      expect(ws.json("target", "resolve", "lv", "--kind", "browser-tab", "--id", "t1").status).toBe("matched");
    }
    const r = ws.json("resume", "lv");
    expect(r.nextAction.action).toBe("handle_dead_work");
    expect(r.nextAction.reason).toContain("exit (seq 3)");
    ws.json("event", "lv", "checkpoint", "--data", '{"handles":3}');
    expect(ws.json("resume", "lv").nextAction.action).not.toBe("handle_dead_work");
  });
});

describe("a spiral pause that proposed no checkpoint", () => {
  it("status finds the last good point now: the newest checkpoint taken before the first turn", () => {
    const ws = workspace();
    const sid = taskInProgress(ws);
    writeFileSync(join(ws.root, "a.ts"), "one\n");
    const good = ws.json("checkpoint", "--files", "a.ts", "--label", "before the loop", "--session", sid).checkpointId as string;
    const turn = ws.json("turn", "record", "--tool", "Edit", "--args", '{"old":"x","new":"y"}', "--status", "error", "--session", sid);
    // A pause as an older Baton, or a detector with no storage at hand, recorded it: no proposal.
    const data = JSON.stringify({ pattern: "same_signature", summary: "the same failing edit", turns: [turn.turn.id], from: turn.turn.id });
    ws.json("event", sid, "spiral:detected", "--actor", "system", "--data", data);
    // A checkpoint taken after the spiral began is no last good point.
    ws.json("checkpoint", "--files", "a.ts", "--label", "during the loop", "--session", sid);
    const r = ws.json("resume", sid);
    expect(r.spiral.proposedCheckpoint).toBe(good);
    expect(r.nextAction.action).toBe("ask_user");
    expect(r.nextAction.choices.map((c: any) => c.choice)).toEqual(["rollback", "take_over"]);
    expect(r.nextAction.command).toBe(`baton rollback --session ${sid} --to ${good} && baton resume ${sid} --unpause`);
  });
});

describe("a crashed run", () => {
  it("is news until the next agent's own run starts", () => {
    const ws = workspace();
    const sid = taskInProgress(ws);
    const gone = spawnSync(process.execPath, ["-e", ""]).pid as number;
    const run = ws.json("run", "start", "--session", sid, "--agent", "codex", "--pid", String(gone)).runId as string;
    expect(ws.json("resume", sid).nextAction.reason).toContain(`Also: run ${run} (codex) crashed at`);
    ws.json("run", "start", "--session", sid, "--agent", "claude", "--pid", String(process.pid));
    const r = ws.json("resume", sid);
    expect(r.nextAction.reason).not.toContain("crashed");
    expect(r.suggestions.map((s: any) => s.action)).not.toContain("check_crashed_run");
  });
});

describe("two active sessions, many facts", () => {
  it("every printed command names its session (or a lock or lease by id) and runs as printed", () => {
    const ws = workspace();
    const sid = taskInProgress(ws, "s1");
    taskInProgress(ws, "s2");
    writeFileSync(join(ws.root, "my file.ts"), "one\n");
    ws.json("files", "add", "my file.ts", "--question", "Which region?", "--session", sid);
    writeFileSync(join(ws.root, "my file.ts"), "two\n");
    ws.json("target", "set", sid, "--kind", "job", "--id", "j1");
    expect(ws.run("target", "resolve", sid, "--kind", "job", "--id", "j2", "--json").code).not.toBe(0);
    const pid = String(process.pid);
    const run = ws.json("run", "start", "--session", sid, "--agent", "claude", "--pid", pid).runId as string;
    ws.json("lock", "acquire", "deploy", "--run", run, "--pid", pid, "--ttl", "600000");
    const r = ws.json("resume", sid);
    const all = [r.nextAction, ...r.suggestions];
    expect(all.map((a: any) => a.action)).toEqual(
      expect.arrayContaining(["review_changed_files", "check_target", "wait_for_lock", "answer_open_questions"]),
    );
    for (const a of all) {
      for (const command of [a.command, ...(a.choices ?? []).map((c: any) => c.command)]) {
        if (!command || command.includes("<")) continue;
        const names = command.split(" ").includes(sid) || /^baton (lock|lease) /.test(command);
        expect(names, command).toBe(true);
        const ran = ws.sh(command);
        expect(ran.code, `${command}: ${ran.stdout}${ran.stderr}`).toBe(0);
      }
    }
    // The changed file is recorded again and the target settled: both facts are gone.
    const after = ws.json("resume", sid);
    expect([after.nextAction, ...after.suggestions].map((a: any) => a.action)).not.toEqual(
      expect.arrayContaining(["review_changed_files"]),
    );
    expect(after.suggestions.map((a: any) => a.action)).not.toContain("check_target");
  });
});

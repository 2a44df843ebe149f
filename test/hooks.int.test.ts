/**
 * Agent hooks end to end: recorded payloads (test/fixtures/hooks/<agent>/*.json, written from
 * each agent's documented hook contract) replayed through real `baton hook` processes (the
 * built CLI), on real files.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { killAll, spawnNode, waitExit } from "./child-process.js";
import { CLI, type CliResult, cleanupDirs, cli, initWorkspace, REPO, tempDir, writeConfig } from "./helpers.js";

const FIXTURES = join(REPO, "test", "fixtures", "hooks");

afterEach(() => cleanupDirs());

interface HookRun extends CliResult {
  /** The parsed stdout, or undefined when the hook printed nothing. */
  out: any;
}

function payload(agent: string, name: string, vars: Record<string, string>): string {
  let text = readFileSync(join(FIXTURES, agent, `${name}.json`), "utf8");
  // Gemini CLI stamps each hook with the time it sent it (it tells identical calls apart).
  for (const [k, v] of Object.entries({ time: new Date().toISOString(), ...vars }))
    text = text.split(`{{${k}}}`).join(JSON.stringify(v).slice(1, -1));
  return text;
}

/** Replay one fixture through `baton hook <agent> <its event>` in `root`. */
function hook(agent: string, name: string, root: string, vars: Record<string, string> = {}): HookRun {
  const input = payload(agent, name, { cwd: root, session: "agent-session-1", call: "call-1", ...vars });
  const event = JSON.parse(input).hook_event_name as string;
  const r = cli(["hook", agent, event], { cwd: root, input });
  expect(r.code, `baton hook ${agent} ${event} (${name}) exited ${r.code}: ${r.stderr}`).toBe(0);
  return { ...r, out: r.stdout.trim() ? JSON.parse(r.stdout) : undefined };
}

function workspace(files: Record<string, string> = {}): string {
  return initWorkspace("baton-hooks-", files);
}

function baton(root: string, args: string[]): any {
  return cli([...args, "--json", "--root", root]).json();
}

const read = (root: string, p: string) => readFileSync(join(root, p), "utf8");
/** The journal's notes about compactions. */
const compactionNotes = (root: string, sid: string) =>
  (baton(root, ["resume", sid]).recentEvents as any[])
    .filter((e) => e.type === "note:added" && /compacted/.test(e.data?.text ?? ""))
    .map((e) => e.data.text as string);

/** A Codex session transcript (rollout) in which each of `calls` ran `npm test` and exited 1. */
function rollout(root: string, ...calls: string[]): string {
  const lines = readFileSync(join(FIXTURES, "codex", "rollout.jsonl"), "utf8")
    .trimEnd()
    .split("\n");
  const fixed = lines.slice(0, 3);
  const failing = lines.slice(3).join("\n");
  const fill = (text: string, call: string) =>
    text.split("{{call}}").join(call).split("{{cwd}}").join(root).split("{{session}}").join("agent-session-1");
  const file = join(tempDir("baton-codex-home-"), "rollout-2026-05-01T10-00-00-agent-session-1.jsonl");
  writeFileSync(file, `${[fill(fixed.join("\n"), ""), ...calls.map((c) => fill(failing, c))].join("\n")}\n`);
  return file;
}
const facets = (root: string, sid: string) => baton(root, ["session", "show", sid]).snapshot.facets;
/** The lane of the one agent session these payloads come from (core/lanes.ts). */
const lane = (root: string, sid: string, agent: string) => facets(root, sid).lanes[`${agent}:agent-session-1`];

describe("Claude Code hooks", () => {
  it("checkpoints an Edit before it runs and 'undo that' restores the file", () => {
    const root = workspace({ "src/app.ts": 'return redirect("/login");\n' });
    const start = hook("claude", "session-start-startup", root);
    expect(start.out.hookSpecificOutput.hookEventName).toBe("SessionStart");
    expect(start.out.hookSpecificOutput.additionalContext).toContain("## Next action");

    const pre = hook("claude", "pre-edit", root);
    expect(pre.stdout, "a checkpoint that succeeded lets the Edit through silently").toBe("");
    writeFileSync(join(root, "src/app.ts"), 'return redirect("/login?next=" + next);\n'); // the Edit
    expect(hook("claude", "post-edit", root).stdout).toBe("");

    const status = baton(root, ["status"]);
    const sid = status.sessions[0].sessionId as string;
    const cps = baton(root, ["checkpoints", "--session", sid]).checkpoints as any[];
    expect(cps.map((c) => [c.kind, c.toolName])).toEqual([["targeted", "Edit"]]);
    const turns = lane(root, sid, "claude").spiral.window as any[];
    expect(turns.at(-1)).toMatchObject({ tool: "Edit", status: "success", checkpointId: cps[0].id });
    expect(turns.at(-1).files[0].path).toBe("src/app.ts");
    const ledger = baton(root, ["ledger", "list", "--session", sid]).nodes as any[];
    expect(ledger.map((n) => [n.toolName, n.status])).toEqual([["Edit", "success"]]);
    expect(facets(root, sid).resume.filesModified.map((f: any) => f.path)).toEqual(["src/app.ts"]);

    const undo = hook("claude", "user-prompt-undo", root);
    expect(read(root, "src/app.ts")).toBe('return redirect("/login");\n');
    expect(undo.out.systemMessage).toMatch(/^Baton rolled back to cp-/);
    expect(undo.out.hookSpecificOutput.hookEventName).toBe("UserPromptSubmit");
    expect(undo.out.hookSpecificOutput.additionalContext).toContain("Restored: src/app.ts");
    expect(undo.out.hookSpecificOutput.additionalContext).toContain("Do not undo anything yourself");
  });

  it("'undo that' that Baton cannot carry out (a damaged blob) tells the user and the model, and logs it", () => {
    const big = `${"x".repeat(1024 * 1024 + 10)}\n`; // stored as a blob file
    const root = workspace({ "src/app.ts": big });
    hook("claude", "pre-edit", root);
    writeFileSync(join(root, "src/app.ts"), "edited\n");
    hook("claude", "post-edit", root);
    const shard = join(root, ".baton", "blobs");
    for (const d of readdirSync(shard)) for (const f of readdirSync(join(shard, d))) writeFileSync(join(shard, d, f), "damaged");
    const undo = hook("claude", "user-prompt-undo", root);
    expect(undo.out.systemMessage).toMatch(/^Baton could not roll back: .*blob/);
    expect(undo.out.hookSpecificOutput.additionalContext).toMatch(/Baton could not: .*Tell the user; do not try to undo changes by hand/);
    expect(read(root, "src/app.ts")).toBe("edited\n");
    expect(readFileSync(join(root, ".baton", "logs", "hooks.log"), "utf8")).toContain("blob_corrupt");
  });

  it("a checkpoint before a tool that fails on Baton's side (a blob shard linked outside) tells the user the step cannot be rolled back", () => {
    const big = `${"y".repeat(1024 * 1024 + 10)}\n`;
    const root = workspace({ "src/app.ts": big });
    const outside = tempDir("baton-outside-");
    const hash = createHash("sha256").update(big).digest("hex");
    mkdirSync(join(root, ".baton", "blobs"), { recursive: true });
    symlinkSync(outside, join(root, ".baton", "blobs", hash.slice(0, 2)));
    const pre = hook("claude", "pre-edit", root);
    expect(pre.out.systemMessage).toMatch(/^Baton could not checkpoint before Edit, so this step cannot be rolled back: .*symbolic link/);
    expect(pre.out.hookSpecificOutput?.permissionDecision, "the tool still runs").not.toBe("deny");
    expect(readdirSync(outside), "nothing written through the link").toEqual([]);
  });

  it("a Write that created a file is undone by removing it", () => {
    const root = workspace({ "src/app.ts": "app\n" });
    hook("claude", "pre-write", root);
    writeFileSync(join(root, "src/session.ts"), 'export const SESSION_COOKIE = "sid";\n');
    hook("claude", "post-write", root);
    const undo = hook("claude", "user-prompt-undo", root);
    expect(existsSync(join(root, "src/session.ts"))).toBe(false);
    expect(undo.out.hookSpecificOutput.additionalContext).toContain("Removed (created after the checkpoint): src/session.ts");
  });

  it("checkpoints the whole tree before a Bash command, so shell-made edits roll back too", () => {
    const root = workspace({ "src/app.ts": "login\n", "README.md": "readme\n" });
    hook("claude", "pre-bash", root);
    // What `sed -i` and a generator would do.
    writeFileSync(join(root, "src/app.ts"), "signin\n");
    writeFileSync(join(root, "generated.txt"), "made by the shell\n");
    hook("claude", "post-bash", root);
    const sid = baton(root, ["status"]).sessions[0].sessionId;
    expect(baton(root, ["checkpoints", "--session", sid]).checkpoints.map((c: any) => [c.kind, c.toolName])).toEqual([["tree", "Bash"]]);

    hook("claude", "user-prompt-undo", root);
    expect(read(root, "src/app.ts")).toBe("login\n");
    expect(existsSync(join(root, "generated.txt"))).toBe(false);
    expect(read(root, "README.md")).toBe("readme\n");
  });

  it("a spiral pauses the session: the next edit is denied with the reason and the proposed rollback", () => {
    const root = workspace({ "src/app.ts": "v1\n" });
    hook("claude", "session-start-startup", root);
    let last: HookRun | undefined;
    for (const call of ["toolu_t1", "toolu_t2", "toolu_t3"]) {
      hook("claude", "pre-bash-test", root, { call });
      last = hook("claude", "post-bash-failure", root, { call });
    }
    expect(last?.out.hookSpecificOutput.hookEventName).toBe("PostToolUseFailure");
    expect(last?.out.hookSpecificOutput.additionalContext).toMatch(/^Baton paused session task-/);
    expect(last?.out.systemMessage).toMatch(/^Baton paused this agent session \(lane claude:agent-session-1\)/);

    const denied = hook("claude", "pre-edit", root);
    const out = denied.out.hookSpecificOutput;
    expect(out.hookEventName).toBe("PreToolUse");
    expect(out.permissionDecision).toBe("deny");
    expect(out.permissionDecisionReason).toContain("Baton paused session");
    // The agent is told to ask the user, and given no command that clears the pause.
    expect(out.permissionDecisionReason).toMatch(/ask the user/);
    expect(out.permissionDecisionReason).toMatch(/type "undo that" to roll the files back to checkpoint cp-[0-9a-f]+/);
    expect(out.permissionDecisionReason).not.toMatch(/&& baton resume/);
    expect(read(root, "src/app.ts")).toBe("v1\n");

    const sid = baton(root, ["status"]).sessions[0].sessionId as string;
    const bash = (command: string, call: string) =>
      cli(["hook", "claude", "PreToolUse"], {
        cwd: root,
        input: JSON.stringify({
          session_id: "agent-session-1",
          cwd: root,
          hook_event_name: "PreToolUse",
          tool_name: "Bash",
          tool_input: { command },
          tool_use_id: call,
        }),
      });
    const decision = (r: CliResult) => (r.stdout.trim() ? JSON.parse(r.stdout).hookSpecificOutput.permissionDecision : "allow");
    // A read-only Baton command still runs; the paused agent cannot unpause itself, nor hide a
    // command behind Baton's name.
    expect(decision(bash(`baton status --session ${sid} --json`, "toolu_s"))).toBe("allow");
    expect(decision(bash(`baton resume ${sid} --unpause`, "toolu_u"))).toBe("deny");
    expect(decision(bash("rm -rf src; baton status", "toolu_c"))).toBe("deny");
    expect(decision(bash("baton status && rm -rf src", "toolu_d"))).toBe("deny");
    expect(baton(root, ["status"]).sessions[0].spiral?.paused).toBe(true);
    // A write outside the workspace has nothing to checkpoint, but the pause holds it too.
    const write = (file_path: string, call: string) =>
      cli(["hook", "claude", "PreToolUse"], {
        cwd: root,
        input: JSON.stringify({
          session_id: "agent-session-1",
          cwd: root,
          hook_event_name: "PreToolUse",
          tool_name: "Write",
          tool_input: { file_path, content: "x" },
          tool_use_id: call,
        }),
      });
    expect(decision(write(join(tempDir("baton-outside-"), "notes.txt"), "toolu_o"))).toBe("deny");

    // The user types "unpause": the pause is lifted, and a compound command is checkpointed.
    const unpause = hook("claude", "user-prompt-unpause", root);
    expect(unpause.out.systemMessage).toMatch(/unpaused/);
    expect(baton(root, ["status"]).sessions[0].spiral).toBeUndefined();
    const before = baton(root, ["checkpoints", "--session", sid]).checkpoints.length;
    expect(decision(bash("rm -rf src; baton status", "toolu_e"))).toBe("allow");
    expect(baton(root, ["checkpoints", "--session", sid]).checkpoints.length).toBe(before + 1);
  });

  it("the user's rollback request lifts a pause", () => {
    const root = workspace({ "src/app.ts": "v1\n" });
    hook("claude", "session-start-startup", root);
    for (const call of ["toolu_t1", "toolu_t2", "toolu_t3"]) {
      hook("claude", "pre-bash-test", root, { call });
      hook("claude", "post-bash-failure", root, { call });
    }
    expect(baton(root, ["status"]).sessions[0].spiral?.paused).toBe(true);
    const undo = hook("claude", "user-prompt-undo", root);
    expect(undo.out.systemMessage).toMatch(/^Baton rolled back/);
    expect(baton(root, ["status"]).sessions[0].spiral).toBeUndefined();
    expect(hook("claude", "pre-edit", root).stdout).toBe("");
  });

  it("SessionStart after resume or compaction injects the next action, blockers, decisions and lessons", () => {
    const root = workspace({ "src/app.ts": "app\n" });
    hook("claude", "session-start-startup", root);
    const sid = baton(root, ["status"]).sessions[0].sessionId as string;
    cli(["decision", "add", "Keep the session cookie", "--reason", "fewer moving parts", "--session", sid, "--root", root]);
    cli(["blocker", "add", "The staging login server is down", "--id", "blk-staging", "--session", sid, "--root", root]);
    cli(["event", sid, "block", "--root", root]);
    const lesson = "Read src/app.ts before replacing the login redirect: its whitespace is fragile.";
    expect(cli(["lessons", "add", lesson, "--workspace", "--pin", "--root", root]).code).toBe(0);

    hook("claude", "pre-compact", root);
    expect(existsSync(join(root, ".baton", "sessions", sid, "STATE.md"))).toBe(true);
    // A compaction is noted once it happened (PostCompact), not when it was about to.
    expect(compactionNotes(root, sid)).toEqual([]);
    hook("claude", "post-compact", root);
    expect(compactionNotes(root, sid)).toEqual(["Claude Code compacted its context (manual)."]);

    for (const source of ["resume", "compact"]) {
      const r = hook("claude", `session-start-${source}`, root);
      const ctx = r.out.hookSpecificOutput.additionalContext as string;
      expect(ctx, source).toContain(`Agent session ${source}`);
      expect(ctx).toContain("## Next action\nresolve_blocker:");
      expect(ctx).toContain(`baton event ${sid} unblock`);
      expect(ctx).toContain("blk-staging: The staging login server is down");
      expect(ctx).toContain("Keep the session cookie (because fewer moving parts)");
      expect(ctx).toContain("## Lessons from earlier attempts");
      expect(ctx).toContain(lesson);
      expect(ctx.length).toBeLessThanOrEqual(10_000);
      expect(r.out.systemMessage).toBe(`Baton: session ${sid} (blocked); next: resolve_blocker`);
    }
  });

  it("keeps the injected context within 10,000 characters however long the session", () => {
    const root = workspace();
    hook("claude", "session-start-startup", root);
    const sid = baton(root, ["status"]).sessions[0].sessionId as string;
    for (let i = 0; i < 12; i++)
      cli(["blocker", "add", `${"blocked on a very long explanation ".repeat(12)} #${i}`, "--session", sid, "--root", root]);
    const ctx = hook("claude", "session-start-resume", root).out.hookSpecificOutput.additionalContext as string;
    expect(ctx.length).toBeLessThanOrEqual(10_000);
    expect(ctx).toContain("## Next action");
  });

  it("the prompt hook adds the lessons relevant to the prompt", () => {
    const root = workspace();
    expect(
      cli([
        "lessons",
        "add",
        "The login redirect loops when the session cookie has expired; check expiry first.",
        "--workspace",
        "--root",
        root,
      ]).code,
    ).toBe(0);
    expect(cli(["lessons", "add", "Generated API clients live in gen/; never edit them.", "--workspace", "--root", root]).code).toBe(0);
    const r = hook("claude", "user-prompt", root);
    const ctx = r.out.hookSpecificOutput.additionalContext as string;
    expect(ctx).toContain("login redirect loops");
    expect(ctx).not.toContain("gen/");
  });

  it("the prompt hook matches the paths the prompt names against lessons' paths", () => {
    const root = workspace();
    expect(
      cli(["lessons", "add", "Rebuild the token cache afterwards.", "--workspace", "--path", "src/auth/**", "--root", root]).code,
    ).toBe(0);
    expect(cli(["lessons", "add", "Use the virtualenv's python.", "--workspace", "--path", "*.py", "--root", root]).code).toBe(0);
    const prompt = (text: string) => {
      const input = JSON.stringify({ session_id: "agent-session-1", cwd: root, hook_event_name: "UserPromptSubmit", prompt: text });
      const r = cli(["hook", "claude", "UserPromptSubmit"], { cwd: root, input });
      expect(r.code, r.stderr).toBe(0);
      return r.stdout.trim() ? (JSON.parse(r.stdout).hookSpecificOutput?.additionalContext as string | undefined) : undefined;
    };
    const ctx = prompt("Rename the export in src/auth/session.ts, please.");
    expect(ctx).toContain("Rebuild the token cache afterwards.");
    expect(ctx).not.toContain("virtualenv");
    expect(prompt("Rename the export, e.g. in v1.2 of the API.")).toBeUndefined();
  });

  it("starts a run at session start and ends it when the turn or the session ends", () => {
    const root = workspace();
    hook("claude", "session-start-startup", root);
    const sid = baton(root, ["status"]).sessions[0].sessionId as string;
    const runs = () => facets(root, sid).runs as any[];
    expect(runs().map((r) => [r.agent, r.status])).toEqual([["Claude Code", "running"]]);
    expect(runs()[0].runId).toMatch(/^claude-agent-session-1-/);
    hook("claude", "stop", root);
    expect(runs().map((r) => r.status)).toEqual(["ended"]);
    hook("claude", "user-prompt", root); // the next turn starts a new run
    expect(runs().map((r) => r.status)).toEqual(["ended", "running"]);
    hook("claude", "session-end", root);
    expect(runs().map((r) => r.status)).toEqual(["ended", "ended"]);
  });

  it("parallel tool calls in a workspace without a session start one session, not several", async () => {
    const root = workspace({ "src/app.ts": "app\n" });
    const children = ["toolu_p1", "toolu_p2", "toolu_p3", "toolu_p4"].map((call) => {
      const c = spawnNode(CLI, ["hook", "claude", "PostToolUse"], `hook ${call}`);
      c.sendLast(payload("claude", "post-read", { cwd: root, session: "agent-session-1", call }));
      return c;
    });
    try {
      for (const c of children) expect((await waitExit(c, 30_000)).code, c.stderr()).toBe(0);
    } finally {
      await killAll(children);
    }
    const sessions = baton(root, ["session", "list"]).sessions as any[];
    expect(sessions).toHaveLength(1);
    expect(baton(root, ["ledger", "list", "--session", sessions[0].sessionId]).nodes).toHaveLength(4);
  });

  it("tools that write nothing get no checkpoint, but every call gets a ledger node and a turn", () => {
    const root = workspace({ "src/app.ts": "app\n" });
    expect(hook("claude", "pre-read", root).stdout).toBe("");
    hook("claude", "post-read", root, { call: "toolu_r1" });
    const sid = baton(root, ["status"]).sessions[0].sessionId as string;
    expect(baton(root, ["checkpoints", "--session", sid]).checkpoints).toEqual([]);
    expect(baton(root, ["ledger", "list", "--session", sid]).nodes.map((n: any) => n.toolName)).toEqual(["Read"]);
  });
});

describe("Codex hooks", () => {
  it("apply_patch: the patch's files are checkpointed (created ones as absent) and /rollback restores them", () => {
    const root = workspace({ "src/app.ts": 'export function app() {\n  return redirect("/login");\n}\n' });
    const start = hook("codex", "session-start-startup", root);
    expect(start.out.hookSpecificOutput.hookEventName).toBe("SessionStart");

    expect(hook("codex", "pre-apply-patch", root).stdout).toBe("");
    const sid = baton(root, ["status"]).sessions[0].sessionId as string;
    const [cp] = baton(root, ["checkpoints", "--session", sid]).checkpoints as any[];
    expect(cp).toMatchObject({ kind: "targeted", toolName: "apply_patch", fileCount: 2 });
    const files = baton(root, ["checkpoint", "show", cp.id]).files as any[];
    expect(files.map((f) => [f.path, f.absent === true])).toEqual([
      ["src/app.ts", false],
      ["src/signup.ts", true],
    ]);

    writeFileSync(join(root, "src/app.ts"), 'export function app() {\n  return redirect("/signup");\n}\n');
    writeFileSync(join(root, "src/signup.ts"), 'export const signup = () => "signup";\n');
    hook("codex", "post-apply-patch", root);

    const r = hook("codex", "user-prompt-rollback", root);
    expect(r.out.hookSpecificOutput.hookEventName).toBe("UserPromptSubmit");
    expect(r.out.hookSpecificOutput.additionalContext).toContain("Restored: src/app.ts");
    expect(read(root, "src/app.ts")).toContain('redirect("/login")');
    expect(existsSync(join(root, "src/signup.ts"))).toBe(false);
  });

  it("a shell command gets a whole-tree checkpoint; a failed one is recorded as an error", () => {
    const root = workspace({ "src/app.ts": "login\n" });
    // Codex sends a shell command's bare output; its exit code is in the session transcript.
    const transcript = rollout(root, "call_test_1");
    hook("codex", "pre-bash", root);
    writeFileSync(join(root, "src/app.ts"), "signin\n");
    hook("codex", "post-bash", root, { transcript });
    hook("codex", "post-bash-failure", root, { call: "call_test_1", transcript });
    const sid = baton(root, ["status"]).sessions[0].sessionId as string;
    expect(baton(root, ["checkpoints", "--session", sid]).checkpoints.map((c: any) => c.kind)).toEqual(["tree"]);
    const nodes = baton(root, ["ledger", "list", "--session", sid]).nodes as any[];
    expect(nodes.map((n) => [n.toolName, n.status])).toEqual([
      ["Bash", "success"],
      ["Bash", "error"],
    ]);
    expect(nodes[1].fingerprint).toMatch(/^fp-/);
    hook("codex", "user-prompt-rollback", root);
    expect(read(root, "src/app.ts")).toBe("login\n");
  });

  it("identical failing shell commands, known only from the transcript, pause the session", () => {
    const root = workspace({ "src/app.ts": "login\n" });
    const calls = ["call_f1", "call_f2", "call_f3"];
    const transcript = rollout(root, ...calls);
    let last: HookRun | undefined;
    for (const call of calls) last = hook("codex", "post-bash-failure", root, { call, transcript });
    const sid = baton(root, ["status"]).sessions[0].sessionId as string;
    const nodes = baton(root, ["ledger", "list", "--session", sid]).nodes as any[];
    expect(nodes.map((n) => n.status)).toEqual(["error", "error", "error"]);
    expect(new Set(nodes.map((n) => n.fingerprint)).size).toBe(1);
    expect(lane(root, sid, "codex").spiral.paused).toBe(true);
    expect(facets(root, sid).spiral).toBeUndefined(); // the lane's pause, not the session's
    expect(last?.out.hookSpecificOutput.additionalContext).toContain("Baton paused session");
  });

  it("PreCompact writes STATE.md, PostCompact notes the compaction, SessionEnd ends the run", () => {
    const root = workspace();
    hook("codex", "session-start-startup", root);
    const sid = baton(root, ["status"]).sessions[0].sessionId as string;
    hook("codex", "pre-compact", root);
    expect(existsSync(join(root, ".baton", "sessions", sid, "STATE.md"))).toBe(true);
    expect(compactionNotes(root, sid)).toEqual([]);
    hook("codex", "post-compact", root);
    expect(compactionNotes(root, sid)).toEqual(["Codex compacted its context (manual)."]);
    expect(facets(root, sid).runs.map((r: any) => r.status)).toEqual(["running"]);
    hook("codex", "session-end", root);
    expect(facets(root, sid).runs.map((r: any) => r.status)).toEqual(["ended"]);
  });

  it("SessionStart with source=resume gives the next action", () => {
    const root = workspace();
    hook("codex", "session-start-startup", root);
    const ctx = hook("codex", "session-start-resume", root).out.hookSpecificOutput.additionalContext as string;
    expect(ctx).toContain("Agent session resume");
    expect(ctx).toContain("## Next action\ncontinue_task:");
  });
});

describe("Gemini CLI hooks", () => {
  it("write_file and replace are checkpointed; 'please undo that' restores the last one", () => {
    const root = workspace({ "README.md": "# App\n", "src/app.ts": "login\n" });
    expect(hook("gemini", "session-start-startup", root).out.hookSpecificOutput.hookEventName).toBe("SessionStart");
    expect(hook("gemini", "before-write-file", root).out).toEqual({});
    writeFileSync(join(root, "README.md"), "# App\n\nRewritten by the agent.\n");
    expect(hook("gemini", "after-write-file", root).out).toEqual({});
    hook("gemini", "before-replace", root);
    writeFileSync(join(root, "src/app.ts"), "signin\n");
    hook("gemini", "after-replace", root);

    const undo = hook("gemini", "before-agent-undo", root);
    expect(undo.out.hookSpecificOutput.hookEventName).toBe("BeforeAgent");
    expect(undo.out.systemMessage).toMatch(/^Baton rolled back/);
    expect(read(root, "src/app.ts")).toBe("login\n");
    expect(read(root, "README.md")).toBe("# App\n\nRewritten by the agent.\n");
    hook("gemini", "before-agent-undo", root);
    expect(read(root, "README.md")).toBe("# App\n");
  });

  it("headless 'undo that' is recognised behind the session-start context Gemini CLI puts in front of it", () => {
    const root = workspace({ "src/app.ts": "login\n" });
    const context = hook("gemini", "session-start-startup", root).out.hookSpecificOutput.additionalContext as string;
    expect(context.length).toBeGreaterThan(100);
    hook("gemini", "before-replace", root);
    writeFileSync(join(root, "src/app.ts"), "signin\n");
    hook("gemini", "after-replace", root);
    const undo = hook("gemini", "before-agent-headless-undo", root, { context });
    expect(undo.out.systemMessage).toMatch(/^Baton rolled back/);
    expect(read(root, "src/app.ts")).toBe("login\n");
  });

  it("a file a shell command deleted comes back", () => {
    const root = workspace({ "src/app.ts": "app\n" });
    hook("gemini", "before-shell", root);
    unlinkSync(join(root, "src/app.ts")); // what `rm` does
    hook("gemini", "after-shell", root);
    hook("gemini", "after-shell-error", root);
    hook("gemini", "before-agent-undo", root);
    expect(read(root, "src/app.ts")).toBe("app\n");
  });

  it("a spiral pause denies write_file in Gemini's own format", () => {
    const root = workspace({ "README.md": "# App\n" });
    // A non-zero exit is only in llmContent ("Exit Code: 2"), and each run has its own process group.
    for (let i = 0; i < 3; i++) hook("gemini", "after-shell-error", root, { pgid: String(4242 + i) });
    const sid = baton(root, ["status"]).sessions[0].sessionId as string;
    const nodes = baton(root, ["ledger", "list", "--session", sid]).nodes as any[];
    expect(nodes.map((n) => n.status)).toEqual(["error", "error", "error"]);
    expect(new Set(nodes.map((n) => n.fingerprint)).size).toBe(1);
    const denied = hook("gemini", "before-write-file", root);
    expect(denied.out.decision).toBe("deny");
    expect(denied.out.reason).toContain("Baton paused session");
    expect(read(root, "README.md")).toBe("# App\n");
  });

  it("a repeated shell command is judged by what it returned: a new process group is the same result, a changed output is not", () => {
    const root = workspace();
    let n = 0;
    const shell = (output: string) => {
      const p = JSON.parse(
        payload("gemini", "after-shell", {
          cwd: root,
          session: "agent-session-1",
          time: `2026-05-01T10:00:${String(n).padStart(2, "0")}.000Z`,
        }),
      );
      p.tool_input.command = "ls dist";
      p.tool_response = {
        llmContent: `<untrusted_context>\nOutput: ${output}\nProcess Group PGID: ${4000 + n++}\n</untrusted_context>`,
        returnDisplay: output,
      };
      const r = cli(["hook", "gemini", "AfterTool"], { cwd: root, input: JSON.stringify(p) });
      expect(r.code, r.stderr).toBe(0);
    };
    const paused = () => lane(root, baton(root, ["status"]).sessions[0].sessionId, "gemini")?.spiral?.paused === true;
    // A build filling dist/: the same command, a longer listing each time.
    for (let i = 0; i < 6; i++) shell(["a.js", ...Array.from({ length: i }, (_, j) => `b${j}.js`)].join("\n"));
    expect(paused(), "six listings that changed").toBe(false);
    // The same listing each time, in a new process group each time: three are a check, the fourth a spiral.
    for (let i = 0; i < 3; i++) shell("a.js");
    expect(paused(), "three identical listings").toBe(false);
    shell("a.js");
    expect(paused(), "four identical listings").toBe(true);
  });

  it("PreCompress 'auto' (before every model request) only refreshes STATE.md when the journal changed, noting nothing; a manual /compress writes STATE.md and notes it; AfterAgent and SessionEnd end the run", () => {
    const root = workspace();
    hook("gemini", "session-start-resume", root);
    const sid = baton(root, ["status"]).sessions[0].sessionId as string;
    const state = join(root, ".baton", "sessions", sid, "STATE.md");
    const lastSeq = () => baton(root, ["session", "show", sid]).snapshot.lastSeq as number;
    expect(hook("gemini", "pre-compress", root).out).toEqual({});
    const first = readFileSync(state, "utf8");
    const seq = lastSeq();
    // Nothing changed: not written again (STATE.md carries its time, so a write would show).
    for (let i = 0; i < 2; i++) expect(hook("gemini", "pre-compress", root).out).toEqual({});
    expect(readFileSync(state, "utf8")).toBe(first);
    expect(lastSeq(), "auto adds nothing to the journal").toBe(seq);
    expect(compactionNotes(root, sid)).toEqual([]);
    // The journal moved on: the next auto writes it again.
    baton(root, ["decision", "add", "use sqlite", "--session", sid, "--reason", "durable"]);
    hook("gemini", "pre-compress", root);
    expect(readFileSync(state, "utf8")).toContain("use sqlite");
    expect(compactionNotes(root, sid)).toEqual([]);
    hook("gemini", "pre-compress-manual", root);
    expect(compactionNotes(root, sid)).toEqual(["Gemini CLI compacted its context (manual); STATE.md was written first."]);
    hook("gemini", "after-agent", root);
    expect(facets(root, sid).runs.map((r: any) => r.status)).toEqual(["ended"]);
    expect(hook("gemini", "session-end", root).out).toEqual({});
  });
});

describe("Qwen Code hooks", () => {
  it("write_file and edit are checkpointed before they run; 'undo that' restores the edit, then removes the new file", () => {
    const root = workspace({ "src/app.ts": 'return redirect("/login");\n' });
    const start = hook("qwen", "session-start-startup", root);
    expect(start.out.hookSpecificOutput).toMatchObject({
      hookEventName: "SessionStart",
      additionalContext: expect.stringContaining("## Next action"),
    });
    expect(hook("qwen", "pre-write", root).stdout, "a checkpoint that succeeded lets the call through silently").toBe("");
    writeFileSync(join(root, "src/session.ts"), 'export const SESSION_COOKIE = "sid";\n');
    hook("qwen", "post-write", root);
    hook("qwen", "pre-edit", root);
    writeFileSync(join(root, "src/app.ts"), 'return redirect("/login?next=" + next);\n');
    hook("qwen", "post-edit", root);

    const sid = baton(root, ["status"]).sessions[0].sessionId as string;
    const cps = baton(root, ["checkpoints", "--session", sid]).checkpoints as any[];
    expect(cps.map((c) => [c.kind, c.toolName])).toEqual([
      ["targeted", "write_file"],
      ["targeted", "edit"],
    ]);
    const turns = lane(root, sid, "qwen").spiral.window as any[];
    expect(turns.map((t) => [t.tool, t.status, t.checkpointId])).toEqual([
      ["write_file", "success", cps[0].id],
      ["edit", "success", cps[1].id],
    ]);
    // The ledger keeps the result as the model saw it (llmContent), not the terminal's diff.
    const ledger = baton(root, ["ledger", "list", "--session", sid]).nodes as any[];
    expect(ledger.map((n) => [n.toolName, n.status])).toEqual([
      ["write_file", "success"],
      ["edit", "success"],
    ]);

    const undo = hook("qwen", "user-prompt-undo", root);
    expect(undo.out.hookSpecificOutput).toMatchObject({
      hookEventName: "UserPromptSubmit",
      additionalContext: expect.stringContaining("Restored: src/app.ts"),
    });
    expect(read(root, "src/app.ts")).toBe('return redirect("/login");\n');
    hook("qwen", "user-prompt-undo", root);
    expect(existsSync(join(root, "src/session.ts"))).toBe(false);
  });

  it("a shell command gets a whole-tree checkpoint; failing ones are recorded and pause the lane; the next write is denied", () => {
    const root = workspace({ "src/app.ts": "v1\n", "README.md": "readme\n" });
    hook("qwen", "session-start-startup", root);
    hook("qwen", "pre-shell", root);
    writeFileSync(join(root, "generated.txt"), "made by the shell\n");
    hook("qwen", "post-shell", root);
    const sid = baton(root, ["status"]).sessions[0].sessionId as string;
    expect(baton(root, ["checkpoints", "--session", sid]).checkpoints.map((c: any) => [c.kind, c.toolName])).toEqual([
      ["tree", "run_shell_command"],
    ]);
    let last: HookRun | undefined;
    for (const call of ["toolu_t1", "toolu_t2", "toolu_t3"]) {
      hook("qwen", "pre-shell-test", root, { call });
      last = hook("qwen", "post-shell-failure", root, { call });
    }
    expect(last?.out.hookSpecificOutput).toMatchObject({
      hookEventName: "PostToolUseFailure",
      additionalContext: expect.stringMatching(/^Baton paused session task-/),
    });
    const ledger = baton(root, ["ledger", "list", "--session", sid, "--status", "error"]).nodes as any[];
    expect(ledger.length).toBe(3);
    expect(lane(root, sid, "qwen").spiral.paused).toBe(true);
    const denied = hook("qwen", "pre-write", root);
    expect(denied.out.hookSpecificOutput).toMatchObject({
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
      permissionDecisionReason: expect.stringContaining("Baton paused session"),
    });
    expect(existsSync(join(root, "src/session.ts"))).toBe(false);
    // The user's "unpause", typed in Qwen Code, lifts it.
    expect(hook("qwen", "user-prompt-unpause", root).out.systemMessage).toMatch(/unpaused/);
    expect(hook("qwen", "pre-write", root).stdout).toBe("");
  });

  it("the requests that carry tool results back (UserPromptSubmit with no words) do nothing, not even open the workspace", () => {
    const root = workspace();
    const r = hook("qwen", "user-prompt-continuation", root);
    expect(r.stdout).toBe("");
    expect(baton(root, ["status"]).sessions).toEqual([]);
  });

  it("PreCompact writes STATE.md, PostCompact notes it, SessionStart after it gives the state; Stop, StopFailure and SessionEnd end the run", () => {
    const root = workspace();
    hook("qwen", "session-start-startup", root);
    const sid = baton(root, ["status"]).sessions[0].sessionId as string;
    hook("qwen", "pre-compact", root);
    expect(existsSync(join(root, ".baton", "sessions", sid, "STATE.md"))).toBe(true);
    expect(compactionNotes(root, sid)).toEqual([]);
    hook("qwen", "post-compact", root);
    expect(compactionNotes(root, sid)).toEqual(["Qwen Code compacted its context (auto)."]);
    const ctx = hook("qwen", "session-start-compact", root).out.hookSpecificOutput.additionalContext as string;
    expect(ctx).toContain("Agent session compact");
    const running = () => (facets(root, sid).runs as any[]).filter((r) => r.lane === "qwen:agent-session-1" && r.status === "running");
    for (const end of ["stop", "stop-failure", "session-end"]) {
      hook("qwen", "user-prompt", root);
      expect(running().length, `before ${end}`).toBe(1);
      hook("qwen", end, root);
      expect(running(), `after ${end}`).toEqual([]);
    }
  });

  it("a subagent's calls carry its agent_id: a lane of its own inside the session's", () => {
    const root = workspace({ "src/app.ts": "app\n" });
    hook("qwen", "session-start-startup", root);
    hook("qwen", "subagent-pre-write", root);
    writeFileSync(join(root, "src/helper.ts"), "export const helper = 1;\n");
    hook("qwen", "subagent-post-write", root);
    const sid = baton(root, ["status"]).sessions[0].sessionId as string;
    expect(Object.keys(facets(root, sid).lanes).sort()).toEqual(["qwen:agent-session-1", "qwen:agent-session-1/general-purpose-7c1f"]);
  });
});

describe("Copilot CLI hooks", () => {
  /** Replay a fixture through `baton hook copilot <event>` (its payloads do not name the event). */
  function copilotHook(name: string, event: string, root: string, vars: Record<string, string> = {}): HookRun {
    const input = payload("copilot", name, { cwd: root, session: "agent-session-1", call: "0", ...vars });
    const r = cli(["hook", "copilot", event], { cwd: root, input });
    expect(r.code, `baton hook copilot ${event} (${name}) exited ${r.code}: ${r.stderr}`).toBe(0);
    return { ...r, out: r.stdout.trim() ? JSON.parse(r.stdout) : undefined };
  }

  it("create and edit are checkpointed before they run; 'undo that' restores the edit, then removes the new file; context is flat additionalContext", () => {
    const root = workspace({ "src/app.ts": 'return redirect("/login");\n' });
    const start = copilotHook("session-start-startup", "sessionStart", root);
    expect(start.out).toEqual({ additionalContext: expect.stringContaining("## Next action") });
    expect(copilotHook("pre-create", "preToolUse", root).stdout, "a checkpoint that succeeded lets the call through silently").toBe("");
    writeFileSync(join(root, "src/session.ts"), 'export const SESSION_COOKIE = "sid";\n');
    copilotHook("post-create", "postToolUse", root);
    copilotHook("pre-edit", "preToolUse", root);
    writeFileSync(join(root, "src/app.ts"), 'return redirect("/login?next=" + next);\n');
    copilotHook("post-edit", "postToolUse", root);
    const sid = baton(root, ["status"]).sessions[0].sessionId as string;
    const cps = baton(root, ["checkpoints", "--session", sid]).checkpoints as any[];
    expect(cps.map((c) => [c.kind, c.toolName])).toEqual([
      ["targeted", "create"],
      ["targeted", "edit"],
    ]);
    const turns = lane(root, sid, "copilot").spiral.window as any[];
    expect(turns.map((t) => [t.tool, t.status, t.checkpointId])).toEqual([
      ["create", "success", cps[0].id],
      ["edit", "success", cps[1].id],
    ]);
    const undo = copilotHook("user-prompt-undo", "userPromptSubmitted", root);
    expect(undo.out).toEqual({ additionalContext: expect.stringContaining("Restored: src/app.ts") });
    expect(read(root, "src/app.ts")).toBe('return redirect("/login");\n');
    copilotHook("user-prompt-undo", "userPromptSubmitted", root);
    expect(existsSync(join(root, "src/session.ts"))).toBe(false);
  });

  it("failing shell commands (exit code in the result, a new shell each time) are one failure and pause the lane; the next write is denied in Copilot CLI's own shape", () => {
    const root = workspace({ "src/app.ts": "v1\n" });
    copilotHook("session-start-startup", "sessionStart", root);
    copilotHook("pre-bash", "preToolUse", root);
    writeFileSync(join(root, "generated.txt"), "made by the shell\n");
    copilotHook("post-bash", "postToolUse", root);
    const sid = baton(root, ["status"]).sessions[0].sessionId as string;
    expect(baton(root, ["checkpoints", "--session", sid]).checkpoints.map((c: any) => [c.kind, c.toolName])).toEqual([["tree", "bash"]]);
    let last: HookRun | undefined;
    for (const call of ["1", "2", "3"]) {
      copilotHook("pre-bash-test", "preToolUse", root, { call });
      last = copilotHook("post-bash-failure", "postToolUse", root, { call });
    }
    expect(last?.out).toEqual({ additionalContext: expect.stringMatching(/^Baton paused session task-/) });
    const ledger = baton(root, ["ledger", "list", "--session", sid, "--status", "error"]).nodes as any[];
    expect(ledger.length).toBe(3);
    expect(lane(root, sid, "copilot").spiral.paused).toBe(true);
    const denied = copilotHook("pre-create", "preToolUse", root);
    expect(denied.out).toEqual({ permissionDecision: "deny", permissionDecisionReason: expect.stringContaining("Baton paused session") });
    expect(copilotHook("user-prompt-unpause", "userPromptSubmitted", root).out).toEqual({
      additionalContext: expect.stringContaining("The user cleared Baton's spiral pause"),
    });
    expect(copilotHook("pre-create", "preToolUse", root).stdout).toBe("");
  });

  it("preCompact writes STATE.md and notes the compaction (nothing follows it); agentStop and sessionEnd end the run", () => {
    const root = workspace();
    copilotHook("session-start-startup", "sessionStart", root);
    const sid = baton(root, ["status"]).sessions[0].sessionId as string;
    copilotHook("pre-compact", "preCompact", root);
    expect(existsSync(join(root, ".baton", "sessions", sid, "STATE.md"))).toBe(true);
    expect(compactionNotes(root, sid)).toEqual(["Copilot CLI compacted its context (manual); STATE.md was written first."]);
    const running = () => (facets(root, sid).runs as any[]).filter((r) => r.lane === "copilot:agent-session-1" && r.status === "running");
    for (const [name, event] of [
      ["agent-stop", "agentStop"],
      ["session-end", "sessionEnd"],
    ] as const) {
      copilotHook("user-prompt", "userPromptSubmitted", root);
      expect(running().length, `before ${event}`).toBe(1);
      copilotHook(name, event, root);
      expect(running(), `after ${event}`).toEqual([]);
    }
  });
});

describe("the settings that supervise the agent", () => {
  it("a write tool may not change them, inside the workspace or out, paused or not", () => {
    const root = workspace({ "src/app.ts": "v1\n" });
    hook("claude", "session-start-startup", root);
    const write = (file_path: string) =>
      cli(["hook", "claude", "PreToolUse"], {
        cwd: root,
        input: JSON.stringify({
          session_id: "agent-session-1",
          cwd: root,
          hook_event_name: "PreToolUse",
          tool_name: "Write",
          tool_input: { file_path, content: "{}" },
          tool_use_id: `toolu_${file_path.length}`,
        }),
      });
    for (const f of [
      join(root, ".claude", "settings.local.json"),
      join(root, ".github", "hooks", "baton.json"),
      join(root, ".baton", "config.json"),
    ]) {
      const out = JSON.parse(write(f).stdout).hookSpecificOutput;
      expect(out.permissionDecision, f).toBe("deny");
      expect(out.permissionDecisionReason).toMatch(/Ask the user to edit/);
    }
    expect(write(join(root, "src", "app.ts")).stdout.trim()).toBe("");
  });

  it("Copilot CLI: arguments sent as JSON text are read, and write_bash is a shell command", () => {
    const root = workspace({ "src/app.ts": "v1\n" });
    const pre = (toolName: string, toolArgs: unknown) =>
      cli(["hook", "copilot", "preToolUse"], {
        cwd: root,
        input: JSON.stringify({ sessionId: "copilot-session-1", timestamp: Date.now(), cwd: root, toolName, toolArgs }),
      });
    const denied = pre("bash", JSON.stringify({ command: "baton hooks uninstall copilot" }));
    expect(JSON.parse(denied.stdout).permissionDecision).toBe("deny");
    expect(JSON.parse(pre("write_bash", { input: "baton hooks uninstall copilot\n" }).stdout).permissionDecision).toBe("deny");
  });
});

describe("Claude Code's StopFailure", () => {
  it("a turn an API error ended (StopFailure, not Stop) ends the lane's run as Stop does", () => {
    const root = workspace();
    hook("claude", "session-start-startup", root);
    const sid = baton(root, ["status"]).sessions[0].sessionId as string;
    const running = () => (facets(root, sid).runs as any[]).filter((r) => r.agent === "Claude Code" && r.status === "running");
    hook("claude", "user-prompt", root);
    expect(running().length).toBe(1);
    expect(hook("claude", "stop-failure", root).stdout).toBe("");
    expect(running()).toEqual([]);
  });
});

describe("failing open", () => {
  it("a .baton that is a file lets every tool through", () => {
    const root = tempDir("baton-hooks-broken-");
    writeFileSync(join(root, ".baton"), "not a directory");
    writeFileSync(join(root, "README.md"), "# App\n");
    expect(hook("claude", "pre-edit", root).stdout).toBe("");
    expect(hook("claude", "post-edit", root).stdout).toBe("");
    expect(hook("codex", "pre-apply-patch", root).stdout).toBe("");
    expect(hook("gemini", "before-write-file", root).out).toEqual({});
    expect(hook("claude", "session-start-startup", root).stdout).toBe("");
  });

  it("a payload nested thousands of levels deep lets the tool through, without a stack trace", () => {
    const root = workspace({ "src/app.ts": "app\n" });
    const input = JSON.stringify({
      session_id: "agent-session-1",
      cwd: root,
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command: "ls" },
    }).replace('"ls"}', `"ls","x":${"[".repeat(5_000)}${"]".repeat(5_000)}}`);
    const r = cli(["hook", "claude", "PreToolUse"], { cwd: root, input });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("");
    expect(r.stderr).not.toMatch(/Maximum call stack|at .*\.cjs/);
  });

  it("a payload that is not JSON lets the tool through and is logged as bad_input, not the parser's SyntaxError", () => {
    const root = workspace({ "src/app.ts": "app\n" });
    const r = cli(["hook", "claude", "PreToolUse"], { cwd: root, input: '{"session_id": "s", "tool_name": ' });
    expect([r.code, r.stdout]).toEqual([0, ""]);
    const log = read(root, ".baton/logs/hooks.log")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(log).toEqual([
      expect.objectContaining({
        agent: "claude",
        event: "PreToolUse",
        code: "bad_input",
        message: expect.stringMatching(/^the agent's payload could not be read: /),
      }),
    ]);
  });

  it("a corrupt database lets the tool through and the failure is logged", () => {
    const root = workspace({ "src/app.ts": "app\n" });
    writeFileSync(join(root, ".baton", "baton.db"), Buffer.alloc(8192, 7));
    expect(hook("claude", "pre-edit", root).stdout).toBe("");
    expect(hook("claude", "user-prompt-undo", root).stdout).toBe("");
    expect(hook("gemini", "before-write-file", root).out).toEqual({});
    const log = read(root, ".baton/logs/hooks.log")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(log.map((l) => [l.agent, l.event])).toEqual([
      ["claude", "PreToolUse"],
      ["claude", "UserPromptSubmit"],
      ["gemini", "BeforeTool"],
    ]);
    expect(log[0].code).toBe("io_error");
    // A command says the file is damaged and what helps: not `baton rebuild`, which cannot open it either.
    for (const cmd of [["status"], ["rebuild"], ["doctor"]]) {
      const r = cli([...cmd, "--json", "--root", root]);
      expect(r.code, cmd[0]).toBe(5);
      expect(r.json().error.message).toMatch(
        /the database file is damaged \(file is not a database\), so no command can open it \(nor doctor, nor rebuild\): restore .*baton\.db from a backup, or move it aside \(`mv .*baton\.db .*baton\.db\.damaged`/,
      );
      expect(r.json().error.message).not.toContain("baton rebuild");
    }
  });

  it("a broken or wrong .baton/config.json: commands say which file and key, hooks let the tool through and log it, doctor names it", () => {
    const root = workspace({ "src/app.ts": "app\n" });
    const config = join(root, ".baton", "config.json");
    writeConfig(root, '{"checkpoints": {"retain": 5},');
    const status = cli(["status", "--json", "--root", root]);
    expect(status.code, status.stdout).not.toBe(0);
    expect(status.json()).toMatchObject({ error: { code: "bad_input", message: expect.stringContaining(`${config} is not valid JSON`) } });
    expect(hook("claude", "pre-edit", root).stdout).toBe("");
    expect(hook("gemini", "before-write-file", root).out).toEqual({});
    const log = read(root, ".baton/logs/hooks.log")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(log.map((l) => [l.agent, l.code])).toEqual([
      ["claude", "bad_input"],
      ["gemini", "bad_input"],
    ]);
    expect(readFileSync(config, "utf8"), "a file Baton cannot read is never rewritten").toBe('{"checkpoints": {"retain": 5},');

    // A readable file with a setting only some commands read: those commands refuse it, doctor names it.
    writeConfig(root, { checkpoints: { exclude: "*.log" }, spiral: { sameSignature: 1 }, hooks: { server: "sometimes" } });
    expect(cli(["session", "start", "--flow", "task", "--root", root]).code).toBe(0);
    const cp = cli(["checkpoint", "--all", "--json", "--root", root]);
    expect(cp.json()).toMatchObject({ error: { code: "bad_input", message: expect.stringContaining("checkpoints.exclude must be") } });
    const report = cli(["doctor", "--json", "--root", root]).json();
    const found = report.findings.filter((f: any) => f.check === "config");
    expect(found.map((f: any) => f.code)).toEqual(["config_invalid", "config_invalid", "config_invalid"]);
    expect(found.map((f: any) => f.message).join("\n")).toMatch(/checkpoints\.exclude[\s\S]*spiral\.sameSignature[\s\S]*hooks\.server/);
  });

  it("doctor reports recent hook failures (counts, never the messages)", () => {
    const root = workspace();
    const r = cli(["hook", "claude", "PreToolUse"], {
      cwd: root,
      input: '{"tool_name": "Edit", "tool_input": {"file_path": "x", "token": "sk-live-secret',
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("");
    const report = cli(["doctor", "--json", "--root", root]).json();
    const f = report.findings.find((x: any) => x.check === "hooks");
    expect(f).toMatchObject({ code: "hook_failures", severity: "warning" });
    expect(f.evidence.count).toBe(1);
    expect(f.evidence.agents).toEqual({ claude: 1 });
    expect(f.evidence.codes).toEqual({ bad_input: 1 });
    expect(JSON.stringify(report)).not.toContain("sk-live-secret");

    // A file where the log folder goes: failures cannot be recorded, and doctor says so.
    rmSync(join(root, ".baton", "logs"), { recursive: true });
    writeFileSync(join(root, ".baton", "logs"), "");
    expect(cli(["hook", "claude", "PreToolUse"], { cwd: root, input: "{" }).code).toBe(0);
    const after = cli(["doctor", "--json", "--root", root]).json();
    expect(after.findings.find((x: any) => x.code === "hook_log_unusable")).toMatchObject({
      check: "hooks",
      severity: "warning",
      evidence: { path: ".baton/logs", kind: "file" },
    });
    // The folder back, with a folder where the log goes.
    rmSync(join(root, ".baton", "logs"));
    mkdirSync(join(root, ".baton", "logs", "hooks.log"), { recursive: true });
    const folder = cli(["doctor", "--json", "--root", root]).json();
    expect(folder.findings.find((x: any) => x.code === "hook_log_unusable")).toMatchObject({
      evidence: { path: ".baton/logs/hooks.log", kind: "dir" },
    });
  });

  it("outside a Baton workspace the hooks do nothing", () => {
    const root = tempDir("baton-hooks-none-");
    expect(hook("claude", "session-start-startup", root).stdout).toBe("");
    expect(existsSync(join(root, ".baton"))).toBe(false);
  });

  it("an unknown agent is reported on stderr, exit 0", () => {
    const r = cli(["hook", "cursor", "PreToolUse"], { input: "{}" });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('unknown agent "cursor"');
    expect(CLI).toContain("baton.cjs");
  });
});

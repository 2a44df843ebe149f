/**
 * Cline CLI (the version versions.json pins) through Baton's hooks, offline against the scripted
 * model. Cline CLI resumes a task only in its interactive TUI, so its story is two headless tasks
 * rather than the shared suite's resumed turns (suite.ts):
 *
 * 1. a task that reads, writes, edits and runs shell commands: each write and command is
 *    checkpointed before it runs, every call is recorded with its result in the lane of Cline's
 *    session, and `baton rollback` steps back through them;
 * 2. a task that runs the same failing command again and again: Baton pauses the lane and
 *    Cline's PreToolUse cancel ends the task before the next one runs;
 * 3. a task run with `--config <dir>` whose agent writes a plugin there: refused.
 *
 * With BATON_AGENT_FIXTURES=write the payloads go to test/fixtures/agents/cline/.
 */
import { spawn } from "node:child_process";
import { appendFileSync, cpSync, existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { AcpClient } from "./acp.js";
import { clineAcp, cline as driver } from "./drivers.js";
import { type AgentRun, type Capture, hookRunning, KEEP, killClineHubDaemons, Project } from "./harness.js";
import { agentCli, REPO, VERSIONS } from "./install.js";
import { gate, MockModel, repeat, type Step } from "./mock-model.js";

const FAIL_CMD = "cat does-not-exist.txt";
const WORK: Step[] = [
  { op: "read", path: "a.txt" },
  { op: "write", path: "new.txt", content: "fresh\n" },
  { op: "edit", path: "a.txt", old: "one", new: "uno" },
  { op: "shell", command: "echo made-by-shell > c.txt" },
  { op: "shell", command: "exit 3" },
  { op: "text", text: "Made the changes." },
];

const pin = VERSIONS.cline;

describe(`${pin.package}@${pin.version} through Baton's hooks`, () => {
  const mock = new MockModel();
  let p: Project;
  let cli: string;
  let url: string;
  let batonSession = "";
  let hooksDir = "";
  let movedConfig = "";
  const runs: Record<string, AgentRun> = {};
  const sessions: Record<string, string> = {};
  let checkpoints: any[] = [];
  const marks: Record<string, number> = {};
  const trees: Record<string, string | undefined> = {};
  const acpResults: Record<string, string> = {};
  const acpEvents: Record<string, Capture[]> = {};
  const runningAfter: Record<string, boolean> = {};
  let acpStderr = "";
  let interruptedCode: number | null = null;

  async function task(name: string, prompt: string, steps: Step[], options: string[] = []): Promise<AgentRun> {
    const before = p.captured().length;
    mock.play(steps, p.root);
    const r = await p.run(cli, [...options, ...driver.args(prompt)], driver.env(url), 240_000);
    runs[name] = r;
    // Cline's detached hooks (TaskComplete …) may still be running: wait for their captures.
    await new Promise((ok) => setTimeout(ok, 1500));
    const mine = p.captured().slice(before);
    sessions[name] = mine.find((c) => c.payload?.sessionContext?.rootSessionId)?.payload.sessionContext.rootSessionId;
    return r;
  }

  beforeAll(async () => {
    cli = agentCli("cline");
    url = await mock.start();
    p = new Project("cline", { "a.txt": "one\n", "README.md": "# demo\n" });
    const s = p.baton(["--json", "session", "start", "--flow", "task", "--title", "Cline run"]);
    expect(s.code, s.stderr).toBe(0);
    batonSession = s.json().sessionId;
    driver.configure(p, url);
    const hooks = p.baton(["--json", "hooks", "install", "cline", "--command", "baton"]);
    expect(hooks.code, hooks.stderr).toBe(0);
    hooksDir = hooks.json().file;
    await task("work", "Make the planned changes.", WORK);
    checkpoints = p.baton(["--json", "checkpoints"]).json().checkpoints;
    // Cline's folder moved by `--config` to one not named .cline (a copy of its settings, so it
    // still finds its provider): the agent tries to drop a plugin into it.
    movedConfig = join(p.home, "cline-elsewhere");
    cpSync(join(p.home, ".cline"), movedConfig, { recursive: true });
    // Run by the CLI's own process: a hub daemon an earlier run left would run the task, and its
    // hooks, without the option on its command line (see the test).
    killClineHubDaemons(p.root);
    await task(
      "moved",
      "Add a helper plugin.",
      [
        { op: "write", path: join(movedConfig, "plugins", "helper", "index.js"), content: "module.exports = {};\n" },
        { op: "text", text: "Added." },
      ],
      ["--config", movedConfig],
    );
    killClineHubDaemons(p.root);
    await task("spiral", "Show me the missing file.", [
      ...repeat(6, { op: "shell", command: FAIL_CMD }),
      { op: "text", text: "I am stuck." },
    ]);
    await acpStory();
    await interrupted();
  }, 900_000);

  /** Debug trail of the ACP story (BATON_AGENT_KEEP). */
  function note(line: string): void {
    if (KEEP) appendFileSync(join(p.base, "story.log"), `${new Date().toISOString()} ${line}\n`);
  }

  /**
   * One Cline session over ACP (`cline --acp`), five prompts: a write; "undo that"; a shell
   * command; a prompt cancelled mid-turn (`session/cancel`); a prompt whose model request fails.
   */
  /** The ACP session's agent, stopped after the tests whatever happened to them. */
  let acpClient: AcpClient | undefined;

  async function acpStory(): Promise<void> {
    const acp = new AcpClient(cli, clineAcp.args, { cwd: p.root, env: { ...p.env, ...clineAcp.env() } });
    acpClient = acp;
    try {
      await acp.initialize();
      const id = await acp.newSession(p.root);
      await acp.request("session/set_model", { sessionId: id, modelId: clineAcp.model });
      /** `expected`: a hook Cline runs without waiting for it, which this prompt must fire. */
      const prompt = async (name: string, text: string, steps: Step[], expected?: string) => {
        const before = p.captured().length;
        mock.play(steps, p.root);
        marks[name] = mock.requests.length;
        try {
          acpResults[name] = (await acp.prompt(id, text)).stopReason;
        } catch (err) {
          acpResults[name] = `error: ${String(err).slice(0, 300)}`;
        }
        // Cline runs some hooks without waiting for them: at least 1.5 s, and for the one expected
        // until it was sent (30 s at most), then until none runs.
        await new Promise((ok) => setTimeout(ok, 1500));
        const sent = () =>
          expected === undefined ||
          p
            .captured()
            .slice(before)
            .some((c) => c.event === expected);
        for (let i = 0; i < 300 && !sent(); i++) await new Promise((ok) => setTimeout(ok, 100));
        for (let i = 0; i < 300 && hookRunning(p.root, "cline"); i++) await new Promise((ok) => setTimeout(ok, 100));
        acpEvents[name] = p.captured().slice(before);
        note(`${name}: ${acpResults[name]} ${acpEvents[name]?.map((c) => c.event).join(",")}`);
      };
      await prompt("acp1", "Write the notes.", [
        { op: "write", path: "notes.txt", content: "first\n" },
        { op: "text", text: "Wrote them." },
      ]);
      await prompt("acp2", "undo that", [{ op: "text", text: "Noted." }]);
      trees.acpUndo = p.read("notes.txt");
      await prompt("acp3", "Add a line.", [
        { op: "shell", command: "echo second >> notes.txt" },
        { op: "text", text: "Added." },
      ]);
      const held = gate();
      const cancelled = prompt("acp4", "Take your time.", [{ op: "text", text: "Too late.", after: held.opened }], "SessionShutdown");
      await mock.arrival(1);
      acp.cancel(id);
      await cancelled;
      held.open();
      runningAfter.acp4 = await stillRunning(`cline:${acpSession()}`);
      await prompt(
        "acp5",
        "Try again.",
        repeat(12, { op: "text", text: "never", after: () => Promise.reject(new Error("model down")) }),
        "TaskError",
      );
      runningAfter.acp5 = await stillRunning(`cline:${acpSession()}`);
    } finally {
      await acp.close();
      acpStderr = acp.stderr;
    }
  }

  /** A headless task interrupted (SIGINT, as Ctrl-C) while it waits on the model. */
  async function interrupted(): Promise<void> {
    // The ACP session's last hooks (run without waiting) first, so none is counted as this task's.
    for (let i = 0; i < 300 && hookRunning(p.root, "cline"); i++) await new Promise((ok) => setTimeout(ok, 100));
    const before = p.captured().length;
    const held = gate();
    mock.play([{ op: "text", text: "Too late.", after: held.opened }], p.root);
    const child = spawn(cli, driver.args("Wait for me."), { cwd: p.root, env: { ...p.env, ...driver.env(url) }, stdio: "ignore" });
    const exited = new Promise<number | null>((ok) => child.on("close", (code, signal) => ok(code ?? (signal ? -1 : null))));
    await mock.arrival(1);
    child.kill("SIGINT");
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    interruptedCode = await exited;
    clearTimeout(timer);
    held.open();
    // Its detached SessionShutdown hook, if it started before the process ended.
    for (
      let i = 0;
      i < 25 &&
      !p
        .captured()
        .slice(before)
        .some((c) => c.event === "SessionShutdown");
      i++
    )
      await new Promise((ok) => setTimeout(ok, 200));
    const acp = acpSession();
    acpEvents.interrupted = p
      .captured()
      .slice(before)
      .filter((c) => acp === undefined || c.payload?.sessionContext?.rootSessionId !== acp);
    note(`interrupted: exit ${interruptedCode} ${acpEvents.interrupted.map((c) => c.event).join(",")}`);
  }

  function acpSession(): string | undefined {
    return acpEvents.acp1?.find((c) => c.payload?.sessionContext?.rootSessionId)?.payload.sessionContext.rootSessionId;
  }

  /**
   * Whether the lane's run is still running once the hook that ends it had time to (30 s at
   * most): Cline does not wait for that hook, and its payload is captured before Baton handles it.
   */
  async function stillRunning(lane: string): Promise<boolean> {
    for (let i = 0; i < 150 && runningInLane(lane); i++) await new Promise((ok) => setTimeout(ok, 200));
    return runningInLane(lane);
  }

  function runningInLane(lane: string): boolean {
    const all: any[] = p.baton(["--json", "session", "show", batonSession]).json().snapshot.facets.runs;
    return all.some((r) => r.lane === lane && r.status === "running");
  }

  afterAll(async () => {
    acpClient?.kill();
    await mock.stop();
    if (!p) return;
    // Cline CLI leaves a hub daemon of its own running for the project (`cline
    // --cline-hub-daemon --cwd <repo>`) after a headless task: stop the ones this test started.
    killClineHubDaemons(p.root);
    if (process.env.BATON_AGENT_FIXTURES === "write") saveFixtures(p);
    if (KEEP) writeFileSync(join(p.base, "requests.jsonl"), mock.requests.map((r) => JSON.stringify(r)).join("\n"));
    else p.cleanup();
  });

  test("the task's writes, edits and shell commands happened, offline, through Baton's hook files", () => {
    expect(runs.work?.code, runs.work?.stderr).toBe(0);
    expect(p.read("new.txt")).toBe("fresh\n");
    expect(p.read("a.txt")).toBe("uno\n");
    expect(p.read("c.txt")).toBe("made-by-shell\n");
    expect(hooksDir).toBe(join(p.root, ".clinerules", "hooks"));
    const fired = new Set(p.captured().map((c) => c.event));
    for (const e of ["TaskStart", "PreToolUse", "PostToolUse", "TaskComplete"]) expect(fired, e).toContain(e);
    expect(sessions.work, "the payloads name Cline's session").toMatch(/^\d+_[\w-]+$/);
  });

  test("`cline --config <dir>` run by its own process: the agent's write of a plugin into that folder is refused, and Cline's cancel ends the task", () => {
    const pre = p.captured().filter((c) => c.event === "PreToolUse" && JSON.stringify(c.payload).includes("cline-elsewhere"));
    expect(pre.length, "Cline ran with the moved folder and asked its hook").toBeGreaterThan(0);
    expect(existsSync(join(movedConfig, "plugins", "helper", "index.js")), "the plugin was not written").toBe(false);
    // The hook's cancel ended the task there (Cline's JSON output says it was aborted; it does not repeat the reason).
    expect(runs.moved?.stdout).toContain('"finishReason":"aborted"');
  });

  test("every write and shell command was checkpointed before it ran (the read was not)", () => {
    // new.txt, a.txt, and the two commands, each in the lane of Cline's session.
    expect(
      checkpoints.map((c) => c.toolName),
      JSON.stringify(checkpoints),
    ).toEqual(["editor", "editor", "run_commands", "run_commands"]);
    expect(new Set(checkpoints.map((c) => c.lane))).toEqual(new Set([`cline:${sessions.work}`]));
  });

  test("every call is recorded with its result in the lane of Cline's session; the failing command as a failure", () => {
    const show = p.baton(["--json", "session", "show", batonSession]).json().snapshot;
    const lane = show.facets.lanes?.[`cline:${sessions.work}`];
    expect(lane, JSON.stringify(show.facets.lanes)).toBeDefined();
    expect(show.facets.runs.some((r: any) => r.lane === lane.id)).toBe(true);
    const ledger = p.baton(["--json", "ledger", "list", "--session", batonSession]).json();
    expect(ledger.nodes.length).toBeGreaterThanOrEqual(WORK.length - 1);
    const text = JSON.stringify(ledger.nodes);
    expect(text).toContain("error");
  });

  test("the same failing command again and again pauses the lane, and Cline's cancel ends the task before the rest run", () => {
    const snap = p.baton(["--json", "session", "show", batonSession]).json().snapshot;
    const lane = snap.facets.lanes?.[`cline:${sessions.spiral}`];
    expect(lane?.spiral?.paused, JSON.stringify(snap.facets.lanes)).toBe(true);
    const ran = p.captured().filter((c) => c.event === "PostToolUse" && JSON.stringify(c.payload).includes(FAIL_CMD)).length;
    expect(ran, "a refused command never runs").toBeLessThan(6);
    const result = runs.spiral?.events.find((e) => e.type === "run_result");
    expect(result?.finishReason, runs.spiral?.stdout.slice(-2000)).toBe("aborted");
  });

  test("over ACP, every prompt of one Cline session is a run of the same task, in one lane: its write and its command checkpointed there", () => {
    expect([acpResults.acp1, acpResults.acp3], acpStderr.slice(-2000)).toEqual(["end_turn", "end_turn"]);
    expect(p.read("notes.txt")).toBe("first\nsecond\n");
    const session = acpSession();
    expect(session).toMatch(/^\d+_[\w-]+$/);
    const named = new Set(
      ["acp1", "acp2", "acp3", "acp4", "acp5"].flatMap((n) => (acpEvents[n] ?? []).map((c) => c.payload?.sessionContext?.rootSessionId)),
    );
    expect(named).toEqual(new Set([session]));
    expect(new Set(["acp1", "acp3"].flatMap((n) => (acpEvents[n] ?? []).map((c) => c.payload?.taskId))).size).toBe(1);
    const mine = p
      .baton(["--json", "checkpoints"])
      .json()
      .checkpoints.filter((c: any) => c.lane === `cline:${session}`);
    expect(mine.map((c: any) => c.toolName)).toEqual(["editor", "run_commands"]);
    const snap = p.baton(["--json", "session", "show", batonSession]).json().snapshot;
    const lane = snap.facets.lanes?.[`cline:${session}`];
    expect(lane, JSON.stringify(snap.facets.lanes)).toBeDefined();
    // TaskStart opens a run for each prompt; TaskComplete ends it.
    expect(snap.facets.runs.filter((r: any) => r.lane === lane.id).length).toBeGreaterThanOrEqual(2);
  });

  test('"undo that" over ACP reaches no hook (Cline fires no UserPromptSubmit there): the files stay as they were', () => {
    expect(acpResults.acp2).toBe("end_turn");
    expect(acpEvents.acp2?.map((c) => c.event)).not.toContain("UserPromptSubmit");
    expect(trees.acpUndo).toBe("first\n");
  });

  test("a prompt cancelled mid-turn (session/cancel) fires SessionShutdown, not TaskCancel: Baton ends the lane's run", () => {
    expect(acpResults.acp4).toBe("cancelled");
    const fired = acpEvents.acp4?.map((c) => c.event) ?? [];
    expect(fired).toContain("SessionShutdown");
    expect(fired).not.toContain("TaskCancel");
    expect(runningAfter.acp4).toBe(false);
  });

  test("a prompt whose model requests fail fires TaskError with the error: Baton ends the lane's run", () => {
    // ACP answers the prompt with an error or, as often, a plain end_turn: the hook is what tells.
    expect(acpResults.acp5).toMatch(/^(?:error: .*model down|end_turn)/);
    const err = acpEvents.acp5?.find((c) => c.event === "TaskError");
    expect(err?.payload.error?.message).toContain("model down");
    expect(err?.payload.sessionContext?.rootSessionId).toBe(acpSession());
    expect(runningAfter.acp5).toBe(false);
  });

  test("a headless task interrupted (SIGINT) fires no TaskCancel: at most SessionShutdown, which Cline may not live to start", () => {
    expect(interruptedCode).toBe(0);
    const fired = acpEvents.interrupted?.map((c) => c.event) ?? [];
    expect(fired[0]).toBe("TaskStart");
    expect(fired).not.toContain("TaskCancel");
    expect(fired.filter((e) => e !== "TaskStart" && e !== "SessionShutdown")).toEqual([]);
  });

  test("`baton rollback --to` a checkpoint of the task restores the files as they were before that call", () => {
    // The checkpoint taken before `echo made-by-shell > c.txt` ran.
    const undo = p.baton(["rollback", "--to", checkpoints[2].id]);
    expect(undo.code, undo.stderr + undo.stdout).toBe(0);
    expect(p.read("c.txt")).toBeUndefined();
    expect(p.read("a.txt")).toBe("uno\n");
  });

  test("uninstall removes Baton's hook files and the folders install made", () => {
    const r = p.baton(["--json", "hooks", "uninstall", "cline"]);
    expect(r.code, r.stderr).toBe(0);
    expect(p.read(".clinerules/hooks/PreToolUse.sh")).toBeUndefined();
  });
});

/** The first payload of each event and tool, with this run's paths made stable. */
function saveFixtures(p: Project): void {
  const dir = join(REPO, "test", "fixtures", "agents", "cline");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const picked = new Map<string, unknown>();
  for (const c of p.captured()) {
    const call = c.payload.tool_call ?? c.payload.tool_result;
    let name = c.event;
    if (call) {
      const tool = call.name === "editor" ? (call.input?.old_text === undefined ? "editor.create" : "editor.edit") : call.name;
      const failed = c.event === "PostToolUse" && /"success":false/.test(JSON.stringify(call.output));
      name = `${c.event}.${tool}${failed ? ".failure" : ""}`;
    }
    if (!picked.has(name)) picked.set(name, c.payload);
  }
  for (const [name, payload] of picked) {
    const text = JSON.stringify(payload, null, 2).split(p.root).join("/work/project").split(p.base).join("/tmp/e2e");
    writeFileSync(join(dir, `${name}.json`), `${text}\n`);
  }
}

/**
 * Cline CLI (the version versions.json pins) through Baton's hooks, offline against the scripted
 * model. Cline CLI resumes a task only in its interactive TUI, so its story is two headless tasks
 * rather than the shared suite's resumed turns (suite.ts):
 *
 * 1. a task that reads, writes, edits and runs shell commands: each write and command is
 *    checkpointed before it runs, every call is recorded with its result in the lane of Cline's
 *    session, and `baton rollback` steps back through them;
 * 2. a task that runs the same failing command again and again: Baton pauses the lane and
 *    Cline's PreToolUse cancel ends the task before the next one runs.
 *
 * With BATON_AGENT_FIXTURES=write the payloads go to test/fixtures/agents/cline/.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { cline as driver } from "./drivers.js";
import { type AgentRun, Project } from "./harness.js";
import { agentCli, REPO, VERSIONS } from "./install.js";
import { MockModel, repeat, type Step } from "./mock-model.js";

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
  const runs: Record<string, AgentRun> = {};
  const sessions: Record<string, string> = {};
  let checkpoints: any[] = [];

  async function task(name: string, prompt: string, steps: Step[]): Promise<AgentRun> {
    const before = p.captured().length;
    mock.play(steps, p.root);
    const r = await p.run(cli, driver.args(prompt), driver.env(url), 240_000);
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
    await task("spiral", "Show me the missing file.", [
      ...repeat(6, { op: "shell", command: FAIL_CMD }),
      { op: "text", text: "I am stuck." },
    ]);
  }, 600_000);

  afterAll(async () => {
    await mock.stop();
    if (!p) return;
    // Cline CLI leaves a hub daemon of its own running for the project (`cline
    // --cline-hub-daemon --cwd <repo>`) after a headless task: stop the ones this test started.
    for (const pid of hubDaemons(p.root)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone already
      }
    }
    if (process.env.BATON_AGENT_FIXTURES === "write") saveFixtures(p);
    if (process.env.BATON_AGENT_KEEP) writeFileSync(join(p.base, "requests.jsonl"), mock.requests.map((r) => JSON.stringify(r)).join("\n"));
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
    expect(sessions.work, "the payloads name Cline's session").toMatch(/^\d+_\w+$/);
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
/** The pids of Cline CLI's hub daemons started for `root` (Linux: /proc). */
function hubDaemons(root: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const argv = readFileSync(join("/proc", name, "cmdline"), "utf8").split("\0");
      if (argv.includes("--cline-hub-daemon") && argv.some((a) => a === root || a.startsWith(`${root}/`))) pids.push(Number(name));
    } catch {
      // exited meanwhile, or not ours to read
    }
  }
  return pids;
}

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

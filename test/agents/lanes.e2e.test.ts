/**
 * Lanes (core/lanes.ts) with the real agents: two Claude Code processes and a Codex process at
 * once in one checkout, each agent session a lane of its own in the one task session. Each
 * process has a scripted model of its own (mock-model.ts); a step held until another agent's
 * request arrived makes the processes overlap in time, as agents a user runs side by side do.
 *
 * 1. Claude Code A, Claude Code B and Codex X at once, each writing its own file; B writes
 *    shared.txt while A, which wrote it in this turn, is still mid-turn: B's first attempt is
 *    refused naming A, its retry goes through, and all three are working at the same moment.
 * 2. "undo that" in A's resumed session restores A's own file and nothing of B's or X's.
 * 3. Three identical failing shell commands in B's resumed session pause B; A, mid-turn at the
 *    same time, writes unhindered.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { claude, codex, type Driver } from "./drivers.js";
import { type AgentRun, KEEP, Project } from "./harness.js";
import { agentCli, VERSIONS } from "./install.js";
import { gate, holdUntil, type LoggedRequest, MockModel, repeat, type Step, toolResults } from "./mock-model.js";

const FILES: Record<string, string> = { "a.txt": "one\n", "README.md": "# demo\n" };
const FAIL_CMD = "cat does-not-exist.txt";
const CLAIM = "another agent working in this checkout right now wrote this file";
const PAUSED = "Baton paused session";
/** How long a held step waits for what it waits on before the script goes on anyway (and the test fails). */
const HOLD_MS = 90_000;

/** One agent session: its driver, its own model, its session id once it ran. */
interface Agent {
  name: string;
  d: Driver;
  mock: MockModel;
  id?: string;
}

describe(`lanes: ${VERSIONS.claude.package}@${VERSIONS.claude.version} twice and ${VERSIONS.codex.package}@${VERSIONS.codex.version} at once in one checkout`, () => {
  const a: Agent = { name: "a", d: claude, mock: new MockModel() };
  const b: Agent = { name: "b", d: claude, mock: new MockModel() };
  const x: Agent = { name: "x", d: codex, mock: new MockModel() };
  let p: Project;
  const cli: Partial<Record<Driver["agent"], string>> = {};
  /** Holds that gave up waiting: the agents did not overlap as scripted. */
  const missed: string[] = [];
  /** Where each turn's main requests start in its agent's log. */
  const marks: Record<string, number> = {};
  const files: Record<string, Record<string, string | undefined>> = {};
  const runs: Record<string, AgentRun> = {};
  let lanesMidTurn: any;
  let statusMidTurn: any;
  let lanesPaused: any;
  let statusPaused: any;
  let batonSession = "";

  /** Resolves when `what` happened, or after HOLD_MS (noted in `missed`), so no agent waits forever. */
  function hold(what: string, done: Promise<unknown>): Promise<void> {
    return holdUntil(missed, what, done, HOLD_MS);
  }

  async function turn(name: string, ag: Agent, prompt: string, steps: Step[], resume = false): Promise<AgentRun> {
    ag.mock.play(steps, p.root);
    marks[name] = ag.mock.requests.length;
    const r = await p.run(cli[ag.d.agent] as string, ag.d.args(prompt, resume ? ag.id : undefined), ag.d.env(ag.mock.url));
    runs[name] = r;
    mkdirSync(join(p.base, "runs"), { recursive: true });
    writeFileSync(join(p.base, "runs", `${name}.stdout`), r.stdout);
    writeFileSync(join(p.base, "runs", `${name}.stderr`), r.stderr);
    if (r.code !== 0)
      throw new Error(`${ag.d.agent} turn "${name}" exited ${r.code}\nstdout: ${r.stdout.slice(-3000)}\nstderr: ${r.stderr.slice(-3000)}`);
    ag.id ??= ag.d.sessionId(r);
    return r;
  }

  const snapshot = (...rels: string[]) => Object.fromEntries(rels.map((r) => [r, p.read(r)]));
  const lane = (ag: Agent) => `${ag.d.agent}:${ag.id}`;
  /** The main requests of one turn of one agent. */
  const mains = (ag: Agent, name: string, next?: string) =>
    ag.mock.requests.slice(marks[name], next !== undefined ? marks[next] : undefined).filter((r) => r.main);
  /** The newest tool result in a request: what the agent's last call returned. */
  const lastResult = (r: LoggedRequest | undefined) => (r ? (toolResults(r).at(-1) ?? "") : "");

  beforeAll(async () => {
    cli.claude = agentCli("claude");
    cli.codex = agentCli("codex");
    for (const ag of [a, b, x]) await ag.mock.start();
    p = new Project("claude", FILES);
    const s = p.baton(["--json", "session", "start", "--flow", "task", "--title", "Three agents, one checkout"]);
    expect(s.code, s.stderr).toBe(0);
    batonSession = s.json().sessionId;
    expect(p.baton(["event", "start"]).code).toBe(0);
    codex.configure(p, x.mock.url);
    for (const agent of ["claude", "codex"]) {
      const hooks = p.baton(["hooks", "install", agent, "--command", "baton"]);
      expect(hooks.code, hooks.stderr).toBe(0);
    }
    await codex.expectHooksTrusted?.(p, cli.codex);

    // 1. All three at once. A writes shared.txt, then waits mid-turn; B reads and writes it only
    // once A's write is done (A's next request arrived, so its after-tool hook ran); everyone's
    // last answer waits until the test has looked at the lanes with all three mid-turn.
    const release = gate();
    const work = Promise.all([
      turn("a1", a, "Draft the shared notes and update a.txt.", [
        { op: "write", path: "shared.txt", content: "A's draft\n" },
        { op: "read", path: "a.txt" },
        { op: "edit", path: "a.txt", old: "one", new: "one, edited by A" },
        { op: "text", text: "Done.", after: release.opened },
      ]),
      turn("b1", b, "Write b.txt and put your version in the shared notes.", [
        { op: "write", path: "b.txt", content: "B\n" },
        // Claude Code writes an existing file only after reading it.
        { op: "read", path: "shared.txt", after: () => hold("A wrote shared.txt before B read it", a.mock.arrival(2)) },
        { op: "write", path: "shared.txt", content: "B's version\n" },
        // The refused agent tries again, as Baton's reason tells it it may.
        { op: "write", path: "shared.txt", content: "B's version\n" },
        { op: "text", text: "Done.", after: release.opened },
      ]),
      turn("x1", x, "Write x.txt.", [
        { op: "write", path: "x.txt", content: "X\n" },
        { op: "text", text: "Done.", after: release.opened },
      ]),
    ]);
    // An agent that fails early is reported by `await work` below, after the lanes are released.
    work.catch(() => {});
    try {
      await hold("all three agents waiting on their last answer", Promise.all([a.mock.arrival(4), b.mock.arrival(5), x.mock.arrival(2)]));
      lanesMidTurn = p.baton(["--json", "lanes"]).json();
      statusMidTurn = p.baton(["--json", "status"]).json();
    } finally {
      release.open();
    }
    await work;
    files.work = snapshot("a.txt", "b.txt", "x.txt", "shared.txt", "README.md");

    // 2. "undo that" in A's session: its last step was its edit of a.txt.
    await turn("a2", a, "undo that", [{ op: "text", text: "Noted." }], true);
    files.undo = snapshot("a.txt", "b.txt", "x.txt", "shared.txt", "README.md");

    // 3. B loops on a failing command and is paused; A, mid-turn meanwhile, writes once B is
    // paused; both wait on their last answer until the test has looked at the lanes (a
    // `claude -p` process ends its session, and with it its lane, when it exits).
    const release3 = gate();
    const spiral = Promise.all([
      turn(
        "b3",
        b,
        "Show me the missing file.",
        [
          ...repeat(3, { op: "shell", command: FAIL_CMD }),
          { op: "write", path: "b2.txt", content: "B again\n" },
          { op: "text", text: "I am stuck.", after: release3.opened },
        ],
        true,
      ),
      turn(
        "a3",
        a,
        "Write a2.txt.",
        [
          { op: "write", path: "a2.txt", content: "A goes on\n", after: () => hold("B's three failures recorded", b.mock.arrival(4)) },
          { op: "text", text: "Done.", after: release3.opened },
        ],
        true,
      ),
    ]);
    spiral.catch(() => {});
    try {
      await hold("A and B waiting on their last answer", Promise.all([a.mock.arrival(2), b.mock.arrival(5)]));
      lanesPaused = p.baton(["--json", "lanes"]).json();
      statusPaused = p.baton(["--json", "status"]).json();
    } finally {
      release3.open();
    }
    await spiral;
    files.spiral = snapshot("a.txt", "a2.txt", "b.txt", "b2.txt");
  }, 300_000);

  // A failed run says what the agents' hooks saw: the hook failure log and each turn's stderr
  // (an e2e failure in CI is seen once, in its log).
  let failed = false;
  beforeEach((ctx) => {
    ctx.onTestFailed(() => {
      failed = true;
    });
  });

  afterAll(async () => {
    for (const ag of [a, b, x]) await ag.mock.stop();
    if (!p) return;
    if (failed) {
      const log = join(p.root, ".baton", "logs", "hooks.log");
      const tail = (t: string) => t.slice(-2_000);
      const lines = [`hooks.log: ${existsSync(log) ? tail(readFileSync(log, "utf8")) : "(none)"}`];
      for (const [name, r] of Object.entries(runs)) lines.push(`${name} exited ${r.code}; stderr: ${tail(r.stderr)}`);
      lines.push(`model requests: ${[a, b, x].map((ag) => `${ag.name} ${ag.mock.requests.length}`).join(", ")}`);
      console.error(`lanes e2e failed; what the run saw:\n${lines.join("\n")}`);
    }
    if (KEEP) {
      for (const ag of [a, b, x])
        writeFileSync(join(p.base, `requests.${ag.name}.jsonl`), ag.mock.requests.map((r) => JSON.stringify(r)).join("\n"));
      cpSync(p.base, join(KEEP, "lanes"), { recursive: true });
    }
    p.cleanup();
  });

  test("the three processes overlapped as scripted, each in a lane of its own of the one session", () => {
    expect(missed).toEqual([]);
    for (const ag of [a, b, x]) expect(ag.id, `${ag.name}'s JSON output names its session`).toBeTruthy();
    expect(new Set([a.id, b.id]).size, "two Claude Code sessions, not one").toBe(2);
    const sessions = p.baton(["--json", "status"]).json().sessions;
    expect(sessions.map((s: any) => s.sessionId)).toEqual([batonSession]);
    // With all three waiting on their model mid-turn, all three were working at once, each
    // claiming what it wrote in this turn: in `baton lanes` and in `baton status` alike.
    for (const [source, listed] of [
      ["baton status", statusMidTurn.sessions[0].lanes],
      ["baton lanes", lanesMidTurn.lanes],
    ]) {
      const mid = Object.fromEntries((listed ?? []).map((l: any) => [l.lane, l]));
      const claims = (ag: Agent) => [...(mid[lane(ag)]?.claims.files ?? [])].sort();
      expect(Object.keys(mid).sort(), source).toEqual([lane(a), lane(b), lane(x)].sort());
      expect(mid[lane(a)], source).toMatchObject({ agent: "Claude Code", status: "working" });
      expect(mid[lane(b)], source).toMatchObject({ agent: "Claude Code", status: "working" });
      expect(mid[lane(x)], source).toMatchObject({ agent: "Codex", status: "working" });
      expect(claims(a), source).toEqual(["a.txt", "shared.txt"]);
      expect(claims(b), source).toEqual(["b.txt", "shared.txt"]);
      expect(claims(x), source).toEqual(["x.txt"]);
    }
    expect(p.read(".baton/logs/hooks.log") ?? "", "hooks.log records Baton's own failures").toBe("");
  });

  test("each own file has its writer's content; the shared file the second writer's", () => {
    expect(files.work).toEqual({
      "a.txt": "one, edited by A\n",
      "b.txt": "B\n",
      "x.txt": "X\n",
      "shared.txt": "B's version\n",
      "README.md": "# demo\n",
    });
  });

  test("the second writer of the shared file is refused once, naming the holder; its retry goes through", () => {
    const reqs = mains(b, "b1", "b3");
    // The request after the refused write carries Baton's reason as that call's result.
    const refused = lastResult(reqs[3]);
    expect(refused).toContain(CLAIM);
    expect(refused).toContain(`Claude Code (lane ${lane(a)}`);
    expect(refused).toContain("shared.txt");
    // The retry's result is the write's own, and the turn ends: no loop of refusals.
    expect(lastResult(reqs[4])).not.toContain(CLAIM);
    // The warning let through with the retry reaches the model too (PreToolUse additionalContext).
    expect(JSON.stringify(reqs[4]?.body ?? {})).toContain("also wrote this file");
    expect(reqs.length, reqs.map((r) => r.step?.op).join(", ")).toBe(5);
    // The user saw both: the hold, then the write that went through beside A's work.
    const told = (runs.b1?.events ?? []).filter((e) => e.type === "system").map((e) => String(e.content ?? ""));
    expect(told).toContain(
      `PreToolUse:Write says: Baton held back Write on shared.txt: Claude Code (lane ${lane(a)}) is working on it right now.`,
    );
    expect(told).toContain(
      `PreToolUse:Write says: Baton: Write writes shared.txt, which Claude Code (lane ${lane(a)}) is also working on right now.`,
    );
    const notes = p
      .baton(["export", batonSession])
      .stdout.split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .filter((e) => e.type === "claim:noticed");
    expect(notes.map((e) => [e.data.lane, e.data.outcome])).toEqual([
      [lane(b), "refused"],
      [lane(b), "warned"],
    ]);
    expect(notes[0].data.claims).toEqual([{ path: "shared.txt", holder: lane(a), at: expect.any(String) }]);
    // Neither the first writer nor Codex, which wrote only its own file, was held back.
    for (const ag of [a, x]) expect(mains(ag, `${ag.name}1`).flatMap(toolResults).join("\n")).not.toContain(CLAIM);
  });

  test('"undo that" in one Claude Code session restores its own file and leaves the others\' files', () => {
    expect(files.undo).toEqual({ ...files.work, "a.txt": "one\n" });
    const answer = JSON.stringify(mains(a, "a2", "a3").map((r) => r.body));
    expect(answer).toContain("Baton has already done it");
    expect(answer).toMatch(/Restored: a\.txt\./);
  });

  test("a spiral pauses the session that looped; the other Claude Code session's write goes through", () => {
    const looped = mains(b, "b3");
    expect(looped.length, looped.map((r) => r.step?.op).join(", ")).toBe(5);
    // The write after the three failures was refused with Baton's pause, and did not happen.
    expect(lastResult(looped[4])).toContain(`${PAUSED} ${batonSession}`);
    expect(files.spiral?.["b2.txt"]).toBeUndefined();
    // A's write, made after B was paused and while B's turn was still open, went through.
    expect(files.spiral?.["a2.txt"]).toBe("A goes on\n");
    const aResults = mains(a, "a3").flatMap(toolResults).join("\n");
    expect(aResults).not.toContain(PAUSED);
    expect(aResults).not.toContain(CLAIM);
    // While both were mid-turn: B's lane paused, A's working and not paused; the session's
    // next action is B's pause, with the rollback in B's lane.
    for (const [source, listed] of [
      ["baton status", statusPaused.sessions[0].lanes],
      ["baton lanes", lanesPaused.lanes],
    ]) {
      const lanes = Object.fromEntries((listed ?? []).map((l: any) => [l.lane, l]));
      expect(lanes[lane(b)]?.spiral?.paused, `${source}: ${JSON.stringify(listed)}`).toBe(true);
      expect(lanes[lane(a)], source).toMatchObject({ status: "working", claims: { files: ["a2.txt"] } });
      expect(lanes[lane(a)]?.spiral, source).toBeUndefined();
    }
    const st = statusPaused.sessions[0];
    expect(st.spiral?.lane).toBe(lane(b));
    expect(st.nextAction.command).toContain(`--lane ${lane(b)}`);
  });
});

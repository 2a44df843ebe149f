/**
 * Lanes (core/lanes.ts) with Cline CLI: two headless Cline tasks at once in one checkout, each
 * Cline session (`sessionContext.rootSessionId`) a lane of its own in the one task session. Each
 * process has a scripted model of its own and a HOME of its own (`cline auth` keeps one provider
 * URL per HOME); a step held until the other's request arrived makes them overlap.
 *
 * A writes shared.txt and a.txt, B writes b.txt; with both waiting on their model, `baton lanes`
 * shows two Cline lanes working. Then B writes shared.txt while A, which wrote it in this turn,
 * is still mid-turn: Baton refuses it naming A, and Cline's cancel ends B's task (Cline shows the
 * model no reason, so there is no retry as with the other agents).
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { cline as driver } from "./drivers.js";
import { type AgentRun, type Capture, KEEP, killClineHubDaemons, Project } from "./harness.js";
import { agentCli, VERSIONS } from "./install.js";
import { gate, holdUntil, MockModel, type Step } from "./mock-model.js";

const pin = VERSIONS.cline;
const HOLD_MS = 90_000;

describe(`lanes: ${pin.package}@${pin.version} twice at once in one checkout`, () => {
  const models = { a: new MockModel(), b: new MockModel() };
  const homes: Record<string, string> = {};
  let p: Project;
  let cli = "";
  let batonSession = "";
  const runs: Record<string, AgentRun> = {};
  const missed: string[] = [];
  let lanesMidTurn: any;

  function hold(what: string, done: Promise<unknown>): Promise<void> {
    return holdUntil(missed, what, done, HOLD_MS);
  }

  async function task(name: "a" | "b", prompt: string, steps: Step[]): Promise<void> {
    models[name].play(steps, p.root);
    runs[name] = await p.run(cli, driver.args(prompt), { ...driver.env(models[name].url), HOME: homes[name] as string }, 240_000);
  }

  /** The Cline session of one task: the one whose first write is its own file (a.txt, b.txt). */
  function sessionOf(name: "a" | "b"): string | undefined {
    const c = p
      .captured()
      .find((x: Capture) => x.event === "PreToolUse" && String(x.payload?.tool_call?.input?.path ?? "").endsWith(`/${name}.txt`));
    return c?.payload.sessionContext?.rootSessionId;
  }

  beforeAll(async () => {
    cli = agentCli("cline");
    for (const m of Object.values(models)) await m.start();
    p = new Project("cline", { "README.md": "# demo\n" });
    const s = p.baton(["--json", "session", "start", "--flow", "task", "--title", "Two Cline tasks, one checkout"]);
    expect(s.code, s.stderr).toBe(0);
    batonSession = s.json().sessionId;
    expect(p.baton(["event", "start"]).code).toBe(0);
    for (const name of ["a", "b"] as const) {
      homes[name] = join(p.base, `home-${name}`);
      mkdirSync(homes[name], { recursive: true });
      const home = p.env.HOME;
      p.env.HOME = homes[name];
      driver.configure(p, models[name].url);
      p.env.HOME = home as string;
    }
    const hooks = p.baton(["hooks", "install", "cline", "--command", "baton"]);
    expect(hooks.code, hooks.stderr).toBe(0);

    const release = gate();
    const looked = gate();
    const work = Promise.all([
      task("a", "Write the shared notes and a.txt.", [
        { op: "write", path: "shared.txt", content: "A's notes\n" },
        { op: "write", path: "a.txt", content: "A\n" },
        { op: "text", text: "Done.", after: release.opened },
      ]),
      task("b", "Write b.txt, then your version of the shared notes.", [
        { op: "write", path: "b.txt", content: "B\n", after: () => hold("A wrote shared.txt before B began", models.a.arrival(2)) },
        { op: "write", path: "shared.txt", content: "B's version\n", after: looked.opened },
        { op: "text", text: "Done." },
      ]),
    ]);
    work.catch(() => {});
    try {
      // Both mid-turn: A waits on its last answer, B on the answer that writes shared.txt.
      await hold("both waiting on their model", Promise.all([models.a.arrival(3), models.b.arrival(2)]));
      lanesMidTurn = p.baton(["--json", "lanes"]).json();
      looked.open();
      // B's write of shared.txt is refused and its task ends, while A still waits.
      for (let i = 0; i < 300 && runs.b === undefined; i++) await new Promise((ok) => setTimeout(ok, 200));
    } finally {
      looked.open();
      release.open();
    }
    await work;
    await new Promise((ok) => setTimeout(ok, 1500));
  }, 600_000);

  afterAll(async () => {
    for (const m of Object.values(models)) await m.stop();
    if (!p) return;
    killClineHubDaemons(p.root);
    if (!KEEP) p.cleanup();
  });

  test("the two tasks overlapped, each Cline session a lane of its own of the one Baton session", () => {
    expect(missed).toEqual([]);
    expect(runs.a?.code, runs.a?.stderr).toBe(0);
    const [a, b] = [sessionOf("a"), sessionOf("b")];
    expect(a).toMatch(/^\d+_[\w-]+$/);
    expect(b).toMatch(/^\d+_[\w-]+$/);
    expect(a).not.toBe(b);
    const sessions = p.baton(["--json", "status"]).json().sessions;
    expect(sessions.map((s: any) => s.sessionId)).toEqual([batonSession]);
    const mid = Object.fromEntries((lanesMidTurn.lanes ?? []).map((l: any) => [l.lane, l]));
    expect(mid[`cline:${a}`], JSON.stringify(lanesMidTurn)).toMatchObject({ agent: "Cline CLI", status: "working" });
    expect([...(mid[`cline:${a}`]?.claims.files ?? [])].sort()).toEqual(["a.txt", "shared.txt"]);
    expect(mid[`cline:${b}`], JSON.stringify(lanesMidTurn)).toMatchObject({ agent: "Cline CLI", status: "working" });
    expect([...(mid[`cline:${b}`]?.claims.files ?? [])]).toEqual(["b.txt"]);
    expect(p.read(".baton/logs/hooks.log") ?? "", "hooks.log records Baton's own failures").toBe("");
  });

  test("each write is checkpointed in its own task's lane", () => {
    const [a, b] = [sessionOf("a"), sessionOf("b")];
    const cps: any[] = p.baton(["--json", "checkpoints"]).json().checkpoints;
    const files = (lane: string) => cps.filter((c) => c.lane === lane).map((c) => c.toolName);
    expect(files(`cline:${a}`)).toEqual(["editor", "editor"]);
    expect(files(`cline:${b}`)).toEqual(["editor"]);
  });

  test("B's write of the file A holds is refused naming A; Cline's cancel ends B's task and A's notes stay", () => {
    const a = sessionOf("a");
    expect(p.read("b.txt")).toBe("B\n");
    expect(p.read("a.txt")).toBe("A\n");
    expect(p.read("shared.txt")).toBe("A's notes\n");
    const result = runs.b?.events.find((e) => e.type === "run_result");
    expect(result?.finishReason, runs.b?.stdout.slice(-2000)).toBe("aborted");
    // Cline shows the reason to neither model nor user: Baton's journal keeps it.
    const noticed = p
      .baton(["export", batonSession])
      .stdout.split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .filter((e) => e.type === "claim:noticed");
    expect(noticed.map((e) => e.data)).toEqual([
      {
        lane: `cline:${sessionOf("b")}`,
        outcome: "refused",
        claims: [expect.objectContaining({ path: "shared.txt", holder: `cline:${a}` })],
      },
    ]);
  });
});

/**
 * Lanes across workspaces on one PostgreSQL project, with the real agents: the story of
 * test/lanes-postgres.int.test.ts played by the CLIs themselves. Two checkouts of one project
 * (two workspace directories, as two hosts' checkouts are), each `baton init --store <url>
 * --project <name>` against one throwaway cluster (test/pg-cluster.ts):
 *
 * 1. In A the user starts a task and records a decision; Claude Code runs one turn that writes
 *    a file and exits (its SessionEnd ends its lane).
 * 2. In B Codex runs one turn: it is handed the task (Baton's session-start context, decision
 *    included, is in its first model request), joins the same Baton session in a lane of its
 *    own, and writes a file; while it waits on its last answer, A sees its lane working with
 *    the file claimed; its lane ends with its process. The user then records the task complete
 *    from B, and A sees it.
 *
 * Baton has no host-name override (the host is the machine's), so both lanes carry this
 * machine's host name. Skipped without PostgreSQL server binaries unless
 * BATON_TEST_POSTGRES=require (CI sets it).
 */
import { cpSync, mkdirSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { type PgCluster, pgAvailable, startCluster } from "../pg-cluster.js";
import { claude, codex, type Driver } from "./drivers.js";
import { type AgentRun, KEEP, Project } from "./harness.js";
import { agentCli, VERSIONS } from "./install.js";
import { gate, MockModel, type Step } from "./mock-model.js";

const FILES: Record<string, string> = { "README.md": "# login\n" };
const PROJECT = `lanes_e2e_${process.pid}`;
const DECISION = "Use PKCE";
const REASON = "the CLI is a public client";

describe.skipIf(!pgAvailable())(
  `lanes across workspaces on PostgreSQL: ${VERSIONS.claude.package}@${VERSIONS.claude.version} hands a task to ${VERSIONS.codex.package}@${VERSIONS.codex.version}`,
  () => {
    let cluster: PgCluster | undefined;
    let failed = false;
    const mockA = new MockModel();
    const mockB = new MockModel();
    let A: Project;
    let B: Project;
    let sid = "";
    let claudeId: string | undefined;
    let codexId: string | undefined;
    const runs: Record<string, AgentRun> = {};
    /** Holds that gave up waiting: Codex was not mid-turn when the test looked. */
    const missed: string[] = [];
    /** What the workspaces said at each point of the story. */
    const seen: Record<string, any> = {};

    async function turn(name: string, p: Project, d: Driver, mock: MockModel, prompt: string, steps: Step[]): Promise<AgentRun> {
      mock.play(steps, p.root);
      const r = await p.run(agentCli(d.agent), d.args(prompt), d.env(mock.url));
      runs[name] = r;
      mkdirSync(join(p.base, "runs"), { recursive: true });
      writeFileSync(join(p.base, "runs", `${name}.stdout`), r.stdout);
      writeFileSync(join(p.base, "runs", `${name}.stderr`), r.stderr);
      if (r.code !== 0)
        throw new Error(`${d.agent} turn "${name}" exited ${r.code}\nstdout: ${r.stdout.slice(-3000)}\nstderr: ${r.stderr.slice(-3000)}`);
      return r;
    }

    function ok(p: Project, args: string[]) {
      const r = p.baton(args);
      expect(r.code, `baton ${args.join(" ")}: ${r.stderr}`).toBe(0);
      return r;
    }

    beforeAll(async () => {
      agentCli("claude");
      agentCli("codex");
      cluster = await startCluster();
      await mockA.start();
      await mockB.start();
      A = new Project("claude", FILES);
      B = new Project("codex", FILES);
      for (const p of [A, B]) ok(p, ["init", "--store", cluster.url, "--project", PROJECT]);
      ok(A, ["hooks", "install", "claude", "--command", "baton"]);
      codex.configure(B, mockB.url);
      ok(B, ["hooks", "install", "codex", "--command", "baton"]);
      await codex.expectHooksTrusted?.(B, agentCli("codex"));

      // 1. On A: the task, its decision, and Claude Code's turn, which ends with its process.
      sid = ok(A, ["--json", "session", "start", "--flow", "task", "--title", "Login with PKCE"]).json().sessionId;
      ok(A, ["event", "start"]);
      ok(A, ["decision", "add", DECISION, "--reason", REASON]);
      const a = await turn("a1", A, claude, mockA, "Write the login module.", [
        { op: "write", path: "src/login.ts", content: "export const login = 1;\n" },
        { op: "text", text: "Done." },
      ]);
      claudeId = claude.sessionId(a);
      seen.lanesAfterA = ok(B, ["--json", "lanes", "--all", "--session", sid]).json();

      // 2. On B: Codex's turn, handed the task, looked at from A while it waits on its last
      // answer; then the user completes the task from B.
      const release = gate();
      const work = turn("b1", B, codex, mockB, "Finish the login module.", [
        { op: "write", path: "src/login.ts", content: "export const login = 2;\n" },
        { op: "text", text: "Finished.", after: release.opened },
      ]);
      work.catch(() => {});
      try {
        let timer: NodeJS.Timeout | undefined;
        const mid = await Promise.race([
          mockB.arrival(2).then(() => true),
          new Promise<false>((done) => {
            timer = setTimeout(() => done(false), 90_000);
          }),
        ]);
        clearTimeout(timer);
        if (!mid) missed.push("Codex's second main request");
        seen.lanesMidTurnA = ok(A, ["--json", "lanes", "--session", sid]).json();
      } finally {
        release.open();
      }
      codexId = codex.sessionId(await work);
      seen.statusB = ok(B, ["--json", "status"]).json();
      seen.snapshotB = ok(B, ["--json", "session", "show", sid]).json().snapshot;
      seen.lanesB = ok(B, ["--json", "lanes", "--all", "--session", sid]).json();
      ok(B, ["event", sid, "complete"]);
      seen.statusA = ok(A, ["--json", "status", "--all", "--session", sid]).json();
    }, 300_000);

    afterEach((ctx) => {
      if (ctx.task.result?.state === "fail") failed = true;
    });

    afterAll(async () => {
      for (const m of [mockA, mockB]) await m.stop();
      for (const [name, p] of [
        ["a", A],
        ["b", B],
      ] as const) {
        if (!p) continue;
        if (KEEP) cpSync(p.base, join(KEEP, `lanes-postgres-${name}`), { recursive: true });
        p.cleanup();
      }
      cluster?.stop(failed);
    });

    test("both workspaces use the one PostgreSQL project", () => {
      for (const p of [A, B]) {
        const store = ok(p, ["--json", "status"]).json().store;
        expect(store).toMatchObject({ kind: "postgres", project: PROJECT });
      }
    });

    test("Claude Code's lane on A ends with its process, on A's host", () => {
      expect(claudeId, "Claude Code's JSON output names its session").toBeTruthy();
      expect(A.read("src/login.ts")).toBe("export const login = 1;\n");
      const all = [...(seen.lanesAfterA.lanes ?? []), ...(seen.lanesAfterA.past ?? [])];
      const lanes = Object.fromEntries(all.map((l: any) => [l.lane, l]));
      expect(lanes[`claude:${claudeId}`], JSON.stringify(seen.lanesAfterA)).toMatchObject({
        agent: "Claude Code",
        status: "ended",
        host: hostname(),
      });
    });

    test("Codex on B is handed the task: the session-start context with the decision is in its first request", () => {
      const first = JSON.stringify(mockB.mains()[0]?.body ?? {});
      expect(first).toContain("Baton: where this work stands");
      expect(first).toContain(DECISION);
      expect(first).toContain(REASON);
    });

    test("B joins the same Baton session in a lane of its own, which A sees working mid-turn", () => {
      expect(missed).toEqual([]);
      expect(codexId, "Codex's JSON output names its thread").toBeTruthy();
      expect(seen.statusB.sessions.map((s: any) => s.sessionId)).toEqual([sid]);
      // Seen from A while Codex on B waited on its last answer: working, its write claimed.
      const mid = Object.fromEntries((seen.lanesMidTurnA.lanes ?? []).map((l: any) => [l.lane, l]));
      expect(Object.keys(mid), JSON.stringify(seen.lanesMidTurnA)).toEqual([`codex:${codexId}`]);
      expect(mid[`codex:${codexId}`]).toMatchObject({
        agent: "Codex",
        status: "working",
        host: hostname(),
        claims: { files: ["src/login.ts"] },
      });
      // After its process exited: both lanes in the one session, both ended.
      const lanes = seen.snapshotB.facets.lanes ?? {};
      expect(Object.keys(lanes).sort()).toEqual([`claude:${claudeId}`, `codex:${codexId}`].sort());
      expect(lanes[`claude:${claudeId}`]).toMatchObject({ status: "ended", host: hostname() });
      expect(lanes[`codex:${codexId}`]).toMatchObject({ status: "ended", host: hostname() });
      expect(seen.lanesB.lanes).toEqual([]);
      expect(seen.lanesB.past.map((l: any) => [l.lane, l.agent]).sort()).toEqual(
        [
          [`claude:${claudeId}`, "Claude Code"],
          [`codex:${codexId}`, "Codex"],
        ].sort(),
      );
      expect(B.read("src/login.ts")).toBe("export const login = 2;\n");
    });

    test("the task completed from B is completed on A", () => {
      expect(seen.statusA.sessions.map((s: any) => [s.sessionId, s.status])).toEqual([[sid, "completed"]]);
      for (const p of [A, B]) expect(p.read(".baton/logs/hooks.log") ?? "", "hooks.log records Baton's own failures").toBe("");
    });
  },
);

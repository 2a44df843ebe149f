/**
 * Agent runs: heartbeats outside the journal; a run whose pid died (real process) or whose
 * heartbeat went stale (fake clock) is marked crashed by the explicit detection step, its
 * leased work is given back to the queue for the next agent, and STATE.md's history shows it.
 */
import { afterAll, describe, expect, it } from "vitest";
import { isBatonError, openBaton } from "../src/index.js";
import type { ProcessFacts } from "../src/platform/process-facts.js";
import { cleanupDirs, cli, spawnTracked, tempBaton, tempDir } from "./helpers.js";

afterAll(() => cleanupDirs());

/** A live child process to stand in for an agent; resolves with it once it runs. */
function agentProcess() {
  const child = spawnTracked(process.execPath, ["-e", "setInterval(() => {}, 1000)"]);
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const kill = async () => {
    child.kill("SIGKILL");
    await exited;
  };
  return { pid: child.pid as number, kill };
}

describe("crashed run detection", () => {
  it("a run whose process died is marked crashed; its lease is released and the work goes to the next agent", async () => {
    const { baton: b } = await tempBaton();
    await b.sessions.start({ flow: "live-variant", id: "lv" });
    await b.events.append("lv", { type: "generate", actor: "browser" });
    const agent = agentProcess();
    const { runId } = await b.runs.start("lv", { agent: "claude-code", pid: agent.pid });
    const lease = await b.work.lease(runId, { sessionId: "lv" });
    expect(lease?.item.kind).toBe("generate");
    expect(await b.runs.detectCrashed()).toEqual([]); // alive: nothing to do

    await agent.kill();
    expect(await b.runs.detectCrashed({ dryRun: true })).toMatchObject([{ runId, proof: "dead_pid", marked: false }]);
    expect((await b.work.pending("lv"))[0]?.state).toBe("leased"); // a dry run changes nothing

    const [crash] = await b.runs.detectCrashed({ sessionId: "lv" });
    expect(crash).toMatchObject({ sessionId: "lv", runId, agent: "claude-code", proof: "dead_pid", marked: true });
    expect(crash?.releasedWork).toEqual([{ itemId: lease?.item.itemId, state: "ready" }]);
    const run = (await b.sessions.snapshot("lv")).facets.runs.find((r) => r.runId === runId);
    expect(run).toMatchObject({ status: "crashed", pid: agent.pid });
    expect(run?.handoffReason).toMatch(/^dead_pid: /);
    expect(await b.runs.detectCrashed()).toEqual([]); // once

    // The crashed run's late ack is refused; the next agent gets the work.
    expect(await b.work.ack(lease?.leaseId as string).catch((e) => isBatonError(e, "lease_lost"))).toBe(true);
    const next = await b.work.lease("agent-2", { sessionId: "lv" });
    expect(next).toMatchObject({ attempt: 2, item: { itemId: lease?.item.itemId } });
    expect(await b.sessions.stateMarkdown("lv")).toMatch(new RegExp(`\\| ${runId} \\| claude-code \\| .* \\| crashed \\| dead_pid: `));
    const hb = await b.runs.heartbeat("lv", runId).catch((e) => e);
    expect(isBatonError(hb, "run_crashed")).toBe(true);
    await b.close();
  });

  it("a run whose heartbeat went stale is crashed (fake clock); a heartbeating one is not", async () => {
    let t = Date.parse("2026-04-01T08:00:00Z");
    const facts: ProcessFacts = { host: () => "h", alive: () => true, startTime: () => "42" };
    const b = await openBaton({ root: tempDir(), now: () => new Date(t), processFacts: facts });
    await b.sessions.start({ flow: "live-variant", id: "lv" });
    await b.events.append("lv", { type: "generate", actor: "browser" });
    await b.events.append("lv", { type: "exit", actor: "browser" });
    await b.events.append("lv", { type: "steer", actor: "browser" });
    const { runId } = await b.runs.start("lv", { agent: "codex", pid: 100, ttlMs: 60_000 });
    const mine = await b.work.lease(runId, { sessionId: "lv", leaseMs: 3_600_000 });
    // `baton poll`'s default owner names the host: the run's own agent on its own host.
    const polled = await b.work.lease("cli:100@name:h", { sessionId: "lv", leaseMs: 3_600_000 });
    const other = await b.work.lease("cli:100", { sessionId: "lv", leaseMs: 3_600_000 });
    for (let i = 0; i < 10; i++) {
      t += 30_000;
      await b.runs.heartbeat("lv", runId);
    }
    expect(await b.runs.detectCrashed()).toEqual([]); // 5 minutes, heartbeating: alive
    t += 60_000;
    const [crash] = await b.runs.detectCrashed();
    expect(crash).toMatchObject({ runId, proof: "expired" });
    expect(crash?.releasedWork.map((w) => w.itemId).sort()).toEqual([mine?.item.itemId, polled?.item.itemId].sort());
    // Its process is alive, so work leased under a host-less `cli:<pid>` may be another host's
    // agent's: left alone. Under `cli:<pid>@<its host>` it is this run's agent's: given back.
    const pending = await b.work.pending("lv");
    expect(pending.find((w) => w.itemId === other?.item.itemId)?.state).toBe("leased");
    expect(pending.find((w) => w.itemId === mine?.item.itemId)?.state).toBe("ready");
    expect(pending.find((w) => w.itemId === polled?.item.itemId)?.state).toBe("ready");
    // An ended run is never crashed.
    const second = await b.runs.start("lv", { agent: "codex", pid: 100, ttlMs: 60_000 });
    await b.runs.end("lv", second.runId, { reason: "context full" });
    t += 3_600_000;
    expect(await b.runs.detectCrashed()).toEqual([]);
    await b.close();
  });

  it("through the CLI: status marks the run crashed and shows the work ready again", async () => {
    const root = tempDir();
    const o = ["--root", root, "--json"];
    cli(["init", ...o]);
    cli(["session", "start", "--flow", "live-variant", "--id", "lv", ...o]);
    cli(["event", "generate", "--actor", "browser", ...o]);
    const agent = agentProcess();
    expect(cli(["run", "start", "--agent", "claude-code", "--run-id", "r1", "--pid", String(agent.pid), ...o]).json()).toMatchObject({
      runId: "r1",
    });
    expect(cli(["run", "heartbeat", "r1", "--ttl", "600000", ...o]).json()).toMatchObject({ runId: "r1" });
    const polled = cli(["poll", "--session", "lv", "--owner", "r1", "--timeout", "0", ...o]).json();
    expect(polled.lease.item.kind).toBe("generate");
    const quiet = cli(["status", ...o]).json();
    expect(quiet.crashedRuns).toBeUndefined();
    expect(quiet.sessions[0].pendingWork[0].state).toBe("leased");

    await agent.kill();
    const status = cli(["status", ...o]).json();
    expect(status.crashedRuns).toMatchObject([{ runId: "r1", proof: "dead_pid", marked: true, releasedWork: [{ state: "ready" }] }]);
    expect(status.sessions[0].pendingWork[0]).toMatchObject({ state: "ready", attempts: 1 });
    const hb = cli(["run", "heartbeat", "r1", ...o]);
    expect(hb.code).toBe(3);
    expect(hb.json().error.code).toBe("run_crashed");
    expect(cli(["resume", "lv", ...o]).json().facets.runs[0]).toMatchObject({ runId: "r1", status: "crashed" });
    expect(cli(["state", "lv", "--root", root]).stdout).toMatch(/\| r1 \| claude-code \| .* \| crashed \| dead_pid: /);
  });
});

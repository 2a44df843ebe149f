/**
 * Status judges a lock of the session's runs as a takeover would (core/locks.ts staleDecision),
 * with the process facts the workspace was opened with.
 */
import { afterAll, expect, it } from "vitest";
import { openBaton } from "../src/index.js";
import type { ProcessFacts } from "../src/services/process-facts.js";
import { cleanupDirs, tempDir } from "./helpers.js";

afterAll(() => cleanupDirs());

it("a holder whose pid this host reports dead is a stale lock, before its expiry", async () => {
  const alive = new Set<number>([process.pid, 4242]);
  const facts: ProcessFacts = { host: () => "h1", alive: (pid) => alive.has(pid), startTime: () => undefined };
  const baton = await openBaton({ root: tempDir("baton-lockfacts-"), processFacts: facts });
  try {
    await baton.sessions.start({ flow: "task", id: "s1", title: "t" });
    await baton.events.append("s1", { type: "start" });
    const run = await baton.runs.start("s1", { agent: "claude", pid: process.pid });
    await baton.locks.acquire("deploy", { pid: 4242, runId: run.runId, ttlMs: 600_000 });
    const held = (await baton.sessions.status({ sessionId: "s1" })).sessions[0];
    expect(held?.suggestions.map((s) => s.action)).toContain("wait_for_lock");
    alive.delete(4242);
    const stale = (await baton.sessions.status({ sessionId: "s1" })).sessions[0];
    expect(stale?.nextAction.reason).toContain("lock deploy held by run");
    expect(stale?.nextAction.reason).toContain("is stale (dead_pid)");
    expect(stale?.suggestions.map((s) => s.action)).toContain("reclaim_stale_lock");
  } finally {
    await baton.close();
  }
});

import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { progressBar } from "../src/core/session/state-md.js";
import { cleanupDirs, tempBaton } from "./helpers.js";

afterAll(() => cleanupDirs());

describe("STATE.md", () => {
  it("draws a progress bar", () => {
    expect(progressBar(3, 4)).toBe("[███████████████░░░░░] 3/4 (75%)");
    expect(progressBar(0, 0)).toContain("no progress recorded");
  });

  it("renders position, progress, decisions, blockers, runs, next action and resume context", async () => {
    const { baton, root } = await tempBaton();
    try {
      const s = await baton.sessions.start({ flow: "task", id: "auth", title: "Fix login" });
      await baton.events.append(s.sessionId, { type: "start" });
      await baton.facets.setPosition("auth", { phase: "2", plan: "oauth", task: "callback route" });
      await baton.facets.setProgress("auth", { total: 8, completed: 2 });
      await baton.facets.addDecision("auth", {
        decision: "Use PKCE",
        reason: "public client",
        alternatives: ["implicit flow"],
        reversible: false,
      });
      await baton.facets.addBlocker("auth", { id: "b1", text: "No staging credentials", affects: "e2e tests" });
      await baton.facets.addBlocker("auth", { id: "b2", text: "Flaky CI" });
      await baton.facets.bypassBlocker("auth", "b2", "retry once");
      const run = await baton.runs.start("auth", { agent: "claude-code", runId: "r1" });
      await baton.runs.end("auth", run.runId, { reason: "context full", completedWork: "callback handler" });
      await baton.facets.recordResumeContext("auth", {
        openQuestions: ["Refresh tokens?"],
        keyImplementations: ["src/auth/callback.ts handles state"],
      });
      const md = await baton.sessions.stateMarkdown("auth");
      expect(md).toContain("# Fix login");
      expect(md).toContain("phase **in_progress**");
      // The active blocker shapes the next action; the bypassed one and the question are named.
      expect(md).toContain('**resolve_blocker**: Blocker b1 "No staging credentials" is active (affects e2e tests)');
      expect(md).toContain('blocker b2 "Flaky CI" is bypassed: use its workaround "retry once"');
      expect(md).toContain('1 open question(s) remain: "Refresh tokens?"');
      expect(md).toContain("- **plan**: oauth");
      expect(md).toContain("2/8 (25%)");
      expect(md).toMatch(/\| Use PKCE \| public client \| implicit flow \| no \|/);
      expect(md).toMatch(/### Active\n\n- `b1` No staging credentials \(affects e2e tests\)/);
      expect(md).toMatch(/### Bypassed\n\n- `b2` Flaky CI \(workaround: retry once\)/);
      expect(md).toMatch(/\| r1 \| claude-code \| .* \| ended \| context full · callback handler \|/);
      expect(md).toContain("- Refresh tokens?");
      const file = await baton.sessions.writeStateMarkdown("auth");
      expect(file).toBe(`${root}/.baton/sessions/auth/STATE.md`);
      expect(readFileSync(file, "utf8")).toContain("# Fix login");
    } finally {
      await baton.close();
    }
  });
});

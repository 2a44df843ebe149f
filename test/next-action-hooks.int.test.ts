/**
 * The agents see the next action `baton resume --json` gives: the session-start context of
 * each agent (Claude Code, Codex, Gemini CLI; startup and resume) carries the same action,
 * reason and command, competing facts included.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupDirs, cli, initWorkspace, REPO } from "./helpers.js";

const FIXTURES = join(REPO, "test", "fixtures", "hooks");

afterAll(() => cleanupDirs());

function sessionStart(agent: string, source: "startup" | "resume", root: string): string {
  let input = readFileSync(join(FIXTURES, agent, `session-start-${source}.json`), "utf8");
  for (const [k, v] of Object.entries({ cwd: root, session: "agent-session-1", call: "call-1", time: new Date().toISOString() }))
    input = input.split(`{{${k}}}`).join(JSON.stringify(v).slice(1, -1));
  const r = cli(["hook", agent, JSON.parse(input).hook_event_name as string], { cwd: root, input });
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout).hookSpecificOutput.additionalContext as string;
}

function baton(root: string, ...args: string[]): any {
  const r = cli([...args, "--json", "--root", root]);
  expect(r.code, r.stdout + r.stderr).toBe(0);
  return r.json();
}

/** The next-action section as core/hooks/context.ts renders it (whitespace collapsed). */
function rendered(a: { action: string; reason: string; command: string }): string {
  return `## Next action\n${a.action}: ${a.reason.replace(/\s+/g, " ").trim()}\nCommand: \`${a.command}\``;
}

describe.each(["claude", "codex", "gemini"])("%s session start shows resume's next action", (agent) => {
  it("same action, reason and command, with competing facts named", () => {
    const root = initWorkspace("baton-next-hooks-", { "src/app.ts": "app\n" });
    sessionStart(agent, "startup", root);
    const sid = baton(root, "status").sessions[0].sessionId as string;
    baton(root, "blocker", "add", "No staging credentials", "--id", "b1", "--affects", "deploy", "--session", sid);
    // Long enough that a context which cut the reason short would lose the competing facts.
    const questions = [
      "Which region hosts staging?",
      ...[1, 2].map((n) => `Question ${n}: ${"does the rollout need a feature flag, ".repeat(3)}`),
    ];
    baton(root, "files", "add", "src/app.ts", ...questions.flatMap((q) => ["--question", q]), "--session", sid);
    writeFileSync(join(root, "src/app.ts"), "changed since\n");

    for (const source of ["startup", "resume"] as const) {
      const ctx = sessionStart(agent, source, root);
      const want = baton(root, "resume", sid).nextAction;
      expect(want.action).toBe("review_changed_files");
      expect(want.reason).toContain('blocker b1 "No staging credentials" is active');
      expect(want.reason).toContain("Which region hosts staging?");
      expect(want.reason.length).toBeGreaterThan(600);
      expect(ctx, `${agent} ${source}`).toContain(rendered(want));
      expect(baton(root, "status", "--session", sid).sessions[0].nextAction).toEqual(want);
    }
  });
});

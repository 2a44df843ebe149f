// Fail any test that leaves a child process running (crash and concurrency tests spawn them).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { liveChildren } from "./helpers.js";
import { startWatchdog } from "./watchdog.js";

// A test stuck in a synchronous wait is reported and failed, not left to hold the run until CI
// cuts it (test/watchdog.ts). Longer than any one wait a test may make: an agent CLI's install.
const watchdog = startWatchdog(Number(process.env.BATON_TEST_WATCHDOG_MS) || 8 * 60_000);
beforeEach((ctx) => watchdog.running(`${ctx.task.file?.name ?? "?"} > ${ctx.task.name}`));

// The user's own Baton directory (trust records, platform/config-trust.ts) is never the real
// ~/.config: a fresh one per worker, which the CLI and hook processes the tests start inherit.
if (!process.env.BATON_CONFIG_HOME) {
  const home = mkdtempSync(join(tmpdir(), "baton-config-home-"));
  process.env.BATON_CONFIG_HOME = home;
  process.once("exit", () => rmSync(home, { recursive: true, force: true }));
}

// The suite plays a person at a terminal: a run from inside an agent's shell (which names its
// agent session) would scope every `baton rollback` to that agent's lane (core/lanes.ts).
delete process.env.CLAUDE_CODE_SESSION_ID;
delete process.env.CODEX_THREAD_ID;
delete process.env.QWEN_CODE_SESSION_ID;
delete process.env.COPILOT_AGENT_SESSION_ID;
delete process.env.BATON_OPENCODE_SESSION_ID;
// Human output is compared as text: no colour forced on (or off) by the caller's environment.
delete process.env.FORCE_COLOR;
delete process.env.NO_COLOR;

afterEach(() => {
  const leaked = liveChildren();
  for (const c of leaked) c.kill("SIGKILL");
  if (leaked.length > 0) throw new Error(`test leaked ${leaked.length} child process(es): ${leaked.map((c) => c.pid).join(", ")}`);
});

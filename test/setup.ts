// Fail any test that leaves a child process running (crash and concurrency tests spawn them).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
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

// What `baton hooks install claude` writes depends on the `claude` on PATH (its version picks the
// entries and their form, src/hooks/claude-setup.ts): the developer's own Claude Code must not
// decide what the tests see. A stand-in that is "not installed" comes first on PATH; a test that
// wants a Claude Code puts its own `claude` before it (test/agents/harness.ts puts the stand-ins
// after its own bin).
if (!process.env.TEST_AGENT_STANDINS) {
  const standins = mkdtempSync(join(tmpdir(), "baton-test-standins-"));
  writeFileSync(join(standins, "claude"), '#!/bin/sh\necho "claude: not installed (the test suite\'s stand-in)" >&2\nexit 127\n', {
    mode: 0o755,
  });
  process.env.TEST_AGENT_STANDINS = standins;
  process.env.PATH = `${standins}${delimiter}${process.env.PATH ?? ""}`;
  process.once("exit", () => rmSync(standins, { recursive: true, force: true }));
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

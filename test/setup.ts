// Fail any test that leaves a child process running (crash and concurrency tests spawn them).
import { afterEach } from "vitest";
import { liveChildren } from "./helpers.js";

// The suite plays a person at a terminal: a run from inside an agent's shell (which names its
// agent session) would scope every `baton rollback` to that agent's lane (core/lanes.ts).
delete process.env.CLAUDE_CODE_SESSION_ID;
delete process.env.CODEX_THREAD_ID;

afterEach(() => {
  const leaked = liveChildren();
  for (const c of leaked) c.kill("SIGKILL");
  if (leaked.length > 0) throw new Error(`test leaked ${leaked.length} child process(es): ${leaked.map((c) => c.pid).join(", ")}`);
});

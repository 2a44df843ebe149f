import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { expect, it } from "vitest";
import { REPO } from "./helpers.js";

// A synchronous wait is out of Vitest's reach; the watchdog (test/watchdog.ts) ends it and says
// where, so a stuck test fails the run instead of holding it until CI is cut.
it("reports and ends a test stuck in a synchronous wait, with or without a child to kill", () => {
  const r = spawnSync(
    process.execPath,
    [join(REPO, "node_modules", "vitest", "vitest.mjs"), "run", "--config", join(REPO, "test", "fixtures", "watchdog", "vitest.config.ts")],
    { cwd: REPO, encoding: "utf8", timeout: 50_000, env: { ...process.env, BATON_TEST_WATCHDOG_MS: "2000", CI: "1" } },
  );
  const out = r.stdout + r.stderr;
  expect(r.error, out).toBeUndefined();
  expect(r.status, out).not.toBe(0);
  expect(out).toMatch(
    /\[test watchdog\] pid \d+: the event loop has not turned for \d+ s, in hang\.fixture\.ts > waits on a child that never exits/,
  );
  expect(out).toMatch(/\d+ \[[^\]]*\] sleep 300/);
  expect(out).toMatch(/in hang\.fixture\.ts > waits on nothing at all\n {2}\(no child processes\)/);
  expect(out).toMatch(/still stopped, in hang\.fixture\.ts > waits on nothing at all; ending the worker/);
}, 60_000);

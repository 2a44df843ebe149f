/**
 * Crashed runs are found without anyone asking: a running `baton serve` marks a run whose
 * process died crashed and gives its leased work back (platform/run-sweeper.ts), so another
 * agent waiting for work gets it within a sweep, not when the lease expires or someone runs
 * `baton status`. Real processes: the agent is a child killed with SIGKILL.
 */
import { spawnSync } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { RUN_SWEEP_MS } from "../src/platform/run-sweeper.js";
import { CLI, cleanupDirs, cli, spawnTracked, tempDir } from "./helpers.js";
import { serve } from "./server-helpers.js";

afterAll(() => cleanupDirs());

describe("a running server sweeps crashed runs", () => {
  it("gives a dead agent's leased work to the next poller within a sweep", { timeout: 60_000 }, async () => {
    const root = tempDir();
    expect(cli(["init", "--root", root]).code).toBe(0);
    expect(cli(["session", "start", "-f", "live-variant", "--id", "s", "--root", root]).code).toBe(0);
    expect(cli(["event", "s", "generate", "--actor", "browser", "--root", root]).code).toBe(0);
    const agent = spawnTracked("sleep", ["600"]);
    const run = cli(["run", "start", "--session", "s", "--agent", "claude", "--pid", String(agent.pid), "--root", root, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const runId = run.json().runId as string;
    // The agent leases the work for ten minutes, as its run.
    const lease = cli(["poll", "--session", "s", "--owner", runId, "--lease-ms", "600000", "--timeout", "0", "--root", root, "--json"]);
    expect(lease.json().lease?.item?.kind, lease.stdout).toBe("generate");

    const server = await serve(root);
    try {
      agent.kill("SIGKILL");
      const died = Date.now();
      // Another agent waits for work through the server; nobody runs status.
      const next = spawnSync(
        process.execPath,
        [CLI, "poll", "--session", "s", "--owner", "next-agent", "--timeout", String(RUN_SWEEP_MS * 3), "--root", root, "--json"],
        { encoding: "utf8", timeout: RUN_SWEEP_MS * 4 },
      );
      const waited = Date.now() - died;
      const got = JSON.parse(next.stdout) as { lease: { item: { kind: string }; attempt: number } | null };
      expect(got.lease, next.stdout + next.stderr).toMatchObject({ item: { kind: "generate" }, attempt: 2 });
      expect(waited, "within a sweep and a bit, not the lease's ten minutes").toBeLessThan(RUN_SWEEP_MS * 2 + 5_000);
      const journal = cli(["export", "s", "--root", root]).stdout;
      expect(journal).toContain('"type":"run:crashed"');
    } finally {
      await server.stop();
    }
  });
});

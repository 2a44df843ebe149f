/**
 * A hook started through a launcher that stays between the agent and Baton (npx's `npm exec`, a
 * wrapper script without `exec`): the run it records must name the agent's process, not the
 * launcher, which is gone a moment later (a run naming it was marked crashed by the next hook).
 * The real npx, offline, on a project that has agent-baton in its node_modules.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { findAgentPid } from "../src/hooks/front.js";
import { CLI, cleanupDirs, cli, initWorkspace, REPO, tempDir } from "./helpers.js";
import { payload } from "./hook-helpers.js";

afterAll(cleanupDirs);

const linux = process.platform === "linux";

/** A project that installed agent-baton as a dev dependency (the package linked, as `npm link` leaves it). */
function project(): string {
  const root = initWorkspace("baton-launcher-");
  writeFileSync(join(root, "package.json"), JSON.stringify({ name: "app", version: "1.0.0", devDependencies: { "agent-baton": "*" } }));
  mkdirSync(join(root, "node_modules/.bin"), { recursive: true });
  symlinkSync(REPO, join(root, "node_modules/agent-baton"));
  symlinkSync("../agent-baton/bin/baton.cjs", join(root, "node_modules/.bin/baton"));
  return root;
}

/** Run Claude Code's SessionStart and a prompt through `command` (a shell line ending in `hook claude <Event>`), as the agent runs hooks. */
function turn(root: string, command: (event: string) => string, env: Record<string, string> = {}): void {
  for (const [fixture, event] of [
    ["session-start-startup", "SessionStart"],
    ["user-prompt", "UserPromptSubmit"],
  ] as const) {
    const r = spawnSync("sh", ["-c", command(event)], {
      cwd: root,
      input: payload("claude", fixture, { cwd: root, session: "launched-1", call: "call-1" }),
      encoding: "utf8",
      timeout: 60_000,
      killSignal: "SIGKILL",
      env: {
        ...process.env,
        BATON_HOOK_SERVER: "off",
        BATON_HOOK_DEBUG: "1",
        npm_config_offline: "true",
        npm_config_update_notifier: "false",
        npm_config_fund: "false",
        ...env,
      },
    });
    expect(r.status, `${command(event)}: ${r.stderr}`).toBe(0);
    expect(r.stderr).toMatch(/answered in this process/);
  }
}

function expectRunOfThisProcess(root: string): void {
  const status = cli(["status", "--json", "--root", root]).json();
  expect(status.crashedRuns ?? []).toEqual([]);
  const sid = status.sessions[0].sessionId as string;
  const started = cli(["export", sid, "--root", root])
    .stdout.trim()
    .split("\n")
    .map((l) => JSON.parse(l))
    .filter((e) => e.type === "run:started");
  expect(started.map((e) => e.data.pid)).toEqual([process.pid]);
  // The /clear mark names this process too.
  expect(readdirSync(join(root, ".baton/agents")).filter((f) => f.startsWith("pid-"))).toEqual([
    expect.stringMatching(new RegExp(`^pid-${process.pid}-\\d+$`)),
  ]);
}

describe.runIf(linux)("the agent behind a hook's launcher", () => {
  it("under `npx agent-baton`, the run is the agent's and no hook finds it crashed", () => {
    const root = project();
    turn(root, (event) => `npx agent-baton hook claude ${event}`);
    expectRunOfThisProcess(root);
  });

  it("under a wrapper script that runs baton as its child, the same", () => {
    const root = project();
    const bin = tempDir("baton-wrapper-");
    writeFileSync(join(bin, "baton"), `#!/bin/sh\n"${process.execPath}" "${CLI}" "$@"\nexit $?\n`);
    chmodSync(join(bin, "baton"), 0o755);
    turn(root, (event) => `baton hook claude ${event}`, { PATH: `${bin}:${process.env.PATH}` });
    expectRunOfThisProcess(root);
  });

  it("an ancestor whose command line only mentions the words is the agent", () => {
    // This process's own command line does not end with them: it is the agent.
    expect(findAgentPid(process.pid, ["hook", "claude", "PreToolUse"])).toBe(process.pid);
    expect(findAgentPid(process.pid, [])).toBe(process.pid);
  });
});

/**
 * One reading of the environment for every process that opens a workspace: the CLI and a hook
 * answered in its own process keep the same number of checkpoints, and a bad value is refused
 * by the CLI and logged (never applied half-way) by a hook, which still lets the tool through.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupDirs, cli, initWorkspace } from "./helpers.js";

afterEach(() => cleanupDirs());

const preEdit = (root: string, call: string) =>
  JSON.stringify({
    session_id: "agent-session-1",
    cwd: root,
    hook_event_name: "PreToolUse",
    tool_name: "Edit",
    tool_input: { file_path: join(root, "a.txt"), old_string: "a", new_string: "b" },
    tool_use_id: call,
  });

describe("environment options", () => {
  it("BATON_CHECKPOINT_RETAIN holds for a hook answered in its own process as for the CLI", () => {
    const root = initWorkspace("baton-env-", { "a.txt": "a\n" });
    const env = { BATON_HOOK_SERVER: "off", BATON_CHECKPOINT_RETAIN: "2" };
    for (const call of ["c1", "c2", "c3", "c4"]) {
      const r = cli(["hook", "claude", "PreToolUse"], { cwd: root, input: preEdit(root, call), env });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout, `pre-edit ${call} lets the Edit through`).toBe("");
    }
    const cps = cli(["checkpoints", "--json", "--root", root], { env }).json();
    const list = (cps.checkpoints ?? cps) as { prunedAt?: string }[];
    expect(
      list.filter((c) => c.prunedAt === undefined),
      "four hook checkpoints, two kept",
    ).toHaveLength(2);
  });

  it("a bad value is bad_input from the CLI, and a hook logs it and lets the tool through", () => {
    const root = initWorkspace("baton-env-bad-", { "a.txt": "a\n" });
    const bad: Record<string, string>[] = [{ BATON_CHECKPOINT_RETAIN: "lots" }, { BATON_SYNCHRONOUS: "sometimes" }];
    for (const env of bad) {
      const r = cli(["status", "--json", "--root", root], { env });
      expect(r.code, JSON.stringify(env)).not.toBe(0);
      expect(r.json().error).toMatchObject({ code: "bad_input", message: expect.stringContaining(Object.keys(env)[0] as string) });
      const h = cli(["hook", "claude", "PreToolUse"], { cwd: root, input: preEdit(root, "c1"), env: { ...env, BATON_HOOK_SERVER: "off" } });
      expect(h.code, h.stderr).toBe(0);
      expect(h.stdout, "the tool call goes through").toBe("");
    }
    const log = readFileSync(join(root, ".baton", "logs", "hooks.log"), "utf8");
    expect(log).toContain("BATON_CHECKPOINT_RETAIN");
    expect(log).toContain("BATON_SYNCHRONOUS");
  });
});

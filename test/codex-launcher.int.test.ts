/**
 * Codex's user hooks run `$CODEX_HOME/baton/baton hook codex <Event>` with `bash -c`. The
 * launcher execs the installed baton as a program, naming its Node (`--node=`): the baton's
 * shell part answers through the server or hands the hook to that Node. Where the baton cannot
 * run as a program (not executable), the launcher is a Node script started from its `#!` line, so
 * no second shell starts. Run here exactly as Codex runs it, under a home whose package.json says
 * CommonJS, a module, or is not JSON at all, each answers the hooks, checkpoints before the patch
 * and records the run as the process that started it (the agent).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { codexShimText } from "../src/hooks/agent-setup.js";
import { CLI, cleanupDirs, cli, copyOfInstall, initWorkspace, tempDir } from "./helpers.js";
import { payload } from "./hook-helpers.js";

afterAll(cleanupDirs);

function codexHooks(home: Record<string, string>, entry = CLI): { root: string; shim: string } {
  const root = initWorkspace("baton-codex-launcher-", { "src/app.ts": 'export function app() {\n  return redirect("/login");\n}\n' });
  const args = ["hooks", "install", "codex", "--user", "--root", root, "--json"];
  const r = spawnSync(process.execPath, [entry, ...args], { env: { ...process.env, ...home }, encoding: "utf8", timeout: 60_000 });
  expect(r.status, r.stderr).toBe(0);
  const shim = join(home.CODEX_HOME as string, "baton", "baton");
  expect(JSON.parse(r.stdout).hooks.map((h: { command: string }) => h.command)).toContain(`${shim} hook codex PreToolUse`);
  return { root, shim };
}

/** One hook as Codex runs it: its command through `bash -c`, the payload on stdin. */
function asCodex(root: string, shim: string, event: string, fixture: string, env: Record<string, string>) {
  const r = spawnSync("/bin/bash", ["-c", `${shim} hook codex ${event}`], {
    cwd: root,
    input: payload("codex", fixture, { cwd: root, session: "codex-launcher-1", call: "call-1" }),
    encoding: "utf8",
    timeout: 60_000,
    killSignal: "SIGKILL",
    // No PATH to find a Node on: the launcher names its own.
    env: { ...process.env, ...env, PATH: tempDir("baton-empty-path-"), BATON_HOOK_SERVER: "off", BATON_HOOK_DEBUG: "1" },
  });
  expect(r.status, `${event}: ${r.stderr}`).toBe(0);
  expect(r.stderr).toMatch(/answered in this process/);
  return r;
}

describe.runIf(process.platform === "linux")("Codex's launcher script", () => {
  const cases = [
    ...(["commonjs", "module", "not JSON"] as const).map((scope) => ({ scope, form: "program" as const })),
    ...(["commonjs", "module", "not JSON"] as const).map((scope) => ({ scope, form: "node" as const })),
  ];
  for (const { scope, form } of cases) {
    it(`runs the hooks (${form === "program" ? "the baton as a program" : "a Node script, no shell of its own"}; a package.json in the home: ${scope})`, () => {
      const home = tempDir("baton-codex-home-");
      // A package.json in the home directory, as some users keep: the Node-form launcher (no
      // extension) is CommonJS by the package.json install writes beside it, whatever this one says.
      writeFileSync(join(home, "package.json"), scope === "not JSON" ? '{"name": "oops",' : JSON.stringify({ name: "home", type: scope }));
      const env = { HOME: home, CODEX_HOME: join(home, ".codex") };
      mkdirSync(env.CODEX_HOME, { recursive: true });
      const entry = form === "program" ? CLI : copyOfInstall(tempDir("baton-plain-install-"), 0o644); // as some archive tools leave it;
      const { root, shim } = codexHooks(env, entry);
      const text = readFileSync(shim, "utf8");
      if (form === "program") {
        expect(text.split("\n")[0]).toBe("#!/bin/sh");
        expect(text).toContain(`exec ${entry} --node=${process.execPath} "$@"`);
      } else {
        expect(text.split("\n")[0]).toBe(`#!${process.execPath}`);
        expect(text).toContain(`const entry = ${JSON.stringify(entry)};`);
      }
      expect(statSync(shim).mode & 0o777).toBe(0o755);
      const hooks = cli(["hooks", "status", "codex", "--json", "--root", root], { env }).json().hooks;
      const user = hooks.find((h: { scope: string }) => h.scope === "user");
      expect(user.willRun, JSON.stringify(user)).toBe(true);
      expect(user.launcherModified ?? false).toBe(false);

      asCodex(root, shim, "SessionStart", "session-start-startup", env);
      asCodex(root, shim, "UserPromptSubmit", "user-prompt", env);
      asCodex(root, shim, "PreToolUse", "pre-apply-patch", env);

      const status = cli(["status", "--json", "--root", root]).json();
      expect(status.crashedRuns ?? []).toEqual([]);
      const sid = status.sessions[0].sessionId as string;
      const events = cli(["export", sid, "--root", root])
        .stdout.trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      // The run is the process that ran `bash -c` (bash execs the launcher, the kernel its Node).
      expect(events.filter((e) => e.type === "run:started").map((e) => e.data.pid)).toEqual([process.pid]);
      const cps = cli(["checkpoints", "--json", "--root", root]).json().checkpoints;
      // The patch's two files, checkpointed before it.
      expect(cps).toEqual([expect.objectContaining({ kind: "targeted", toolName: "apply_patch", fileCount: 2 })]);
    });
  }

  it("is a shell script when the Node's path cannot go on a #! line", () => {
    const spaced = codexShimText(`'/opt/my node/bin/node' /usr/lib/node_modules/agent-baton/bin/baton.cjs`);
    expect(spaced.split("\n")[0]).toBe("#!/bin/sh");
    expect(spaced).toContain(`exec '/opt/my node/bin/node' /usr/lib/node_modules/agent-baton/bin/baton.cjs "$@"`);
    const long = `/${"n".repeat(130)}/node`;
    expect(codexShimText(`${long} /x/bin/baton.cjs`).split("\n")[0]).toBe("#!/bin/sh");
    // 64 characters, 124 bytes and more: what the kernel reads is bytes.
    expect(codexShimText(`/${"é".repeat(60)}/node /x/bin/baton.cjs`).split("\n")[0]).toBe("#!/bin/sh");
    expect(codexShimText(`/${"e".repeat(60)}/node /x/bin/baton.cjs`).split("\n")[0]).toBe(`#!/${"e".repeat(60)}/node`);
    expect(codexShimText(`/usr/bin/node '/x y/bin/baton.cjs'`)).toContain('const entry = "/x y/bin/baton.cjs";');
  });
});

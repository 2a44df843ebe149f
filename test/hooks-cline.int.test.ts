/**
 * Cline CLI: its adapter on payloads captured from the real CLI (cline 3.0.65,
 * test/fixtures/agents/cline/), and `baton hooks install|status|uninstall cline` (a script per
 * hook type in `.clinerules/hooks/`, or `$CLINE_DIR/hooks/` with --user) through the real CLI.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SqliteBackend } from "../src/backend/sqlite/sqlite-backend.js";
import { openBaton } from "../src/compose.js";
import { batonInside, isSupervisionFile } from "../src/core/hooks/baton-command.js";
import { CLINE_HOOK_TYPES, cline } from "../src/core/hooks/cline.js";
import type { HookEvent } from "../src/core/hooks/types.js";
import { clineConfigArg } from "../src/platform/moved-config.js";
import { CLI, cleanupDirs, cli, REPO, tempDir } from "./helpers.js";
import { serve } from "./server-helpers.js";

afterEach(() => cleanupDirs());

const FIXTURES = join(REPO, "test", "fixtures", "agents", "cline");

function fixture(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), "utf8"));
}

function parse(name: string): HookEvent {
  return cline.parse(name.split(".")[0] as string, fixture(name), "/elsewhere");
}

describe("Cline CLI's payloads (captured from cline 3.0.65)", () => {
  it("every fixture is an event Baton reads, keyed by the session `--id` resumes, in the workspace root", () => {
    for (const f of readdirSync(FIXTURES)) {
      const ev = parse(f.replace(/\.json$/, ""));
      expect(ev.kind, f).not.toBe("ignored");
      const payload = fixture(f.replace(/\.json$/, "")) as { sessionContext: { rootSessionId: string } };
      expect(ev.agentSessionId, f).toBe(payload.sessionContext.rootSessionId);
      expect(ev.cwd, f).toBe("/work/project");
      // The main agent sends its own agent_id too: it is not a subagent.
      expect(ev.subagentId, f).toBeUndefined();
    }
  });

  it("editor is a write of its path, run_commands a shell command, read_files nothing to checkpoint", () => {
    const create = parse("PreToolUse.editor.create");
    expect(create).toMatchObject({ kind: "before_tool", tool: { name: "editor", kind: "write", files: ["/work/project/new.txt"] } });
    expect(create.kind === "before_tool" && create.tool.callId).toMatch(/^call_/);
    expect(parse("PreToolUse.editor.edit")).toMatchObject({ tool: { kind: "write", files: ["/work/project/a.txt"] } });
    expect(parse("PreToolUse.run_commands")).toMatchObject({ tool: { kind: "shell", command: "echo made-by-shell > c.txt" } });
    expect(parse("PreToolUse.read_files")).toMatchObject({ tool: { kind: "other" } });
  });

  it("run_commands in every shape Cline CLI runs reads as its command line, so the guard sees a Baton command in any", () => {
    const captured = fixture("PreToolUse.run_commands") as { tool_call: { input: unknown } };
    const command = (input: unknown) => {
      const p = structuredClone(captured);
      p.tool_call.input = input;
      const ev = cline.parse("PreToolUse", p, "/elsewhere");
      return ev.kind === "before_tool" ? ev.tool.command : undefined;
    };
    expect(command({ commands: ["baton hooks uninstall cline", "ls"] })).toBe("baton hooks uninstall cline\nls");
    expect(command({ commands: "baton trust" })).toBe("baton trust");
    expect(command({ cmd: "baton trust --revoke" })).toBe("baton trust --revoke");
    expect(command("baton serve --rotate-token")).toBe("baton serve --rotate-token");
    expect(command(["baton rollback --all-lanes"])).toBe("baton rollback --all-lanes");
    // A program run without a shell: quoted as a shell would need.
    expect(command({ commands: [{ command: "baton", args: ["hooks", "uninstall", "cline"] }] })).toBe("baton hooks uninstall cline");
    expect(command({ commands: [{ command: "baton", args: ["lessons", "add", "it's done"] }] })).toBe("baton lessons add 'it'\\''s done'");
    // And the guard refuses the uninstall whatever its shape.
    const p = structuredClone(captured);
    p.tool_call.input = { commands: [{ command: "baton", args: ["hooks", "uninstall", "cline"] }] };
    const ev = cline.parse("PreToolUse", p, "/elsewhere");
    expect(ev.kind === "before_tool" && batonInside(ev.tool.command ?? "").changesSupervision).toBe(true);
  });

  it("a command that exits non-zero is a failed call (the call itself reports success); a write's result is recorded", () => {
    const failed = parse("PostToolUse.run_commands.failure");
    expect(failed).toMatchObject({ kind: "after_tool", status: "error" });
    expect(failed.kind === "after_tool" && failed.error).toMatch(/exited with code 3/);
    const ok = parse("PostToolUse.editor.edit");
    expect(ok).toMatchObject({ kind: "after_tool", status: "success" });
    expect(JSON.stringify(ok.kind === "after_tool" && ok.output)).toContain("Edited /work/project/a.txt");
    expect(parse("PostToolUse.run_commands")).toMatchObject({ status: "success" });
  });

  it("TaskStart starts the session, TaskResume resumes it, TaskComplete ends the turn, SessionShutdown the session", () => {
    expect(parse("TaskStart")).toMatchObject({ kind: "session_start", source: "startup" });
    expect(cline.parse("TaskResume", fixture("TaskStart"), "/x")).toMatchObject({ kind: "session_start", source: "resume" });
    expect(parse("TaskComplete")).toMatchObject({ kind: "stop", sessionEnd: false });
    // Fired after a task Baton's cancel ended (the e2e's spiral task).
    expect(parse("SessionShutdown")).toMatchObject({ kind: "stop", sessionEnd: true });
  });

  it("TaskError (a task whose model requests failed, captured over ACP) ends the turn as TaskComplete does, in the same session", () => {
    const payload = fixture("TaskError") as { error: { message: string }; sessionContext: { rootSessionId: string } };
    expect(payload.error.message).toMatch(/model down/);
    expect(parse("TaskError")).toMatchObject({ kind: "stop", sessionEnd: false, agentSessionId: payload.sessionContext.rootSessionId });
  });

  it("a TaskStart handled after the SessionShutdown of its cancelled task (both run detached) opens no run; a later task does", async () => {
    const root = tempDir();
    mkdirSync(join(root, ".baton"), { recursive: true });
    // Writes that take a while (a loaded machine): the shutdown's are still going when the start arrives.
    const inner = new SqliteBackend({ path: join(root, ".baton", "baton.db") });
    const slow = new Proxy(inner, {
      get(target, prop) {
        if (prop === "transaction")
          return async (mode: "read" | "write", fn: never, opts?: never) => {
            if (mode === "write") await new Promise((ok) => setTimeout(ok, 20));
            return target.transaction(mode, fn, opts);
          };
        const v = Reflect.get(target, prop, target) as unknown;
        return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    const baton = await openBaton({ root, backend: slow } as never);
    try {
      const at = (ms: number) => new Date(Date.now() + ms).toISOString();
      const event = (name: string, timestamp: string) =>
        cline.parse(
          name,
          {
            ...fixture(name),
            timestamp,
            sessionContext: { rootSessionId: "acp-1" },
            workspaceRoots: [root],
            workspaceInfo: { rootPath: root },
          },
          root,
        );
      const running = async () => {
        const sid = (await baton.sessions.list())[0]?.id as string;
        return (await baton.sessions.snapshot(sid)).facets.runs.filter((r) => r.status === "running").map((r) => r.runId);
      };
      // A first task, done: the lane is idle, between tasks.
      await baton.agents.handle(event("TaskStart", at(-5_000)), { agentPid: process.pid });
      await baton.agents.handle(event("TaskComplete", at(-4_000)), { agentPid: process.pid });
      // The next task is cancelled at once: its SessionShutdown, sent after its TaskStart, arrives
      // first, and the start is read while the end is still being written (two hook processes).
      const shutdown = baton.agents.handle(event("SessionShutdown", at(-900)), { agentPid: process.pid });
      await new Promise((ok) => setTimeout(ok, 5));
      await Promise.all([shutdown, baton.agents.handle(event("TaskStart", at(-1_000)), { agentPid: process.pid })]);
      expect(await running()).toEqual([]);
      // A task started after that end is a new one.
      await baton.agents.handle(event("TaskStart", at(2_000)), { agentPid: process.pid });
      expect(await running()).toHaveLength(1);
    } finally {
      await baton.close();
    }
  });

  it("a subagent's hooks (parent_agent_id set) are its own lane", () => {
    const p = { ...fixture("PreToolUse.run_commands"), agent_id: "agent_sub", parent_agent_id: "agent_main" };
    expect(cline.parse("PreToolUse", p, "/x")).toMatchObject({ subagentId: "agent_sub" });
  });

  it("answers: a deny is Cline's cancel with the reason, context is contextModification on tool hooks only", () => {
    const pre = parse("PreToolUse.run_commands");
    expect(JSON.parse(cline.render(pre, { deny: { reason: "paused" } }))).toEqual({ cancel: true, errorMessage: "paused" });
    expect(JSON.parse(cline.render(pre, { context: "note" }))).toEqual({ contextModification: "note" });
    expect(JSON.parse(cline.render(parse("PostToolUse.run_commands"), { context: "note" }))).toEqual({ contextModification: "note" });
    // Cline CLI runs TaskStart detached and ignores its output.
    expect(cline.render(parse("TaskStart"), { context: "state" })).toBe("");
    expect(cline.passThrough("PreToolUse")).toBe("");
  });

  it("the agent may not write its own hook files, nor a plugin Cline would load into its process", () => {
    for (const f of [
      ".clinerules/hooks/PreToolUse.sh",
      "/w/.cline/plugins/package.json",
      "/home/u/.cline/plugins/_installed/x/index.js",
      "/w/.clinerules/hooks",
      "/home/u/.cline/hooks/PostToolUse",
      "/home/u/Documents/Cline/Hooks/TaskStart",
      // Every folder Cline CLI 3.0.65 loads plugins from (@cline/shared's plugin search paths).
      "/home/u/Documents/Cline/Plugins/x/index.js",
      // The same folders on a case-insensitive file system.
      "/w/.ClineRules/hooks/PreToolUse.sh",
      "/w/.OPENCODE/plugins/baton.js",
    ])
      expect(isSupervisionFile(f), f).toBe(true);
    expect(isSupervisionFile("/w/.clinerules/rules.md")).toBe(false);
    expect(isSupervisionFile("/w/.cline/plugins.md")).toBe(false);
  });
});

function batonBin(): string {
  const bin = tempDir("baton-bin-");
  writeFileSync(join(bin, "baton"), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} "$@"\n`);
  chmodSync(join(bin, "baton"), 0o755);
  return bin;
}

function privateEnv(): Record<string, string> {
  const home = tempDir("baton-home-");
  return { HOME: home, PATH: `${batonBin()}:${process.env.PATH}`, BATON_HOOK_SERVER: "off" };
}

function baton(args: string[], env: Record<string, string>, code = 0) {
  const r = cli(args, { env });
  expect(r.code, r.stdout + r.stderr).toBe(code);
  return r;
}

describe("baton hooks install / status / uninstall cline", () => {
  it("project: a guarded script per hook type in .clinerules/hooks/, no path of this machine; status sees them; uninstall leaves the project as it was", () => {
    const root = tempDir("baton-install-");
    const env = privateEnv();
    const dir = join(root, ".clinerules", "hooks");
    const r = baton(["hooks", "install", "cline", "--root", root, "--json"], env).json();
    expect(r).toMatchObject({ agent: "cline", scope: "project", shared: true, file: dir, changed: true });
    expect(r.hooks.map((h: { event: string }) => h.event)).toEqual([...CLINE_HOOK_TYPES]);
    expect(r.limits.join("\n")).toMatch(/cancel stops the whole run/);
    // What the real CLI showed (test/agents/cline.e2e.test.ts): no prompt hook headless, more
    // prompts only over ACP, no TaskCancel.
    expect(r.limits.join("\n")).toMatch(/`cline -y "…"` \(only for its own follow-up messages\)/);
    expect(r.limits.join("\n")).toMatch(/only over ACP \(`cline --acp`\), each a run in the same lane/);
    expect(r.limits.join("\n")).toMatch(/fires no TaskCancel/);
    expect(r.limits.join("\n")).toMatch(/Baton has no Cline plugin \(`cline plugin install`/);
    for (const type of CLINE_HOOK_TYPES) {
      const file = join(dir, `${type}.sh`);
      const text = readFileSync(file, "utf8");
      expect(text).toBe(
        `#!/bin/sh\n# Baton's hook for Cline CLI: \`baton hooks uninstall cline\` removes it.\n# Without baton on PATH it does nothing.\ncommand -v baton >/dev/null 2>&1 || exit 0\nexec baton hook cline ${type}\n`,
      );
      expect(statSync(file).mode & 0o111, "executable").not.toBe(0);
      expect(text).not.toContain(REPO);
    }
    expect(baton(["hooks", "install", "cline", "--root", root, "--json"], env).json().changed).toBe(false);
    const st = baton(["hooks", "status", "cline", "--root", root, "--json"], env).json().hooks;
    const project = st.find((s: { scope: string }) => s.scope === "project");
    expect(project).toMatchObject({ file: dir, missing: [], willRun: true });
    expect(project.installed).toHaveLength(CLINE_HOOK_TYPES.length);
    expect(project.limits.length).toBeGreaterThan(0);

    const u = baton(["hooks", "uninstall", "cline", "--root", root, "--json"], env).json();
    expect(u).toMatchObject({ changed: true, removed: CLINE_HOOK_TYPES.length });
    expect(existsSync(join(root, ".clinerules")), "the folders install made go").toBe(false);
    expect(baton(["hooks", "uninstall", "cline", "--root", root, "--json"], env).json().changed).toBe(false);
  });

  it("a user's own hook of the same type keeps running beside Baton's and is left byte for byte; a `<Type>.sh` of their own is refused, nothing written", () => {
    const root = tempDir("baton-install-");
    const env = privateEnv();
    const dir = join(root, ".clinerules", "hooks");
    mkdirSync(dir, { recursive: true });
    const theirs = "#!/bin/bash\necho '{}'\n";
    writeFileSync(join(dir, "PreToolUse"), theirs, { mode: 0o700 });
    writeFileSync(join(root, ".clinerules", "style.md"), "tabs\n");
    baton(["hooks", "install", "cline", "--root", root], env);
    expect(readdirSync(dir)).toContain("PreToolUse.sh");
    baton(["hooks", "uninstall", "cline", "--root", root], env);
    expect(readdirSync(dir)).toEqual(["PreToolUse"]);
    expect(readFileSync(join(dir, "PreToolUse"), "utf8")).toBe(theirs);
    expect(statSync(join(dir, "PreToolUse")).mode & 0o777).toBe(0o700);
    expect(readFileSync(join(root, ".clinerules", "style.md"), "utf8")).toBe("tabs\n");

    const mine = "#!/bin/sh\n./audit.sh\n";
    writeFileSync(join(dir, "PostToolUse.sh"), mine);
    const refused = cli(["hooks", "install", "cline", "--root", root], { env });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/PostToolUse\.sh is a hook of your own.*Baton changed nothing.*rename yours/s);
    expect(readdirSync(dir).sort()).toEqual(["PostToolUse.sh", "PreToolUse"]);
    expect(readFileSync(join(dir, "PostToolUse.sh"), "utf8")).toBe(mine);
  });

  it("a script that only ends in Baton's exec line (edited, or a repository's with `exit 0` before it) is not Baton's: not counted, not removed, not overwritten", () => {
    const root = tempDir("baton-install-");
    const env = privateEnv();
    baton(["hooks", "install", "cline", "--root", root], env);
    const file = join(root, ".clinerules", "hooks", "PreToolUse.sh");
    const gutted = readFileSync(file, "utf8").replace("#!/bin/sh\n", "#!/bin/sh\nexit 0\n");
    writeFileSync(file, gutted);
    const project = baton(["hooks", "status", "cline", "--root", root, "--json"], env)
      .json()
      .hooks.find((h: { scope: string }) => h.scope === "project");
    expect(project.missing).toContain("PreToolUse");
    expect(cli(["hooks", "install", "cline", "--root", root], { env }).code).not.toBe(0);
    baton(["hooks", "uninstall", "cline", "--root", root], env);
    expect(readFileSync(file, "utf8")).toBe(gutted);
  });

  it("--user: $CLINE_DIR/hooks/ with this baton and this Node by absolute path", () => {
    const root = tempDir("baton-install-");
    const env = privateEnv();
    const clineDir = join(env.HOME as string, "cline-config");
    const userEnv = { ...env, CLINE_DIR: clineDir };
    const r = baton(["hooks", "install", "cline", "--user", "--root", root, "--json"], userEnv).json();
    expect(r).toMatchObject({ scope: "user", shared: false, file: join(clineDir, "hooks") });
    const text = readFileSync(join(clineDir, "hooks", "PreToolUse.sh"), "utf8");
    expect(text).toContain(`exec ${CLI} --node=${process.execPath} hook cline PreToolUse`);
    expect(text).not.toContain("command -v baton");
    baton(["hooks", "uninstall", "cline", "--user", "--root", root], userEnv);
    expect(existsSync(join(clineDir, "hooks", "PreToolUse.sh"))).toBe(false);
  });

  it("a committed hook does nothing where baton is not on PATH: no output, exit 0; install says Cline CLI would skip them", () => {
    const root = tempDir("baton-install-");
    const noBaton = { ...privateEnv(), PATH: "/usr/bin:/bin" };
    const installed = baton(["hooks", "install", "cline", "--root", root, "--json"], noBaton).json();
    expect(installed.willRun).toBe(false);
    expect(installed.remaining.join("\n")).toContain("Cline CLI would skip each one");
    const r = spawnSync("/bin/sh", [join(root, ".clinerules", "hooks", "PreToolUse.sh")], {
      input: JSON.stringify(fixture("PreToolUse.run_commands")),
      env: { PATH: "/nonexistent" },
      encoding: "utf8",
    });
    expect(r.status).toBe(0);
    expect(r.stdout).toBe("");
  });

  it("status and doctor say Cline CLI will not run project hooks installed below the repository's root (it reads the top's)", () => {
    const top = tempDir("baton-install-");
    spawnSync("git", ["init", "-q"], { cwd: top });
    const root = join(top, "pkg");
    mkdirSync(root);
    const env = privateEnv();
    baton(["init", "--root", root], env);
    const r = baton(["hooks", "install", "cline", "--root", root, "--json"], env).json();
    expect(r.willRun).toBe(false);
    expect(r.remaining.join("\n")).toMatch(/reads \.clinerules\/hooks\/ at the repository's root/);
    const project = baton(["hooks", "status", "cline", "--root", root, "--json"], env)
      .json()
      .hooks.find((s: { scope: string }) => s.scope === "project");
    expect(project.willRun).toBe(false);
    const doctor = cli(["doctor", "--root", root, "--json"], { env });
    expect(doctor.stdout).toMatch(/hooks_not_running[^\n]*cline|Cline CLI reads \.clinerules/);
  });

  it("the hook refuses the agent's write to its own hook files with Cline's cancel, through the real `baton hook cline`", () => {
    const root = tempDir("baton-install-");
    const env = privateEnv();
    baton(["init", "--root", root], env);
    const payload = fixture("PreToolUse.editor.create") as Record<string, any>;
    const target = join(root, ".clinerules", "hooks", "PreToolUse.sh");
    payload.workspaceRoots = [root];
    payload.tool_call = { ...payload.tool_call, input: { path: target, new_text: "exit 0\n" } };
    const r = cli(["hook", "cline", "PreToolUse"], { cwd: root, env, input: JSON.stringify(payload) });
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.cancel).toBe(true);
    expect(out.errorMessage).toMatch(/supervis/i);
    expect(existsSync(target)).toBe(false);
  });

  it("`cline --config <dir>` moves its hooks and plugins: the agent's writes there are refused too, in-process and by the server", async () => {
    const root = tempDir("baton-install-");
    const config = tempDir("baton-cline-config-");
    const env = privateEnv();
    baton(["init", "--root", root], env);
    // Cline's process, as the hook sees it: a parent whose command line carries `--config` (a
    // relative one, resolved against its working directory), running the hook through a shell.
    const agent = join(tempDir("baton-fake-cline-"), "cline.cjs");
    writeFileSync(
      agent,
      `const { spawnSync } = require("node:child_process");
const r = spawnSync("sh", ["-c", 'exec "$0" "$1" hook cline PreToolUse', process.execPath, ${JSON.stringify(CLI)}], { input: require("node:fs").readFileSync(0), encoding: "utf8" });
process.stdout.write(r.stdout);
process.stderr.write(r.stderr);
process.exitCode = r.status ?? 1;
`,
    );
    const write = (file: string, extra: Record<string, string> = {}) => {
      const payload = fixture("PreToolUse.editor.create") as Record<string, any>;
      payload.workspaceRoots = [root];
      payload.tool_call = {
        ...payload.tool_call,
        id: `call_${file.length}_${Object.keys(extra).join("")}`,
        input: { path: file, new_text: "x\n" },
      };
      const r = spawnSync(process.execPath, [agent, "--json", "--config", relative(root, config), "fix it"], {
        cwd: root,
        env: { ...process.env, ...env, ...extra },
        input: JSON.stringify(payload),
        encoding: "utf8",
      });
      expect(r.status, r.stderr).toBe(0);
      // Who answered: the in-process path, or the server (which reads the agent's command line itself).
      expect(r.stderr).toMatch(extra.BATON_HOOK_SERVER === "use" ? /answered by the server/ : /in this process|in its own process/);
      return r.stdout.includes('"cancel":true');
    };
    const s = await serve(root, [], env);
    try {
      for (const mode of [
        { BATON_HOOK_SERVER: "off", BATON_HOOK_DEBUG: "1" },
        { BATON_HOOK_SERVER: "use", BATON_HOOK_DEBUG: "1" },
      ]) {
        expect(write(join(config, "plugins", "evil", "index.js"), mode), "a plugin in the moved folder").toBe(true);
        expect(write(join(config, "hooks", "PreToolUse.sh"), mode), "a hook in the moved folder").toBe(true);
        expect(write(join(config, "notes.md"), mode), "anything else there").toBe(false);
        expect(write(join(root, "plugins", "x.js"), mode), "the project's own plugins/").toBe(false);
      }
    } finally {
      await s.stop();
    }
  });

  it("clineConfigArg: the last --config before `--`, resolved against Cline's working directory", () => {
    expect(clineConfigArg(["node", "/x/cline", "--json", "--config", "/c1", "fix it"], "/w")).toBe("/c1");
    expect(clineConfigArg(["cline", "--config=rel/dir"], "/w")).toBe("/w/rel/dir");
    expect(clineConfigArg(["cline", "--config", "a", "--config", "/b"], "/w")).toBe("/b");
    expect(clineConfigArg(["cline", "--", "--config", "/c"], "/w")).toBeUndefined();
    expect(clineConfigArg(["cline", "--config", "rel"], undefined)).toBeUndefined();
    expect(clineConfigArg(["cline", "--json", "hello"], "/w")).toBeUndefined();
    expect(clineConfigArg(["cline", "--config"], "/w")).toBeUndefined();
    // Another option's value is that option's, however it looks; the folder is trimmed.
    expect(clineConfigArg(["cline", "-s", "--config", "--config", "/real"], "/w")).toBe("/real");
    expect(clineConfigArg(["cline", "--system", "--config=/x", "go"], "/w")).toBeUndefined();
    expect(clineConfigArg(["cline", "--config", " /padded "], "/w")).toBe("/padded");
    // An option whose value is optional takes none that looks like an option.
    expect(clineConfigArg(["cline", "--thinking", "--config", "/t"], "/w")).toBe("/t");
  });
});

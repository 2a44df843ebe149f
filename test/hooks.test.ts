/** The pure parts of the agent hooks: patch paths, the config merge, adapters, the context budget. */

import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { patchFiles } from "../src/core/hooks/apply-patch.js";
import { batonInside, batonInvocation, isSupervisionFile, isUnpausePrompt, removesBatonPlugin } from "../src/core/hooks/baton-command.js";
import { claude } from "../src/core/hooks/claude.js";
import { codex, codexFailure } from "../src/core/hooks/codex.js";
import { addBatonHooks, isBatonCommand, listBatonHooks, removeBatonHooks, uninstallFrom } from "../src/core/hooks/config.js";
import { fitSections, renderSessionContext, type SessionBrief } from "../src/core/hooks/context.js";
import { copilot } from "../src/core/hooks/copilot.js";
import { gemini } from "../src/core/hooks/gemini.js";
import { qwen } from "../src/core/hooks/qwen.js";
import { parseRollbackIntent } from "../src/core/hooks/rollback-intent.js";
import { readHookEvent } from "../src/core/hooks/wire.js";
import type { JsonObject } from "../src/core/types.js";
import { shellWords } from "../src/hooks/agent-setup.js";
import { codexHookHash, codexTrustedHashes, withCodexTrust } from "../src/hooks/codex-trust.js";

describe("patchFiles", () => {
  it("names every added, updated, deleted and moved file once, in order", () => {
    const patch = [
      "*** Begin Patch",
      "*** Update File: src/app.ts",
      "*** Move to: src/main.ts",
      "@@ function app() {",
      "-  old",
      "+  new",
      "*** Add File: docs/new file.md",
      "+*** Update File: not/a/header.ts",
      "*** Delete File: old.txt",
      "*** Update File: src/app.ts",
      "*** End Patch",
    ].join("\n");
    expect(patchFiles(patch).files).toEqual(["src/app.ts", "src/main.ts", "docs/new file.md", "old.txt"]);
    expect(patchFiles("*** Begin Patch\r\n*** Add File: a.ts\r\n+x\r\n*** End Patch\r\n").files).toEqual(["a.ts"]);
    expect(patchFiles("no patch here").files).toEqual([]);
    // OpenCode's parser takes a header without the space after the colon: so must Baton, or the
    // write would name no file (no checkpoint, no guard).
    expect(
      patchFiles("*** Begin Patch\n*** Add File:.opencode/plugins/x.js\n+x\n*** Update File:a.ts\n*** Move to:b.ts\n*** End Patch").files,
    ).toEqual([".opencode/plugins/x.js", "a.ts", "b.ts"]);
  });

  it("tells the files a patch removes before it writes them (if ever) from those it writes", () => {
    const patch = (...lines: string[]) => ["*** Begin Patch", ...lines, "*** End Patch"].join("\n");
    // A Delete and a Move's source are removed; the Move's destination, an Add and an Update are written.
    expect(
      patchFiles(
        patch("*** Delete File: CLAUDE.md", "*** Update File: a.md", "*** Move to: b.md", "@@", "-x", "+y", "*** Add File: c.md", "+z"),
      ),
    ).toEqual({ files: ["CLAUDE.md", "a.md", "b.md", "c.md"], unlinked: ["CLAUDE.md", "a.md"] });
    // An Update with hunks (no Move) is written in place, the last header of a patch too; CRLF alike.
    expect(patchFiles(patch("*** Update File: a.md", "@@", "-x", "+y", "*** Update File: b.md"))).toEqual({ files: ["a.md", "b.md"] });
    expect(
      patchFiles("*** Begin Patch\r\n*** Delete File: a.md\r\n*** Update File: b.md\r\n*** Move to: c.md\r\n*** End Patch\r\n"),
    ).toEqual({
      files: ["a.md", "b.md", "c.md"],
      unlinked: ["a.md", "b.md"],
    });
    // Written, then removed: the write went through a link. Removed, then written: a plain file
    // takes the link's place, and what it led to is not written.
    expect(patchFiles(patch("*** Update File: CLAUDE.md", "@@", "-x", "+y", "*** Delete File: CLAUDE.md"))).toEqual({
      files: ["CLAUDE.md"],
    });
    expect(patchFiles(patch("*** Delete File: a.md", "*** Add File: a.md", "+new"))).toEqual({ files: ["a.md"], unlinked: ["a.md"] });
    expect(patchFiles(patch("*** Delete File: b.md", "*** Update File: a.md", "*** Move to: b.md"))).toEqual({
      files: ["b.md", "a.md"],
      unlinked: ["b.md", "a.md"],
    });
    // A Move without a preceding Update header renames nothing Baton can name.
    expect(patchFiles(patch("*** Move to: x.md"))).toEqual({ files: ["x.md"] });
    expect(patchFiles(undefined)).toEqual({ files: [] });
  });

  it("keeps a patch's unlinked files on the way to the server (the wire event)", () => {
    const cwd = "/work/app";
    const patch = "*** Begin Patch\n*** Delete File: CLAUDE.md\n*** End Patch\n";
    const ev = codex.parse("PreToolUse", { cwd, tool_name: "apply_patch", tool_input: { command: patch } }, "/");
    expect(ev).toMatchObject({ tool: { files: ["CLAUDE.md"], unlinked: ["CLAUDE.md"] } });
    expect(readHookEvent(JSON.parse(JSON.stringify(ev)))).toEqual(ev);
    expect(() =>
      readHookEvent({ ...JSON.parse(JSON.stringify(ev)), tool: { ...(ev as { tool: object }).tool, unlinked: "CLAUDE.md" } }),
    ).toThrow("event.tool.unlinked must be a list of strings");
  });
});

describe("hook config merge", () => {
  const launcher = '"/usr/bin/node" "/opt/baton/bin/baton.cjs"';
  const specs = claude.hookSpecs(launcher);
  const original: JsonObject = {
    PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "./guard.sh" }] }],
    Stop: [{ hooks: [{ type: "command", command: "say done" }] }],
  };

  it("recognises Baton's commands whatever the launcher, and only for the agent", () => {
    expect(isBatonCommand(`${launcher} hook claude PreToolUse`, "claude")).toBe(true);
    expect(isBatonCommand("baton hook claude Stop", "claude")).toBe(true);
    expect(isBatonCommand("npx baton hook codex Stop", "codex")).toBe(true);
    expect(isBatonCommand("npx agent-baton hook codex Stop", "codex")).toBe(true);
    expect(isBatonCommand("node C:\\tools\\baton.cjs hook gemini BeforeTool", "gemini")).toBe(true);
    expect(isBatonCommand("baton hook claude Stop", "codex")).toBe(false);
    expect(isBatonCommand("baton-helper hook claude Stop", "claude")).toBe(false);
    expect(isBatonCommand("./guard.sh", "claude")).toBe(false);
    expect(isBatonCommand(42, "claude")).toBe(false);
  });

  it("adds one group per event after the existing ones; adding twice changes nothing", () => {
    const once = addBatonHooks(original, specs, "claude");
    expect(addBatonHooks(once, specs, "claude")).toEqual(once);
    expect((once.PreToolUse as JsonObject[])[0]).toEqual((original.PreToolUse as JsonObject[])[0]);
    expect(
      listBatonHooks(once, "claude")
        .map((h) => h.event)
        .sort(),
    ).toEqual(specs.map((s) => s.event).sort());
    expect(original.PreToolUse as unknown[]).toHaveLength(1); // not mutated
  });

  it("reinstalling replaces Baton's group where it stands: a user's group after it keeps its index", () => {
    const first = addBatonHooks(undefined, specs, "claude");
    const mine = { hooks: [{ type: "command", command: "my-notify" }] };
    const withMine: JsonObject = { ...first, Stop: [...(first.Stop as JsonObject[]), mine] };
    const again = addBatonHooks(withMine, claude.hookSpecs("/other/baton"), "claude");
    const stop = again.Stop as JsonObject[];
    expect(stop).toHaveLength(2);
    expect(stop[1]).toEqual(mine);
    expect(JSON.stringify(stop[0])).toContain("/other/baton hook claude Stop");
    expect(Object.keys(again)).toEqual(Object.keys(withMine));
  });

  it("splits shell words as sh does, escaped quotes included", () => {
    expect(shellWords('"/a \\"b\\" \\$c \\`d" /x/baton hook codex Stop')).toEqual(['/a "b" $c `d', "/x/baton", "hook", "codex", "Stop"]);
    expect(shellWords("'/a b'/c")).toBeUndefined();
    expect(shellWords("a $(x)")).toBeUndefined();
    expect(shellWords("a; b")).toBeUndefined();
  });

  it("removing takes out only Baton's handlers and the containers that removal emptied", () => {
    const merged = addBatonHooks(original, specs, "claude");
    expect(removeBatonHooks(merged, "claude")).toEqual({ hooks: original, removed: specs.length });
    // A group shared with another handler keeps the other handler.
    const shared: JsonObject = {
      PreToolUse: [
        {
          matcher: "Edit",
          hooks: [
            { type: "command", command: "./fmt.sh" },
            { type: "command", command: "baton hook claude PreToolUse" },
          ],
        },
      ],
      Empty: [],
    };
    expect(removeBatonHooks(shared, "claude").hooks).toEqual({
      PreToolUse: [{ matcher: "Edit", hooks: [{ type: "command", command: "./fmt.sh" }] }],
      Empty: [],
    });
    // Only Baton's hooks: the whole `hooks` key goes.
    expect(uninstallFrom({ model: "x", hooks: addBatonHooks(undefined, specs, "claude") }, "claude").settings).toEqual({ model: "x" });
    expect(uninstallFrom({ hooks: {} }, "claude")).toEqual({ settings: { hooks: {} }, removed: 0 });
  });

  it("keeps values that are not matcher groups (Gemini's hooks.disabled)", () => {
    const g: JsonObject = { disabled: ["scanner"], BeforeTool: [{ matcher: "x", hooks: [{ type: "command", command: "./x.sh" }] }] };
    const merged = addBatonHooks(g, gemini.hookSpecs("baton"), "gemini");
    expect(merged.disabled).toEqual(["scanner"]);
    expect(removeBatonHooks(merged, "gemini").hooks).toEqual(g);
  });
});

describe("adapters", () => {
  const cwd = "/work/app";

  it("Claude Code: write tools name their files, Bash is a shell tool, others are left alone", () => {
    const ev = claude.parse(
      "PreToolUse",
      { session_id: "s", cwd, tool_name: "MultiEdit", tool_input: { file_path: `${cwd}/a.ts`, edits: [] }, tool_use_id: "t1" },
      "/",
    );
    expect(ev).toMatchObject({
      kind: "before_tool",
      agentSessionId: "s",
      tool: { name: "MultiEdit", kind: "write", files: [`${cwd}/a.ts`], callId: "t1" },
    });
    expect(claude.parse("PreToolUse", { cwd, tool_name: "NotebookEdit", tool_input: { notebook_path: "n.ipynb" } }, "/")).toMatchObject({
      tool: { kind: "write", files: ["n.ipynb"] },
    });
    expect(claude.parse("PreToolUse", { cwd, tool_name: "Bash", tool_input: { command: "ls" } }, "/")).toMatchObject({
      tool: { kind: "shell", command: "ls" },
    });
    expect(claude.parse("PreToolUse", { cwd, tool_name: "Grep", tool_input: {} }, "/")).toMatchObject({ tool: { kind: "other" } });
    expect(claude.parse("PostToolUseFailure", { cwd, tool_name: "Bash", tool_input: {}, error: "boom" }, "/")).toMatchObject({
      kind: "after_tool",
      status: "error",
      error: "boom",
    });
    expect(claude.parse("SessionStart", { cwd, source: "compact" }, "/")).toMatchObject({ kind: "session_start", source: "compact" });
    expect(claude.parse("Notification", { cwd }, "/").kind).toBe("ignored");
    expect(claude.parse("", { cwd, hook_event_name: "Stop" }, "/").kind, "the payload names the event when the command line does not").toBe(
      "stop",
    );
  });

  it("Claude Code: deny, context and nothing", () => {
    const pre = claude.parse("PreToolUse", { cwd, tool_name: "Edit", tool_input: { file_path: "a" } }, "/");
    expect(JSON.parse(claude.render(pre, { deny: { reason: "paused" }, userMessage: "blocked" }))).toEqual({
      systemMessage: "blocked",
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "paused" },
    });
    const post = claude.parse("PostToolUseFailure", { cwd, tool_name: "Bash", error: "x" }, "/");
    expect(JSON.parse(claude.render(post, { context: "lesson" }))).toEqual({
      hookSpecificOutput: { hookEventName: "PostToolUseFailure", additionalContext: "lesson" },
    });
    expect(claude.render(pre, {})).toBe("");
    // A warning let through with the call (a claim another agent holds) reaches the model: no decision, only context.
    expect(JSON.parse(claude.render(pre, { context: "also wrote this file", userMessage: "shared" }))).toEqual({
      systemMessage: "shared",
      hookSpecificOutput: { hookEventName: "PreToolUse", additionalContext: "also wrote this file" },
    });
    const start = claude.parse("SessionStart", { cwd }, "/");
    const long = JSON.parse(claude.render(start, { context: "x".repeat(20_000) }));
    expect(long.hookSpecificOutput.additionalContext).toHaveLength(10_000);
  });

  it("Codex: apply_patch files from the patch body, shell tools as Bash, failures from the response", () => {
    const patch = "*** Begin Patch\n*** Update File: a.ts\n*** Add File: b.ts\n+x\n*** End Patch";
    expect(codex.parse("PreToolUse", { cwd, tool_name: "apply_patch", tool_input: { command: patch } }, "/")).toMatchObject({
      tool: { kind: "write", files: ["a.ts", "b.ts"] },
    });
    expect(codex.parse("PreToolUse", { cwd, tool_name: "apply_patch", tool_input: patch }, "/")).toMatchObject({
      tool: { files: ["a.ts", "b.ts"] },
    });
    expect(
      codex.parse("PreToolUse", { cwd, tool_name: "Bash", tool_input: { command: `apply_patch <<'EOF'\n${patch}\nEOF` } }, "/"),
    ).toMatchObject({
      tool: { kind: "write", files: ["a.ts", "b.ts"] },
    });
    expect(codex.parse("PreToolUse", { cwd, tool_name: "exec_command", tool_input: { cmd: ["git", "status"] } }, "/")).toMatchObject({
      tool: { kind: "shell", command: "git status" },
    });
    expect(codexFailure("Exit code: 1\nWall time: 1s\nOutput:\nboom")).toContain("boom");
    expect(codexFailure("Exit code: 0\nOutput:\nok")).toBeUndefined();
    expect(codexFailure({ exit_code: 2, stderr: "bad" })).toBe("bad");
    expect(codexFailure({ output: "fine" })).toBeUndefined();
    const pre = codex.parse("PreToolUse", { cwd, tool_name: "Bash", tool_input: { command: "ls" } }, "/");
    expect(JSON.parse(codex.render(pre, { deny: { reason: "paused" } })).hookSpecificOutput.permissionDecision).toBe("deny");
    // Codex rejects a plain "allow" (and drops its context): context alone, no decision.
    expect(JSON.parse(codex.render(pre, { context: "also wrote this file" })).hookSpecificOutput).toEqual({
      hookEventName: "PreToolUse",
      additionalContext: "also wrote this file",
    });
  });

  it("Gemini CLI: decision deny, additionalContext, and {} to continue", () => {
    const pre = gemini.parse("BeforeTool", { cwd, tool_name: "replace", tool_input: { file_path: "/work/app/a.ts" } }, "/");
    expect(pre).toMatchObject({ kind: "before_tool", tool: { kind: "write", files: ["/work/app/a.ts"] } });
    expect(JSON.parse(gemini.render(pre, { deny: { reason: "paused" } }))).toEqual({ decision: "deny", reason: "paused" });
    expect(gemini.render(pre, {})).toBe("{}");
    // BeforeTool takes no context for the model: a warning let through reaches the user only.
    expect(JSON.parse(gemini.render(pre, { context: "also wrote this file", userMessage: "shared" }))).toEqual({ systemMessage: "shared" });
    expect(gemini.passThrough("BeforeTool")).toBe("{}");
    const after = gemini.parse(
      "AfterTool",
      { cwd, tool_name: "run_shell_command", tool_input: {}, tool_response: { llmContent: "x", error: { message: "exit 2" } } },
      "/",
    );
    expect(after).toMatchObject({ kind: "after_tool", status: "error", error: "exit 2", output: "x" });
    const prompt = gemini.parse("BeforeAgent", { cwd, prompt: "hi" }, "/");
    expect(JSON.parse(gemini.render(prompt, { context: "c" }))).toEqual({
      hookSpecificOutput: { hookEventName: "BeforeAgent", additionalContext: "c" },
    });
    expect(gemini.parse("AfterAgent", { cwd }, "/")).toMatchObject({ kind: "stop", sessionEnd: false });
  });

  it("Gemini CLI: a shell command's non-zero exit is read from llmContent, whatever it printed", () => {
    const status = (llmContent: unknown) =>
      gemini.parse(
        "AfterTool",
        { cwd, tool_name: "run_shell_command", tool_input: {}, tool_response: { llmContent, returnDisplay: "" } },
        "/",
      );
    const wrap = (t: string) => `<untrusted_context>\n${t}\n</untrusted_context>`;
    expect(status(wrap("Output: boom\nExit Code: 1\nProcess Group PGID: 77"))).toMatchObject({
      status: "error",
      error: "Output: boom\nExit Code: 1",
    });
    expect(status([{ text: wrap("Output: (empty)\nExit Code: 127\nSignal: 9") }])).toMatchObject({ status: "error" });
    expect(status(wrap("Output: ok\nProcess Group PGID: 77"))).toMatchObject({ status: "success" });
    // The command's own output saying "Exit Code: 1" is not Gemini CLI's exit line.
    expect(status(wrap("Output: Exit Code: 1\nmore output\nProcess Group PGID: 77"))).toMatchObject({ status: "success" });
    expect(status(wrap("Output: x\nExit Code: 0"))).toMatchObject({ status: "success" });
  });

  it("Gemini CLI: the trailer Gemini CLI appends decides, not a line the command printed; signals and cancellations fail", () => {
    const wrap = (t: string) => `<untrusted_context>\n${t}\n</untrusted_context>`;
    const status = (llmContent: string, returnDisplay: unknown) =>
      gemini.parse(
        "AfterTool",
        { cwd, tool_name: "run_shell_command", tool_input: {}, tool_response: { llmContent: wrap(llmContent), returnDisplay } },
        "/",
      );
    // Exits 0, its last line is "Exit Code: 1": a success.
    expect(status("Output: done\nExit Code: 1\nProcess Group PGID: 7", "done\nExit Code: 1")).toMatchObject({ status: "success" });
    // The same output, exit 2: the trailer's code.
    expect(status("Output: done\nExit Code: 1\nExit Code: 2\nProcess Group PGID: 7", "done\nExit Code: 1")).toMatchObject({
      status: "error",
      error: "Output: done\nExit Code: 1\nExit Code: 2",
    });
    // Killed by a signal (no exit code), with and without output.
    expect(status("Output: (empty)\nSignal: 9\nProcess Group PGID: 7", "Command terminated by signal: 9")).toMatchObject({
      status: "error",
      error: "Output: (empty)\nSignal: 9",
    });
    expect(status("Output: half\nSignal: SIGKILL\nProcess Group PGID: 7", "half")).toMatchObject({ status: "error" });
    // Timed out or cancelled by the user.
    for (const t of [
      "Command was automatically cancelled because it exceeded the timeout of 5.0 minutes without output. There was no output before it was cancelled.",
      "Command was cancelled by user before it could complete. Below is the output before it was cancelled:\nhalf",
    ])
      expect(status(t, "Command cancelled by user."), t).toMatchObject({ status: "error", error: t });
    // A spawn error.
    expect(status("Output: (empty)\nError: spawn bash ENOENT", "Command failed: spawn bash ENOENT")).toMatchObject({ status: "error" });
  });

  it("only a plain read-only Baton invocation passes; a mutating one is Baton's but not read-only", () => {
    for (const c of [
      "baton status --json",
      "npx agent-baton resume task-1 --json",
      "npx -y agent-baton@0.1.0 status",
      "npx -p agent-baton baton doctor --json",
      "npx --package=agent-baton baton status",
      "node /opt/baton/bin/baton.cjs status",
      "./node_modules/.bin/baton lessons search 'db seed' --k 5",
      "baton --root /work/app doctor --json",
      "baton rollback 2 --dry-run",
      'baton checkpoint show "cp-1"',
      "baton ledger export --format otlp",
    ])
      expect(batonInvocation(c), c).toMatchObject({ readOnly: true, changesSupervision: false });
    for (const c of [
      "baton resume task-1 --unpause",
      "baton rollback --to cp-1",
      "baton doctor --fix",
      "baton state -w",
      "baton export -o /tmp/x.jsonl",
      "baton ledger export --out=spans.json",
      "baton lessons rm les-1",
      "baton checkpoint --all",
    ])
      expect(batonInvocation(c), c).toMatchObject({ readOnly: false, changesSupervision: false });
    expect(batonInvocation("baton hooks uninstall claude")).toMatchObject({ readOnly: false, changesSupervision: true });
    // Trusting the workspace's settings applies its store, private files, spiral and lanes: the
    // user's decision in any form, never the supervised agent's.
    for (const c of [
      "baton trust",
      "baton trust --show",
      "baton trust --revoke --json",
      "npx agent-baton --root /work/app trust",
      "npx -p agent-baton baton trust",
      "baton trust --help",
      // Claude Code's HTTP hooks name the server's port and token: a new token or port redirects them.
      "baton serve --rotate-token",
      "baton serve --port 9999",
      "baton serve --port=0",
    ])
      expect(batonInvocation(c), c).toMatchObject({ changesSupervision: true });
    expect(batonInvocation("baton status --json")).toMatchObject({ changesSupervision: false });
    expect(batonInvocation("baton serve")).toMatchObject({ changesSupervision: false });
    expect(batonInside("true; baton serve --rotate-token &")).toMatchObject({ changesSupervision: true });
    // Baton's plugin or extension removed or disabled with the agent's own CLI: the same decision.
    for (const c of [
      "claude plugin uninstall baton@agent-baton",
      "claude plugin disable baton@agent-baton --scope project",
      "/usr/local/bin/claude plugins remove -s user baton",
      "cd .. && claude plugin uninstall baton@agent-baton",
      "sh -c 'gemini extensions uninstall baton'",
      "gemini extensions disable --scope workspace baton",
      "claude plugin disable --all",
      "claude plugin disable -a",
      "npx @anthropic-ai/claude-code plugin disable baton",
      "claude -d plugin disable baton",
      "claude plugin uninstall bat''on@agent-baton",
      "claude plugin uninstall \\baton@agent-baton",
      "claude plugin marketplace remove agent-baton",
      "copilot plugin uninstall baton@agent-baton",
      "copilot plugin disable baton@agent-baton",
      "copilot plugin uninstall baton",
      "copilot plugin marketplace remove agent-baton",
    ])
      expect(removesBatonPlugin(c), c).toBe(true);
    for (const c of [
      "claude plugin uninstall other-plugin@market",
      "claude plugin install baton@agent-baton",
      "claude plugin list",
      "gemini extensions list",
      "gemini extensions uninstall batonista",
      "echo claude plugin uninstall",
      "npm uninstall baton",
      "claude plugin marketplace remove other-market",
      "claude plugin disable other@market",
      "copilot plugin list --json",
      "copilot plugin uninstall other@market",
    ])
      expect(removesBatonPlugin(c), c).toBe(false);
    // A Baton command inside a compound one is still that command.
    for (const c of [
      "true; baton hooks uninstall copilot",
      "baton hooks uninstall copilot\n",
      "cd . && baton trust",
      'sh -c "baton hooks uninstall claude"',
      "bash -lc 'cd app && npx agent-baton trust'",
      "echo $(baton trust)",
      "env FOO=1 baton hooks install codex --user",
      "sudo -E baton hooks uninstall gemini",
      "sudo -u root baton trust",
      "timeout 10 baton hooks uninstall claude",
      "nice -n 5 env -u HOME baton trust --revoke",
      "git status || /usr/local/bin/baton trust --revoke",
    ])
      expect(batonInside(c), c).toMatchObject({ changesSupervision: true });
    for (const c of [
      "true; baton resume --unpause",
      "npm test && baton rollback --all-lanes",
      // Acting as another lane, or as none, through the variable the lane is read from.
      "unset BATON_OPENCODE_SESSION_ID; baton rollback",
      "BATON_OPENCODE_SESSION_ID=ses_other baton rollback",
      "env -u CLAUDE_CODE_SESSION_ID baton rollback",
      "CODEX_THREAD_ID= npx agent-baton rollback 2",
    ])
      expect(batonInside(c), c).toMatchObject({ overridesLanes: true });
    expect(batonInside("echo $CLAUDE_CODE_SESSION_ID"), "no Baton command").toEqual({ changesSupervision: false, overridesLanes: false });
    for (const c of [
      'grep -r "baton trust" docs/',
      "echo baton hooks uninstall",
      "baton status && npm test",
      "cat README.md; baton hooks status",
      "git commit -m 'baton trust is the user’s step'",
    ])
      expect(batonInside(c), c).toEqual({ changesSupervision: false, overridesLanes: false });
    // Write tools name their files: the settings that supervise the agent are the user's to change.
    for (const f of [
      "/work/app/.claude/settings.local.json",
      "/work/app/.claude/settings.json",
      "/home/dev/.claude/settings.json",
      "/home/dev/.claude/plugins/installed_plugins.json",
      "/work/app/.codex/hooks.json",
      "/home/dev/.codex/config.toml",
      "/work/app/.gemini/settings.json",
      "/home/dev/.gemini/extensions/baton/gemini-extension.json",
      "/home/dev/.gemini/trustedFolders.json",
      "/work/app/.qwen/settings.json",
      "/work/app/.github/hooks/baton.json",
      "/work/app/.github/copilot/settings.local.json",
      "/home/dev/.copilot/config.json",
      "/home/dev/.copilot/installed-plugins/agent-baton/baton/hooks/hooks.json",
      "/work/app/.opencode/plugins/baton.js",
      "/work/app/.opencode/plugin/other.ts",
      "/home/dev/.config/opencode/plugins/baton.js",
      "/work/app/.baton/config.json",
      // The port and token Claude Code's HTTP hooks name.
      "/work/app/.baton/server.key",
      "/home/dev/.config/baton/trust/abc.json",
    ])
      expect(isSupervisionFile(f), f).toBe(true);
    for (const f of [
      "/work/app/src/app.ts",
      "/work/app/.baton/flows/review.json",
      "/work/app/.github/workflows/ci.yml",
      "/work/app/docs/claude.md",
      "/work/app/src/opencode/plugins.ts",
    ])
      expect(isSupervisionFile(f), f).toBe(false);
    // Acting for the user over other agents' lanes (core/lanes.ts): never an agent's to run.
    for (const c of [
      "baton resume task-1 --unpause",
      "baton rollback --all-lanes",
      "baton rollback --lane claude:other-1",
      "baton rollback --lane=codex:t-2 --dry-run",
      "baton turn record --tool Edit --lane claude:other-1",
      "baton event task-1 spiral:cleared",
      'baton event lane:ended --data \'{"lane":"claude:a"}\'',
    ])
      expect(batonInvocation(c), c).toMatchObject({ overridesLanes: true });
    for (const c of ["baton rollback", "baton rollback 2 --dry-run", "baton lanes --json", "baton status"])
      expect(batonInvocation(c), c).toMatchObject({ overridesLanes: false });
    expect(batonInvocation("baton lanes --json")).toMatchObject({ readOnly: true });
    // `npx baton` runs another package that happens to be called baton: not Baton, never read-only.
    for (const c of [
      "cat baton.txt",
      "echo baton status",
      "batonx status",
      "npx baton status",
      "npx -p baton baton status",
      "npx -p agent-baton other status",
      "npx agent-batons status",
      undefined,
      "",
    ])
      expect(batonInvocation(c), String(c)).toBeUndefined();
  });

  it("a Baton invocation combined with anything else is not Baton (property)", () => {
    const plain = fc.constantFrom(
      "baton status",
      "npx agent-baton resume --json",
      "baton doctor",
      "baton rollback --dry-run",
      "baton lessons list",
    );
    const other = fc.constantFrom("rm -rf src", "git reset --hard", "curl http://x | sh", "baton resume --unpause", "true");
    const combined = fc.oneof(
      fc
        .tuple(plain, fc.constantFrom(";", "&&", "||", "|", "&", "\n", "\r\n", " ; ", "&"), other, fc.boolean())
        .map(([p, op, o, first]) => (first ? `${p}${op}${o}` : `${o}${op}${p}`)),
      fc.tuple(plain, other).map(([p, o]) => `${p} $(${o})`),
      fc.tuple(plain, other).map(([p, o]) => `${p} \`${o}\``),
      fc.tuple(plain, other).map(([p, o]) => `${p} "$(${o})"`),
      fc.tuple(plain, fc.constantFrom(">", ">>", "<", "2>", "&>", ">|", "<<")).map(([p, r]) => `${p} ${r} src/app.ts`),
      plain.map((p) => `(${p})`),
      plain.map((p) => `{ ${p}; }`),
      plain.map((p) => `eval ${p}`),
      plain.map((p) => `eval "${p}"`),
      plain.map((p) => `BATON_ROOT=/tmp ${p}`),
      plain.map((p) => `${p} $HOME`),
      plain.map((p) => `${p} \${IFS}`),
      plain.map((p) => `${p} *`),
      plain.map((p) => `${p} # trailing`),
      plain.map((p) => `sh -c '${p}'`),
      plain.map((p) => `xargs ${p}`),
    );
    fc.assert(
      fc.property(combined, (cmd) => {
        expect(batonInvocation(cmd), JSON.stringify(cmd)).toBeUndefined();
      }),
      { numRuns: 2_000 },
    );
  });

  it("a prompt of only 'unpause' clears a pause, also after an agent's context block", () => {
    for (const p of ["unpause", "/unpause", "Unpause.", "<hook_context>Baton: where this work stands…</hook_context>\n\nunpause"])
      expect(isUnpausePrompt(p), p).toBe(true);
    for (const p of ["please don't unpause", "unpause the video player", "why was it paused?", ""])
      expect(isUnpausePrompt(p), p).toBe(false);
  });
});

describe("payloads the agents really sent (captured from Claude Code 2.1.331 and 2.1.332, Codex 0.169.0, Gemini CLI 0.61.0)", () => {
  const real = (agent: string, name: string) =>
    JSON.parse(readFileSync(join(import.meta.dirname, "fixtures", "hooks", agent, `real-${name}.json`), "utf8")) as Record<string, unknown>;
  const parse = (adapter: typeof claude, p: Record<string, unknown>) => adapter.parse(p.hook_event_name as string, p, "/");

  it("a failed shell command is a failure for Claude Code and Gemini CLI", () => {
    expect(parse(claude, real("claude", "post-tool-use-failure-bash"))).toMatchObject({ kind: "after_tool", status: "error" });
    const g = parse(gemini, real("gemini", "after-tool-shell-failure"));
    expect(g).toMatchObject({ kind: "after_tool", status: "error" });
    expect((g as { error: string }).error).toBe("Output: cat: does-not-exist.txt: No such file or directory\nExit Code: 1");
    expect(parse(gemini, real("gemini", "after-tool-shell"))).toMatchObject({ kind: "after_tool", status: "success" });
  });

  it("Claude Code's forked session (`--resume <id> --fork-session`: source fork) starts as a resume", () => {
    const start = JSON.parse(readFileSync(join(import.meta.dirname, "fixtures", "agents", "claude", "SessionStart.resume.json"), "utf8"));
    expect(parse(claude, { ...start, source: "fork" })).toMatchObject({ kind: "session_start", source: "resume" });
    expect(parse(claude, { ...start, source: "something-new" })).toMatchObject({ kind: "session_start", source: "startup" });
  });

  it("Claude Code's PreSkillShellCommand (2.1.332) is a shell command's before-hook, refused in its own name", () => {
    const p = real("claude", "pre-skill-shell-command");
    const ev = parse(claude, p);
    expect(ev).toMatchObject({
      kind: "before_tool",
      native: "PreSkillShellCommand",
      tool: { kind: "shell", name: "Bash", command: "echo stamped > stamp.txt && echo ok" },
    });
    // The lines of one command run wait for every hook, then run together: one call id, one checkpoint.
    expect(p.tool_use_id).toMatch(/:preamble-0$/);
    const line = (n: number) => parse(claude, { ...p, tool_use_id: String(p.tool_use_id).replace(/0$/, String(n)) });
    const ids = [0, 1, 12].map((n) => {
      const e = line(n);
      return e.kind === "before_tool" ? e.tool.callId : undefined;
    });
    expect(ids).toEqual(Array(3).fill(String(p.tool_use_id).replace(/:preamble-0$/, "")));
    // A PreToolUse keeps its id as it is.
    expect(parse(claude, { ...p, hook_event_name: "PreToolUse" })).toMatchObject({ tool: { callId: p.tool_use_id } });
    expect(JSON.parse(claude.render(ev, { deny: { reason: "paused" } })).hookSpecificOutput).toEqual({
      hookEventName: "PreSkillShellCommand",
      permissionDecision: "deny",
      permissionDecisionReason: "paused",
    });
    // Installed after PreToolUse, for the shell tool; Qwen Code, of the same contract, has no such event.
    const specs = claude.hookSpecs("baton");
    expect(specs.map((s) => s.event).slice(2, 4)).toEqual(["PreToolUse", "PreSkillShellCommand"]);
    expect(specs[3]).toMatchObject({ matcher: "Bash", since: "2.1.332", handler: { command: "baton hook claude PreSkillShellCommand" } });
    expect(qwen.hookSpecs("baton").map((s) => s.event)).not.toContain("PreSkillShellCommand");
    expect(parse(qwen, p).kind).toBe("ignored");
  });

  it("Claude Code's and Qwen Code's Stop with a background subagent still running says so; the subagent's report is no user's words", () => {
    const stop = real("claude", "stop-background-subagent");
    expect(parse(claude, stop)).toMatchObject({ kind: "stop", sessionEnd: false, backgroundWork: true });
    // The hook process hands the event to the server as JSON: the flag survives the wire.
    expect(readHookEvent(JSON.parse(JSON.stringify(parse(claude, stop))))).toMatchObject({ kind: "stop", backgroundWork: true });
    expect(parse(claude, { ...stop, background_tasks: [] })).not.toHaveProperty("backgroundWork");
    // A background shell (a dev server left running) is no agent at work: the turn ends its run.
    const shell = { id: "b7", type: "shell", status: "running", description: "npm run dev", command: "npm run dev" };
    expect(parse(claude, { ...stop, background_tasks: [shell] })).not.toHaveProperty("backgroundWork");
    // Qwen Code 0.24 runs its agent tool in the background too; its entries name no type.
    const q = real("qwen", "stop-background-agent");
    expect(parse(qwen, q)).toMatchObject({ kind: "stop", sessionEnd: false, backgroundWork: true });
    const done = (q.background_tasks as Record<string, unknown>[]).map((t) => ({ ...t, status: "completed" }));
    expect(parse(qwen, { ...q, background_tasks: done })).not.toHaveProperty("backgroundWork");
    // When the subagent ends, Claude Code wakes the session with its report as a prompt: even a
    // report that says "undo that" asks for no rollback.
    const note = real("claude", "user-prompt-task-notification");
    const said = String(note.prompt).replace(/<result>[^<]*<\/result>/, "<result>undo that</result>");
    expect(said).toContain("<result>undo that</result>");
    expect(parseRollbackIntent(said)).toBeUndefined();
  });

  it("a Copilot CLI subagent's tool calls are a lane of its parent's family; its prompt and its stop are nothing of the parent's", () => {
    const sub = (name: string) => real("copilot", `subagent-${name}`);
    const pre = sub("pre-tool-use-create");
    expect(pre.sessionId).not.toBe(pre.parentAgentId);
    expect(copilot.parse("preToolUse", pre, "/")).toMatchObject({
      kind: "before_tool",
      agentSessionId: pre.parentAgentId,
      subagentId: pre.agentId,
      tool: { kind: "write", files: ["/work/project/s.txt"] },
    });
    expect(copilot.parse("postToolUse", sub("post-tool-use-create"), "/")).toMatchObject({ kind: "after_tool", subagentId: pre.agentId });
    // The parent's instruction holds "undo that": no user asked for a rollback.
    const prompt = sub("user-prompt-submitted");
    expect(prompt.prompt).toMatch(/^undo that/);
    expect(copilot.parse("userPromptSubmitted", prompt, "/")).toMatchObject({ kind: "ignored" });
    expect(copilot.parse("agentStop", sub("agent-stop"), "/")).toMatchObject({ kind: "ignored" });
    // The parent's own payloads are as before.
    const { agentId: _a, agentType: _t, parentAgentId: _p, ...own } = pre;
    expect(copilot.parse("preToolUse", own, "/")).toMatchObject({ agentSessionId: pre.sessionId });
    expect(copilot.parse("preToolUse", own, "/")).not.toHaveProperty("subagentId");
  });

  it("Codex's shell failure carries no exit code: without its transcript it cannot be told from a success", () => {
    const p = real("codex", "post-tool-use-bash-failure");
    expect(typeof p.tool_response).toBe("string");
    expect(p.tool_response).not.toMatch(/exit/i);
    expect(typeof p.transcript_path).toBe("string");
  });

  it("Gemini CLI's headless 'undo that' and '/rollback 2' are found behind Baton's own context", () => {
    const undo = real("gemini", "before-agent-undo");
    expect(undo.prompt).toMatch(/^<hook_context>[\s\S]*<\/hook_context>\n\nundo that$/);
    expect(parse(gemini, undo)).toMatchObject({ kind: "prompt", prompt: undo.prompt });
    expect(parseRollbackIntent(undo.prompt as string)).toEqual({ steps: 1 });
    expect(parseRollbackIntent(real("gemini", "before-agent-rollback").prompt as string)).toEqual({ steps: 2 });
  });

  it("Gemini CLI's PreCompress 'auto' is no announced compaction: it only keeps STATE.md current", () => {
    const auto = parse(gemini, real("gemini", "pre-compress"));
    expect(auto).toMatchObject({ kind: "pre_compact", trigger: "auto", ifChanged: true });
    expect((auto as { announced?: boolean }).announced).toBeUndefined();
    expect(parse(gemini, { ...real("gemini", "pre-compress"), trigger: "manual" })).toMatchObject({ kind: "pre_compact", announced: true });
  });
});

describe("Codex hook trust", () => {
  it("hashes a hook exactly as Codex 0.169 does (values from its `hooks/list`)", () => {
    const cmd = (command: string, timeout?: number, extra: Record<string, unknown> = {}) => ({
      type: "command",
      command,
      ...(timeout !== undefined ? { timeout } : {}),
      ...extra,
    });
    expect(codexHookHash("PreToolUse", "apply_patch|Bash", cmd("baton hook codex PreToolUse", 60))).toBe(
      "sha256:866af5cea27c0f3e1cb5167652074ee1febd29720a56fa16f2d73f14b63a12fd",
    );
    expect(codexHookHash("SessionStart", undefined, cmd("baton hook codex SessionStart", 60))).toBe(
      "sha256:0925acc61a5eade0bde2bfcfd993344d0647de57f2570a38f3407ee7f1c69b86",
    );
    // UserPromptSubmit drops its matcher; no timeout is 600.
    expect(codexHookHash("UserPromptSubmit", "zzz", cmd("baton hook codex UserPromptSubmit"))).toBe(
      "sha256:08216ed9eb64728e64c5590d8fa6527c62430d5229225fc4c030b4919c40b763",
    );
    // SessionEnd's timeout is clamped to 3 before hashing.
    expect(codexHookHash("SessionEnd", undefined, cmd("b SessionEnd", 60))).toBe(
      "sha256:5bcb29b38f44f04d56c616a44b557358d462b7a725ef399e1558eeb14d713799",
    );
    expect(codexHookHash("SessionStart", "startup", cmd("b s", 60, { statusMessage: "hi" }))).toBe(
      "sha256:cd79358837c918fd4e1b6fac1eb8cc35d80f9635040578805e67f0a136b8ba44",
    );
  });

  it("writes trusted_hash tables, updates them in place, and leaves a config it cannot follow alone", () => {
    const e = [{ event: "Stop", key: "/p/.codex/hooks.json:stop:0:0", hash: "sha256:a" }];
    const once = withCodexTrust('model = "m" # mine\n', e) as string;
    expect(once).toBe('model = "m" # mine\n\n[hooks.state."/p/.codex/hooks.json:stop:0:0"]\ntrusted_hash = "sha256:a"\n');
    expect(codexTrustedHashes(once).get("/p/.codex/hooks.json:stop:0:0")).toBe("sha256:a");
    const again = withCodexTrust(once, [{ ...e[0], hash: "sha256:b" } as (typeof e)[0]]) as string;
    expect(again).toBe(once.replace("sha256:a", "sha256:b"));
    expect(withCodexTrust(again, [], [e[0]?.key as string])).toBe('model = "m" # mine\n');
    // A multi-line string that looks like a table is not one.
    const ml = 'instructions = """\n[hooks.state."x"]\ntrusted_hash = "no"\n"""\n';
    expect(codexTrustedHashes(ml).size).toBe(0);
    expect(withCodexTrust(ml, e)).toBe(`${ml}\n[hooks.state."/p/.codex/hooks.json:stop:0:0"]\ntrusted_hash = "sha256:a"\n`);
    for (const other of ["hooks.state = {}\n", "[hooks]\nstate = { x = 1 }\n", "hooks = { }\n"])
      expect(withCodexTrust(other, e), other).toBeUndefined();
  });
});

describe("Codex hook trust in config.toml Baton did not write", () => {
  const hash = "sha256:ab";
  it("a key holding `]` (a project path with one) is one table, updated in place", () => {
    const key = "/p/a]b [x]/.codex/hooks.json:stop:0:0";
    const once = withCodexTrust('model = "m"\n', [{ event: "Stop", key, hash }]) as string;
    expect(withCodexTrust(once, [{ event: "Stop", key, hash }])).toBe(once);
    const twice = withCodexTrust(once, [{ event: "Stop", key, hash: "sha256:cd" }]) as string;
    expect(twice.match(/hooks\.state/g)).toHaveLength(1);
    expect(codexTrustedHashes(twice).get(key)).toBe("sha256:cd");
    expect(withCodexTrust(twice, [], [key])).toBe('model = "m"\n');
  });

  it("keys given inside [hooks.state] are existing entries: read, never written a second time", () => {
    const key = "/p/.codex/hooks.json:stop:0:0";
    for (const form of [`${JSON.stringify(key)} = { trusted_hash = "${hash}" }`, `${JSON.stringify(key)}.trusted_hash = "${hash}"`]) {
      const toml = `[hooks.state]\n${form}\n`;
      expect(codexTrustedHashes(toml).get(key), form).toBe(hash);
      expect(withCodexTrust(toml, [{ event: "Stop", key, hash: "sha256:cd" }]), form).toBeUndefined();
      expect(withCodexTrust(toml, [], [key]), form).toBeUndefined();
      // Another key is added as its own table (valid beside the inline one).
      const other = withCodexTrust(toml, [{ event: "Stop", key: `${key}x`, hash }]) as string;
      expect(codexTrustedHashes(other).get(`${key}x`)).toBe(hash);
    }
  });

  it("any key: recording twice gives the same text, which reads back, and dropping restores the file (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.string({ minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 4 }), (names) => {
        const entries = [...new Set(names)].map((n, i) => ({ event: "Stop", key: `/p/${n}:stop:${i}:0`, hash: `sha256:${i}` }));
        const base = 'model = "m"\n\n[projects."/p/]x"]\ntrust_level = "trusted"\n';
        const once = withCodexTrust(base, entries) as string;
        expect(withCodexTrust(once, entries)).toBe(once);
        const read = codexTrustedHashes(once);
        for (const e of entries) expect(read.get(e.key)).toBe(e.hash);
        expect(
          withCodexTrust(
            once,
            [],
            entries.map((e) => e.key),
          ),
        ).toBe(base);
      }),
    );
  });

  it("dropping a table stops at its last key: comments and blank lines before the next table stay", () => {
    const key = "/p/.codex/hooks.json:stop:0:0";
    const t = `a = 1\n\n[hooks.state.${JSON.stringify(key)}]\ntrusted_hash = "x"\n\n# the docs server\n[mcp_servers.docs]\ncommand = "d"\n`;
    expect(withCodexTrust(t, [], [key])).toBe('a = 1\n\n# the docs server\n[mcp_servers.docs]\ncommand = "d"\n');
  });

  it("each line keeps its own ending (a CRLF file with an LF-only multi-line string)", () => {
    const t = 'model = "m"\r\ninstructions = """\none\ntwo"""\r\n';
    const key = "/p/.codex/hooks.json:stop:0:0";
    const once = withCodexTrust(t, [{ event: "Stop", key, hash }]) as string;
    expect(once).toBe(`${t}\r\n[hooks.state.${JSON.stringify(key)}]\r\ntrusted_hash = "${hash}"\r\n`);
    expect(withCodexTrust(once, [], [key])).toBe(t);
  });

  it("a file that already defines a key twice is not written", () => {
    const t = '[hooks.state."k"]\ntrusted_hash = "sha256:a"\n\n[hooks.state."k"]\ntrusted_hash = "sha256:a"\n';
    expect(withCodexTrust(t, [{ event: "Stop", key: "j", hash }])).toBeUndefined();
  });
});

describe("session context", () => {
  const brief: SessionBrief = {
    sessionId: "task-1",
    title: "Fix login",
    flow: "task",
    phase: "in_progress",
    progress: { total: 10, completed: 3 },
    nextAction: { action: "continue_task", reason: "carry on", command: "baton resume task-1 --json" },
    suggestions: [],
    activeBlockers: [{ id: "blk-1", text: "CI is red", state: "active", since: "", updated: "" }],
    recentDecisions: [{ seq: 1, decision: "keep the cookie", reason: "simpler", alternatives: [], date: "" }],
  };

  it("renders the next action first and drops what does not fit", () => {
    const full = renderSessionContext(brief, {
      maxChars: 10_000,
      source: "resume",
      extra: ["## Lessons from earlier attempts\n- read first (les-1)"],
    });
    expect(full.indexOf("## Next action")).toBeLessThan(full.indexOf("## Active blockers"));
    expect(full).toContain("progress 3/10");
    expect(full).toContain("## Lessons from earlier attempts");
    const small = renderSessionContext(brief, { maxChars: 420, extra: ["x".repeat(500)] });
    expect(small.length).toBeLessThanOrEqual(420);
    expect(small).toContain("## Next action");
    expect(small).not.toContain("xxxx");
  });

  it("fitSections cuts a first section that alone is too long", () => {
    expect(fitSections(["abcdef", "g"], 4)).toBe("abc…");
    expect(fitSections(["ab", "cd", "efghij"], 7)).toBe("ab\n\ncd");
  });
});

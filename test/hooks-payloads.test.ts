/**
 * The adapters on what the agents really send: every payload in test/fixtures/agents/<agent>/
 * was captured from the real CLI by the agent e2e suite (test/agents/; refresh them with
 * `BATON_AGENT_FIXTURES=write npx vitest run test/agents/`). Paths there are scrubbed: the
 * project is /work/project.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { failureFingerprint } from "../src/core/fingerprint.js";
import { claude } from "../src/core/hooks/claude.js";
import { codex } from "../src/core/hooks/codex.js";
import { COPILOT_PATH_GUARD, copilot } from "../src/core/hooks/copilot.js";
import { gemini } from "../src/core/hooks/gemini.js";
import { OPENCODE_EVENTS, opencode } from "../src/core/hooks/opencode.js";
import { qwen } from "../src/core/hooks/qwen.js";
import { parseRollbackIntent } from "../src/core/hooks/rollback-intent.js";
import { type AgentAdapter, type HookEvent, isNoop } from "../src/core/hooks/types.js";
import { codexCallOutcome } from "../src/hooks/codex-transcript.js";

const DIR = join(import.meta.dirname, "fixtures", "agents");
const ADAPTERS: Record<string, AgentAdapter> = { claude, codex, gemini, qwen, copilot };
const ROOT = "/work/project";
const FAIL_CMD = "cat does-not-exist.txt";

function fixtures(agent: string): { name: string; event: string; payload: Record<string, unknown> }[] {
  return readdirSync(join(DIR, agent))
    .filter((f) => f.endsWith(".json"))
    .map((f) => {
      const payload = JSON.parse(readFileSync(join(DIR, agent, f), "utf8"));
      // Codex's transcript, cut to the captured calls, is kept beside the payloads.
      if (agent === "codex" && typeof payload.transcript_path === "string") payload.transcript_path = join(DIR, agent, "rollout.jsonl");
      return { name: f, event: f.split(".")[0] as string, payload };
    });
}

function parse(agent: string, event: string, payload: Record<string, unknown>): HookEvent {
  // The edge reads Codex's transcript; the adapter gets what it read.
  return (ADAPTERS[agent] as AgentAdapter).parse(event, payload, "/", { codexCallOutcome });
}

/** The files a write tool names, relative to the project. */
function rel(files: string[]): string[] {
  return files.map((f) => (f.startsWith(`${ROOT}/`) ? f.slice(ROOT.length + 1) : f));
}

describe.each(["claude", "codex", "gemini", "qwen", "copilot"])("%s: the real payloads", (agent) => {
  const all = fixtures(agent);

  it("every captured event is one Baton acts on, for the agent's session and cwd", () => {
    expect(all.length).toBeGreaterThan(5);
    for (const f of all) {
      const ev = parse(agent, f.event, f.payload);
      // Gemini CLI sends PreCompress ("auto") before every model request, compression or not:
      // the payload alone cannot say, so whether Baton acts on it is the e2e suite's question
      // (test/agents/suite.ts, "the one real compaction is noted once").
      if (!(agent === "gemini" && f.event === "PreCompress")) expect(ev.kind, f.name).not.toBe("ignored");
      expect(ev.cwd, f.name).toBe(ROOT);
      expect(ev.agentSessionId, f.name).toBeTruthy();
    }
  });

  it("before a write, the files it will write; before a shell command, the command", () => {
    const before = all.filter((f) => /^(PreToolUse|BeforeTool)\./i.test(f.name) && f.name.split(".").length === 3);
    expect(before.length).toBeGreaterThanOrEqual(2);
    for (const f of before) {
      const ev = parse(agent, f.event, f.payload);
      if (ev.kind !== "before_tool") throw new Error(`${f.name}: ${ev.kind}`);
      // Copilot CLI names the arguments `toolArgs`.
      const input = JSON.stringify(f.payload.tool_input ?? f.payload.toolArgs);
      if (ev.tool.kind === "write")
        expect(rel(ev.tool.files).every((p) => input.includes(p)) && ev.tool.files.length > 0, f.name).toBe(true);
      else {
        expect(ev.tool.kind, f.name).toBe("shell");
        expect(input, f.name).toContain(JSON.stringify(ev.tool.command).slice(1, -1));
      }
    }
    const tools = before.map((f) => parse(agent, f.event, f.payload)).map((e) => (e.kind === "before_tool" ? e.tool.kind : ""));
    expect(tools).toContain("write");
    expect(tools).toContain("shell");
  });

  it("a failing shell command is a failure; the others succeeded", () => {
    const after = all.filter((f) => /^(PostToolUse|PostToolUseFailure|AfterTool)\./i.test(f.name) && f.name.split(".").length >= 3);
    const failed = after.filter((f) => JSON.stringify(f.payload).includes(FAIL_CMD));
    expect(failed.length).toBeGreaterThan(0);
    for (const f of after) {
      const ev = parse(agent, f.event, f.payload);
      if (ev.kind !== "after_tool") throw new Error(`${f.name}: ${ev.kind}`);
      expect(ev.status, f.name).toBe(failed.includes(f) ? "error" : "success");
    }
  });

  it('"undo that" and "/rollback 2" are found in the prompt the agent sends', () => {
    const prompts = all.filter(
      (f) => /\.(undo|rollback)\.json$/.test(f.name) && /^(UserPromptSubmit|BeforeAgent|userPromptSubmitted)/.test(f.name),
    );
    expect(prompts.length).toBe(2);
    for (const f of prompts) {
      const ev = parse(agent, f.event, f.payload);
      if (ev.kind !== "prompt") throw new Error(`${f.name}: ${ev.kind}`);
      expect(parseRollbackIntent(ev.prompt), f.name).toEqual({ steps: f.name.includes(".undo.") ? 1 : 2 });
    }
  });

  it("a turn ends with Stop, or with the agent's own failure event", () => {
    for (const f of all.filter((x) => /^(Stop|StopFailure|AfterAgent|agentStop)\.json$/.test(x.name)))
      expect(parse(agent, f.event, f.payload), f.name).toMatchObject({ kind: "stop", sessionEnd: false });
  });

  it("session starts carry their source", () => {
    for (const f of all.filter((x) => /^SessionStart\.(startup|resume|compact)\.json$/i.test(x.name))) {
      const ev = parse(agent, f.event, f.payload);
      expect(ev, f.name).toMatchObject({ kind: "session_start", source: f.name.split(".")[1] });
    }
  });
});

describe("qwen: what its payloads carry beyond Claude Code's", () => {
  const all = fixtures("qwen");
  const named = (name: string) => all.find((f) => f.name === name)?.payload as Record<string, unknown>;

  it("the requests of a turn that return tool results fire UserPromptSubmit with no words: nothing for Baton to do", () => {
    const prompt = named("UserPromptSubmit.json");
    const continuation: Record<string, unknown> = { ...prompt, prompt: "" };
    delete continuation.submitted_prompt;
    expect(parse("qwen", "UserPromptSubmit", prompt)).toMatchObject({ kind: "prompt", prompt: "Make the planned changes." });
    expect(parse("qwen", "UserPromptSubmit", continuation)).toMatchObject({ kind: "ignored", agentSessionId: prompt.session_id });
  });

  it("a shell command's output reaches the ledger as the model saw it; a failure keeps the command's result text", () => {
    const ok = parse("qwen", "PostToolUse", named("PostToolUse.run_shell_command.json"));
    if (ok.kind !== "after_tool") throw new Error(ok.kind);
    expect(ok.output).toEqual(expect.stringContaining("Exit Code: 0"));
    const failed = parse("qwen", "PostToolUseFailure", named("PostToolUseFailure.run_shell_command.failure.json"));
    if (failed.kind !== "after_tool") throw new Error(failed.kind);
    expect(failed.error).toContain("Exit Code: 1");
    expect(failed.tool).toMatchObject({ kind: "shell", command: FAIL_CMD });
    // The same failure with its process group still alive, or a background process, is the same failure.
    const payload = named("PostToolUseFailure.run_shell_command.failure.json") as { error: string };
    const alive = parse("qwen", "PostToolUseFailure", {
      ...payload,
      error: payload.error.replace("Process Group PGID: (none)", "Background PIDs: 5120\nProcess Group PGID: 41234"),
    });
    if (alive.kind !== "after_tool" || failed.error === undefined || alive.error === undefined) throw new Error(alive.kind);
    expect(alive.error).toBe(failed.error);
    expect(failed.error).not.toMatch(/PGID/);
    expect(failureFingerprint(alive.error)).toBe(failureFingerprint(failed.error));
  });

  it("a deny and context are rendered in Claude Code's envelope, which Qwen Code reads", () => {
    const before = parse("qwen", "PreToolUse", named("PreToolUse.write_file.json"));
    expect(JSON.parse(qwen.render(before, { deny: { reason: "paused" } }))).toEqual({
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "paused" },
    });
    const start = parse("qwen", "SessionStart", named("SessionStart.startup.json"));
    expect(JSON.parse(qwen.render(start, { context: "where it stands", userMessage: "hi" }))).toEqual({
      systemMessage: "hi",
      hookSpecificOutput: { hookEventName: "SessionStart", additionalContext: "where it stands" },
    });
    expect(qwen.passThrough("PreToolUse")).toBe("");
  });
});

describe("copilot: what its payloads carry", () => {
  const all = fixtures("copilot");
  const named = (name: string) => all.find((f) => f.name === name)?.payload as Record<string, unknown>;
  /** Captured from the same CLI outside the e2e story (an edit of a missing file throws). */
  const thrown = JSON.parse(readFileSync(join(import.meta.dirname, "fixtures", "hooks", "copilot", "post-tool-use-failure.json"), "utf8"));

  it("camelCase fields: the session id, a new session as a startup, the send time (no call id) that tells identical calls apart", () => {
    const start = parse("copilot", "sessionStart", named("sessionStart.new.json"));
    expect(start).toMatchObject({ kind: "session_start", source: "startup", agentSessionId: named("sessionStart.new.json").sessionId });
    const before = parse("copilot", "preToolUse", named("preToolUse.bash.json"));
    if (before.kind !== "before_tool") throw new Error(before.kind);
    expect(before.sentAt).toBe(String(named("preToolUse.bash.json").timestamp));
    expect(before.tool.callId).toBeUndefined();
  });

  it("a shell command's result without the shell's running number; a non-zero exit is the failure, with its code", () => {
    const failed = named("postToolUse.bash.failure.json");
    const ev = parse("copilot", "postToolUse", failed);
    if (ev.kind !== "after_tool") throw new Error(ev.kind);
    expect(ev.status).toBe("error");
    expect(ev.error).toBe("cat: does-not-exist.txt: No such file or directory\nExit Code: 1");
    expect(String(ev.output)).not.toMatch(/shellId/);
    // The same command in another shell gives the same result text.
    const again = structuredClone(failed) as { toolResult: { textResultForLlm: string } };
    again.toolResult.textResultForLlm = again.toolResult.textResultForLlm.replace(/shellId: \d+/, "shellId: 42");
    const ev2 = parse("copilot", "postToolUse", again);
    expect(ev2.kind === "after_tool" && ev2.output).toBe(ev.output);
  });

  it("a call a hook or the user refused never ran: neither a failure (the spiral it answers must not count it) nor a success; a timeout fails", () => {
    const result = (resultType: string) => {
      const p = structuredClone(named("postToolUse.bash.json")) as { toolResult: Record<string, unknown> };
      p.toolResult = { resultType, textResultForLlm: "Denied by preToolUse hook: the session is paused" };
      const ev = parse("copilot", "postToolUse", p);
      return ev.kind === "after_tool" ? ev.status : ev.kind;
    };
    expect(result("denied")).toBe("ignored");
    expect(result("rejected")).toBe("ignored");
    expect(result("timeout")).toBe("error");
    expect(result("failure")).toBe("error");
  });

  it("a tool that throws is postToolUseFailure with its error", () => {
    expect(parse("copilot", "postToolUseFailure", thrown)).toMatchObject({
      kind: "after_tool",
      status: "error",
      error: thrown.error,
      tool: { kind: "write", name: "edit" },
    });
  });

  it("apply_patch (offered to GPT-5 models instead of create and edit): the patch is the arguments, a string, and names the files", () => {
    const patch = JSON.parse(
      readFileSync(join(import.meta.dirname, "fixtures", "hooks", "copilot", "pre-tool-use-apply-patch.json"), "utf8"),
    );
    expect(parse("copilot", "preToolUse", patch)).toMatchObject({
      kind: "before_tool",
      tool: { kind: "write", files: ["p.txt", "a.txt"] },
    });
  });

  it("preCompact fires only for a compaction that starts, and nothing follows it: the compaction is noted there", () => {
    expect(parse("copilot", "preCompact", named("preCompact.json"))).toMatchObject({
      kind: "pre_compact",
      trigger: "manual",
      announced: true,
    });
  });

  it("a deny and context are flat fields, which Copilot CLI reads", () => {
    const before = parse("copilot", "preToolUse", named("preToolUse.create.json"));
    expect(JSON.parse(copilot.render(before, { deny: { reason: "paused" } }))).toEqual({
      permissionDecision: "deny",
      permissionDecisionReason: "paused",
    });
    const start = parse("copilot", "sessionStart", named("sessionStart.new.json"));
    expect(JSON.parse(copilot.render(start, { context: "where it stands", userMessage: "hi" }))).toEqual({
      additionalContext: "where it stands",
    });
    expect(copilot.render(parse("copilot", "agentStop", named("agentStop.json")), { context: "x" })).toBe("");
    expect(copilot.passThrough("preToolUse")).toBe("");
  });

  it("hooks a team commits run baton only where it is on PATH (a failing preToolUse hook denies the call)", () => {
    const shared = copilot.hookSpecs("baton");
    expect(shared.every((h) => h.handler.command.startsWith(COPILOT_PATH_GUARD))).toBe(true);
    const local = copilot.hookSpecs("/usr/bin/node /opt/baton.js");
    expect(local.map((h) => h.handler.command)).toContain("/usr/bin/node /opt/baton.js hook copilot preToolUse");
  });
});

describe("opencode: the payloads its plugin sends, captured from the real CLI", () => {
  // The plugin's event names have dots: `<event>[.<variant>].json`.
  const all = readdirSync(join(DIR, "opencode"))
    .filter((f) => f.endsWith(".json"))
    .map((name) => {
      const event = OPENCODE_EVENTS.find((e) => name.startsWith(`${e}.`)) as string;
      return { name, event, payload: JSON.parse(readFileSync(join(DIR, "opencode", name), "utf8")) };
    });
  const named = (name: string) => all.find((f) => f.name === name)?.payload as Record<string, unknown>;
  const parseOc = (name: string) => opencode.parse(all.find((f) => f.name === name)?.event as string, named(name), "/");

  it("every captured event is one Baton acts on, for OpenCode's session and the plugin's directory", () => {
    expect(all.length).toBeGreaterThan(10);
    for (const f of all) {
      expect(f.event, f.name).toBeDefined();
      const ev = opencode.parse(f.event, f.payload, "/");
      expect(ev.kind, f.name).not.toBe("ignored");
      expect(ev.cwd, f.name).toBe(ROOT);
      expect(ev.agentSessionId, f.name).toMatch(/^ses_/);
    }
  });

  it("before a write, the file it writes; before a shell command, the command; a read is nothing to do", () => {
    expect(parseOc("tool.execute.before.write.json")).toMatchObject({
      kind: "before_tool",
      tool: { kind: "write", files: [`${ROOT}/new.txt`], callId: expect.stringMatching(/^call_/) },
    });
    expect(parseOc("tool.execute.before.edit.json")).toMatchObject({ tool: { kind: "write", files: [`${ROOT}/a.txt`] } });
    expect(parseOc("tool.execute.before.bash.json")).toMatchObject({ tool: { kind: "shell", command: "echo made-by-shell > c.txt" } });
    const read = parseOc("tool.execute.before.read.json");
    expect(read).toMatchObject({ tool: { kind: "other" } });
    expect(isNoop(read)).toBe(true);
  });

  it("a shell command's exit code (metadata.exit) tells a failure; the result is what the model read", () => {
    const failed = parseOc("tool.execute.after.bash.failure.json");
    if (failed.kind !== "after_tool") throw new Error(failed.kind);
    expect(failed.status).toBe("error");
    expect(failed.error).toContain("Exit Code: 1");
    const ok = parseOc("tool.execute.after.bash.json");
    if (ok.kind !== "after_tool") throw new Error(ok.kind);
    expect(ok.status).toBe("success");
    expect(parseOc("tool.execute.after.write.json")).toMatchObject({
      kind: "after_tool",
      status: "success",
      output: "Wrote file successfully.",
    });
  });

  it('"undo that" and "/rollback 2" are found in the prompt; `opencode run`\'s quotes around a prompt with a space are not the user\'s', () => {
    expect(parseRollbackIntent((parseOc("chat.message.undo.json") as { prompt: string }).prompt)).toEqual({ steps: 1 });
    expect(parseRollbackIntent((parseOc("chat.message.rollback.json") as { prompt: string }).prompt)).toEqual({ steps: 2 });
    const quoted = opencode.parse("chat.message", { ...named("chat.message.undo.json"), prompt: '"undo that"' }, "/");
    expect(quoted).toMatchObject({ kind: "prompt", prompt: "undo that" });
  });

  it("sessions start with their source, compaction is seen before and after, a turn and the run end", () => {
    for (const source of ["startup", "resume", "compact"])
      expect(parseOc(`session.created.${source}.json`)).toMatchObject({ kind: "session_start", source });
    expect(parseOc("experimental.session.compacting.json")).toMatchObject({ kind: "pre_compact" });
    expect(parseOc("session.compacted.json")).toMatchObject({ kind: "post_compact" });
    expect(parseOc("session.idle.json")).toMatchObject({ kind: "stop", sessionEnd: false });
    expect(parseOc("dispose.json")).toMatchObject({ kind: "stop", sessionEnd: true });
  });

  it("a tool that threw (OpenCode's tool part in the error state) is a failure of that call", () => {
    const ev = JSON.parse(readFileSync(join(import.meta.dirname, "fixtures", "hooks", "opencode", "tool-part-error.json"), "utf8"));
    const part = ev.properties.part;
    // What the plugin sends for it (src/hooks/opencode-plugin.ts).
    const payload = {
      session_id: part.sessionID,
      cwd: ROOT,
      call_id: part.callID,
      tool: part.tool,
      args: part.state.input,
      error: part.state.error,
    };
    expect(opencode.parse("tool.execute.error", payload, "/")).toMatchObject({
      kind: "after_tool",
      status: "error",
      error: expect.stringContaining("Could not find oldString"),
      tool: { kind: "write", files: [`${ROOT}/a.txt`], callId: part.callID },
    });
  });

  it("a deny is the reason the plugin throws; context goes to the plugin only where it can give it to the model", () => {
    const before = parseOc("tool.execute.before.bash.json");
    expect(JSON.parse(opencode.render(before, { deny: { reason: "paused" } }))).toEqual({ deny: "paused" });
    const start = parseOc("session.created.startup.json");
    expect(JSON.parse(opencode.render(start, { context: "where it stands", userMessage: "hi" }))).toEqual({ context: "where it stands" });
    expect(opencode.render(parseOc("session.idle.json"), { context: "x" })).toBe("");
    expect(opencode.passThrough("tool.execute.before")).toBe("");
  });
});

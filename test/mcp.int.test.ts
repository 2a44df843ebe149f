// `baton mcp` end to end: the SDK's own client drives the real built CLI over stdio.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { CLI, cleanupDirs, cli, REPO, tempDir } from "./helpers.js";

afterAll(() => cleanupDirs());

const ENV = { ...(process.env as Record<string, string>), BATON_DURABILITY: "relaxed" };
const open: Client[] = [];
afterEach(async () => {
  for (const c of open.splice(0)) await c.close();
});

function workspace(init = true): string {
  const root = tempDir("baton-mcp-");
  if (init) expect(cli(["init", "--root", root]).code).toBe(0);
  return root;
}

async function connect(root: string, env: Record<string, string> = {}): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, "mcp", "--root", root],
    env: { ...ENV, ...env },
    stderr: "pipe",
  });
  const client = new Client({ name: "baton-test", version: "1.0.0" });
  await client.connect(transport);
  open.push(client);
  return client;
}

interface Answer {
  isError: boolean;
  body: any;
}

async function call(c: Client, name: string, args: Record<string, unknown> = {}): Promise<Answer> {
  const r = (await c.callTool({ name, arguments: args })) as { isError?: boolean; content: { type: string; text: string }[] };
  expect(r.content[0]?.type).toBe("text");
  return { isError: r.isError === true, body: JSON.parse(r.content[0]?.text ?? "") };
}

async function ok(c: Client, name: string, args: Record<string, unknown> = {}): Promise<any> {
  const a = await call(c, name, args);
  if (a.isError) throw new Error(`${name} failed: ${JSON.stringify(a.body)}`);
  return a.body;
}

async function fails(c: Client, name: string, args: Record<string, unknown>, code: string): Promise<any> {
  const a = await call(c, name, args);
  expect(a.isError).toBe(true);
  expect(a.body.error.code).toBe(code);
  expect(typeof a.body.error.message).toBe("string");
  return a.body.error;
}

describe("baton mcp", () => {
  it("lists tools with precise input schemas, the resources and the prompt", async () => {
    const root = workspace();
    cli(["session", "start", "--flow", "task", "--id", "s1", "--title", "Listed", "--root", root]);
    const c = await connect(root);
    expect(c.getServerVersion()?.name).toBe("baton");
    expect(c.getInstructions()).toContain("status");

    const { tools } = await c.listTools();
    const names = tools.map((t) => t.name).sort();
    expect(names).toEqual(
      [
        "add_blocker",
        "add_decision",
        "checkpoint",
        "doctor",
        "ledger_recent",
        "lessons_add",
        "lessons_inject",
        "lessons_search",
        "list_checkpoints",
        "record_event",
        "resolve_blocker",
        "resume",
        "rollback",
        "set_position",
        "start_session",
        "status",
      ].sort(),
    );
    for (const t of tools) {
      expect(t.description, t.name).toBeTruthy();
      expect(t.inputSchema.additionalProperties, t.name).toBe(false);
      for (const [field, schema] of Object.entries(t.inputSchema.properties ?? {}))
        expect((schema as { description?: string }).description, `${t.name}.${field}`).toBeTruthy();
    }
    const schema = (name: string) => tools.find((t) => t.name === name)?.inputSchema as any;
    expect(schema("rollback").properties.steps).toMatchObject({ type: "integer", minimum: 1, maximum: 1000 });
    expect(schema("rollback").properties.dryRun).toMatchObject({ type: "boolean", default: false });
    expect(schema("ledger_recent").properties.status.enum).toEqual(["success", "error", "no_progress", "recovered", "aborted"]);
    expect(schema("ledger_recent").properties.limit).toMatchObject({ minimum: 1, maximum: 200, default: 20 });
    expect(schema("lessons_add").properties.scope.enum).toEqual(["session", "workspace"]);
    expect(schema("record_event").properties.actor.enum).toEqual(["agent", "user", "browser", "system"]);
    expect(schema("record_event").required).toEqual(["type"]);
    expect(tools.find((t) => t.name === "rollback")?.annotations).toMatchObject({ destructiveHint: true });
    expect(tools.find((t) => t.name === "status")?.annotations).toMatchObject({ readOnlyHint: true });

    const { resources } = await c.listResources();
    expect(resources.map((r) => r.uri).sort()).toEqual(["baton://sessions/s1/STATE.md", "baton://workspace/LESSONS.md"]);
    const { resourceTemplates } = await c.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(["baton://sessions/{sessionId}/STATE.md"]);
    const { prompts } = await c.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(["resume_session"]);
    expect(prompts[0]?.arguments).toEqual([expect.objectContaining({ name: "sessionId", required: false })]);
  });

  it("reports status before and after events, and records decisions, blockers and the position", async () => {
    const root = workspace();
    const c = await connect(root);
    const empty = await ok(c, "status");
    expect(empty).toMatchObject({ sessions: [], nextAction: { action: "no_active_session" } });

    const started = await ok(c, "start_session", { title: "Fix the login bug", id: "t1" });
    expect(started).toMatchObject({ sessionId: "t1", flow: "task", phase: "planned", nextAction: { action: "start_task" } });
    expect((await ok(c, "status")).sessions[0]).toMatchObject({ sessionId: "t1", phase: "planned" });

    const moved = await ok(c, "record_event", { type: "start", id: "ev-start" });
    expect(moved).toMatchObject({ outcome: "moved", phase: "in_progress", duplicate: false });
    expect((await ok(c, "record_event", { type: "start", id: "ev-start" })).duplicate).toBe(true);
    const after = (await ok(c, "status", { sessionId: "t1" })).sessions[0];
    expect(after).toMatchObject({ phase: "in_progress", nextAction: { action: "continue_task" } });

    await ok(c, "add_decision", { decision: "Use JWT", reason: "stateless", alternatives: ["sessions"], reversible: true });
    const blocker = await ok(c, "add_blocker", { text: "API key missing", affects: "login" });
    expect(blocker.blockerId).toMatch(/^blk-/);
    expect((await ok(c, "status")).sessions[0].activeBlockers).toEqual([expect.objectContaining({ id: blocker.blockerId })]);
    await ok(c, "resolve_blocker", { id: blocker.blockerId, resolution: "added to .env" });
    await ok(c, "set_position", { task: "wire the login form", status: "halfway" });

    const resumed = await ok(c, "resume");
    expect(resumed.facets.decisions).toEqual([expect.objectContaining({ decision: "Use JWT", reason: "stateless" })]);
    expect(resumed.facets.blockers).toEqual([expect.objectContaining({ id: blocker.blockerId, state: "resolved" })]);
    expect(resumed.facets.position).toMatchObject({ task: "wire the login form", status: "halfway" });
    expect(resumed.recentEvents.map((e: { type: string }) => e.type)).toContain("start");
    // The CLI sees what the MCP server wrote: one journal.
    expect(cli(["status", "--json", "--root", root]).json().sessions[0].position).toMatchObject({ task: "wire the login form" });
  });

  it("answers errors with Baton's codes", async () => {
    const root = workspace();
    const c = await connect(root);
    await fails(c, "resume", {}, "not_found"); // no session at all
    await ok(c, "start_session", { id: "e1" });
    const invalid = await fails(c, "record_event", { type: "verify" }, "invalid_transition");
    expect(invalid).toMatchObject({ phase: "planned", allowed: expect.arrayContaining(["start"]) });
    await fails(c, "resume", { sessionId: "nope" }, "not_found");
    await fails(c, "start_session", { id: "e1" }, "session_exists");
    await fails(c, "set_position", {}, "bad_input");
    await fails(c, "rollback", { to: "cp-nope" }, "checkpoint_not_found");
    await fails(c, "rollback", { steps: 1, to: "cp-nope" }, "bad_input");
    // Schema violations are bad_input too, naming each field.
    const bad = await fails(c, "rollback", { steps: 0, frobnicate: true }, "bad_input");
    expect(bad.issues.map((i: { path: string }) => i.path)).toEqual(expect.arrayContaining(["steps"]));
    expect(bad.message).toContain("frobnicate");
    await fails(c, "ledger_recent", { status: "finished" }, "bad_input");
    await fails(c, "no_such_tool", {}, "not_found");
    // The MCP client is the agent: it cannot clear its own spiral pause.
    for (let i = 0; i < 3; i++)
      cli(["turn", "record", "--tool", "Edit", "--args", '{"f":1}', "--status", "error", "--session", "e1", "--root", root]);
    expect((await ok(c, "status", { sessionId: "e1" })).sessions[0].spiral).toMatchObject({ paused: true });
    const cleared = await fails(c, "record_event", { sessionId: "e1", type: "spiral:cleared" }, "spiral_paused");
    expect(cleared.message).toContain("the user's decision");
    await fails(c, "resume", { sessionId: "e1", unpause: true }, "bad_input"); // no such argument
    expect((await ok(c, "status", { sessionId: "e1" })).sessions[0].spiral).toMatchObject({ paused: true });
    // While paused, only reading tools run: no checkpoint, no rollback, no writes of any kind.
    writeFileSync(join(root, "app.ts"), "broken\n");
    for (const [name, args] of [
      ["checkpoint", { sessionId: "e1", files: ["app.ts"] }],
      ["rollback", { sessionId: "e1", to: "cp-nope" }],
      ["record_event", { sessionId: "e1", type: "note:added", data: { text: "still going" } }],
      ["lessons_add", { sessionId: "e1", text: "Nothing to learn yet." }],
    ] as const) {
      const refused = await fails(c, name, args, "spiral_paused");
      expect(refused).toMatchObject({ sessionId: "e1", pattern: expect.any(String) });
    }
    expect((await ok(c, "list_checkpoints", { sessionId: "e1" })).checkpoints).toEqual([]);
    // Reading where it stands still works: resume, status, doctor without fix (with fix: refused).
    expect((await ok(c, "resume", { sessionId: "e1" })).facets).toBeDefined();
    expect((await ok(c, "status", { sessionId: "e1" })).sessions[0].spiral).toMatchObject({ paused: true });
    expect((await ok(c, "doctor", { sessionId: "e1" })).findings).toBeDefined();
    await fails(c, "doctor", { sessionId: "e1", fix: true }, "spiral_paused");
    expect(readFileSync(join(root, "app.ts"), "utf8")).toBe("broken\n");
    // The user unpauses: the agent's tools work again, and a reading tool never needed it.
    expect(cli(["resume", "e1", "--unpause", "--root", root, "--json"]).code).toBe(0);
    await ok(c, "checkpoint", { sessionId: "e1", files: ["app.ts"] });
    // Clearing a pause stays the user's, paused or not.
    await fails(c, "record_event", { sessionId: "e1", type: "spiral:cleared" }, "bad_input");
    await ok(c, "start_session", { id: "e2" });
    const ambiguous = await fails(c, "resume", {}, "ambiguous_session");
    expect(ambiguous.sessions.map((s: { sessionId: string }) => s.sessionId).sort()).toEqual(["e1", "e2"]);
    // With several sessions and none named, a pause in any of them stops a writing tool.
    for (let i = 0; i < 3; i++)
      cli(["turn", "record", "--tool", "Edit", "--args", '{"f":2}', "--status", "error", "--session", "e2", "--root", root]);
    const unnamed = await fails(c, "lessons_add", { text: "Check twice.", scope: "workspace" }, "spiral_paused");
    expect(unnamed.sessionId).toBe("e2");
  });

  it("checkpoints, rolls back with a dry run then for real, and learns a lesson from it", async () => {
    const root = workspace();
    const c = await connect(root);
    await ok(c, "start_session", { id: "r1" });
    const file = join(root, "app.ts");
    writeFileSync(file, "export const v = 1;\n");
    const cp = await ok(c, "checkpoint", { files: ["app.ts", "new.ts"], label: "before edit", toolName: "Edit" });
    expect(cp.checkpointId).toMatch(/^cp-/);
    expect(cp.checkpoint.files).toEqual([expect.objectContaining({ path: "app.ts" }), { path: "new.ts", absent: true }]);
    writeFileSync(file, "export const v = 2;\n");
    writeFileSync(join(root, "new.ts"), "created\n");

    const list = await ok(c, "list_checkpoints");
    expect(list.checkpoints).toEqual([expect.objectContaining({ id: cp.checkpointId, label: "before edit", kind: "targeted" })]);

    const dry = await ok(c, "rollback", { dryRun: true });
    expect(dry).toMatchObject({ dryRun: true, target: { id: cp.checkpointId }, restored: 1, removed: 1 });
    expect(dry.diff).toContain("-export const v = 2;");
    expect(dry.diff).toContain("+export const v = 1;");
    expect(readFileSync(file, "utf8")).toBe("export const v = 2;\n"); // nothing changed
    expect(existsSync(join(root, "new.ts"))).toBe(true);

    const done = await ok(c, "rollback", {});
    expect(done).toMatchObject({ dryRun: false, restored: 1, removed: 1 });
    // The agent rolled back, not the user: the journal says so.
    const journaled = cli(["export", "r1", "--root", root])
      .stdout.trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .filter((e) => String(e.type).startsWith("rollback:"));
    expect(journaled.map((e) => [e.type, e.actor])).toEqual([
      ["rollback:started", "agent"],
      ["rollback:applied", "agent"],
    ]);
    expect(done.rollbackId).toBeTruthy();
    expect(done.safety).toMatch(/^cp-/);
    expect(readFileSync(file, "utf8")).toBe("export const v = 1;\n");
    expect(existsSync(join(root, "new.ts"))).toBe(false);
    const st = (await ok(c, "status")).sessions[0];
    expect(st.lastRollback).toMatchObject({ id: done.rollbackId, state: "applied" });
    expect(st.suggestions.map((s: { action: string }) => s.action)).toContain("capture_lesson");

    const lesson = await ok(c, "lessons_add", {
      text: "Read app.ts before replacing its exports.",
      tools: ["Edit"],
      paths: ["*.ts"],
      fromRollback: done.rollbackId,
    });
    expect(lesson.lesson).toMatchObject({ scope: "session", sessionId: "r1", rollback: done.rollbackId });
    const learned = cli(["export", "r1", "--root", root])
      .stdout.trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .filter((e) => e.type === "lesson:added");
    expect(
      learned.map((e) => e.actor),
      "the agent learned it, not the user",
    ).toEqual(["agent"]);
    const found = await ok(c, "lessons_search", { prompt: "replacing exports", tool: "Edit" });
    expect(found.results[0]).toMatchObject({ lesson: { id: lesson.lesson.id } });
    const injected = await ok(c, "lessons_inject", { tool: "Edit", paths: ["app.ts"] });
    expect(injected.markdown).toBe(`## Lessons from earlier attempts\n- Read app.ts before replacing its exports. (${lesson.lesson.id})`);
    expect((await ok(c, "status")).sessions[0].suggestions ?? []).not.toContainEqual(expect.objectContaining({ action: "capture_lesson" }));

    const res = await c.readResource({ uri: "baton://workspace/LESSONS.md" });
    expect(res.contents[0]).toMatchObject({ mimeType: "text/markdown" });
    expect((res.contents[0] as { text: string }).text).toContain(`### ${lesson.lesson.id}`);
  });

  it("shows the recent ledger after a recorded tool call, and runs the doctor", async () => {
    const root = workspace();
    const c = await connect(root);
    await ok(c, "start_session", { id: "l1" });
    const run = (...a: string[]) => cli([...a, "--root", root, "--json"], { env: { BATON_DURABILITY: "relaxed" } });
    expect(
      run("ledger", "record", "--tool", "Edit", "--status", "error", "--args", '{"file_path":"a.ts"}', "--error", "no match").code,
    ).toBe(0);
    expect(run("ledger", "record", "--tool", "Edit", "--status", "success", "--args", '{"file_path":"a.ts"}').code).toBe(0);

    const recent = await ok(c, "ledger_recent", {});
    expect(recent.sessionId).toBe("l1");
    expect(recent.nodes.map((n: { toolName: string; status: string }) => `${n.toolName}:${n.status}`)).toEqual([
      "Edit:error",
      "Edit:recovered",
    ]);
    expect(recent.nodes[1].recovers).toBe(recent.nodes[0].nodeId);
    expect((await ok(c, "ledger_recent", { status: "error", limit: 1 })).nodes).toHaveLength(1);

    const report = await ok(c, "doctor", {});
    expect(report).toMatchObject({ ok: true, scope: "workspace" });
    expect(report.checks.map((x: { check: string }) => x.check)).toEqual(expect.arrayContaining(["integrity", "snapshots", "ledger"]));
    const one = await ok(c, "doctor", { sessionId: "l1" });
    expect(one.session).toMatchObject({ sessionId: "l1", phase: "planned" });
  });

  it("reads a session's STATE.md and gets the resume prompt", async () => {
    const root = workspace();
    const c = await connect(root);
    await ok(c, "start_session", { id: "p1", title: "Ship the parser" });
    await ok(c, "record_event", { type: "start" });
    await ok(c, "add_decision", { decision: "Hand-written parser" });
    writeFileSync(join(root, "LESSONS.md"), "# Lessons\n\n### les-one\n\nKeep the parser pure.\n\n- scope: workspace\n");

    const state = await c.readResource({ uri: "baton://sessions/p1/STATE.md" });
    const text = (state.contents[0] as { text: string }).text;
    expect(text).toContain("# Ship the parser");
    expect(text).toContain("## Next action");
    expect(text).toContain("Hand-written parser");
    const completion = await c.complete({
      ref: { type: "ref/resource", uri: "baton://sessions/{sessionId}/STATE.md" },
      argument: { name: "sessionId", value: "p" },
    });
    expect(completion.completion.values).toEqual(["p1"]);
    const err = await c.readResource({ uri: "baton://sessions/ghost/STATE.md" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpError);
    expect((err as McpError).code).toBe(-32002);
    expect((err as McpError).data).toMatchObject({ error: { code: "not_found" } });

    const prompt = await c.getPrompt({ name: "resume_session", arguments: {} });
    expect(prompt.messages).toHaveLength(1);
    const body = (prompt.messages[0]!.content as { text: string }).text;
    expect(body).toContain("Resume the Baton session `p1`");
    expect(body).toContain("continue_task");
    expect(body).toContain("Keep the parser pure. (les-one)");
    expect(body).toContain("# Ship the parser");
    const named = await c.getPrompt({ name: "resume_session", arguments: { sessionId: "p1" } });
    expect(named.description).toContain("p1");
    await expect(c.getPrompt({ name: "resume_session", arguments: { sessionId: "ghost" } })).rejects.toMatchObject({
      data: { error: { code: "not_found" } },
    });
  });

  it("starts without a workspace and says how to create one", async () => {
    const root = workspace(false);
    const c = await connect(root);
    expect((await c.listTools()).tools.length).toBeGreaterThan(10);
    const e = await fails(c, "status", {}, "workspace_not_found");
    expect(e.message).toContain("baton init");
    expect(cli(["init", "--root", root]).code).toBe(0);
    expect(await ok(c, "status")).toMatchObject({ sessions: [] }); // opened on the next call
    expect(existsSync(join(root, ".baton"))).toBe(true);
  });

  it("answers the requests in flight, then exits, when the client closes its stdin", async () => {
    const root = workspace();
    const messages = [
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
      },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "start_session", arguments: { id: "late", title: "Sent last" } } },
      { jsonrpc: "2.0", id: 3, method: "ping" },
    ];
    const started = Date.now();
    const r = spawnSync(process.execPath, [CLI, "mcp", "--root", root], {
      input: messages.map((m) => `${JSON.stringify(m)}\n`).join(""), // then end of input
      encoding: "utf8",
      timeout: 20_000,
      env: ENV,
    });
    expect(r.status).toBe(0);
    expect(Date.now() - started).toBeLessThan(10_000);
    const answers = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(answers.map((a) => a.id).sort()).toEqual([1, 2, 3]);
    const call = answers.find((a) => a.id === 2);
    expect(JSON.parse(call.result.content[0].text)).toMatchObject({ sessionId: "late", phase: "planned" });
    expect(cli(["status", "--json", "--root", root]).json().sessions[0]).toMatchObject({ sessionId: "late", title: "Sent last" });
  });

  it("answers a line that is not JSON or not JSON-RPC, and a malformed resource URI, instead of leaving the client waiting", () => {
    const root = workspace();
    const lines = [
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
      }),
      JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
      "not json",
      "   ",
      JSON.stringify({ jsonrpc: "2.0", id: 8, method: "ping", params: "x" }),
      JSON.stringify({ jsonrpc: "2.0", id: 11, method: "resources/read", params: { uri: "baton://sessions/%E0%A4%A/STATE.md" } }),
      JSON.stringify({ jsonrpc: "2.0", id: 12, method: "ping" }),
    ];
    const r = spawnSync(process.execPath, [CLI, "mcp", "--root", root], {
      input: lines.map((l) => `${l}\n`).join(""),
      encoding: "utf8",
      timeout: 20_000,
      env: ENV,
    });
    expect(r.status).toBe(0);
    const answers = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    // Not JSON: id null (none can be read); JSON but not JSON-RPC: its own id; a blank line: nothing.
    expect(answers.filter((a) => a.id === null).map((a) => a.error.code)).toEqual([-32700]);
    expect(answers.find((a) => a.id === 8).error.code).toBe(-32600);
    expect(answers.find((a) => a.id === 11).error).toMatchObject({ code: -32602, data: { error: { code: "bad_input" } } });
    expect(answers.find((a) => a.id === 12).result).toEqual({});
    expect(r.stderr).toMatch(/^baton mcp: Parse error: .*not valid JSON/m);
    expect(r.stderr).toMatch(/^baton mcp: Invalid Request: /m);
  });

  it("never loads the MCP bundle (the SDK, zod) on other commands", () => {
    const root = workspace();
    // Log every module the CLI requires; the mcp command is the only one that may load dist/mcp.cjs.
    const hook = join(root, "log-requires.cjs");
    writeFileSync(
      hook,
      'const M = require("node:module"); const load = M._load; M._load = function (r, ...a) { process.stderr.write("require:" + r + "\\n"); return load.call(this, r, ...a); };',
    );
    const requires = (args: string[]) => {
      const r = spawnSync(process.execPath, ["--require", hook, CLI, ...args, "--root", root], { encoding: "utf8", cwd: REPO, env: ENV });
      return r.stderr.split("\n").filter((l) => l.startsWith("require:"));
    };
    for (const args of [["status", "--json"], ["ledger", "list", "--json"], ["--help"]]) {
      const loaded = requires(args);
      expect(loaded.length, args.join(" ")).toBeGreaterThan(0);
      expect(
        loaded.filter((l) => /mcp\.cjs|zod|modelcontextprotocol/.test(l)),
        args.join(" "),
      ).toEqual([]);
    }
    // The hook does see it when it is loaded (the server exits at once: its stdin is empty).
    expect(requires(["mcp"]).filter((l) => l.endsWith("mcp.cjs"))).toEqual(["require:./mcp.cjs"]);
    for (const bundle of ["cli.cjs", "cli-full.cjs"]) {
      const code = readFileSync(join(REPO, "dist", bundle), "utf8");
      expect(code, bundle).not.toContain("modelcontextprotocol");
      expect(code, bundle).not.toContain("ZodError");
    }
  });
  it("rollback from an agent that names its session to the server steps back through that agent's lane only", async () => {
    const root = workspace();
    const hook = (session: string, event: string, more: Record<string, unknown>) => {
      const input = JSON.stringify({ session_id: session, cwd: root, hook_event_name: event, ...more });
      expect(cli(["hook", "claude", event], { cwd: root, input }).code).toBe(0);
    };
    const write = (session: string, file: string, call: string) => {
      const tool = { tool_name: "Write", tool_input: { file_path: join(root, file), content: "x" }, tool_use_id: call };
      hook(session, "PreToolUse", tool);
      writeFileSync(join(root, file), `${session}\n`);
      hook(session, "PostToolUse", { ...tool, tool_response: { type: "create" } });
    };
    for (const s of ["sess-a", "sess-b"]) hook(s, "SessionStart", { source: "startup" });
    write("sess-a", "a.txt", "toolu_a");
    write("sess-b", "b.txt", "toolu_b"); // the other agent's, and the workspace's newest step
    const c = await connect(root, { CLAUDE_CODE_SESSION_ID: "sess-a" });
    const done = await ok(c, "rollback", {});
    expect(done.changes.map((x: any) => [x.path, x.action])).toEqual([["a.txt", "remove"]]);
    expect(existsSync(join(root, "a.txt"))).toBe(false);
    expect(readFileSync(join(root, "b.txt"), "utf8")).toBe("sess-b\n");
  });
});

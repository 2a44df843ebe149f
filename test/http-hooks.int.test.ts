/**
 * Claude Code's HTTP hooks (`baton hooks install claude --http`, `POST /v1/agent-hooks/claude/:event`):
 * a real `baton serve` child (the built CLI) on temp workspaces with real SQLite stores.
 *
 * - the claude scenario (checkpoints, rollback, a spiral and its deny, "undo that") with its
 *   per-call hooks POSTed as Claude Code posts them gets the answers command hooks give;
 * - a payload captured from the real CLI (test/fixtures/agents/claude/) takes its checkpoint;
 * - the route is guarded: token, Host, Origin; other events and agents are refused;
 * - the install writes HTTP entries only into the local settings, with the key the server takes.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli, REPO } from "./helpers.js";
import { baton, checkpoints, failOnStrayServers, hook, hookLog, normalise, payload, read, type Step, workspace } from "./hook-helpers.js";
import { FILES, SCENARIOS } from "./hook-scenarios.js";
import { raw, serve } from "./server-helpers.js";

failOnStrayServers();

const PER_CALL = new Set(["PreToolUse", "PostToolUse", "PostToolUseFailure"]);

/** POST a hook payload as Claude Code's HTTP hook does (its headers: JSON, the configured Authorization). */
function post(port: number, token: string, event: string, body: string, headers: Record<string, string> = {}) {
  return raw(port, {
    method: "POST",
    path: `/v1/agent-hooks/claude/${event}`,
    headers: { "content-type": "application/json", authorization: `Bearer ${token}`, ...headers },
    body,
  });
}

function stepText(root: string, s: Step): { text: string; event: string } {
  const text = payload(s.agent, s.fixture, { cwd: root, session: "agent-session-1", call: "call-1", ...s.vars });
  return { text, event: JSON.parse(text).hook_event_name as string };
}

/** A command hook prints nothing for "go on"; an HTTP hook answers `{}`. */
const answer = (text: string) => (text.trim() === "" ? "{}" : text.trim());

describe("Claude Code HTTP hooks", () => {
  it("the scenario's per-call hooks over HTTP get the command hooks' answers, step by step", async () => {
    const viaHttp = workspace(FILES);
    const viaCommand = workspace(FILES);
    const s = await serve(viaHttp);
    try {
      let posted = 0;
      for (const [i, step] of (SCENARIOS.claude ?? []).entries()) {
        const { text, event } = stepText(viaHttp, step);
        const b = hook(viaCommand, step, { BATON_HOOK_SERVER: "off" });
        let a: string;
        if (PER_CALL.has(event)) {
          const r = await post(s.port, s.token, event, text);
          expect(r.status, `step ${i} (${step.fixture}): ${r.text}`).toBe(200);
          a = r.text;
          posted++;
        } else a = hook(viaHttp, step, { BATON_HOOK_SERVER: "off" }).stdout;
        expect(normalise(answer(a), viaHttp), `step ${i} (${step.fixture})`).toBe(normalise(answer(b.stdout), viaCommand));
        step.effect?.(viaHttp);
        step.effect?.(viaCommand);
      }
      expect(posted).toBeGreaterThan(10);
      expect(hookLog(viaHttp)).toEqual([]);
      for (const p of ["src/app.ts", "README.md"]) expect(read(viaHttp, p), p).toBe(read(viaCommand, p));
      const summary = (root: string) => ({
        checkpoints: checkpoints(root).map((c) => [c.kind, c.toolName]),
        ledger: baton(root, ["ledger", "list", "--session", baton(root, ["status"]).sessions[0].sessionId]).nodes.map((n: any) => [
          n.toolName,
          n.status,
        ]),
      });
      expect(summary(viaHttp)).toEqual(summary(viaCommand));
    } finally {
      await s.stop();
    }
  });

  it("a PreToolUse payload captured from the real CLI takes its checkpoint; a spiral pause denies over HTTP too", async () => {
    const root = workspace(FILES);
    const s = await serve(root);
    try {
      hook(root, { agent: "claude", fixture: "session-start-startup" }, { BATON_HOOK_SERVER: "off" });
      const captured = JSON.parse(readFileSync(join(REPO, "test/fixtures/agents/claude/PreToolUse.Write.json"), "utf8"));
      const body = JSON.stringify({
        ...captured,
        session_id: "agent-session-1",
        cwd: root,
        tool_input: { ...captured.tool_input, file_path: join(root, "src/app.ts") },
      });
      const r = await post(s.port, s.token, "PreToolUse", body);
      expect(r.status, r.text).toBe(200);
      expect(r.json()).toEqual({});
      expect(checkpoints(root).map((c) => c.toolName)).toEqual(["Write"]);
      // The same call again (Claude Code retries nothing, but a second answer must not act twice).
      await post(s.port, s.token, "PreToolUse", body);
      expect(checkpoints(root)).toHaveLength(1);
      // Three identical failing test runs pause the session: the next write is denied over HTTP.
      for (const call of ["toolu_t1", "toolu_t2", "toolu_t3"]) {
        for (const fixture of ["pre-bash-test", "post-bash-failure"]) {
          const { text, event } = stepText(root, { agent: "claude", fixture, vars: { call } });
          expect((await post(s.port, s.token, event, text)).status).toBe(200);
        }
      }
      const denied = await post(s.port, s.token, "PreToolUse", stepText(root, { agent: "claude", fixture: "pre-edit" }).text);
      expect(denied.status).toBe(200);
      expect(denied.json().hookSpecificOutput).toMatchObject({ hookEventName: "PreToolUse", permissionDecision: "deny" });
    } finally {
      await s.stop();
    }
  });

  it("an agent that names the workspace through a link (a symlinked project folder, macOS's /tmp) gets its checkpoints, over HTTP and through a command hook", async () => {
    const root = workspace(FILES);
    const link = join(mkdtempSync(join(tmpdir(), "baton-alias-")), "project");
    symlinkSync(root, link);
    const s = await serve(root);
    try {
      hook(root, { agent: "claude", fixture: "session-start-startup" }, { BATON_HOOK_SERVER: "off" });
      // Claude Code's cwd and the model's paths through the link; the server serves the real folder.
      const pre = stepText(link, { agent: "claude", fixture: "pre-edit" });
      const r = await post(s.port, s.token, pre.event, pre.text);
      expect([r.status, r.text]).toEqual([200, "{}"]);
      expect(checkpoints(root).map((c) => c.toolName)).toEqual(["Edit"]);
      writeFileSync(join(link, "src/app.ts"), "edited through the link\n");
      const post1 = stepText(link, { agent: "claude", fixture: "post-edit" });
      expect((await post(s.port, s.token, post1.event, post1.text)).status).toBe(200);
      // A command hook run in the link, handed to the same server: its write is checkpointed too.
      const cmd = hook(link, { agent: "claude", fixture: "pre-write" }, { BATON_HOOK_SERVER: "use" });
      expect(cmd.via, cmd.reason).toBe("server");
      expect(checkpoints(root).map((c) => c.toolName)).toEqual(["Edit", "Write"]);
      expect(hookLog(root)).toEqual([]);
      // "undo that" puts the edit made through the link back, in the real folder.
      writeFileSync(join(link, "src/session.ts"), 'export const SESSION_COOKIE = "sid";\n');
      const undo = hook(link, { agent: "claude", fixture: "user-prompt-undo" }, { BATON_HOOK_SERVER: "use" });
      expect(JSON.parse(undo.stdout).systemMessage).toMatch(/^Baton rolled back/);
      expect(existsSync(join(root, "src/session.ts")), "the newest step, the Write, is undone").toBe(false);
      expect(read(root, "src/app.ts")).toBe("edited through the link\n");
    } finally {
      await s.stop();
    }
  });

  it("is guarded: token, Host and Origin; other events and agents are refused, and nothing is recorded", async () => {
    const root = workspace(FILES);
    const s = await serve(root);
    try {
      const { text } = stepText(root, { agent: "claude", fixture: "pre-edit" });
      const noToken = await raw(s.port, {
        method: "POST",
        path: "/v1/agent-hooks/claude/PreToolUse",
        headers: { "content-type": "application/json" },
        body: text,
      });
      expect([noToken.status, noToken.json().error.code]).toEqual([401, "unauthorized"]);
      const wrong = await post(s.port, "x".repeat(43), "PreToolUse", text);
      expect([wrong.status, wrong.json().error.code]).toEqual([401, "unauthorized"]);
      const host = await post(s.port, s.token, "PreToolUse", text, { host: `evil.example:${s.port}` });
      expect(host.status).toBe(403);
      const origin = await post(s.port, s.token, "PreToolUse", text, { origin: `http://127.0.0.1:${s.port}` });
      expect(origin.status).toBe(403);
      const start = stepText(root, { agent: "claude", fixture: "session-start-startup" });
      const other = await post(s.port, s.token, "SessionStart", start.text);
      expect([other.status, other.json().error.code]).toEqual([404, "not_found"]);
      const codex = await raw(s.port, {
        method: "POST",
        path: "/v1/agent-hooks/codex/PreToolUse",
        headers: { "content-type": "application/json", authorization: `Bearer ${s.token}` },
        body: text,
      });
      expect(codex.status).toBe(404);
      const notJson = await post(s.port, s.token, "PreToolUse", "{not json");
      expect([notJson.status, notJson.json().error.code]).toEqual([400, "bad_input"]);
      // Another workspace's payload (its cwd outside this one) is refused.
      const elsewhere = await post(
        s.port,
        s.token,
        "PreToolUse",
        stepText(workspace(FILES), { agent: "claude", fixture: "pre-edit" }).text,
      );
      expect([elsewhere.status, elsewhere.json().error.code]).toEqual([409, "wrong_workspace"]);
      expect(baton(root, ["status"]).sessions).toEqual([]);
    } finally {
      await s.stop();
    }
  });

  it("after .baton/config.json changes, the HTTP hooks are answered by a process of their own, and a hook-started server keeps serving", async () => {
    const root = workspace(FILES);
    expect(cli(["hooks", "install", "claude", "--http", "--json", "--root", root]).code).toBe(0);
    const s = await serve(root, ["--idle-exit", "10m"]);
    try {
      hook(root, { agent: "claude", fixture: "session-start-startup" }, { BATON_HOOK_SERVER: "off" });
      // What the agent itself can do: the write guard lets it write .baton/config.json and flows.
      writeFileSync(join(root, ".baton", "config.json"), JSON.stringify({ checkpoints: { retain: 5 } }));
      const pre = await post(s.port, s.token, "PreToolUse", stepText(root, { agent: "claude", fixture: "pre-edit" }).text);
      expect(pre.status, pre.text).toBe(200);
      expect(checkpoints(root)).toHaveLength(1);
      // The server did not stop (a hook-started one used to, leaving every later call unanswered).
      await new Promise((r) => setTimeout(r, 3_000));
      expect(s.child.proc.exitCode).toBeNull();
      expect(existsSync(join(root, ".baton/server.json"))).toBe(true);
      const post2 = await post(
        s.port,
        s.token,
        "PreToolUse",
        stepText(root, { agent: "claude", fixture: "pre-edit", vars: { call: "call-2" } }).text,
      );
      expect(post2.status, post2.text).toBe(200);
      expect(hookLog(root)).toEqual([]);
    } finally {
      await s.stop();
    }
  });

  it("a server that cannot take the remembered port makes a new token: the old entries fail closed and status says to install again", async () => {
    const root = workspace(FILES);
    expect(cli(["hooks", "install", "claude", "--http", "--json", "--root", root]).code).toBe(0);
    const key = JSON.parse(read(root, ".baton/server.key"));
    // Another program holds the port the hooks name (it would read every request sent there).
    const squatter = createServer();
    await new Promise<void>((resolve) => squatter.listen(key.port, "127.0.0.1", resolve));
    try {
      const s = await serve(root);
      try {
        expect(s.port).not.toBe(key.port);
        expect(s.token).not.toBe(key.token);
        expect(JSON.parse(read(root, ".baton/server.key"))).toEqual({ token: s.token, port: s.port });
        // The old token is worth nothing on the new port either.
        const old = await post(s.port, key.token, "PreToolUse", stepText(root, { agent: "claude", fixture: "pre-edit" }).text);
        expect(old.status).toBe(401);
        const st = cli(["hooks", "status", "claude", "--json", "--root", root]).json();
        const local = st.hooks.find((h: any) => h.file.endsWith("settings.local.json"));
        expect(local.willRun).toBe(false);
        expect(local.remaining.join("\n")).toContain(
          `The HTTP hooks name port ${key.port}, the server is on ${s.port}: run \`baton hooks install claude --http\` again.`,
        );
      } finally {
        await s.stop();
      }
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }
  });

  it("after `serve --rotate-token` on the same port, status says the HTTP hooks send an older token", async () => {
    const root = workspace(FILES);
    expect(cli(["hooks", "install", "claude", "--http", "--json", "--root", root]).code).toBe(0);
    const key = JSON.parse(read(root, ".baton/server.key"));
    const status = () =>
      cli(["hooks", "status", "claude", "--json", "--root", root])
        .json()
        .hooks.find((h: any) => h.file.endsWith("settings.local.json"));
    expect((status().remaining ?? []).join("\n")).not.toContain("HTTP hooks send an older token");
    const s = await serve(root, ["--rotate-token", "--port", String(key.port)]);
    try {
      expect([s.port, s.token === key.token]).toEqual([key.port, false]);
      const old = await post(s.port, key.token, "PreToolUse", stepText(root, { agent: "claude", fixture: "pre-edit" }).text);
      expect(old.status).toBe(401);
      const local = status();
      expect(local.willRun).toBe(false);
      expect(local.remaining.join("\n")).toContain(
        "The HTTP hooks send an older token than the server's (.baton/server.key): run `baton hooks install claude --http` again.",
      );
      expect(JSON.stringify(local)).not.toContain(s.token);
    } finally {
      await s.stop();
    }
  });

  it("every HTTP entry is checked: one on another port, or on another host than 127.0.0.1, makes the hooks stale; so does an allowedHttpHookUrls that leaves them out", () => {
    const root = workspace(FILES);
    expect(cli(["hooks", "install", "claude", "--http", "--json", "--root", root]).code).toBe(0);
    const file = join(root, ".claude/settings.local.json");
    const key = JSON.parse(read(root, ".baton/server.key"));
    const local = () =>
      cli(["hooks", "status", "claude", "--json", "--root", root])
        .json()
        .hooks.find((h: any) => h.file.endsWith("settings.local.json"));
    const installed = readFileSync(file, "utf8");
    // Only the last entries (PostToolUse, PostToolUseFailure) moved.
    const settings = JSON.parse(installed);
    for (const e of ["PostToolUse", "PostToolUseFailure"])
      for (const g of settings.hooks[e]) for (const h of g.hooks) if (h.type === "http") h.url = h.url.replace(`:${key.port}/`, ":1/");
    writeFileSync(file, JSON.stringify(settings));
    expect(local().willRun).toBe(false);
    expect(local().remaining.join("\n")).toContain(`The HTTP hooks name port 1, the server is on ${key.port}`);
    // localhost is Baton's URL too, but the server listens on 127.0.0.1 only.
    writeFileSync(file, installed.replaceAll("http://127.0.0.1:", "http://localhost:"));
    expect(local().willRun).toBe(false);
    expect(local().remaining.join("\n")).toContain("An HTTP hook names localhost, and the workspace's server listens on 127.0.0.1 only");
    writeFileSync(file, installed);
    expect(local().remaining.join("\n")).not.toMatch(/HTTP hooks? (name|names|send)/);
    // A repository's committed settings can allow HTTP hooks to other URLs only: Claude Code then blocks Baton's.
    const team = join(root, ".claude/settings.json");
    writeFileSync(team, JSON.stringify({ allowedHttpHookUrls: ["https://hooks.example.com/*"] }));
    expect(local().willRun).toBe(false);
    expect(local().remaining.join("\n")).toContain(`Claude Code blocks HTTP hooks to http://127.0.0.1:${key.port}/v1/agent-hooks/claude/`);
    writeFileSync(team, JSON.stringify({ allowedHttpHookUrls: ["https://hooks.example.com/*", "http://127.0.0.1:*/*"] }));
    expect(local().remaining.join("\n")).not.toContain("Claude Code blocks HTTP hooks");
  });

  it("install --http refuses a settings file git would commit, changing nothing, and leaves an existing file mode 0600", async () => {
    const root = workspace(FILES);
    expect(spawnSync("git", ["init", "-q", root]).status).toBe(0);
    const file = join(root, ".claude/settings.local.json");
    mkdirSync(join(root, ".claude"), { recursive: true });
    writeFileSync(file, "{}\n", { mode: 0o644 });
    chmodSync(file, 0o644);
    const refused = cli(["hooks", "install", "claude", "--http", "--json", "--root", root]);
    expect([refused.code, refused.json().error.code]).toEqual([2, "bad_input"]);
    expect(refused.json().error.message).toContain("add `.claude/settings.local.json` to .gitignore");
    expect(read(root, ".claude/settings.local.json")).toBe("{}\n");
    expect(existsSync(join(root, ".baton/server.key"))).toBe(false);
    writeFileSync(join(root, ".gitignore"), ".claude/settings.local.json\n");
    const r = cli(["hooks", "install", "claude", "--http", "--json", "--root", root]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().notes.join("\n")).not.toContain("git would commit");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // A reinstall that changes nothing still leaves it 0600.
    chmodSync(file, 0o644);
    expect(cli(["hooks", "install", "claude", "--http", "--json", "--root", root]).code).toBe(0);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it("takes a PostToolUse carrying a whole large file (over the API's 256 KiB), and logs the route's refusals to hooks.log", async () => {
    const root = workspace(FILES);
    const s = await serve(root);
    try {
      hook(root, { agent: "claude", fixture: "session-start-startup" }, { BATON_HOOK_SERVER: "off" });
      const pre = await post(s.port, s.token, "PreToolUse", stepText(root, { agent: "claude", fixture: "pre-edit" }).text);
      expect(pre.status).toBe(200);
      const edit = JSON.parse(stepText(root, { agent: "claude", fixture: "post-edit" }).text);
      edit.tool_response = { ...(edit.tool_response ?? {}), originalFile: "x".repeat(2 * 1024 * 1024) };
      const big = await post(s.port, s.token, "PostToolUse", JSON.stringify(edit));
      expect(big.status, big.text.slice(0, 200)).toBe(200);
      expect(hookLog(root)).toEqual([]);
      const wrong = await post(s.port, "x".repeat(43), "PreToolUse", stepText(root, { agent: "claude", fixture: "pre-edit" }).text);
      expect(wrong.status).toBe(401);
      expect(hookLog(root).map((l: any) => [l.agent, l.event, l.code])).toEqual([["claude", "PreToolUse", "unauthorized"]]);
      // A web page's request (a simple cross-site POST, or a rebinding one, which carries its
      // Origin too) is refused and never logged: it could fill the log with false alarms and
      // rotate the real ones out. A client with no Origin and a wrong Host is still logged.
      const text = stepText(root, { agent: "claude", fixture: "pre-edit" }).text;
      const pages: Record<string, string>[] = [
        { origin: "http://evil.example", "content-type": "text/plain" },
        { origin: "http://evil.example" },
        { origin: `http://evil.example:${s.port}`, host: `evil.example:${s.port}` },
      ];
      for (const headers of pages) {
        const r = await post(s.port, "x".repeat(43), "PreToolUse", text, headers);
        expect([r.status, r.json().error.code], JSON.stringify(headers)).toEqual([403, "forbidden"]);
      }
      expect(hookLog(root)).toHaveLength(1);
      const alias = await post(s.port, s.token, "PreToolUse", text, { host: `0.0.0.0:${s.port}` });
      expect(alias.status).toBe(403);
      expect(hookLog(root).map((l: any) => l.code)).toEqual(["unauthorized", "forbidden"]);
    } finally {
      await s.stop();
    }
  });

  it("install and status say the HTTP hooks will not run when no hook starts the server (BATON_HOOK_SERVER, hooks.server), unless one the user started runs", async () => {
    const root = workspace(FILES);
    const install = (env: Record<string, string>) => cli(["hooks", "install", "claude", "--http", "--json", "--root", root], { env });
    const auto = install({ BATON_HOOK_SERVER: "auto" }).json();
    expect([auto.willRun, auto.remaining]).toEqual([true, []]);
    const off = install({ BATON_HOOK_SERVER: "off" }).json();
    expect(off.willRun).toBe(false);
    expect(off.remaining.join("\n")).toContain("BATON_HOOK_SERVER=off: no hook starts the workspace's server");
    const use = cli(["hooks", "status", "claude", "--json", "--root", root], { env: { BATON_HOOK_SERVER: "use" } }).json();
    const local = use.hooks.find((h: any) => h.file.endsWith("settings.local.json"));
    expect(local.willRun).toBe(false);
    expect(local.remaining.join("\n")).toContain("answered only while a server you started runs (`baton serve`, not running now)");
    // While the server the user started runs, the HTTP hooks are answered: a note, not a refusal.
    const s = await serve(root);
    try {
      const running = cli(["hooks", "status", "claude", "--json", "--root", root], { env: { BATON_HOOK_SERVER: "use" } })
        .json()
        .hooks.find((h: any) => h.file.endsWith("settings.local.json"));
      expect([running.willRun, running.remaining]).toEqual([true, []]);
      expect(running.notes.join("\n")).toContain("answered only while the server you started runs (it runs now)");
    } finally {
      await s.stop();
    }
  });

  it("install --http writes HTTP entries for the per-call events into the local settings only, naming the key the server takes", async () => {
    const root = workspace(FILES);
    const r = cli(["hooks", "install", "claude", "--http", "--json", "--root", root]);
    expect(r.code, r.stderr).toBe(0);
    const out = r.json();
    expect(out.file).toBe(join(root, ".claude/settings.local.json"));
    expect(out.hooks.filter((h: any) => h.http).map((h: any) => h.event)).toEqual([...PER_CALL]);
    const key = JSON.parse(read(root, ".baton/server.key"));
    const settings = JSON.parse(read(root, ".claude/settings.local.json"));
    const pre = settings.hooks.PreToolUse[0];
    expect(pre.matcher).toBe("Write|Edit|MultiEdit|NotebookEdit|Bash");
    expect(pre.hooks[0]).toEqual({
      type: "http",
      url: `http://127.0.0.1:${key.port}/v1/agent-hooks/claude/PreToolUse`,
      headers: { Authorization: `Bearer ${key.token}` },
      timeout: 60,
    });
    expect(settings.hooks.SessionStart[0].hooks[0].type).toBe("command");
    expect(statSync(join(root, ".claude/settings.local.json")).mode & 0o777).toBe(0o600);
    // The server started next takes that port and token: the entries reach it.
    const s = await serve(root);
    try {
      expect([s.port, s.token]).toEqual([key.port, key.token]);
      hook(root, { agent: "claude", fixture: "session-start-startup" }, { BATON_HOOK_SERVER: "off" });
      const res = await post(s.port, s.token, "PreToolUse", stepText(root, { agent: "claude", fixture: "pre-edit" }).text);
      expect(res.status).toBe(200);
      expect(checkpoints(root)).toHaveLength(1);
    } finally {
      await s.stop();
    }
    // Status knows them; uninstall takes them out with the rest.
    const st = cli(["hooks", "status", "claude", "--json", "--root", root]).json();
    const local = st.hooks.find((h: any) => h.file.endsWith("settings.local.json"));
    expect(local.missing).toEqual([]);
    expect(local.installed.filter((h: any) => h.http)).toHaveLength(3);
    const un = cli(["hooks", "uninstall", "claude", "--json", "--root", root]).json();
    expect(un.removed).toBe(out.hooks.length);
    expect(existsSync(join(root, ".claude/settings.local.json"))).toBe(false);
    // Not for a shared or user file, which must not hold this machine's port and token.
    const shared = cli(["hooks", "install", "claude", "--http", "--shared", "--json", "--root", root]);
    expect([shared.code, shared.json().error.code]).toEqual([2, "bad_input"]);
    const codex = cli(["hooks", "install", "codex", "--http", "--json", "--root", root]);
    expect([codex.code, codex.json().error.code]).toEqual([2, "bad_input"]);
    expect(existsSync(join(root, ".claude/settings.json"))).toBe(false);
    expect(existsSync(join(root, ".codex"))).toBe(false);
  });
});

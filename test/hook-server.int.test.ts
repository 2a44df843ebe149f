/**
 * Hooks handed to the workspace's running server (`POST /v1/hooks/:agent/:event`): real
 * `baton hook` processes (the built CLI) and a real `baton serve` child on temp workspaces.
 *
 * - the server's answers are the in-process answers, step by step, for recorded payloads;
 * - the endpoint is guarded like every route, and checks what it is sent;
 * - session-start hooks start one background server (and the opt-outs start none); it exits
 *   when idle, when its workspace is gone, and when the workspace's config changes.
 *
 * Every way the hand-off can fail, retries, builds and deadlines: hook-retry.int.test.ts.
 * No test leaves a server running: each is stopped, and afterEach kills (and fails on) any
 * `baton serve` still running on a workspace a test made.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { waitExit } from "./child-process.js";
import { CLI, cli, writeConfig } from "./helpers.js";
import {
  alive,
  baton,
  checkpoints,
  failOnStrayServers,
  hook,
  hookAsync,
  hookLog,
  normalise,
  payload,
  read,
  type Step,
  serversOn,
  sessionId,
  sleep,
  until,
  workspace,
  writeServerFile,
} from "./hook-helpers.js";
import { FILES, SCENARIOS } from "./hook-scenarios.js";
import { api, raw, type Served, serve } from "./server-helpers.js";

failOnStrayServers();

const PRE_EDIT: Step = { agent: "claude", fixture: "pre-edit" };

describe("hooks through the server", () => {
  for (const [agent, steps] of Object.entries(SCENARIOS)) {
    it(`${agent}: the server's answers are the in-process answers, step by step`, async () => {
      const viaServer = workspace(FILES);
      const inProcess = workspace(FILES);
      const s = await serve(viaServer);
      try {
        for (const [i, step] of steps.entries()) {
          const a = hook(viaServer, step, { BATON_HOOK_SERVER: "use" });
          const b = hook(inProcess, step, { BATON_HOOK_SERVER: "off" });
          expect(normalise(a.stdout, viaServer), `step ${i} (${step.fixture})`).toBe(normalise(b.stdout, inProcess));
          // Every hook with something to do went through the server; a read's before-hook has nothing to do.
          expect(a.via, `step ${i} (${step.fixture}): ${a.stderr}`).toBe(step.fixture === "pre-read" ? undefined : "server");
          expect(b.via, `step ${i} (${step.fixture})`).toBe(step.fixture === "pre-read" ? undefined : "process");
          step.effect?.(viaServer);
          step.effect?.(inProcess);
        }
        expect(hookLog(viaServer)).toEqual([]);
        // The same effects on disk and in the journal.
        for (const p of ["src/app.ts", "README.md"]) expect(read(viaServer, p), p).toBe(read(inProcess, p));
        expect(existsSync(join(viaServer, "src/signup.ts"))).toBe(existsSync(join(inProcess, "src/signup.ts")));
        expect(existsSync(join(viaServer, "generated.txt"))).toBe(existsSync(join(inProcess, "generated.txt")));
        const summary = (root: string) => ({
          checkpoints: checkpoints(root).map((c) => [c.kind, c.toolName]),
          ledger: baton(root, ["ledger", "list", "--session", sessionId(root)]).nodes.map((n: any) => [n.toolName, n.status]),
          runs: baton(root, ["session", "show", sessionId(root)]).snapshot.facets.runs.map((r: any) => [r.agent, r.status]),
          lanes: Object.keys(baton(root, ["session", "show", sessionId(root)]).snapshot.facets.lanes ?? {}).sort(),
        });
        expect(summary(viaServer)).toEqual(summary(inProcess));
        // A subagent is a lane of its own whichever way its hook was answered.
        if (agent === "claude") expect(summary(viaServer).lanes.some((l: string) => l.endsWith("/a7e91c2b4d"))).toBe(true);
      } finally {
        await s.stop();
      }
    });
  }

  it("the scenarios include a rollback, a spiral deny and 'undo that' (so the comparison above covers them)", async () => {
    const root = workspace(FILES);
    const s = await serve(root);
    try {
      const runs = SCENARIOS.claude?.map((step) => hook(root, step, { BATON_HOOK_SERVER: "use" })) ?? [];
      const out = runs.map((r) => r.stdout);
      expect(out.some((o) => o.includes("Baton rolled back to cp-"))).toBe(true);
      expect(out.some((o) => o.includes('"permissionDecision":"deny"'))).toBe(true);
      expect(out.some((o) => o.includes("Baton paused session"))).toBe(true);
      expect(runs.filter((r) => r.via === "server").length).toBeGreaterThan(10);
    } finally {
      await s.stop();
    }
  });

  it("both transports reach the server: libuv's TCP handle and node:net (BATON_HOOK_TRANSPORT=net)", async () => {
    const root = workspace(FILES);
    const s = await serve(root);
    try {
      const start = hook(root, { agent: "claude", fixture: "session-start-startup" }, { BATON_HOOK_SERVER: "use" });
      const lesson = "The login redirect loops when the session cookie has expired; check expiry first.";
      expect(cli(["lessons", "add", lesson, "--workspace", "--root", root]).code).toBe(0);
      const viaNet = hook(root, { agent: "claude", fixture: "user-prompt" }, { BATON_HOOK_SERVER: "use", BATON_HOOK_TRANSPORT: "net" });
      const viaHandle = hook(root, { agent: "claude", fixture: "user-prompt" }, { BATON_HOOK_SERVER: "use" });
      expect([start.via, viaNet.via, viaHandle.via], "all three answered by the server").toEqual(["server", "server", "server"]);
      expect(viaNet.stdout).toBe(viaHandle.stdout);
      expect(JSON.parse(viaNet.stdout).hookSpecificOutput.additionalContext).toContain("login redirect loops");
      // --pending-deprecation would print a warning for the internal binding: node:net is used, nothing on stderr.
      const warned = hook(
        root,
        { agent: "claude", fixture: "user-prompt" },
        { BATON_HOOK_SERVER: "use", NODE_OPTIONS: "--pending-deprecation", BATON_HOOK_DEBUG: "" },
      );
      expect(warned.stderr).toBe("");
      expect(warned.stdout).toBe(viaHandle.stdout);
    } finally {
      await s.stop();
    }
  });

  it("parallel hooks from several agents: one session, a run each, nothing lost", async () => {
    const root = workspace(FILES);
    const s = await serve(root);
    try {
      const run = (agent: string, fixture: string, vars: Record<string, string>) =>
        hookAsync(root, { agent, fixture, vars }, { BATON_HOOK_SERVER: "use" });
      hook(root, { agent: "claude", fixture: "session-start-startup" }, { BATON_HOOK_SERVER: "use" });
      const results = await Promise.all([
        run("claude", "session-start-startup", { session: "claude-a" }),
        run("claude", "session-start-startup", { session: "claude-b" }),
        run("codex", "session-start-startup", { session: "codex-a" }),
        run("gemini", "session-start-startup", { session: "gemini-a" }),
        ...["p1", "p2", "p3", "p4"].map((call) => run("claude", "post-read", { call })),
      ]);
      for (const r of results) expect([r.code, r.via], r.stderr).toEqual([0, "server"]);
      const sessions = baton(root, ["session", "list"]).sessions as any[];
      expect(sessions).toHaveLength(1);
      const runs = baton(root, ["session", "show", sessions[0].sessionId]).snapshot.facets.runs as any[];
      const running = runs.filter((r) => r.status === "running").map((r) => r.runId);
      expect(new Set(running).size, "every agent session has a run of its own").toBe(running.length);
      for (const p of ["claude-claude-a-", "claude-claude-b-", "codex-codex-a-", "gemini-gemini-a-"])
        expect(
          running.some((id) => id.startsWith(p)),
          p,
        ).toBe(true);
      expect(baton(root, ["ledger", "list", "--session", sessions[0].sessionId]).nodes).toHaveLength(4);
      expect(hookLog(root)).toEqual([]);
    } finally {
      await s.stop();
    }
  });
});

describe("the hook endpoint is guarded like every route", () => {
  it("token, Host, Origin and content type are checked before anything is recorded; the event is checked field by field", async () => {
    const root = workspace(FILES);
    const s = await serve(root);
    try {
      const event = {
        agent: "claude",
        native: "PreToolUse",
        cwd: root,
        agentSessionId: "a",
        kind: "before_tool",
        tool: {
          name: "Edit",
          kind: "write",
          files: [join(root, "src/app.ts")],
          input: { file_path: join(root, "src/app.ts") },
          callId: "c",
        },
      };
      const request = { requestId: "guarded-req-1", root, agentPid: process.pid, deadline: Date.now() + 60_000, event };
      const body = JSON.stringify(request);
      const path = "/v1/hooks/claude/PreToolUse";
      const json = { "content-type": "application/json" };
      const auth = { authorization: `Bearer ${s.token}` };
      const cases: [string, Record<string, string>, number][] = [
        ["no token", json, 401],
        ["a wrong token", { ...json, authorization: `Bearer ${s.token}x` }, 401],
        ["the cookie alone", { ...json, cookie: `baton_token_${s.port}=${s.token}` }, 401],
        ["a foreign Host", { ...json, ...auth, host: `evil.example:${s.port}` }, 403],
        ["a foreign Origin", { ...json, ...auth, origin: "http://evil.example" }, 403],
        ["Origin: null", { ...json, ...auth, origin: "null" }, 403],
        [
          "the server's own page (an allowed Origin): pages never run hooks",
          { ...json, ...auth, origin: `http://127.0.0.1:${s.port}` },
          403,
        ],
        ["a form content type", { ...auth, "content-type": "text/plain" }, 415],
      ];
      for (const [what, headers, status] of cases) {
        const r = await raw(s.port, { method: "POST", path, headers, body });
        expect(r.status, what).toBe(status);
      }
      expect(baton(root, ["status"]).sessions, "nothing recorded").toEqual([]);

      const post = (b: unknown, p = path) =>
        raw(s.port, { method: "POST", path: p, headers: { ...json, ...auth }, body: JSON.stringify(b) });
      const wrong: [string, unknown][] = [
        ["no request id", { ...request, requestId: "x" }],
        ["a relative root", { ...request, root: "." }],
        ["no deadline", { ...request, deadline: undefined }],
        ["a pid that is not one", { ...request, agentPid: -3 }],
        ["no event", { ...request, event: undefined }],
        ["an unknown kind", { ...request, event: { ...event, kind: "explode" } }],
        ["a tool of no kind", { ...request, event: { ...event, tool: { ...event.tool, kind: "magic" } } }],
        ["files that are not strings", { ...request, event: { ...event, tool: { ...event.tool, files: [1] } } }],
        ["a relative cwd", { ...request, event: { ...event, cwd: "src" } }],
        ["another agent's event", { ...request, event: { ...event, agent: "codex" } }],
      ];
      for (const [what, b] of wrong) {
        const r = await post(b);
        expect([r.status, r.json().error.code], what).toEqual([400, "bad_input"]);
      }
      expect((await post(request, "/v1/hooks/cursor/PreToolUse")).status).toBe(404);
      expect(baton(root, ["status"]).sessions, "still nothing recorded").toEqual([]);

      const ok = await post(request);
      expect(ok.status).toBe(200);
      expect(ok.headers["transfer-encoding"], "the status line goes out when the hook is taken, the body when it is answered").toBe(
        "chunked",
      );
      expect(ok.json()).toEqual({ response: {} });
      expect(checkpoints(root)).toHaveLength(1);
      const again = await post(request);
      expect([again.status, again.json()], "the same call again: answered, and its checkpoint is not taken twice").toEqual([
        200,
        { response: {} },
      ]);
      expect(checkpoints(root)).toHaveLength(1);
    } finally {
      await s.stop();
    }
  });
});

describe("the background server", () => {
  it("racing session-start hooks start exactly one server, which later hooks use; stopping it removes server.json", async () => {
    const root = workspace(FILES);
    const racers = await Promise.all(
      ["r1", "r2", "r3", "r4"].map(
        (session) =>
          new Promise<number | null>((resolve) => {
            const c = spawn(process.execPath, [CLI, "hook", "claude", "SessionStart"], {
              cwd: root,
              env: { ...process.env, BATON_HOOK_SERVER: "auto" },
              stdio: ["pipe", "ignore", "ignore"],
            });
            c.stdin.end(payload("claude", "session-start-startup", { cwd: root, session, call: "x" }));
            c.once("exit", (code) => resolve(code));
          }),
      ),
    );
    expect(racers).toEqual([0, 0, 0, 0]);
    const info = await until("the background server's server.json", () => {
      try {
        return JSON.parse(read(root, ".baton/server.json")) as { pid: number; port: number };
      } catch {
        return undefined;
      }
    });
    await until("the server to answer", () => serversOn(root).length > 0);
    await sleep(1_000); // any second server would have started and given up by now
    expect(serversOn(root), "exactly one server").toEqual([info.pid]);
    expect((await raw(info.port, { path: "/v1/health" })).status).toBe(200);
    // Its stdio: nothing on the agent's pipes, stderr to .baton/logs/server.log.
    expect(existsSync(join(root, ".baton/logs/server.log"))).toBe(true);

    // The next hook is handed to it.
    expect(hook(root, PRE_EDIT, { BATON_HOOK_SERVER: "auto" }).via).toBe("server");

    process.kill(info.pid, "SIGTERM");
    await until("the server to exit", () => !alive(info.pid));
    expect(existsSync(join(root, ".baton/server.json"))).toBe(false);
  });

  it("a server.json naming a live process that is not this workspace's serve does not keep a session start from starting one", async () => {
    const root = workspace(FILES);
    // A process of this user's, of the right start time, that runs no `serve`: what a file a
    // repository shipped could name (pid 1 in a container). Nothing listens on the port it names.
    const plain = spawn(process.execPath, ["-e", "setTimeout(() => {}, 600000)"], { cwd: root, stdio: "ignore" });
    try {
      const stat = read("/", `proc/${plain.pid}/stat`);
      const startTime = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] as string;
      writeServerFile(root, { pid: plain.pid as number, startTime, port: 9 });
      expect(hook(root, { agent: "claude", fixture: "session-start-startup" }, { BATON_HOOK_SERVER: "auto" }).code).toBe(0);
      const info = await until("a server of the workspace's own in server.json", () => {
        try {
          const v = JSON.parse(read(root, ".baton/server.json")) as { pid: number; port: number };
          return v.pid !== plain.pid && serversOn(root).includes(v.pid) ? v : undefined;
        } catch {
          return undefined;
        }
      });
      expect(hook(root, PRE_EDIT, { BATON_HOOK_SERVER: "auto" }).via).toBe("server");
      process.kill(info.pid, "SIGTERM");
      await until("the server to exit", () => !alive(info.pid));
    } finally {
      plain.kill("SIGKILL");
    }
  });

  it("opt-outs: BATON_HOOK_SERVER=use or off, hooks.server in config.json; and only session-start and prompt hooks start one", async () => {
    const root = workspace(FILES);
    hook(root, { agent: "claude", fixture: "session-start-startup" }, { BATON_HOOK_SERVER: "off" });
    hook(root, { agent: "claude", fixture: "user-prompt" }, { BATON_HOOK_SERVER: "use" });
    writeConfig(root, { hooks: { server: "use" } });
    hook(root, { agent: "codex", fixture: "session-start-startup" }, { BATON_HOOK_SERVER: "" });
    writeConfig(root, { hooks: { server: "off" } });
    hook(root, { agent: "gemini", fixture: "session-start-startup" }, { BATON_HOOK_SERVER: "" });
    rmSync(join(root, ".baton", "config.json"));
    hook(root, PRE_EDIT, { BATON_HOOK_SERVER: "auto" });
    hook(root, { agent: "claude", fixture: "post-edit" }, { BATON_HOOK_SERVER: "auto" });
    await sleep(1_500);
    expect(serversOn(root)).toEqual([]);
    expect(existsSync(join(root, ".baton/server.json"))).toBe(false);
    expect(existsSync(join(root, ".baton/hooks/server-start")), "no start was even tried").toBe(false);

    // The default (nothing set) is auto: a prompt hook starts it.
    hook(root, { agent: "claude", fixture: "user-prompt" }, { BATON_HOOK_SERVER: "" });
    const info = await until("server.json", () => {
      try {
        return JSON.parse(read(root, ".baton/server.json")) as { pid: number };
      } catch {
        return undefined;
      }
    });
    process.kill(info.pid, "SIGTERM");
    await until("the server to exit", () => !alive(info.pid));
  });
});

describe("baton serve stops by itself", () => {
  async function serverFor(root: string, args: string[]): Promise<Served> {
    const s = await serve(root, args);
    expect(alive(s.pid)).toBe(true);
    return s;
  }

  it("--idle-exit: after that long without requests (requests keep it up), with server.json removed", async () => {
    const root = workspace(FILES);
    const s = await serverFor(root, ["--idle-exit", "1500ms"]);
    try {
      for (let i = 0; i < 5; i++) {
        await sleep(500);
        expect((await raw(s.port, { path: "/v1/health" })).status, `request ${i}`).toBe(200);
      }
      const t = Date.now();
      const exit = await waitExit(s.child, 15_000);
      expect(exit.code).toBe(0);
      expect(Date.now() - t).toBeGreaterThanOrEqual(1_000);
      expect(existsSync(join(root, ".baton/server.json"))).toBe(false);
    } finally {
      await s.stop();
    }
  });

  it("rejects an --idle-exit without a unit", () => {
    const root = workspace();
    for (const v of ["30", "0s", "-1m", "soon"]) {
      const r = cli(["serve", "--json", "--root", root, "--idle-exit", v]);
      expect(r.code, v).toBe(2);
      expect(r.json().error.code).toBe("bad_input");
    }
  });

  it("when its workspace's .baton directory is removed", async () => {
    const root = workspace(FILES);
    const s = await serverFor(root, []);
    try {
      rmSync(join(root, ".baton"), { recursive: true, force: true });
      // A write at once, before the server's watch notices: refused, not acknowledged into the
      // deleted database. (Should the watch's tick come first, the server is already closing and
      // the connection is refused: never a 201 either.)
      const write = await api(s, "POST", "/v1/sessions", { flow: "task", id: "lost" }).catch((err: Error) => err);
      if (!(write instanceof Error)) {
        expect([write.status, write.json().error.code]).toEqual([503, "shutting_down"]);
        expect(write.json().error.message).toContain("was removed or replaced: nothing was written");
      }
      const exit = await waitExit(s.child, 15_000);
      expect(exit.code).toBe(0);
    } finally {
      await s.stop();
    }
  });

  it("when a user flow is added to .baton/flows: the server stops answering hooks (a new process would read the flow)", async () => {
    const root = workspace(FILES);
    const s = await serverFor(root, ["--idle-exit", "10m"]);
    try {
      expect(hook(root, { agent: "claude", fixture: "session-start-startup" }, { BATON_HOOK_SERVER: "use" }).via).toBe("server");
      mkdirSync(join(root, ".baton", "flows"), { recursive: true });
      writeFileSync(join(root, ".baton", "flows", "review.json"), "{}");
      const r = hook(root, PRE_EDIT, { BATON_HOOK_SERVER: "use" });
      expect([r.via, r.reason]).toEqual(["process", "the server answered 409 (config_changed)"]);
      expect(checkpoints(root)).toHaveLength(1);
      expect((await waitExit(s.child, 15_000)).code).toBe(0);
    } finally {
      await s.stop();
    }
  });

  it("when .baton/config.json changes: hooks run in-process meanwhile, and a server with --idle-exit exits", async () => {
    const root = workspace(FILES);
    const s = await serverFor(root, ["--idle-exit", "10m"]);
    try {
      expect(hook(root, { agent: "claude", fixture: "session-start-startup" }, { BATON_HOOK_SERVER: "use" }).via).toBe("server");
      writeConfig(root, { checkpoints: { retain: 5 } });
      const r = hook(root, PRE_EDIT, { BATON_HOOK_SERVER: "use" });
      expect([r.via, r.reason]).toEqual(["process", "the server answered 409 (config_changed)"]);
      expect(checkpoints(root)).toHaveLength(1);
      const exit = await waitExit(s.child, 15_000);
      expect(exit.code).toBe(0);
      expect(existsSync(join(root, ".baton/server.json"))).toBe(false);
    } finally {
      await s.stop();
    }
  });

  it("when the user trusts .baton/config.json (`baton trust`): the server, which read it untrusted, stops answering hooks", async () => {
    const root = workspace(FILES);
    writeFileSync(join(root, ".baton", "config.json"), JSON.stringify({ checkpoints: { retain: 5 } }));
    const s = await serverFor(root, ["--idle-exit", "10m"]);
    try {
      expect(hook(root, { agent: "claude", fixture: "session-start-startup" }, { BATON_HOOK_SERVER: "use" }).via).toBe("server");
      expect(cli(["trust", "--root", root]).code).toBe(0);
      const r = hook(root, PRE_EDIT, { BATON_HOOK_SERVER: "use" });
      expect([r.via, r.reason]).toEqual(["process", "the server answered 409 (config_changed)"]);
      const exit = await waitExit(s.child, 15_000);
      expect(exit.code).toBe(0);
    } finally {
      await s.stop();
    }
  });
});

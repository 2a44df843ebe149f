/**
 * When the server does not answer a hook, the hook answers it in its own process: a blind
 * retry with the same request id and call keys, so whatever the server did is found, not done
 * again. Real `baton hook` processes, real `baton serve` children, and stand-in servers on real
 * sockets (one of them acts through the library on the real workspace, then breaks off).
 *
 * - every way the hand-off fails (dead pid, reused pid, refused, non-2xx, garbage, stopped,
 *   killed, another workspace, opted out) ends in exactly one answer and one of each step;
 * - a server of another build is not used; one hooks started is replaced by a session-start hook.
 *
 * Deadlines (a checkpoint or rollback cancelled rather than landing late): deadline.int.test.ts.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openBaton } from "../src/index.js";
import { spawnNode, waitExit } from "./child-process.js";
import { CLI, cli, writeConfig } from "./helpers.js";
import {
  alive,
  baton,
  buildId,
  checkpoints,
  connectedTo,
  deadPid,
  events,
  failOnStrayServers,
  fakeServer,
  hook,
  hookAsync,
  hookLog,
  ownStartTime,
  payload,
  read,
  respond,
  type Step,
  sessionId,
  sleep,
  until,
  workspace,
  writeServerFile,
} from "./hook-helpers.js";
import { FILES } from "./hook-scenarios.js";
import { raw, serve } from "./server-helpers.js";

failOnStrayServers();

const START: Step = { agent: "claude", fixture: "session-start-startup" };
const PRE_EDIT: Step = { agent: "claude", fixture: "pre-edit" };
const POST_EDIT: Step = { agent: "claude", fixture: "post-edit" };
const UNDO: Step = { agent: "claude", fixture: "user-prompt-undo" };
const USE = { BATON_HOOK_SERVER: "use" };

describe("falling back to the hook's own process", () => {
  it("server.json naming a dead process: the hook runs in its own process, nothing is sent", async () => {
    const root = workspace(FILES);
    writeServerFile(root, { pid: await deadPid(), port: 9 });
    const r = hook(root, PRE_EDIT, USE);
    expect([r.stdout, r.via, r.reason]).toEqual(["", "process", "no server"]);
    expect(checkpoints(root).map((c) => c.toolName)).toEqual(["Edit"]);
    expect(hookLog(root)).toEqual([]);
  });

  it("server.json whose pid now belongs to another process (another start time): nothing is sent, not even the token", async () => {
    const root = workspace(FILES);
    const fake = await fakeServer((_b, sock) => respond(sock, 200, JSON.stringify({ response: { deny: { reason: "block" } } })));
    try {
      const realStart = ownStartTime();
      writeServerFile(root, { pid: process.pid, port: fake.port, startTime: String(Number(realStart) + 1) });
      const r = await hookAsync(root, PRE_EDIT, USE);
      expect([r.code, r.stdout, r.via]).toEqual([0, "", "process"]);
      expect(fake.requests, "the listener on the remembered port heard nothing").toEqual([]);
      expect(checkpoints(root).map((c) => c.toolName)).toEqual(["Edit"]);
      // The same file with the right start time is the server's: the hook goes to it, and renders its response.
      writeServerFile(root, { pid: process.pid, port: fake.port, startTime: realStart });
      const served = await hookAsync(root, PRE_EDIT, USE);
      expect(served.via).toBe("server");
      expect(JSON.parse(served.stdout).hookSpecificOutput).toMatchObject({ permissionDecision: "deny", permissionDecisionReason: "block" });
      expect(fake.requests).toHaveLength(1);
    } finally {
      await fake.close();
    }
  });

  it("a live pid with nothing listening on the port: connection refused, the hook runs here", async () => {
    const root = workspace(FILES);
    const fake = await fakeServer(() => undefined);
    await fake.close(); // a port nobody listens on now
    writeServerFile(root, { pid: process.pid, port: fake.port });
    const r = hook(root, PRE_EDIT, USE);
    expect([r.stdout, r.via]).toEqual(["", "process"]);
    expect(checkpoints(root)).toHaveLength(1);
  });

  it("a server that refuses (non-2xx) or answers something that is not a response: the hook runs here", async () => {
    for (const [status, body] of [
      [401, '{"error":{"code":"unauthorized"}}'],
      [500, "oops"],
      [200, "not json"],
      [200, '{"response": 42}'],
      [200, '{"response": {"deny": {"why": "no reason"}}}'],
      [200, '{"stdout": "{}\\n"}'],
    ] as const) {
      const root = workspace(FILES);
      const fake = await fakeServer((_b, sock) => respond(sock, status, body));
      try {
        writeServerFile(root, { pid: process.pid, port: fake.port });
        const r = await hookAsync(root, PRE_EDIT, USE);
        expect([r.code, r.stdout, r.via], `${status} ${body}`).toEqual([0, "", "process"]);
        expect(fake.requests, "the hook did ask the server").toHaveLength(1);
        expect(checkpoints(root), `${status} ${body}`).toHaveLength(1);
      } finally {
        await fake.close();
      }
    }
  });

  it("the request a hook sends: token, workspace, agent pid, request id, deadline and the neutral event", async () => {
    const root = workspace(FILES);
    const fake = await fakeServer((_b, sock) => respond(sock, 200, JSON.stringify({ response: { userMessage: "from the server" } })));
    try {
      writeServerFile(root, { pid: process.pid, port: fake.port, token: "tok_en-123" });
      const sent = Date.now();
      const r = await hookAsync(root, PRE_EDIT, USE, join(root, "src"));
      expect(r.code).toBe(0);
      expect(r.stdout, "the server's response, rendered for the agent").toBe('{"systemMessage":"from the server"}\n');
      const [body] = fake.requests;
      expect(body.root).toBe(root);
      expect(body.agentPid).toBeGreaterThan(1);
      expect(body.requestId).toMatch(/^[A-Za-z0-9_-]{8,80}$/);
      // Installed hooks time out after 60 s; the deadline keeps 15 s of them.
      expect(body.deadline).toBeGreaterThan(sent + 40_000);
      expect(body.deadline).toBeLessThanOrEqual(Date.now() + 45_000);
      expect(body.event).toEqual({
        agent: "claude",
        native: "PreToolUse",
        cwd: root,
        agentSessionId: "agent-session-1",
        kind: "before_tool",
        tool: {
          name: "Edit",
          kind: "write",
          files: [join(root, "src/app.ts")],
          input: JSON.parse(payload("claude", "pre-edit", { cwd: root, session: "s", call: "c" })).tool_input,
          callId: "toolu_01EditAppTs",
        },
        // Where Claude Code's configuration is (the guard's; the server has not the agent's environment).
        transcriptPath: "/home/dev/.claude/projects/-work-app/agent-session-1.jsonl",
      });
      expect(fake.heads[0]).toMatch(/^POST \/v1\/hooks\/claude\/PreToolUse HTTP\/1\.1\r\n/);
      expect(fake.heads[0]).toContain(`\r\nHost: 127.0.0.1:${fake.port}\r\n`);
      expect(fake.heads[0]).toContain("\r\nAuthorization: Bearer tok_en-123\r\n");
      expect(fake.heads[0]).toContain("\r\nContent-Type: application/json\r\n");
      expect(baton(root, ["status"]).sessions, "the server answered: nothing ran in-process").toEqual([]);
    } finally {
      await fake.close();
    }
  });
});

describe("a blind retry does each step once", () => {
  /** A server that does the hook's work on the real workspace, then breaks off without answering. */
  async function actsThenBreaksOff(root: string) {
    const acted: string[] = [];
    const fake = await fakeServer(async (body, sock) => {
      sock.write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
      const b = await openBaton({ root, create: false });
      try {
        const response = await b.agents.handle(body.event, { agentPid: body.agentPid, requestId: body.requestId, deadline: body.deadline });
        acted.push(JSON.stringify(response));
      } finally {
        await b.close();
      }
      sock.destroy();
    });
    writeServerFile(root, { pid: process.pid, port: fake.port });
    return { fake, acted };
  }

  it("the checkpoint before a tool: the retry finds the one the server took (its id comes from the call)", async () => {
    const root = workspace(FILES);
    hook(root, START, { BATON_HOOK_SERVER: "off" });
    const { fake, acted } = await actsThenBreaksOff(root);
    try {
      const r = await hookAsync(root, PRE_EDIT, USE);
      expect([r.code, r.stdout, r.via, r.reason]).toEqual([0, "", "process", "the server closed the connection without an answer"]);
      expect(acted, "the server did the work").toHaveLength(1);
      expect(
        checkpoints(root).map((c) => c.toolName),
        "one checkpoint, not two",
      ).toEqual(["Edit"]);
      // The edit, and the after-tool hook (retried the same way) names that checkpoint in its turn, once.
      writeFileSync(join(root, "src/app.ts"), "edited\n");
      await hookAsync(root, POST_EDIT, USE);
      expect(acted).toHaveLength(2);
      const turns = events(root, "turn:recorded");
      expect(turns.map((t) => t.data.checkpointId)).toEqual([checkpoints(root)[0].id]);
      expect(baton(root, ["ledger", "list", "--session", sessionId(root)]).nodes).toHaveLength(1);
    } finally {
      await fake.close();
    }
  });

  it("'undo that': the retry answers with the server's rollback instead of rolling back a second step", async () => {
    const root = workspace(FILES);
    hook(root, START, { BATON_HOOK_SERVER: "off" });
    // Two edits, each checkpointed before: "undo that" must take back the second only.
    hook(root, PRE_EDIT, { BATON_HOOK_SERVER: "off" });
    writeFileSync(join(root, "src/app.ts"), "first edit\n");
    hook(root, { agent: "claude", fixture: "pre-bash" }, { BATON_HOOK_SERVER: "off" });
    writeFileSync(join(root, "src/app.ts"), "second edit\n");
    const { fake, acted } = await actsThenBreaksOff(root);
    try {
      const r = await hookAsync(root, UNDO, USE);
      expect([r.code, r.via]).toEqual([0, "process"]);
      expect(acted).toHaveLength(1);
      expect(JSON.parse(acted[0] as string).userMessage).toContain("Baton rolled back to");
      expect(JSON.parse(r.stdout).systemMessage, "the retry says what the server did").toBe(JSON.parse(acted[0] as string).userMessage);
      expect(read(root, "src/app.ts"), "one step back, not two").toBe("first edit\n");
      expect(events(root, "rollback:applied")).toHaveLength(1);
      expect(events(root, "rollback:started")).toHaveLength(1);
    } finally {
      await fake.close();
    }
  });

  it("a server that never takes the hook (stopped): the hook runs here after a second; resumed, the server's attempt finds the checkpoint taken", async () => {
    const root = workspace(FILES);
    const s = await serve(root);
    try {
      hook(root, START, USE);
      process.kill(s.pid, "SIGSTOP");
      const started = Date.now();
      const r = hook(root, PRE_EDIT, USE);
      expect([r.stdout, r.via, r.reason]).toEqual(["", "process", "the server did not take the hook within 1000 ms"]);
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
      process.kill(s.pid, "SIGCONT");
      await sleep(1_000); // the server now reads the request the hook sent, and answers it to nobody
      expect((await raw(s.port, { path: "/v1/health" })).status).toBe(200);
      expect(checkpoints(root), "one checkpoint: the server's attempt returned the one the hook took").toHaveLength(1);
      expect(hookLog(root)).toEqual([]);
      // The server still answers the next hook.
      expect(hook(root, POST_EDIT, USE).via).toBe("server");
    } finally {
      process.kill(s.pid, "SIGCONT");
      await s.stop();
    }
  });

  it("a server killed with SIGKILL while the hook waits: the hook runs here, once", async () => {
    const root = workspace(FILES);
    const s = await serve(root);
    try {
      process.kill(s.pid, "SIGSTOP");
      const c = spawnNode(CLI, ["hook", "claude", "PreToolUse"], "hook pre-edit");
      c.sendLast(payload("claude", "pre-edit", { cwd: root, session: "agent-session-1", call: "c" }));
      await until("the hook's connection to the stopped server", () => connectedTo(s.port));
      process.kill(s.pid, "SIGKILL");
      const exit = await waitExit(c, 20_000);
      expect(exit.code, c.stderr()).toBe(0);
      expect(c.lines.join("\n")).toBe("");
      expect((await s.stop()).signal).toBe("SIGKILL");
      expect(checkpoints(root).map((x) => x.toolName)).toEqual(["Edit"]);
      expect(hookLog(root)).toEqual([]);
      // server.json is left naming a dead process: the next hook goes straight to its own process.
      const next = hook(root, POST_EDIT, USE);
      expect([next.via, next.reason]).toEqual(["process", "no server"]);
    } finally {
      await s.stop();
    }
  });

  it("a hook from another workspace is not handled by this server (a copied server.json)", async () => {
    const served = workspace(FILES);
    const other = workspace(FILES);
    const s = await serve(served);
    try {
      writeFileSync(join(other, ".baton", "server.json"), read(served, ".baton/server.json"));
      // The file names a process that serves another workspace: not this one's server (Linux's
      // /proc says so; the server would refuse it too, with wrong_workspace).
      const r = hook(other, PRE_EDIT, USE);
      expect([r.stdout, r.via, r.reason]).toEqual(["", "process", "no server"]);
      expect(checkpoints(other), "answered in its own workspace, in-process").toHaveLength(1);
      expect(baton(served, ["status"]).sessions, "and wrote nothing to its own workspace").toEqual([]);
    } finally {
      await s.stop();
    }
  });

  it("a hook whose environment names another store is not handled by this server: it runs on its own store", async () => {
    const root = workspace(FILES);
    const s = await serve(root); // on the workspace's SQLite store
    try {
      // Nothing listens on port 1: the hook's own store is down, and it fails open in its own process.
      const r = hook(root, PRE_EDIT, { ...USE, BATON_STORE: "postgres://baton@127.0.0.1:1/db", BATON_PROJECT: "other" });
      expect([r.stdout, r.via, r.reason]).toEqual(["", "process", "the server answered 409 (wrong_store)"]);
      expect(baton(root, ["status"]).sessions, "nothing reached the server's store").toEqual([]);
      expect(JSON.stringify(hookLog(root)), "the hook tried its own store").toContain("storage_unavailable");
      // The refusal itself, as the route says it: wrong_store for another store, bad input for a store that is not text.
      const event = {
        agent: "claude",
        native: "PreToolUse",
        cwd: root,
        kind: "before_tool",
        tool: { name: "Bash", kind: "shell", files: [], input: {}, command: "true" },
      };
      const post = (store: unknown) =>
        raw(s.port, {
          method: "POST",
          path: "/v1/hooks/claude/PreToolUse",
          headers: { authorization: `Bearer ${s.token}`, "content-type": "application/json" },
          body: JSON.stringify({ requestId: "store-check-1", root, agentPid: process.pid, deadline: Date.now() + 60_000, store, event }),
        });
      const refused = await post("postgres 127.0.0.1:1/db other");
      expect([refused.status, refused.json().error.code]).toEqual([409, "wrong_store"]);
      const malformed = await post(7);
      expect([malformed.status, malformed.json().error.code]).toEqual([400, "bad_input"]);
      expect(baton(root, ["status"]).sessions, "neither reached the store").toEqual([]);
      // The same store is handled by the server as before.
      expect(hook(root, PRE_EDIT, USE).via).toBe("server");
      expect(checkpoints(root)).toHaveLength(1);
    } finally {
      await s.stop();
    }
  });

  it("settings from the environment: a hook whose differ from the server's runs in its own process, with its own", async () => {
    const root = workspace(FILES);
    const s = await serve(root, [], { BATON_LEDGER_DURABILITY: "full", BATON_CHECKPOINT_RETAIN: "50" });
    try {
      // server.json says what the server runs with: a hook with other settings does not ask it.
      const started = JSON.parse(readFileSync(join(root, ".baton", "server.json"), "utf8")).settings as string;
      expect(started).toMatch(/^BATON_LEDGER_DURABILITY=full BATON_CHECKPOINT_RETAIN=50 config home \//);
      const bare = hook(root, PRE_EDIT, USE);
      expect(bare.via).toBe("process");
      expect(bare.reason).toMatch(
        /^the server runs with other settings \(BATON_LEDGER_DURABILITY=full BATON_CHECKPOINT_RETAIN=50 config home .*, not config home .*\)$/,
      );
      const other = hook(root, POST_EDIT, { ...USE, BATON_LEDGER_DURABILITY: "relaxed", BATON_CHECKPOINT_RETAIN: "50" });
      expect(other.via).toBe("process");
      // The same values, spelt another way (the variables are read case-insensitively), are the same settings.
      const same = hook(
        root,
        { agent: "claude", fixture: "pre-bash" },
        { ...USE, BATON_LEDGER_DURABILITY: "Full", BATON_CHECKPOINT_RETAIN: "50" },
      );
      expect(same.via).toBe("server");
      expect(checkpoints(root)).toHaveLength(2);
      expect(hookLog(root)).toEqual([]);
      // The server refuses other settings itself too (a server.json read before it changed).
      const post = (settings: unknown) =>
        raw(s.port, {
          method: "POST",
          path: "/v1/hooks/claude/Stop",
          headers: { authorization: `Bearer ${s.token}`, "content-type": "application/json" },
          body: JSON.stringify({
            requestId: "settings-check-1",
            root,
            agentPid: process.pid,
            deadline: Date.now() + 60_000,
            settings,
            event: { agent: "claude", native: "Stop", cwd: root, kind: "stop", sessionEnd: false },
          }),
        });
      const refused = await post("BATON_DURABILITY=none");
      expect([refused.status, refused.json().error.code]).toEqual([409, "wrong_settings"]);
      expect(refused.json().error.message).toContain(started);
      expect((await post(3)).status).toBe(400);
      expect((await post(started)).status).toBe(200);
      // doctor, run from an environment without those settings, says why hooks from it are slower.
      const doctor = (env: Record<string, string>) =>
        (
          cli(["doctor", "--json", "--root", root], { env }).json().findings as { code: string; evidence: Record<string, unknown> }[]
        ).filter((f) => f.code === "server_settings_differ");
      expect(doctor({})).toMatchObject([{ evidence: { server: started, mine: expect.stringMatching(/^config home /) } }]);
      expect(doctor({ BATON_LEDGER_DURABILITY: "full", BATON_CHECKPOINT_RETAIN: "50" })).toEqual([]);
    } finally {
      await s.stop();
    }
  });

  it("opted out, the hook does not even connect to the server; in use, it connects once and sends once", async () => {
    const root = workspace(FILES);
    const fake = await fakeServer((_b, sock) => respond(sock, 200, JSON.stringify({ response: {} })));
    try {
      writeServerFile(root, { pid: process.pid, port: fake.port });
      const off = await hookAsync(root, PRE_EDIT, { BATON_HOOK_SERVER: "off" });
      expect([off.via, off.reason]).toEqual(["process", "hooks.server is off"]);
      expect(fake.connections()).toBe(0);
      const used = await hookAsync(root, POST_EDIT, USE);
      expect(used.via).toBe("server");
      expect([fake.connections(), fake.requests.length]).toEqual([1, 1]);
    } finally {
      await fake.close();
    }
  });

  it('with BATON_HOOK_SERVER=off or hooks.server "off", a running server is not used', async () => {
    const root = workspace(FILES);
    const s = await serve(root);
    try {
      expect(hook(root, PRE_EDIT, { BATON_HOOK_SERVER: "off" }).reason).toBe("hooks.server is off");
      writeConfig(root, { hooks: { server: "off" } });
      expect(hook(root, POST_EDIT, { BATON_HOOK_SERVER: "" }).reason).toBe("hooks.server is off");
      expect(checkpoints(root)).toHaveLength(1);
      expect(baton(root, ["ledger", "list", "--session", sessionId(root)]).nodes).toHaveLength(1);
    } finally {
      await s.stop();
    }
  });
});

describe("the server says its build", () => {
  it("a server.json naming another build: nothing is sent to it, the hook runs here", async () => {
    const root = workspace(FILES);
    const fake = await fakeServer((_b, sock) => respond(sock, 200, JSON.stringify({ response: {} })));
    try {
      writeServerFile(root, { pid: process.pid, port: fake.port, version: "0.0.1+0123456789ab" });
      const r = await hookAsync(root, PRE_EDIT, USE);
      expect([r.stdout, r.via, r.reason]).toEqual(["", "process", `the server is build 0.0.1+0123456789ab, not ${buildId()}`]);
      expect(fake.requests).toEqual([]);
      expect(fake.connections(), "not even connected to").toBe(0);
      expect(checkpoints(root)).toHaveLength(1);
      // Nor does a server.json from before builds were named.
      writeServerFile(root, { pid: process.pid, port: fake.port, version: undefined as unknown as string });
      expect((await hookAsync(root, POST_EDIT, USE)).via).toBe("process");
      expect(fake.requests).toEqual([]);
    } finally {
      await fake.close();
    }
  });

  it("a session-start hook replaces a server of another build that hooks started: it stops, one of this build takes its place", async () => {
    const root = workspace(FILES);
    const old = await serve(root, ["--idle-exit", "10m"]);
    try {
      const file = join(root, ".baton", "server.json");
      const info = JSON.parse(read(root, ".baton/server.json"));
      expect(info).toMatchObject({ pid: old.pid, version: buildId(), idleExitMs: 600_000 });
      writeFileSync(file, JSON.stringify({ ...info, version: "0.0.1+0123456789ab" }));
      const r = hook(root, START, { BATON_HOOK_SERVER: "auto" });
      expect(r.via, "not answered by the other build").toBe("process");
      expect(JSON.parse(r.stdout).systemMessage).toContain("Baton: session");
      const replaced = await until("a server of this build", () => {
        try {
          const now = JSON.parse(read(root, ".baton/server.json"));
          return now.pid !== old.pid && now.version === buildId() ? now : undefined;
        } catch {
          return undefined;
        }
      });
      expect((await waitExit(old.child, 15_000)).code, "the old server stopped cleanly (SIGTERM)").toBe(0);
      expect(hook(root, PRE_EDIT, USE).via, "later hooks go to the new one").toBe("server");
      process.kill(replaced.pid, "SIGTERM");
      await until("the new server to exit", () => !alive(replaced.pid));
    } finally {
      await old.stop();
    }
  });

  it("a server of another build that the user started (no idle exit) is left alone: hooks run in their own process", async () => {
    const root = workspace(FILES);
    const s = await serve(root);
    try {
      const info = JSON.parse(read(root, ".baton/server.json"));
      writeFileSync(join(root, ".baton", "server.json"), JSON.stringify({ ...info, version: "0.0.1+0123456789ab" }));
      expect(hook(root, START, { BATON_HOOK_SERVER: "auto" }).via).toBe("process");
      await sleep(1_500);
      expect(alive(s.pid)).toBe(true);
      expect(JSON.parse(read(root, ".baton/server.json")).pid).toBe(s.pid);
    } finally {
      await s.stop();
    }
  });
});

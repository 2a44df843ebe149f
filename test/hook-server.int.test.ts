/**
 * Hooks handed to the workspace's running server (`POST /v1/hooks/:agent/:event`): real
 * `baton hook` processes (the built CLI) and a real `baton serve` child on temp workspaces.
 *
 * - the server's answers are the in-process answers, step by step, for recorded payloads;
 * - every way the hand-off can fail falls back to the in-process path, exactly once;
 * - the endpoint is guarded like every route;
 * - session-start hooks start one background server (and the opt-outs start none); it exits
 *   when idle, when its workspace is gone, and when the workspace's config changes.
 *
 * No test leaves a server running: each is stopped, and afterEach kills (and fails on) any
 * `baton serve` still running on a workspace a test made.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Socket } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { killAll, spawnNode, waitExit } from "./child-process.js";
import { CLI, type CliResult, cleanupDirs, cli, initWorkspace, REPO, spawnTracked } from "./helpers.js";
import { raw, type Served, serve } from "./server-helpers.js";

const FIXTURES = join(REPO, "test", "fixtures", "hooks");
const roots: string[] = [];

/** `baton serve` processes whose command line names `root` (Linux /proc). */
function serversOn(root: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0");
    } catch {
      continue;
    }
    if (argv.includes("serve") && argv.includes(root) && Number(name) !== process.pid) out.push(Number(name));
  }
  return out;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

afterEach(() => {
  const stray = roots.splice(0).flatMap((r) => serversOn(r));
  for (const pid of stray) {
    try {
      process.kill(pid, "SIGCONT");
      process.kill(pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
  cleanupDirs();
  if (stray.length > 0) throw new Error(`test left baton serve running: pids ${stray.join(", ")}`);
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Whether a loopback TCP connection to `port` is established (Linux /proc/net/tcp). */
function connectedTo(port: number): boolean {
  const hex = port.toString(16).toUpperCase().padStart(4, "0");
  return readFileSync("/proc/net/tcp", "utf8")
    .split("\n")
    .slice(1)
    .some((line) => {
      const f = line.trim().split(/\s+/);
      return f[2]?.endsWith(`:${hex}`) === true && f[3] === "01";
    });
}

async function until<T>(what: string, fn: () => T | undefined | false, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

function payload(agent: string, name: string, vars: Record<string, string>): string {
  let text = readFileSync(join(FIXTURES, agent, `${name}.json`), "utf8");
  for (const [k, v] of Object.entries(vars)) text = text.split(`{{${k}}}`).join(JSON.stringify(v).slice(1, -1));
  return text;
}

interface Step {
  agent: string;
  fixture: string;
  vars?: Record<string, string>;
  /** The tool's own effect, after the hook (the edit an agent makes between its before and after hooks). */
  effect?: (root: string) => void;
}

/** Replay one fixture through `baton hook <agent> <its event>` in `root`. */
function hook(root: string, s: Step, env: Record<string, string> = {}): CliResult {
  const input = payload(s.agent, s.fixture, { cwd: root, session: "agent-session-1", call: "call-1", ...s.vars });
  const event = JSON.parse(input).hook_event_name as string;
  const r = cli(["hook", s.agent, event], { cwd: root, input, env });
  expect(r.code, `baton hook ${s.agent} ${event} (${s.fixture}) exited ${r.code}: ${r.stderr}`).toBe(0);
  return r;
}

/**
 * The same as `hook`, without blocking this process: the stand-in servers below run in it.
 */
function hookAsync(
  root: string,
  s: Step,
  env: Record<string, string> = {},
  cwd = root,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const input = payload(s.agent, s.fixture, { cwd: root, session: "agent-session-1", call: "call-1", ...s.vars });
  const event = JSON.parse(input).hook_event_name as string;
  const c = spawnTracked(process.execPath, [CLI, "hook", s.agent, event], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  c.stdout?.on("data", (d) => {
    stdout += d;
  });
  c.stderr?.on("data", (d) => {
    stderr += d;
  });
  c.stdin?.end(input);
  return new Promise((resolve) => c.once("close", (code) => resolve({ code, stdout, stderr })));
}

function workspace(files: Record<string, string> = {}): string {
  const root = initWorkspace("baton-hook-server-", files);
  roots.push(root);
  return root;
}

function baton(root: string, args: string[]): any {
  return cli([...args, "--json", "--root", root]).json();
}

const claims = (root: string) => {
  try {
    return readdirSync(join(root, ".baton", "hooks", "claims"));
  } catch {
    return [];
  }
};
const sessionId = (root: string) => baton(root, ["status"]).sessions[0].sessionId as string;
const checkpoints = (root: string) => baton(root, ["checkpoints", "--session", sessionId(root)]).checkpoints as any[];
const read = (root: string, p: string) => readFileSync(join(root, p), "utf8");
const hookLog = (root: string) =>
  existsSync(join(root, ".baton/logs/hooks.log"))
    ? read(root, ".baton/logs/hooks.log")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l))
    : [];

/** Ids and paths differ between two workspaces; everything else in an answer must not. */
function normalise(text: string, root: string): string {
  const name = root.split("/").pop() as string;
  return text
    .split(root)
    .join("<root>")
    .split(name)
    .join("<name>")
    .replace(/\b(task|cp|rb|rollback)-[0-9a-z]+/g, "$1-<id>");
}

const APP = 'export function app() {\n  return redirect("/login");\n}\n';

/** One scenario per agent: checkpoints then rollback, a spiral and its deny, "undo that". */
const SCENARIOS: Record<string, Step[]> = {
  claude: [
    { agent: "claude", fixture: "session-start-startup" },
    { agent: "claude", fixture: "user-prompt" },
    { agent: "claude", fixture: "pre-read" },
    { agent: "claude", fixture: "post-read", vars: { call: "toolu_r1" } },
    { agent: "claude", fixture: "pre-edit", effect: (r) => writeFileSync(join(r, "src/app.ts"), "edited by the agent\n") },
    { agent: "claude", fixture: "post-edit" },
    { agent: "claude", fixture: "pre-bash", effect: (r) => writeFileSync(join(r, "generated.txt"), "made by the shell\n") },
    { agent: "claude", fixture: "post-bash" },
    { agent: "claude", fixture: "user-prompt-undo" },
    { agent: "claude", fixture: "user-prompt-undo" },
    ...["toolu_t1", "toolu_t2", "toolu_t3"].flatMap((call) => [
      { agent: "claude", fixture: "pre-bash-test", vars: { call } },
      { agent: "claude", fixture: "post-bash-failure", vars: { call } },
    ]),
    { agent: "claude", fixture: "pre-edit" },
    { agent: "claude", fixture: "user-prompt-undo" },
    { agent: "claude", fixture: "pre-compact" },
    { agent: "claude", fixture: "post-compact" },
    { agent: "claude", fixture: "session-start-resume" },
    { agent: "claude", fixture: "stop" },
    { agent: "claude", fixture: "session-end" },
  ],
  codex: [
    { agent: "codex", fixture: "session-start-startup" },
    {
      agent: "codex",
      fixture: "pre-apply-patch",
      effect: (r) => {
        writeFileSync(join(r, "src/app.ts"), APP.replace("/login", "/signup"));
        writeFileSync(join(r, "src/signup.ts"), 'export const signup = () => "signup";\n');
      },
    },
    { agent: "codex", fixture: "post-apply-patch" },
    { agent: "codex", fixture: "pre-bash", effect: (r) => writeFileSync(join(r, "README.md"), "changed by the shell\n") },
    { agent: "codex", fixture: "post-bash" },
    { agent: "codex", fixture: "post-bash-failure", vars: { call: "call_test_1" } },
    { agent: "codex", fixture: "user-prompt-rollback" },
    { agent: "codex", fixture: "session-start-resume" },
    { agent: "codex", fixture: "stop" },
    { agent: "codex", fixture: "post-compact" },
    { agent: "codex", fixture: "session-end" },
  ],
  gemini: [
    { agent: "gemini", fixture: "session-start-startup" },
    { agent: "gemini", fixture: "before-agent" },
    {
      agent: "gemini",
      fixture: "before-write-file",
      effect: (r) => writeFileSync(join(r, "README.md"), "# App\n\nRewritten by the agent.\n"),
    },
    { agent: "gemini", fixture: "after-write-file" },
    { agent: "gemini", fixture: "before-agent-undo" },
    { agent: "gemini", fixture: "after-shell-error" },
    { agent: "gemini", fixture: "after-shell-error" },
    { agent: "gemini", fixture: "after-shell-error" },
    { agent: "gemini", fixture: "before-write-file" },
    { agent: "gemini", fixture: "pre-compress" },
    { agent: "gemini", fixture: "pre-compress-manual" },
    { agent: "gemini", fixture: "after-agent" },
    { agent: "gemini", fixture: "session-end" },
  ],
};

const FILES = { "src/app.ts": APP, "README.md": "# App\n" };

describe("hooks through the server", () => {
  for (const [agent, steps] of Object.entries(SCENARIOS)) {
    it(`${agent}: the server's answers are the in-process answers, step by step`, async () => {
      const viaServer = workspace(FILES);
      const inProcess = workspace(FILES);
      const s = await serve(viaServer);
      try {
        let handled = 0;
        for (const [i, step] of steps.entries()) {
          const before = claims(viaServer).length;
          const a = hook(viaServer, step, { BATON_HOOK_SERVER: "use" });
          const b = hook(inProcess, step, { BATON_HOOK_SERVER: "off" });
          expect(normalise(a.stdout, viaServer), `step ${i} (${step.fixture})`).toBe(normalise(b.stdout, inProcess));
          if (claims(viaServer).length > before) handled++;
          step.effect?.(viaServer);
          step.effect?.(inProcess);
        }
        // Every hook with something to do went through the server (a claim each); none in-process.
        const noops = steps.filter((x) => x.fixture === "pre-read").length;
        expect(handled).toBe(steps.length - noops);
        expect(claims(inProcess)).toEqual([]);
        expect(hookLog(viaServer)).toEqual([]);
        // The same effects on disk and in the journal.
        for (const p of ["src/app.ts", "README.md"]) expect(read(viaServer, p), p).toBe(read(inProcess, p));
        expect(existsSync(join(viaServer, "src/signup.ts"))).toBe(existsSync(join(inProcess, "src/signup.ts")));
        expect(existsSync(join(viaServer, "generated.txt"))).toBe(existsSync(join(inProcess, "generated.txt")));
        const summary = (root: string) => ({
          checkpoints: checkpoints(root).map((c) => [c.kind, c.toolName]),
          ledger: baton(root, ["ledger", "list", "--session", sessionId(root)]).nodes.map((n: any) => [n.toolName, n.status]),
          runs: baton(root, ["session", "show", sessionId(root)]).snapshot.facets.runs.map((r: any) => [r.agent, r.status]),
        });
        expect(summary(viaServer)).toEqual(summary(inProcess));
      } finally {
        await s.stop();
      }
    });
  }

  it("the scenarios include a rollback, a spiral deny and 'undo that' (so the comparison above covers them)", async () => {
    const root = workspace(FILES);
    const s = await serve(root);
    try {
      const out = SCENARIOS.claude?.map((step) => hook(root, step, { BATON_HOOK_SERVER: "use" }).stdout) ?? [];
      expect(out.some((o) => o.includes("Baton rolled back to cp-"))).toBe(true);
      expect(out.some((o) => o.includes('"permissionDecision":"deny"'))).toBe(true);
      expect(out.some((o) => o.includes("Baton paused session"))).toBe(true);
      expect(claims(root).length).toBeGreaterThan(10);
    } finally {
      await s.stop();
    }
  });

  it("both transports reach the server: libuv's TCP handle and node:net (BATON_HOOK_TRANSPORT=net)", async () => {
    const root = workspace(FILES);
    const s = await serve(root);
    try {
      hook(root, { agent: "claude", fixture: "session-start-startup" }, { BATON_HOOK_SERVER: "use" });
      const lesson = "The login redirect loops when the session cookie has expired; check expiry first.";
      expect(cli(["lessons", "add", lesson, "--workspace", "--root", root]).code).toBe(0);
      const viaNet = hook(root, { agent: "claude", fixture: "user-prompt" }, { BATON_HOOK_SERVER: "use", BATON_HOOK_TRANSPORT: "net" });
      const viaHandle = hook(root, { agent: "claude", fixture: "user-prompt" }, { BATON_HOOK_SERVER: "use" });
      expect(claims(root), "all three answered by the server").toHaveLength(3);
      expect(viaNet.stdout).toBe(viaHandle.stdout);
      expect(JSON.parse(viaNet.stdout).hookSpecificOutput.additionalContext).toContain("login redirect loops");
      // --pending-deprecation would print a warning for the internal binding: node:net is used, nothing on stderr.
      const warned = hook(
        root,
        { agent: "claude", fixture: "user-prompt" },
        { BATON_HOOK_SERVER: "use", NODE_OPTIONS: "--pending-deprecation" },
      );
      expect(warned.stderr).toBe("");
      expect(claims(root)).toHaveLength(4);
    } finally {
      await s.stop();
    }
  });

  it("parallel hooks from several agents: one session, a run each, nothing lost", async () => {
    const root = workspace(FILES);
    const s = await serve(root);
    try {
      const run = (agent: string, fixture: string, vars: Record<string, string>) => {
        const c = spawnNode(
          CLI,
          ["hook", agent, JSON.parse(payload(agent, fixture, { cwd: root, session: "x", call: "y" })).hook_event_name],
          `hook ${fixture}`,
        );
        c.sendLast(payload(agent, fixture, { cwd: root, session: "agent-session-1", call: "call-1", ...vars }));
        return c;
      };
      hook(root, { agent: "claude", fixture: "session-start-startup" }, { BATON_HOOK_SERVER: "use" });
      const children = [
        run("claude", "session-start-startup", { session: "claude-a" }),
        run("claude", "session-start-startup", { session: "claude-b" }),
        run("codex", "session-start-startup", { session: "codex-a" }),
        run("gemini", "session-start-startup", { session: "gemini-a" }),
        ...["p1", "p2", "p3", "p4"].map((call) => run("claude", "post-read", { call })),
      ];
      try {
        for (const c of children) expect((await waitExit(c, 30_000)).code, c.stderr()).toBe(0);
      } finally {
        await killAll(children);
      }
      expect(claims(root).length).toBe(1 + children.length);
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

/** A process id that is certainly dead: a child that has exited. */
async function deadPid(): Promise<number> {
  const c = spawn(process.execPath, ["-e", "0"]);
  const pid = c.pid as number;
  await new Promise((r) => c.once("exit", r));
  return pid;
}

/** This process's start time (/proc/<pid>/stat field 22), as a server records its own. */
function ownStartTime(): string {
  const own = readFileSync(`/proc/${process.pid}/stat`, "utf8");
  return own.slice(own.lastIndexOf(")") + 2).split(" ")[19] as string;
}

/**
 * A server file naming `pid`; for this test process it records the real start time unless told
 * otherwise, so the hook takes the fake server on the port for the workspace's own.
 */
function writeServerFile(root: string, info: { pid: number; port: number; token?: string; startTime?: string }): void {
  const startTime = info.pid === process.pid ? { startTime: ownStartTime() } : {};
  writeFileSync(
    join(root, ".baton", "server.json"),
    `${JSON.stringify({ token: "t".repeat(43), startedAt: new Date().toISOString(), ...startTime, ...info })}\n`,
    { mode: 0o600 },
  );
}

/**
 * A stand-in for the server on a real socket: reads one hook request and lets `reply` decide
 * what happens (answer, close, never answer).
 */
async function fakeServer(
  reply: (body: any, sock: Socket) => void,
): Promise<{ port: number; requests: any[]; heads: string[]; close: () => Promise<void> }> {
  const requests: any[] = [];
  const heads: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((sock) => {
    sockets.add(sock);
    sock.on("close", () => sockets.delete(sock));
    let buf = Buffer.alloc(0);
    sock.on("data", (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      const end = buf.indexOf("\r\n\r\n");
      if (end < 0) return;
      const length = Number(/content-length: *(\d+)/i.exec(buf.subarray(0, end).toString())?.[1] ?? 0);
      if (buf.length < end + 4 + length) return;
      const body = JSON.parse(buf.subarray(end + 4, end + 4 + length).toString());
      heads.push(buf.subarray(0, end + 4).toString());
      requests.push(body);
      reply(body, sock);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    requests,
    heads,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

const respond = (sock: Socket, status: number, body: string) =>
  sock.end(
    `HTTP/1.1 ${status} X\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );

const PRE_EDIT: Step = { agent: "claude", fixture: "pre-edit" };

describe("falling back to the in-process path", () => {
  it("server.json naming a dead process: the hook runs in its own process, nothing is sent", async () => {
    const root = workspace(FILES);
    writeServerFile(root, { pid: await deadPid(), port: 9 });
    expect(hook(root, PRE_EDIT, { BATON_HOOK_SERVER: "use" }).stdout).toBe("");
    expect(checkpoints(root).map((c) => c.toolName)).toEqual(["Edit"]);
    expect(claims(root), "no request was made, so nothing was claimed").toEqual([]);
    expect(hookLog(root)).toEqual([]);
  });

  it("server.json whose pid now belongs to another process (another start time): nothing is sent, not even the token", async () => {
    const root = workspace(FILES);
    const fake = await fakeServer((_b, sock) => respond(sock, 200, '{"stdout":"{\\"decision\\":\\"block\\"}"}'));
    try {
      const realStart = ownStartTime();
      writeServerFile(root, { pid: process.pid, port: fake.port, startTime: String(Number(realStart) + 1) });
      const r = await hookAsync(root, PRE_EDIT, { BATON_HOOK_SERVER: "use" });
      expect([r.code, r.stdout]).toEqual([0, ""]);
      expect(fake.requests, "the listener on the remembered port heard nothing").toEqual([]);
      expect(checkpoints(root).map((c) => c.toolName)).toEqual(["Edit"]);
      // The same file with the right start time is the server's: the hook goes to it.
      writeServerFile(root, { pid: process.pid, port: fake.port, startTime: realStart });
      expect((await hookAsync(root, PRE_EDIT, { BATON_HOOK_SERVER: "use" })).stdout).toContain("block");
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
    expect(hook(root, PRE_EDIT, { BATON_HOOK_SERVER: "use" }).stdout).toBe("");
    expect(checkpoints(root)).toHaveLength(1);
    expect(claims(root), "the hook process claimed its own request").toHaveLength(1);
  });

  it("a server that refuses (non-2xx) or answers garbage: the hook runs here", async () => {
    for (const [status, body] of [
      [401, '{"error":{"code":"unauthorized"}}'],
      [500, "oops"],
      [200, "not json"],
      [200, '{"stdout": 42}'],
    ] as const) {
      const root = workspace(FILES);
      const fake = await fakeServer((_b, sock) => respond(sock, status, body));
      try {
        writeServerFile(root, { pid: process.pid, port: fake.port });
        const r = await hookAsync(root, PRE_EDIT, { BATON_HOOK_SERVER: "use" });
        expect([r.code, r.stdout], `${status} ${body}`).toEqual([0, ""]);
        expect(fake.requests, "the hook did ask the server").toHaveLength(1);
        expect(checkpoints(root), `${status} ${body}`).toHaveLength(1);
      } finally {
        await fake.close();
      }
    }
  });

  it("the request a hook sends: token, workspace, working directory, agent pid and the payload as read", async () => {
    const root = workspace(FILES);
    const fake = await fakeServer((_b, sock) => respond(sock, 200, JSON.stringify({ stdout: '{"from":"the server"}\n' })));
    try {
      writeServerFile(root, { pid: process.pid, port: fake.port, token: "tok_en-123" });
      const input = payload("claude", "pre-edit", { cwd: root, session: "agent-session-1", call: "call-1" });
      const r = await hookAsync(root, PRE_EDIT, { BATON_HOOK_SERVER: "use" }, join(root, "src"));
      expect(r.code).toBe(0);
      expect(r.stdout, "the server's answer is printed verbatim").toBe('{"from":"the server"}\n');
      const [body] = fake.requests;
      expect(body.root).toBe(root);
      expect(body.cwd).toBe(join(root, "src"));
      expect(body.agentPid).toBeGreaterThan(1);
      expect(body.requestId).toMatch(/^[A-Za-z0-9_-]{8,80}$/);
      expect(body.payload).toEqual(JSON.parse(input));
      expect(fake.heads[0]).toMatch(/^POST \/v1\/hooks\/claude\/PreToolUse HTTP\/1\.1\r\n/);
      expect(fake.heads[0]).toContain(`\r\nHost: 127.0.0.1:${fake.port}\r\n`);
      expect(fake.heads[0]).toContain("\r\nAuthorization: Bearer tok_en-123\r\n");
      expect(fake.heads[0]).toContain("\r\nContent-Type: application/json\r\n");
      expect(baton(root, ["status"]).sessions, "the server answered: nothing ran in-process").toEqual([]);
    } finally {
      await fake.close();
    }
  });

  it("the server took the hook and recorded its answer, but the response was lost: that answer is printed, nothing runs twice", async () => {
    const root = workspace(FILES);
    const fake = await fakeServer((b, sock) => {
      mkdirSync(join(root, ".baton/hooks/claims"), { recursive: true });
      writeFileSync(join(root, ".baton/hooks/claims", b.requestId), JSON.stringify({ stdout: '{"recorded":true}\n' }));
      sock.destroy();
    });
    try {
      writeServerFile(root, { pid: process.pid, port: fake.port });
      expect((await hookAsync(root, PRE_EDIT, { BATON_HOOK_SERVER: "use" })).stdout).toBe('{"recorded":true}\n');
      expect(baton(root, ["status"]).sessions, "nothing ran in-process").toEqual([]);
    } finally {
      await fake.close();
    }
  });

  it("the server took the hook and died before answering: the agent goes on, the failure is logged, nothing runs twice", async () => {
    const root = workspace(FILES);
    const fake = await fakeServer((b, sock) => {
      mkdirSync(join(root, ".baton/hooks/claims"), { recursive: true });
      writeFileSync(join(root, ".baton/hooks/claims", b.requestId), "");
      sock.destroy();
    });
    try {
      writeServerFile(root, { pid: process.pid, port: fake.port });
      const r = await hookAsync(root, { agent: "gemini", fixture: "before-write-file" }, { BATON_HOOK_SERVER: "use" });
      expect([r.code, r.stdout], "Gemini's pass-through answer").toEqual([0, "{}\n"]);
      expect(baton(root, ["status"]).sessions, "nothing ran in-process").toEqual([]);
      const log = hookLog(root);
      expect(log.map((l) => [l.agent, l.event, l.code])).toEqual([["gemini", "BeforeTool", "server_unreachable"]]);
      expect(log[0].message).toContain("closed the connection without an answer");
    } finally {
      await fake.close();
    }
  });

  it("a server that never takes the hook (stopped): the hook runs here after the accept timeout; resumed, the server does not run it again", async () => {
    const root = workspace(FILES);
    const s = await serve(root);
    try {
      process.kill(s.pid, "SIGSTOP");
      const started = Date.now();
      expect(hook(root, PRE_EDIT, { BATON_HOOK_SERVER: "use" }).stdout).toBe("");
      const took = Date.now() - started;
      expect(took).toBeGreaterThanOrEqual(1_000);
      expect(took).toBeLessThan(15_000);
      process.kill(s.pid, "SIGCONT");
      await sleep(1_000); // the server now reads the request the hook sent
      expect((await raw(s.port, { path: "/v1/health" })).status).toBe(200);
      expect(checkpoints(root), "one checkpoint: the server refused the request the hook took back").toHaveLength(1);
      const [id] = claims(root);
      expect(read(root, `.baton/hooks/claims/${id}`), "the claim is the hook process's (no answer recorded by the server)").toBe("");
      // The server still answers the next hook.
      hook(root, { agent: "claude", fixture: "post-edit" }, { BATON_HOOK_SERVER: "use" });
      expect(claims(root)).toHaveLength(2);
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
      // server.json is left naming a dead process: the next hook goes straight to the in-process path.
      expect(existsSync(join(root, ".baton", "server.json"))).toBe(true);
      hook(root, { agent: "claude", fixture: "post-edit" }, { BATON_HOOK_SERVER: "use" });
      expect(claims(root)).toHaveLength(1);
    } finally {
      await s.stop();
    }
  });

  it("a hook from another workspace is not handled by this server (a copied server.json)", async () => {
    const served = workspace(FILES);
    const other = workspace(FILES);
    const s = await serve(served);
    try {
      writeFileSync(join(other, ".baton", "server.json"), readFileSync(join(served, ".baton", "server.json")));
      const r = hook(other, PRE_EDIT, { BATON_HOOK_SERVER: "use" });
      expect(r.stdout).toBe("");
      expect(checkpoints(other), "answered in its own workspace, in-process").toHaveLength(1);
      expect(claims(other), "the hook took its request back after the refusal").toHaveLength(1);
      expect(claims(served), "the server never claimed it").toEqual([]);
      expect(baton(served, ["status"]).sessions, "and wrote nothing to its own workspace").toEqual([]);
      // The endpoint says why.
      const refused = await raw(s.port, {
        method: "POST",
        path: "/v1/hooks/claude/PreToolUse",
        headers: { authorization: `Bearer ${s.token}`, "content-type": "application/json" },
        body: JSON.stringify({ requestId: "abcdefgh-1", root: other, cwd: other, agentPid: 1, payload: {} }),
      });
      expect(refused.status).toBe(409);
      expect(refused.json().error.code).toBe("wrong_workspace");
    } finally {
      await s.stop();
    }
  });

  it("a hook whose environment names another store is not handled by this server: it runs on its own store", async () => {
    const root = workspace(FILES);
    const s = await serve(root); // on the workspace's SQLite store
    try {
      // Nothing listens on port 1: the hook's own store is down, and it fails open in-process.
      const r = hook(root, PRE_EDIT, { BATON_HOOK_SERVER: "use", BATON_STORE: "postgres://baton@127.0.0.1:1/db", BATON_PROJECT: "other" });
      expect(r.stdout).toBe("");
      expect(claims(root), "the hook took its request back after the refusal").toHaveLength(1);
      expect(baton(root, ["status"]).sessions, "nothing reached the server's store").toEqual([]);
      expect(JSON.stringify(hookLog(root)), "the hook tried its own store").toContain("storage_unavailable");
      const refused = await raw(s.port, {
        method: "POST",
        path: "/v1/hooks/claude/PreToolUse",
        headers: { authorization: `Bearer ${s.token}`, "content-type": "application/json" },
        body: JSON.stringify({ requestId: "abcdefgh-2", root, cwd: root, agentPid: 1, store: "postgres x y", payload: {} }),
      });
      expect(refused.status).toBe(409);
      expect(refused.json().error.code).toBe("wrong_store");
      // The same store is handled by the server as before.
      hook(root, PRE_EDIT, { BATON_HOOK_SERVER: "use" });
      expect(checkpoints(root)).toHaveLength(1);
    } finally {
      await s.stop();
    }
  });

  it('with BATON_HOOK_SERVER=off or hooks.server "off", a running server is not used', async () => {
    const root = workspace(FILES);
    const s = await serve(root);
    try {
      hook(root, PRE_EDIT, { BATON_HOOK_SERVER: "off" });
      expect(claims(root)).toEqual([]);
      writeFileSync(join(root, ".baton", "config.json"), JSON.stringify({ hooks: { server: "off" } }));
      hook(root, { agent: "claude", fixture: "post-edit" }, { BATON_HOOK_SERVER: "" });
      expect(claims(root)).toEqual([]);
      expect(checkpoints(root)).toHaveLength(1);
      expect(baton(root, ["ledger", "list", "--session", sessionId(root)]).nodes).toHaveLength(1);
    } finally {
      await s.stop();
    }
  });
});

describe("the hook endpoint is guarded like every route", () => {
  it("token, Host, Origin and content type are checked before anything is claimed or recorded", async () => {
    const root = workspace(FILES);
    const s = await serve(root);
    try {
      const body = JSON.stringify({
        requestId: "guarded-req-1",
        root,
        cwd: root,
        agentPid: process.pid,
        payload: JSON.parse(payload("claude", "pre-edit", { cwd: root, session: "a", call: "c" })),
      });
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
      expect(claims(root)).toEqual([]);
      expect(baton(root, ["status"]).sessions, "nothing recorded").toEqual([]);

      const bad = await raw(s.port, { method: "POST", path, headers: { ...json, ...auth }, body: JSON.stringify({ requestId: "x" }) });
      expect(bad.status).toBe(400);
      expect(bad.json().error.code).toBe("bad_input");
      expect((await raw(s.port, { method: "POST", path: "/v1/hooks/cursor/PreToolUse", headers: { ...json, ...auth }, body })).status).toBe(
        404,
      );

      const ok = await raw(s.port, { method: "POST", path, headers: { ...json, ...auth }, body });
      expect(ok.status).toBe(200);
      expect(ok.json()).toEqual({ stdout: "" });
      expect(claims(root)).toEqual(["guarded-req-1"]);
      expect(JSON.parse(read(root, ".baton/hooks/claims/guarded-req-1"))).toEqual({ stdout: "" });
      expect(checkpoints(root)).toHaveLength(1);
      const again = await raw(s.port, { method: "POST", path, headers: { ...json, ...auth }, body });
      expect(again.status, "a request id is answered once").toBe(409);
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

    // The next hook is handed to it. (Racers that reached the hand-off after the server was up
    // were handed to it too: each left a claim.)
    const before = claims(root).length;
    expect(before).toBeLessThanOrEqual(3);
    hook(root, PRE_EDIT, { BATON_HOOK_SERVER: "auto" });
    expect(claims(root)).toHaveLength(before + 1);

    process.kill(info.pid, "SIGTERM");
    await until("the server to exit", () => !alive(info.pid));
    expect(existsSync(join(root, ".baton/server.json"))).toBe(false);
  });

  it("opt-outs: BATON_HOOK_SERVER=use or off, hooks.server in config.json; and only session-start and prompt hooks start one", async () => {
    const root = workspace(FILES);
    hook(root, { agent: "claude", fixture: "session-start-startup" }, { BATON_HOOK_SERVER: "off" });
    hook(root, { agent: "claude", fixture: "user-prompt" }, { BATON_HOOK_SERVER: "use" });
    writeFileSync(join(root, ".baton", "config.json"), JSON.stringify({ hooks: { server: "use" } }));
    hook(root, { agent: "codex", fixture: "session-start-startup" }, { BATON_HOOK_SERVER: "" });
    writeFileSync(join(root, ".baton", "config.json"), JSON.stringify({ hooks: { server: "off" } }));
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
      hook(root, { agent: "claude", fixture: "session-start-startup" }, { BATON_HOOK_SERVER: "use" });
      expect(claims(root)).toHaveLength(1);
      mkdirSync(join(root, ".baton", "flows"), { recursive: true });
      writeFileSync(join(root, ".baton", "flows", "review.json"), "{}");
      hook(root, PRE_EDIT, { BATON_HOOK_SERVER: "use" });
      expect(checkpoints(root), "answered in-process").toHaveLength(1);
      expect(claims(root), "the hook took its request back after the refusal").toHaveLength(2);
      expect((await waitExit(s.child, 15_000)).code).toBe(0);
    } finally {
      await s.stop();
    }
  });

  it("when .baton/config.json changes: hooks run in-process meanwhile, and a server with --idle-exit exits", async () => {
    const root = workspace(FILES);
    const s = await serverFor(root, ["--idle-exit", "10m"]);
    try {
      hook(root, { agent: "claude", fixture: "session-start-startup" }, { BATON_HOOK_SERVER: "use" });
      expect(claims(root)).toHaveLength(1);
      writeFileSync(join(root, ".baton", "config.json"), JSON.stringify({ checkpoints: { retain: 5 } }));
      hook(root, PRE_EDIT, { BATON_HOOK_SERVER: "use" });
      expect(checkpoints(root), "answered in-process").toHaveLength(1);
      expect(claims(root), "the hook took its request back after the refusal").toHaveLength(2);
      const exit = await waitExit(s.child, 15_000);
      expect(exit.code).toBe(0);
      expect(existsSync(join(root, ".baton/server.json"))).toBe(false);
    } finally {
      await s.stop();
    }
  });
});

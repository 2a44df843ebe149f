/**
 * Helpers for the tests of hooks handed to a server (hook-server.int.test.ts, hook-retry.int.test.ts):
 * recorded payloads replayed through real `baton hook` processes, stand-in servers on real
 * sockets, and the bookkeeping that fails a test leaving a `baton serve` behind.
 *
 * Every hook runs with BATON_HOOK_DEBUG=1, so its stderr says who answered it (`via`).
 */
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Socket } from "node:net";
import { join } from "node:path";
import { afterEach, expect } from "vitest";
import { envSettings } from "../src/env-options.js";
import { type CliResult, cleanupDirs, cli, cliAsync, initWorkspace, REPO } from "./helpers.js";

export const FIXTURES = join(REPO, "test", "fixtures", "hooks");
const roots: string[] = [];

/** `baton serve` processes whose command line names `root` (Linux /proc). */
export function serversOn(root: string): number[] {
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

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const standIns = new Map<string, { pid: number; startTime: string; kill: () => void }>();

/**
 * A process that runs `serve` in the workspace and does nothing else (its argv names no
 * workspace, so it is not taken for a stray server), standing for a server this test process
 * plays on another port. One per workspace, ended after each test.
 */
export function standIn(root: string): { pid: number; startTime: string } {
  const known = standIns.get(root);
  if (known) return known;
  // Its start time is fixed when it forks, and its command line (`serve`) is Node's by the time
  // a hook reads it.
  const child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 600000)", "serve"], {
    cwd: root,
    env: { ...process.env, BATON_ROOT: "" },
    stdio: "ignore",
  });
  const pid = child.pid as number;
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const entry = {
    pid,
    startTime: stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] as string,
    kill: () => child.kill("SIGKILL"),
  };
  standIns.set(root, entry);
  return entry;
}

/** Fail (and clean up after) a test that leaves a server running on a workspace it made. */
export function failOnStrayServers(): void {
  afterEach(() => {
    for (const s of standIns.values()) s.kill();
    standIns.clear();
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
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Whether a loopback TCP connection to `port` is established (Linux /proc/net/tcp). */
export function connectedTo(port: number): boolean {
  const hex = port.toString(16).toUpperCase().padStart(4, "0");
  return readFileSync("/proc/net/tcp", "utf8")
    .split("\n")
    .slice(1)
    .some((line) => {
      const f = line.trim().split(/\s+/);
      return f[2]?.endsWith(`:${hex}`) === true && f[3] === "01";
    });
}

export async function until<T>(what: string, fn: () => T | undefined | false, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** A recorded payload with its placeholders filled (Gemini CLI stamps each hook with the time it sent it). */
export function payload(agent: string, name: string, vars: Record<string, string>): string {
  let text = readFileSync(join(FIXTURES, agent, `${name}.json`), "utf8");
  for (const [k, v] of Object.entries({ time: new Date().toISOString(), ...vars }))
    text = text.split(`{{${k}}}`).join(JSON.stringify(v).slice(1, -1));
  return text;
}

export interface Step {
  agent: string;
  fixture: string;
  vars?: Record<string, string>;
  /** The event, for an agent whose payloads do not name it (Copilot CLI: the hook's command line does). */
  event?: string;
  /** The tool's own effect, after the hook (the edit an agent makes between its before and after hooks). */
  effect?: (root: string) => void;
}

export interface HookResult extends CliResult {
  /** Who answered: the server, this process (with the reason), or nobody said (nothing to do). */
  via: "server" | "process" | undefined;
  reason?: string;
}

function withVia(r: { code: number | null; stdout: string; stderr: string }): HookResult {
  const server = /baton hook: answered by the server/.test(r.stderr);
  const here = /baton hook: answered in this process \((.*)\)/.exec(r.stderr);
  return {
    code: r.code ?? -1,
    stdout: r.stdout,
    stderr: r.stderr,
    json: () => JSON.parse(r.stdout),
    via: server ? "server" : here ? "process" : undefined,
    ...(here ? { reason: here[1] as string } : {}),
  };
}

function input(root: string, s: Step): { text: string; event: string } {
  const text = payload(s.agent, s.fixture, { cwd: root, session: "agent-session-1", call: "call-1", ...s.vars });
  return { text, event: s.event ?? (JSON.parse(text).hook_event_name as string) };
}

/** Replay one fixture through `baton hook <agent> <its event>` in `root`. */
export function hook(root: string, s: Step, env: Record<string, string> = {}): HookResult {
  const { text, event } = input(root, s);
  const r = cli(["hook", s.agent, event], { cwd: root, input: text, env: { BATON_HOOK_DEBUG: "1", ...env } });
  expect(r.code, `baton hook ${s.agent} ${event} (${s.fixture}) exited ${r.code}: ${r.stderr}`).toBe(0);
  return withVia(r);
}

/** The same as `hook`, without blocking this process (stand-in servers run in it). */
export function hookAsync(root: string, s: Step, env: Record<string, string> = {}, cwd = root): Promise<HookResult> {
  const { text, event } = input(root, s);
  return cliAsync(["hook", s.agent, event], { cwd, input: text, env: { BATON_HOOK_DEBUG: "1", ...env } }).then(withVia);
}

export function workspace(files: Record<string, string> = {}): string {
  const root = initWorkspace("baton-hook-server-", files);
  roots.push(root);
  return root;
}

export function baton(root: string, args: string[]): any {
  return cli([...args, "--json", "--root", root]).json();
}

export const sessionId = (root: string) => baton(root, ["status"]).sessions[0].sessionId as string;
export const checkpoints = (root: string) => baton(root, ["checkpoints", "--session", sessionId(root)]).checkpoints as any[];
export const read = (root: string, p: string) => readFileSync(join(root, p), "utf8");
/** The session's events of one type, as `baton export` prints them. */
export const events = (root: string, type: string) =>
  cli(["export", sessionId(root), "--root", root])
    .stdout.trim()
    .split("\n")
    .map((l) => JSON.parse(l))
    .filter((e) => e.type === type);
export const hookLog = (root: string) =>
  existsSync(join(root, ".baton/logs/hooks.log"))
    ? read(root, ".baton/logs/hooks.log")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l))
    : [];

/** This build's id, as the built bundles carry it (server.json's `version`). */
export function buildId(): string {
  const m = /"(\d+\.\d+\.\d+[^"+]*\+[0-9a-f]{12})"/.exec(readFileSync(join(REPO, "dist", "hook.cjs"), "utf8"));
  if (!m) throw new Error("dist/hook.cjs carries no build id: run node scripts/build.mjs");
  return m[1] as string;
}

/** A process id that is certainly dead: a child that has exited. */
export async function deadPid(): Promise<number> {
  const c = spawn(process.execPath, ["-e", "0"]);
  const pid = c.pid as number;
  await new Promise((r) => c.once("exit", r));
  return pid;
}

/** This process's start time (/proc/<pid>/stat field 22), as a server records its own. */
export function ownStartTime(): string {
  const own = readFileSync(`/proc/${process.pid}/stat`, "utf8");
  return own.slice(own.lastIndexOf(")") + 2).split(" ")[19] as string;
}

/**
 * A server file naming `pid` (of this build unless told otherwise). This test process, named as
 * `pid`, is a stand-in process running `serve` in the workspace (`standIn`), with its start time
 * unless told otherwise: the hook takes the fake server on the port for the workspace's own.
 */
export function writeServerFile(
  root: string,
  info: { pid: number; port: number; token?: string; startTime?: string; version?: string; idleExitMs?: number; settings?: string },
): void {
  // This process stands for the server through a process that runs `serve` in the workspace (a
  // hook proves no other): its pid, and its start time, or one as far from it as the given one
  // is from this process's (a test of a reused pid).
  if (info.pid === process.pid) {
    const stand = standIn(root);
    const off = info.startTime !== undefined ? Number(info.startTime) - Number(ownStartTime()) : 0;
    info = { ...info, pid: stand.pid, startTime: String(Number(stand.startTime) + off) };
  }
  // The settings a hook run from this process's environment has (a server started alongside it).
  const settings = envSettings(process.env);
  writeFileSync(
    join(root, ".baton", "server.json"),
    `${JSON.stringify({ token: "t".repeat(43), startedAt: new Date().toISOString(), version: buildId(), settings, ...info })}\n`,
    { mode: 0o600 },
  );
}

/**
 * A stand-in for the server on a real socket: reads one hook request and lets `reply` decide
 * what happens (answer, close, never answer). Any other request is answered 404.
 */
export async function fakeServer(
  reply: (body: any, sock: Socket) => unknown,
): Promise<{ port: number; requests: any[]; heads: string[]; connections: () => number; close: () => Promise<void> }> {
  const requests: any[] = [];
  const heads: string[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer((sock) => {
    connections++;
    sockets.add(sock);
    sock.on("close", () => sockets.delete(sock));
    let buf = Buffer.alloc(0);
    sock.on("data", (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      const end = buf.indexOf("\r\n\r\n");
      if (end < 0) return;
      const length = Number(/content-length: *(\d+)/i.exec(buf.subarray(0, end).toString())?.[1] ?? 0);
      if (buf.length < end + 4 + length) return;
      // A stand-in for hooks only: `baton status --json` asks a running server too (src/cli/ask.ts),
      // and a 404 sends it back to its own process.
      if (!buf.subarray(0, end).toString().startsWith("POST /v1/hooks/")) {
        respond(sock, 404, '{"error":{"code":"not_found","message":"hooks only"}}');
        return;
      }
      const body = JSON.parse(buf.subarray(end + 4, end + 4 + length).toString());
      heads.push(buf.subarray(0, end + 4).toString());
      requests.push(body);
      void reply(body, sock);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    requests,
    heads,
    /** Connections accepted, with or without a request on them. */
    connections: () => connections,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

export const respond = (sock: Socket, status: number, body: string) =>
  sock.end(
    `HTTP/1.1 ${status} X\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );

/** Ids and paths differ between two workspaces; everything else in an answer must not. */
export function normalise(text: string, root: string): string {
  const name = root.split("/").pop() as string;
  return text
    .split(root)
    .join("<root>")
    .split(name)
    .join("<name>")
    .replace(/\b(task|cp|rb|rollback)-[0-9a-z]+/g, "$1-<id>");
}

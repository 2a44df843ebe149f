/**
 * Line-oriented control of the fixture child processes used by the integration tests: read
 * their stdout as lines, wait for a line with a deadline, and wait for (or force) their exit.
 * Every wait fails with the child's stderr so a crashed fixture explains itself.
 */
import { type ChildProcess, spawnSync } from "node:child_process";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { REPO, spawnTracked } from "./helpers.js";

export const FIXTURES = join(REPO, "test", "fixtures");

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface LineChild {
  proc: ChildProcess;
  /** Complete stdout lines so far (a line cut short by a kill is never included). */
  lines: string[];
  stderr: () => string;
  /** Resolves once the process has exited and its stdout is fully read. */
  exited: Promise<Exit>;
  /** Resolves with the first line matching `match`; rejects if the child exits first or time runs out. */
  waitForLine: (match: (line: string) => boolean, timeoutMs: number, what: string) => Promise<string>;
  /** Writes `text` to stdin and closes it (the fixtures read one "go"). */
  sendLast: (text: string) => void;
}

/** Spawn `node test/fixtures/<fixture> ...args`, tracked by the helpers' leak check. */
export function spawnFixture(fixture: string, args: string[]): LineChild {
  return spawnNode(join(FIXTURES, fixture), args, `fixture ${fixture}`);
}

/**
 * The CLI's arguments for `baton lock run <name> --ttl <ttl>` of a command that prints "child
 * ready", then waits until SIGTERM, which it answers with "child got SIGTERM" and exit 0.
 */
export function lockRunArgs(name: string, root: string, ttlMs: number): string[] {
  const command =
    "process.on('SIGTERM', () => { console.log('child got SIGTERM'); process.exit(0); }); console.log('child ready'); setInterval(() => {}, 1000);";
  return ["lock", "run", name, "--ttl", String(ttlMs), "--root", root, "--", process.execPath, "-e", command];
}

/** Spawn `node <script> ...args` (e.g. the built CLI), tracked by the helpers' leak check. */
export function spawnNode(script: string, args: string[], label: string): LineChild {
  return spawnCommand(process.execPath, [script, ...args], label);
}

/** Spawn `command ...args` (e.g. the CLI under `unshare`), tracked by the helpers' leak check. */
export function spawnCommand(command: string, args: string[], label: string, env?: NodeJS.ProcessEnv, cwd?: string): LineChild {
  const proc = spawnTracked(command, args, { stdio: ["pipe", "pipe", "pipe"], ...(env ? { env } : {}), ...(cwd ? { cwd } : {}) });
  const lines: string[] = [];
  let partial = "";
  let err = "";
  const listeners = new Set<() => void>();
  const notify = () => {
    for (const l of [...listeners]) l();
  };
  proc.stdout?.setEncoding("utf8");
  proc.stdout?.on("data", (chunk: string) => {
    partial += chunk;
    const parts = partial.split("\n");
    partial = parts.pop() ?? "";
    lines.push(...parts);
    notify();
  });
  proc.stderr?.setEncoding("utf8");
  proc.stderr?.on("data", (chunk: string) => {
    err += chunk;
  });
  // A child killed while the parent writes to its stdin must not crash the test with EPIPE.
  proc.stdin?.on("error", () => undefined);
  const stdoutClosed = new Promise<void>((resolve) => {
    if (!proc.stdout) resolve();
    else proc.stdout.once("close", () => resolve());
  });
  const exitOnly = new Promise<Exit>((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) resolve({ code: proc.exitCode, signal: proc.signalCode });
    else proc.once("exit", (code, signal) => resolve({ code, signal }));
  });
  const exited = Promise.all([exitOnly, stdoutClosed]).then(([e]) => {
    notify();
    return e;
  });
  let dead = false;
  void exitOnly.then(() => {
    dead = true;
  });

  const describe = () => `${label} (pid ${proc.pid})`;
  const waitForLine = (match: (line: string) => boolean, timeoutMs: number, what: string) =>
    new Promise<string>((resolve, reject) => {
      let settled = false;
      const settle = (fn: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        listeners.delete(check);
        fn();
      };
      const check = () => {
        const found = lines.find(match);
        if (found !== undefined) settle(() => resolve(found));
      };
      const timer = setTimeout(
        () =>
          settle(() =>
            reject(new Error(`expected ${describe()} to print ${what} within ${timeoutMs} ms; stdout:\n${tail(lines)}\nstderr:\n${err}`)),
          ),
        timeoutMs,
      );
      listeners.add(check);
      void exited.then((e) => {
        check();
        settle(() =>
          reject(
            new Error(
              `expected ${describe()} to print ${what}; it exited first (code ${e.code}, signal ${e.signal}). stdout:\n${tail(lines)}\nstderr:\n${err}`,
            ),
          ),
        );
      });
      check();
    });

  return {
    proc,
    lines,
    stderr: () => err,
    exited,
    waitForLine,
    sendLast: (text) => {
      if (!dead) proc.stdin?.end(text);
    },
  };
}

/** Waits for the child to exit; kills it (SIGKILL) and fails if it takes longer than `timeoutMs`. */
export async function waitExit(child: LineChild, timeoutMs: number): Promise<Exit> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), timeoutMs);
  });
  const r = await Promise.race([child.exited, timedOut]);
  clearTimeout(timer);
  if (r === "timeout") {
    const p = child.proc;
    // Exited, its output still open: what holds the pipe is a process it started that outlived it.
    const state =
      p.exitCode !== null || p.signalCode !== null
        ? `it exited (code ${p.exitCode}, signal ${p.signalCode}), but its stdout is still open, held by:\n${pipeHolders(p)}`
        : `it was still running (killed). Its processes then:\n${p.pid === undefined ? "" : processReport(p.pid)}`;
    child.proc.kill("SIGKILL");
    // A process it started may still hold its output open: the error is not held back for it.
    await Promise.race([child.exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
    throw new Error(`expected pid ${child.proc.pid} to exit within ${timeoutMs} ms; ${state}stderr:\n${child.stderr()}`);
  }
  return r;
}

/** Kill every child that is still alive and wait for them, so no test leaves one behind. */
export async function killAll(children: readonly LineChild[]): Promise<void> {
  for (const c of children) if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill("SIGKILL");
  await Promise.all(children.map((c) => c.exited));
}

function tail(lines: readonly string[], n = 20): string {
  return lines.slice(-n).join("\n");
}

/**
 * What a process that would not exit, and each process under it, was doing (Linux): its state,
 * where it waited in the kernel, its signals pending, blocked and caught (hex masks: bit n-1 is
 * signal n), and its command line. A hung process's report says whether a signal reached it and
 * whether it had a handler for it.
 */
export function processReport(pid: number): string {
  const read = (p: number, f: string) => {
    try {
      return readFileSync(`/proc/${p}/${f}`, "utf8");
    } catch {
      return "";
    }
  };
  const parents = new Map<number, number[]>();
  for (const name of readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
    const ppid = Number(/\) \S+ (\d+)/.exec(read(Number(name), "stat"))?.[1]);
    if (Number.isFinite(ppid)) parents.set(ppid, [...(parents.get(ppid) ?? []), Number(name)]);
  }
  const lines: string[] = [];
  const visit = (p: number, depth: number) => {
    const status = read(p, "status");
    if (status === "") return;
    const field = (k: string) => new RegExp(`^${k}:\\s*(.*)$`, "m").exec(status)?.[1] ?? "?";
    const cmd = read(p, "cmdline").split("\0").join(" ").trim().slice(0, 200);
    lines.push(
      `${"  ".repeat(depth)}${p} ${field("State")} wchan=${read(p, "wchan") || "?"} SigPnd=${field("SigPnd")} ShdPnd=${field("ShdPnd")} SigBlk=${field("SigBlk")} SigCgt=${field("SigCgt")} ${cmd}`,
    );
    for (const c of parents.get(p) ?? []) visit(c, depth + 1);
  };
  visit(pid, 0);
  return lines.length > 0 ? `${lines.join("\n")}\n` : "(gone)\n";
}

/** The processes that hold the write end of `proc`'s stdout pipe (Linux), with what they run. */
function pipeHolders(proc: ChildProcess): string {
  const fd = (proc.stdout as unknown as { _handle?: { fd?: number } } | null)?._handle?.fd;
  const ours = fd === undefined ? undefined : readlinkMaybe(`/proc/self/fd/${fd}`);
  if (ours === undefined) return "(unknown)\n";
  // Node gives a child a socket pair: the other end is another socket, which `ss` names.
  let pipe = ours;
  const socket = /^socket:\[(\d+)\]$/.exec(ours)?.[1];
  if (socket !== undefined) {
    const peers = spawnSync("ss", ["-xn"], { encoding: "utf8", timeout: 5_000, maxBuffer: 64 << 20 }).stdout ?? "";
    const peer = peers
      .split("\n")
      .map((l) => /\*\s+(\d+)\s+\*\s+(\d+)/.exec(l))
      .find((m) => m?.[1] === socket)?.[2];
    if (peer === undefined) return "(unknown: `ss -xn` does not list the other end)\n";
    pipe = `socket:[${peer}]`;
  }
  const found: string[] = [];
  for (const pid of readdirSync("/proc").filter((n) => /^\d+$/.test(n) && Number(n) !== process.pid)) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    if (!fds.some((f) => readlinkMaybe(`/proc/${pid}/fd/${f}`) === pipe)) continue;
    const cmd = readlinkMaybe(`/proc/${pid}/exe`) ?? "?";
    let args = "";
    try {
      args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim().slice(0, 200);
    } catch {
      // gone meanwhile
    }
    found.push(`${pid} ${args || cmd}`);
  }
  return found.length > 0 ? `${found.join("\n")}\n` : "(none found)\n";
}

function readlinkMaybe(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}

/** Shared test helpers: temp workspaces, the built CLI, tracked child processes. */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { Backend } from "../src/backend/contract.js";
import { type Baton, BatonError, type OpenBatonOptions, openBaton } from "../src/index.js";
import { recordTrust } from "../src/platform/config-trust.js";

export const REPO = resolve(import.meta.dirname, "..");
export const CLI = join(REPO, "bin", "baton.cjs");

const dirs: string[] = [];
const children = new Set<ChildProcess>();

export function tempDir(prefix = "baton-test-"): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
}

export function cleanupDirs(): void {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

/** A Baton on a fresh temp workspace. */
export async function tempBaton(opts: Omit<OpenBatonOptions, "root"> = {}): Promise<{ baton: Baton; root: string }> {
  const root = tempDir();
  const baton = await openBaton({ root, ...opts });
  return { baton, root };
}

/**
 * Session `stuck` (flow live-variant) in the store at `root`, with its one `generate` dead-lettered
 * ("the agent gave up"): made by a Baton allowing one delivery per item, so a nack dead-letters it.
 */
export async function stuckSession(root: string): Promise<void> {
  const once = await openBaton({ root, maxAttempts: 1 });
  try {
    await once.sessions.start({ flow: "live-variant", id: "stuck" });
    await once.events.append("stuck", { type: "generate", actor: "browser", data: { prompt: "bolder" } });
    const doomed = await once.work.lease("agent-1", { sessionId: "stuck" });
    if (!doomed) throw new Error("stuckSession: the generate was not delivered");
    await once.work.nack(doomed.leaseId, { reason: "the agent gave up" });
  } finally {
    await once.close();
  }
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  json: () => any;
}

/** Write `content` at `rel` under `root`, creating the directories on the way. */
export function writeAt(root: string, rel: string, content: string | Buffer): void {
  mkdirSync(join(root, rel, ".."), { recursive: true });
  writeFileSync(join(root, rel), content);
}

/**
 * Trust `root`'s `.baton/config.json` as it is now, as `baton trust` records it (in the test
 * run's BATON_CONFIG_HOME, test/setup.ts): a file written by hand applies only once trusted.
 * Any bytes, even ones that do not parse (a trusted broken file is `bad_input`, not ignored).
 */
export function trustConfig(root: string): void {
  const dir = join(root, ".baton");
  recordTrust(dir, readFileSync(join(dir, "config.json")));
}

/** Write `.baton/config.json` under `root` and trust it: the settings apply. */
export function writeConfig(root: string, config: unknown): void {
  writeFileSync(join(root, ".baton", "config.json"), typeof config === "string" ? config : JSON.stringify(config));
  trustConfig(root);
}

/** A fresh workspace made by `baton init` (the built CLI), holding `files`. */
export function initWorkspace(prefix: string, files: Record<string, string> = {}): string {
  const root = tempDir(prefix);
  const init = cli(["init", "--root", root]);
  if (init.code !== 0) throw new Error(`baton init exited ${init.code}: ${init.stderr}`);
  for (const [rel, text] of Object.entries(files)) writeAt(root, rel, text);
  return root;
}

/**
 * Another install of this baton in `dir`: bin/baton.cjs copied with `mode`, package.json copied,
 * dist/'s files and node_modules/ linked. Returns its bin/baton.cjs.
 */
export function copyOfInstall(dir: string, mode = 0o755): string {
  mkdirSync(join(dir, "bin"), { recursive: true });
  const entry = join(dir, "bin", "baton.cjs");
  copyFileSync(CLI, entry);
  chmodSync(entry, mode);
  copyFileSync(join(REPO, "package.json"), join(dir, "package.json"));
  symlinkSync(join(REPO, "node_modules"), join(dir, "node_modules"));
  mkdirSync(join(dir, "dist"));
  for (const f of readdirSync(join(REPO, "dist"))) symlinkSync(join(REPO, "dist", f), join(dir, "dist", f));
  return entry;
}

/** Run the built `baton` CLI synchronously. */
export function cli(args: string[], opts: { cwd?: string; env?: Record<string, string>; input?: string } = {}): CliResult {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd: opts.cwd ?? REPO,
    env: { ...process.env, ...opts.env },
    input: opts.input ?? "",
    encoding: "utf8",
    timeout: 60_000,
    // SIGTERM can be caught or held off; a timed-out command must end for spawnSync to return.
    killSignal: "SIGKILL",
  });
  // Killed at the timeout: say which command hung and what it had printed, rather than exit -1.
  if (r.error && (r.error as NodeJS.ErrnoException).code === "ETIMEDOUT")
    throw new Error(`baton ${args.join(" ")} did not exit within 60 s:\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return {
    code: r.status ?? -1,
    stdout: r.stdout,
    stderr: r.stderr,
    json() {
      try {
        return JSON.parse(r.stdout);
      } catch {
        throw new Error(`baton ${args.join(" ")} did not print JSON (exit ${r.status}):\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
      }
    },
  };
}

/**
 * Run the built `baton` CLI without blocking this process (servers or proxies the test runs in
 * it must keep answering): its exit code and output.
 */
export function cliAsync(
  args: string[],
  opts: { cwd?: string; env?: Record<string, string>; input?: string } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const c = spawnTracked(process.execPath, [CLI, ...args], {
    cwd: opts.cwd ?? REPO,
    env: { ...process.env, ...opts.env },
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
  c.stdin?.end(opts.input ?? "");
  return new Promise((resolve, reject) => {
    c.once("error", reject);
    c.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** Spawn a tracked child (killed and reported as a leak if a test forgets it). */
export function spawnTracked(cmd: string, args: string[], opts: Parameters<typeof spawn>[2] = {}): ChildProcess {
  const c = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"], ...opts });
  children.add(c);
  c.once("exit", () => children.delete(c));
  return c;
}

export function liveChildren(): ChildProcess[] {
  return [...children].filter((c) => c.exitCode === null && c.signalCode === null);
}

/** The backend, counting its write transactions. */
export function counting(inner: Backend): Backend & { writes: () => number } {
  let writes = 0;
  return new Proxy(inner, {
    get(target, prop) {
      if (prop === "writes") return () => writes;
      if (prop === "transaction")
        return (mode: "read" | "write", fn: never, opts?: never) => {
          if (mode === "write") writes++;
          return target.transaction(mode, fn, opts);
        };
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  }) as Backend & { writes: () => number };
}

/**
 * The backend, except that every write transaction runs twice: the first run is rolled back
 * after it finished, as a deadlock found at its end would. A `oneStatement` transaction has no
 * end after its statement (the statement is its commit: PostgreSQL commits it by itself), so a
 * deadlock fails the statement, before anything is written: its first run writes nothing.
 */
export function rerunning(inner: Backend): Backend & { reruns: () => number } {
  let reruns = 0;
  const again = new BatonError("storage_busy", "re-run (test)");
  const transaction: Backend["transaction"] = async (mode, fn, opts) => {
    if (mode !== "write") return inner.transaction(mode, fn, opts);
    await inner
      .transaction(
        mode,
        async (tx) => {
          if (!opts?.oneStatement) await fn(tx);
          throw again;
        },
        opts,
      )
      .catch((err: unknown) => {
        if (err !== again) throw err;
      });
    reruns++;
    return inner.transaction(mode, fn, opts);
  };
  return new Proxy(inner, {
    get(target, prop) {
      if (prop === "transaction") return transaction;
      if (prop === "reruns") return () => reruns;
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  }) as Backend & { reruns: () => number };
}

/**
 * The heap in use after two full collections: the figure memory tests compare. Sets
 * `--expose-gc` at run time (a context made after the flag has `gc`), so the bound is checked in
 * every test run, not only under a flag.
 */
export function heapAfterGc(): number {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as unknown;
  if (typeof gc !== "function") throw new Error("gc() is not exposed to the test");
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/**
 * The same failing Edit of one file, recorded turn after turn until the spiral detector pauses
 * the session (at most 10 turns, or it throws). Answers the pause's `detectedAt`.
 */
export async function failUntilPaused(
  b: Baton,
  sessionId: string,
  turn: { checkpointId: string; file?: string; fingerprint?: string; lane?: string },
): Promise<string> {
  const file = turn.file ?? "app.ts";
  for (let i = 0; i < 10; i++) {
    const r = await b.turns.record(sessionId, {
      tool: "Edit",
      argsHash: "a1b2c3d4e5f6a7b8",
      status: "error",
      fingerprint: turn.fingerprint ?? `TypeError@${file}:1`,
      files: [file],
      checkpointId: turn.checkpointId,
      ...(turn.lane ? { lane: turn.lane } : {}),
    });
    if (r.detected) return r.spiral.detectedAt as string;
  }
  throw new Error(`session ${sessionId} did not pause in 10 failing turns`);
}

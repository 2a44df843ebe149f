/**
 * `.baton/server.json`, read side: how other processes (the CLI's `baton poll`, hooks, doctor, a
 * page launcher) find the workspace's running server and decide whether the process it names is
 * that server. The server itself claims and writes the file (server/server-file.ts); doctor
 * removes a stale one, with the same rule clients use (`matchProcess`).
 */
import { readFileSync, realpathSync, statSync, unlinkSync } from "node:fs";
import { dirname, isAbsolute, join, resolve, sep } from "node:path";
import { matchProcess, type ProcessMatch, processAlive, readProcArgs, readProcEnv } from "./process-facts.js";

export interface ServerInfo {
  pid: number;
  port: number;
  token: string;
  startedAt: string;
  /**
   * The server process's start time as the kernel records it (Linux: /proc/<pid>/stat field
   * 22), so a pid reused after the server died (a reboot, a SIGKILL) is not taken for it.
   */
  startTime?: string;
  /** The server's build (core/build.ts): hooks hand their events only to a server of their own build. */
  version?: string;
  /** Its idle exit, when it has one (the servers hooks start do): one of another build is replaced by the next session-start or prompt hook. */
  idleExitMs?: number;
  /** What its environment set (env-options.ts `envSettings`): hooks and `status --json` with other settings answer themselves. */
  settings?: string;
}

export const SERVER_FILE = "server.json";
export function serverFilePath(batonDir: string): string {
  return join(batonDir, SERVER_FILE);
}

/** The server file's contents, or undefined when it is missing or not a server file. */
export function readServerFile(batonDir: string): ServerInfo | undefined {
  let text: string;
  try {
    text = readFileSync(serverFilePath(batonDir), "utf8");
  } catch {
    return undefined;
  }
  return parseInfo(text);
}

function parseInfo(text: string): ServerInfo | undefined {
  try {
    const v = JSON.parse(text) as Partial<ServerInfo>;
    if (typeof v.pid === "number" && typeof v.port === "number" && typeof v.token === "string" && typeof v.startedAt === "string") {
      const info: ServerInfo = { pid: v.pid, port: v.port, token: v.token, startedAt: v.startedAt };
      if (typeof v.startTime === "string") info.startTime = v.startTime;
      if (typeof v.version === "string") info.version = v.version;
      if (typeof v.idleExitMs === "number") info.idleExitMs = v.idleExitMs;
      if (typeof v.settings === "string") info.settings = v.settings;
      return info;
    }
  } catch {
    // a half-written or foreign file: not a server we can use
  }
  return undefined;
}

/**
 * Who the process a server file names is (`matchProcess`, the rule doctor shares): `same` when
 * it is the process that wrote the file, `unproven` when the start times cannot be compared, and
 * `dead` for a process this user may not signal (another user's is not our server).
 */
export function serverIdentity(info: ServerInfo): ProcessMatch {
  if (!Number.isSafeInteger(info.pid) || info.pid <= 0) return "dead";
  try {
    process.kill(info.pid, 0);
  } catch {
    return "dead";
  }
  return matchProcess(info);
}

/** The process that wrote `info` still runs (a zombie does not: it has exited, unreaped). */
function sameProcessAlive(info: ServerInfo): boolean {
  return processAlive(info.pid) && matchProcess(info) === "same";
}

/** Whether the file may name a running server: the same process, or one not proven otherwise. */
export function serverAlive(info: ServerInfo): boolean {
  const id = serverIdentity(info);
  return id === "same" || id === "unproven";
}

/**
 * The running server of a workspace, for deciding whether one runs (a second `serve`,
 * auto-start, doctor). Before a client sends it the token, identity must be proven:
 * `provenServer` (start times) or the health challenge (server/client.ts).
 */
export function liveServer(batonDir: string): ServerInfo | undefined {
  const info = readServerFile(batonDir);
  return info && serverAlive(info) ? info : undefined;
}

/**
 * The server, only when the kernel proves it is the process that wrote the file, and (Linux) a
 * process of this user's running `serve` for this workspace (`servesWorkspace`).
 */
export function provenServer(batonDir: string): ServerInfo | undefined {
  const info = readServerFile(batonDir);
  if (!info || serverIdentity(info) !== "same") return undefined;
  // Where /proc says (Linux), only a process of this user's running `serve` for this workspace:
  // a server.json a repository shipped could name one whose start time is predictable (pid 1),
  // and the hook would hand its payload to the port the file names.
  return servesHere(info.pid, batonDir) ? info : undefined;
}

/**
 * Whether the process `pid` may be this workspace's server: where /proc says (Linux), a process
 * of this user's running `serve` for it; elsewhere, nothing says otherwise.
 */
export function servesHere(pid: number, batonDir: string): boolean {
  return process.platform !== "linux" || (ownProcess(pid) && servesWorkspace(pid, batonDir));
}

/** Whether /proc/<pid> is this user's (its owner is this process's user). */
function ownProcess(pid: number): boolean {
  try {
    return statSync(`/proc/${pid}`).uid === process.geteuid?.();
  } catch {
    return false;
  }
}

/** Remove the server file if it is still ours. */
export function releaseServerFile(batonDir: string, pid = process.pid): void {
  const info = readServerFile(batonDir);
  if (info && info.pid !== pid) return;
  try {
    unlinkSync(serverFilePath(batonDir));
  } catch {
    // already gone
  }
}

/**
 * Whether the process `pid` runs a Baton server of the workspace whose `.baton` is `batonDir`,
 * as Linux's /proc tells: its command line runs `serve`, with `--root` (or BATON_ROOT) this
 * workspace or, without one, from a folder of it. The start time in server.json proves the file's writer only when the
 * file is Baton's: a repository can ship one naming a process whose pid and start time are
 * predictable (pid 1), and nothing of the user's is signalled on its word. Where /proc does not
 * say, false.
 */
export function servesWorkspace(pid: number, batonDir: string): boolean {
  const proc = readProcArgs(pid);
  if (!proc?.argv.includes("serve") || proc.cwd === undefined) return false;
  try {
    const root = realpathSync(dirname(batonDir));
    // The last `--root` counts, as for the command's own options; an empty one is none.
    let fromArgs: string | undefined;
    for (let i = 0; i < proc.argv.length; i++) {
      const a = proc.argv[i] as string;
      if (a === "--root") fromArgs = proc.argv[++i];
      else if (a.startsWith("--root=")) fromArgs = a.slice("--root=".length);
    }
    const given = (fromArgs || undefined) ?? rootFromEnv(pid);
    if (given !== undefined) return realpathSync(isAbsolute(given) ? given : resolve(proc.cwd, given)) === root;
    return proc.cwd === root || proc.cwd.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);
  } catch {
    return false;
  }
}

/** BATON_ROOT in the environment `pid` started with (readable for the user's own processes). */
function rootFromEnv(pid: number): string | undefined {
  return readProcEnv(pid)?.BATON_ROOT || undefined;
}

/**
 * Stop the server `pid` holding this workspace, to start one of this build in its place: only
 * when server.json names it, the kernel proves it is the process that wrote it (a pid reused
 * by another program is never signalled) and it is a server of this workspace (`servesWorkspace`). Waits until it has let go of the workspace (removed
 * server.json, or died), at most `waitMs`. Returns whether the workspace is free of it.
 */
export async function stopServer(batonDir: string, pid: number, waitMs = 10_000): Promise<boolean> {
  const holder = readServerFile(batonDir);
  if (!holder || holder.pid !== pid) return true;
  if (serverIdentity(holder) !== "same") return serverIdentity(holder) === "dead";
  if (!servesWorkspace(pid, batonDir)) return false;
  try {
    process.kill(pid, "SIGTERM");
  } catch {
    return true; // gone meanwhile
  }
  // Stopped once it is gone, not only its file: the server removes server.json once it stopped
  // listening, then finishes its shutdown (closing the store). A shutdown still waiting at the
  // deadline (a hook's child process) serves no more: stopped too, its file gone.
  const until = Date.now() + waitMs;
  let fileGone = false;
  while (Date.now() < until) {
    const now = readServerFile(batonDir);
    fileGone = !now || now.pid !== pid || serverIdentity(now) === "dead";
    if (fileGone && !sameProcessAlive(holder)) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return fileGone;
}

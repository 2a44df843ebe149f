/**
 * `.baton/server.json`: how other processes (the CLI's `baton poll`, a page launcher) find the
 * workspace's running server. Written with O_EXCL so two servers starting at once cannot both
 * claim the workspace; mode 0600 because it holds the token; removed on clean exit. A file
 * naming a dead process is stale and replaced.
 *
 * `.baton/server.key` keeps the token and the port across restarts, so a page that was open
 * when the server stopped reconnects to the restarted server without being reloaded.
 */
import { closeSync, fsyncSync, linkSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { BatonError } from "../errors.js";
import { matchProcess, type ProcessMatch, readProcStat } from "../services/process-facts.js";

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
}

export const SERVER_FILE = "server.json";
export const KEY_FILE = "server.key";

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
      return info;
    }
  } catch {
    // a half-written or foreign file: not a server we can use
  }
  return undefined;
}

/** This process's start time as the kernel records it (Linux), for `ServerInfo.startTime`. */
export function ownStartTime(): string | undefined {
  return readProcStat(process.pid)?.startTime;
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

/** The server, only when the kernel proves it is the process that wrote the file (Linux). */
export function provenServer(batonDir: string): ServerInfo | undefined {
  const info = readServerFile(batonDir);
  return info && serverIdentity(info) === "same" ? info : undefined;
}

/**
 * The answer to a client's challenge: only a holder of the token can compute it, and it names
 * the port, so a process on the port a stale file names cannot relay the real server's answer.
 */
export function challengeProof(token: string, port: number, challenge: string): string {
  const { createHmac } = createRequire(import.meta.url)("node:crypto") as typeof import("node:crypto");
  return createHmac("sha256", token).update(`baton-server-proof:${port}:${challenge}`).digest("hex");
}

/**
 * Claim the workspace for this server. Returns the live server that already holds it instead
 * of claiming. A stale file (dead pid, a pid reused by a process that does not answer on the
 * port, or unreadable) is removed and the claim retried once.
 */
export async function claimServerFile(
  batonDir: string,
  info: ServerInfo,
  isLive: (holder: ServerInfo) => Promise<boolean> = async (h) => serverAlive(h),
): Promise<{ claimed: true } | { claimed: false; holder: ServerInfo }> {
  const file = serverFilePath(batonDir);
  for (let attempt = 0; attempt < 2; attempt++) {
    if (writeWhole(file, `${JSON.stringify(info)}\n`, "exclusive")) return { claimed: true };
    const holder = readServerFile(batonDir);
    if (holder && holder.pid !== process.pid && (await isLive(holder))) return { claimed: false, holder };
    try {
      unlinkSync(file);
    } catch {
      // someone else removed it first; the retry decides
    }
  }
  const holder = readServerFile(batonDir);
  if (holder) return { claimed: false, holder };
  throw new BatonError("server_running", `could not create ${file}: another process keeps replacing it`);
}

/**
 * Write a whole file or nothing: the text goes to a private temp file, fsynced, then is linked
 * in place (`exclusive`: fails with false when the file exists, like O_EXCL) or renamed over it.
 * A full disk or any other write failure leaves no partial file behind and is `io_error`.
 */
function writeWhole(file: string, text: string, mode: "exclusive" | "replace"): boolean {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    const fd = openSync(tmp, "w", 0o600);
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    if (mode === "replace") renameSync(tmp, file);
    else {
      try {
        linkSync(tmp, file);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
        throw err;
      }
    }
    return true;
  } catch (err) {
    throw new BatonError("io_error", `cannot write ${file}: ${(err as Error).message}`, { path: file }, { cause: err });
  } finally {
    try {
      unlinkSync(tmp);
    } catch {
      // renamed into place, or never created
    }
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

/** The token and port this workspace's server used last time, if any. */
export function readServerKey(batonDir: string): { token: string; port: number } | undefined {
  try {
    const v = JSON.parse(readFileSync(join(batonDir, KEY_FILE), "utf8")) as { token?: unknown; port?: unknown };
    if (typeof v.token === "string" && v.token.length >= 32 && typeof v.port === "number") return { token: v.token, port: v.port };
  } catch {
    // none yet, or unreadable: a new token is made
  }
  return undefined;
}

/** Persist the token and port (mode 0600, written atomically). */
export function writeServerKey(batonDir: string, key: { token: string; port: number }): void {
  writeWhole(join(batonDir, KEY_FILE), `${JSON.stringify(key)}\n`, "replace");
}

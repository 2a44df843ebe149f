/**
 * Who holds a WAL database's write lock, so `storage_busy` can name the process instead of
 * "another process". In WAL mode SQLite takes the write lock as a POSIX advisory lock on byte
 * 120 of the `-shm` file (WALINDEX_LOCK_OFFSET + WAL_WRITE_LOCK); Linux lists every such lock
 * with its pid in /proc/locks. Elsewhere (or when the lock is gone by the time we look) the
 * answer is undefined and the error stays general.
 */
import { readFileSync, statSync } from "node:fs";

export interface LockHolder {
  pid: number;
  /** The process's name (/proc/<pid>/stat field 2). */
  command?: string;
  /** Stopped (SIGSTOP, a debugger): it will never release the lock by itself. */
  stopped: boolean;
}

const WAL_WRITE_LOCK_BYTE = 120;

/** The process holding the write lock of the database at `dbPath`, where the platform says. */
export function writeLockHolder(dbPath: string): LockHolder | undefined {
  let inode: number;
  let locks: string;
  try {
    inode = statSync(`${dbPath}-shm`).ino;
    locks = readFileSync("/proc/locks", "utf8");
  } catch {
    return undefined;
  }
  for (const line of locks.split("\n")) {
    // "1: POSIX  ADVISORY  WRITE 21783 fe:00:2204001 120 120"
    const f = line.trim().split(/\s+/);
    if (f[1] !== "POSIX" || f[3] !== "WRITE") continue;
    const dev = f[5]?.split(":");
    if (Number(dev?.[2]) !== inode) continue;
    const start = Number(f[6]);
    const end = f[7] === "EOF" ? Number.POSITIVE_INFINITY : Number(f[7]);
    if (!(start <= WAL_WRITE_LOCK_BYTE && WAL_WRITE_LOCK_BYTE <= end)) continue;
    const pid = Number(f[4]);
    if (!Number.isSafeInteger(pid) || pid <= 0) continue;
    return { pid, ...procState(pid) };
  }
  return undefined;
}

function procState(pid: number): { command?: string; stopped: boolean } {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const close = text.lastIndexOf(")");
    const state = text.slice(close + 2, close + 3);
    return { command: text.slice(text.indexOf("(") + 1, close), stopped: state === "T" || state === "t" };
  } catch {
    return { stopped: false };
  }
}

/** The sentence a `storage_busy` error adds about the holder: who, and what to do. */
export function describeHolder(h: LockHolder): string {
  const who = `pid ${h.pid}${h.command ? ` (${h.command})` : ""}`;
  return h.stopped
    ? `${who} holds the write lock and is stopped (SIGSTOP or a debugger): resume it (\`kill -CONT ${h.pid}\`) or end it (\`kill ${h.pid}\`)`
    : `${who} holds the write lock: wait for it to finish, or end it (\`kill ${h.pid}\`) if it is stuck`;
}

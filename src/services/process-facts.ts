/**
 * Facts about processes on this host, for the stale-holder proofs in core/locks.ts: the host
 * name, whether a pid is alive, and a process's start time (Linux: /proc/<pid>/stat field 22,
 * clock ticks since boot), which tells a live holder from an unrelated process that reused its
 * pid. Tests inject their own facts.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { HolderFacts, HolderIdentity } from "../core/locks.js";

export interface ProcessFacts {
  host(): string;
  /** This machine's stable identity (survives host renames); absent: the host name decides. */
  machine?(): string | undefined;
  /** Whether the pid is a live process here (a zombie is dead; EPERM means alive, not ours). */
  alive(pid: number): boolean;
  /** The process's start time, when this platform exposes it. */
  startTime(pid: number): string | undefined;
}

let cachedHost: string | undefined;
let cachedMachine: string | null | undefined;

/**
 * This machine's stable identity, which survives host renames: a hash (never the raw value,
 * which systemd asks to keep private) of /etc/machine-id, else /var/lib/dbus/machine-id.
 * Undefined where neither is readable: callers then fall back to the host name. Containers
 * built from one image may share a baked-in machine-id, so it names a machine only as well as
 * the image allows.
 */
export function machineId(): string | undefined {
  if (cachedMachine === undefined) {
    cachedMachine = null;
    for (const file of ["/etc/machine-id", "/var/lib/dbus/machine-id"]) {
      try {
        const id = readFileSync(file, "utf8").trim();
        if (/^[0-9a-f]{32}$/i.test(id)) {
          const { createHash } = createRequire(import.meta.url)("node:crypto") as typeof import("node:crypto");
          cachedMachine = createHash("sha256").update(`baton-machine:${id.toLowerCase()}`).digest("hex").slice(0, 16);
          break;
        }
      } catch {
        // not readable here: try the next, else the host name decides
      }
    }
  }
  return cachedMachine ?? undefined;
}

/**
 * Whether `pid` is a live process on this host: the one rule every liveness check uses (locks,
 * runs, the server file, temp-file sweeps, doctor). `kill(pid, 0)` succeeds or fails with
 * EPERM (alive, another user's); a zombie (killed, not yet reaped by its parent) still answers
 * kill(0) and is dead. Whether it is the *same* process as before is another question, answered
 * by its start time (`startTime`, `matchProcess`).
 */
export function processAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  const stat = readProcStat(pid);
  return stat === undefined || stat.state !== "Z";
}

/** The real facts of this host. */
export const hostFacts: ProcessFacts = {
  host() {
    cachedHost ??= (createRequire(import.meta.url)("node:os") as typeof import("node:os")).hostname();
    return cachedHost;
  },
  alive: processAlive,
  startTime(pid) {
    return readProcStat(pid)?.startTime;
  },
};

/**
 * /proc/<pid>/stat (Linux): the name (field 2, which may hold spaces and parentheses), the state
 * (field 3), the parent (field 4) and the start time (field 22). Undefined elsewhere, or when the
 * process is gone.
 */
export function readProcStat(pid: number): { comm: string; state: string; ppid: number; startTime: string } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  const close = text.lastIndexOf(")");
  if (close < 0) return undefined;
  const fields = text
    .slice(close + 2)
    .trim()
    .split(/\s+/);
  // fields[0] is field 3 (state); field 22 is fields[19].
  const state = fields[0];
  const startTime = fields[19];
  if (state === undefined || startTime === undefined || !/^\d+$/.test(startTime)) return undefined;
  return { comm: text.slice(text.indexOf("(") + 1, close), state, ppid: Number(fields[1]), startTime };
}

/**
 * Whether a process recorded as `{pid, startTime}` is still that process: the one rule that
 * clients, the server, hooks and doctor share. `same`: alive with the recorded start time;
 * `dead`: no such process, or a zombie; `reused`: alive, but started at another time (the pid
 * went to an unrelated process); `unproven`: alive, but the start time cannot be compared (a
 * platform without /proc, or a record written without one), so identity needs another proof.
 */
export type ProcessMatch = "same" | "dead" | "reused" | "unproven";

export function matchProcess(rec: { pid: number; startTime?: string | undefined }, facts: ProcessFacts = hostFacts): ProcessMatch {
  if (!facts.alive(rec.pid)) return "dead";
  const now = facts.startTime(rec.pid);
  if (now === undefined || rec.startTime === undefined) return "unproven";
  return now === rec.startTime ? "same" : "reused";
}

/** What this host knows about a holder: its pid's liveness and start time, asked only when it is on this host. */
export function factsAbout(facts: ProcessFacts, holder: HolderIdentity): HolderFacts {
  const host = facts.host();
  if (holder.pid === undefined || holder.host !== host) return { host };
  const alive = facts.alive(holder.pid);
  const out: HolderFacts = { host, alive };
  if (alive) {
    const st = facts.startTime(holder.pid);
    if (st !== undefined) out.startTime = st;
  }
  return out;
}

/** A holder's identity as recorded at acquisition: pid, this host, and the pid's start time. */
export function identify(facts: ProcessFacts, pid: number | undefined): HolderIdentity {
  const host = facts.host();
  if (pid === undefined) return { host };
  const id: HolderIdentity = { pid, host };
  const st = facts.startTime(pid);
  if (st !== undefined) id.startTime = st;
  return id;
}

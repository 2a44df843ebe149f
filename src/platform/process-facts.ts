/**
 * Facts about processes on this host, for the stale-holder proofs in core/locks.ts: the host
 * name, the host identity (whose pids this process can judge), whether a pid is alive, and a
 * process's start time (Linux: /proc/<pid>/stat field 22, clock ticks since boot), which tells
 * a live holder from an unrelated process that reused its pid. Tests inject their own facts.
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { createRequire } from "node:module";
import { checksum } from "../core/canonical.js";
import type { HolderFacts, HolderIdentity } from "../core/locks.js";
import { badInput } from "../errors.js";

export interface ProcessFacts {
  /** The host's name, shown to people. */
  host(): string;
  /**
   * The host identity: processes with the same one number their pids alike, so one can judge
   * another's pid with kill(0) and /proc. Absent (a test's facts): the host name stands for it.
   */
  hostId?(): string;
  /** This machine's stable identity (survives host renames); absent: the host name decides. */
  machine?(): string | undefined;
  /** Whether the pid is a live process here (a zombie is dead; EPERM means alive, not ours). */
  alive(pid: number): boolean;
  /** The process's start time, when this platform exposes it. */
  startTime(pid: number): string | undefined;
}

let cachedHost: string | undefined;
let cachedHostId: string | undefined;
let cachedMachine: string | null | undefined;
let cachedProcIsOurs: boolean | undefined;

/**
 * The identity of a host for lock and run proofs: who may judge whose pid. A pid names the same
 * process exactly for processes of one kernel boot and one pid namespace, so on Linux it is a
 * checksum of the boot id (/proc/sys/kernel/random/boot_id: new at every boot, shared by the
 * containers of one kernel) and the pid namespace (/proc/self/ns/pid: one per container that
 * has its own): `linux:<16 hex>`. The host name cannot tell apart two containers of one name,
 * and the machine id is baked into images. Where /proc does not say (macOS): `name:<host name>`.
 */
function kernelHostId(): string | undefined {
  try {
    const boot = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim().toLowerCase();
    const ns = readlinkSync("/proc/self/ns/pid");
    if (!/^[0-9a-f-]{32,36}$/.test(boot) || !/^pid:\[\d+\]$/.test(ns)) return undefined;
    return `linux:${checksum(`baton-host ${boot} ${ns}`).slice("fnv1a:".length)}`;
  } catch {
    return undefined;
  }
}

/** This process's host identity under `facts` (see `kernelHostId`); facts without one: the host name. */
export function hostIdentity(facts: ProcessFacts): string {
  return facts.hostId?.() ?? `name:${facts.host()}`;
}

/** A host id given by the user (`BATON_HOST_ID`, openBaton's `hostId`): what is wrong with it, if anything. */
export function hostIdProblem(id: string): string | undefined {
  return /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$/.test(id)
    ? undefined
    : "1-128 letters, digits and . _ : @ -, starting with a letter or digit";
}

/**
 * `facts` as a host of its own, `id`: the user's name is added to the identity, never put in
 * its place, so processes given different ids count as different hosts (a lock one holds is
 * freed by its expiry only), while processes that number their pids differently stay apart
 * whatever id they are given.
 */
export function withHostId(facts: ProcessFacts, id: string): ProcessFacts {
  const problem = hostIdProblem(id);
  if (problem) throw badInput(`the host id ${JSON.stringify(id)} is invalid: ${problem}`);
  return {
    host: () => facts.host(),
    hostId: () => `${id}@${hostIdentity(facts)}`,
    machine: () => facts.machine?.(),
    alive: (pid) => facts.alive(pid),
    startTime: (pid) => facts.startTime(pid),
  };
}

/**
 * Whether /proc numbers pids as this process does. A process in a pid namespace of its own that
 * still sees its parent's /proc (`unshare --pid` without `--mount-proc`) would read another
 * process's /proc/<pid>/stat for every pid it knows: then /proc says nothing.
 */
function procIsOurs(): boolean {
  if (cachedProcIsOurs === undefined) {
    try {
      cachedProcIsOurs = readlinkSync("/proc/self") === String(process.pid);
    } catch {
      cachedProcIsOurs = true; // no /proc: every read of it fails on its own
    }
  }
  return cachedProcIsOurs;
}

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
  hostId() {
    cachedHostId ??= kernelHostId() ?? `name:${hostFacts.host()}`;
    return cachedHostId;
  },
  machine: machineId,
  alive: processAlive,
  startTime(pid) {
    return readProcStat(pid)?.startTime;
  },
};

/**
 * /proc/<pid>/stat (Linux): the name (field 2, which may hold spaces and parentheses), the state
 * (field 3), the parent (field 4), the process group (field 5), the terminal's foreground
 * process group (field 8; -1 without a terminal) and the start time (field 22). Undefined
 * elsewhere, when the process is gone, or when /proc is another pid namespace's.
 */
export function readProcStat(
  pid: number,
): { comm: string; state: string; ppid: number; pgrp: number; tpgid: number; startTime: string } | undefined {
  if (!procIsOurs()) return undefined;
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
  return {
    comm: text.slice(text.indexOf("(") + 1, close),
    state,
    ppid: Number(fields[1]),
    pgrp: Number(fields[2]),
    tpgid: Number(fields[5]),
    startTime,
  };
}

/**
 * A process's command line and working directory, from /proc (Linux); undefined elsewhere, when
 * it is gone, or when /proc is another pid namespace's. The cwd is undefined when unreadable.
 */
export function readProcArgs(pid: number): { argv: string[]; cwd: string | undefined } | undefined {
  if (process.platform !== "linux" || !Number.isSafeInteger(pid) || pid <= 0 || !procIsOurs()) return undefined;
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/cmdline`, "utf8");
  } catch {
    return undefined;
  }
  return { argv: text.split("\0").filter((a, i, all) => a !== "" || i < all.length - 1), cwd: readProcCwd(pid) };
}

/** A process's working directory, from /proc (Linux); undefined elsewhere, when it is gone or unreadable. */
export function readProcCwd(pid: number): string | undefined {
  if (process.platform !== "linux" || !Number.isSafeInteger(pid) || pid <= 0 || !procIsOurs()) return undefined;
  try {
    return readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    return undefined;
  }
}

/**
 * A process's environment as it was started, from /proc (Linux; only a process of this user's can
 * be read); undefined elsewhere, when it is gone or unreadable, or when /proc is another pid
 * namespace's.
 */
export function readProcEnv(pid: number, twice: "first" | "last" = "first"): Record<string, string> | undefined {
  if (process.platform !== "linux" || !Number.isSafeInteger(pid) || pid <= 0 || !procIsOurs()) return undefined;
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/environ`, "utf8");
  } catch {
    return undefined;
  }
  const env: Record<string, string> = {};
  for (const entry of text.split("\0")) {
    const eq = entry.indexOf("=");
    const name = entry.slice(0, eq);
    // A name given twice: the first, as getenv (and so a Node process's own process.env) reads
    // it; the last, as a shell reads it (and hands on to what it starts).
    if (eq > 0 && (twice === "last" || !Object.hasOwn(env, name))) env[name] = entry.slice(eq + 1);
  }
  return env;
}

/**
 * Every live descendant of `pid` (children, their children, …) with its process group, parents
 * before children, from /proc (Linux); empty elsewhere or when /proc cannot be read. A process
 * that forks between this read and a signal is missed.
 */
export function descendants(pid: number): { pid: number; pgrp: number }[] {
  if (process.platform !== "linux" || !procIsOurs()) return [];
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return [];
  }
  const children = new Map<number, { pid: number; pgrp: number }[]>();
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readProcStat(Number(name));
    if (!stat || stat.state === "Z") continue;
    const list = children.get(stat.ppid) ?? [];
    list.push({ pid: Number(name), pgrp: stat.pgrp });
    children.set(stat.ppid, list);
  }
  const out: { pid: number; pgrp: number }[] = [];
  for (let next: number | undefined = pid, i = 0; next !== undefined; next = out[i++]?.pid) out.push(...(children.get(next) ?? []));
  return out;
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
  const here: HolderFacts = { host: facts.host(), hostId: hostIdentity(facts) };
  if (holder.pid === undefined || holder.hostId !== here.hostId) return here;
  const alive = facts.alive(holder.pid);
  here.alive = alive;
  if (alive) {
    const st = facts.startTime(holder.pid);
    if (st !== undefined) here.startTime = st;
  }
  return here;
}

/** A holder's identity as recorded at acquisition: pid, this host (name and identity), and the pid's start time. */
export function identify(facts: ProcessFacts, pid: number | undefined): HolderIdentity & { host: string; hostId: string } {
  const id: HolderIdentity & { host: string; hostId: string } = { host: facts.host(), hostId: hostIdentity(facts) };
  if (pid === undefined) return id;
  id.pid = pid;
  const st = facts.startTime(pid);
  if (st !== undefined) id.startTime = st;
  return id;
}

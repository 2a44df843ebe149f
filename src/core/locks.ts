/**
 * Holders and proof: when a named lock may be taken from its holder, and when an agent run is
 * dead. Pure: the services gather the facts (is the pid alive here, what is its start time)
 * and this module decides.
 *
 * A holder is given up only on proof:
 *  - `expired`: its expiry (last heartbeat + ttl) has passed;
 *  - `dead_pid`: it runs on this host and its pid is gone;
 *  - `pid_reused`: it runs on this host, the pid is alive, but the process has another start
 *    time than the one recorded (the pid was reused by an unrelated process).
 * A live holder that keeps heartbeating is never given up, however long it runs; a holder on
 * another host is given up only after expiry (its pid means nothing here).
 *
 * "This host" is the host identity (platform/process-facts.ts `hostIdentity`), not the host
 * name: a pid names one process only among the processes of one kernel boot and one pid
 * namespace, so two containers with the same host name are two hosts. A holder recorded
 * without an identity (by a Baton before it) cannot be placed, and is given up only after
 * expiry too; its host name still tells another host at once.
 */

/** Who holds a lock (or runs a run): as recorded when it was taken. */
export interface HolderIdentity {
  pid?: number;
  /** The host's name, for people: it decides nothing when the identity is recorded. */
  host?: string;
  /** The host identity: among whose processes the pid is numbered. */
  hostId?: string;
  /** The process's start time (Linux: /proc/<pid>/stat field 22, clock ticks since boot). */
  startTime?: string;
}

/** What this host knows about the holder's process, gathered by the caller. */
export interface HolderFacts {
  /** This host's name. */
  host: string;
  /** This host's identity. */
  hostId: string;
  /** Whether the holder's pid is alive here (asked only when the holder is on this host). */
  alive?: boolean;
  /** The live process's start time, when it can be read. */
  startTime?: string;
}

export type StaleProof = "expired" | "dead_pid" | "pid_reused";

export type StaleDecision =
  | { stale: true; proof: StaleProof; evidence: string }
  | { stale: false; reason: "live" | "other_host" | "unknown_host" | "unknown_pid"; evidence: string };

/**
 * Whether a holder may be given up now, and the proof. `expiresMs` is when the holder's last
 * heartbeat runs out (epoch ms).
 */
export function staleDecision(holder: HolderIdentity & { expiresMs: number }, facts: HolderFacts, nowMs: number): StaleDecision {
  const who = describeHolder(holder);
  if (nowMs >= holder.expiresMs) {
    return {
      stale: true,
      proof: "expired",
      evidence: `${who}: no heartbeat since it expired at ${new Date(holder.expiresMs).toISOString()}`,
    };
  }
  const left = `expires at ${new Date(holder.expiresMs).toISOString()}`;
  if (!onThisHost(holder, facts)) {
    const sameName = holder.host !== undefined && holder.host === facts.host;
    return {
      stale: false,
      reason: "other_host",
      evidence: `${who} is on another host${sameName ? " of the same name (another machine, boot or pid namespace)" : ""}; only its expiry can free it (${left})`,
    };
  }
  if (holder.pid === undefined) {
    return { stale: false, reason: "unknown_pid", evidence: `${who} has no pid on record; only its expiry can free it (${left})` };
  }
  if (holder.hostId === undefined) {
    return {
      stale: false,
      reason: "unknown_host",
      evidence: `${who} was recorded without a host identity (by an older Baton), so its pid proves nothing here; only its expiry can free it (${left})`,
    };
  }
  if (facts.alive === false) return { stale: true, proof: "dead_pid", evidence: `${who} is not running` };
  if (holder.startTime !== undefined && facts.startTime !== undefined && holder.startTime !== facts.startTime) {
    return {
      stale: true,
      proof: "pid_reused",
      evidence: `${who} now belongs to another process (start time ${facts.startTime}, recorded ${holder.startTime})`,
    };
  }
  return { stale: false, reason: "live", evidence: `${who} is alive (${left})` };
}

/**
 * Whether the holder may be on this host: the same identity, or, for a record without one, the
 * same host name (then it may also be another host of that name: `staleDecision` asks expiry).
 */
function onThisHost(holder: HolderIdentity, facts: HolderFacts): boolean {
  if (holder.hostId !== undefined) return holder.hostId === facts.hostId;
  return holder.host === undefined || holder.host === facts.host;
}

/** A holder's identity from a stored row (a lock's or a run's), its absent columns left out. */
export function holderOfRow(r: {
  pid: number | null;
  host: string | null;
  hostId: string | null;
  startTime: string | null;
}): HolderIdentity {
  const h: HolderIdentity = {};
  if (r.pid !== null) h.pid = r.pid;
  if (r.host !== null) h.host = r.host;
  if (r.hostId !== null) h.hostId = r.hostId;
  if (r.startTime !== null) h.startTime = r.startTime;
  return h;
}

export function describeHolder(h: HolderIdentity): string {
  if (h.pid === undefined) return "the holder";
  return `pid ${h.pid}${h.host !== undefined ? ` on ${h.host}` : ""}`;
}

/** Lock names: what a lock is for, e.g. `session:abc` or `deploy`. */
export const LOCK_NAME = /^[A-Za-z0-9][A-Za-z0-9._:/@-]{0,199}$/;

/** The command lock of a session: held while a command changes the session's external-run state. */
export function sessionLockName(sessionId: string): string {
  return `session:${sessionId}`;
}

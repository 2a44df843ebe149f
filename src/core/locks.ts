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
 */

/** Who holds a lock (or runs a run): as recorded when it was taken. */
export interface HolderIdentity {
  pid?: number;
  host?: string;
  /** The process's start time (Linux: /proc/<pid>/stat field 22, clock ticks since boot). */
  startTime?: string;
}

/** What this host knows about the holder's process, gathered by the caller. */
export interface HolderFacts {
  /** This host's name. */
  host: string;
  /** Whether the holder's pid is alive here (asked only when the holder is on this host). */
  alive?: boolean;
  /** The live process's start time, when it can be read. */
  startTime?: string;
}

export type StaleProof = "expired" | "dead_pid" | "pid_reused";

export type StaleDecision =
  | { stale: true; proof: StaleProof; evidence: string }
  | { stale: false; reason: "live" | "other_host" | "unknown_pid"; evidence: string };

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
  if (holder.host !== undefined && holder.host !== facts.host) {
    return { stale: false, reason: "other_host", evidence: `${who} is on another host; only its expiry can free it (${left})` };
  }
  if (holder.pid === undefined || holder.host === undefined) {
    return { stale: false, reason: "unknown_pid", evidence: `${who} has no pid and host on record; only its expiry can free it (${left})` };
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

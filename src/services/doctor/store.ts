/** Doctor's checks of the store itself: a stopped writer, the database's integrity, the snapshots. */
import type { JsonObject } from "../../core/types.js";
import { type Check, type Found, SAMPLE } from "./check.js";

export const storage: Check = {
  name: "storage",
  reads: "who holds the database's write lock, and whether that process is stopped (Backend.writeLockHolder)",
  async run({ deps }) {
    // A writer stopped inside a transaction (SIGSTOP, a debugger) holds the write lock forever:
    // every other process waits out its busy timeout and fails with storage_busy.
    const holder = deps.backend.writeLockHolder?.();
    if (!holder?.stopped || holder.pid === process.pid) return [];
    return [
      {
        code: "storage_lock_stopped",
        severity: "error",
        message: `pid ${holder.pid}${holder.command ? ` (${holder.command})` : ""} holds the database's write lock and is stopped, so every write waits and fails with storage_busy; resume it (\`kill -CONT ${holder.pid}\`) or end it (\`kill ${holder.pid}\`)`,
        evidence: { pid: holder.pid, ...(holder.command ? { command: holder.command } : {}) },
        fix: `kill -CONT ${holder.pid}`,
      },
    ];
  },
};

export const integrity: Check = {
  name: "integrity",
  reads: "the database's own integrity check (Backend.integrityCheck)",
  async run({ deps }) {
    const problems = await deps.backend.integrityCheck();
    if (problems.length === 0) return [];
    return [
      {
        code: "database_corrupt",
        severity: "error",
        message: `the database fails its integrity check (${problems.length} problem(s)); stop writing to it`,
        evidence: { problems: problems.slice(0, SAMPLE) },
        fix: "baton export --session <id> for each session, then restore .baton/baton.db from a backup",
      },
    ];
  },
};

export const snapshots: Check = {
  name: "snapshots",
  reads: "each session's stored snapshot against what its journal folds to (Journal.verifySnapshot)",
  fix: {
    codes: ["snapshot_mismatch"],
    does: "rebuilds the snapshot from the journal",
    key: (f) => `rebuild:${f.sessionId}`,
    subject: (f) => f.sessionId ?? "",
    async apply(f, { deps }) {
      const [r] = await deps.journal.rebuild(f.sessionId as string);
      return r?.repaired ? `snapshot rebuilt from ${r.lastSeq} events` : "already consistent";
    },
  },
  async run({ deps, sessions }) {
    const out: Found[] = [];
    for (const id of sessions) {
      const v = await deps.journal.verifySnapshot(id);
      if (v.matches) continue;
      const evidence: JsonObject = { journalSeq: v.journalSeq, problem: v.problem ?? "differs" };
      if (v.storedSeq !== undefined) evidence.storedSeq = v.storedSeq;
      const what = v.problem === "missing" ? "missing" : v.problem === "corrupt" ? "corrupt" : "not what the journal folds to";
      out.push({
        code: "snapshot_mismatch",
        severity: "warning",
        sessionId: id,
        message: `the stored snapshot of ${id} is ${what}; reads refold it, a rebuild repairs it`,
        evidence,
        fix: `baton rebuild --session ${id}`,
      });
    }
    return out;
  },
};

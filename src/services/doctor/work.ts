/** Doctor's checks of the work in flight: expired leases, stale locks, runs that are gone. */
import type { JsonObject } from "../../core/types.js";
import type { Check, Found } from "./check.js";

export const leases: Check = {
  name: "leases",
  reads: "open work items and their leases (Queue.pending)",
  fix: {
    codes: ["lease_expired"],
    does: "returns expired leases to the queue (Queue.reapExpired)",
    key: () => "reap-leases",
    subject: () => "expired leases",
    apply: async (_f, { deps }) => `${await deps.queue.reapExpired()} expired lease(s) returned to the queue`,
  },
  async run({ deps, sid }) {
    const nowMs = deps.now().getTime();
    const expired = (await deps.queue.pending(sid)).filter((w) => w.state === "leased" && w.lease?.expired);
    return expired.map(
      (w): Found => ({
        code: "lease_expired",
        severity: "warning",
        sessionId: w.sessionId,
        message: `work item ${w.itemId} (${w.kind}) is leased to ${w.lease?.owner} whose lease expired ${Math.round((nowMs - Date.parse(w.lease?.expiresAt ?? "")) / 1000)} s ago; it is redelivered on the next poll`,
        evidence: {
          itemId: w.itemId,
          kind: w.kind,
          seq: w.seq,
          owner: w.lease?.owner ?? "",
          expiredAt: w.lease?.expiresAt ?? "",
          attempts: w.attempts,
        },
        fix: `baton poll --session ${w.sessionId} --json`,
      }),
    );
  },
};

export const locks: Check = {
  name: "locks",
  reads: "every lock and whether its holder is provably gone (LockService.list)",
  fix: {
    codes: ["lock_stale"],
    does: "reclaims the lock, after checking the proof again (LockService.reclaimStale)",
    key: (f) => `lock:${f.evidence.name}`,
    subject: (f) => String(f.evidence.name),
    async apply(f, { deps }) {
      const r = await deps.locks.reclaimStale(String(f.evidence.name));
      return r.reclaimed ? `reclaimed epoch ${r.epoch} (${r.proof})` : `left alone: ${r.evidence}`;
    },
  },
  async run(ctx) {
    const out: Found[] = [];
    for (const l of await ctx.locks()) {
      if (l.state !== "held" || !l.holder || !l.stale) continue;
      const h = l.holder;
      const holder: JsonObject = { owner: h.owner, acquiredAt: h.acquiredAt, heartbeatAt: h.heartbeatAt, expiresAt: h.expiresAt };
      if (h.pid !== undefined) holder.pid = h.pid;
      if (h.host !== undefined) holder.host = h.host;
      if (h.runId !== undefined) holder.runId = h.runId;
      if (l.stale.stale) {
        out.push({
          code: "lock_stale",
          severity: "warning",
          message: `lock "${l.name}" (epoch ${l.epoch}) is held by a provably stale holder (${l.stale.proof}); the next acquirer reclaims it`,
          evidence: { name: l.name, epoch: l.epoch, holder, proof: l.stale.proof, evidence: l.stale.evidence },
          fix: `baton lock inspect ${l.name} --json`,
        });
      } else {
        out.push({
          code: "lock_held",
          severity: "info",
          message: `lock "${l.name}" (epoch ${l.epoch}) is held by ${h.owner}: an active command (${l.stale.reason})`,
          evidence: { name: l.name, epoch: l.epoch, holder, evidence: l.stale.evidence },
          fix: "",
        });
      }
    }
    return out;
  },
};

export const runs: Check = {
  name: "runs",
  reads: "runs recorded as running, and whether their process or heartbeat is provably gone (a dry run of RunService.detectCrashed)",
  fix: {
    codes: ["run_crashed"],
    does: "marks the session's gone runs crashed and gives their leased work back (RunService.detectCrashed)",
    key: (f) => `runs:${f.sessionId}`,
    subject: (f) => f.sessionId ?? "",
    async apply(f, { deps }) {
      const marked = await deps.runs.detectCrashed({ sessionId: f.sessionId as string });
      const work = marked.reduce((n, m) => n + m.releasedWork.length, 0);
      return `${marked.length} run(s) marked crashed, ${work} work item(s) given back`;
    },
  },
  async run({ deps, sid }) {
    const crashed = await deps.runs.detectCrashed({ ...(sid ? { sessionId: sid } : {}), dryRun: true });
    return crashed.map(
      (c): Found => ({
        code: "run_crashed",
        severity: "warning",
        sessionId: c.sessionId,
        message: `run ${c.runId} (${c.agent}) is still recorded as running but is gone (${c.proof}); marking it crashed gives its leased work to the next agent`,
        evidence: { runId: c.runId, agent: c.agent, proof: c.proof, evidence: c.evidence },
        fix: `baton status --session ${c.sessionId} --json`,
      }),
    );
  },
};

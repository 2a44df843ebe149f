/** Doctor on one session: its target check, and the session view the report carries. */
import type { DoctorSessionView } from "../../core/doctor.js";
import { sessionLockName } from "../../core/locks.js";
import type { Check, DoctorContext } from "./check.js";

export const target: Check = {
  name: "target",
  reads: "the session's flow and its target binding",
  sessionOnly: true,
  async run({ deps, sid }) {
    const snap = (await deps.journal.read(sid as string)).snapshot;
    if (snap.target || snap.flow !== "external-run") return [];
    return [
      {
        code: "target_unbound",
        severity: "info",
        sessionId: sid as string,
        message: `${sid} follows an external run but is bound to no target; commands cannot tell its run from whatever else is active`,
        evidence: { flow: snap.flow },
        fix: `baton target set ${sid} --kind <kind> --id <id> [--url <url>]`,
      },
    ];
  },
};

/** Phase, deadline, target, the latest runs, the locks its commands hold, pending work, next step. */
export async function sessionView(ctx: DoctorContext): Promise<DoctorSessionView | undefined> {
  const { sid, status } = ctx;
  if (!sid || !status) return undefined;
  const snap = (await ctx.deps.journal.read(sid)).snapshot;
  const runIds = new Set(snap.facets.runs.map((r) => r.runId));
  const locks = await ctx.locks().catch(() => []); // the locks check reports its own failure
  return {
    sessionId: sid,
    flow: snap.flow,
    phase: status.phase,
    status: status.status,
    ...(snap.deadline !== undefined ? { deadline: snap.deadline } : {}),
    ...(snap.target ? { target: snap.target } : {}),
    runs: snap.facets.runs.slice(-5).map((r) => ({
      runId: r.runId,
      agent: r.agent,
      status: r.status,
      started: r.started,
      ...(r.ended !== undefined ? { ended: r.ended } : {}),
      ...(r.pid !== undefined ? { pid: r.pid } : {}),
      ...(r.host !== undefined ? { host: r.host } : {}),
    })),
    locks: locks
      .filter(
        (l) =>
          l.state === "held" &&
          l.holder &&
          (l.name === sessionLockName(sid) || (l.holder.runId !== undefined && runIds.has(l.holder.runId))),
      )
      .map((l) => ({
        name: l.name,
        epoch: l.epoch,
        owner: l.holder?.owner ?? "",
        ...(l.holder?.pid !== undefined ? { pid: l.holder.pid } : {}),
        ...(l.holder?.host !== undefined ? { host: l.holder.host } : {}),
        expiresAt: l.holder?.expiresAt ?? "",
        stale: l.stale?.stale === true,
        ...(l.stale?.stale ? { proof: l.stale.proof } : {}),
      })),
    pendingWork: status.pendingWork.length,
    nextAction: { action: status.nextAction.action, command: status.nextAction.command },
  };
}

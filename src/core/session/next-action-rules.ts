/**
 * The next-action rules for the facts a session holds beyond its phase: blockers, the resume
 * context, files, runs, work, locks, targets, deadlines, markers, progress. Pure; each is one
 * row of the table in docs/flows.md, and its position is set in core/session/next-action.ts.
 */
import { allowedEvents, phaseNextAction } from "../flows/flow.js";
import { describeLane } from "../lanes.js";
import type { NextActionRule } from "../next-action-rule.js";
import { batonCommand, shellQuote } from "../shell.js";
import { clip as clipText } from "../text.js";
import type { NextAction } from "../types.js";
import { markerNextAction } from "./markers.js";

const MAX_TEXT = 160;
/**
 * A lease that runs out within this long is about to expire. Well under the default lease
 * length (60 s): a lease just taken is not news, one left to run out is.
 */
export const LEASE_SOON_MS = 15_000;

const clip = (text: string, max = MAX_TEXT): string => clipText(text, max);

function quote(text: string): string {
  return JSON.stringify(clip(text));
}

function nowOf(input: { now?: Date; snap: { updatedAt: string } }): Date {
  return input.now ?? new Date(input.snap.updatedAt);
}

/** Dead-lettered work: nobody will be given it again, so someone handles it by hand. */
export const deadWorkRule: NextActionRule = ({ flow, snap, deadWork }) => {
  const dead = deadWork ?? [];
  const first = dead[0];
  if (!first) return undefined;
  const list = dead
    .slice(0, 3)
    .map((w) => `${w.kind} (seq ${w.seq})`)
    .join(", ");
  return {
    action: {
      action: "handle_dead_work",
      reason: `${dead.length} work item(s) were dead-lettered and will not be delivered again: ${list}${dead.length > 3 ? ", …" : ""} (${clip(first.why)}). Read event seq ${first.seq} in the journal and handle it by hand, then record the result with \`baton event\`: ${settles(flow.work?.[first.kind]?.doneBy, first.seq)}.`,
      command: batonCommand("export", snap.sessionId, "--seq", String(first.seq)),
    },
    fact: `${dead.length} work item(s) were dead-lettered (${list})`,
  };
};

/** What marks a dead item handled (the queue's append hook): a doneBy event, or any event naming it. */
function settles(doneBy: readonly string[] | undefined, seq: number): string {
  const naming = `any event with data {"handles": ${seq}}`;
  return doneBy?.length ? `an event that finishes it (${doneBy.join(", ")}) or ${naming}` : naming;
}

/** File truth: markers left in the session's files imply what is half done. */
export const markerRule: NextActionRule = ({ flow, snap, markerFiles }) => {
  if (!markerFiles || markerFiles.length === 0) return undefined;
  const action = markerNextAction(flow, snap, markerFiles);
  if (!action) return undefined;
  const first = markerFiles.flatMap((f) => f.findings)[0];
  return {
    action,
    fact: first ? `marker ${first.marker} remains at ${first.file}:${first.line}` : `the session's files imply ${action.action}`,
  };
};

/** Files the resume context recorded that are no longer as recorded. */
export const changedFilesRule: NextActionRule = ({ snap, changedFiles }) => {
  const files = changedFiles ?? [];
  if (files.length === 0) return undefined;
  const list = files
    .slice(0, 5)
    .map((f) => `${f.path} (${f.state})`)
    .join(", ");
  // Recording again settles every path it can: a missing file is recorded as absent; one that
  // is not a regular file any more cannot be recorded until it is one again.
  const recordable = files.filter((f) => f.state !== "unreadable").map((f) => f.path);
  const unreadable = files.length - recordable.length;
  return {
    action: {
      action: "review_changed_files",
      reason: `${files.length} file(s) changed since the session recorded them: ${list}${files.length > 5 ? ", …" : ""}. What changed them is not known (the hooks record only the agent's Edit and Write tools, so the agent's own shell commands count too): review them before building on them, then record them again.${unreadable > 0 ? ` ${unreadable} of them cannot be read as regular files: restore or remove them first.` : ""}`,
      // A name that reads as an option (`--root=..`, which a repository can hold) is given as `./--root=..`: still that path, and options may follow it.
      command:
        recordable.length > 0
          ? batonCommand("files", "add", ...recordable.map((p) => (p.startsWith("-") ? `./${p}` : p)), "--session", snap.sessionId)
          : "",
    },
    fact: `${files.length} recorded file(s) changed since (${list})`,
  };
};

/** The session's deadline passed while it is still open. */
export const deadlineRule: NextActionRule = (input) => {
  const { flow, snap } = input;
  if (snap.deadline === undefined) return undefined;
  const now = nowOf(input);
  if (Date.parse(snap.deadline) >= now.getTime()) return undefined;
  const allowed = new Set(allowedEvents(flow, snap.phase));
  const fact = `the deadline ${snap.deadline} passed`;
  if (allowed.has("timeout")) {
    return {
      action: {
        action: "record_timeout",
        reason: `The session's deadline (${snap.deadline}) passed while it is ${snap.phase}: record the timeout, which ends it.`,
        command: batonCommand("event", snap.sessionId, "timeout"),
      },
      fact,
    };
  }
  const stop = allowed.has("abandon") ? batonCommand("event", snap.sessionId, "abandon") : "";
  return {
    action: {
      action: "deadline_passed",
      reason: `The session's deadline (${snap.deadline}) passed while it is ${snap.phase}: stop and ask the user whether to finish the work anyway or to stop it${stop ? ` (\`${stop}\`)` : ""}.`,
      command: "",
      choices: [
        {
          choice: "finish",
          description: "finish the work although the deadline passed",
          command: batonCommand("resume", snap.sessionId, "--json"),
        },
        ...(stop ? [{ choice: "stop", description: "stop the session: abandon it", command: stop }] : []),
      ],
    },
    fact,
  };
};

/** An active blocker with no workaround: the next agent must not walk into it again. */
export const activeBlockerRule: NextActionRule = (input) => {
  const { snap } = input;
  const active = snap.facets.blockers.filter((b) => b.state === "active");
  const b = active[0];
  if (!b) return undefined;
  const phase = phaseOf(input);
  const affects = b.affects ? ` (affects ${clip(b.affects, 80)})` : "";
  const more =
    active.length > 1
      ? ` ${active.length - 1} more blocker(s) are active: ${active
          .slice(1, 4)
          .map((x) => x.id)
          .join(", ")}.`
      : "";
  // In a phase that is itself about the blocker (task's `blocked`), its command comes after.
  const after =
    phase.action === "resolve_blocker"
      ? ` Then: ${phase.reason} (\`${phase.command}\`)`
      : ` Work it does not affect can go on (${phase.action}${phase.command ? `: \`${phase.command}\`` : ""}).`;
  const workaround = b.workaround ? ` A workaround was noted: ${quote(b.workaround)}; bypass the blocker with it to go on.` : "";
  // No runnable command: what resolves it is the user's answer. Each choice names the session
  // (another may be active) and leaves a placeholder the API refuses until it is replaced.
  const choices = [
    {
      choice: "resolve",
      description: "the blocker is gone (the user supplied what it needs): say how",
      command: `${batonCommand("blocker", "resolve", b.id, "--session", snap.sessionId)} --resolution "<how it was resolved>"`,
    },
    {
      choice: "bypass",
      description: "go on another way: record the workaround",
      command: `${batonCommand("blocker", "bypass", b.id, "--session", snap.sessionId)} --workaround ${b.workaround ? shellQuote(b.workaround) : '"<the workaround>"'}`,
    },
  ];
  return {
    action: {
      action: "resolve_blocker",
      reason: `Blocker ${b.id} ${quote(b.text)} is active${affects}: do not walk into it again. Resolve it (ask the user for what it needs), or bypass it with a workaround (choices resolve / bypass, replacing the <…> placeholder).${workaround}${more}${after}`,
      command: "",
      choices,
    },
    fact: `blocker ${b.id} ${quote(b.text)} is active`,
    suggest: phase.action === "resolve_blocker" ? [] : [phase],
  };
};

function phaseOf(input: Parameters<NextActionRule>[0]): NextAction {
  return phaseNextAction(input.flow, input.snap, nowOf(input));
}

/** Progress says everything is done, but the session was never completed. */
export const unrecordedCompletionRule: NextActionRule = (input) => {
  const { flow, snap } = input;
  const { total, completed } = snap.facets.progress;
  if (total <= 0 || completed < total) return undefined;
  const complete = flow.completeEvent ?? "complete";
  const canComplete = allowedEvents(flow, snap.phase).includes(complete);
  const phase = phaseOf(input);
  // The command records the completion or nothing: when the phase does not allow it yet, the
  // phase's own step comes first and is suggested with its own command.
  const command = canComplete ? batonCommand("complete", snap.sessionId) : "";
  return {
    action: {
      action: "record_completion",
      reason: `Progress is ${completed}/${total} but the session was never completed (phase ${snap.phase}): check the work is really done, then record it${canComplete ? "" : `; the phase does not allow ${complete} yet: first ${phase.action}${phase.command ? ` (\`${phase.command}\`)` : ""}`}.`,
      command,
    },
    ...(canComplete ? {} : { suggest: [phase] }),
    fact: `progress is ${completed}/${total} but completion was never recorded`,
  };
};

/** A run that crashed: its last step may be half done; its leased work went back. */
export const crashedRunRule: NextActionRule = ({ snap }) => {
  const runs = snap.facets.runs;
  const crashed = runs.filter((r) => r.status === "crashed");
  const last = crashed.at(-1);
  if (!last) return undefined;
  // A crash is news until a run started after it was known (someone picked up after it: the
  // agent reading this is that run, or it has already come and gone).
  const known = last.ended ?? last.started;
  const handled = runs.some((r) => r.runId !== last.runId && r.started > known);
  if (handled) return undefined;
  return {
    action: {
      action: "check_crashed_run",
      reason: `Run ${last.runId} (${last.agent}) crashed${last.ended ? ` at ${last.ended}` : ""} without handing off: its last step may be half done, and the work it had leased was given back. Check the recent events and the recorded files before going on.`,
      command: batonCommand("resume", snap.sessionId, "--json"),
    },
    fact: `run ${last.runId} (${last.agent}) crashed${last.ended ? ` at ${last.ended}` : ""} and its leased work was given back`,
  };
};

/** A lease still live but about to run out: heartbeat it if it is yours. */
export const expiringLeaseRule: NextActionRule = (input) => {
  const now = nowOf(input).getTime();
  const soon = input.pendingWork.filter(
    (w) => w.state === "leased" && !w.leaseExpired && w.lease && Date.parse(w.lease.expiresAt) - now <= LEASE_SOON_MS,
  );
  const w = soon[0];
  if (!w?.lease) return undefined;
  return {
    action: {
      action: "heartbeat_lease",
      reason: `The lease on ${w.kind} (seq ${w.seq}) held by ${w.lease.owner} runs out at ${w.lease.expiresAt}: if it is yours, heartbeat it; otherwise it is delivered again after that.`,
      command: batonCommand("lease", "heartbeat", w.lease.leaseId),
    },
    fact: `the lease on ${w.kind} (seq ${w.seq}) held by ${w.lease.owner} runs out at ${w.lease.expiresAt}`,
  };
};

/**
 * A lock one of the session's runs holds: stale on proof (core/locks.ts `staleDecision`:
 * expired, dead or reused pid), or held by a live run, which may be the agent's own (the
 * session's newest running run): then it is the agent's to release, not to wait for.
 */
export const lockRule: NextActionRule = (input) => {
  const l = input.locks?.[0];
  if (!l) return undefined;
  const runs = input.snap.facets.runs;
  const run = runs.find((r) => r.runId === l.runId);
  const inspect = batonCommand("lock", "inspect", l.name);
  const d = l.decision;
  if (d.stale) {
    return {
      action: {
        action: "reclaim_stale_lock",
        reason: `Lock ${l.name} is still held by run ${l.runId} (${l.owner}), but its holder is gone (${d.proof}: ${d.evidence}): inspect it; acquiring it takes it over, with a new epoch.`,
        command: inspect,
      },
      fact: `lock ${l.name} held by run ${l.runId} is stale (${d.proof})`,
    };
  }
  const newest = runs.filter((r) => r.status === "running").at(-1);
  const own = newest !== undefined && newest.runId === l.runId;
  return {
    action: {
      action: "wait_for_lock",
      reason: own
        ? `Lock ${l.name} is held by run ${l.runId} (${l.owner}), the session's newest running run, until ${l.expiresAt}: if that run is yours, the lock is yours: release it once the writes it guards are done (${batonCommand("lock", "release", l.name)}); otherwise wait for its holder.`
        : `Lock ${l.name} is held by run ${l.runId} (${l.owner}${run ? `, ${run.status}` : ""}) until ${l.expiresAt}, and it is alive (${d.evidence}): another process of this session may be writing; wait for it (or ask its holder) before the writes it guards. Inspect it to see its holder and expiry.`,
      command: inspect,
    },
    fact: `lock ${l.name} is held by run ${l.runId}${run ? ` (${run.status})` : ""} until ${l.expiresAt}`,
  };
};

/**
 * The last observed target was not the bound one. The command is the resolve that settles it:
 * run once the agent is back on the bound target, it notes the match.
 */
export const targetMismatchRule: NextActionRule = ({ snap, targetMismatch }) => {
  if (!targetMismatch || !snap.target) return undefined;
  const t = snap.target;
  const settle = batonCommand("target", "resolve", snap.sessionId, "--kind", t.kind, "--id", t.id, ...(t.url ? ["--url", t.url] : []));
  return {
    action: {
      action: "check_target",
      reason: `At ${targetMismatch.at} the target observed was not the bound one: ${clip(targetMismatch.message, 240)} Go back to ${t.kind} ${t.id}${t.url ? ` (${t.url})` : ""} before acting on it, then confirm that the target observed is the bound one again (the command), which settles this.`,
      command: settle,
    },
    fact: `the target observed at ${targetMismatch.at} was not the bound ${t.kind} ${t.id}`,
  };
};

/** A bypassed blocker: carry on, but use its workaround. */
export const bypassedBlockerRule: NextActionRule = ({ snap }) => {
  const bypassed = snap.facets.blockers.filter((b) => b.state === "bypassed");
  const b = bypassed[0];
  if (!b) return undefined;
  const how = b.workaround ? `use its workaround ${quote(b.workaround)}` : "no workaround was recorded";
  return {
    action: {
      action: "use_workaround",
      reason: `Blocker ${b.id} ${quote(b.text)} is bypassed: ${how}; do not try the blocked way again.`,
      command: "",
    },
    fact: `blocker ${b.id} ${quote(b.text)} is bypassed: ${how}`,
  };
};

/** Open questions the last agent left in the resume context. */
export const openQuestionsRule: NextActionRule = ({ snap }) => {
  const qs = snap.facets.resume.openQuestions;
  if (qs.length === 0) return undefined;
  const list = qs
    .slice(-3)
    .map((q) => quote(q))
    .join(", ");
  return {
    action: {
      action: "answer_open_questions",
      reason: `${qs.length} open question(s) in the resume context: ${list}. Settle them (ask the user if needed) before acting on what they touch.`,
      command: batonCommand("resume", snap.sessionId, "--json"),
    },
    fact: `${qs.length} open question(s) remain: ${list}`,
  };
};

/**
 * Two agents at work now both wrote one file in their current turns (core/lanes.ts claims):
 * one may have overwritten the other's change. Advisory: whoever reads this checks the file.
 */
export const sharedFileRule: NextActionRule = ({ snap, sharedFiles }) => {
  const shared = sharedFiles ?? [];
  const first = shared[0];
  if (!first) return undefined;
  const who = first.lanes.map((l) => describeLane(l)).join(" and ");
  const more =
    shared.length > 1
      ? ` (and ${shared.length - 1} more file(s): ${shared
          .slice(1, 4)
          .map((s) => quote(s.path))
          .join(", ")})`
      : "";
  return {
    action: {
      action: "review_shared_file",
      reason: `${quote(first.path)} was written in their current turns by ${who}${more}: one may have overwritten the other's change. Check the file holds what both need before either goes on.`,
      command: batonCommand("lanes", "--session", snap.sessionId),
    },
    fact: `${quote(first.path)} was written by ${first.lanes.length} agents at work now${more}`,
  };
};

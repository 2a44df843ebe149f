/** STATE.md: a session rendered for a human (and for an agent that prefers prose). Pure. */
import type { NextAction, Snapshot } from "../types.js";

const BAR_WIDTH = 20;

export function progressBar(completed: number, total: number): string {
  if (total <= 0) return `[${"░".repeat(BAR_WIDTH)}] no progress recorded`;
  const ratio = Math.min(1, completed / total);
  const filled = Math.round(ratio * BAR_WIDTH);
  return `[${"█".repeat(filled)}${"░".repeat(BAR_WIDTH - filled)}] ${completed}/${total} (${Math.round(ratio * 100)}%)`;
}

function esc(text: string): string {
  return text.replace(/\r?\n/g, " ").replace(/\|/g, "\\|");
}

export function renderStateMd(snap: Snapshot, next: NextAction, opts: { generatedAt?: string } = {}): string {
  const f = snap.facets;
  const lines: string[] = [];
  const push = (...l: string[]) => lines.push(...l);
  push(`# ${snap.title ? esc(snap.title) : snap.sessionId}`, "");
  push(
    `Session \`${snap.sessionId}\` · flow \`${snap.flow}\` · phase **${snap.phase}** · ${snap.lastSeq} events · updated ${snap.updatedAt}`,
    "",
  );

  push("## Next action", "");
  push(`**${next.action}**: ${next.reason}`, "");
  if (next.command) push("```sh", next.command, "```", "");
  if (next.choices?.length) push(...next.choices.map((c) => `- **${c.choice}**: ${esc(c.description)}: \`${c.command}\``), "");

  const sp = f.spiral;
  if (sp?.paused) {
    push("## Spiral (paused)", "");
    if (sp.evidence)
      push(`**${sp.evidence.pattern}**: ${esc(sp.evidence.summary)}.`, "", `- turns (journal seq): ${sp.evidence.turns.join(", ")}`);
    if (sp.evidence?.path) push(`- file: \`${sp.evidence.path}\``);
    if (sp.evidence?.fingerprint) push(`- failure: \`${esc(sp.evidence.fingerprint)}\``);
    push(
      `- proposed rollback: ${sp.proposedCheckpoint ? `checkpoint \`${sp.proposedCheckpoint}\`` : "none (no turn carried a checkpoint)"}`,
    );
    push(`- detected: ${sp.detectedAt ?? "?"} (seq ${sp.detectedSeq ?? "?"}); clear with \`baton resume ${snap.sessionId} --unpause\``, "");
  }

  push("## Position", "");
  const pos = f.position;
  const posRows = (["phase", "plan", "task", "wave", "status"] as const).filter((k) => pos[k] !== undefined);
  if (posRows.length === 0) push("_No position recorded._", "");
  else push(...posRows.map((k) => `- **${k}**: ${esc(pos[k] as string)}`), "");

  push("## Progress", "", progressBar(f.progress.completed, f.progress.total), "");

  push("## Decisions", "");
  if (f.decisions.length === 0) push("_None recorded._", "");
  else {
    push("| Date | Decision | Reason | Alternatives | Reversible |", "| --- | --- | --- | --- | --- |");
    for (const d of f.decisions) {
      const decision = d.context ? `${esc(d.decision)} _(${esc(d.context)})_` : esc(d.decision);
      push(
        `| ${d.date.slice(0, 10)} | ${decision} | ${esc(d.reason ?? "")} | ${esc(d.alternatives.join(", "))} | ${d.reversible === undefined ? "" : d.reversible ? "yes" : "no"} |`,
      );
    }
    push("");
  }

  push("## Blockers", "");
  if (f.blockers.length === 0) push("_None._", "");
  else {
    for (const state of ["active", "bypassed", "resolved"] as const) {
      const list = f.blockers.filter((b) => b.state === state);
      if (list.length === 0) continue;
      push(`### ${state[0]?.toUpperCase()}${state.slice(1)}`, "");
      for (const b of list) {
        const extra = [
          b.affects && `affects ${esc(b.affects)}`,
          b.workaround && `workaround: ${esc(b.workaround)}`,
          b.resolution && `resolution: ${esc(b.resolution)}`,
        ].filter(Boolean);
        push(`- \`${b.id}\` ${esc(b.text)}${extra.length ? ` (${extra.join("; ")})` : ""}`);
      }
      push("");
    }
  }

  push("## Runs", "");
  if (f.runs.length === 0) push("_No agent runs recorded._", "");
  else {
    push("| Run | Agent | Started | Ended | Status | Handoff / completed work |", "| --- | --- | --- | --- | --- | --- |");
    for (const r of f.runs) {
      const note = [r.handoffReason, r.completedWork]
        .filter(Boolean)
        .map((x) => esc(x as string))
        .join(" · ");
      push(`| ${r.runId} | ${esc(r.agent)} | ${r.started} | ${r.ended ?? ""} | ${r.status} | ${note} |`);
    }
    push("");
  }

  push("## Resume context", "");
  const rc = f.resume;
  if (rc.filesModified.length + rc.keyImplementations.length + rc.openQuestions.length === 0) push("_Nothing recorded._", "");
  if (rc.filesModified.length)
    push(
      "**Files modified**",
      "",
      ...rc.filesModified.map((x) => `- \`${x.path}\`${x.hash ? ` (sha256 ${x.hash.slice(0, 12)})` : " (absent)"}`),
      "",
    );
  if (rc.keyImplementations.length) push("**Key implementations**", "", ...rc.keyImplementations.map((x) => `- ${esc(x)}`), "");
  if (rc.openQuestions.length) push("**Open questions**", "", ...rc.openQuestions.map((x) => `- ${esc(x)}`), "");

  const rollbacks = f.rollbacks ?? [];
  if (rollbacks.length) {
    push("## Rollbacks", "");
    for (const r of rollbacks) {
      const what =
        r.state === "applied"
          ? `restored ${r.restored ?? 0} and removed ${r.removed ?? 0} file(s) at ${r.appliedAt ?? r.startedAt}`
          : `**interrupted** (started ${r.startedAt}, ${r.files} file(s)): finish with \`baton rollback --to ${r.target}\` or undo with \`baton rollback --to ${r.safety}\``;
      push(
        `- \`${r.id}\` to checkpoint \`${r.target}\`: ${what}; safety checkpoint \`${r.safety}\`${r.lesson ? `; lesson: ${esc(r.lesson)}` : ""}`,
      );
    }
    push("");
  }
  const artifacts = f.artifacts ?? [];
  if (artifacts.length) {
    push("## Artifacts", "");
    for (const a of artifacts) {
      push(`- \`${esc(a.name)}\` (${a.size} bytes, sha256 ${a.hash.slice(0, 12)})${a.label ? `: ${esc(a.label)}` : ""}`);
    }
    push("");
  }

  const ctx = Object.entries(snap.context);
  if (ctx.length) {
    push("## Context", "");
    for (const [k, v] of ctx) push(`- **${k}**: \`${esc(typeof v === "string" ? v : JSON.stringify(v))}\``);
    push("");
  }
  const diags = snap.diagnostics.filter((d) => d.severity !== "info");
  if (diags.length) {
    push(
      "## Diagnostics",
      "",
      ...diags.map((d) => `- ${d.severity} \`${d.code}\`${d.seq ? ` (seq ${d.seq})` : ""}: ${esc(d.message)}`),
      "",
    );
  }
  push(`_Rendered by baton from the journal${opts.generatedAt ? ` at ${opts.generatedAt}` : ""}; edit the journal, not this file._`, "");
  return lines.join("\n");
}

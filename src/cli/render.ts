/** Human renderings of command results. JSON output never goes through here. */
import type { Paint } from "../platform/colour.js";
import type { SessionStatus, StatusReport } from "../services/session/status.js";

const plain: Paint = (_style, text) => text;

const MAX_VALUE = 80;

function short(v: unknown): string {
  const s = one(typeof v === "string" ? v : JSON.stringify(v));
  return s.length > MAX_VALUE ? `${s.slice(0, MAX_VALUE)}…` : s;
}

/**
 * A value on one line: text an agent or a repository wrote (a title, a blocker, a file name)
 * cannot start a line that reads as Baton's own (`  next: …`, `$ …`). Other control characters
 * are shown as escapes when the text is written (platform/output.ts).
 */
export function one(v: string | null | undefined): string {
  return v == null ? "" : v.replace(/\r?\n/g, "\\n");
}

export function renderSession(s: SessionStatus, paint: Paint = plain): string {
  const lines = [
    `${paint("bold", s.sessionId)}  ${s.flow}  ${paint("cyan", s.phase)}${s.status === "completed" ? " (completed)" : ""}${s.title ? `  "${one(s.title)}"` : ""}`,
  ];
  lines.push(`  next: ${paint("bold", s.nextAction.action)}: ${one(s.nextAction.reason)}`);
  if (s.nextAction.command) lines.push(`        $ ${paint("green", one(s.nextAction.command))}`);
  for (const c of s.nextAction.choices ?? []) lines.push(`        ${one(c.choice)}: ${one(c.description)}: $ ${one(c.command)}`);
  if (s.spiral?.paused)
    lines.push(
      `  ${paint("red", "spiral: paused")} (${s.spiral.pattern})${s.spiral.lane ? ` in lane ${s.spiral.lane}` : ""}: ${one(s.spiral.summary)}`,
    );
  for (const l of s.lanes ?? [])
    lines.push(
      `  lane ${l.lane}: ${one(l.agent)}${l.host ? ` on ${one(l.host)}` : ""}, ${l.status === "working" ? "working" : "between turns"}${l.claims.count > 0 ? `, writing ${l.claims.files.slice(-3).map(one).join(", ")}${l.claims.count > 3 ? ` (+${l.claims.count - 3})` : ""}` : ""}${l.spiral ? `, ${paint("red", "PAUSED")}` : ""}`,
    );
  const ctx = Object.entries(s.context);
  if (ctx.length) lines.push(`  context: ${ctx.map(([k, v]) => `${one(k)}=${short(v)}`).join("  ")}`);
  const pos = Object.entries(s.position);
  if (pos.length) lines.push(`  position: ${pos.map(([k, v]) => `${k}=${one(String(v))}`).join("  ")}`);
  if (s.progress.total > 0) lines.push(`  progress: ${s.progress.completed}/${s.progress.total} (${s.progress.percent}%)`);
  for (const b of s.activeBlockers) lines.push(`  ${paint("yellow", `blocker ${one(b.id)}`)}: ${one(b.text)}`);
  for (const d of s.recentDecisions.slice(-3)) lines.push(`  decided: ${one(d.decision)}${d.reason ? ` (${one(d.reason)})` : ""}`);
  for (const m of s.markers.slice(0, 5)) lines.push(`  marker ${one(m.marker)} at ${one(m.file)}:${m.line}`);
  for (const d of s.diagnostics.slice(-5))
    lines.push(
      `  ${paint(d.severity === "error" ? "red" : d.severity === "warning" ? "yellow" : "dim", d.severity)}: ${d.code}: ${one(d.message)}`,
    );
  return lines.join("\n");
}

export function renderStatus(r: StatusReport, paint: Paint = plain): string {
  if (r.sessions.length === 0 && r.nextAction)
    return `No active session.\n  next: ${paint("bold", r.nextAction.action)}: ${r.nextAction.reason}\n        $ ${paint("green", r.nextAction.command)}`;
  return r.sessions.map((s) => renderSession(s, paint)).join("\n\n");
}

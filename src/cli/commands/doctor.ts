/** `baton doctor`: what is wrong in the workspace (or one session), the evidence, and the fix. */
import type { DoctorReport } from "../../core/doctor.js";
import { badInput, isBatonError } from "../../errors.js";
import type { Ctx } from "../context.js";

const MARK = { error: "ERROR", warning: "WARN ", info: "info " } as const;

function render(r: DoctorReport): string {
  const lines: string[] = [];
  if (r.session) {
    const s = r.session;
    lines.push(`Session ${s.sessionId} (${s.flow}): ${s.phase}, ${s.status}${s.deadline ? `, deadline ${s.deadline}` : ""}`);
    lines.push(`  target: ${s.target ? `${s.target.kind} ${s.target.id}${s.target.url ? ` ${s.target.url}` : ""}` : "none"}`);
    for (const l of s.locks) lines.push(`  lock: ${l.name} epoch ${l.epoch} held by ${l.owner}${l.stale ? ` (STALE: ${l.proof})` : ""}`);
    for (const run of s.runs) lines.push(`  run: ${run.runId} ${run.agent} ${run.status}`);
    lines.push(`  pending work: ${s.pendingWork}`);
    lines.push(`  next: ${s.nextAction.action}${s.nextAction.command ? ` → ${s.nextAction.command}` : ""}`);
  }
  for (const f of r.findings) {
    lines.push(`${MARK[f.severity]} ${f.code}${f.sessionId ? ` [${f.sessionId}]` : ""}: ${f.message}${f.repaired ? " (repaired)" : ""}`);
    if (f.fix && !f.repaired)
      lines.push(`      fix: ${f.fix}${f.safe && !f.fix.includes("--fix") ? `  (or baton doctor --fix ${f.code})` : ""}`);
  }
  for (const x of r.repairs) lines.push(`fixed ${x.code} ${x.subject}: ${x.ok ? "ok" : "FAILED"}, ${x.detail}`);
  const skipped = r.checks.filter((c) => c.status === "skipped");
  for (const c of skipped) lines.push(`skipped ${c.check}: ${c.detail}`);
  lines.push(
    r.ok
      ? `OK: ${r.checks.length - skipped.length} checks passed${r.summary.info ? ` (${r.summary.info} note(s))` : ""}`
      : `${r.summary.error} error(s), ${r.summary.warning} warning(s), ${r.summary.info} note(s)`,
  );
  return lines.join("\n");
}

/** `--fix` alone: every safe repair; `--fix a b` or `--fix a,b`: only those codes' (doctor checks them). */
function fixOption(fix: boolean | string[] | undefined): boolean | string[] {
  if (fix === undefined || fix === true || fix === false) return fix === true;
  return fix.flatMap((c) => c.split(",")).filter((c) => c !== "");
}

export async function doctor(ctx: Ctx, id: string | undefined, o: { session?: string; fix?: boolean | string[] }): Promise<void> {
  const fix = fixOption(o.fix);
  const b = await ctx.open();
  const sessionId = id ?? o.session;
  if (sessionId === "") throw badInput("the session id is empty: give one, or leave it out to check the whole workspace");
  const r = await b.health
    .doctor({
      ...(sessionId ? { sessionId } : {}),
      fix,
      // Baton's hooks in the agents' configuration, and whether each agent will run them.
      hookSetup: async () => {
        const { hooksStatus } = await import("../../hooks/install.js");
        return (await hooksStatus({ root: b.root }))
          .filter((s) => s.installed.length > 0 && s.willRun !== undefined)
          .map((s) => ({
            agent: s.agent,
            scope: s.scope,
            file: s.file,
            willRun: s.willRun === true,
            remaining: s.remaining ?? [],
            ...(s.route ? { route: s.route } : {}),
            ...(s.twice ? { twice: s.notes.find((n) => n.startsWith("Baton's hooks are installed twice")) ?? "installed twice" } : {}),
          }));
      },
    })
    .catch((err: unknown) => {
      // A word after --fix is read as a code: say where a session goes.
      if (Array.isArray(fix) && isBatonError(err, "bad_input"))
        throw badInput(`${err.message}; a session goes before the flag: \`baton doctor <session> --fix\``);
      throw err;
    });
  const store = b.store;
  ctx.out(
    { ...r, store },
    () => `${render(r)}
Store: ${store.kind} ${store.location}${store.project ? `, project ${store.project}` : ""}`,
  );
}

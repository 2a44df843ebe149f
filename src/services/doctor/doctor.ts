/**
 * `doctor`: look at the workspace (or one session) and report what is wrong, with the evidence
 * and the command that fixes each finding. A small runner over a list of checks (one file per
 * group under doctor/; what a check is: doctor/check.ts). Without `fix` it never writes. With
 * `fix` it applies only safe fixes — those the system would make on its own sooner or later —
 * every one (`fix: true`) or those of the finding codes named (`fix: ["lease_expired"]`), and
 * reports each.
 *
 * Output goes through core/doctor.ts `sanitizeReport`, and no check ever copies event data,
 * context, notes or marker excerpts into it: no prompt or answer text can leak.
 */
import type { DoctorCheckResult, DoctorFinding, DoctorRepair, DoctorReport } from "../../core/doctor.js";
import { sanitizeReport, summarize } from "../../core/doctor.js";
import { badInput } from "../../errors.js";
import type { LockInfo } from "../work/locks.js";
import type { Check, DoctorContext, DoctorDeps, DoctorOptions } from "./check.js";
import { blobs, files, markers } from "./files.js";
import { lessons } from "./lessons.js";
import { sessionView, target } from "./session.js";
import { integrity, snapshots, storage } from "./store.js";
import { leases, locks, runs } from "./work.js";
import { config, hooks, ledger, privacy, server } from "./workspace.js";

export type { DoctorDeps, DoctorOptions, HookSetup } from "./check.js";

/** Every check, in the order they run and report. */
export const CHECKS: readonly Check[] = [
  config,
  storage,
  integrity,
  snapshots,
  leases,
  locks,
  runs,
  blobs,
  files,
  markers,
  server,
  ledger,
  hooks,
  privacy,
  lessons,
  target,
];

/** The finding codes a safe fix exists for: what `fix: [codes]` (`--fix <code>`) accepts. */
export const FIXABLE_CODES: readonly string[] = CHECKS.flatMap((c) => c.fix?.codes ?? []);

/** The codes asked for, checked: each must name a safe fix (`bad_input` otherwise, before anything runs). */
function wantedCodes(fix: DoctorOptions["fix"]): ReadonlySet<string> | "all" | undefined {
  if (fix === true) return "all";
  if (fix === undefined || fix === false) return undefined;
  const unknown = fix.filter((c) => !FIXABLE_CODES.includes(c));
  if (unknown.length > 0 || fix.length === 0)
    throw badInput(
      `${unknown.length > 0 ? `no safe fix for ${unknown.map((c) => `"${c}"`).join(", ")}` : "name at least one finding code to fix"}; the codes doctor can fix: ${FIXABLE_CODES.join(", ")}`,
    );
  return new Set(fix);
}

export async function runDoctor(deps: DoctorDeps, opts: DoctorOptions = {}): Promise<DoctorReport> {
  const wanted = wantedCodes(opts.fix);
  const sid = opts.sessionId;
  const status = sid ? await deps.describe(sid) : undefined; // not_found for an unknown session, before anything else
  const sessions = sid ? [sid] : (await deps.journal.listSessions({ includeCompleted: true })).map((s) => s.id);
  const active = sid ? (status?.status === "active" ? [sid] : []) : (await deps.journal.listSessions()).map((s) => s.id);
  let lockList: Promise<LockInfo[]> | undefined;
  const ctx: DoctorContext = { deps, opts, sid, status, sessions, active, locks: () => (lockList ??= deps.locks.list()) };

  const findings: { finding: DoctorFinding; check: Check }[] = [];
  const checks: DoctorCheckResult[] = [];
  for (const check of CHECKS) {
    if (check.sessionOnly && !sid) continue;
    try {
      const found = await check.run(ctx);
      if ("skipped" in found) {
        checks.push({ check: check.name, status: "skipped", detail: found.skipped });
        continue;
      }
      for (const f of found) {
        const safe = check.fix?.codes.includes(f.code) ?? false;
        findings.push({ finding: { check: check.name, ...f, safe }, check });
      }
      checks.push({ check: check.name, status: found.length > 0 ? "findings" : "ok" });
    } catch (err) {
      const code = (err as { code?: string }).code ?? "internal";
      const finding: DoctorFinding = {
        check: check.name,
        code: "check_failed",
        severity: "error",
        message: `the ${check.name} check could not run (${code})`,
        evidence: { error: code },
        fix: "",
        safe: false,
      };
      findings.push({ finding, check });
      checks.push({ check: check.name, status: "findings" });
    }
  }
  const view = await sessionView(ctx);

  const repairs: DoctorRepair[] = [];
  if (wanted) {
    const done = new Map<string, DoctorRepair>();
    for (const { finding: f, check } of findings) {
      const fix = check.fix;
      if (!f.safe || !fix || (wanted !== "all" && !wanted.has(f.code))) continue;
      const key = fix.key(f);
      let r = done.get(key);
      if (!r) {
        const subject = fix.subject(f);
        try {
          r = { code: f.code, subject, ok: true, detail: await fix.apply(f, ctx) };
        } catch (err) {
          r = { code: f.code, subject, ok: false, detail: `failed (${(err as { code?: string }).code ?? "internal"})` };
        }
        done.set(key, r);
        repairs.push(r);
      }
      if (r.ok) f.repaired = true;
    }
  }

  const clean = findings.map((x) => x.finding);
  const summary = summarize(clean);
  const report: DoctorReport = {
    ok: summary.error === 0 && summary.warning === 0,
    at: deps.now().toISOString(),
    scope: sid ? "session" : "workspace",
    ...(view ? { session: view } : {}),
    checks,
    findings: clean,
    repairs,
    summary,
  };
  return sanitizeReport(report);
}

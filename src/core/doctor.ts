/**
 * `doctor`'s vocabulary: a finding (what is wrong, the evidence, the command that fixes it,
 * and whether `--fix` may apply it), the report, and the last pass every report goes through
 * so it never carries more than it should. Pure.
 *
 * What a report may contain: ids, codes, counts, phases, paths, process ids, hosts, times and
 * URLs cut to protocol, host and path. Never event data, context values, notes, decisions,
 * marker excerpts or anything else a prompt or an answer could be in.
 */
import { cutUrlsIn } from "./session/targets.js";
import type { JsonObject, Severity, TargetBinding } from "./types.js";

export type DoctorCheck =
  | "config"
  | "storage"
  | "integrity"
  | "snapshots"
  | "leases"
  | "locks"
  | "runs"
  | "blobs"
  | "files"
  | "markers"
  | "server"
  | "ledger"
  | "hooks"
  | "privacy"
  | "lessons"
  | "target";

export interface DoctorFinding {
  check: DoctorCheck;
  /** Stable code, e.g. `lock_stale`, `snapshot_mismatch`; each one is in docs/guide/troubleshooting.md. */
  code: string;
  severity: Severity;
  message: string;
  sessionId?: string;
  /** The facts behind it (ids, times, proofs), never content. */
  evidence: JsonObject;
  /** The command that fixes it; empty when there is nothing to run. */
  fix: string;
  /** `--fix` applies this repair: it only ever does what the system would do on its own. */
  safe: boolean;
  /** Set under `--fix` once the repair ran. */
  repaired?: boolean;
}

export interface DoctorRepair {
  code: string;
  /** What was repaired: a session, a lock name, a work item, a file. */
  subject: string;
  ok: boolean;
  detail: string;
}

export interface DoctorCheckResult {
  check: DoctorCheck;
  status: "ok" | "findings" | "skipped";
  detail?: string;
}

export interface DoctorSessionView {
  sessionId: string;
  flow: string;
  phase: string;
  status: "active" | "completed";
  deadline?: string;
  target?: TargetBinding;
  /** The latest runs: id, agent, status, times (never their notes). */
  runs: { runId: string; agent: string; status: string; started: string; ended?: string; pid?: number; host?: string }[];
  /** Locks this session's commands hold (its command lock, or held by one of its runs). */
  locks: { name: string; epoch: number; owner: string; pid?: number; host?: string; expiresAt: string; stale: boolean; proof?: string }[];
  pendingWork: number;
  /** The recommended next step: its code and command (the reason is left out: flows may template context into it). */
  nextAction: { action: string; command: string };
}

export interface DoctorReport {
  /** No error or warning is left (repaired ones do not count). */
  ok: boolean;
  at: string;
  scope: "workspace" | "session";
  session?: DoctorSessionView;
  checks: DoctorCheckResult[];
  findings: DoctorFinding[];
  repairs: DoctorRepair[];
  summary: { error: number; warning: number; info: number };
}

export function summarize(findings: readonly DoctorFinding[]): { error: number; warning: number; info: number } {
  const s = { error: 0, warning: 0, info: 0 };
  for (const f of findings) if (!f.repaired) s[f.severity]++;
  return s;
}

/** Every string in the report with its URLs cut to protocol, host and path. */
export function sanitizeReport<T>(value: T): T {
  return cut(value) as T;
}

function cut(v: unknown): unknown {
  if (typeof v === "string") return cutUrlsIn(v);
  if (Array.isArray(v)) return v.map(cut);
  if (v !== null && typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (x !== undefined) out[k] = cut(x);
    return out;
  }
  return v;
}

/**
 * Health: `baton doctor`'s findings (severity, what, the evidence, the command that fixes it),
 * each safe repair as its own button (that finding's code, in its session when it names one),
 * and all of them as one. Doctor repairs only what the system would do on its own (return
 * expired leases to the queue, rebuild a snapshot from the journal, ...); findings that need a
 * person keep their command to run. After a repair the findings are read again; a finding that
 * went away since the page read it is refused by the server (409) and the page says so.
 */
import { useCallback, useEffect, useState } from "preact/hooks";
import type { DoctorFinding, DoctorReport } from "../../core/doctor.js";
import { ApiError, get, post } from "./api.js";
import { plural } from "./parts.js";

const SEVERITY_CLASS = { error: "bad", warning: "warn", info: "info" } as const;

export function HealthView() {
  const [report, setReport] = useState<DoctorReport | undefined>();
  const [fixed, setFixed] = useState<DoctorReport["repairs"] | undefined>();
  const [stale, setStale] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();

  const load = useCallback(async () => {
    setBusy(true);
    try {
      setReport(await get<DoctorReport>("/v1/doctor"));
      setError(undefined);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  }, []);
  useEffect(() => {
    void load();
  }, [load]);

  /** All safe repairs, or only this finding's (its code, in its session when it names one). */
  const fix = async (only?: DoctorFinding) => {
    setBusy(true);
    setError(undefined);
    setStale(undefined);
    setFixed(undefined);
    try {
      const body = only ? { codes: [only.code], ...(only.sessionId ? { session: only.sessionId } : {}) } : {};
      const r = await post<DoctorReport>("/v1/doctor/fix", body);
      setFixed(r.repairs);
    } catch (err) {
      if (err instanceof ApiError && err.code === "conflict") setStale(err.message);
      else setError((err as Error).message);
    }
    try {
      setReport(await get<DoctorReport>("/v1/doctor"));
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  const open = report?.findings.filter((f) => !f.repaired) ?? [];
  const safe = open.filter((f) => f.safe);
  return (
    <section aria-labelledby="health-title">
      <h2 id="health-title">Health</h2>
      {error && (
        <div class="message error" role="alert">
          {error}
        </div>
      )}
      {stale && (
        <div class="message" role="status" data-stale="">
          {stale}
        </div>
      )}
      {fixed && (
        <div class="message" role="status">
          {fixed.length === 0 ? "Nothing needed fixing." : `Applied ${plural(fixed.length, "repair")}: `}
          <ul>
            {fixed.map((r) => (
              <li key={`${r.code}:${r.subject}`}>
                <code>{r.code}</code> {r.subject}: {r.ok ? "ok" : "FAILED"}, {r.detail}
              </li>
            ))}
          </ul>
        </div>
      )}
      <div class="toolbar">
        <button type="button" onClick={() => void load()} disabled={busy}>
          Check again
        </button>
        <button type="button" data-action="fix" onClick={() => void fix()} disabled={busy || safe.length === 0}>
          Apply the safe fixes ({safe.length})
        </button>
        {report && (
          <span class="muted" aria-live="polite">
            {report.ok ? "OK" : `${plural(report.summary.error, "error")}, ${plural(report.summary.warning, "warning")}`},{" "}
            {plural(report.summary.info, "note")} · checked {report.at.slice(11, 19)}
          </span>
        )}
      </div>
      {report && open.length === 0 && <p>No findings: every check passed.</p>}
      {open.length > 0 && (
        <table class="cards" aria-label="Doctor's findings">
          <thead>
            <tr>
              <th scope="col">Severity</th>
              <th scope="col">Finding</th>
              <th scope="col">Fix</th>
            </tr>
          </thead>
          <tbody>
            {open.map((f: DoctorFinding, i) => (
              <tr key={`${f.code}:${i}`} data-code={f.code}>
                <td class="inline">
                  <span class={`badge ${SEVERITY_CLASS[f.severity]}`}>{f.severity}</span>
                </td>
                <td>
                  <code>{f.code}</code>
                  {f.sessionId && <span class="muted"> · {f.sessionId}</span>}
                  <div>{f.message}</div>
                </td>
                <td data-col="fix" class={!f.fix && !f.safe ? "empty" : undefined}>
                  {f.fix && <FixCommand command={f.fix} />}
                  {f.safe && (
                    <div>
                      <button
                        type="button"
                        data-fix={f.code}
                        aria-label={`Apply this fix (${f.code}${f.sessionId ? ` in ${f.sessionId}` : ""})`}
                        onClick={() => void fix(f)}
                        disabled={busy}
                      >
                        Apply this fix
                      </button>
                    </div>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {report?.checks.some((c) => c.status === "skipped") && (
        <p class="muted">
          Skipped:{" "}
          {report.checks
            .filter((c) => c.status === "skipped")
            .map((c) => `${c.check} (${c.detail ?? ""})`)
            .join(", ")}
        </p>
      )}
    </section>
  );
}

/**
 * A finding's command, to run by hand, with a button that copies it (on a phone, selecting a
 * wrapped command is hard). Shown where the page may use the clipboard (a secure context:
 * 127.0.0.1 is one).
 */
function FixCommand({ command }: { command: string }) {
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    if (!copied) return;
    const t = setTimeout(() => setCopied(false), 2_000);
    return () => clearTimeout(t);
  }, [copied]);
  const canCopy = typeof navigator !== "undefined" && navigator.clipboard !== undefined;
  return (
    <div class="fix-command">
      <code>{command}</code>
      {canCopy && (
        <button
          type="button"
          aria-label={`${copied ? "Copied" : "Copy"} the command: ${command}`}
          onClick={() => void navigator.clipboard.writeText(command).then(() => setCopied(true))}
        >
          {copied ? "Copied" : "Copy"}
        </button>
      )}
    </div>
  );
}

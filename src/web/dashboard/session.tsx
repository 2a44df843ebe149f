/**
 * One session: its status (next action, blockers, decisions, runs), its pending work,
 * checkpoints and ledger, STATE.md as the agent reads it, and the journal's timeline
 * (timeline.tsx, which holds the session's stream).
 */
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import type { SessionVersions } from "../../services/session/overview.js";
import type { SessionStatus } from "../../services/session/status.js";
import { type Connection, get, mayPass, RETRY_MAX_MS, RETRY_MS } from "./api.js";
import { CheckpointsPanel } from "./checkpoints.js";
import { LedgerPanel } from "./ledger.js";
import { ago, NextActionCell, plural } from "./parts.js";
import { SpiralPanel } from "./spiral.js";
import { TimelineCard } from "./timeline.js";
import { WorkPanel } from "./work.js";

interface SessionRead {
  snapshot: { lastSeq: number; facets: import("../../core/types.js").Facets; phase: string; flow: string; title?: string };
  status: SessionStatus;
}

export function SessionView({ sessionId, onConnection }: { sessionId: string; onConnection: (c: Connection) => void }) {
  const [data, setData] = useState<SessionRead | undefined>();
  const [stateMd, setStateMd] = useState<string | undefined>();
  const [error, setError] = useState<string | undefined>();
  // Tags of the parts that change without the journal growing (ledger, checkpoints, work): the
  // session's stream sends them on open and on every change, and each panel reads again on its own.
  const [versions, setVersions] = useState<SessionVersions | undefined>();
  // A read that failed for a reason that may pass (`mayPass`: the server busy or restarting) is
  // tried again after RETRY_MS, doubling to RETRY_MAX_MS: a quiet session sends nothing that would.
  const retry = useRef<{ timer?: ReturnType<typeof setTimeout>; ms: number; live: boolean }>({ ms: RETRY_MS, live: true });
  const refresh = useCallback(async () => {
    const again = retry.current;
    if (again.timer) clearTimeout(again.timer);
    again.timer = undefined;
    try {
      const [r, md] = await Promise.all([
        get<SessionRead>(`/v1/sessions/${encodeURIComponent(sessionId)}`),
        get<{ markdown: string }>(`/v1/dashboard/sessions/${encodeURIComponent(sessionId)}/state`),
      ]);
      setData(r);
      setStateMd(md.markdown);
      setError(undefined);
      again.ms = RETRY_MS;
    } catch (err) {
      setError((err as Error).message);
      if (mayPass(err) && again.live && !again.timer) {
        again.timer = setTimeout(() => void refresh(), again.ms);
        again.ms = Math.min(again.ms * 2, RETRY_MAX_MS);
      }
    }
  }, [sessionId]);
  // The status, STATE.md and the panels are read again at most every 250 ms while events stream
  // in; the timeline (its own component, so an event re-renders only it) takes each at once.
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const soon = useCallback(() => {
    timer.current ??= setTimeout(() => {
      timer.current = undefined;
      void refresh();
    }, 250);
  }, [refresh]);
  useEffect(() => {
    const again = retry.current;
    again.live = true;
    void refresh();
    return () => {
      if (timer.current) clearTimeout(timer.current);
      timer.current = undefined;
      again.live = false;
      if (again.timer) clearTimeout(again.timer);
      again.timer = undefined;
    };
  }, [refresh]);

  const s = data?.status;
  const facets = data?.snapshot.facets;
  return (
    <section aria-labelledby="session-title">
      <h2 id="session-title">
        Session <code>{sessionId}</code> {data?.snapshot.title && <span class="muted">{data.snapshot.title}</span>}
      </h2>
      {error && (
        <div class="message error" role="alert">
          {error}
        </div>
      )}
      {s && facets && <SpiralPanel sessionId={sessionId} status={s} state={facets.spiral} onDone={() => void refresh()} />}
      {s && facets && (
        <div class="grid">
          <div class="card">
            <h2>Where it stands</h2>
            <p>
              {s.flow} · phase <code class="phase">{s.phase}</code> · <span class="badge info">{s.status}</span>{" "}
              {s.spiral?.paused && <span class="badge bad">paused: {s.spiral.pattern ?? "spiral"}</span>}
            </p>
            <NextActionCell next={s.nextAction} />
            <p class="muted">
              progress {s.progress.completed}/{s.progress.total} · {plural(data.snapshot.lastSeq, "event")} · updated {ago(s.updatedAt)}
            </p>
          </div>
          <WorkPanel sessionId={sessionId} version={versions?.work} />
          <div class="card">
            <h2>Blockers</h2>
            {facets.blockers.length === 0 ? (
              <span class="muted">none</span>
            ) : (
              <ul class="plain">
                {facets.blockers.map((b) => (
                  <li key={b.id}>
                    {/* A completed session's open blockers are history: they block nothing now. */}
                    {b.state === "active" && s.status === "completed" ? (
                      <span class="badge" title="The session completed with this blocker still open">
                        open at completion
                      </span>
                    ) : (
                      <span class={`badge ${b.state === "active" ? "bad" : ""}`}>{b.state}</span>
                    )}{" "}
                    {b.text}
                    {b.workaround && <div class="muted">workaround: {b.workaround}</div>}
                  </li>
                ))}
              </ul>
            )}
          </div>
          <div class="card">
            <h2>Decisions</h2>
            {facets.decisions.length === 0 ? (
              <span class="muted">none</span>
            ) : (
              <ul>
                {facets.decisions.map((d) => (
                  <li key={d.seq}>
                    {d.decision}
                    {d.reason && <span class="muted"> ({d.reason})</span>}
                  </li>
                ))}
              </ul>
            )}
          </div>
          <div class="card">
            <h2>Runs</h2>
            {facets.runs.length === 0 ? (
              <span class="muted">none</span>
            ) : (
              <ul class="plain">
                {facets.runs.map((r) => (
                  <li key={r.runId}>
                    <code>{r.runId}</code> {r.agent}
                    {r.host && <span class="muted"> on {r.host}</span>}{" "}
                    <span class={`badge ${r.status === "crashed" ? "bad" : ""}`}>{r.status}</span>{" "}
                    <span class="muted">since {r.started.slice(0, 19).replace("T", " ")}</span>
                  </li>
                ))}
              </ul>
            )}
          </div>
        </div>
      )}
      {data && <CheckpointsPanel sessionId={sessionId} version={versions?.checkpoints} />}
      {data && (
        <TimelineCard
          sessionId={sessionId}
          knownSeq={data.snapshot.lastSeq}
          onEvent={soon}
          onVersions={setVersions}
          onConnection={onConnection}
        />
      )}
      {data && <LedgerPanel sessionId={sessionId} version={versions?.ledger} />}
      <div class="card">
        <h2>STATE.md</h2>
        <pre class="state">{stateMd ?? "loading…"}</pre>
      </div>
    </section>
  );
}

/**
 * The sessions view: every session of the workspace, active first, with what a supervisor
 * needs at a glance (flow, phase, next action, blockers, pending work and leases, spiral
 * pause, the agents working in it now (its lanes) or else the last run's agent and host, last
 * activity). Live: the workspace stream says which
 * session grew and the list is read again (at most every RELOAD_MS), so nothing needs a reload.
 */
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import type { DashboardSession } from "../../server/dashboard-routes.js";
import { type Connection, follow, get, mayPass, RETRY_MAX_MS, RETRY_MS } from "./api.js";
import { ago, fitPlaceholder, NextActionCell, PendingCell, plural } from "./parts.js";

/** The list is read again at most this often while changes stream in. */
const RELOAD_MS = 300;
/** And all of it at least this often while changes come (see `load`). */
const FULL_EVERY_MS = 5_000;

type StatusFilter = "all" | "active" | "completed" | "paused" | "blocked" | "pending";

export function matches(s: DashboardSession, q: string, f: StatusFilter): boolean {
  if (f === "active" && s.status !== "active") return false;
  if (f === "completed" && s.status !== "completed") return false;
  if (f === "paused" && !s.spiral?.paused) return false;
  if (f === "blocked" && openBlockers(s).length === 0) return false;
  if (f === "pending" && s.pendingWork.length === 0) return false;
  if (!q) return true;
  const hay = [s.sessionId, s.title, s.flow, s.phase, s.nextAction.action, s.nextAction.reason, s.lastRun?.agent, s.lastRun?.host]
    .concat(s.activeBlockers.map((b) => b.text))
    .concat((s.lanes ?? []).flatMap((l) => [l.lane, l.agent, l.host ?? ""]))
    .filter(Boolean)
    .join(" ")
    .toLowerCase();
  return q
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean)
    .every((w) => hay.includes(w));
}

/**
 * The blockers that block: a completed session's blockers still open when it completed are
 * history (shown as such), not active, and it is not listed under "with active blockers".
 */
export function openBlockers(s: DashboardSession): DashboardSession["activeBlockers"] {
  return s.status === "completed" ? [] : s.activeBlockers;
}

const SEARCH_PLACEHOLDER = "Search id, title, phase, agent, blocker…";

/** The server's order: active first, then the most recent activity first. */
export function bySessionOrder(a: DashboardSession, b: DashboardSession): number {
  if (a.status !== b.status) return a.status === "active" ? -1 : 1;
  return a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : 0;
}

export function SessionsView({ onConnection }: { onConnection: (c: Connection) => void }) {
  const [sessions, setSessions] = useState<DashboardSession[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [q, setQ] = useState("");
  const [filter, setFilter] = useState<StatusFilter>("all");
  const loading = useRef<{ busy: boolean; again: boolean }>({ busy: false, again: false });

  useEffect(() => {
    // One read at a time; changes during a read cause exactly one more. A change naming its
    // session reads only the rows that changed (`?id=`); a change without one (a lease, a run's
    // heartbeat), a reconnect, or the first read reads the whole list.
    let rows: DashboardSession[] | undefined;
    const changed = new Set<string>();
    let everything = true;
    let lastFull = 0;
    // A read that failed for a reason that may pass (the server busy or restarting, a dropped
    // connection: `mayPass`) is tried again after RETRY_MS, doubling to RETRY_MAX_MS: otherwise
    // the list would wait for the next change, which a quiet workspace never sends.
    let retry: ReturnType<typeof setTimeout> | undefined;
    let retryMs = RETRY_MS;
    let closed = false;
    const load = async () => {
      if (loading.current.busy) {
        loading.current.again = true;
        return;
      }
      loading.current.busy = true;
      try {
        do {
          loading.current.again = false;
          const ids = [...changed];
          // The server drops a sessionless change that comes with a session's (it is nearly
          // always the same append), so a lease taken in the same moment as another session's
          // append would go unseen: the whole list is read again at least every FULL_EVERY_MS
          // while changes come.
          const full = everything || rows === undefined || Date.now() - lastFull >= FULL_EVERY_MS;
          if (full) lastFull = Date.now();
          changed.clear();
          everything = false;
          if (full) rows = (await get<{ sessions: DashboardSession[] }>("/v1/dashboard/sessions")).sessions;
          else if (ids.length > 0) {
            const query = ids.map((id) => `id=${encodeURIComponent(id)}`).join("&");
            const fresh = (await get<{ sessions: DashboardSession[] }>(`/v1/dashboard/sessions?${query}`)).sessions;
            const byId = new Map((rows ?? []).map((r) => [r.sessionId, r]));
            for (const r of fresh) byId.set(r.sessionId, r);
            rows = [...byId.values()].sort(bySessionOrder);
          }
          setSessions(rows);
          setError(undefined);
          retryMs = RETRY_MS;
          if (retry) clearTimeout(retry);
          retry = undefined;
        } while (loading.current.again);
      } catch (err) {
        everything = true; // read it all next time
        setError((err as Error).message);
        if (mayPass(err) && !closed) {
          if (retry) clearTimeout(retry);
          retry = setTimeout(() => {
            retry = undefined;
            void load();
          }, retryMs);
          retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
        }
      } finally {
        loading.current.busy = false;
      }
    };
    const onMessage = (_type: string, data: string) => {
      try {
        const m = JSON.parse(data) as { sessionId?: string | null };
        if (typeof m.sessionId === "string") changed.add(m.sessionId);
        else everything = true;
      } catch {
        everything = true;
      }
      soon();
    };
    const onOpen = () => {
      everything = true;
      void load();
    };
    // At most one read per RELOAD_MS: the first change after a quiet spell is read at once (an
    // append shows within the 100 ms goal), a burst (heartbeats, many agents) is read once per
    // RELOAD_MS instead of once per message (with 300 sessions, one read is ~130 KB).
    let lastRead = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const soon = () => {
      if (timer) return;
      const wait = lastRead + RELOAD_MS - Date.now();
      const run = () => {
        timer = undefined;
        lastRead = Date.now();
        void load();
      };
      if (wait <= 0) run();
      else timer = setTimeout(run, wait);
    };
    const stop = follow("/v1/dashboard/stream", { onOpen, onMessage, onState: onConnection });
    return () => {
      closed = true;
      if (timer) clearTimeout(timer);
      if (retry) clearTimeout(retry);
      stop();
    };
  }, [onConnection]);

  const shown = useMemo(() => sessions?.filter((s) => matches(s, q, filter)) ?? [], [sessions, q, filter]);

  return (
    <section aria-labelledby="sessions-title">
      <h2 id="sessions-title">Sessions</h2>
      {error && (
        <div class="message error" role="alert">
          {error}
        </div>
      )}
      <div class="toolbar">
        <input
          type="search"
          class="fit"
          style={fitPlaceholder(SEARCH_PLACEHOLDER)}
          placeholder={SEARCH_PLACEHOLDER}
          aria-label="Search sessions"
          value={q}
          onInput={(e) => setQ((e.target as HTMLInputElement).value)}
        />
        <label>
          Show{" "}
          <select value={filter} onChange={(e) => setFilter((e.target as HTMLSelectElement).value as StatusFilter)}>
            <option value="all">all</option>
            <option value="active">active</option>
            <option value="completed">completed</option>
            <option value="paused">paused by the spiral detector</option>
            <option value="blocked">with active blockers</option>
            <option value="pending">with pending work</option>
          </select>
        </label>
        <span class="muted" aria-live="polite">
          {sessions ? `${shown.length} of ${plural(sessions.length, "session")}` : "loading…"}
        </span>
      </div>
      <table class="cards" aria-describedby="sessions-title">
        <thead>
          <tr>
            <th scope="col">Session</th>
            <th scope="col">Flow · phase</th>
            <th scope="col">Next action</th>
            <th scope="col">Blockers</th>
            <th scope="col">Pending work</th>
            <th scope="col">Agents</th>
            <th scope="col">Last activity</th>
          </tr>
        </thead>
        <tbody>
          {shown.map((s) => (
            <tr key={s.sessionId} data-session={s.sessionId}>
              <td data-col="session">
                <a href={`#/session/${encodeURIComponent(s.sessionId)}`}>{s.sessionId}</a>
                {s.title && <div class="muted">{s.title}</div>}
                <div>
                  <span class={`badge ${s.status === "active" ? "info" : ""}`}>{s.status}</span>{" "}
                  {s.spiral?.paused && (
                    <span class="badge bad" title={s.spiral.summary ?? ""}>
                      paused: {s.spiral.pattern ?? "spiral"}
                      {s.spiral.lane && ` (${s.spiral.lane})`}
                    </span>
                  )}
                </div>
              </td>
              <td data-col="flow">
                {s.flow}
                <div>
                  <code class="phase">{s.phase}</code>
                </div>
              </td>
              <td data-col="next">
                <NextActionCell next={s.nextAction} />
              </td>
              <td data-col="blockers" data-label="Blockers" class={s.activeBlockers.length === 0 ? "empty" : undefined}>
                {s.activeBlockers.length === 0 ? (
                  <span class="muted">none</span>
                ) : (
                  <ul class="plain">
                    {s.activeBlockers.map((b) => (
                      <li key={b.id}>
                        {s.status === "completed" ? (
                          <span class="badge" title="The session completed with this blocker still open">
                            open at completion
                          </span>
                        ) : (
                          <span class="badge bad">blocker</span>
                        )}{" "}
                        {b.text}
                      </li>
                    ))}
                  </ul>
                )}
              </td>
              <td data-col="pending" data-label="Pending work" class={s.pendingWork.length === 0 ? "empty" : undefined}>
                <PendingCell work={s.pendingWork} />
              </td>
              <td data-col="run" data-label="Agents" class={(s.lanes?.length ?? 0) === 0 && !s.lastRun ? "empty" : undefined}>
                {s.lanes && s.lanes.length > 0 ? (
                  <LanesCell lanes={s.lanes} />
                ) : s.lastRun ? (
                  <>
                    {s.lastRun.agent}
                    {s.lastRun.host && <span class="muted"> on {s.lastRun.host}</span>}
                    <div>
                      <span class={`badge ${s.lastRun.status === "crashed" ? "bad" : s.lastRun.status === "running" ? "ok" : ""}`}>
                        {s.lastRun.status}
                      </span>
                    </div>
                  </>
                ) : (
                  <span class="muted">no run</span>
                )}
              </td>
              <td data-col="activity">
                <time dateTime={s.updatedAt} title={s.updatedAt}>
                  {ago(s.updatedAt)}
                </time>
                <div class="muted">{plural(s.events, "event")}</div>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {sessions && sessions.length === 0 && <p class="muted">No sessions yet.</p>}
    </section>
  );
}

type Lane = NonNullable<DashboardSession["lanes"]>[number];

/** The agents working in a session now: one line each, with the files they are writing this turn. */
function LanesCell({ lanes }: { lanes: Lane[] }) {
  return (
    <ul class="plain" aria-label="agents working now">
      {lanes.map((l) => (
        <li key={l.lane} data-lane={l.lane} title={`lane ${l.lane}`}>
          {l.agent}
          {l.host && <span class="muted"> on {l.host}</span>}{" "}
          <span class={`badge ${l.spiral ? "bad" : l.status === "working" ? "ok" : ""}`}>
            {l.spiral ? `paused: ${l.spiral.pattern ?? "spiral"}` : l.status === "working" ? "working" : "between turns"}
          </span>
          {l.claims.count > 0 && (
            <div class="muted" title={l.claims.files.join("\n")}>
              writing {l.claims.files.slice(-2).join(", ")}
              {l.claims.count > 2 && ` and ${l.claims.count - 2} more`}
            </div>
          )}
        </li>
      ))}
    </ul>
  );
}

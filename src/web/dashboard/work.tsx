/**
 * A session's work: open items (ready or leased, with the lease holder and expiry) and
 * dead-lettered items no event handled. A person can give someone's leased work back to the
 * queue (a nack: the holder's ack is then refused) and deliver dead-lettered work again with
 * fresh attempts, each behind a confirmation, with the browser session. The request names the lease
 * or item the page showed, so work that moved meanwhile (acked, released, delivered again,
 * retried, handled) is refused by the server, the page says so, and nothing changes.
 */
import { useCallback, useEffect, useState } from "preact/hooks";
import type { DeadItem, PendingWork } from "../../services/work/queue.js";
import { ApiError, get, post } from "./api.js";
import { ago, useNewest } from "./parts.js";

interface Work {
  pending: PendingWork[];
  dead: DeadItem[];
}

type Asking = { kind: "release"; item: PendingWork } | { kind: "retry"; item: DeadItem };

/** The refusals a stale page gets: the work is not as the page showed it. */
const STALE = new Set(["lease_lost", "conflict", "not_found"]);

export function WorkPanel({ sessionId, version }: { sessionId: string; version: string | undefined }) {
  const [work, setWork] = useState<Work | undefined>();
  const [asking, setAsking] = useState<Asking | undefined>();
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<{ kind: "info" | "error"; text: string } | undefined>();

  const newest = useNewest();
  const load = useCallback(async () => {
    try {
      const w = await newest(() => get<Work>(`/v1/sessions/${encodeURIComponent(sessionId)}/work`));
      if (w) setWork(w);
    } catch (err) {
      setMessage({ kind: "error", text: (err as Error).message });
    }
  }, [sessionId, newest]);
  // `version` changes whenever the session's work does (a lease taken, extended, acked, released,
  // expired and returned; an item dead-lettered or retried), journaled or not, and does not come
  // back to a tag it had (services/session/overview.ts `sessionVersions`, which says where it still can).
  useEffect(() => {
    void load();
  }, [load, version]);

  const act = async (a: Asking) => {
    setBusy(true);
    setMessage(undefined);
    try {
      if (a.kind === "release") {
        const lease = a.item.lease;
        if (!lease) return;
        const r = await post<{ state: "ready" | "dead" }>(`/v1/leases/${encodeURIComponent(lease.leaseId)}/release`, {
          reason: "released from the dashboard",
        });
        setMessage({
          kind: "info",
          text:
            r.state === "dead"
              ? `${a.item.kind} (seq ${a.item.seq}) was on its last attempt: it is dead-lettered now.`
              : `Released ${a.item.kind} (seq ${a.item.seq}) from ${lease.owner}: it is back in the queue.`,
        });
      } else {
        await post(`/v1/work/${encodeURIComponent(a.item.itemId)}/retry`, {});
        setMessage({ kind: "info", text: `${a.item.kind} (seq ${a.item.seq}) is back in the queue with fresh attempts.` });
      }
    } catch (err) {
      const stale = err instanceof ApiError && STALE.has(err.code);
      setMessage({
        kind: "error",
        text: stale
          ? `This work changed since the page showed it, so nothing was changed: ${(err as Error).message}`
          : (err as Error).message,
      });
    } finally {
      setAsking(undefined);
      setBusy(false);
      void load();
    }
  };

  return (
    <div class="card" data-panel="work">
      <h2>Pending work</h2>
      {message && (
        <div class={`message ${message.kind === "error" ? "error" : ""}`} role={message.kind === "error" ? "alert" : "status"}>
          {message.text}
        </div>
      )}
      {!work ? (
        <span class="muted">loading…</span>
      ) : work.pending.length + work.dead.length === 0 ? (
        <span class="muted">none</span>
      ) : (
        <ul class="plain">
          {work.pending.map((w) => (
            <li key={w.itemId} data-item={w.itemId}>
              <code>{w.kind}</code> <span class="muted">seq {w.seq}</span>{" "}
              <span class={`badge ${w.state === "leased" ? "warn" : "info"}`}>{w.state}</span>
              {w.lease && (
                <div class="muted">
                  held by {w.lease.owner}, {w.lease.expired ? "expired" : "expires"}{" "}
                  <time dateTime={w.lease.expiresAt}>{w.lease.expiresAt.slice(11, 19)}</time>, attempt {w.attempts}
                </div>
              )}
              {w.lease && (
                <div class="row-actions">
                  <button
                    type="button"
                    disabled={busy}
                    aria-label={`Release… (${w.kind}, seq ${w.seq}, held by ${w.lease.owner})`}
                    onClick={() => setAsking({ kind: "release", item: w })}
                  >
                    Release…
                  </button>
                </div>
              )}
            </li>
          ))}
          {work.dead.map((d) => (
            <li key={d.itemId} data-item={d.itemId}>
              <code>{d.kind}</code> <span class="muted">seq {d.seq}</span> <span class="badge bad">dead-lettered</span>
              <div class="muted">
                {ago(d.at)}: {d.why}
              </div>
              <div class="row-actions">
                <button
                  type="button"
                  disabled={busy}
                  aria-label={`Retry… (${d.kind}, seq ${d.seq})`}
                  onClick={() => setAsking({ kind: "retry", item: d })}
                >
                  Retry…
                </button>
              </div>
            </li>
          ))}
        </ul>
      )}
      {asking && (
        <fieldset class="message" aria-label={asking.kind === "release" ? "Confirm the release" : "Confirm the retry"}>
          <p>
            {asking.kind === "release"
              ? `Give ${asking.item.kind} (seq ${asking.item.seq}) back to the queue? ${asking.item.lease?.owner} loses its lease (its ack will be refused) and the next poll delivers it again; it counts as a failed attempt.`
              : `Deliver ${asking.item.kind} (seq ${asking.item.seq}) again? It goes back to the queue with fresh attempts, and the next poll delivers it.`}
          </p>
          <button type="button" disabled={busy} onClick={() => void act(asking)}>
            {asking.kind === "release" ? "Confirm release" : "Confirm retry"}
          </button>{" "}
          <button type="button" onClick={() => setAsking(undefined)}>
            Cancel
          </button>
        </fieldset>
      )}
    </div>
  );
}

/**
 * A spiral pause and the user's three answers: unpause, roll back to the proposed checkpoint
 * then unpause, or stay paused with a note the agent reads (a decision by the user, in its
 * session context and STATE.md). The page sends the pause it showed (`detectedAt`, the proposed
 * checkpoint); the server refuses if the pause changed meanwhile.
 */
import { useState } from "preact/hooks";
import type { SpiralState, TurnEntry } from "../../core/types.js";
import type { SessionStatus } from "../../services/session/status.js";
import { post } from "./api.js";

type Choice = "unpause" | "rollback_unpause" | "note";

/** The turns the detector named, else the latest few: what the agent kept doing. */
function repeated(state: SpiralState | undefined, seqs: readonly number[] | undefined): TurnEntry[] {
  const window = state?.window ?? [];
  const named = seqs ? window.filter((t) => seqs.includes(t.seq)) : [];
  return named.length > 0 ? named : window.slice(-5);
}

export function SpiralPanel({
  sessionId,
  status,
  state,
  onDone,
}: {
  sessionId: string;
  status: SessionStatus;
  state: SpiralState | undefined;
  onDone: () => void;
}) {
  const sp = status.spiral;
  const [note, setNote] = useState("");
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<{ kind: "info" | "error"; text: string } | undefined>();
  if (!sp?.paused) return message ? <output class="message">{message.text}</output> : null;

  const choose = async (action: Choice) => {
    setBusy(true);
    setMessage(undefined);
    try {
      const body: Record<string, unknown> = { action };
      if (sp.detectedAt) body.detectedAt = sp.detectedAt;
      if (note.trim()) body.note = note.trim();
      if (action === "rollback_unpause") body.checkpoint = sp.proposedCheckpoint;
      const r = await post<{ rollback?: { restored: number; removed: number } }>(
        `/v1/sessions/${encodeURIComponent(sessionId)}/spiral`,
        body,
      );
      setMessage({
        kind: "info",
        text:
          action === "note"
            ? "The session stays paused; the agent will read your note."
            : r.rollback
              ? `Rolled back (${r.rollback.restored} files restored, ${r.rollback.removed} removed) and unpaused.`
              : "Unpaused: the agent may continue.",
      });
      if (action === "note") setNote("");
    } catch (err) {
      setMessage({ kind: "error", text: (err as Error).message });
    } finally {
      setBusy(false);
      onDone();
    }
  };

  const turns = repeated(state, sp.turns);
  return (
    <section class="card spiral" aria-labelledby="spiral-title">
      <h2 id="spiral-title">
        <span class="badge bad">paused</span> The spiral detector paused this session
      </h2>
      {message && (
        <div class={`message ${message.kind === "error" ? "error" : ""}`} role={message.kind === "error" ? "alert" : "status"}>
          {message.text}
        </div>
      )}
      <p>
        <strong>{sp.pattern ?? "spiral"}</strong>: {sp.summary ?? "the agent repeated itself without progress"}
        {sp.detectedAt && <span class="muted"> (since {sp.detectedAt.slice(0, 19).replace("T", " ")})</span>}
      </p>
      {turns.length > 0 && (
        <table class="cards" aria-label="The repeated calls">
          <thead>
            <tr>
              <th scope="col">#</th>
              <th scope="col">Tool</th>
              <th scope="col">Status</th>
              <th scope="col">Files</th>
              <th scope="col">Signature · failure</th>
            </tr>
          </thead>
          <tbody>
            {turns.map((t) => (
              <tr key={t.seq}>
                <td class="inline">#{t.seq}</td>
                <td class="inline">{t.tool}</td>
                <td class="inline">
                  <span class={`badge ${t.status === "success" ? "ok" : "bad"}`}>{t.status}</span>
                </td>
                <td data-label="Files" class={t.files.length === 0 ? "empty" : undefined}>
                  {t.files.map((f) => f.path).join(", ") || <span class="muted">none</span>}
                </td>
                <td class="mono data" data-label="Signature · failure">
                  {[t.argsHash?.slice(0, 12), t.fingerprint].filter(Boolean).join(" · ")}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <p>
        Proposed rollback point:{" "}
        {sp.proposedCheckpoint ? <code>{sp.proposedCheckpoint}</code> : <span class="muted">none (no checkpoint before the spiral)</span>}
      </p>
      <label class="block">
        Note for the agent (optional when unpausing)
        <textarea rows={2} value={note} onInput={(e) => setNote((e.target as HTMLTextAreaElement).value)} />
      </label>
      <div class="toolbar">
        <button type="button" data-choice="unpause" disabled={busy} onClick={() => void choose("unpause")}>
          Unpause
        </button>
        <button
          type="button"
          data-choice="rollback_unpause"
          disabled={busy || !sp.proposedCheckpoint}
          onClick={() => void choose("rollback_unpause")}
        >
          Roll back, then unpause
        </button>
        <button type="button" data-choice="note" disabled={busy || !note.trim()} onClick={() => void choose("note")}>
          Stay paused with this note
        </button>
      </div>
    </section>
  );
}

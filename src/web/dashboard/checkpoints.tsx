/**
 * A session's checkpoints: the list (tool, time, files, pinned, pruned), what rolling back to
 * one would change (per file, unified or side by side: now → the checkpoint), the rollback itself
 * behind a confirmation, its undo (a rollback to the safety checkpoint it took, previewed and
 * confirmed the same way, with the preview's plan), and pin/unpin.
 * Every write goes through `post` (the browser session as a bearer header); a refusal is shown as the server words it and
 * the list is read again, so a stale page learns what changed.
 */
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import type { CheckpointInfo } from "../../core/time-travel/checkpoints.js";
import type { CheckpointPairDiff } from "../../services/time-travel/checkpoint-diff.js";
import type { RollbackChange } from "../../services/time-travel/rollback.js";
import { get, post } from "./api.js";
import { DiffView } from "./diff-view.js";
import { plural, useNewest } from "./parts.js";

interface Preview {
  /** A rollback the user chose, or the undo of the one just made (to its safety checkpoint). */
  kind: "rollback" | "undo";
  target: CheckpointInfo;
  /** What the previewed rollback does, sent back with the confirmation (a changed plan is refused). */
  plan: string;
  changes: RollbackChange[];
  warnings: string[];
}

interface Done {
  kind: "rollback" | "undo";
  target: CheckpointInfo;
  safety?: string;
  restored: number;
  removed: number;
}

const ACTION_TEXT: Record<string, string> = {
  restore: "restored",
  create: "recreated",
  remove: "removed",
  unchanged: "unchanged",
  kept: "kept",
};

/** "1 file differs", "3 files differ". */
function differ(n: number): string {
  return `${plural(n, "file")} ${n === 1 ? "differs" : "differ"}`;
}

function describe(c: CheckpointInfo): string {
  return `#${c.seq}${c.toolName ? ` before ${c.toolName}` : ""}${c.label ? ` (${c.label})` : ""}`;
}

export function CheckpointsPanel({ sessionId, version }: { sessionId: string; version: string | undefined }) {
  const [list, setList] = useState<CheckpointInfo[] | undefined>();
  const [preview, setPreview] = useState<Preview | undefined>();
  const [mode, setMode] = useState<"unified" | "split">("unified");
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<{ kind: "info" | "error"; text: string } | undefined>();
  const [done, setDone] = useState<Done | undefined>();
  const [pick, setPick] = useState<{ from: string; to: string }>({ from: "", to: "" });
  const [pair, setPair] = useState<CheckpointPairDiff | undefined>();
  const base = `/v1/sessions/${encodeURIComponent(sessionId)}`;

  const newest = useNewest();
  const load = useCallback(async () => {
    try {
      const r = await newest(() => get<{ checkpoints: CheckpointInfo[] }>(`${base}/checkpoints`));
      if (r) setList(r.checkpoints);
    } catch (err) {
      setMessage({ kind: "error", text: (err as Error).message });
    }
  }, [base, newest]);
  // `version` (a tag of the list, from the session's stream) changes when a checkpoint is taken, pinned,
  // unpinned or pruned, journaled or not.
  useEffect(() => {
    void load();
  }, [load, version]);

  const act = async (what: () => Promise<void>) => {
    setBusy(true);
    setMessage(undefined);
    try {
      await what();
    } catch (err) {
      setMessage({ kind: "error", text: (err as Error).message });
    } finally {
      setBusy(false);
      void load();
    }
  };

  // A preview opened is scrolled to (it opens below the list: on a phone, off screen).
  const previewBox = useRef<HTMLElement>(null);
  const [opened, setOpened] = useState(0);
  useEffect(() => {
    if (opened > 0) previewBox.current?.scrollIntoView({ block: "start" });
  }, [opened]);

  /** What rolling back to `id` would change; with `confirm` (a row's "Roll back…"), its confirmation at once. */
  const showPreview = (id: string, kind: Preview["kind"] = "rollback", confirm = false) =>
    act(async () => {
      setConfirming(false);
      setPair(undefined);
      const p = await get<Omit<Preview, "kind">>(`${base}/checkpoints/${encodeURIComponent(id)}/preview`);
      // The undo's offer stays until the undo is done or another preview replaces it.
      if (kind === "rollback") setDone(undefined);
      setPreview({ ...p, kind });
      // Nothing to restore: the preview says so, and there is nothing to confirm.
      setConfirming(confirm && p.changes.some((c) => c.action !== "unchanged"));
      setOpened((n) => n + 1);
    });

  const rollback = (p: Preview) =>
    act(async () => {
      setConfirming(false);
      const r = await post<{ target: CheckpointInfo; safety?: string; restored: number; removed: number }>(`${base}/rollback`, {
        to: p.target.id,
        actor: "user",
        plan: p.plan,
      });
      setPreview(undefined);
      const d: Done = { kind: p.kind, target: r.target, restored: r.restored, removed: r.removed };
      if (r.safety !== undefined) d.safety = r.safety;
      setDone(d);
    });

  const compare = () =>
    act(async () => {
      setPreview(undefined);
      setPair(await get<CheckpointPairDiff>(`${base}/checkpoints/${encodeURIComponent(pick.from)}/diff?to=${encodeURIComponent(pick.to)}`));
    });

  const pin = (c: CheckpointInfo) =>
    act(async () => {
      await post(`/v1/checkpoints/${encodeURIComponent(c.id)}/pin`, { pinned: !c.pinned });
      setMessage({ kind: "info", text: `Checkpoint ${describe(c)} ${c.pinned ? "unpinned" : "pinned"}.` });
    });

  const changing = preview?.changes.filter((c) => c.action !== "unchanged") ?? [];
  return (
    <div class="card">
      <h2>Checkpoints</h2>
      {message && (
        <div class={`message ${message.kind === "error" ? "error" : ""}`} role={message.kind === "error" ? "alert" : "status"}>
          {message.text}
        </div>
      )}
      {done && (
        <div class="message" role="status">
          {done.kind === "undo" ? "Undid the rollback" : `Rolled back to ${describe(done.target)}`}: {plural(done.restored, "file")}{" "}
          restored, {done.removed} removed.{" "}
          {done.kind === "rollback" && done.safety && preview?.kind !== "undo" && (
            <button type="button" disabled={busy} onClick={() => void showPreview(done.safety as string, "undo")}>
              Undo the rollback…
            </button>
          )}
        </div>
      )}
      {!list ? (
        <p class="muted">loading…</p>
      ) : list.length === 0 ? (
        <p class="muted">No checkpoints yet.</p>
      ) : (
        <table class="cards" aria-label="Checkpoints">
          <thead>
            <tr>
              <th scope="col">#</th>
              <th scope="col">Taken</th>
              <th scope="col">Kind · tool</th>
              <th scope="col">Files</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {list.map((c) => (
              <tr key={c.id} data-checkpoint={c.id}>
                <td class="inline">
                  #{c.seq} {c.pinned && <span class="badge info">pinned</span>}
                  {c.prunedAt && <span class="badge">pruned</span>}
                </td>
                <td class="inline">
                  <time dateTime={c.createdAt}>{c.createdAt.slice(0, 19).replace("T", " ")}</time>
                </td>
                <td class="inline">
                  {c.kind}
                  {c.toolName && <span class="muted"> · {c.toolName}</span>}
                  {c.label && <div class="muted">{c.label}</div>}
                </td>
                <td class="inline" data-label="Files">
                  {c.fileCount}
                </td>
                <td>
                  <button type="button" disabled={busy || c.prunedAt !== undefined} onClick={() => void showPreview(c.id)}>
                    Compare with now
                  </button>{" "}
                  <button
                    type="button"
                    disabled={busy || c.prunedAt !== undefined}
                    aria-label={`Roll back… (#${c.seq}${c.toolName ? ` before ${c.toolName}` : ""})`}
                    onClick={() => void showPreview(c.id, "rollback", true)}
                  >
                    Roll back…
                  </button>{" "}
                  <button type="button" disabled={busy || c.prunedAt !== undefined} onClick={() => void pin(c)}>
                    {c.pinned ? "Unpin" : "Pin"}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {list && list.filter((c) => !c.prunedAt).length >= 2 && (
        <fieldset class="toolbar">
          <legend>Compare two checkpoints</legend>
          <label>
            from{" "}
            <select
              aria-label="Compare from checkpoint"
              value={pick.from}
              onChange={(e) => setPick({ ...pick, from: (e.target as HTMLSelectElement).value })}
            >
              <option value="">choose…</option>
              {list
                .filter((c) => !c.prunedAt)
                .map((c) => (
                  <option key={c.id} value={c.id}>
                    {describe(c)}
                  </option>
                ))}
            </select>
          </label>
          <label>
            to{" "}
            <select
              aria-label="Compare to checkpoint"
              value={pick.to}
              onChange={(e) => setPick({ ...pick, to: (e.target as HTMLSelectElement).value })}
            >
              <option value="">choose…</option>
              {list
                .filter((c) => !c.prunedAt)
                .map((c) => (
                  <option key={c.id} value={c.id}>
                    {describe(c)}
                  </option>
                ))}
            </select>
          </label>
          <button type="button" disabled={busy || !pick.from || !pick.to || pick.from === pick.to} onClick={() => void compare()}>
            Compare
          </button>
        </fieldset>
      )}
      {pair && (
        <section aria-label="Checkpoint comparison" class="preview">
          <h3>
            Checkpoint {describe(pair.from)} → {describe(pair.to)}: {differ(pair.files.filter((f) => f.diff !== undefined).length)}
          </h3>
          <fieldset class="toolbar">
            <legend class="sr-only">Diff layout</legend>
            <label>
              <input type="radio" name="pair-mode" checked={mode === "unified"} onChange={() => setMode("unified")} /> unified
            </label>
            <label>
              <input type="radio" name="pair-mode" checked={mode === "split"} onChange={() => setMode("split")} /> side by side
            </label>
          </fieldset>
          {pair.files
            .filter((f) => f.state !== "unchanged")
            .map((f) => (
              <details key={f.path} open={f.diff !== undefined}>
                <summary>
                  <code>{f.path}</code> <span class="badge">{f.state.replace("_", " ")}</span>
                  {f.note && <span class="muted"> {f.note}</span>}
                </summary>
                {f.diff !== undefined && <DiffView diff={f.diff} mode={mode} label={f.path} />}
              </details>
            ))}
          <button type="button" onClick={() => setPair(undefined)}>
            Close
          </button>
        </section>
      )}
      {preview && (
        <section ref={previewBox} aria-label={preview.kind === "undo" ? "Undo preview" : "Rollback preview"} class="preview">
          <h3>
            {preview.kind === "undo"
              ? `Undo: now → the files before the rollback (safety checkpoint ${describe(preview.target)}): ${plural(changing.length, "file")} would change`
              : `Now → checkpoint ${describe(preview.target)}: ${plural(changing.length, "file")} would change`}
          </h3>
          <fieldset class="toolbar">
            <legend class="sr-only">Diff layout</legend>
            <label>
              <input type="radio" name="diff-mode" checked={mode === "unified"} onChange={() => setMode("unified")} /> unified
            </label>
            <label>
              <input type="radio" name="diff-mode" checked={mode === "split"} onChange={() => setMode("split")} /> side by side
            </label>
          </fieldset>
          {preview.warnings.map((w) => (
            <p key={w} class="message">
              {w}
            </p>
          ))}
          {changing.map((c) => (
            <details key={c.path} open>
              <summary>
                <code>{c.path}</code> <span class="badge">{ACTION_TEXT[c.action] ?? c.action}</span>
                {c.reason && <span class="muted"> {c.reason}</span>}
              </summary>
              {c.diff !== undefined && <DiffView diff={c.diff} mode={mode} label={c.path} />}
            </details>
          ))}
          {!confirming ? (
            <p>
              <button type="button" disabled={busy || changing.length === 0} onClick={() => setConfirming(true)}>
                {preview.kind === "undo" ? "Undo the rollback…" : `Roll back to ${describe(preview.target)}…`}
              </button>{" "}
              <button type="button" onClick={() => setPreview(undefined)}>
                Close
              </button>
            </p>
          ) : (
            <fieldset class="message" aria-label={preview.kind === "undo" ? "Confirm the undo" : "Confirm the rollback"}>
              <p>
                {preview.kind === "undo"
                  ? `Put back ${changing.length === 1 ? "the file as it was" : `the ${changing.length} files as they were`} before the rollback? A safety checkpoint of the current files is taken first.`
                  : `Restore ${plural(changing.length, "file")} to checkpoint ${describe(preview.target)}? A safety checkpoint of the current files is taken first, so this can be undone.`}{" "}
                If a file changes after this preview, nothing is done and the page says so: preview again.
              </p>
              <button type="button" disabled={busy} onClick={() => void rollback(preview)}>
                {preview.kind === "undo" ? "Confirm undo" : "Confirm rollback"}
              </button>{" "}
              <button type="button" onClick={() => setConfirming(false)}>
                Cancel
              </button>
            </fieldset>
          )}
        </section>
      )}
    </div>
  );
}

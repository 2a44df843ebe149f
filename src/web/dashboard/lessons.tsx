/**
 * Lessons: LESSONS.md's lessons, searchable, each editable, pinnable and deletable. Every change
 * names the version of the lesson the page showed; if the file changed under it (a hand edit,
 * another page) the server refuses, the page says so, keeps what the user typed, and reads the
 * file again.
 */
import { useCallback, useEffect, useMemo, useState } from "preact/hooks";
import type { ListedLesson } from "../../services/lessons/lessons.js";
import { get, post } from "./api.js";
import { fitPlaceholder, plural } from "./parts.js";

const SEARCH_PLACEHOLDER = "Search text, tools, paths, session…";

type Row = ListedLesson & { version: string | null };

function matches(l: Row, q: string): boolean {
  if (!q) return true;
  const hay = [l.id, l.text, l.scope, l.sessionId, ...l.tools, ...l.paths, ...l.fingerprints].filter(Boolean).join(" ").toLowerCase();
  return q
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean)
    .every((w) => hay.includes(w));
}

export function LessonsView() {
  const [lessons, setLessons] = useState<Row[] | undefined>();
  const [file, setFile] = useState("");
  const [q, setQ] = useState("");
  const [editing, setEditing] = useState<{ id: string; text: string } | undefined>();
  const [deleting, setDeleting] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<{ kind: "info" | "error"; text: string } | undefined>();

  const load = useCallback(async () => {
    try {
      const r = await get<{ file: string; lessons: Row[] }>("/v1/lessons?all=1");
      setLessons(r.lessons);
      setFile(r.file);
    } catch (err) {
      setMessage({ kind: "error", text: (err as Error).message });
    }
  }, []);
  useEffect(() => {
    void load();
  }, [load]);

  const act = async (what: () => Promise<string>, after?: () => void) => {
    setBusy(true);
    setMessage(undefined);
    try {
      setMessage({ kind: "info", text: await what() });
      after?.();
    } catch (err) {
      setMessage({ kind: "error", text: (err as Error).message });
    } finally {
      setBusy(false);
      void load();
    }
  };

  const shown = useMemo(() => lessons?.filter((l) => matches(l, q)) ?? [], [lessons, q]);
  return (
    <section aria-labelledby="lessons-title">
      <h2 id="lessons-title">Lessons</h2>
      <p class="muted">
        From <code>{file || "LESSONS.md"}</code>, the file the agent's lessons live in: edits here rewrite the lesson's block there.
      </p>
      {message && (
        <div class={`message ${message.kind === "error" ? "error" : ""}`} role={message.kind === "error" ? "alert" : "status"}>
          {message.text}
        </div>
      )}
      <div class="toolbar">
        <input
          type="search"
          aria-label="Search lessons"
          class="fit"
          style={fitPlaceholder(SEARCH_PLACEHOLDER)}
          placeholder={SEARCH_PLACEHOLDER}
          value={q}
          onInput={(e) => setQ((e.target as HTMLInputElement).value)}
        />
        <button type="button" onClick={() => void load()}>
          Reload
        </button>
        <span class="muted" aria-live="polite">
          {lessons ? `${shown.length} of ${plural(lessons.length, "lesson")}` : "loading…"}
        </span>
      </div>
      {shown.map((l) => (
        <article key={l.id} class="card" data-lesson={l.id} aria-label={`Lesson ${l.id}`}>
          <h3>
            <code>{l.id}</code> <span class="badge">{l.scope === "session" ? "session" : "workspace"}</span>{" "}
            {l.scope === "session" && l.sessionId && <code class="muted">{l.sessionId}</code>}{" "}
            {l.pinned && <span class="badge info">pinned</span>} {l.expired && <span class="badge warn">expired</span>}
          </h3>
          {editing?.id === l.id ? (
            <label class="block">
              Lesson text
              <textarea
                rows={3}
                value={editing.text}
                onInput={(e) => setEditing({ id: l.id, text: (e.target as HTMLTextAreaElement).value })}
              />
            </label>
          ) : (
            <p class="lesson-text">{l.text}</p>
          )}
          <p class="muted">
            {[
              l.tools.length ? `tools: ${l.tools.join(", ")}` : "",
              l.paths.length ? `paths: ${l.paths.join(", ")}` : "",
              l.fingerprints.length ? `failures: ${l.fingerprints.join(", ")}` : "",
              l.created ? `created ${l.created.slice(0, 10)}` : "",
            ]
              .filter(Boolean)
              .join(" · ")}
          </p>
          <div class="toolbar">
            {editing?.id === l.id ? (
              <>
                <button
                  type="button"
                  disabled={busy || l.version === null}
                  onClick={() =>
                    void act(
                      async () => {
                        await post(`/v1/lessons/${encodeURIComponent(l.id)}`, { version: l.version, text: editing.text });
                        return `Saved lesson ${l.id}.`;
                      },
                      () => setEditing(undefined),
                    )
                  }
                >
                  Save
                </button>
                <button type="button" onClick={() => setEditing(undefined)}>
                  Cancel
                </button>
              </>
            ) : (
              <button type="button" disabled={busy || l.version === null} onClick={() => setEditing({ id: l.id, text: l.text })}>
                Edit
              </button>
            )}
            <button
              type="button"
              disabled={busy || l.version === null}
              onClick={() =>
                void act(async () => {
                  await post(`/v1/lessons/${encodeURIComponent(l.id)}`, { version: l.version, pinned: !l.pinned });
                  return `${l.pinned ? "Unpinned" : "Pinned"} lesson ${l.id}.`;
                })
              }
            >
              {l.pinned ? "Unpin" : "Pin"}
            </button>
            {deleting === l.id ? (
              <>
                <button
                  type="button"
                  disabled={busy}
                  onClick={() =>
                    void act(
                      async () => {
                        await post(`/v1/lessons/${encodeURIComponent(l.id)}/delete`, { version: l.version });
                        return `Deleted lesson ${l.id} from LESSONS.md.`;
                      },
                      () => setDeleting(undefined),
                    )
                  }
                >
                  Confirm delete
                </button>
                <button type="button" onClick={() => setDeleting(undefined)}>
                  Keep it
                </button>
              </>
            ) : (
              <button type="button" disabled={busy || l.version === null} onClick={() => setDeleting(l.id)}>
                Delete…
              </button>
            )}
          </div>
        </article>
      ))}
    </section>
  );
}

/**
 * A session's journal as a timeline. Virtualised: seqs are contiguous, so row i is seq i+1 and
 * only the rows in view are in the DOM; their events are fetched in pages of PAGE as they
 * scroll into view, so a 100k-event session costs what one screen costs. A type or actor
 * filter switches to a list read from the server's filtered route, a slice at a time ("load
 * more"). The card owns the session view's stream (journal events and `versions`).
 */
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import type { JournalEvent } from "../../core/types.js";
import type { SessionVersions } from "../../services/session/overview.js";
import { type Connection, follow, get } from "./api.js";
import { fitPlaceholder, plural } from "./parts.js";

const TYPE_PLACEHOLDER = "event type, e.g. decision:added";
const ACTOR_PLACEHOLDER = "actor, e.g. agent";

const ROW = 28;
const PAGE = 200;
const OVERSCAN = 10;

/**
 * The journal's timeline with its filters and the expanded event. It owns the session's stream:
 * each event goes into the page cache and the count here, and `onEvent` tells the view to
 * re-read the rest (throttled there); the stream's `versions` go to `onVersions`.
 */
export function TimelineCard({
  sessionId,
  knownSeq,
  onEvent,
  onVersions,
  onConnection,
}: {
  sessionId: string;
  knownSeq: number;
  onEvent: () => void;
  onVersions: (v: SessionVersions) => void;
  onConnection: (c: Connection) => void;
}) {
  const [streamSeq, setStreamSeq] = useState(0);
  const lastSeq = Math.max(knownSeq, streamSeq);
  const [expanded, setExpanded] = useState<JournalEvent | undefined>();
  // What is typed (kept on every keystroke, so a re-render never wipes it) and, a moment after
  // typing stops, the filter applied.
  const [typeDraft, setTypeDraft] = useState("");
  const [actorDraft, setActorDraft] = useState("");
  const [typeFilter, setTypeFilter] = useState("");
  const [actorFilter, setActorFilter] = useState("");
  useEffect(() => {
    const t = setTimeout(() => {
      setTypeFilter(typeDraft.trim());
      setActorFilter(actorDraft.trim());
    }, 250);
    return () => clearTimeout(t);
  }, [typeDraft, actorDraft]);
  const pages = useRef(new Map<number, JournalEvent[]>());
  const [, bump] = useState(0);
  // The stream starts after the seq the view first read: only new events come.
  const from = useRef(knownSeq);
  useEffect(
    () =>
      follow(
        `/v1/dashboard/sessions/${encodeURIComponent(sessionId)}/stream?after=${from.current}`,
        {
          onOpen: onEvent,
          onState: onConnection,
          onMessage: (type, text) => {
            if (type === "versions") {
              onVersions(JSON.parse(text) as SessionVersions);
              return;
            }
            const e = JSON.parse(text) as JournalEvent;
            const p = Math.floor((e.seq - 1) / PAGE);
            const page = pages.current.get(p);
            if (page && !page.some((x) => x.seq === e.seq)) page.push(e);
            // The first event of a new page starts it: nothing earlier belongs there.
            else if (!page && e.seq === p * PAGE + 1) pages.current.set(p, [e]);
            setStreamSeq((n) => Math.max(n, e.seq));
            bump((n) => n + 1);
            onEvent();
          },
        },
        ["message", "versions"],
      ),
    [sessionId, onEvent, onVersions, onConnection],
  );
  const filtered = typeFilter !== "" || actorFilter !== "";
  return (
    <div class="card">
      <h2>Timeline</h2>
      <div class="toolbar">
        <input
          type="text"
          aria-label="Filter by event type"
          class="fit"
          style={fitPlaceholder(TYPE_PLACEHOLDER)}
          placeholder={TYPE_PLACEHOLDER}
          value={typeDraft}
          onInput={(e) => setTypeDraft((e.target as HTMLInputElement).value)}
        />
        <input
          type="text"
          aria-label="Filter by actor"
          class="fit"
          style={fitPlaceholder(ACTOR_PLACEHOLDER)}
          placeholder={ACTOR_PLACEHOLDER}
          value={actorDraft}
          onInput={(e) => setActorDraft((e.target as HTMLInputElement).value)}
        />
        <span class="muted">{plural(lastSeq, "event")}</span>
      </div>
      {filtered ? (
        <FilteredList sessionId={sessionId} type={typeFilter} actor={actorFilter} onExpand={setExpanded} />
      ) : (
        <Timeline sessionId={sessionId} total={lastSeq} pages={pages.current} onExpand={setExpanded} />
      )}
      {expanded && (
        <div class="card" aria-live="polite">
          <h2>
            Event #{expanded.seq} <code>{expanded.type}</code>{" "}
            <button type="button" onClick={() => setExpanded(undefined)}>
              Close
            </button>
          </h2>
          <pre class="event" data-testid="event-detail">
            {JSON.stringify(expanded, null, 2)}
          </pre>
        </div>
      )}
    </div>
  );
}

function summary(e: JournalEvent): string {
  const t = JSON.stringify(e.data ?? {});
  return t.length > 160 ? `${t.slice(0, 157)}…` : t;
}

function Row({ e, top, onExpand }: { e: JournalEvent; top?: number; onExpand: (e: JournalEvent) => void }) {
  return (
    <li class="row" style={top === undefined ? { position: "static", height: `${ROW}px` } : { top: `${top}px`, height: `${ROW}px` }}>
      <span class="seq">#{e.seq}</span>
      <span class="type">{e.type}</span>
      <span class="actor">{e.actor}</span>
      <span class="summary">{summary(e)}</span>
      <button type="button" class="expand" aria-label={`Show event ${e.seq}`} onClick={() => onExpand(e)}>
        Show
      </button>
    </li>
  );
}

function Timeline({
  sessionId,
  total,
  pages,
  onExpand,
}: {
  sessionId: string;
  total: number;
  pages: Map<number, JournalEvent[]>;
  onExpand: (e: JournalEvent) => void;
}) {
  const box = useRef<HTMLElement>(null);
  const [view, setView] = useState({ top: 0, height: 600 });
  const [, bump] = useState(0);
  const inFlight = useRef(new Set<number>());
  // Scrolled to the end, the timeline follows new events like a log tail; scrolled up, it stays.
  const atEnd = useRef(false);
  const onScroll = () => {
    const el = box.current;
    if (!el) return;
    // Only once there are rows: an empty timeline is not "at the end" (it opens at the start).
    atEnd.current = total > 0 && el.scrollTop + el.clientHeight >= el.scrollHeight - ROW;
    setView({ top: el.scrollTop, height: el.clientHeight });
  };
  useEffect(onScroll, []);
  // A new total is exactly when to follow.
  useEffect(() => {
    const el = box.current;
    if (el && atEnd.current && total > 0) {
      el.scrollTop = el.scrollHeight;
      setView({ top: el.scrollTop, height: el.clientHeight });
    }
  }, [total]);
  const first = Math.max(0, Math.floor(view.top / ROW) - OVERSCAN);
  const last = Math.min(total, Math.ceil((view.top + view.height) / ROW) + OVERSCAN);
  useEffect(() => {
    for (let p = Math.floor(first / PAGE); p <= Math.floor(Math.max(last - 1, 0) / PAGE); p++) {
      const have = pages.get(p);
      const full = have && (have.length >= PAGE || p === Math.floor((total - 1) / PAGE));
      if (full || inFlight.current.has(p)) continue;
      inFlight.current.add(p);
      get<{ events: JournalEvent[] }>(`/v1/sessions/${encodeURIComponent(sessionId)}/events?after=${p * PAGE}&limit=${PAGE}`)
        .then((r) => {
          const merged = new Map((pages.get(p) ?? []).map((e) => [e.seq, e]));
          for (const e of r.events) merged.set(e.seq, e);
          pages.set(
            p,
            [...merged.values()].sort((a, b) => a.seq - b.seq),
          );
          bump((n) => n + 1);
        })
        .catch(() => undefined)
        .finally(() => inFlight.current.delete(p));
    }
  });
  const rows = [];
  for (let i = first; i < last; i++) {
    const seq = i + 1;
    const e = pages.get(Math.floor(i / PAGE))?.find((x) => x.seq === seq);
    if (e) rows.push(<Row key={seq} e={e} top={i * ROW} onExpand={onExpand} />);
    else
      rows.push(
        <li key={seq} class="row loading" style={{ top: `${i * ROW}px`, height: `${ROW}px` }}>
          <span class="seq">#{seq}</span>
          <span class="summary">loading…</span>
        </li>,
      );
  }
  return (
    <section
      class="timeline"
      ref={box}
      onScroll={onScroll}
      // biome-ignore lint/a11y/noNoninteractiveTabindex: the scroll box must take keyboard focus to scroll with the arrow keys
      tabIndex={0}
      aria-label={`Journal timeline, ${total} events`}
      style={{ height: `min(60vh, ${total * ROW + 2}px)` }}
    >
      <ul style={{ height: `${total * ROW}px` }}>{rows}</ul>
    </section>
  );
}

function FilteredList({
  sessionId,
  type,
  actor,
  onExpand,
}: {
  sessionId: string;
  type: string;
  actor: string;
  onExpand: (e: JournalEvent) => void;
}) {
  const [events, setEvents] = useState<JournalEvent[]>([]);
  const [cursor, setCursor] = useState<{ after: number; done: boolean }>({ after: 0, done: false });
  const [busy, setBusy] = useState(false);
  // Answers to an older filter are dropped: the newest filter's answer wins whatever the order.
  const generation = useRef(0);
  const load = useCallback(
    async (after: number, reset: boolean) => {
      const mine = reset ? ++generation.current : generation.current;
      setBusy(true);
      try {
        const q = new URLSearchParams({ after: String(after), limit: "200" });
        if (type) q.set("type", type);
        if (actor) q.set("actor", actor);
        const r = await get<{ events: JournalEvent[]; scannedTo: number; done: boolean }>(
          `/v1/dashboard/sessions/${encodeURIComponent(sessionId)}/events?${q}`,
        );
        if (mine !== generation.current) return;
        setEvents((old) => (reset ? r.events : old.concat(r.events)));
        setCursor({ after: r.scannedTo, done: r.done });
      } finally {
        setBusy(false);
      }
    },
    [sessionId, type, actor],
  );
  useEffect(() => {
    void load(0, true);
  }, [load]);
  return (
    <div>
      <div class="timeline" style={{ height: "auto", maxHeight: "60vh" }}>
        <ul aria-label="Matching events">
          {events.map((e) => (
            <Row key={e.seq} e={e} onExpand={onExpand} />
          ))}
        </ul>
      </div>
      <p class="muted" aria-live="polite">
        {events.length} matching {events.length === 1 ? "event" : "events"}
        {cursor.done ? "" : ` (searched up to #${cursor.after})`}{" "}
        {!cursor.done && (
          <button type="button" disabled={busy} onClick={() => void load(cursor.after, false)}>
            Load more
          </button>
        )}
      </p>
    </div>
  );
}

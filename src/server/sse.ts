/**
 * The journal of one session as Server-Sent Events. Each journal event is one SSE message:
 * `id` is its seq (so the browser's automatic `Last-Event-ID` resumes exactly after the last
 * event it saw), `data` is the event as JSON. Messages carry no `event:` name, so
 * `EventSource.onmessage` receives every journal event whatever its type; the type is in the
 * data. One named control message, `ready`, opens the stream.
 *
 * New events are pushed as soon as `baton.watch` reports the session grew (in-process at once,
 * other processes' writes within tens of ms); a comment line every 15 s keeps proxies and the
 * browser from timing the stream out.
 *
 * With `versions` (the dashboard's session stream), it also sends `event: versions` with the
 * session's tags (services/session/overview.ts `sessionVersions`) when the stream opens and
 * whenever they change: read again once the store (the backend's change signal, which the
 * journal watcher already listens to) has been quiet for VERSIONS_QUIET_MS after a change, or
 * VERSIONS_MAX_MS after the first unread change while changes keep coming. So a page learns of a
 * ledger node or a checkpoint that journaled nothing, and re-reads only that part, while a burst
 * of appends is streamed without these reads between its events.
 */
import type { HttpBindings } from "@hono/node-server";
import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import type { Baton } from "../api.js";
import { badInput } from "../errors.js";

export const SSE_KEEPALIVE_MS = 15_000;
/** The browser waits this long before reconnecting after the stream drops. */
export const SSE_RETRY_MS = 1_000;
const PAGE = 500;
/** The versions are read once the store was quiet this long after a change... */
const VERSIONS_QUIET_MS = 100;
/** ...or this long after the first change not read yet, while changes keep coming. */
const VERSIONS_MAX_MS = 1_000;

/**
 * The seq a browser's `Last-Event-ID` resumes after: undefined when there is none or it is not a
 * seq (the query's `after` then decides); one past what a seq can be is `bad_input`, as `?after=` is.
 */
export function lastEventId(header: string | undefined): number | undefined {
  const v = header?.trim();
  if (v === undefined || !/^\d+$/.test(v)) return undefined;
  const n = Number(v);
  if (!Number.isSafeInteger(n)) throw badInput("Last-Event-ID must be a whole number a seq can be");
  return n;
}

export function streamJournal(
  c: Context<{ Bindings: HttpBindings }>,
  baton: Baton,
  sessionId: string,
  afterSeq: number,
  shutdown: AbortSignal,
  versions?: () => Promise<unknown>,
): Response {
  c.header("X-Accel-Buffering", "no");
  return streamSSE(c, async (stream) => {
    let after = afterSeq;
    let dirty = true;
    // When the first change not read yet came, and the last one (read at once on open).
    let versionsDue: { first: number; last: number } | undefined = versions ? { first: 0, last: 0 } : undefined;
    let versionsSent: string | undefined;
    let wake: (() => void) | undefined;
    const poke = () => {
      const w = wake;
      wake = undefined;
      w?.();
    };
    const unwatch = baton.events.watch((change) => {
      if (change.sessionId === sessionId && change.lastSeq > after) {
        dirty = true;
        poke();
      }
    });
    const unlisten = versions
      ? baton.events.onStoreChange(() => {
          const t = Date.now();
          versionsDue = { first: versionsDue?.first ?? t, last: t };
          poke();
        })
      : () => undefined;
    const stop = () => {
      if (!stream.aborted) stream.abort();
      poke();
    };
    stream.onAbort(poke);
    shutdown.addEventListener("abort", stop, { once: true });
    try {
      await stream.writeSSE({ event: "ready", data: JSON.stringify({ sessionId, after }), retry: SSE_RETRY_MS });
      while (!stream.aborted && !shutdown.aborted) {
        if (dirty) {
          dirty = false;
          for (;;) {
            const { events, corrupt } = await baton.events.list(sessionId, { afterSeq: after, limit: PAGE });
            for (const e of events) {
              if (stream.aborted) return;
              await stream.writeSSE({ id: String(e.seq), data: JSON.stringify(e) });
              after = Math.max(after, e.seq);
            }
            // An unreadable row is skipped (status reports it), never sent or retried forever.
            for (const d of corrupt) after = Math.max(after, d.seq ?? after);
            if (events.length + corrupt.length < PAGE) break;
          }
          continue;
        }
        const versionsIn = versionsDue
          ? Math.min(versionsDue.last + VERSIONS_QUIET_MS, versionsDue.first + VERSIONS_MAX_MS) - Date.now()
          : undefined;
        if (versions && versionsIn !== undefined && versionsIn <= 0) {
          versionsDue = undefined;
          try {
            const text = JSON.stringify(await versions());
            if (text !== versionsSent && !stream.aborted) {
              versionsSent = text;
              await stream.writeSSE({ event: "versions", data: text });
            }
          } catch {
            const t = Date.now(); // a busy store: read them again after a quiet spell
            versionsDue = { first: t, last: t };
          }
          continue;
        }
        const timedOut = await new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => {
            wake = undefined;
            resolve(versionsIn === undefined);
          }, versionsIn ?? SSE_KEEPALIVE_MS);
          wake = () => {
            clearTimeout(timer);
            resolve(false);
          };
        });
        if (timedOut && !stream.aborted) await stream.write(": keep-alive\n\n");
      }
    } finally {
      unwatch();
      unlisten();
      shutdown.removeEventListener("abort", stop);
    }
  });
}

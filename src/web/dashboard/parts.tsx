/** Small pieces the dashboard's views share. */
import { useCallback, useRef } from "preact/hooks";
import type { NextAction } from "../../core/types.js";
import type { PendingWork } from "../../services/work/queue.js";

/** "12 s ago", "3 min ago", "2 h ago", else the date. */
export function ago(iso: string, now = Date.now()): string {
  const ms = now - Date.parse(iso);
  if (!Number.isFinite(ms)) return iso;
  if (ms < 0) return "just now";
  if (ms < 60_000) return `${Math.round(ms / 1000)} s ago`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min ago`;
  if (ms < 86_400_000) return `${Math.round(ms / 3_600_000)} h ago`;
  return iso.slice(0, 10);
}

/** "1 file", "3 files": a count with its noun (regular plurals only). */
export function plural(n: number, noun: string): string {
  return `${n} ${n === 1 ? noun : `${noun}s`}`;
}

/**
 * A text input as wide as its placeholder (and no wider than its row): `ch` is the width of "0",
 * wider than the average letter of a proportional font, so the placeholder is never cut off.
 */
export function fitPlaceholder(placeholder: string): Record<string, string> {
  return { "--chars": String(placeholder.length) };
}

export function NextActionCell({ next }: { next: NextAction }) {
  return (
    <div class="next-action">
      <strong>{next.action}</strong>
      <div class="muted">{next.reason}</div>
      {next.command && (
        <div>
          <code>{next.command}</code>
        </div>
      )}
    </div>
  );
}

export function PendingCell({ work }: { work: PendingWork[] }) {
  if (work.length === 0) return <span class="muted">none</span>;
  return (
    <ul class="plain">
      {work.map((w) => (
        <li key={w.itemId}>
          <code>{w.kind}</code> <span class={`badge ${w.state === "leased" ? "warn" : "info"}`}>{w.state}</span>
          {w.lease && (
            <div class="muted">
              held by {w.lease.owner}, {w.lease.expired ? "expired" : "expires"}{" "}
              <time dateTime={w.lease.expiresAt}>{w.lease.expiresAt.slice(11, 19)}</time>
            </div>
          )}
        </li>
      ))}
    </ul>
  );
}

/**
 * A panel's reads, newest wins: reads overlap (the stream's changes, the panel's own actions), and
 * an older read answering after a newer one would show a state already gone. The wrapped read
 * resolves to undefined (and a failure of it is dropped) when a newer one was started meanwhile.
 */
export function useNewest(): <T>(read: () => Promise<T>) => Promise<T | undefined> {
  const generation = useRef(0);
  return useCallback(async <T,>(read: () => Promise<T>) => {
    const mine = ++generation.current;
    try {
      const value = await read();
      return mine === generation.current ? value : undefined;
    } catch (err) {
      if (mine !== generation.current) return undefined; // a newer read says what holds now
      throw err;
    }
  }, []);
}

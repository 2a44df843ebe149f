/**
 * How the dashboard talks to its server: the login, reads, writes and the live stream.
 *
 * - The token lives in this tab's sessionStorage, put there by the one-time login. Writes send
 *   it as `Authorization: Bearer`; without it the page is read-only (it never writes with the
 *   cookie alone: the server would refuse).
 * - Reads send the bearer too when there is one, else rely on the HttpOnly cookie the login set.
 * - The stream is an EventSource (cookie), reopened with a growing delay if the browser gives up.
 */
const TOKEN_KEY = "baton.dashboard.token";

export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

export function token(): string | undefined {
  try {
    return sessionStorage.getItem(TOKEN_KEY) ?? undefined;
  } catch {
    return undefined;
  }
}

/** Trade `#login=<code>` in the address for the token and the cookie; the fragment is removed first. */
export async function loginFromFragment(): Promise<"none" | "ok" | { error: string }> {
  const m = /^#login=([A-Za-z0-9_-]{16,128})$/.exec(location.hash);
  if (!m) return "none";
  history.replaceState(null, "", location.pathname + location.search);
  try {
    const body = await post<{ token: string }>("/v1/dashboard/login", { code: m[1] }, { anonymous: true });
    sessionStorage.setItem(TOKEN_KEY, body.token);
    return "ok";
  } catch (err) {
    return { error: (err as Error).message };
  }
}

async function parse<T>(res: Response): Promise<T> {
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    throw new ApiError("bad_response", `the server answered ${res.status} with a body that is not JSON`, res.status);
  }
  if (!res.ok) {
    const e = (body as { error?: { code?: string; message?: string } } | undefined)?.error;
    throw new ApiError(e?.code ?? "http_error", e?.message ?? `the server answered ${res.status}`, res.status);
  }
  return body as T;
}

export async function get<T>(path: string): Promise<T> {
  const t = token();
  const res = await fetch(path, { credentials: "same-origin", headers: t ? { authorization: `Bearer ${t}` } : {} });
  return parse<T>(res);
}

export async function post<T>(path: string, body: unknown, opts: { anonymous?: boolean } = {}): Promise<T> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (!opts.anonymous) {
    const t = token();
    if (!t) throw new ApiError("read_only", "this tab is read-only: open the link `baton dashboard` prints to act", 401);
    headers.authorization = `Bearer ${t}`;
  }
  const res = await fetch(path, { method: "POST", credentials: "same-origin", headers, body: JSON.stringify(body) });
  return parse<T>(res);
}

export type Connection = "connecting" | "live" | "reconnecting";

/**
 * Follow an SSE stream. `onOpen` runs on every (re)connection so the caller refetches what it
 * may have missed; `onState` reports the connection for the page's badge.
 */
export function follow(
  url: string,
  handlers: { onOpen: () => void; onMessage: (type: string, data: string, id: string) => void; onState: (s: Connection) => void },
  events: readonly string[] = ["change"],
): () => void {
  let es: EventSource | undefined;
  let closed = false;
  let delay = 500;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const open = () => {
    es = new EventSource(url, { withCredentials: true });
    es.addEventListener("ready", () => {
      delay = 500;
      handlers.onState("live");
      handlers.onOpen();
    });
    const deliver = (ev: MessageEvent) => handlers.onMessage(ev.type, ev.data as string, ev.lastEventId);
    for (const name of events) es.addEventListener(name, deliver as EventListener);
    es.onerror = () => {
      handlers.onState("reconnecting");
      // The browser retries by itself after a dropped stream, but gives up on an HTTP error
      // (the server restarting answers 503 for a moment): then retry ourselves.
      if (es?.readyState === EventSource.CLOSED && !closed) {
        es.close();
        timer = setTimeout(open, delay);
        delay = Math.min(delay * 2, 5_000);
      }
    };
  };
  open();
  return () => {
    closed = true;
    if (timer) clearTimeout(timer);
    es?.close();
  };
}

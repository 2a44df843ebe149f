/**
 * How the dashboard talks to its server: the login, reads, writes and the live streams.
 *
 * - The login trades the one-time code for a browser session (never the server's token), kept
 *   in this origin's localStorage: the browser scopes it to scheme, host and port, so no other
 *   page on 127.0.0.1 can read it, and it is sent only as `Authorization: Bearer` by this page.
 *   The page renews it hourly while open; a lapsed or refused one means "log in again".
 * - No cookie: the browser would send one to every port on the host.
 * - A stream (EventSource cannot send headers) opens with a single-use ticket asked for just
 *   before; after a drop, a new ticket, resuming after the last event id seen.
 */
const SESSION_KEY = "baton.dashboard.session";
/** Renew the browser session when it is older than this (it lasts 12 hours). */
const RENEW_AFTER_MS = 60 * 60_000;
const SESSION_MS = 12 * 60 * 60_000;

/** A view's read that failed for a reason that may pass is tried again after this, doubling up to RETRY_MAX_MS. */
export const RETRY_MS = 1_000;
export const RETRY_MAX_MS = 10_000;

/**
 * Whether a failed read may succeed if tried again: the network, a server error, a timeout, too
 * many requests, or an answer that was not JSON (a proxy's page while the server restarts); not
 * a refusal or "not found".
 */
export function mayPass(err: unknown): boolean {
  if (!(err instanceof ApiError)) return true;
  return err.status >= 500 || err.status === 429 || err.status === 408 || err.code === "bad_response";
}

export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

interface Stored {
  session: string;
  expiresAt: string;
}

function stored(): Stored | undefined {
  try {
    const raw = localStorage.getItem(SESSION_KEY);
    const v = raw ? (JSON.parse(raw) as Stored) : undefined;
    if (!v || typeof v.session !== "string" || !(Date.parse(v.expiresAt) > Date.now())) return undefined;
    return v;
  } catch {
    return undefined;
  }
}

function store(v: Stored | undefined): void {
  try {
    if (v) localStorage.setItem(SESSION_KEY, JSON.stringify({ session: v.session, expiresAt: v.expiresAt }));
    else localStorage.removeItem(SESSION_KEY);
  } catch {
    // storage disabled: this tab stays logged in until it is closed
  }
  memory = v;
}

let memory: Stored | undefined;

/** This browser's session on this server, when it is logged in. */
export function token(): string | undefined {
  return (stored() ?? (memory && Date.parse(memory.expiresAt) > Date.now() ? memory : undefined))?.session;
}

const lostListeners = new Set<() => void>();

/** Run `fn` when the session is forgotten (refused by the server, or logged out). */
export function onSignedOut(fn: () => void): () => void {
  lostListeners.add(fn);
  return () => lostListeners.delete(fn);
}

/** Forget the session (the server refused it, or the user logs out). */
export function forget(): void {
  store(undefined);
  for (const fn of [...lostListeners]) fn();
}

/** Trade `#login=<code>` in the address for a browser session; the fragment is removed first. */
export async function loginFromFragment(): Promise<"none" | "ok" | { error: string }> {
  const m = /^#login=([A-Za-z0-9_-]{16,128})$/.exec(location.hash);
  if (!m) return "none";
  history.replaceState(null, "", location.pathname + location.search);
  try {
    store(await post<Stored>("/v1/dashboard/login", { code: m[1] }, { anonymous: true }));
    return "ok";
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/**
 * Keep the session fresh while the page is open: renew it when older than an hour (checked
 * every few minutes). A refused or lapsed one is forgotten (`onSignedOut` listeners run).
 */
export function keepSession(): () => void {
  const tick = async () => {
    const s = stored() ?? memory;
    if (!s) return forget();
    const issued = Date.parse(s.expiresAt) - SESSION_MS;
    if (Date.now() - issued < RENEW_AFTER_MS) return;
    try {
      store(await post<Stored>("/v1/dashboard/session", {}));
    } catch {
      // a refusal forgot it already (post); a network error: try again at the next tick
    }
  };
  void tick();
  const timer = setInterval(() => void tick(), 5 * 60_000);
  return () => clearInterval(timer);
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

function authHeaders(): Record<string, string> {
  const t = token();
  if (!t) throw new ApiError("unauthorized", "this browser is not logged in: open the link `baton dashboard` prints", 401);
  return { authorization: `Bearer ${t}` };
}

/** A refused session is forgotten, so the page asks for a new login instead of retrying it. */
function refused(res: Response): void {
  if (res.status === 401) forget();
}

export async function get<T>(path: string): Promise<T> {
  const res = await fetch(path, { credentials: "omit", headers: authHeaders() });
  refused(res);
  return parse<T>(res);
}

export async function post<T>(path: string, body: unknown, opts: { anonymous?: boolean } = {}): Promise<T> {
  const headers: Record<string, string> = { "content-type": "application/json", ...(opts.anonymous ? {} : authHeaders()) };
  const res = await fetch(path, { method: "POST", credentials: "omit", headers, body: JSON.stringify(body) });
  if (!opts.anonymous) refused(res);
  return parse<T>(res);
}

export type Connection = "connecting" | "live" | "reconnecting";

/**
 * Follow an SSE stream. `onOpen` runs on every (re)connection so the caller refetches what it
 * may have missed; `onState` reports the connection for the page's badge. Each connection opens
 * with a new single-use ticket; after a drop the next resumes with `after=<last event id>`
 * (the streams that number their messages). A refused session stops it (`onSignedOut`).
 */
export function follow(
  url: string,
  handlers: {
    onOpen: () => void;
    onMessage: (type: string, data: string, id: string) => void;
    onState: (s: Connection) => void;
  },
  events: readonly string[] = ["change"],
): () => void {
  let es: EventSource | undefined;
  let closed = false;
  let delay = 500;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let lastId = "";
  const again = () => {
    if (closed) return;
    timer = setTimeout(() => void open(), delay);
    delay = Math.min(delay * 2, 5_000);
  };
  const open = async () => {
    let ticket: string;
    try {
      ticket = (await post<{ ticket: string }>("/v1/stream-tickets", {})).ticket;
    } catch (err) {
      if (closed) return;
      if (err instanceof ApiError && err.status === 401) return; // forgotten: the page asks for a login
      handlers.onState("reconnecting");
      return again();
    }
    if (closed) return;
    const u = new URL(url, location.href);
    u.searchParams.set("ticket", ticket);
    if (lastId !== "") u.searchParams.set("after", lastId);
    const source = new EventSource(u.pathname + u.search);
    es = source;
    source.addEventListener("ready", () => {
      delay = 500;
      handlers.onState("live");
      handlers.onOpen();
    });
    const deliver = (ev: MessageEvent) => {
      if (ev.lastEventId) lastId = ev.lastEventId;
      handlers.onMessage(ev.type, ev.data as string, ev.lastEventId);
    };
    for (const name of events) source.addEventListener(name, deliver as EventListener);
    source.onerror = () => {
      // The ticket is spent: the browser's own reconnect would be refused, so close and open
      // again with a new one (a restarted server answers 503 for a moment: that retries too).
      source.close();
      if (es === source) es = undefined;
      handlers.onState("reconnecting");
      again();
    };
  };
  void open();
  return () => {
    closed = true;
    if (timer) clearTimeout(timer);
    es?.close();
  };
}

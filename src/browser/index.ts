/**
 * `agent-baton/browser`: the client a web page uses to talk to `baton serve`. No dependencies.
 *
 *   import { connect } from "agent-baton/browser";
 *   const baton = connect({ url: "http://127.0.0.1:4821", token, sessionId: "hero" });
 *   baton.onState((s) => badge.textContent = s.connection + (s.pending ? ` (${s.pending} pending)` : ""));
 *   baton.subscribe((event) => console.log(event.seq, event.type));
 *   await baton.send("accept", { variantId: "v2" }); // resolves once the server has it on disk
 *
 * Guarantees: `send` resolves only with the durable seq the server confirmed. Until then the
 * event sits in localStorage and is re-sent, with the same id (the server's idempotency key),
 * after a reconnect or a reload, strictly in the order it was sent. Checkpoints carry a
 * revision that grows across reloads and tabs, newest tab first (see `checkpoint`).
 */
import type { JournalEvent, JsonObject, Snapshot } from "../core/types.js";
import { bumpCounter, memoryStorage, Outbox, type PendingEvent, type StorageLike } from "./outbox.js";
import { EventStream } from "./stream.js";

export type { PendingEvent, StorageLike } from "./outbox.js";
export { memoryStorage } from "./outbox.js";

/** `connected`: the stream is open and the server answers. `reconnecting`: it does not, and we retry. */
export type ConnectionState = "connecting" | "connected" | "reconnecting" | "unauthorized" | "closed";

export interface ClientState {
  connection: ConnectionState;
  /** Events sent but not yet confirmed durable (shown as "pending confirmation"). */
  pending: number;
  /** The last journal seq received on the stream. */
  lastSeq: number;
  /** The session's phase as of the last confirmation or streamed event. */
  phase?: string;
}

export interface Confirmation {
  seq: number;
  id: string;
  duplicate: boolean;
  outcome: string;
  phase: string;
}

export interface SessionInfo {
  snapshot: Snapshot;
  status?: { nextAction: { action: string; reason: string; command: string } } & Record<string, unknown>;
}

export interface ConnectOptions {
  /** The server, e.g. `http://127.0.0.1:4821` (default: this page's origin). */
  url?: string;
  /**
   * The server's token, or a browser session from the login (`/v1/dashboard/login`); a function
   * is asked before each request, so a page that renews its session keeps using the fresh one.
   */
  token: string | (() => string | undefined);
  sessionId: string;
  /** Actor of the events this client sends. Default `browser`. */
  actor?: string;
  /** Where unconfirmed events persist. Default `localStorage` (memory when unavailable). */
  storage?: StorageLike;
  /** Subscribe to the session's journal over SSE. Default true. */
  stream?: boolean;
  /** Retry delays while the server is unreachable: first and longest, in ms. Default 250 and 4000. */
  retryMs?: { min: number; max: number };
}

/** A refusal by the server that re-sending cannot fix (invalid transition, bad input, conflict). */
export class BatonClientError extends Error {
  readonly code: string;
  readonly status: number;
  readonly details: Record<string, unknown>;
  constructor(code: string, message: string, status: number, details: Record<string, unknown> = {}) {
    super(message);
    this.name = "BatonClientError";
    this.code = code;
    this.status = status;
    this.details = details;
  }
}

/** Checkpoint revisions are `epoch * EPOCH_SPAN + counter`: a newer owner's revisions always win. */
export const EPOCH_SPAN = 1_000_000;

export interface BatonConnection {
  readonly sessionId: string;
  readonly state: Readonly<ClientState>;
  /** Send an event; resolves with the durable seq once the server confirms it. */
  send(type: string, data?: JsonObject, opts?: { id?: string }): Promise<Confirmation>;
  /**
   * Record the page's state as a `checkpoint` event with a monotonic revision. Each connection
   * is an owner with an epoch newer than every earlier one on this origin (and than the
   * server's last), so a checkpoint from an older tab arrives stale and cannot undo a newer one.
   */
  checkpoint(state: JsonObject): Promise<Confirmation>;
  /** The session as the server has it now (snapshot and status with the next action). */
  session(): Promise<SessionInfo>;
  subscribe(listener: (event: JournalEvent) => void): () => void;
  onState(listener: (state: Readonly<ClientState>) => void): () => void;
  /** Events not yet confirmed, oldest first. */
  pendingEvents(): PendingEvent[];
  close(): void;
}

export function connect(opts: ConnectOptions): BatonConnection {
  return new Connection(opts);
}

type Waiter = { resolve: (c: Confirmation) => void; reject: (e: Error) => void };

class Connection implements BatonConnection {
  readonly sessionId: string;
  readonly #url: string;
  readonly #token: () => string | undefined;
  readonly #actor: string;
  readonly #storage: StorageLike;
  readonly #outbox: Outbox;
  readonly #retry: { min: number; max: number };
  readonly #waiters = new Map<string, Waiter[]>();
  readonly #events = new Set<(e: JournalEvent) => void>();
  readonly #stateListeners = new Set<(s: Readonly<ClientState>) => void>();
  readonly #stream: EventStream | undefined;
  readonly #owner = randomId("tab");
  #epoch: number;
  #counter = 0;
  #state: ClientState;
  #flushing = false;
  #flushAgain = false;
  #retryDelay: number;
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;

  constructor(o: ConnectOptions) {
    this.sessionId = o.sessionId;
    this.#url = (o.url ?? globalThis.location?.origin ?? "").replace(/\/+$/, "");
    const token = o.token;
    this.#token = typeof token === "function" ? token : () => token;
    this.#actor = o.actor ?? "browser";
    this.#storage = o.storage ?? defaultStorage();
    const scope = this.#url.replace(/^https?:\/\//, "");
    this.#outbox = new Outbox(this.#storage, scope, o.sessionId);
    this.#retry = o.retryMs ?? { min: 250, max: 4_000 };
    this.#retryDelay = this.#retry.min;
    this.#epoch = bumpCounter(this.#storage, `baton:v1:epoch:${scope}:${o.sessionId}`, Math.floor(Date.now() / 1000));
    this.#state = { connection: "connecting", pending: this.#outbox.list().length, lastSeq: 0 };
    if (o.stream !== false) {
      // EventSource cannot send the bearer header: every connection opens with a single-use
      // ticket asked for just before (never a cookie, which the browser would send to every
      // port on the host; never the token in a URL).
      this.#stream = new EventStream({
        url: `${this.#url}/v1/sessions/${encodeURIComponent(o.sessionId)}/stream`,
        ticket: () => this.#ticket(),
        retryMs: this.#retry,
        onEvent: (e) => this.#onStreamEvent(e),
        onOpen: () => {
          this.#setState({ connection: "connected" });
          void this.#flush();
        },
        onDown: (unauthorized) => this.#setState({ connection: unauthorized ? "unauthorized" : "reconnecting" }),
      });
    }
    // Learn the server's revision once, at connect, so this owner's epoch is newer than any
    // checkpoint already stored (later reads must not bump it: that would let an older tab
    // overtake a newer one).
    void this.#read()
      .then((info) => {
        const revision = info.snapshot?.revision;
        if (typeof revision === "number" && Math.floor(revision / EPOCH_SPAN) >= this.#epoch && this.#counter === 0) {
          this.#epoch = Math.floor(revision / EPOCH_SPAN) + 1;
        }
      })
      .catch(() => undefined);
    void this.#flush();
  }

  get state(): Readonly<ClientState> {
    return this.#state;
  }

  send(type: string, data: JsonObject = {}, opts: { id?: string } = {}): Promise<Confirmation> {
    return this.#enqueue({ id: opts.id ?? randomId("br"), type, actor: this.#actor, data });
  }

  checkpoint(state: JsonObject): Promise<Confirmation> {
    this.#counter++;
    if (this.#counter >= EPOCH_SPAN) {
      this.#epoch++;
      this.#counter = 1;
    }
    const revision = this.#epoch * EPOCH_SPAN + this.#counter;
    const data = { ...state, owner: this.#owner, ownerEpoch: this.#epoch };
    return this.#enqueue({ id: randomId("cp"), type: "checkpoint", actor: this.#actor, data, revision });
  }

  session(): Promise<SessionInfo> {
    return this.#read();
  }

  async #read(): Promise<SessionInfo> {
    const res = await fetch(`${this.#url}/v1/sessions/${encodeURIComponent(this.sessionId)}`, { headers: this.#headers(false) });
    const info = (await readBody(res)) as SessionInfo;
    if (typeof info.snapshot?.phase === "string") this.#setState({ phase: info.snapshot.phase });
    return info;
  }

  subscribe(listener: (event: JournalEvent) => void): () => void {
    this.#events.add(listener);
    return () => this.#events.delete(listener);
  }

  onState(listener: (state: Readonly<ClientState>) => void): () => void {
    this.#stateListeners.add(listener);
    listener(this.#state);
    return () => this.#stateListeners.delete(listener);
  }

  pendingEvents(): PendingEvent[] {
    return this.#outbox.list();
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#retryTimer);
    this.#stream?.close();
    this.#setState({ connection: "closed" });
  }

  #enqueue(e: Omit<PendingEvent, "order">): Promise<Confirmation> {
    const done = new Promise<Confirmation>((resolve, reject) => {
      const list = this.#waiters.get(e.id) ?? [];
      list.push({ resolve, reject });
      this.#waiters.set(e.id, list);
    });
    try {
      this.#outbox.add(e);
    } catch (err) {
      this.#waiters.delete(e.id);
      return Promise.reject(
        new BatonClientError("storage_full", `cannot keep the event until it is confirmed: ${(err as Error).message}`, 0),
      );
    }
    this.#setState({ pending: this.#outbox.list().length });
    void this.#flush();
    return done;
  }

  /** Deliver the outbox in order; stop at the first event the server cannot take now. */
  async #flush(): Promise<void> {
    if (this.#flushing) {
      this.#flushAgain = true;
      return;
    }
    this.#flushing = true;
    try {
      do {
        this.#flushAgain = false;
        for (const e of this.#outbox.list()) {
          if (this.#closed) return;
          const outcome = await this.#post(e);
          if (outcome === "retry") return this.#scheduleRetry();
          if (outcome === "stop") return;
        }
      } while (this.#flushAgain);
    } finally {
      this.#flushing = false;
    }
  }

  async #post(e: PendingEvent): Promise<"sent" | "retry" | "stop"> {
    const body: JsonObject = { id: e.id, type: e.type, actor: e.actor, data: e.data };
    if (e.revision !== undefined) body.revision = e.revision;
    let res: Response;
    try {
      res = await fetch(`${this.#url}/v1/sessions/${encodeURIComponent(this.sessionId)}/events`, {
        method: "POST",
        headers: this.#headers(true),
        body: JSON.stringify(body),
      });
    } catch {
      this.#setState({ connection: "reconnecting" });
      return "retry";
    }
    let parsed: unknown;
    try {
      parsed = await res.json();
    } catch {
      parsed = {};
    }
    if (res.ok) {
      const c = parsed as Confirmation;
      this.#settle(e.id, (w) => w.resolve(c));
      this.#retryDelay = this.#retry.min;
      this.#setState({ phase: c.phase, ...(this.#stream?.open === false ? {} : { connection: "connected" }) });
      return "sent";
    }
    const err = (parsed as { error?: { code?: string; message?: string } }).error ?? {};
    if (res.status === 401 || res.status === 403) {
      // Kept: a reload with the right token delivers it.
      this.#setState({ connection: "unauthorized" });
      return "stop";
    }
    if (res.status >= 500 || res.status === 408 || res.status === 429) {
      this.#setState({ connection: "reconnecting" });
      return "retry";
    }
    // A refusal re-sending cannot fix: drop it so later events are not blocked behind it.
    const { code, message, ...details } = err as Record<string, unknown>;
    const error = new BatonClientError(String(code ?? "bad_input"), String(message ?? `HTTP ${res.status}`), res.status, details);
    this.#settle(e.id, (w) => w.reject(error));
    return "sent";
  }

  #settle(id: string, fn: (w: Waiter) => void): void {
    this.#outbox.remove(id);
    const list = this.#waiters.get(id) ?? [];
    this.#waiters.delete(id);
    for (const w of list) fn(w);
    this.#setState({ pending: this.#outbox.list().length });
  }

  #scheduleRetry(): void {
    if (this.#closed || this.#retryTimer !== undefined) return;
    const delay = this.#retryDelay;
    this.#retryDelay = Math.min(this.#retryDelay * 2, this.#retry.max);
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      void this.#flush();
    }, delay);
  }

  /** A single-use ticket that opens the stream once. */
  async #ticket(): Promise<string | "unauthorized"> {
    const res = await fetch(`${this.#url}/v1/stream-tickets`, { method: "POST", headers: this.#headers(true), body: "{}" });
    if (res.status === 401 || res.status === 403) return "unauthorized";
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    return ((await res.json()) as { ticket: string }).ticket;
  }

  #onStreamEvent(e: JournalEvent): void {
    if (e.seq <= this.#state.lastSeq) return;
    this.#setState({ lastSeq: e.seq });
    for (const l of [...this.#events]) l(e);
  }

  #headers(json: boolean): Record<string, string> {
    return { authorization: `Bearer ${this.#token() ?? ""}`, ...(json ? { "content-type": "application/json" } : {}) };
  }

  #setState(patch: Partial<ClientState>): void {
    const next = { ...this.#state, ...patch };
    if (this.#closed) next.connection = "closed";
    const changed = (Object.keys(next) as (keyof ClientState)[]).some((k) => next[k] !== this.#state[k]);
    if (!changed) return;
    this.#state = next;
    for (const l of [...this.#stateListeners]) l(next);
  }
}

async function readBody(res: Response): Promise<unknown> {
  const body = (await res.json().catch(() => ({}))) as { error?: { code?: string; message?: string } };
  if (!res.ok) {
    const { code, message, ...details } = (body.error ?? {}) as Record<string, unknown>;
    throw new BatonClientError(String(code ?? "internal"), String(message ?? `HTTP ${res.status}`), res.status, details);
  }
  return body;
}

function defaultStorage(): StorageLike {
  try {
    const s = globalThis.localStorage;
    if (s) return s;
  } catch {
    // storage disabled (privacy mode, sandboxed frame)
  }
  return memoryStorage();
}

function randomId(prefix: string): string {
  const c = globalThis.crypto;
  if (c?.randomUUID) return `${prefix}-${c.randomUUID()}`;
  const bytes = new Uint8Array(16);
  c.getRandomValues(bytes);
  return `${prefix}-${[...bytes].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

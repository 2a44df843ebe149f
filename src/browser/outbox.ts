/**
 * The browser's outbox: events sent but not yet confirmed durable by the server, kept in
 * localStorage so a reload or a crash of the tab does not lose them. One key per event (no
 * read-modify-write of a shared list, so two tabs never overwrite each other's entries); the
 * event's id is the server's idempotency key, so re-sending after a reload is harmless.
 */
import type { JsonObject } from "../core/types.js";

export interface PendingEvent {
  id: string;
  type: string;
  actor: string;
  data: JsonObject;
  revision?: number;
  /** Order of sending: events are delivered strictly in this order. */
  order: number;
}

/** The part of the Web Storage API the outbox uses (localStorage by default). */
export type StorageLike = Pick<Storage, "getItem" | "setItem" | "removeItem" | "key" | "length">;

/** In-memory storage: for pages that must not persist, and when localStorage is unavailable. */
export function memoryStorage(): StorageLike {
  const m = new Map<string, string>();
  return {
    getItem: (k) => m.get(k) ?? null,
    setItem: (k, v) => void m.set(k, String(v)),
    removeItem: (k) => void m.delete(k),
    key: (i) => [...m.keys()][i] ?? null,
    get length() {
      return m.size;
    },
  };
}

export class Outbox {
  readonly #storage: StorageLike;
  readonly #prefix: string;
  #counter = 0;

  constructor(storage: StorageLike, scope: string, sessionId: string) {
    this.#storage = storage;
    this.#prefix = `baton:v1:outbox:${scope}:${sessionId}:`;
  }

  /** Persist an event before it is sent. Throws if storage is full (the caller reports it). */
  add(e: Omit<PendingEvent, "order">): PendingEvent {
    const entry: PendingEvent = { ...e, order: Date.now() * 1000 + (this.#counter++ % 1000) };
    this.#storage.setItem(this.#prefix + e.id, JSON.stringify(entry));
    return entry;
  }

  remove(id: string): void {
    this.#storage.removeItem(this.#prefix + id);
  }

  has(id: string): boolean {
    return this.#storage.getItem(this.#prefix + id) !== null;
  }

  /** Every pending event of the session, oldest first. */
  list(): PendingEvent[] {
    const out: PendingEvent[] = [];
    for (let i = 0; i < this.#storage.length; i++) {
      const k = this.#storage.key(i);
      if (k === null || !k.startsWith(this.#prefix)) continue;
      try {
        const v = JSON.parse(this.#storage.getItem(k) ?? "null") as PendingEvent | null;
        if (v && typeof v.id === "string" && typeof v.type === "string") out.push(v);
      } catch {
        this.#storage.removeItem(k); // unreadable: nothing can be re-sent from it
      }
    }
    return out.sort((a, b) => a.order - b.order);
  }
}

/** Per-origin counters that must grow across tabs and reloads (the checkpoint owner epoch). */
export function bumpCounter(storage: StorageLike, key: string, atLeast: number): number {
  const stored = Number(storage.getItem(key) ?? "0");
  const next = Math.max(Number.isFinite(stored) ? stored + 1 : 1, atLeast);
  try {
    storage.setItem(key, String(next));
  } catch {
    // storage full: the epoch is still unique to this tab in practice (it is time-based)
  }
  return next;
}

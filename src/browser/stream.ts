/**
 * The session's journal over Server-Sent Events, kept open. Each connection opens with a new
 * single-use ticket (EventSource cannot send a bearer header); after any error the connection
 * is closed (its ticket is spent, so the browser's own reconnect would be refused) and a new
 * one opens after the last seq seen, with a growing delay.
 */
import type { JournalEvent } from "../core/types.js";

export interface EventStreamOptions {
  url: string;
  /** A single-use ticket for the next connection, or "unauthorized" when the token is refused. */
  ticket: () => Promise<string | "unauthorized">;
  retryMs: { min: number; max: number };
  onEvent: (e: JournalEvent) => void;
  onOpen: () => void;
  onDown: (unauthorized: boolean) => void;
}

export class EventStream {
  readonly #o: EventStreamOptions;
  #source: EventSource | undefined;
  #lastSeq = 0;
  #delay: number;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  open = false;

  constructor(o: EventStreamOptions) {
    this.#o = o;
    this.#delay = o.retryMs.min;
    void this.#start();
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#source?.close();
    this.#source = undefined;
    this.open = false;
  }

  async #start(): Promise<void> {
    if (this.#closed) return;
    let ticket: string;
    try {
      ticket = await this.#o.ticket();
    } catch {
      this.#down(false);
      return this.#later();
    }
    if (this.#closed) return;
    if (ticket === "unauthorized") return this.#down(true);
    const sep = this.#o.url.includes("?") ? "&" : "?";
    const source = new EventSource(`${this.#o.url}${sep}ticket=${encodeURIComponent(ticket)}&after=${this.#lastSeq}`);
    this.#source = source;
    source.addEventListener("ready", () => {
      this.#delay = this.#o.retryMs.min;
      this.open = true;
      this.#o.onOpen();
    });
    source.onmessage = (m: MessageEvent<string>) => {
      let e: JournalEvent;
      try {
        e = JSON.parse(m.data) as JournalEvent;
      } catch {
        return;
      }
      if (typeof e.seq === "number" && e.seq > this.#lastSeq) this.#lastSeq = e.seq;
      this.#o.onEvent(e);
    };
    source.onerror = () => {
      this.#down(false);
      source.close();
      if (this.#source === source) this.#source = undefined;
      this.#later();
    };
  }

  #down(unauthorized: boolean): void {
    this.open = false;
    if (!this.#closed) this.#o.onDown(unauthorized);
  }

  #later(): void {
    if (this.#closed) return;
    const delay = this.#delay;
    this.#delay = Math.min(this.#delay * 2, this.#o.retryMs.max);
    this.#timer = setTimeout(() => void this.#start(), delay);
  }
}

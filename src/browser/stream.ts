/**
 * The session's journal over Server-Sent Events, kept open. EventSource reconnects by itself
 * after a dropped connection and resumes with `Last-Event-ID`; when it gives up (the server
 * answered with an error, e.g. after a restart before the cookie was renewed) this re-authorizes
 * and opens a new one from the last seq seen, with a growing delay.
 */
import type { JournalEvent } from "../core/types.js";

export interface EventStreamOptions {
  url: string;
  authorize: () => Promise<"ok" | "unauthorized">;
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
    let auth: "ok" | "unauthorized";
    try {
      auth = await this.#o.authorize();
    } catch {
      this.#down(false);
      return this.#later();
    }
    if (this.#closed) return;
    if (auth === "unauthorized") return this.#down(true);
    const source = new EventSource(`${this.#o.url}${this.#o.url.includes("?") ? "&" : "?"}after=${this.#lastSeq}`);
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
      if (source.readyState === EventSource.CLOSED) {
        // EventSource gave up: start over (new cookie, resume from the last seq).
        source.close();
        if (this.#source === source) this.#source = undefined;
        this.#later();
      }
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

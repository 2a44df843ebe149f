/**
 * Journal change notifications: which sessions grew. Built on the backend's onChange (this
 * process's commits at once, other processes' within the change delay); one query of the
 * sessions table per change, shared by every listener.
 */
import type { Backend } from "../../backend/contract.js";

export interface JournalChange {
  sessionId: string;
  lastSeq: number;
}

export class JournalWatcher {
  readonly #backend: Backend;
  readonly #listeners = new Set<(c: JournalChange) => void>();
  readonly #seen = new Map<string, number>();
  #unsubscribe: (() => void) | undefined;
  #scanning: Promise<void> | undefined;
  #again = false;
  /** The first scan after the first listener only learns the current seqs (an empty workspace has none). */
  #primed = false;

  constructor(backend: Backend) {
    this.#backend = backend;
  }

  watch(listener: (c: JournalChange) => void): () => void {
    this.#listeners.add(listener);
    if (!this.#unsubscribe) {
      this.#unsubscribe = this.#backend.onChange(() => this.#scan());
      void this.#scan(); // learn the current seqs, so only later growth is reported
    }
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0) {
        this.#unsubscribe?.();
        this.#unsubscribe = undefined;
        this.#seen.clear();
        this.#primed = false;
      }
    };
  }

  #scan(): Promise<void> {
    if (this.#scanning) {
      this.#again = true;
      return this.#scanning;
    }
    this.#scanning = (async () => {
      do {
        this.#again = false;
        const first = !this.#primed;
        this.#primed = true;
        const rows = await this.#backend.transaction("read", (tx) => tx.listSessions({ includeCompleted: true })).catch(() => []);
        for (const r of rows) {
          const before = this.#seen.get(r.id);
          this.#seen.set(r.id, r.lastSeq);
          if (!first && before !== r.lastSeq) for (const l of [...this.#listeners]) l({ sessionId: r.id, lastSeq: r.lastSeq });
        }
      } while (this.#again);
    })().finally(() => {
      this.#scanning = undefined;
    });
    return this.#scanning;
  }
}

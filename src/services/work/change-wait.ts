/**
 * Waiting for the store to change, for the loops that try something, and when it cannot be done
 * yet sleep until the store changes (or a time limit): a lock's `acquire --wait`, a
 * work item's long-poll lease, `baton watch`. One waiter, so the three agree on what wakes them:
 * a change notice (a commit, this process's or another's, across hosts on PostgreSQL), the time given, or
 * the caller's abort signal.
 */
import type { Backend } from "../../backend/contract.js";

export class ChangeWait {
  #changed = false;
  #wake: (() => void) | undefined;
  readonly #unsubscribe: () => void;
  readonly #signal: AbortSignal | undefined;

  constructor(backend: Pick<Backend, "onChange">, signal?: AbortSignal) {
    this.#signal = signal;
    this.#unsubscribe = backend.onChange(() => {
      this.#changed = true;
      this.#wake?.();
    });
  }

  /** Forget the changes seen so far: a `sleep` after this waits for one that comes later. */
  arm(): void {
    this.#changed = false;
  }

  /**
   * The caller's attempt was itself a write: let its own change notices (delivered by the next
   * turn of the event loop) pass and forget them, so only other writers' commits wake the sleep.
   */
  async passOwnWrites(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.#changed = false;
  }

  /** Sleep up to `ms`; at once when a change came since `arm`, or when the signal is aborted. */
  sleep(ms: number): Promise<void> {
    if (this.#changed || this.#signal?.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#signal?.removeEventListener("abort", done);
        this.#wake = undefined;
        resolve();
      };
      // Node fires a timer longer than 2^31-1 ms at once: clamp, so a long wait never spins.
      const timer = setTimeout(done, Math.min(Math.max(0, ms), 2_147_483_647));
      this.#wake = done;
      this.#signal?.addEventListener("abort", done, { once: true });
    });
  }

  /** Stop listening; a sleep in progress ends now. */
  close(): void {
    this.#unsubscribe();
    this.#wake?.();
  }
}

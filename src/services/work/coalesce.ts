/**
 * Group commit for requests of one kind: requests made while the calls allowed for their key
 * are in flight wait, and then go together in the next call, so N concurrent callers cost a
 * few round trips and commits instead of N. A request of a quiet key goes at once (after the
 * current microtask, so requests made in the same synchronous stretch go with it): batching
 * adds no delay to a lone caller.
 *
 * Each caller is answered only after the call that carried it settled, with its own outcome:
 * `run` returns one per request, and an error in one affects only that request. Only a failure
 * of the call itself (the shared statement or commit) reaches every request it carried. A call
 * carries requests of many callers, so it runs outside any caller's store limits (an agent
 * hook's deadline: platform/store-limits.ts).
 */
import { BatonError } from "../../errors.js";
import { withoutStoreLimits } from "../../platform/store-limits.js";

export type Outcome<T> = { value: T } | { error: unknown };

interface Waiting<Req, Res> {
  req: Req;
  resolve: (v: Res) => void;
  reject: (e: unknown) => void;
}

export class Coalescer<Req, Res> {
  readonly #run: (reqs: Req[]) => Promise<Outcome<Res>[]>;
  readonly #max: number;
  readonly #parallel: number;
  readonly #keys = new Map<string, { queue: Waiting<Req, Res>[]; running: number }>();

  /**
   * `run` gets at most `max` requests of one key and answers each, in order; at most `parallel`
   * calls of one key run at once (a request made while fewer run starts one).
   */
  constructor(run: (reqs: Req[]) => Promise<Outcome<Res>[]>, opts: { max?: number; parallel?: number } = {}) {
    this.#run = run;
    this.#max = opts.max ?? 64;
    this.#parallel = opts.parallel ?? 1;
  }

  submit(key: string, req: Req): Promise<Res> {
    return new Promise<Res>((resolve, reject) => {
      let k = this.#keys.get(key);
      if (!k) {
        k = { queue: [], running: 0 };
        this.#keys.set(key, k);
      }
      k.queue.push({ req, resolve, reject });
      if (k.running < this.#parallel) {
        k.running++;
        const state = k;
        queueMicrotask(() => void withoutStoreLimits(() => this.#drain(key, state)));
      }
    });
  }

  /** Carry the key's queue in calls of at most `max` until it is empty (other drains may share it). */
  async #drain(key: string, k: { queue: Waiting<Req, Res>[]; running: number }): Promise<void> {
    const queue = k.queue;
    while (queue.length > 0) {
      const batch = queue.splice(0, this.#max);
      let outcomes: Outcome<Res>[] | undefined;
      let failure: unknown;
      try {
        outcomes = await this.#run(batch.map((w) => w.req));
      } catch (err) {
        failure = err;
      }
      batch.forEach((w, i) => {
        const o = outcomes?.[i];
        if (!o) w.reject(failure ?? new BatonError("internal", "a coalesced call answered fewer requests than it carried"));
        else if ("error" in o) w.reject(o.error);
        else w.resolve(o.value);
      });
    }
    if (--k.running === 0) this.#keys.delete(key);
  }
}

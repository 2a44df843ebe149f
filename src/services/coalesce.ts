/**
 * Group commit for requests of one kind: requests made while a call for their key is in
 * flight wait for it and then go together in the next call, so N concurrent callers cost a
 * few round trips and commits instead of N. The first request of a quiet key goes at once
 * (after the current microtask, so requests made in the same synchronous stretch go with it):
 * batching adds no delay to a lone caller.
 *
 * Each caller is answered only after the call that carried it settled, with its own outcome:
 * `run` returns one per request, and an error in one affects only that request. Only a failure
 * of the call itself (the shared statement or commit) reaches every request it carried.
 */
import { BatonError } from "../errors.js";

export type Outcome<T> = { value: T } | { error: unknown };

interface Waiting<Req, Res> {
  req: Req;
  resolve: (v: Res) => void;
  reject: (e: unknown) => void;
}

export class Coalescer<Req, Res> {
  readonly #run: (reqs: Req[]) => Promise<Outcome<Res>[]>;
  readonly #max: number;
  readonly #keys = new Map<string, Waiting<Req, Res>[]>();

  /** `run` gets at most `max` requests of one key and answers each, in order. */
  constructor(run: (reqs: Req[]) => Promise<Outcome<Res>[]>, max = 64) {
    this.#run = run;
    this.#max = max;
  }

  submit(key: string, req: Req): Promise<Res> {
    return new Promise<Res>((resolve, reject) => {
      const queue = this.#keys.get(key);
      if (queue) {
        queue.push({ req, resolve, reject });
        return;
      }
      const fresh = [{ req, resolve, reject }];
      this.#keys.set(key, fresh);
      queueMicrotask(() => void this.#drain(key, fresh));
    });
  }

  /** Carry the key's queue in calls of at most `max`, one call at a time, until it is empty. */
  async #drain(key: string, queue: Waiting<Req, Res>[]): Promise<void> {
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
    this.#keys.delete(key);
  }
}

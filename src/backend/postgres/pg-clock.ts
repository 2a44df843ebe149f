/**
 * The database's clock, for every expiry and availability decision on a store shared by hosts
 * whose clocks disagree. Leases, locks and runs expire, and work becomes available, at times
 * written by one host and compared by another: on each host's own clock, a host 61 s ahead took
 * another's live 60 s lease, and one a few seconds behind could not lease work just appended.
 *
 * Reading `clock_timestamp()` in every statement would put a round trip (or a rewrite of every
 * query) behind every decision; instead each process measures once how far the database's clock
 * is from its own (one query at open, halving the round trip) and reads its own clock plus that
 * offset. The error is at most half a round trip (well under a millisecond on a LAN), against
 * lease, lock and run times of seconds to minutes. A long-lived process measures again every
 * RESYNC_MS of its monotonic time, so a host clock stepped by NTP is corrected within a minute.
 */

/** How often a long-lived process measures the offset again (monotonic time). */
export const RESYNC_MS = 60_000;

export interface ServerClockReading {
  /** The server's clock, epoch ms. */
  serverMs: number;
  /** The host's clock when the query that read it was sent. */
  hostMs: number;
  /** How long that query took, there and back (the server read its clock about halfway). */
  tripMs: number;
}

/**
 * A clock that reads `host` plus the measured offset to the database's clock. `readServer`
 * reads the database's `clock_timestamp()`, with when (on `host`) its query was sent and how long
 * it took. With `resync`, the offset is measured again in the background after RESYNC_MS (a
 * failed measurement keeps the last one).
 */
export async function databaseClock(
  readServer: (host: () => Date) => Promise<ServerClockReading>,
  host: () => Date,
  opts: { resync: boolean },
): Promise<() => Date> {
  const measure = async (): Promise<number> => {
    const r = await readServer(host);
    return r.serverMs - (r.hostMs + r.tripMs / 2);
  };
  let offset = await measure();
  let measuredAt = performance.now();
  let measuring = false;
  return () => {
    if (opts.resync && !measuring && performance.now() - measuredAt > RESYNC_MS) {
      measuring = true;
      measure().then(
        (o) => {
          offset = o;
          measuredAt = performance.now();
          measuring = false;
        },
        () => {
          measuredAt = performance.now();
          measuring = false;
        },
      );
    }
    return new Date(host().getTime() + offset);
  };
}

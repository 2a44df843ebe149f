/**
 * The database's clock as a process reads it (backend/postgres/pg-clock.ts): the host's clock
 * plus the offset measured against the server, whatever the host's clock says; measured again
 * in the background after RESYNC_MS when asked, keeping the last offset when a measurement fails.
 */
import { describe, expect, it, vi } from "vitest";
import { databaseClock, RESYNC_MS } from "../src/backend/postgres/pg-clock.js";

const SERVER = Date.parse("2026-11-29T10:00:00Z");

describe("the database's clock", () => {
  it("reads the server's time on a host whose clock is off, and moves with the host's clock", async () => {
    for (const skew of [-5_000, 0, 61_000, 150_000, -31 * 60_000]) {
      let hostMs = SERVER + skew;
      const clock = await databaseClock(
        async (h) => ({ serverMs: SERVER, hostMs: h().getTime(), tripMs: 0 }),
        () => new Date(hostMs),
        {
          resync: false,
        },
      );
      expect(Math.abs(clock().getTime() - SERVER), `skew ${skew}`).toBeLessThan(50);
      hostMs += 1_000;
      expect(Math.abs(clock().getTime() - (SERVER + 1_000))).toBeLessThan(50);
    }
    // The half trip counts: a reading sent at host time T and taking 40 ms was read at T + 20.
    const host = { ms: SERVER + 61_000 };
    const trip = await databaseClock(
      async (h) => ({ serverMs: SERVER + 20, hostMs: h().getTime(), tripMs: 40 }),
      () => new Date(host.ms),
      {
        resync: false,
      },
    );
    expect(trip().getTime()).toBe(SERVER);
  });

  it("measures again after RESYNC_MS of monotonic time, keeping the last offset when that fails", async () => {
    const perf = vi.spyOn(performance, "now");
    let mono = 0;
    perf.mockImplementation(() => mono);
    try {
      let server = SERVER;
      let fail = false;
      const host = { ms: SERVER + 61_000 };
      const clock = await databaseClock(
        async (h) => {
          if (fail) throw new Error("down");
          return { serverMs: server, hostMs: h().getTime(), tripMs: 0 };
        },
        () => new Date(host.ms),
        { resync: true },
      );
      expect(clock().getTime()).toBe(SERVER);
      // The host's clock is stepped back by 60 s (NTP) while the server moves on 1 s.
      host.ms -= 60_000;
      server += 1_000;
      expect(clock().getTime(), "before the resync: the old offset").toBe(SERVER - 60_000);
      mono = RESYNC_MS + 1;
      clock(); // starts the measurement
      await new Promise((r) => setTimeout(r, 0));
      expect(clock().getTime()).toBe(server);
      // A failed measurement keeps the offset.
      fail = true;
      mono += RESYNC_MS + 1;
      clock();
      await new Promise((r) => setTimeout(r, 0));
      expect(clock().getTime()).toBe(server);
    } finally {
      perf.mockRestore();
    }
  });
});

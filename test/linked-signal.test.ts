/**
 * The signal a long-poll waits on: aborted by the request or by the server's shutdown, and gone
 * from the shutdown signal's listeners once the request is done (the server's heap grew with
 * every poll when AbortSignal.any tied each to the long-lived shutdown signal on Node 20).
 */
import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { linkedSignal } from "../src/server/app.js";

describe("linkedSignal", () => {
  it("aborts with either side, and leaves no listener behind on the long-lived one", () => {
    const shutdown = new AbortController();
    for (let i = 0; i < 1000; i++) {
      const request = new AbortController();
      const both = linkedSignal(request.signal, shutdown.signal);
      if (i % 2 === 0) request.abort();
      expect(both.signal.aborted).toBe(i % 2 === 0);
      both.done();
    }
    expect(getEventListeners(shutdown.signal, "abort")).toHaveLength(0);

    const open = linkedSignal(new AbortController().signal, shutdown.signal);
    expect(getEventListeners(shutdown.signal, "abort")).toHaveLength(1);
    shutdown.abort();
    expect(open.signal.aborted, "the server's shutdown ends a waiting poll").toBe(true);
    open.done();
    expect(linkedSignal(new AbortController().signal, shutdown.signal).signal.aborted, "already shut down").toBe(true);
  });
});

/**
 * The one waiter behind `acquire --wait`, the long-poll lease and `baton watch`: what ends a
 * sleep. The store's real notices are exercised by the lock, queue and watch tests; here a
 * notice source the test fires by hand pins down the rules themselves.
 */
import { describe, expect, it } from "vitest";
import { ChangeWait } from "../src/services/work/change-wait.js";

function source() {
  const listeners = new Set<() => void>();
  return {
    onChange(l: () => void) {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    fire: () => {
      for (const l of listeners) l();
    },
    get listening() {
      return listeners.size;
    },
  };
}

const settled = async (p: Promise<unknown>) => {
  let done = false;
  void p.then(() => (done = true));
  await new Promise((r) => setTimeout(r, 15));
  return done;
};

describe("ChangeWait", () => {
  it("a change during the sleep ends it; without one the time given does", async () => {
    const s = source();
    const w = new ChangeWait(s);
    w.arm();
    const sleeping = w.sleep(60_000);
    expect(await settled(sleeping)).toBe(false);
    s.fire();
    expect(await settled(sleeping)).toBe(true);
    w.arm();
    await w.sleep(20); // nothing fires: the time given ends it
    w.close();
    expect(s.listening).toBe(0);
  });

  it("a change after arm() and before the sleep ends the sleep at once; arm() forgets earlier ones", async () => {
    const s = source();
    const w = new ChangeWait(s);
    s.fire();
    w.arm();
    expect(await settled(w.sleep(60_000))).toBe(false);
    w.close(); // ends that sleep
    const w2 = new ChangeWait(s);
    w2.arm();
    s.fire();
    expect(await settled(w2.sleep(60_000))).toBe(true);
    w2.close();
  });

  it("passOwnWrites forgets the notices of the caller's own write, delivered before the next turn", async () => {
    const s = source();
    const w = new ChangeWait(s);
    w.arm();
    setImmediate(s.fire); // the caller's own commit's notice: both engines deliver it on the next turn
    await w.passOwnWrites();
    const sleeping = w.sleep(60_000);
    expect(await settled(sleeping)).toBe(false);
    s.fire(); // someone else's
    expect(await settled(sleeping)).toBe(true);
    w.close();
  });

  it("a wait longer than a timer can hold (2^31 ms) sleeps rather than spinning", async () => {
    const s = source();
    const w = new ChangeWait(s);
    w.arm();
    const sleeping = w.sleep(3e9);
    expect(await settled(sleeping)).toBe(false);
    w.close();
    expect(await settled(sleeping)).toBe(true);
  });

  it("an aborted signal ends a sleep, and a sleep started after the abort returns at once", async () => {
    const s = source();
    const ac = new AbortController();
    const w = new ChangeWait(s, ac.signal);
    w.arm();
    const sleeping = w.sleep(60_000);
    expect(await settled(sleeping)).toBe(false);
    ac.abort();
    expect(await settled(sleeping)).toBe(true);
    expect(await settled(w.sleep(60_000))).toBe(true);
    w.close();
  });
});

/**
 * A session's version tags (`baton.sessions.versions`), which the dashboard's session stream
 * sends so a panel re-reads only what changed. A tag must change whenever what the panel shows
 * does, and a state the page saw before must not come back with the tag it had then: the stream
 * sends a tag only when it differs from the last one it sent, and a page that read a state
 * between (its own read after an action) would keep showing that one. A real SQLite store.
 */
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { type Baton, openBaton } from "../src/index.js";
import { cleanupDirs, stuckSession, tempDir } from "./helpers.js";

afterAll(() => cleanupDirs());

const opened: Baton[] = [];
afterEach(async () => {
  for (const b of opened.splice(0)) await b.close();
});

/** A store of its own, after `before` has prepared its root, closed after the test. */
async function fresh(opts: { maxAttempts?: number } = {}, before?: (root: string) => Promise<void>): Promise<Baton> {
  const root = tempDir("versions");
  if (before) await before(root);
  const lib = await openBaton({ root, ...opts });
  opened.push(lib);
  return lib;
}

/** A live session `id` in a store of its own, with one generate queued, and its work tag. */
async function generated(id: string, opts: { maxAttempts?: number } = {}) {
  const lib = await fresh(opts);
  await lib.sessions.start({ flow: "live-variant", id });
  await lib.events.append(id, { type: "generate", actor: "browser", data: { prompt: "bolder" } });
  return { lib, tag: async () => (await lib.sessions.versions(id)).work };
}

describe("session versions", () => {
  it("work dead-lettered, retried, leased and dead-lettered again has a tag it never had", async () => {
    const lib = await fresh({}, stuckSession);
    const seen: string[] = [];
    const tag = async () => (await lib.sessions.versions("stuck")).work;
    seen.push(await tag()); // dead
    const [dead] = await lib.work.dead("stuck");
    await lib.work.retry(dead!.itemId);
    seen.push(await tag()); // back in the queue
    const again = (await lib.work.lease("agent-2", { sessionId: "stuck" }))!;
    seen.push(await tag()); // leased
    await lib.work.nack(again.leaseId, { reason: "still failing" });
    const last = await tag(); // dead again, for another reason
    expect(await lib.work.dead("stuck")).toMatchObject([{ itemId: dead!.itemId, why: expect.stringContaining("still failing") }]);
    expect(new Set(seen).size).toBe(3);
    expect(seen).not.toContain(last);
    expect(await tag()).toBe(last); // equal state, equal tag
  });

  it("a checkpoint pinned and unpinned again has a tag it never had", async () => {
    const lib = await fresh();
    await lib.sessions.start({ flow: "task", id: "pins" });
    const { checkpoint: cp } = await lib.checkpoints.create("pins", { label: "before the refactor" });
    const tag = async () => (await lib.sessions.versions("pins")).checkpoints;
    const plain = await tag();
    await lib.checkpoints.pin(cp.id);
    const pinned = await tag();
    await lib.checkpoints.pin(cp.id, false);
    const unpinned = await tag(); // not pinned, as at first, one change on
    expect((await lib.checkpoints.list("pins")).map((c) => c.pinned)).toEqual([false]);
    expect(new Set([plain, pinned, unpinned]).size).toBe(3);
    expect(await tag()).toBe(unpinned); // equal state, equal tag
    await lib.checkpoints.pin(cp.id, false); // no change: the tag stays
    expect(await tag()).toBe(unpinned);
  });

  it("work leased on its last attempt, given back, dead-lettered and retried has a tag it never had", async () => {
    const { lib, tag } = await generated("once", { maxAttempts: 1 });
    const ready = await tag();
    const lease = (await lib.work.lease("agent-1", { sessionId: "once" }))!;
    const leased = await tag();
    await lib.work.release(lease.leaseId, { reason: "taken over by hand" }); // its last attempt: dead
    const dead = await tag();
    await lib.work.retry(lease.item.itemId);
    const retried = await tag(); // ready with fresh attempts, as at first, but leased once since
    expect((await lib.work.pending("once")).map((w) => [w.state, w.attempts])).toEqual([["ready", 0]]);
    expect(new Set([ready, leased, dead, retried]).size).toBe(4);
  });

  it("work created, leased and acked has a tag it never had, though nothing is open or dead again", async () => {
    const lib = await fresh();
    await lib.sessions.start({ flow: "live-variant", id: "quick" });
    const tag = async () => (await lib.sessions.versions("quick")).work;
    const none = await tag();
    await lib.events.append("quick", { type: "generate", actor: "browser", data: { prompt: "bolder" } });
    const lease = (await lib.work.lease("agent-1", { sessionId: "quick" }))!;
    const leased = await tag();
    await lib.work.ack(lease.leaseId);
    const done = await tag(); // no work open or dead, as before the generate
    expect(await lib.work.pending("quick")).toEqual([]);
    expect(await lib.work.dead("quick")).toEqual([]);
    expect(new Set([none, leased, done]).size).toBe(3);
  });

  it("an item past the twenty dead a page lists, retried and dead again, leaves a tag it never had", async () => {
    const lib = await fresh({ maxAttempts: 1 });
    await lib.sessions.start({ flow: "live-variant", id: "many" });
    const ids: string[] = [];
    for (let n = 0; n < 22; n++) {
      await lib.events.append("many", { type: "generate", actor: "browser", data: { prompt: `try ${n}` } });
      const l = (await lib.work.lease("agent-1", { sessionId: "many" }))!;
      ids.push(l.item.itemId);
      await lib.work.nack(l.leaseId, { reason: `failed ${n}` });
    }
    const listed = new Set((await lib.work.dead("many")).map((d) => d.itemId));
    const unlisted = ids.filter((id) => !listed.has(id));
    expect([listed.size, unlisted.length]).toEqual([20, 2]);
    const tag = async () => (await lib.sessions.versions("many")).work;
    const tags = [await tag()];
    await lib.work.retry(unlisted[0]!); // no event: the page retried it by hand
    tags.push(await tag());
    const again = (await lib.work.lease("agent-2", { sessionId: "many" }))!;
    expect(again.item.itemId).toBe(unlisted[0]);
    tags.push(await tag());
    await lib.work.nack(again.leaseId, { reason: "failed again" }); // dead again, still not listed
    expect((await lib.work.dead("many")).map((d) => d.itemId)).not.toContain(unlisted[0]);
    tags.push(await tag());
    expect(new Set(tags).size).toBe(tags.length);
  });

  it("work leased and given back has a tag it never had, though it is ready again", async () => {
    const { lib, tag } = await generated("busy");
    const ready = await tag();
    const first = (await lib.work.lease("agent-1", { sessionId: "busy" }))!;
    const leased = await tag();
    await lib.work.release(first.leaseId, { reason: "taken over by hand" });
    const again = await tag(); // ready again, one delivery on
    expect((await lib.work.pending("busy")).map((w) => w.state)).toEqual(["ready"]);
    expect(new Set([ready, leased, again]).size).toBe(3);
    const second = (await lib.work.lease("agent-2", { sessionId: "busy" }))!;
    await lib.work.nack(second.leaseId, { reason: "not now" });
    expect([ready, leased, again]).not.toContain(await tag());
  });
});

/** Journal change notifications (Baton.watch): every growth is reported, starting with the first. */
import { afterAll, describe, expect, it } from "vitest";
import type { JournalChange } from "../src/services/journal/watch.js";
import { cleanupDirs, cli, tempBaton } from "./helpers.js";

afterAll(() => cleanupDirs());

describe("Baton.watch", () => {
  it("reports the first session of an empty workspace, from this process and from another", async () => {
    const { baton, root } = await tempBaton();
    try {
      const changes: JournalChange[] = [];
      const waiters: (() => void)[] = [];
      const stop = baton.events.watch((c) => {
        changes.push(c);
        for (const w of waiters.splice(0)) w();
      });
      const until = async (pred: () => boolean) => {
        const deadline = Date.now() + 5_000;
        while (!pred()) {
          if (Date.now() > deadline) throw new Error(`timed out; changes so far: ${JSON.stringify(changes)}`);
          await new Promise<void>((r) => {
            waiters.push(r);
            setTimeout(r, 50).unref();
          });
        }
      };
      await new Promise((r) => setTimeout(r, 50)); // the first scan learns that there is nothing yet
      await baton.sessions.start({ flow: "task", id: "first" });
      await until(() => changes.some((c) => c.sessionId === "first"));
      expect(changes.find((c) => c.sessionId === "first")).toEqual({ sessionId: "first", lastSeq: 1 });

      // Another process's first event in a session this process has not seen.
      expect(cli(["session", "start", "--flow", "task", "--id", "second", "--root", root]).code).toBe(0);
      await until(() => changes.some((c) => c.sessionId === "second"));
      stop();
    } finally {
      await baton.close();
    }
  });
});

/**
 * What the journal stores passes through redaction first: every string of event data, and a
 * session's title, which is kept both in its first event and in its row (listing reads the row).
 * Read back through the API and straight from the SQLite file, where a secret must not be.
 */
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { openBaton } from "../src/compose.js";
import { isBatonError } from "../src/index.js";
import { cleanupDirs, tempDir } from "./helpers.js";

afterEach(() => cleanupDirs());

// A GitHub personal access token's public format: ghp_ and 36 letters and digits.
const TOKEN = "ghp_CANARYgithub0123456789abcdefghijklmn";

function fileText(root: string): string {
  const db = new BetterSqlite3(join(root, ".baton", "baton.db"), { readonly: true });
  try {
    const rows = [
      ...db.prepare("SELECT title FROM sessions").all(),
      ...db.prepare("SELECT data FROM events").all(),
      ...db.prepare("SELECT body FROM snapshots").all(),
    ];
    return JSON.stringify(rows);
  } finally {
    db.close();
  }
}

describe("the journal's redaction", () => {
  it("redacts a session's title in its row and its first event, and every string of event data", async () => {
    const root = tempDir();
    const baton = await openBaton({ root });
    try {
      await baton.sessions.start({ flow: "task", id: "s1", title: `deploy with ${TOKEN}` });
      await baton.events.append("s1", { type: "note", data: { text: `the token is ${TOKEN}`, nested: [{ why: TOKEN }] } });
      const listed = (await baton.sessions.list())[0];
      expect(listed?.title).toMatch(/^deploy with /);
      expect(listed?.title).not.toContain(TOKEN);
      const { events } = await baton.events.list("s1");
      expect(events[0]?.data.title).toBe(listed?.title);
      expect(JSON.stringify(events)).not.toContain(TOKEN);
      expect(JSON.stringify(await baton.sessions.status())).not.toContain(TOKEN);
    } finally {
      await baton.close();
    }
    expect(fileText(root)).not.toContain(TOKEN.slice(4, 20));
  });

  it("refuses event data that JSON.stringify would not write as an object (a toJSON), appending nothing", async () => {
    const root = tempDir();
    const baton = await openBaton({ root });
    try {
      await baton.sessions.start({ flow: "task", id: "s1" });
      const err = await baton.events.append("s1", { type: "note", data: new Date(0) as never }).catch((e: unknown) => e);
      expect(isBatonError(err, "bad_input")).toBe(true);
      expect((err as Error).message).toMatch(/plain JSON object/);
      expect((await baton.events.list("s1")).events).toHaveLength(1);
      expect((await baton.events.list("s1")).corrupt).toEqual([]);
    } finally {
      await baton.close();
    }
  });
});

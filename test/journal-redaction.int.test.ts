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

  it("redacts what JSON.stringify writes of a value with a toJSON (a URL's password, an object's JSON form), at any depth", async () => {
    const root = tempDir();
    const baton = await openBaton({ root });
    try {
      await baton.sessions.start({ flow: "task", id: "s1" });
      const data = {
        endpoint: new URL("https://deploy:S3cretPassw0rdXYZ@db.example.com/x"),
        creds: { toJSON: (key: string) => ({ text: `token ${TOKEN}`, key }) },
        list: [{ toJSON: () => `also ${TOKEN}` }],
        when: new Date(0),
        // What JSON.stringify writes of these is not what their own properties hold.
        nested: { toJSON: () => ({ toJSON: () => `tok ${TOKEN}` }) },
        boxed: { note: Object(`token ${TOKEN}`), password: Object("hunter2xyz") },
      };
      const r = await baton.events.append("s1", { type: "note", data: data as never });
      const stored = (await baton.events.list("s1")).events[1];
      expect(stored?.data).toEqual(r.event.data);
      expect(JSON.stringify(stored?.data)).not.toContain("S3cretPassw0rdXYZ");
      expect(JSON.stringify(stored?.data)).not.toContain(TOKEN);
      expect(stored?.data).toMatchObject({ creds: { key: "creds" }, when: "1970-01-01T00:00:00.000Z", boxed: { password: "[redacted]" } });
      expect(JSON.stringify(stored?.data)).not.toContain("hunter2xyz");
      expect(String(stored?.data.endpoint)).toMatch(/^https:\/\/deploy:.*@db\.example\.com\/x$/);
    } finally {
      await baton.close();
    }
    expect(fileText(root)).not.toContain("S3cretPassw0rdXYZ");
    expect(fileText(root)).not.toContain("hunter2xyz");
    expect(fileText(root)).not.toContain(TOKEN.slice(4, 20));
  });

  it("refuses as event data what JSON.stringify would not write as that object (a Date, a boxed value, a Map), appending nothing", async () => {
    const root = tempDir();
    const baton = await openBaton({ root });
    try {
      await baton.sessions.start({ flow: "task", id: "s1" });
      const cyclic: Record<string, unknown> = { a: 1 };
      cyclic.self = cyclic;
      const throwing = {
        x: {
          toJSON: () => {
            throw new Error("no JSON for you");
          },
        },
      };
      const deep = { x: { toJSON: () => JSON.parse(`${"[".repeat(5_000)}${"]".repeat(5_000)}`) } };
      for (const data of [new Date(0), Object("abc"), Object(5), new Map([["a", 1]]), cyclic, throwing, deep]) {
        const err = await baton.events.append("s1", { type: "note", data: data as never }).catch((e: unknown) => e);
        expect(isBatonError(err, "bad_input"), `${String(data)}: ${String(err)}`).toBe(true);
      }
      // Objects that are written as themselves still are: one from another class, one without a prototype.
      class Note {
        text = "a note";
      }
      await baton.events.append("s1", { type: "note", data: new Note() as never });
      await baton.events.append("s1", { type: "note", data: Object.assign(Object.create(null), { text: "bare" }) });
      const { events, corrupt } = await baton.events.list("s1");
      expect(events.map((e) => e.data.text)).toEqual([undefined, "a note", "bare"]);
      expect(corrupt).toEqual([]);
      const title = await baton.sessions.start({ flow: "task", title: { a: 1 } as never }).catch((e: unknown) => e);
      expect(isBatonError(title, "bad_input"), String(title)).toBe(true);
    } finally {
      await baton.close();
    }
  });

  it("takes the titles an earlier version stored in clear from their sessions' first events (migration 20)", async () => {
    const root = tempDir();
    const baton = await openBaton({ root });
    await baton.sessions.start({ flow: "task", id: "s1", title: `deploy with ${TOKEN}` });
    await baton.sessions.start({ flow: "task", id: "s2" });
    await baton.sessions.start({ flow: "task", id: "s3", title: `deploy with ${TOKEN}` });
    await baton.close();
    // The rows as an earlier version left them: titles in clear, the schema at 19; s3's first event damaged.
    const db = new BetterSqlite3(join(root, ".baton", "baton.db"));
    db.prepare("UPDATE sessions SET title = ? WHERE id IN ('s1', 's3')").run(`deploy with ${TOKEN}`);
    db.prepare("UPDATE events SET data = 'not json' WHERE session_id = 's3' AND seq = 1").run();
    db.prepare("DELETE FROM baton_migrations WHERE version = 20").run();
    db.close();
    const again = await openBaton({ root });
    try {
      const titles = Object.fromEntries((await again.sessions.list()).map((s) => [s.id, s.title]));
      expect(titles.s1).toMatch(/^deploy with /);
      expect(titles.s1).not.toContain(TOKEN);
      expect(titles.s2 ?? null).toBeNull();
      expect(titles.s3 ?? null).toBeNull();
    } finally {
      await again.close();
    }
  });
});

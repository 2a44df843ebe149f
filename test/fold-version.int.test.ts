/**
 * A snapshot stored by a build whose fold made another snapshot of the same events (an older
 * FOLD_VERSION) is not a fault: reads refold the journal, the next write replaces it, doctor says
 * nothing about it, and a rebuild replaces it without recording a repair.
 */
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { checksum } from "../src/core/canonical.js";
import { FOLD_VERSION } from "../src/core/session/fold.js";
import { openBaton } from "../src/index.js";
import { cleanupDirs, tempDir } from "./helpers.js";

afterAll(() => cleanupDirs());

/** Rewrite the stored snapshot as an older build wrote it: no fold version, and `edit` applied. */
function asOlderBuild(root: string, id: string, edit: (body: Record<string, unknown>) => void): void {
  const db = new Database(join(root, ".baton", "baton.db"));
  try {
    const row = db.prepare("SELECT body FROM snapshots WHERE session_id = ?").get(id) as { body: string };
    const body = JSON.parse(row.body) as Record<string, unknown>;
    expect(body.foldVersion).toBe(FOLD_VERSION);
    delete body.foldVersion;
    edit(body);
    const text = JSON.stringify(body);
    db.prepare("UPDATE snapshots SET body = ?, hash = ? WHERE session_id = ?").run(text, checksum(text), id);
  } finally {
    db.close();
  }
}

describe("the fold's version", () => {
  it("an older build's snapshot is refolded when read, replaced at the next write, and no fault", async () => {
    const root = tempDir();
    const b = await openBaton({ root });
    try {
      await b.sessions.start({ flow: "task", id: "t1", title: "versioned" });
      await b.events.append("t1", { type: "start" });
      await b.events.append("t1", { type: "note:added", data: { text: "one" } });
      // What an older fold left: the same events, another shape (here, another title).
      asOlderBuild(root, "t1", (body) => {
        body.title = "folded by an older build";
      });
      const [status] = (await b.sessions.status({ sessionId: "t1" })).sessions;
      expect(status?.title).toBe("versioned");
      const report = await b.health.doctor();
      expect(report.findings.filter((f) => f.code === "snapshot_mismatch" || f.code === "snapshot_corrupt")).toEqual([]);
      expect((await b.sessions.rebuild("t1"))[0]).toMatchObject({ repaired: false });
      // Replaced by the rebuild (or the next write): the stored one is today's fold again.
      const db = new Database(join(root, ".baton", "baton.db"), { readonly: true });
      const body = JSON.parse((db.prepare("SELECT body FROM snapshots WHERE session_id = 't1'").get() as { body: string }).body);
      db.close();
      expect(body).toMatchObject({ foldVersion: FOLD_VERSION, title: "versioned" });
      // And an edited snapshot of today's version is still a fault.
      asOlderBuild(root, "t1", () => undefined);
      const db2 = new Database(join(root, ".baton", "baton.db"));
      const row = db2.prepare("SELECT body FROM snapshots WHERE session_id = 't1'").get() as { body: string };
      const today = { ...JSON.parse(row.body), foldVersion: FOLD_VERSION, title: "tampered" };
      const text = JSON.stringify(today);
      db2.prepare("UPDATE snapshots SET body = ?, hash = ? WHERE session_id = 't1'").run(text, checksum(text));
      db2.close();
      expect((await b.health.doctor()).findings.map((f) => f.code)).toContain("snapshot_mismatch");
    } finally {
      await b.close();
    }
  });
});

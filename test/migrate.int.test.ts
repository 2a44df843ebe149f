/**
 * The SQLite migrator: several processes opening a brand-new workspace at once, a database
 * from a newer Baton, and a migration whose SQL fails. The database must never end up
 * half-migrated or migrated twice.
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { SqliteBackend } from "../src/backend/sqlite/sqlite-backend.js";
import { SQLITE_MIGRATIONS } from "../src/backend/sqlite/sqlite-migrations.js";
import { openBaton, servicesOf } from "../src/compose.js";

import { killAll, type LineChild, spawnFixture, waitExit } from "./child-process.js";
import { cleanupDirs, tempDir } from "./helpers.js";

const LATEST = Math.max(...SQLITE_MIGRATIONS.map((m) => m.version));
const ROUNDS = 3;
const PROCS = 6;

afterAll(() => cleanupDirs());

const dbPath = (root: string) => join(root, ".baton", "baton.db");

/** `SELECT version, count(*) FROM baton_migrations GROUP BY version`, or [] when the table is missing. */
function migrationRows(path: string): { version: number; n: number }[] {
  const db = new Database(path, { readonly: true });
  try {
    const has = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'baton_migrations'").get();
    if (!has) return [];
    return db.prepare("SELECT version, count(*) AS n FROM baton_migrations GROUP BY version ORDER BY version").all() as {
      version: number;
      n: number;
    }[];
  } finally {
    db.close();
  }
}

function tableNames(path: string): string[] {
  const db = new Database(path, { readonly: true });
  try {
    return (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]).map((r) => r.name);
  } finally {
    db.close();
  }
}

const allOnce = SQLITE_MIGRATIONS.map((m) => ({ version: m.version, n: 1 })).sort((a, b) => a.version - b.version);

interface OpenReport {
  ok: boolean;
  stage?: "open" | "use";
  name?: string;
  code?: string;
  message?: string;
  migration?: { from: number; to: number; applied: { version: number; name: string }[] };
  sessionId?: string;
}

describe("migrating a new workspace from several processes at once", () => {
  it(`${PROCS} processes open a brand-new workspace together (${ROUNDS} rounds): the schema is migrated exactly once`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const root = tempDir();
      expect(existsSync(join(root, ".baton")), "expected a brand-new workspace").toBe(false);
      const children: LineChild[] = [];
      try {
        for (let p = 0; p < PROCS; p++) children.push(spawnFixture("open-workspace.mjs", [root, `p${p}`]));
        await Promise.all(children.map((c, p) => c.waitForLine((l) => l === "ready", 30_000, `"ready" (process ${p})`)));
        for (const c of children) c.sendLast("go\n");
        const exits = await Promise.all(children.map((c) => waitExit(c, 40_000)));

        const reports = children.map((c, p): OpenReport => {
          const line = c.lines.find((l) => l.startsWith("{"));
          expect(exits[p], `round ${round} process ${p}: expected exit 0; stderr:\n${c.stderr()}`).toEqual({ code: 0, signal: null });
          if (!line) throw new Error(`round ${round} process ${p}: expected a JSON report; found ${JSON.stringify(c.lines)}`);
          return JSON.parse(line) as OpenReport;
        });
        for (const [p, r] of reports.entries()) {
          if (r.ok) continue;
          expect(
            { name: r.name, code: ["migration_failed", "storage_busy"].includes(r.code ?? "") ? "expected" : r.code },
            `round ${round} process ${p}: expected success or a BatonError migration_failed/storage_busy; found ${JSON.stringify(r)}`,
          ).toEqual({ name: "BatonError", code: "expected" });
        }
        const ok = reports.filter((r) => r.ok);
        expect(
          ok.length,
          `round ${round}: expected at least one process to open the workspace; found ${JSON.stringify(reports)}`,
        ).toBeGreaterThan(0);
        const appliers = ok.filter((r) => (r.migration?.applied.length ?? 0) > 0);
        expect(appliers.length, `round ${round}: expected at most one process to report applying migrations`).toBeLessThanOrEqual(1);
        if (reports.every((r) => r.ok || r.stage === "open")) {
          expect(appliers.length, `round ${round}: expected exactly one process to have applied the migrations`).toBe(1);
          expect(appliers[0]?.migration?.applied.map((a) => a.version)).toEqual(allOnce.map((m) => m.version));
        }
        for (const r of ok) expect(r.migration?.to, `round ${round}: expected every opener to end at schema ${LATEST}`).toBe(LATEST);

        const path = dbPath(root);
        expect(migrationRows(path), `round ${round}: expected each migration recorded exactly once, up to ${LATEST}`).toEqual(allOnce);
        expect(tableNames(path), `round ${round}: expected the full schema`).toEqual(
          expect.arrayContaining(["baton_migrations", "diagnostics", "events", "sessions", "snapshots"]),
        );
        const db = new Database(path, { readonly: true });
        try {
          expect(db.pragma("integrity_check", { simple: true }), `round ${round}: expected SQLite integrity_check to pass`).toBe("ok");
          const sessions = (db.prepare("SELECT id FROM sessions ORDER BY id").all() as { id: string }[]).map((s) => s.id);
          expect(sessions, `round ${round}: expected one session per successful opener`).toEqual(ok.map((r) => r.sessionId).sort());
        } finally {
          db.close();
        }
        const baton = await openBaton({ root });
        try {
          expect(
            (servicesOf(baton).backend as SqliteBackend).migration,
            `round ${round}: expected a later open to find nothing to migrate`,
          ).toEqual({
            from: LATEST,
            to: LATEST,
            applied: [],
          });
        } finally {
          await baton.close();
        }
      } finally {
        await killAll(children);
      }
    }
  });
});

describe("opening a database from a newer Baton", () => {
  it("fails with schema_too_new and changes nothing", async () => {
    const root = tempDir();
    const baton = await openBaton({ root });
    await baton.sessions.start({ flow: "task", id: "kept" });
    await baton.close();
    const path = dbPath(root);
    const db = new Database(path);
    db.prepare("INSERT INTO baton_migrations (version, name, applied_at) VALUES (?, 'from-the-future', ?)").run(
      LATEST + 1,
      new Date().toISOString(),
    );
    db.close();
    const hash = () => createHash("sha256").update(readFileSync(path)).digest("hex");
    const before = { file: hash(), rows: migrationRows(path), tables: tableNames(path) };

    await expect(openBaton({ root }), "expected openBaton to refuse a newer schema").rejects.toMatchObject({
      name: "BatonError",
      code: "schema_too_new",
    });
    expect(() => new SqliteBackend({ path }), "expected SqliteBackend to refuse a newer schema").toThrow(
      expect.objectContaining({ code: "schema_too_new" }),
    );

    expect({ file: hash(), rows: migrationRows(path), tables: tableNames(path) }, "expected the database file to be unchanged").toEqual(
      before,
    );
    expect(before.rows.at(-1), "expected the future version to still be recorded").toEqual({ version: LATEST + 1, n: 1 });
  });
});

describe("a migration whose SQL fails", () => {
  const bad = { version: 99, name: "bad", sql: "CREATE TABLE oops (;" };
  // The first statement succeeds, the second fails: the first must be rolled back too.
  const halfBad = {
    version: 99,
    name: "half-bad",
    sql: "CREATE TABLE half_done (x INTEGER); UPDATE sessions SET title = 'half-migrated'; CREATE TABLE oops (;",
  };

  it("fails with migration_failed and leaves an up-to-date database at its version", async () => {
    const root = tempDir();
    const baton = await openBaton({ root });
    await baton.sessions.start({ flow: "task", id: "kept", title: "before" });
    await baton.close();
    const path = dbPath(root);
    const tablesBefore = tableNames(path);

    for (const m of [bad, halfBad]) {
      expect(() => new SqliteBackend({ path, migrations: [...SQLITE_MIGRATIONS, m] }), `expected migration "${m.name}" to fail`).toThrow(
        expect.objectContaining({ name: "BatonError", code: "migration_failed" }),
      );
      expect(migrationRows(path), `after "${m.name}": expected the recorded versions unchanged (up to ${LATEST})`).toEqual(allOnce);
      expect(tableNames(path), `after "${m.name}": expected no table from the failed migration`).toEqual(tablesBefore);
    }

    const again = await openBaton({ root });
    try {
      expect((servicesOf(again).backend as SqliteBackend).migration.applied, "expected nothing left to apply").toEqual([]);
      const kept = (await again.sessions.list()).find((x) => x.id === "kept");
      expect(kept?.title, "expected the failed migration's UPDATE rolled back").toBe("before");
      expect((await again.sessions.snapshot("kept")).lastSeq, "expected the existing session intact").toBe(1);
    } finally {
      await again.close();
    }
  });

  it("on a new database, fails with migration_failed and leaves it unmigrated; a later open migrates it", async () => {
    const root = tempDir();
    const path = join(root, "fresh.db");
    expect(() => new SqliteBackend({ path, migrations: [...SQLITE_MIGRATIONS, halfBad] }), "expected the migration to fail").toThrow(
      expect.objectContaining({ name: "BatonError", code: "migration_failed" }),
    );
    expect(migrationRows(path), "expected no migration recorded: every migration of the failed run is rolled back").toEqual([]);
    expect(tableNames(path), "expected no tables left from the failed run").toEqual([]);

    const good = new SqliteBackend({ path });
    try {
      expect(good.migration, "expected a later open to apply every migration").toEqual({
        from: 0,
        to: LATEST,
        applied: SQLITE_MIGRATIONS.map((m) => ({ version: m.version, name: m.name })),
      });
    } finally {
      await good.close();
    }
    expect(migrationRows(path)).toEqual(allOnce);
  });
});

describe("a migration numbered below one already applied", () => {
  it("still runs: the migrator applies every missing version, not only those above the highest", async () => {
    const path = join(tempDir(), "gap.db");
    const base = SQLITE_MIGRATIONS.filter((m) => m.version === 1);
    const late = { version: 900, name: "late", sql: "CREATE TABLE late_t (x INTEGER)" };
    const gap = { version: 899, name: "gap", sql: "CREATE TABLE gap_t (x INTEGER)" };
    await new SqliteBackend({ path, migrations: [...base, late] }).close();
    const b = new SqliteBackend({ path, migrations: [...base, gap, late] });
    expect(b.migration.applied).toEqual([{ version: 899, name: "gap" }]);
    await b.close();
    const db = new Database(path, { readonly: true });
    try {
      const versions = (db.prepare("SELECT version FROM baton_migrations ORDER BY version").all() as { version: number }[]).map(
        (r) => r.version,
      );
      expect(versions).toEqual([1, 899, 900]);
      expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'gap_t'").get()).toBeTruthy();
    } finally {
      db.close();
    }
  });

  it("migration 18: the sessions index names status and created_at, which an append never moves, and the list still uses it", async () => {
    const root = tempDir();
    const b = await openBaton({ root });
    await b.sessions.start({ flow: "task", id: "s" });
    await b.events.append("s", { type: "note:added", actor: "agent", data: { text: "one" } });
    await b.close();
    const db = new Database(dbPath(root), { readonly: true });
    try {
      const columns = (db.prepare("PRAGMA index_info(sessions_by_status)").all() as { name: string }[]).map((c) => c.name);
      expect(columns).toEqual(["status", "created_at"]);
      // The listing's filter and order still use it.
      const plan = (
        db.prepare("EXPLAIN QUERY PLAN SELECT * FROM sessions WHERE status = 'active' ORDER BY created_at, id").all() as {
          detail: string;
        }[]
      ).map((r) => r.detail);
      expect(plan.join("\n")).toMatch(/USING INDEX sessions_by_status/);
    } finally {
      db.close();
    }
  });
});

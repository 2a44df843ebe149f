/**
 * PostgreSQL migration 17: the sessions' titles an earlier version stored in clear are taken
 * again, redacted, from their first events; a first event whose data cannot be read drops the
 * title rather than keeping it in clear, and the migration still completes. Skipped without
 * PostgreSQL server binaries unless BATON_TEST_POSTGRES=require (CI sets it).
 */
import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { PostgresBackend, projectSchema } from "../src/backend/postgres/pg-backend.js";
import { openBaton } from "../src/compose.js";
import type { Baton } from "../src/index.js";
import { tempDir } from "./helpers.js";
import { type PgCluster, pgAvailable } from "./pg-cluster.js";
import { clusterForSuite } from "./pg-suite.js";

const TOKEN = "ghp_CANARYgithub0123456789abcdefghijklmn";

describe.skipIf(!pgAvailable())("PostgreSQL migration 17 (titles from first events)", () => {
  const open: Baton[] = [];
  const clusterOf = clusterForSuite(open);
  let cluster: PgCluster;
  beforeAll(() => {
    cluster = clusterOf();
  });

  it("redacts a title stored in clear, drops one whose first event is unreadable, keeps sessions without one", async () => {
    const project = `titles_${process.pid}`;
    const root = tempDir("titles-");
    const b = await openBaton({ root, backend: await PostgresBackend.open({ url: cluster.url, project }) });
    for (const id of ["s1", "s2"]) await b.sessions.start({ flow: "task", id, title: `deploy with ${TOKEN}` });
    await b.sessions.start({ flow: "task", id: "s3" });
    await b.close();
    // The rows as an earlier version left them: titles in clear, the schema at 16; s2's first event damaged.
    const schema = projectSchema(project);
    const c = new pg.Client({ connectionString: cluster.url });
    await c.connect();
    try {
      await c.query(`UPDATE ${schema}.sessions SET title = $1 WHERE title IS NOT NULL`, [`deploy with ${TOKEN}`]);
      await c.query(`UPDATE ${schema}.events SET data = 'not json' WHERE session_id = 's2' AND seq = 1`);
      await c.query(`DELETE FROM ${schema}.baton_migrations WHERE version = 17`);
    } finally {
      await c.end();
    }
    const again = await openBaton({ root, backend: await PostgresBackend.open({ url: cluster.url, project }) });
    open.push(again);
    const titles = Object.fromEntries((await again.sessions.list()).map((s) => [s.id, s.title]));
    expect(titles.s1).toMatch(/^deploy with /);
    expect(titles.s1).not.toContain(TOKEN);
    expect(titles.s2).toBeNull();
    expect(titles.s3).toBeNull();
  });
});

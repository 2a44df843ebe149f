/**
 * A backend may run a write transaction's callback again after rolling it back (PostgreSQL,
 * after a deadlock): what a checkpoint reports must count what its committed run did, once.
 * A real SQLite store whose write transactions each run twice, the first rolled back.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { SqliteBackend } from "../src/backend/sqlite/sqlite-backend.js";
import { openBaton } from "../src/compose.js";
import { cleanupDirs, rerunning, tempDir } from "./helpers.js";

afterAll(() => cleanupDirs());

it("a whole-tree checkpoint whose transaction was re-run counts each blob it stored once", async () => {
  const root = tempDir();
  const b0 = await openBaton({ root });
  await b0.close();
  const backend = rerunning(new SqliteBackend({ path: join(root, ".baton", "baton.db") }));
  const b = await openBaton({ root, backend });
  await b.sessions.start({ flow: "task", id: "s" });
  for (const name of ["a", "b", "c"]) writeFileSync(join(root, `${name}.txt`), `${name}\n`);
  const tree = await b.checkpoints.create("s", { all: true });
  expect(backend.reruns(), "the wrapper re-ran write transactions").toBeGreaterThan(0);
  expect(tree.stats).toMatchObject({ files: 3, read: 3, blobsStored: 3 });
  writeFileSync(join(root, "d.txt"), "d\n");
  expect((await b.checkpoints.create("s", { files: ["d.txt", "a.txt"] })).stats.blobsStored).toBe(1);
  await b.close();
});

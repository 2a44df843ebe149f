/**
 * Private files (`.env`, keys) on a store shared across workspaces (PostgreSQL, a real cluster):
 * their content stays in the workspace that checkpointed it, so another workspace (on this host,
 * e.g. a git worktree, or on another) keeps its own copy when rolling back and names the file in
 * a checkpoint comparison instead of failing; and doctor finds private files whose content an
 * older Baton (or a pattern added later) left as rows of the shared store. Skipped without
 * PostgreSQL server binaries unless BATON_TEST_POSTGRES=require.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { PostgresBackend } from "../src/backend/postgres/pg-backend.js";
import { openBaton } from "../src/compose.js";
import type { Baton } from "../src/index.js";
import type { ProcessFacts } from "../src/platform/process-facts.js";
import { tempDir } from "./helpers.js";
import { type PgCluster, pgAvailable } from "./pg-cluster.js";
import { clusterForSuite } from "./pg-suite.js";

const available = pgAvailable();

let n = 0;

/** A secret the redactor recognises (a provider key), and one line of it in a `.env`. */
const SECRET = "sk-proj-Q7vW9xZ2pL4mN8rTq7Vw9xZ2pL4mN8rTa1B2c3D4";

describe.skipIf(!available)("private files on a shared store", () => {
  const open: Baton[] = [];

  const clusterOf = clusterForSuite(open);
  let cluster: PgCluster;
  beforeAll(() => {
    cluster = clusterOf();
  });

  async function workspace(host: string, project: string, opts: { private?: string[] } = {}, root = tempDir(`priv-${host}-`)) {
    const facts: ProcessFacts = { host: () => host, machine: () => undefined, alive: () => true, startTime: () => "1" };
    const backend = await PostgresBackend.open({ url: cluster.url, project });
    const b = await openBaton({ root, backend, processFacts: facts, ...(opts.private ? { checkpoints: { private: opts.private } } : {}) });
    open.push(b);
    return b;
  }

  it("a second workspace on the same host keeps its own .env when rolling back to the first one's checkpoint, and says where it is", async () => {
    const p = `priv_${process.pid}_${n++}`;
    const one = await workspace("host-a", p);
    const two = await workspace("host-a", p);
    for (const [b, who] of [
      [one, "one"],
      [two, "two"],
    ] as const) {
      writeFileSync(join(b.root, ".env"), `TOKEN=${who}\n`);
      writeFileSync(join(b.root, "a.txt"), `a in ${who}\n`);
    }
    await one.sessions.start({ flow: "task", id: "s" });
    const cp = await one.checkpoints.create("s", { files: [".env", "a.txt"] });
    expect(cp.checkpoint.files.map((f) => [f.path, "local" in f])).toEqual([
      [".env", true],
      ["a.txt", false],
    ]);
    for (const dryRun of [true, false]) {
      const r = await two.checkpoints.rollback("s", { to: cp.checkpoint.id, dryRun });
      expect(
        r.changes.map((c) => [c.path, c.action]),
        `dry run: ${dryRun}`,
      ).toEqual([
        [".env", "kept"],
        ["a.txt", "restore"],
      ]);
      expect(r.changes[0]?.reason).toContain(`host-a in ${one.root}`);
      expect(r.warnings.join("\n")).toMatch(new RegExp(`1 private file\\(s\\) were left as they are.*host-a in ${one.root}.*\\(\\.env\\)`));
    }
    expect(readFileSync(join(two.root, ".env"), "utf8"), "its own .env is untouched").toBe("TOKEN=two\n");
    expect(readFileSync(join(two.root, "a.txt"), "utf8")).toBe("a in one\n");
  });

  it("comparing another host's checkpoints names a changed private file instead of failing; diffs are redacted", async () => {
    const p = `priv_${process.pid}_${n++}`;
    const a = await workspace("host-a", p);
    const b = await workspace("host-b", p);
    await a.sessions.start({ flow: "task", id: "s" });
    writeFileSync(join(a.root, ".env"), "TOKEN=one\n");
    writeFileSync(join(a.root, "a.txt"), `OPENAI_API_KEY=${SECRET}\none\n`);
    const c1 = await a.checkpoints.create("s", { all: true });
    writeFileSync(join(a.root, ".env"), "TOKEN=two\n");
    writeFileSync(join(a.root, "a.txt"), `OPENAI_API_KEY=${SECRET}\ntwo\n`);
    const c2 = await a.checkpoints.create("s", { all: true });

    const onA = await a.checkpoints.diff(c1.checkpoint.id, c2.checkpoint.id);
    expect(onA.files.map((f) => [f.path, f.state])).toEqual([
      [".env", "changed"],
      ["a.txt", "changed"],
    ]);
    expect(onA.files[0]?.diff, "this workspace holds both versions").toContain("+++ b/.env");
    const onB = await b.checkpoints.diff(c1.checkpoint.id, c2.checkpoint.id);
    expect(onB.files[0]).toEqual({
      path: ".env",
      state: "changed",
      note: expect.stringContaining(`private file kept on host-a in ${a.root}`),
    });
    expect(onB.files[1]).toMatchObject({ path: "a.txt", state: "changed", diff: expect.stringContaining("+two") });
    for (const d of [onA, onB]) {
      const text = JSON.stringify(d);
      expect(text).not.toContain(SECRET);
      expect(text).toContain("[redacted:");
    }
  });

  it("doctor finds private files whose content is a row of the shared store, and says how they go", async () => {
    const p = `priv_${process.pid}_${n++}`;
    const root = tempDir("priv-old-");
    // Checkpointed while .env was not private (as before private files existed, or before a pattern named it).
    const before = await workspace("host-a", p, { private: ["!.env"] }, root);
    writeFileSync(join(root, ".env"), "TOKEN=old\n");
    writeFileSync(join(root, "deploy.pem"), "key\n");
    await before.sessions.start({ flow: "task", id: "s" });
    await before.checkpoints.create("s", { all: true });
    expect((await before.health.doctor()).findings.filter((f) => f.code === "private_blob_shared")).toEqual([]);
    await before.close();
    const now = await workspace("host-a", p, {}, root);
    const found = (await now.health.doctor()).findings.filter((f) => f.code === "private_blob_shared");
    expect(found).toEqual([
      expect.objectContaining({
        check: "blobs",
        severity: "warning",
        safe: false,
        evidence: { versions: 1, paths: [".env"], sessions: ["s"] },
        message: expect.stringMatching(/1 private file\(s\).*\.env.*rows of the shared store/),
        fix: expect.stringMatching(/retention prunes those checkpoints and `baton gc`.*Deleting the rows by hand breaks/),
      }),
    ]);
    // A new checkpoint keeps .env local; the old version stays until its checkpoint is pruned.
    writeFileSync(join(root, ".env"), "TOKEN=new\n");
    await now.checkpoints.create("s", { all: true });
    expect((await now.health.doctor()).findings.filter((f) => f.code === "private_blob_shared").map((f) => f.evidence)).toEqual([
      { versions: 1, paths: [".env"], sessions: ["s"] },
    ]);
  });
});

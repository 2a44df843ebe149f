/**
 * Blobs on a store shared across hosts (PostgreSQL, a real cluster): `baton gc` racing a
 * checkpoint that deduplicates against an old orphan blob; what a missing blob's message names
 * there; doctor checking this workspace's own private blobs. Skipped without PostgreSQL server
 * binaries unless BATON_TEST_POSTGRES=require.
 */
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import type { Backend, StoreTx } from "../src/backend/contract.js";
import { PostgresBackend, projectSchema } from "../src/backend/postgres/pg-backend.js";
import { openBaton, servicesOf } from "../src/compose.js";
import { sha256 } from "../src/core/canonical.js";
import { type Baton, isBatonError } from "../src/index.js";
import type { ProcessFacts } from "../src/platform/process-facts.js";
import { blobFile, packBlob } from "../src/services/time-travel/blobs.js";
import { tempDir } from "./helpers.js";
import { type PgCluster, pgAvailable } from "./pg-cluster.js";
import { clusterForSuite } from "./pg-suite.js";

const available = pgAvailable();

let n = 0;

/**
 * `inner`, whose write transactions stop right after `listBlobs` (the collector has decided
 * what is unreferenced) until `release` is called; `reached` resolves when one stopped there.
 */
function pausedAfterListing(inner: Backend): { backend: Backend; reached: Promise<void>; release: () => void } {
  let release!: () => void;
  const paused = new Promise<void>((r) => (release = r));
  let reached!: () => void;
  const atPause = new Promise<void>((r) => (reached = r));
  const wrap = <T extends object>(target: T, swap: (prop: string | symbol) => unknown): T =>
    new Proxy(target, {
      get(t, p) {
        const s = swap(p);
        if (s !== undefined) return s;
        const v = Reflect.get(t, p, t) as unknown;
        return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(t) : v;
      },
    });
  const backend = wrap(inner, (p) =>
    p !== "transaction"
      ? undefined
      : (mode: "read" | "write", fn: (tx: StoreTx) => Promise<unknown>, o?: never) =>
          inner.transaction(
            mode,
            (tx) => {
              const cps = wrap(tx.checkpoints, (q) =>
                q !== "listBlobs"
                  ? undefined
                  : async () => {
                      const r = await tx.checkpoints.listBlobs();
                      reached();
                      await paused;
                      return r;
                    },
              );
              return fn(wrap(tx, (q) => (q === "checkpoints" ? cps : undefined)));
            },
            o,
          ),
  );
  return { backend, reached: atPause, release };
}

describe.skipIf(!available)("blobs on a shared store", () => {
  const open: Baton[] = [];

  const clusterOf = clusterForSuite(open);
  let cluster: PgCluster;
  beforeAll(() => {
    cluster = clusterOf();
  });

  async function host(name: string, project: string, root = tempDir(`blobs-${name}-`), backend?: Backend): Promise<Baton> {
    const facts: ProcessFacts = { host: () => name, machine: () => undefined, alive: () => true, startTime: () => "1" };
    const b = await openBaton({
      root,
      backend: backend ?? (await PostgresBackend.open({ url: cluster.url, project })),
      processFacts: facts,
    });
    open.push(b);
    return b;
  }

  /** Whether some PostgreSQL backend of the cluster waits on a lock now. */
  async function someoneWaits(): Promise<boolean> {
    const c = new pg.Client({ connectionString: cluster.url });
    await c.connect();
    try {
      return (await c.query("SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted")).rows[0].n > 0;
    } finally {
      await c.end();
    }
  }

  it("gc that decided before a checkpoint reused an old orphan blob does not delete it under the checkpoint", async () => {
    const project = `blobs_${process.pid}_${n++}`;
    const root = tempDir("blobs-race-");
    const writer = await host("h", project, root);
    await writer.sessions.start({ flow: "task", id: "s" });
    // An orphan blob stored two hours ago (a checkpoint that stored ahead and died, say).
    const content = Buffer.from("an orphan's content\n");
    const hash = sha256(content);
    await servicesOf(writer).backend.transaction("write", (tx) =>
      tx.checkpoints.putBlob(hash, packBlob(content), Date.now() - 2 * 3600_000),
    );
    const gc = pausedAfterListing(await PostgresBackend.open({ url: cluster.url, project }));
    const collector = await host("h", project, root, gc.backend);
    const collecting = collector.checkpoints.collectGarbage();
    await gc.reached;
    // Meanwhile a checkpoint of a file with that content: it finds the blob stored and names it.
    writeFileSync(join(root, "a.txt"), content);
    const creating = writer.checkpoints.create("s", { files: ["a.txt"] });
    // Let the checkpoint go as far as it can while the collector is stopped: it commits, or it
    // waits for the collector's lock.
    let settled = false;
    void creating.then(
      () => (settled = true),
      () => (settled = true),
    );
    while (!settled && !(await someoneWaits())) await new Promise((r) => setTimeout(r, 20));
    gc.release();
    const cp = await creating;
    await collecting;
    writeFileSync(join(root, "a.txt"), "changed since\n");
    const back = await writer.checkpoints.rollback("s", { to: cp.checkpoint.id, dryRun: true }).then(
      () => "restorable",
      (e: Error) => `${(e as { code?: string }).code}: ${e.message}`,
    );
    expect(back, `checkpoint ${cp.checkpoint.id} after gc`).toBe("restorable");
  });

  it("a missing blob names the PostgreSQL store, not a SQLite file; a private one names the host and workspace holding it", async () => {
    const project = `blobs_${process.pid}_${n++}`;
    const a = await host("host-a", project);
    const b = await host("host-b", project);
    writeFileSync(join(a.root, "notes.txt"), "notes\n");
    writeFileSync(join(a.root, ".env"), "TOKEN=a\n");
    await a.sessions.start({ flow: "task", id: "s" });
    const cp = await a.checkpoints.create("s", { files: ["notes.txt", ".env"] });
    const notes = cp.checkpoint.files.find((f) => f.path === "notes.txt") as { hash: string };
    const env = cp.checkpoint.files.find((f) => f.path === ".env") as { hash: string };
    rmSync(blobFile(join(a.root, ".baton", "blobs"), env.hash));
    for (const r of [a.root, b.root]) {
      writeFileSync(join(r, "notes.txt"), "changed\n");
      writeFileSync(join(r, ".env"), "TOKEN=changed\n");
    }
    // A's own private blob lost from A's workspace: the message names where it was kept.
    const lost = await a.checkpoints.rollback("s", { to: cp.checkpoint.id, dryRun: true }).catch((e) => e);
    expect(isBatonError(lost, "blob_missing"), String(lost)).toBe(true);
    expect(lost.message).toMatch(/private file/);
    expect(lost.message).toContain("host-a");
    expect(lost.message).toContain(a.root);
    expect(lost.message).not.toMatch(/baton\.db/);
    // The shared blob lost from the store (damage): B's hand-over names the PostgreSQL store.
    await servicesOf(a).backend.transaction("write", async (tx) => void (await tx.checkpoints.deleteBlobs([notes.hash])));
    const missing = await b.checkpoints.rollback("s", { to: cp.checkpoint.id, dryRun: true, otherHost: true }).catch((e) => e);
    expect(isBatonError(missing, "blob_missing"), String(missing)).toBe(true);
    expect(missing.message).not.toMatch(/baton\.db/);
    expect(missing.message).toContain(`schema ${projectSchema(project)}`);
    // Doctor on A checks A's own private blobs, which the store never holds.
    const found = (await a.health.doctor()).findings.filter((f) => f.code === "blob_missing");
    expect(found.map((f) => f.evidence)).toEqual([expect.objectContaining({ count: 2 })]);
    // B's doctor misses only the shared blob: A's private ones are A's.
    const onB = (await b.health.doctor()).findings.filter((f) => f.code === "blob_missing");
    expect(onB.map((f) => f.evidence)).toEqual([expect.objectContaining({ count: 1 })]);
  });
});

/**
 * Two hosts, one project (issue 12 §3): two workspaces with different host identities on one
 * PostgreSQL cluster. Pids cannot be checked across hosts, so heartbeats and expiry decide.
 * Each host's workspace keeps its own caches in the store (stat cache, lessons index), and
 * private files (`.env`, keys: issue 11) checkpointed on one host keep their content on it.
 * A shared fake clock drives expiry; nothing sleeps. Skipped without PostgreSQL binaries unless
 * BATON_TEST_POSTGRES=require.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Backend } from "../src/backend/contract.js";
import { PostgresBackend, projectSchema } from "../src/backend/postgres/pg-backend.js";
import { openBaton } from "../src/compose.js";
import { type Baton, isBatonError } from "../src/index.js";
import type { ProcessFacts } from "../src/services/process-facts.js";
import { cleanupDirs, tempDir } from "./helpers.js";
import { type PgCluster, pgAvailable, startCluster } from "./pg-cluster.js";

const available = pgAvailable();

let cluster: PgCluster;
let failed = false;
let n = 0;

/** The backend, counting its write transactions. */
function counting(inner: Backend): Backend & { writes: () => number } {
  let writes = 0;
  return new Proxy(inner, {
    get(target, prop) {
      if (prop === "writes") return () => writes;
      if (prop === "transaction")
        return (mode: "read" | "write", fn: never, opts?: never) => {
          if (mode === "write") writes++;
          return target.transaction(mode, fn, opts);
        };
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  }) as Backend & { writes: () => number };
}

describe.skipIf(!available)("two hosts, one project", () => {
  const open: Baton[] = [];
  const clock = { ms: Date.parse("2026-03-01T00:00:00Z") };
  const now = () => new Date(clock.ms);

  beforeAll(async () => {
    cluster = await startCluster();
  });
  afterEach(async (ctx) => {
    if (ctx.task.result?.state === "fail") failed = true;
    for (const b of open.splice(0)) await b.close();
  });
  afterAll(() => {
    cluster?.stop(failed);
    cleanupDirs();
  });

  /** Host `name`: its own workspace root and process facts (every pid alive: only expiry can free). */
  async function host(name: string, project: string, machine?: string): Promise<Baton> {
    const facts: ProcessFacts = { host: () => name, machine: () => machine, alive: () => true, startTime: () => "1" };
    const backend = counting(await PostgresBackend.open({ url: cluster.url, project }));
    const b = await openBaton({ root: tempDir(`host-${name}-`), backend, now, processFacts: facts });
    writeCounts.set(b, backend.writes);
    open.push(b);
    return b;
  }
  const writeCounts = new WeakMap<Baton, () => number>();
  /** How many write transactions host `b` has run. */
  const writes = (b: Baton) => (writeCounts.get(b) as () => number)();

  /** Every row of every table of the project's schema as text (bytea as hex), and how many blobs hold `needle`'s bytes. */
  async function database(p: string, needle: string): Promise<{ dump: string; blobsWith: number }> {
    const schema = projectSchema(p);
    const c = new pg.Client({ connectionString: cluster.url });
    await c.connect();
    try {
      const tables = await c.query("SELECT table_name FROM information_schema.tables WHERE table_schema = $1", [schema]);
      expect(tables.rows.map((r) => r.table_name)).toEqual(expect.arrayContaining(["blobs", "manifest_runs", "events"]));
      const parts: string[] = [];
      for (const { table_name } of tables.rows) {
        const q = await c.query(`SELECT coalesce(string_agg(t::text, E'\\n'), '') AS rows FROM "${schema}"."${table_name}" t`);
        parts.push(`-- ${table_name}\n${q.rows[0].rows}`);
      }
      const hits = await c.query(`SELECT count(*)::int AS n FROM "${schema}".blobs WHERE position($1::bytea in data) > 0`, [
        Buffer.from(needle),
      ]);
      return { dump: parts.join("\n"), blobsWith: hits.rows[0].n as number };
    } finally {
      await c.end();
    }
  }

  async function pair(): Promise<[Baton, Baton]> {
    const project = `two_${process.pid}_${n++}`;
    return [await host("host-a", project), await host("host-b", project)];
  }

  it("work leased on A is not delivered on B while the lease lives, and is redelivered on B once it expires", async () => {
    const [a, b] = await pair();
    await a.sessions.start({ flow: "live-variant", id: "lv" });
    await a.events.append("lv", { type: "steer", actor: "browser", data: { text: "bigger" } });
    const onA = await a.work.lease("agent-a", { leaseMs: 60_000 });
    expect(onA?.item.kind).toBe("steer");
    expect(await b.work.lease("agent-b")).toBeUndefined();
    clock.ms += 61_000;
    const onB = await b.work.lease("agent-b");
    expect(onB?.item.itemId).toBe(onA?.item.itemId);
    expect(onB?.attempt).toBe(2);
    const late = await a.work.ack(onA!.leaseId).catch((e) => e);
    expect(isBatonError(late, "lease_lost")).toBe(true);
    await b.work.ack(onB!.leaseId);
  });

  it("a lock held on A blocks B; once A stops heartbeating, B reclaims it with the epoch fenced", async () => {
    const [a, b] = await pair();
    await a.sessions.start({ flow: "task", id: "t" });
    const held = await a.locks.acquire("deploy", { ttlMs: 30_000 });
    const blocked = await b.locks.acquire("deploy").catch((e) => e);
    expect(isBatonError(blocked, "lock_held")).toBe(true);
    clock.ms += 31_000;
    const taken = await b.locks.acquire("deploy", { ttlMs: 30_000 });
    expect(taken).toMatchObject({ epoch: held.epoch + 1, reclaimed: { proof: "expired" } });
    const fenced = await a.locks.append("deploy", held.epoch, "t", { type: "note:added", data: { text: "late" } }).catch((e) => e);
    expect(isBatonError(fenced, "lock_lost")).toBe(true);
    await b.locks.append("deploy", taken.epoch, "t", { type: "note:added", data: { text: "fresh" } });
  });

  it("the same machine under a new host name restores its own checkpoint without --other-host; another machine still needs it", async () => {
    const project = `two_${process.pid}_${n++}`;
    const before = await host("old-name", project, "machine-1");
    writeFileSync(join(before.root, "notes.txt"), "v1\n");
    await before.sessions.start({ flow: "task", id: "t" });
    const cp = await before.checkpoints.create("t", { files: ["notes.txt"] });
    expect((await before.checkpoints.list("t"))[0]).toMatchObject({ host: "old-name", machine: "machine-1" });
    const renamed = await host("new-name", project, "machine-1");
    await renamed.checkpoints.rollback("t", { to: cp.checkpoint.id });
    expect(readFileSync(join(renamed.root, "notes.txt"), "utf8")).toBe("v1\n");
    const other = await host("new-name", project, "machine-2");
    const refused = await other.checkpoints.rollback("t", { to: cp.checkpoint.id }).catch((e) => e);
    expect(isBatonError(refused, "bad_input"), String(refused)).toBe(true);
    expect(existsSync(join(other.root, "notes.txt"))).toBe(false);
  });

  it("checkpoints record their host and workspace; restoring A's checkpoint on B needs an explicit flag", async () => {
    const [a, b] = await pair();
    writeFileSync(join(a.root, "notes.txt"), "written on A\n");
    await a.sessions.start({ flow: "task", id: "t" });
    const cp = await a.checkpoints.create("t", { files: ["notes.txt"] });
    const seen = (await b.checkpoints.list("t")).find((c) => c.id === cp.checkpoint.id);
    expect(seen).toMatchObject({ host: "host-a", workspace: a.root });
    const refused = await b.checkpoints.rollback("t", { to: cp.checkpoint.id }).catch((e) => e);
    expect(isBatonError(refused, "bad_input"), String(refused)).toBe(true);
    expect(refused.message).toMatch(/host-a.*--other-host/);
    expect(existsSync(join(b.root, "notes.txt")), "nothing was restored").toBe(false);
    // A dry run shows what would happen; with the flag it restores into B's own workspace.
    expect((await b.checkpoints.rollback("t", { to: cp.checkpoint.id, dryRun: true })).dryRun).toBe(true);
    await b.checkpoints.rollback("t", { to: cp.checkpoint.id, otherHost: true });
    expect(readFileSync(join(b.root, "notes.txt"), "utf8")).toBe("written on A\n");
    // On A itself, its own checkpoint is an ordinary undo.
    writeFileSync(join(a.root, "notes.txt"), "changed on A\n");
    await a.checkpoints.rollback("t", { to: cp.checkpoint.id });
    expect(readFileSync(join(a.root, "notes.txt"), "utf8")).toBe("written on A\n");
  });

  it("a run on A shows its host on B; when its heartbeat stops B marks it crashed and gives its leased work back", async () => {
    const [a, b] = await pair();
    await a.sessions.start({ flow: "live-variant", id: "lv" });
    const run = await a.runs.start("lv", { agent: "claude-code", ttlMs: 60_000 });
    await a.events.append("lv", { type: "steer", actor: "browser", data: { text: "x" } });
    const lease = await a.work.lease(run.runId, { leaseMs: 600_000 });
    expect(lease).toBeDefined();
    expect(await b.runs.detectCrashed(), "alive while its heartbeat lives").toEqual([]);
    // The runs facet, read on B, says which host the run is on.
    expect((await b.sessions.snapshot("lv")).facets.runs).toEqual([
      expect.objectContaining({ runId: run.runId, host: "host-a", status: "running" }),
    ]);
    clock.ms += 61_000;
    const crashed = await b.runs.detectCrashed();
    expect(crashed.map((c) => [c.runId, c.proof])).toEqual([[run.runId, "expired"]]);
    expect(crashed[0]!.releasedWork.length).toBe(1);
    expect((await b.work.lease("agent-b"))?.item.itemId).toBe(lease!.item.itemId);
  });

  it("keeps a stat cache and a lessons index per host's workspace: neither host rebuilds the other's", async () => {
    const p = `two_${process.pid}_${n++}`;
    const a = { baton: await host("host-a", p) };
    const b = { baton: await host("host-b", p) };
    const old = new Date(Date.now() - 60_000);
    for (const h of [a, b]) {
      for (let i = 0; i < 30; i++) {
        const f = join(h.baton.root, "src", `f${i}.txt`);
        mkdirSync(join(h.baton.root, "src"), { recursive: true });
        writeFileSync(f, `${i}\n`);
        utimesSync(f, old, old);
      }
      await h.baton.sessions.start({ flow: "task", id: `s-${h === a ? "a" : "b"}` });
    }
    const tree = (h: typeof a) => h.baton.checkpoints.create(`s-${h === a ? "a" : "b"}`, { all: true });
    expect((await tree(a)).stats.read).toBe(30);
    expect((await tree(b)).stats.read, "B's files: its own inodes").toBe(30);
    // One shared cache would now hold B's entries and make A read everything again.
    expect((await tree(a)).stats).toMatchObject({ files: 30, read: 0, cached: 30 });
    expect((await tree(b)).stats).toMatchObject({ files: 30, read: 0, cached: 30 });

    writeFileSync(join(a.baton.root, "LESSONS.md"), "### on-a\n\nRegenerate the lockfile on host A.\n- scope: workspace\n");
    writeFileSync(join(b.baton.root, "LESSONS.md"), "### on-b\n\nRegenerate the schema on host B.\n- scope: workspace\n");
    const search = async (h: typeof a) => (await h.baton.lessons.search({ prompt: "regenerate" })).results.map((r) => r.lesson.id);
    expect(await search(a)).toEqual(["on-a"]);
    expect(await search(b)).toEqual(["on-b"]);
    const before = [writes(a.baton), writes(b.baton)];
    // Alternating searches: each host's index still holds its own file, so nothing is rebuilt.
    for (let i = 0; i < 3; i++) {
      expect(await search(a)).toEqual(["on-a"]);
      expect(await search(b)).toEqual(["on-b"]);
    }
    expect([writes(a.baton), writes(b.baton)], "searches that rebuilt an index").toEqual(before);
  });

  it("a .env checkpointed on A is restorable on A, never in the database; B's rollback says it cannot restore it and keeps B's", async () => {
    const p = `two_${process.pid}_${n++}`;
    const a = await host("host-a", p);
    const b = await host("host-b", p);
    // Short enough to be stored raw (not deflated) if it ever were stored: a dump would show it.
    const secret = "API_TOKEN=tok-q7Vw9xZ2pL4mN8rT";
    writeFileSync(join(a.root, ".env"), `${secret}\n`);
    writeFileSync(join(a.root, "notes.txt"), "written on A\n");
    mkdirSync(join(a.root, "keys"));
    writeFileSync(join(a.root, "keys", "deploy.pem"), "-----BEGIN PRIVATE KEY-----\nq7Vw9xZ2pL4mN8rT\n-----END PRIVATE KEY-----\n");
    await a.sessions.start({ flow: "task", id: "t" });
    const targeted = await a.checkpoints.create("t", { files: [".env", "notes.txt"] });
    expect(targeted.checkpoint.files).toEqual([
      expect.objectContaining({ path: ".env", local: true }),
      expect.not.objectContaining({ local: true }),
    ]);
    const tree = await a.checkpoints.create("t", { all: true });
    expect(tree.checkpoint.files.filter((f) => "local" in f).map((f) => f.path)).toEqual([".env", "keys/deploy.pem"]);

    // Restorable on A, from A's own .baton/blobs/.
    writeFileSync(join(a.root, ".env"), "API_TOKEN=changed\n");
    writeFileSync(join(a.root, "notes.txt"), "changed on A\n");
    await a.checkpoints.rollback("t", { to: targeted.checkpoint.id });
    expect(readFileSync(join(a.root, ".env"), "utf8")).toBe(`${secret}\n`);
    expect(readFileSync(join(a.root, "notes.txt"), "utf8")).toBe("written on A\n");

    // Not in the database: no blob holds its bytes or its hash, and no row of any table shows it.
    const envHash = createHash("sha256").update(`${secret}\n`).digest("hex");
    const db = await database(p, "q7Vw9xZ2pL4mN8rT");
    expect(db.dump).toContain(envHash); // named by the manifest (the proof the dump covers the runs)
    expect(db.dump).not.toContain("q7Vw9xZ2pL4mN8rT");
    expect(db.dump).not.toContain(Buffer.from("q7Vw9xZ2pL4mN8rT").toString("hex"));
    expect(db.blobsWith).toBe(0);
    // notes.txt is shared as before.
    expect(db.dump).toContain(Buffer.from("written on A").toString("hex"));

    // On B: the hand-over restores what the store holds and says plainly what it cannot.
    writeFileSync(join(b.root, ".env"), "API_TOKEN=b-own-token\n");
    writeFileSync(join(b.root, "notes.txt"), "written on B\n");
    const preview = await b.checkpoints.rollback("t", { to: targeted.checkpoint.id, dryRun: true, otherHost: true });
    expect(preview.changes.find((c) => c.path === ".env")).toMatchObject({ action: "kept", reason: expect.stringMatching(/host-a/) });
    const r = await b.checkpoints.rollback("t", { to: targeted.checkpoint.id, otherHost: true });
    expect(r.changes.find((c) => c.path === ".env")).toMatchObject({ action: "kept" });
    expect(r.changes.find((c) => c.path === "notes.txt")).toMatchObject({ action: "restore" });
    // keys/deploy.pem too: the tree checkpoint after the target is the oldest that knows it.
    expect(r.warnings.join("\n")).toMatch(/2 private file\(s\) were left as they are.*host-a.*\(\.env, keys\/deploy\.pem\)/);
    expect(readFileSync(join(b.root, ".env"), "utf8"), "B's own .env is untouched").toBe("API_TOKEN=b-own-token\n");
    expect(readFileSync(join(b.root, "notes.txt"), "utf8")).toBe("written on A\n");
    // A whole-tree hand-over keeps both private files and removes nothing it cannot put back.
    const whole = await b.checkpoints.rollback("t", { to: tree.checkpoint.id, otherHost: true });
    expect(
      whole.changes
        .filter((c) => c.action === "kept")
        .map((c) => c.path)
        .sort(),
    ).toEqual([".env", "keys/deploy.pem"]);
    expect(readFileSync(join(b.root, ".env"), "utf8")).toBe("API_TOKEN=b-own-token\n");
    // B's doctor does not take A's private blobs for missing ones.
    expect((await b.health.doctor()).findings.filter((f) => f.code === "blob_missing")).toEqual([]);
    expect((await a.health.doctor()).findings.filter((f) => f.code === "blob_missing" || f.code === "blob_orphan")).toEqual([]);
  });
});

/**
 * Two hosts, one project (issue 12 §3): two workspaces with different host identities on one
 * PostgreSQL cluster. Pids cannot be checked across hosts, so heartbeats and expiry decide.
 * A shared fake clock drives expiry; nothing sleeps. Skipped without PostgreSQL binaries unless
 * BATON_TEST_POSTGRES=require.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PostgresBackend } from "../src/backend/postgres/pg-backend.js";
import { type Baton, isBatonError, openBaton } from "../src/index.js";
import type { ProcessFacts } from "../src/services/process-facts.js";
import { cleanupDirs, tempDir } from "./helpers.js";
import { type PgCluster, pgAvailable, startCluster } from "./pg-cluster.js";

const available = pgAvailable();

let cluster: PgCluster;
let failed = false;
let n = 0;

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
    const backend = await PostgresBackend.open({ url: cluster.url, project });
    const b = await openBaton({ root: tempDir(`host-${name}-`), backend, now, processFacts: facts });
    open.push(b);
    return b;
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
});

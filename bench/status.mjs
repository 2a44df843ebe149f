/**
 * Reads on a long session: 100,000 journal events.
 *
 * - `baton.sessions.status({ sessionId })` in-process: the cached snapshot (checksum-verified) plus any
 *   newer events, the phase rule, the marker scan. Median and p99 over many calls.
 * - `baton.sessions.rebuild(sessionId)`: refold the whole journal (parse + validate + fold every row,
 *   compare with the stored snapshot) vs a raw fold that reads every row with better-sqlite3
 *   and `JSON.parse`s its `data` column. Printed as events/s and their ratio (no goal).
 * - Appends to this session (its ~25 KB snapshot is rewritten by each) vs to a fresh session in
 *   the same workspace, FULL, interleaved: what a large snapshot costs an append (no goal).
 * - `baton.sessions.versions(id)` (the dashboard's version tags of a session) with 100 open work
 *   items and 5,000 dead ones, handled, beside the statement `workVersion` ran until 2026-11-27
 *   (its dead items read by scalar subqueries beside every open item) on the same file, alternating.
 *
 * Setup writes with appendBatch at synchronous=NORMAL (setup only); the measured calls reopen
 * the workspace at the default FULL.
 */
import { join } from "node:path";
import Database from "better-sqlite3";
import { gc, hr, info, interleave, loadBaton, ratio, scaled, summarise, tempDir, walPagesPerOp } from "./lib.mjs";

export const name = "status";
export const title = "status and rebuild on a 100,000-event session";

const SESSION = "bench-status";

/** A realistic mix of facet events: mostly notes, with progress, decisions, blockers, runs, positions. */
function eventAt(i) {
  switch (i % 20) {
    case 0:
      return { type: "progress:set", data: { total: 1000, completed: Math.floor(i / 100) % 1000 } };
    case 1:
      return { type: "decision:added", data: { decision: `use approach ${i}`, reason: "fewer moving parts", alternatives: ["a", "b"] } };
    case 2:
      return { type: "position:set", data: { phase: `phase-${Math.floor(i / 5000)}`, task: `task-${Math.floor(i / 100)}` } };
    case 3:
      return { type: "blocker:added", data: { id: `blk-${i % 7}`, text: `flaky test ${i}` } };
    case 4:
      return { type: "blocker:resolved", data: { id: `blk-${(i - 1) % 7}`, resolution: "retried" } };
    case 5:
      return { type: "run:started", data: { runId: `run-${i}`, agent: "agent", pid: 4242, host: "bench" } };
    case 6:
      return { type: "run:ended", data: { runId: `run-${i - 1}`, reason: "context full", completedWork: `chunk ${i}` } };
    case 7:
      return { type: "context:set", data: { lastFile: `src/file-${i % 50}.ts`, attempt: i } };
    default:
      return { type: "note:added", data: { text: `tool call ${i}: edited src/file-${i % 50}.ts, tests pass` } };
  }
}

export async function run() {
  const { openBaton } = await loadBaton();
  const root = tempDir("status");
  const total = scaled(100_000, 2_000);
  const batch = 1_000;

  // Setup (untimed): NORMAL durability allowed here.
  const t0 = hr();
  {
    const baton = await openBaton({ root, durability: "relaxed" });
    await baton.sessions.start({ flow: "task", id: SESSION, title: "a long session" });
    await baton.events.append(SESSION, { type: "start" });
    for (let done = 0; done < total; done += batch) {
      const events = [];
      for (let i = done; i < Math.min(total, done + batch); i++) events.push(eventAt(i));
      await baton.events.appendBatch(SESSION, events);
    }
    await baton.close();
  }
  const setupMs = Number(hr() - t0) / 1e6;
  gc();

  const baton = await openBaton({ root, durability: "full" });
  const first = await baton.sessions.status({ sessionId: SESSION });
  const lastSeq = first.sessions[0].lastSeq;
  if (lastSeq !== total + 2) throw new Error(`expected ${total + 2} events, status says ${lastSeq}`);

  // status: warm-up, then timed calls.
  const statusSamples = [];
  for (let i = 0; i < 50; i++) await baton.sessions.status({ sessionId: SESSION });
  gc();
  const calls = scaled(2_000, 50);
  for (let i = 0; i < calls; i++) {
    const t = hr();
    await baton.sessions.status({ sessionId: SESSION });
    statusSamples.push(Number(hr() - t));
  }
  const snapshotBytes = Buffer.byteLength(JSON.stringify((await baton.sessions.snapshot(SESSION)) ?? {}));

  // rebuild vs raw fold, alternating.
  const db = new Database(join(root, ".baton", "baton.db"), { readonly: true });
  const select = db.prepare("SELECT * FROM events WHERE session_id = ? ORDER BY seq");
  const rawFold = () => {
    let n = 0;
    let keys = 0;
    for (const row of select.iterate(SESSION)) {
      const data = JSON.parse(row.data);
      keys += Object.keys(data).length;
      n++;
    }
    if (keys < 0) throw new Error("unreachable");
    return n;
  };
  const reps = scaled(7, 2);
  const rebuildSamples = [];
  const rawSamples = [];
  // Warm-up one of each.
  const warm = await baton.sessions.rebuild(SESSION);
  if (warm[0]?.repaired) throw new Error("rebuild repaired the snapshot: the append-time fold and the rebuild disagree");
  rawFold();
  for (let r = 0; r < reps; r++) {
    gc();
    let t = hr();
    const out = await baton.sessions.rebuild(SESSION);
    rebuildSamples.push(Number(hr() - t));
    if (out[0]?.lastSeq !== lastSeq) throw new Error("rebuild folded a different number of events");
    gc();
    t = hr();
    const n = rawFold();
    rawSamples.push(Number(hr() - t));
    if (n !== lastSeq) throw new Error(`raw fold read ${n} rows`);
  }
  db.close();

  // Appends on the long session (its snapshot is rewritten by every append) vs on a fresh session
  // in the same workspace, FULL, interleaved. No goal: this shows what a large snapshot costs.
  await baton.sessions.start({ flow: "task", id: "bench-fresh", title: "a fresh session" });
  const note = (i) => ({ type: "note:added", data: { text: `tool call ${i}: edited src/file-${i % 50}.ts, tests pass` } });
  const appendSides = [
    { label: "long", op: (i) => baton.events.append(SESSION, note(i)) },
    { label: "fresh", op: (i) => baton.events.append("bench-fresh", note(i)) },
  ];
  const appendSamples = await interleave(appendSides, { rounds: 5, perRound: Math.ceil(scaled(1_000, 20) / 5), warmup: scaled(50, 5) });
  const dbPath = join(root, ".baton", "baton.db");
  const pagesLong = await walPagesPerOp(dbPath, 40, (i) => appendSides[0].op(1e6 + i));
  const pagesFresh = await walPagesPerOp(dbPath, 40, (i) => appendSides[1].op(1e6 + i));
  await baton.close();

  const recorded = await recordedFiles(openBaton);
  const versions = await workVersions(openBaton);

  const status = summarise(statusSamples);
  const rebuild = summarise(rebuildSamples, lastSeq);
  const raw = summarise(rawSamples, lastSeq);
  const appendLong = summarise(appendSamples.long);
  const appendFresh = summarise(appendSamples.fresh);
  return {
    rows: [
      { subject: `Baton status({sessionId}), ${lastSeq.toLocaleString("en-US")} events`, unit: "calls", ...status },
      { subject: "Baton rebuild(sessionId)", unit: "events", ...rebuild },
      { subject: "raw fold (better-sqlite3 iterate + JSON.parse)", unit: "events", ...raw },
      { subject: `Baton append on this session (FULL, ${(snapshotBytes / 1024).toFixed(0)} KB snapshot)`, ...appendLong },
      { subject: "Baton append on a fresh session, same workspace (FULL)", ...appendFresh },
      { subject: `Baton status({sessionId}), ${FILES} × ${FILE_MB} MB recorded files`, unit: "calls", ...recorded.status },
      { subject: `Baton resume(sessionId), ${FILES} × ${FILE_MB} MB recorded files`, unit: "calls", ...recorded.resume },
      {
        subject: `Baton sessions.versions(id), ${OPEN} open and ${DEAD.toLocaleString("en-US")} handled dead items`,
        unit: "calls",
        ...versions.baton,
      },
      { subject: "the work statement until 2026-11-27 alone (raw better-sqlite3, same file)", unit: "calls", ...versions.before },
    ],
    ratios: [
      ratio("status median", status.medianMs, "<=", 10, "ms"),
      ratio("status p99", status.p99Ms, "<=", 10, "ms"),
      info("Baton rebuild / raw fold throughput", rebuild.opsPerSec / raw.opsPerSec),
      info("append throughput, long session / fresh session", appendLong.opsPerSec / appendFresh.opsPerSec),
      info(
        "sessions.versions: the work statement until 2026-11-27 / all of versions() now (medians)",
        versions.before.medianMs / versions.baton.medianMs,
      ),
    ],
    notes: [
      `setup (${lastSeq.toLocaleString("en-US")} events via appendBatch at NORMAL) took ${(setupMs / 1000).toFixed(1)} s`,
      `stored snapshot: ${snapshotBytes.toLocaleString("en-US")} bytes of JSON`,
      "rebuild median/p99 are per full refold; ops/s counts events",
      "recorded files: status reads each once (marker scan and hash share the read); resume verifies once",
      `WAL pages written per append: long session ${pagesLong.toFixed(1)}, fresh session ${pagesFresh.toFixed(1)}`,
    ],
    extra: { events: lastSeq, setupMs, snapshotBytes, walPagesPerAppend: { long: pagesLong, fresh: pagesFresh } },
  };
}

const FILES = 50;
const FILE_MB = 2;
const OPEN = 100;
const DEAD = 5_000;

/** `workVersion`'s statement until 2026-11-27: the dead items' three reads beside every open item. */
const WORK_VERSION_BEFORE = `
  SELECT s.last_seq AS "lastSeq",
         (SELECT count(*) FROM work_items d WHERE d.session_id = s.id AND d.state = 'dead' AND d.handled_seq IS NULL) AS "deadCount",
         (SELECT count(*) FROM work_items d JOIN leases l ON l.item_id = d.item_id
           WHERE d.session_id = s.id AND d.state = 'dead' AND d.handled_seq IS NULL) AS "deadLeases",
         (SELECT max(d.done_at) FROM work_items d WHERE d.session_id = s.id AND d.state = 'dead' AND d.handled_seq IS NULL) AS "lastDeadAt",
         w.item_id AS "itemId", w.state AS "state", w.attempts AS "attempts", w.lease_id AS "leaseId",
         w.lease_expires_ms AS "leaseExpiresMs", w.available_ms AS "availableMs",
         (SELECT count(*) FROM leases l WHERE l.item_id = w.item_id) AS "leases"
  FROM sessions s LEFT JOIN work_items w ON w.session_id = s.id AND w.state IN ('ready', 'leased')
  WHERE s.id = ?
  ORDER BY w.priority, w.item_no`;

/**
 * A session whose work went dead 5,000 times (each item nacked on its one attempt, then handled
 * by the event its lane waits for) and has 100 items open: `sessions.versions` (all three tags)
 * beside the work statement it ran until 2026-11-27, on the same file, alternating.
 */
async function workVersions(openBaton) {
  const root = tempDir("status-versions");
  const id = "versions";
  {
    const baton = await openBaton({ root, durability: "relaxed", maxAttempts: 1 });
    await baton.sessions.start({ flow: "live-variant", id });
    // generate → source wrapped → variants written → cycling; again after the dead items, whose
    // lane (`steer`) is done by `variants_written`, which marks them handled.
    const cycle = async () => {
      await baton.events.append(id, { type: "generate", actor: "browser" });
      await baton.events.append(id, { type: "source_wrapped", actor: "agent", data: { file: "a.html" } });
      await baton.events.append(id, { type: "variants_written", actor: "agent", data: { count: 1, expected: 1 } });
      await baton.events.append(id, { type: "cycling", actor: "browser" });
    };
    await cycle();
    for (let done = 0; done < DEAD; done += 500) {
      await baton.events.appendBatch(
        id,
        Array.from({ length: 500 }, (_, i) => ({ type: "steer", actor: "browser", data: { n: done + i } })),
      );
      for (let i = 0; i < 500; i++) {
        const l = await baton.work.lease("bench", { sessionId: id, leaseMs: 60_000 });
        const r = await baton.work.nack(l.leaseId);
        if (r.state !== "dead") throw new Error(`a nack on the one attempt left the item ${r.state}`);
      }
    }
    await cycle();
    await baton.events.appendBatch(
      id,
      Array.from({ length: OPEN }, (_, i) => ({ type: "steer", actor: "browser", data: { n: DEAD + i } })),
    );
    await baton.close();
  }
  const baton = await openBaton({ root });
  const db = new Database(join(root, ".baton", "baton.db"), { readonly: true });
  const counts = db
    .prepare("SELECT state, handled_seq IS NULL AS unhandled, count(*) AS n FROM work_items WHERE session_id = ? GROUP BY 1, 2")
    .all(id);
  const dead = counts.find((c) => c.state === "dead" && c.unhandled === 0)?.n ?? 0;
  const open = counts.find((c) => c.state === "ready")?.n ?? 0;
  if (dead !== DEAD || open !== OPEN) throw new Error(`expected ${DEAD} handled dead and ${OPEN} open items: ${JSON.stringify(counts)}`);
  const before = db.prepare(WORK_VERSION_BEFORE);
  const now = await baton.sessions.versions(id);
  const old = before.all(id);
  if (old.length !== OPEN || old.some((r) => r.deadCount !== 0) || typeof now.work !== "string")
    throw new Error(`the old statement should see ${OPEN} open items and no unhandled dead one; versions() a work tag`);
  const sides = [
    { label: "baton", op: () => baton.sessions.versions(id) },
    { label: "before", op: () => before.all(id) },
  ];
  const samples = await interleave(sides, { rounds: 5, perRound: scaled(40, 4), warmup: 5 });
  db.close();
  await baton.close();
  return { baton: summarise(samples.baton), before: summarise(samples.before) };
}

/**
 * Status and resume of a session that recorded 50 files of 2 MB: each is read (marker scan)
 * and hashed (has it changed since recorded?) on every call.
 */
async function recordedFiles(openBaton) {
  const { writeFileSync } = await import("node:fs");
  const root = tempDir("status-files");
  const baton = await openBaton({ root });
  await baton.sessions.start({ flow: "task", id: "files", title: "many recorded files" });
  await baton.events.append("files", { type: "start" });
  const line = "export const value = 42; // a line of ordinary source code\n";
  const body = line.repeat(Math.ceil((FILE_MB * 1024 * 1024) / line.length));
  const files = [];
  for (let i = 0; i < FILES; i++) {
    const f = `src/file-${i}.ts`;
    if (i === 0) (await import("node:fs")).mkdirSync(join(root, "src"), { recursive: true });
    writeFileSync(join(root, f), body);
    files.push(f);
  }
  await baton.facets.recordResumeContext("files", { files });
  const time = async (op) => {
    for (let i = 0; i < 3; i++) await op();
    gc();
    const samples = [];
    for (let i = 0; i < scaled(20, 5); i++) {
      const t = hr();
      await op();
      samples.push(Number(hr() - t));
    }
    return summarise(samples);
  };
  const status = await time(() => baton.sessions.status({ sessionId: "files" }));
  const resume = await time(() => baton.sessions.resume("files"));
  await baton.close();
  return { status, resume };
}

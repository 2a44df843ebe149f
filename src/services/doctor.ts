/**
 * `doctor`: look at the workspace (or one session) and report what is wrong, with the
 * evidence and the command that fixes each finding. Without `fix` it never writes. With
 * `fix` it applies only safe repairs — those the system would make on its own sooner or later
 * (rebuild a snapshot from the journal, return expired leases, reclaim a lock whose holder is
 * provably gone, mark a provably dead run crashed, sweep unreferenced blobs past their grace
 * period, remove a server file naming a dead process) — and reports each.
 *
 * Output goes through core/doctor.ts `sanitizeReport`, and no check ever copies event data,
 * context, notes or marker excerpts into it: no prompt or answer text can leak.
 */
import { existsSync, unlinkSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Backend } from "../backend/contract.js";
import {
  type DoctorCheck,
  type DoctorCheckResult,
  type DoctorFinding,
  type DoctorRepair,
  type DoctorReport,
  type DoctorSessionView,
  sanitizeReport,
  summarize,
} from "../core/doctor.js";
import { sessionLockName } from "../core/locks.js";
import type { JsonObject, JsonValue } from "../core/types.js";
import { BlobStore } from "./blobs.js";
import { hashFile } from "./files.js";
import { hookFailures } from "./hook-log.js";
import type { Journal } from "./journal.js";
import type { LockInfo, LockService } from "./locks.js";
import { looseModes, tightenAll } from "./private-files.js";
import type { Queue } from "./queue.js";
import type { RunService } from "./runs.js";
import { readServerFile, releaseServerFile, serverAlive, serverFilePath, serverIdentity } from "./server-file.js";
import type { SessionStatus } from "./status.js";

export interface DoctorDeps {
  backend: Backend;
  journal: Journal;
  queue: Queue;
  locks: LockService;
  runs: RunService;
  /** Status of one session (markers, next action, pending work). */
  describe: (sessionId: string) => Promise<SessionStatus>;
  root: string;
  batonDir: string;
  now: () => Date;
  collectGarbage: () => Promise<{ blobsRemoved: number; tempsRemoved: number }>;
  /** The trajectory ledger's health, when the ledger exists. */
  ledgerHealth?: () => Promise<unknown>;
  /** Files a whole-tree checkpoint would leave out now (names it cannot store safely). */
  treeSkips?: () => Promise<{ path: string; reason: string }[]>;
  /** Baton's installed agent hooks and whether each agent will run them (given by the CLI). */
  hookSetup?: () => Promise<HookSetup[]>;
}

export interface HookSetup {
  agent: string;
  scope: string;
  file: string;
  willRun: boolean;
  remaining: string[];
}

export interface DoctorOptions {
  sessionId?: string;
  fix?: boolean;
  hookSetup?: () => Promise<HookSetup[]>;
}

/** Blobs and temp files younger than this are never called orphans (a checkpoint may be committing them). */
const BLOB_GRACE_MS = 60 * 60 * 1000;
/** At most this many files of a checkpoint are re-hashed. */
const MAX_FILES_CHECKED = 2_000;
const SAMPLE = 10;
/** Hook failures older than this are history, not a finding. */
const HOOK_FAILURE_WINDOW_MS = 7 * 24 * 60 * 60 * 1000;

type Repair = { key: string; subject: string; run: () => Promise<string> };

export async function runDoctor(deps: DoctorDeps, opts: DoctorOptions = {}): Promise<DoctorReport> {
  const findings: (DoctorFinding & { repair?: Repair })[] = [];
  const checks: DoctorCheckResult[] = [];
  const add = (f: DoctorFinding & { repair?: Repair }) => findings.push(f);
  const check = async (name: DoctorCheck, fn: () => Promise<string | undefined>) => {
    const before = findings.length;
    try {
      const skipped = await fn();
      checks.push(
        skipped !== undefined
          ? { check: name, status: "skipped", detail: skipped }
          : { check: name, status: findings.length > before ? "findings" : "ok" },
      );
    } catch (err) {
      const code = (err as { code?: string }).code ?? "internal";
      add({
        check: name,
        code: "check_failed",
        severity: "error",
        message: `the ${name} check could not run (${code})`,
        evidence: { error: code },
        fix: "",
        safe: false,
      });
      checks.push({ check: name, status: "findings" });
    }
  };

  const sid = opts.sessionId;
  let status: SessionStatus | undefined;
  if (sid) status = await deps.describe(sid); // not_found for an unknown session, before anything else
  const sessions = sid ? [sid] : (await deps.journal.listSessions({ includeCompleted: true })).map((s) => s.id);
  const active = sid ? (status?.status === "active" ? [sid] : []) : (await deps.journal.listSessions()).map((s) => s.id);

  await check("storage", async () => {
    // A writer stopped inside a transaction (SIGSTOP, a debugger) holds the write lock forever:
    // every other process waits out its busy timeout and fails with storage_busy.
    const holder = deps.backend.writeLockHolder?.();
    if (holder?.stopped && holder.pid !== process.pid) {
      add({
        check: "storage",
        code: "storage_lock_stopped",
        severity: "error",
        message: `pid ${holder.pid}${holder.command ? ` (${holder.command})` : ""} holds the database's write lock and is stopped, so every write waits and fails with storage_busy; resume it (\`kill -CONT ${holder.pid}\`) or end it (\`kill ${holder.pid}\`)`,
        evidence: { pid: holder.pid, ...(holder.command ? { command: holder.command } : {}) },
        fix: `kill -CONT ${holder.pid}`,
        safe: false,
      });
    }
    return undefined;
  });

  await check("integrity", async () => {
    const problems = await deps.backend.integrityCheck();
    if (problems.length > 0) {
      add({
        check: "integrity",
        code: "database_corrupt",
        severity: "error",
        message: `the database fails its integrity check (${problems.length} problem(s)); stop writing to it`,
        evidence: { problems: problems.slice(0, SAMPLE) },
        fix: "baton export --session <id> for each session, then restore .baton/baton.db from a backup",
        safe: false,
      });
    }
    return undefined;
  });

  await check("snapshots", async () => {
    for (const id of sessions) {
      const v = await deps.journal.verifySnapshot(id);
      if (v.matches) continue;
      const evidence: JsonObject = { journalSeq: v.journalSeq, problem: v.problem ?? "differs" };
      if (v.storedSeq !== undefined) evidence.storedSeq = v.storedSeq;
      add({
        check: "snapshots",
        code: "snapshot_mismatch",
        severity: "warning",
        sessionId: id,
        message: `the stored snapshot of ${id} is ${v.problem === "missing" ? "missing" : v.problem === "corrupt" ? "corrupt" : "not what the journal folds to"}; reads refold it, a rebuild repairs it`,
        evidence,
        fix: `baton rebuild --session ${id}`,
        safe: true,
        repair: {
          key: `rebuild:${id}`,
          subject: id,
          run: async () => {
            const [r] = await deps.journal.rebuild(id);
            return r?.repaired ? `snapshot rebuilt from ${r.lastSeq} events` : "already consistent";
          },
        },
      });
    }
    return undefined;
  });

  await check("leases", async () => {
    const nowMs = deps.now().getTime();
    const expired = (await deps.queue.pending(sid)).filter((w) => w.state === "leased" && w.lease?.expired);
    for (const w of expired) {
      add({
        check: "leases",
        code: "lease_expired",
        severity: "warning",
        sessionId: w.sessionId,
        message: `work item ${w.itemId} (${w.kind}) is leased to ${w.lease?.owner} whose lease expired ${Math.round((nowMs - Date.parse(w.lease?.expiresAt ?? "")) / 1000)} s ago; it is redelivered on the next poll`,
        evidence: {
          itemId: w.itemId,
          kind: w.kind,
          seq: w.seq,
          owner: w.lease?.owner ?? "",
          expiredAt: w.lease?.expiresAt ?? "",
          attempts: w.attempts,
        },
        fix: `baton poll --session ${w.sessionId} --json`,
        safe: true,
        repair: {
          key: "reap-leases",
          subject: "expired leases",
          run: async () => `${await deps.queue.reapExpired()} expired lease(s) returned to the queue`,
        },
      });
    }
    return undefined;
  });

  let locks: LockInfo[] = [];
  await check("locks", async () => {
    locks = await deps.locks.list();
    for (const l of locks) {
      if (l.state !== "held" || !l.holder || !l.stale) continue;
      const h = l.holder;
      const holder: JsonObject = { owner: h.owner, acquiredAt: h.acquiredAt, heartbeatAt: h.heartbeatAt, expiresAt: h.expiresAt };
      if (h.pid !== undefined) holder.pid = h.pid;
      if (h.host !== undefined) holder.host = h.host;
      if (h.runId !== undefined) holder.runId = h.runId;
      if (l.stale.stale) {
        add({
          check: "locks",
          code: "lock_stale",
          severity: "warning",
          message: `lock "${l.name}" (epoch ${l.epoch}) is held by a provably stale holder (${l.stale.proof}); the next acquirer reclaims it`,
          evidence: { name: l.name, epoch: l.epoch, holder, proof: l.stale.proof, evidence: l.stale.evidence },
          fix: `baton lock inspect ${l.name} --json`,
          safe: true,
          repair: {
            key: `lock:${l.name}`,
            subject: l.name,
            run: async () => {
              const r = await deps.locks.reclaimStale(l.name);
              return r.reclaimed ? `reclaimed epoch ${r.epoch} (${r.proof})` : `left alone: ${r.evidence}`;
            },
          },
        });
      } else {
        add({
          check: "locks",
          code: "lock_held",
          severity: "info",
          message: `lock "${l.name}" (epoch ${l.epoch}) is held by ${h.owner}: an active command (${l.stale.reason})`,
          evidence: { name: l.name, epoch: l.epoch, holder, evidence: l.stale.evidence },
          fix: "",
          safe: false,
        });
      }
    }
    return undefined;
  });

  await check("runs", async () => {
    const crashed = await deps.runs.detectCrashed({ ...(sid ? { sessionId: sid } : {}), dryRun: true });
    for (const c of crashed) {
      add({
        check: "runs",
        code: "run_crashed",
        severity: "warning",
        sessionId: c.sessionId,
        message: `run ${c.runId} (${c.agent}) is still recorded as running but is gone (${c.proof}); marking it crashed gives its leased work to the next agent`,
        evidence: { runId: c.runId, agent: c.agent, proof: c.proof, evidence: c.evidence },
        fix: `baton status --session ${c.sessionId} --json`,
        safe: true,
        repair: {
          key: `runs:${c.sessionId}`,
          subject: c.sessionId,
          run: async () => {
            const marked = await deps.runs.detectCrashed({ sessionId: c.sessionId });
            const work = marked.reduce((n, m) => n + m.releasedWork.length, 0);
            return `${marked.length} run(s) marked crashed, ${work} work item(s) given back`;
          },
        },
      });
    }
    return undefined;
  });

  await check("blobs", async () => {
    const dir = join(deps.batonDir, "blobs");
    const store = new BlobStore(dir);
    const { referenced, inline } = await deps.backend.transaction("read", async (tx) => ({
      referenced: new Set(await tx.checkpoints.referencedHashes()),
      inline: await tx.checkpoints.listBlobs(),
    }));
    const { hashes: files, temps } = store.list();
    if (!existsSync(dir) && inline.length === 0 && referenced.size === 0) return "no blobs stored yet";
    // Small blobs live in the database, large ones (and those stored before) under .baton/blobs/.
    const stored = new Set(files.map((h) => h.hash));
    const hashes = [...files];
    for (const b of inline) {
      if (stored.has(b.hash)) continue;
      stored.add(b.hash);
      hashes.push({ hash: b.hash, mtimeMs: b.storedMs });
    }
    const missing = [...referenced].filter((h) => !stored.has(h));
    if (missing.length > 0) {
      add({
        check: "blobs",
        code: "blob_missing",
        severity: "error",
        message: `${missing.length} blob(s) named by live checkpoints or artifacts are missing from both the database and .baton/blobs/; those cannot be restored`,
        evidence: { count: missing.length, hashes: missing.slice(0, SAMPLE).map((h) => h.slice(0, 16)) },
        fix: "baton checkpoint --session <id> (take a new checkpoint of the current files)",
        safe: false,
      });
    }
    const nowMs = Date.now();
    const orphans = hashes.filter((h) => !referenced.has(h.hash) && nowMs - h.mtimeMs > BLOB_GRACE_MS);
    const oldTemps = temps.filter((t) => nowMs - t.mtimeMs > BLOB_GRACE_MS);
    if (orphans.length + oldTemps.length > 0) {
      add({
        check: "blobs",
        code: "blob_orphan",
        severity: "info",
        message: `${orphans.length} blob(s) nothing references and ${oldTemps.length} leftover temp file(s) take space`,
        evidence: { blobs: orphans.length, temps: oldTemps.length, hashes: orphans.slice(0, SAMPLE).map((h) => h.hash.slice(0, 16)) },
        fix: "baton gc",
        safe: true,
        repair: {
          key: "gc",
          subject: ".baton/blobs",
          run: async () => {
            const r = await deps.collectGarbage();
            return `${r.blobsRemoved} blob(s) and ${r.tempsRemoved} temp file(s) removed`;
          },
        },
      });
    }
    return undefined;
  });

  await check("files", async () => {
    const skips = (await deps.treeSkips?.()) ?? [];
    if (skips.length > 0) {
      add({
        check: "files",
        code: "files_not_checkpointed",
        severity: "warning",
        message: `${skips.length} file(s) have names whole-tree checkpoints cannot store or restore safely (a line break, a backslash, a control character, too long), so no rollback covers them; rename them`,
        evidence: { paths: skips.slice(0, SAMPLE).map((s) => JSON.stringify(s.path)), count: skips.length },
        fix: "",
        safe: false,
      });
    }
    for (const id of active) {
      const cp = await deps.backend.transaction("read", async (tx) => {
        const live = await tx.checkpoints.liveCheckpoints(id);
        const last = live[live.length - 1];
        return last && { row: last, files: await tx.checkpoints.checkpointFiles(last.id) };
      });
      if (!cp) continue;
      const changed: string[] = [];
      let checked = 0;
      for (const f of cp.files) {
        if (f.state === "skipped") continue;
        if (++checked > MAX_FILES_CHECKED) break;
        let now: string | undefined;
        try {
          now = hashFile(resolve(deps.root, f.path));
        } catch {
          now = "unreadable"; // not a regular file any more: changed since the checkpoint
        }
        const was = f.state === "file" ? (f.hash ?? undefined) : undefined;
        if (now !== was) changed.push(f.path);
      }
      if (changed.length === 0) continue;
      add({
        check: "files",
        code: "files_changed_since_checkpoint",
        severity: "info",
        sessionId: id,
        message: `${changed.length} file(s) changed since ${id}'s last checkpoint ${cp.row.id} (${cp.row.createdAt}); a rollback to it would undo them`,
        evidence: {
          checkpoint: cp.row.id,
          checkpointSeq: cp.row.seq,
          createdAt: cp.row.createdAt,
          changed: changed.length,
          paths: changed.slice(0, SAMPLE),
        },
        fix: `baton checkpoint --session ${id}`,
        safe: false,
      });
    }
    return undefined;
  });

  await check("markers", async () => {
    for (const id of active) {
      const st = id === sid && status ? status : await deps.describe(id);
      if (st.markers.length === 0) continue;
      add({
        check: "markers",
        code: "markers_remain",
        severity: "warning",
        sessionId: id,
        message: `${st.markers.length} marker(s) remain in ${id}'s files; complete is refused until they are cleaned up`,
        // Where and which marker only: the excerpt is file content and is left out.
        evidence: { count: st.markers.length, at: st.markers.slice(0, SAMPLE).map((m) => `${m.file}:${m.line} ${m.marker}`) },
        fix: `baton status --session ${id} --json`,
        safe: false,
      });
    }
    return undefined;
  });

  await check("server", async () => {
    const file = serverFilePath(deps.batonDir);
    if (!existsSync(file)) return undefined;
    const info = readServerFile(deps.batonDir);
    if (!info) {
      add({
        check: "server",
        code: "server_file_invalid",
        severity: "warning",
        message: ".baton/server.json is not a server file (half-written or foreign); the next `baton serve` replaces it",
        evidence: { file: ".baton/server.json" },
        fix: "baton serve",
        safe: true,
        repair: { key: "server-file", subject: ".baton/server.json", run: async () => (unlinkQuiet(file) ? "removed" : "already gone") },
      });
    } else if (serverAlive(info)) {
      add({
        check: "server",
        code: "server_running",
        severity: "info",
        message: `the workspace's server runs as pid ${info.pid} on port ${info.port}`,
        evidence: { pid: info.pid, port: info.port, startedAt: info.startedAt },
        fix: "",
        safe: false,
      });
    } else {
      add({
        check: "server",
        code: "server_file_stale",
        severity: "warning",
        message: `.baton/server.json names pid ${info.pid}, which ${
          serverIdentity(info) === "reused"
            ? "now belongs to another process (it started after the server wrote the file)"
            : "is not running"
        }; clients will not use that server, and a new \`baton serve\` replaces the file`,
        evidence: { pid: info.pid, port: info.port, startedAt: info.startedAt },
        fix: "baton serve",
        safe: true,
        repair: {
          key: "server-file",
          subject: ".baton/server.json",
          run: async () => {
            if (serverAlive(info)) return "left alone: the server is running again";
            releaseServerFile(deps.batonDir, info.pid);
            return "removed";
          },
        },
      });
    }
    return undefined;
  });

  await check("ledger", async () => {
    if (!deps.ledgerHealth) return "the trajectory ledger is not available in this build";
    const h = await deps.ledgerHealth();
    const evidence = scalars(h);
    // When it last failed, but never the message: it may quote what the tool call carried.
    const lastAt = (h as { lastAt?: unknown } | null)?.lastAt;
    if (typeof lastAt === "string" && !Number.isNaN(Date.parse(lastAt))) evidence.lastAt = lastAt;
    const failures = ["writeFailures", "failures", "failed", "errors"].reduce(
      (n, k) => n + (typeof evidence[k] === "number" ? (evidence[k] as number) : 0),
      0,
    );
    const bad = failures > 0 || evidence.ok === false;
    if (bad) {
      add({
        check: "ledger",
        code: "ledger_write_failures",
        severity: "warning",
        message: `the trajectory ledger reports ${failures > 0 ? `${failures} write failure(s)` : "a problem"}; tool calls were not affected`,
        evidence,
        fix: "",
        safe: false,
      });
    }
    return undefined;
  });

  await check("hooks", async () => {
    // Agent hooks fail open (the tool call goes ahead), so their failures surface here: counts,
    // codes and times from .baton/logs/hooks.log, never the messages.
    const since = new Date(deps.now().getTime() - HOOK_FAILURE_WINDOW_MS);
    const f = hookFailures(deps.batonDir, since);
    if (f.count > 0) {
      add({
        check: "hooks",
        code: "hook_failures",
        severity: "warning",
        message: `agent hooks failed ${f.count} time(s) in the last 7 days; each failed call went ahead without Baton (no checkpoint, turn or ledger node)`,
        evidence: { count: f.count, firstAt: f.firstAt, lastAt: f.lastAt, codes: f.codes, agents: f.agents, log: f.file },
        fix: `tail ${f.file}`,
        safe: false,
      });
    }
    // Installed hooks the agent will not run (Codex: untrusted or modified entries, an untrusted
    // project; Gemini CLI: an untrusted folder): the agent goes on without Baton, silently.
    const setup = deps.hookSetup ?? opts.hookSetup;
    for (const h of setup ? await setup() : []) {
      if (h.willRun) continue;
      add({
        check: "hooks",
        code: "hooks_not_running",
        severity: "warning",
        message: `${h.agent} will not run Baton's hooks in ${h.file} (${h.scope}): ${h.remaining.join(" ")}`,
        evidence: { agent: h.agent, scope: h.scope, file: h.file },
        fix: h.remaining[0] ?? `baton hooks install ${h.agent}${h.scope === "user" ? " --user" : ""}`,
        safe: false,
      });
    }
    return undefined;
  });

  /**
   * Accurate about the exposure: while `.baton/` itself is private, other users cannot reach
   * anything inside it, whatever the inner modes; the inner modes matter once `.baton/` is
   * opened up (a chmod, a copy, an archive that keeps modes).
   */
  const looseMessage = (loose: readonly { path: string }[]): string => {
    const n = `${loose.length} entr${loose.length === 1 ? "y" : "ies"} under .baton/`;
    if (loose.some((e) => e.path === "."))
      return `${n} can be read by other local users: .baton/ itself is open to group or others, and it holds file contents (checkpoint blobs) and the journal`;
    return `${n} allow group or others access; .baton/ itself is 0700, so other users cannot reach them now (low exposure), but they would be readable if .baton/ were opened up or copied with its modes`;
  };

  await check("privacy", async () => {
    // .baton/ holds file contents verbatim (checkpoint blobs) and the journal: only its owner may
    // read it. Opening a workspace tightens .baton/ and its top level; this finds the rest.
    if (process.platform === "win32") return "POSIX modes do not apply on Windows";
    const { loose, visited, truncated } = looseModes(deps.batonDir);
    if (loose.length > 0) {
      add({
        check: "privacy",
        code: "loose_modes",
        severity: "warning",
        message: looseMessage(loose),
        evidence: {
          count: loose.length,
          sample: loose.slice(0, SAMPLE).map((e) => ({ path: e.path, mode: e.mode, kind: e.kind })),
          visited,
          truncated,
        },
        fix: "baton doctor --fix (or chmod -R go-rwx .baton)",
        safe: true,
        repair: {
          key: "loose-modes",
          subject: ".baton/",
          run: async () => `tightened ${tightenAll(deps.batonDir, loose)} entries to 0600/0700`,
        },
      });
    }
    return undefined;
  });

  let view: DoctorSessionView | undefined;
  if (sid && status) {
    const snap = await deps.journal.read(sid).then((v) => v.snapshot);
    await check("target", async () => {
      if (snap.target) return undefined;
      if (snap.flow === "external-run") {
        add({
          check: "target",
          code: "target_unbound",
          severity: "info",
          sessionId: sid,
          message: `${sid} follows an external run but is bound to no target; commands cannot tell its run from whatever else is active`,
          evidence: { flow: snap.flow },
          fix: `baton target set ${sid} --kind <kind> --id <id> [--url <url>]`,
          safe: false,
        });
      }
      return undefined;
    });
    const runIds = new Set(snap.facets.runs.map((r) => r.runId));
    view = {
      sessionId: sid,
      flow: snap.flow,
      phase: status.phase,
      status: status.status,
      ...(snap.deadline !== undefined ? { deadline: snap.deadline } : {}),
      ...(snap.target ? { target: snap.target } : {}),
      runs: snap.facets.runs.slice(-5).map((r) => ({
        runId: r.runId,
        agent: r.agent,
        status: r.status,
        started: r.started,
        ...(r.ended !== undefined ? { ended: r.ended } : {}),
        ...(r.pid !== undefined ? { pid: r.pid } : {}),
        ...(r.host !== undefined ? { host: r.host } : {}),
      })),
      locks: locks
        .filter(
          (l) =>
            l.state === "held" &&
            l.holder &&
            (l.name === sessionLockName(sid) || (l.holder.runId !== undefined && runIds.has(l.holder.runId))),
        )
        .map((l) => ({
          name: l.name,
          epoch: l.epoch,
          owner: l.holder?.owner ?? "",
          ...(l.holder?.pid !== undefined ? { pid: l.holder.pid } : {}),
          ...(l.holder?.host !== undefined ? { host: l.holder.host } : {}),
          expiresAt: l.holder?.expiresAt ?? "",
          stale: l.stale?.stale === true,
          ...(l.stale?.stale ? { proof: l.stale.proof } : {}),
        })),
      pendingWork: status.pendingWork.length,
      nextAction: { action: status.nextAction.action, command: status.nextAction.command },
    };
  }

  const repairs: DoctorRepair[] = [];
  if (opts.fix) {
    const done = new Map<string, DoctorRepair>();
    for (const f of findings) {
      if (!f.safe || !f.repair) continue;
      let r = done.get(f.repair.key);
      if (!r) {
        try {
          r = { code: f.code, subject: f.repair.subject, ok: true, detail: await f.repair.run() };
        } catch (err) {
          r = { code: f.code, subject: f.repair.subject, ok: false, detail: `failed (${(err as { code?: string }).code ?? "internal"})` };
        }
        done.set(f.repair.key, r);
        repairs.push(r);
      }
      if (r.ok) f.repaired = true;
    }
  }

  const clean: DoctorFinding[] = findings.map(({ repair: _repair, ...f }) => f);
  const summary = summarize(clean);
  const report: DoctorReport = {
    ok: summary.error === 0 && summary.warning === 0,
    at: deps.now().toISOString(),
    scope: sid ? "session" : "workspace",
    ...(view ? { session: view } : {}),
    checks,
    findings: clean,
    repairs,
    summary,
  };
  return sanitizeReport(report);
}

/** Only the numbers and booleans of an object: the shape of another module's health report may carry text. */
function scalars(v: unknown): JsonObject {
  const out: JsonObject = {};
  if (v === null || typeof v !== "object") return out;
  for (const [k, x] of Object.entries(v)) if (typeof x === "number" || typeof x === "boolean") out[k] = x as JsonValue;
  return out;
}

function unlinkQuiet(file: string): boolean {
  try {
    unlinkSync(file);
    return true;
  } catch {
    return false;
  }
}

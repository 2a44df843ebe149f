/** Doctor's checks of file contents: blobs, files changed since a checkpoint, markers. */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import type { CheckpointRow } from "../../backend/contract.js";
import { isBatonError } from "../../errors.js";
import { indexProblem } from "../../platform/git-index.js";
import { hashFile } from "../files.js";
import { BlobStore, missingBlobs } from "../time-travel/blobs.js";
import { type Check, type DoctorDeps, type Found, SAMPLE } from "./check.js";

/** Blobs and temp files younger than this are never called orphans (a checkpoint may be committing them). */
const BLOB_GRACE_MS = 60 * 60 * 1000;
/** At most this many files of a checkpoint are re-hashed. */
const MAX_FILES_CHECKED = 2_000;

export const blobs: Check = {
  name: "blobs",
  reads:
    "the blob hashes live checkpoints and artifacts name (with this workspace's private files'), the blobs in the store and under .baton/blobs/, and on a shared store the paths of runs whose blob is a row of it",
  fix: {
    codes: ["blob_orphan"],
    does: "removes unreferenced blobs and temp files past their grace period (gc)",
    key: () => "gc",
    subject: () => ".baton/blobs",
    async apply(_f, { deps }) {
      const r = await deps.collectGarbage();
      return `${r.blobsRemoved} blob(s) and ${r.tempsRemoved} temp file(s) removed`;
    },
  },
  async run({ deps }) {
    const dir = join(deps.batonDir, "blobs");
    const store = new BlobStore(dir);
    const here = await deps.checkpointFacts?.();
    const { referenced, missing, inline, storedRuns } = await deps.backend.transaction("read", async (tx) => ({
      referenced: new Set(await tx.checkpoints.referencedHashes()),
      // Private files' blobs stay in the workspace that checkpointed them: the store's own,
      // and this workspace's (other workspaces sharing the store have theirs).
      missing: await missingBlobs(tx, dir, [
        ...(await tx.checkpoints.referencedHashes({ sharedOnly: true })),
        ...(here ? await tx.checkpoints.localHashes(here.host(), deps.root) : []),
      ]),
      inline: await tx.checkpoints.listBlobs(),
      storedRuns: here?.sharedAcrossHosts ? await tx.checkpoints.storedFileRuns() : [],
    }));
    const { hashes: files, temps } = store.list();
    if (!existsSync(dir) && inline.length === 0 && referenced.size === 0) return { skipped: "no blobs stored yet" };
    // Small blobs live in the database, large ones (and those stored before) under .baton/blobs/.
    const stored = new Set(files.map((h) => h.hash)); // for the orphans: everything stored, in either place
    const hashes = [...files];
    for (const b of inline) {
      if (stored.has(b.hash)) continue;
      stored.add(b.hash);
      hashes.push({ hash: b.hash, mtimeMs: b.storedMs });
    }
    const out: Found[] = [];
    const shared = storedRuns.filter((r) => here?.keptLocal(r.path));
    if (shared.length > 0) out.push(sharedPrivate(shared));
    if (missing.length > 0) {
      out.push({
        code: "blob_missing",
        severity: "error",
        message: `${missing.length} blob(s) named by live checkpoints or artifacts are missing from both the database and .baton/blobs/; those cannot be restored`,
        evidence: { count: missing.length, hashes: missing.slice(0, SAMPLE).map((h) => h.slice(0, 16)) },
        fix: "baton checkpoint --session <id> (take a new checkpoint of the current files)",
      });
    }
    const nowMs = Date.now();
    const orphans = hashes.filter((h) => !referenced.has(h.hash) && nowMs - h.mtimeMs > BLOB_GRACE_MS);
    const oldTemps = temps.filter((t) => nowMs - t.mtimeMs > BLOB_GRACE_MS);
    if (orphans.length + oldTemps.length > 0) {
      out.push({
        code: "blob_orphan",
        severity: "info",
        message: `${orphans.length} blob(s) nothing references and ${oldTemps.length} leftover temp file(s) take space`,
        evidence: { blobs: orphans.length, temps: oldTemps.length, hashes: orphans.slice(0, SAMPLE).map((h) => h.hash.slice(0, 16)) },
        fix: "baton gc",
      });
    }
    return out;
  },
};

/**
 * Private files whose content is a row of the shared store: checkpointed before Baton kept them
 * in the workspace (a project upgraded from before `checkpoints.private`), or before a pattern
 * was added. No safe fix: the rows are what those checkpoints restore from, so deleting them
 * would break the checkpoints; they go when retention prunes the checkpoints and gc runs.
 */
function sharedPrivate(runs: readonly { path: string; hash: string; sessionId: string }[]): Found {
  const sessions = [...new Set(runs.map((r) => r.sessionId))];
  const paths = [...new Set(runs.map((r) => r.path))];
  return {
    code: "private_blob_shared",
    severity: "warning",
    message: `${new Set(runs.map((r) => r.hash)).size} version(s) of ${paths.length} private file(s) (checkpoints.private: ${paths.slice(0, 3).join(", ")}${paths.length > 3 ? ", …" : ""}) are rows of the shared store, readable by everyone with access to the project: they were checkpointed before Baton kept private files in their workspace. They stay while a live checkpoint names them; treat what they hold as shared (rotate those secrets if others must not have them)`,
    evidence: { versions: new Set(runs.map((r) => r.hash)).size, paths: paths.slice(0, SAMPLE), sessions: sessions.slice(0, SAMPLE) },
    fix: `the checkpoints of ${sessions.length === 1 ? `session ${sessions[0]}` : `sessions ${sessions.slice(0, 3).join(", ")}${sessions.length > 3 ? ", …" : ""}`} that name them keep them; they go once retention prunes those checkpoints and \`baton gc\` runs (unpin them first; \`BATON_CHECKPOINT_RETAIN=1 baton checkpoint --session <id>\` prunes a session's older unpinned checkpoints at once, with their rollback history). Deleting the rows by hand breaks those checkpoints (blob_missing)`,
  };
}

export const files: Check = {
  name: "files",
  reads:
    "file names whole-tree checkpoints cannot store, whether git's index can be read (which files it tracks), and each active session's files against its last live checkpoint (hashes), or after a rollback against the checkpoint it restored (the rollback's plan, nothing written)",
  async run({ deps, active }) {
    const out: Found[] = [];
    const skips = (await deps.treeSkips?.()) ?? [];
    if (skips.length > 0) {
      out.push({
        code: "files_not_checkpointed",
        severity: "warning",
        message: `${skips.length} path(s) whole-tree checkpoints cannot store or restore safely (a name with a line break, a backslash, a control character, too long; or a folder unreadable to you), so no rollback covers them; rename them, or make them readable`,
        evidence: { paths: skips.slice(0, SAMPLE).map((s) => JSON.stringify(s.path)), count: skips.length },
        fix: "",
      });
    }
    const unread = indexProblem(deps.root);
    if (unread !== undefined) {
      out.push({
        code: "git_index_unread",
        severity: "warning",
        message: `Baton cannot read git's index: ${unread.problem}. Whole-tree checkpoints cannot tell which files git tracks, so they leave out tracked files that .gitignore, .git/info/exclude or .batonignore name, and no rollback covers those`,
        evidence: { problem: unread.problem },
        fix: unread.fix,
      });
    }
    for (const id of active) {
      const cp = await deps.backend.transaction("read", async (tx) => {
        const live = await tx.checkpoints.liveCheckpoints(id);
        const last = live[live.length - 1];
        return last && { row: last, live, files: await tx.checkpoints.runsAt(last.lane, last.seq) };
      });
      if (!cp) continue;
      const since = await sinceRollback(deps, id, cp.row, cp.live);
      if (since !== undefined) {
        if (since.changed.length > 0) out.push(since.finding);
        continue;
      }
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
      out.push({
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
      });
    }
    return out;
  },
};

/**
 * When the session's last checkpoint is the safety checkpoint of an applied rollback: the files
 * changed since that rollback. Its safety checkpoint holds the files as they were *before* it,
 * so comparing with it would report every rollback as a change; the files it left are those of
 * the checkpoint it restored, and what differs from them is what restoring it again would
 * change (planned, nothing written). Undefined when the last checkpoint is not such a one, or
 * the restored checkpoint cannot be planned any more (pruned): then it is compared as any other.
 */
async function sinceRollback(
  deps: DoctorDeps,
  id: string,
  last: CheckpointRow,
  live: readonly CheckpointRow[],
): Promise<{ changed: string[]; finding: Found } | undefined> {
  const to = last.restores;
  if (last.kind !== "safety" || to === null || !deps.wouldChange) return undefined;
  const rb = (await deps.journal.read(id)).snapshot.facets.rollbacks.find((r) => r.safety === last.id);
  if (rb?.state !== "applied") return undefined; // interrupted: status answers finish_rollback
  let changed: string[];
  try {
    changed = await deps.wouldChange(id, to, last.agentLane ?? undefined);
  } catch (err) {
    if (isBatonError(err, "checkpoint_pruned") || isBatonError(err, "checkpoint_not_found")) return undefined;
    throw err;
  }
  const restored = live.find((c) => c.id === to);
  return {
    changed,
    finding: {
      code: "files_changed_since_checkpoint",
      severity: "info",
      sessionId: id,
      message: `${changed.length} file(s) changed since ${id}'s last rollback ${rb.id} (${rb.appliedAt ?? rb.startedAt}), which restored checkpoint ${to}; restoring it again (\`baton rollback --session ${id}\`) would undo them`,
      evidence: {
        checkpoint: to,
        ...(restored ? { checkpointSeq: restored.seq, createdAt: restored.createdAt } : {}),
        rollback: rb.id,
        rolledBackAt: rb.appliedAt ?? rb.startedAt,
        changed: changed.length,
        paths: changed.slice(0, SAMPLE),
      },
      fix: `baton checkpoint --session ${id}`,
    },
  };
}

export const markers: Check = {
  name: "markers",
  reads: "the markers each active session's status finds in its files (file, line and marker name)",
  async run({ deps, active, sid, status }) {
    const out: Found[] = [];
    for (const id of active) {
      const st = id === sid && status ? status : await deps.describe(id);
      if (st.markers.length === 0) continue;
      out.push({
        code: "markers_remain",
        severity: "warning",
        sessionId: id,
        message: `${st.markers.length} marker(s) remain in ${id}'s files; complete is refused until they are cleaned up`,
        // Where and which marker only: the excerpt is file content and is left out.
        evidence: { count: st.markers.length, at: st.markers.slice(0, SAMPLE).map((m) => `${m.file}:${m.line} ${m.marker}`) },
        fix: `baton status --session ${id} --json`,
      });
    }
    return out;
  },
};

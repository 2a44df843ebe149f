/** Doctor's checks of file contents: blobs, files changed since a checkpoint, markers. */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { BlobStore } from "../blobs.js";
import { hashFile } from "../files.js";
import { type Check, type Found, SAMPLE } from "./check.js";

/** Blobs and temp files younger than this are never called orphans (a checkpoint may be committing them). */
const BLOB_GRACE_MS = 60 * 60 * 1000;
/** At most this many files of a checkpoint are re-hashed. */
const MAX_FILES_CHECKED = 2_000;

export const blobs: Check = {
  name: "blobs",
  reads: "the blob hashes live checkpoints and artifacts name, the blobs in the database and under .baton/blobs/",
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
    const { referenced, needed, inline } = await deps.backend.transaction("read", async (tx) => ({
      referenced: new Set(await tx.checkpoints.referencedHashes()),
      // Private files' blobs stay in the workspace that checkpointed them (a shared store's other hosts have theirs).
      needed: await tx.checkpoints.referencedHashes({ sharedOnly: true }),
      inline: await tx.checkpoints.listBlobs(),
    }));
    const { hashes: files, temps } = store.list();
    if (!existsSync(dir) && inline.length === 0 && referenced.size === 0) return { skipped: "no blobs stored yet" };
    // Small blobs live in the database, large ones (and those stored before) under .baton/blobs/.
    const stored = new Set(files.map((h) => h.hash));
    const hashes = [...files];
    for (const b of inline) {
      if (stored.has(b.hash)) continue;
      stored.add(b.hash);
      hashes.push({ hash: b.hash, mtimeMs: b.storedMs });
    }
    const out: Found[] = [];
    const missing = needed.filter((h) => !stored.has(h));
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

export const files: Check = {
  name: "files",
  reads: "file names whole-tree checkpoints cannot store, and each active session's files against its last live checkpoint (hashes)",
  async run({ deps, active }) {
    const out: Found[] = [];
    const skips = (await deps.treeSkips?.()) ?? [];
    if (skips.length > 0) {
      out.push({
        code: "files_not_checkpointed",
        severity: "warning",
        message: `${skips.length} file(s) have names whole-tree checkpoints cannot store or restore safely (a line break, a backslash, a control character, too long), so no rollback covers them; rename them`,
        evidence: { paths: skips.slice(0, SAMPLE).map((s) => JSON.stringify(s.path)), count: skips.length },
        fix: "",
      });
    }
    for (const id of active) {
      const cp = await deps.backend.transaction("read", async (tx) => {
        const live = await tx.checkpoints.liveCheckpoints(id);
        const last = live[live.length - 1];
        return last && { row: last, files: await tx.checkpoints.runsAt(last.lane, last.seq) };
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

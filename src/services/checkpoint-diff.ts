/**
 * What changed between two checkpoints of a session, per file, as unified diffs (the dashboard's
 * "compare two checkpoints"). A checkpoint holds the files it recorded: a whole-tree one every
 * file, a targeted one only the files a tool was about to write. So a path is compared only when
 * both recorded it; a path only one recorded is named as such, never guessed. Binary files and
 * pairs over 1 MiB are named, not diffed, as in the rollback preview.
 */
import type { Checkpoint, CheckpointFile } from "../core/checkpoints.js";
import { BatonError } from "../errors.js";
import type { CheckpointService } from "./checkpoints.js";

const MAX_DIFF_BYTES = 1024 * 1024;

export type PairState = "changed" | "added" | "removed" | "unchanged" | "only_from" | "only_to" | "skipped";

export interface CheckpointPairFile {
  path: string;
  state: PairState;
  /** Unified diff from → to (or a line naming a binary or too large pair). */
  diff?: string;
  note?: string;
}

export interface CheckpointPairDiff {
  from: Omit<Checkpoint, "files">;
  to: Omit<Checkpoint, "files">;
  files: CheckpointPairFile[];
}

function isBinary(b: Uint8Array): boolean {
  const n = Math.min(b.byteLength, 8000);
  for (let i = 0; i < n; i++) if (b[i] === 0) return true;
  return false;
}

const hashOf = (f: CheckpointFile | undefined) => (f && "hash" in f ? f.hash : undefined);

export async function diffCheckpoints(cps: CheckpointService, fromId: string, toId: string): Promise<CheckpointPairDiff> {
  const [from, to] = await Promise.all([cps.get(fromId), cps.get(toId)]);
  if (from.sessionId !== to.sessionId) throw new BatonError("bad_input", `checkpoints ${fromId} and ${toId} belong to different sessions`);
  for (const c of [from, to])
    if (c.prunedAt !== undefined)
      throw new BatonError("snapshot_expired", `checkpoint #${c.seq} (${c.id}) was pruned at ${c.prunedAt}; its files are gone`, {
        checkpointId: c.id,
      });
  const a = new Map(from.files.map((f) => [f.path, f]));
  const b = new Map(to.files.map((f) => [f.path, f]));
  const paths = [...new Set([...a.keys(), ...b.keys()])].sort();
  const wanted = [...new Set(paths.flatMap((p) => [hashOf(a.get(p)), hashOf(b.get(p))]).filter((h): h is string => h !== undefined))];
  const { createTwoFilesPatch } = await import("diff");
  const out: CheckpointPairFile[] = [];
  let contents: Map<string, Buffer> | undefined;
  for (const path of paths) {
    const fa = a.get(path);
    const fb = b.get(path);
    if (!fa || !fb) {
      out.push({ path, state: fa ? "only_from" : "only_to", note: `only checkpoint #${fa ? from.seq : to.seq} recorded this file` });
      continue;
    }
    if ("skipped" in fa || "skipped" in fb) {
      out.push({ path, state: "skipped", note: "left out of a checkpoint (its name cannot be stored safely)" });
      continue;
    }
    const ha = hashOf(fa);
    const hb = hashOf(fb);
    if (ha === hb) {
      out.push({ path, state: "unchanged" });
      continue;
    }
    contents ??= await cps.blobs.readMany(wanted);
    const before = ha === undefined ? Buffer.alloc(0) : (contents.get(ha) ?? Buffer.alloc(0));
    const after = hb === undefined ? Buffer.alloc(0) : (contents.get(hb) ?? Buffer.alloc(0));
    const state: PairState = ha === undefined ? "added" : hb === undefined ? "removed" : "changed";
    const oldName = ha === undefined ? "/dev/null" : `a/${path}`;
    const newName = hb === undefined ? "/dev/null" : `b/${path}`;
    let diff: string;
    if (isBinary(before) || isBinary(after)) diff = `Binary files ${oldName} and ${newName} differ\n`;
    else if (before.byteLength + after.byteLength > MAX_DIFF_BYTES)
      diff = `--- ${oldName}\n+++ ${newName}\n(${before.byteLength} → ${after.byteLength} bytes: too large to diff)\n`;
    else
      diff = createTwoFilesPatch(oldName, newName, before.toString("utf8"), after.toString("utf8"), undefined, undefined, {
        context: 3,
      }).replace(/^=+\n/, "");
    out.push({ path, state, diff });
  }
  const { files: _f, ...fromInfo } = from;
  const { files: _t, ...toInfo } = to;
  return { from: fromInfo, to: toInfo, files: out };
}

/**
 * What changed between two checkpoints of a session, per file, as unified diffs (the dashboard's
 * "compare two checkpoints"). A checkpoint holds the files it recorded: a whole-tree one every
 * file, a targeted one only the files a tool was about to write. So a path is compared only when
 * both recorded it; a path only one recorded is named as such, never guessed. Binary files and
 * pairs over 1 MiB are named, not diffed, as in the rollback preview, and so is a private file
 * whose content another workspace keeps (a shared store). Diffs are redacted (file-diff.ts).
 */
import type { Checkpoint, CheckpointFile } from "../../core/time-travel/checkpoints.js";
import { BatonError } from "../../errors.js";
import { privateHolder } from "./checkpoint-origin.js";
import type { CheckpointService } from "./checkpoints.js";
import { diffable, tooLargeDiff, unifiedDiff } from "./file-diff.js";

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

const hashOf = (f: CheckpointFile | undefined) => (f && "hash" in f ? f.hash : undefined);
const sizeOf = (f: CheckpointFile | undefined) => (f && "size" in f ? f.size : 0);

export async function diffCheckpoints(cps: CheckpointService, fromId: string, toId: string): Promise<CheckpointPairDiff> {
  const [from, to] = await Promise.all([cps.get(fromId), cps.get(toId)]);
  if (from.sessionId !== to.sessionId) throw new BatonError("bad_input", `checkpoints ${fromId} and ${toId} belong to different sessions`);
  for (const c of [from, to])
    if (c.prunedAt !== undefined)
      throw new BatonError("checkpoint_pruned", `checkpoint #${c.seq} (${c.id}) was pruned at ${c.prunedAt}; its files are gone`, {
        checkpointId: c.id,
      });
  const a = new Map(from.files.map((f) => [f.path, f]));
  const b = new Map(to.files.map((f) => [f.path, f]));
  const paths = [...new Set([...a.keys(), ...b.keys()])].sort();
  const out: CheckpointPairFile[] = [];
  // First the pairs, from the manifests alone; then the blobs of only the changed pairs small
  // enough to diff (their sizes are in the manifests), read in one go.
  const diffs: { at: number; path: string; ha: string | undefined; hb: string | undefined }[] = [];
  const local = new Set<string>();
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
    const state: PairState = ha === undefined ? "added" : hb === undefined ? "removed" : "changed";
    // A private file whose content another workspace keeps (services/time-travel/checkpoint-origin.ts): named, never read.
    const away = privateHolder(cps, from, fa) ?? privateHolder(cps, to, fb);
    if (away !== undefined) {
      out.push({ path, state, note: `private file kept on ${away}: its content is never in the shared store, so it is not compared here` });
      continue;
    }
    const names = pairNames(path, ha, hb);
    if (!diffable(sizeOf(fa), sizeOf(fb))) {
      out.push({ path, state, diff: tooLargeDiff(names.oldName, names.newName, sizeOf(fa), sizeOf(fb)) });
      continue;
    }
    for (const f of [fa, fb]) if ("local" in f && f.local) local.add(f.hash);
    diffs.push({ at: out.length, path, ha, hb });
    out.push({ path, state });
  }
  const wanted = [...new Set(diffs.flatMap((d) => [d.ha, d.hb]).filter((h): h is string => h !== undefined))];
  const contents = wanted.length > 0 ? await cps.blobs.readMany(wanted, local) : new Map<string, Buffer>();
  const empty = Buffer.alloc(0);
  for (const d of diffs) {
    const { oldName, newName } = pairNames(d.path, d.ha, d.hb);
    const before = d.ha === undefined ? empty : (contents.get(d.ha) ?? empty);
    const after = d.hb === undefined ? empty : (contents.get(d.hb) ?? empty);
    (out[d.at] as CheckpointPairFile).diff = await unifiedDiff(oldName, newName, before, after);
  }
  const { files: _f, ...fromInfo } = from;
  const { files: _t, ...toInfo } = to;
  return { from: fromInfo, to: toInfo, files: out };
}

function pairNames(path: string, ha: string | undefined, hb: string | undefined) {
  return { oldName: ha === undefined ? "/dev/null" : `a/${path}`, newName: hb === undefined ? "/dev/null" : `b/${path}` };
}

/**
 * Checkpoint manifests as runs: which lane a checkpoint goes in, which runs a new checkpoint
 * opens and closes, and which runs pruning deletes. Domain logic over the contract's storage
 * primitives (CheckpointQueries: `openRuns`, `insertRuns`, `closeRuns`, `runsAt`,
 * `liveNeighbours`, `deleteRuns`, `markPruned`), so every engine stores the same rows.
 *
 * A run is a path whose entry (state, hash, mode, size, note) stayed the same from checkpoint
 * seq `from` up to, not including, `until` (null: still the same in the lane's newest
 * checkpoint). Each session's tree checkpoints share one lane (`tree:<session>`), so a tree
 * checkpoint writes rows only for the paths that changed since the lane's previous one: 2,000
 * files with 3 changed cost 3 new runs and 3 closed ones, wherever the files are
 * (docs/benchmarks.md). Targeted and safety checkpoints are a lane of their own, named by
 * their id. A checkpoint's files are the runs of its lane that hold its seq.
 *
 * Runs are deleted as soon as no live checkpoint of their lane falls inside them, so every run
 * in the table is referenced and a blob is alive while a run or an active session's artifact
 * names it. Pruning checkpoint `s` of a lane, with `p` and `n` the nearest live checkpoints of
 * the lane before and after it, deletes exactly the runs that hold `s` but neither `p` nor `n`
 * (a run is an interval: one that held a live checkpoint further out would hold `p` or `n`).
 *
 * Concurrency: every caller holds the session's `lockKey` (the session's checkpoint seq is
 * allocated under it), and a lane belongs to one session, so one writer at a time changes a
 * lane's runs on every engine. Pins are not taken under it: `markPruned` and `setPinned` are
 * compare-and-set, so a checkpoint pinned while retention chose it is kept, never both pinned
 * and pruned.
 */
import type { CheckpointFileRow, CheckpointQueries, CheckpointRow, ManifestRunRow, RunWindow } from "../../backend/contract.js";
import type { CheckpointKind } from "../../core/time-travel/checkpoints.js";

/** A lane's open run of one path: the entry and the seq it has held since. */
type OpenRun = Omit<ManifestRunRow, "path" | "until">;

/** The open runs of a lane as of its newest checkpoint, kept per process (see Manifests). */
interface LaneMemo {
  checkpointId: string;
  runs: Map<string, OpenRun>;
}

/** Lanes whose open runs a process keeps in memory (a server serving several sessions). */
const MEMO_LANES = 8;

/** The lane a new checkpoint goes in: the session's tree lane, or one of its own. */
export function laneFor(kind: CheckpointKind, id: string, sessionId: string): string {
  return kind === "tree" ? treeLane(sessionId) : id;
}

export function treeLane(sessionId: string): string {
  return `tree:${sessionId}`;
}

const sameEntry = (o: OpenRun, f: CheckpointFileRow) =>
  o.state === f.state && o.hash === f.hash && o.mode === f.mode && o.size === f.size && o.note === f.note;

/**
 * Advance a lane's open runs (`open`, changed in place) to a checkpoint at `seq` holding
 * `files`: the runs to close at `seq` (an entry that changed or went) and the runs to open.
 * Pure, and one synchronous pass: it runs over every file of a tree.
 */
export function advanceLane(
  open: Map<string, OpenRun>,
  files: readonly CheckpointFileRow[],
  seq: number,
): { close: { path: string; from: number }[]; add: ManifestRunRow[] } {
  const close: { path: string; from: number }[] = [];
  const add: ManifestRunRow[] = [];
  const before = open.size;
  let matched = 0;
  for (const f of files) {
    const o = open.get(f.path);
    if (o !== undefined) {
      matched++;
      if (sameEntry(o, f)) continue;
      close.push({ path: f.path, from: o.from });
    }
    add.push({ path: f.path, from: seq, until: null, state: f.state, hash: f.hash, mode: f.mode, size: f.size, note: f.note });
    open.set(f.path, { from: seq, state: f.state, hash: f.hash, mode: f.mode, size: f.size, note: f.note });
  }
  if (matched < before) {
    // Paths gone since the lane's previous checkpoint: their runs end here.
    const now = new Set(files.map((f) => f.path));
    for (const [path, o] of open) {
      if (now.has(path)) continue;
      close.push({ path, from: o.from });
      open.delete(path);
    }
  }
  return { close, add };
}

/** The runs that die when checkpoint `seq` is pruned, given its lane's nearest live neighbours. */
export function pruneWindow(seq: number, near: { before: number | null; after: number | null }): RunWindow {
  return { holding: seq, fromAfter: near.before ?? -1, endsBy: near.after };
}

/**
 * One process's view of the manifests: the storage primitives plus, per lane, its open runs as
 * this process last wrote them, keyed by the checkpoint that left them so. They are still the
 * table's while that checkpoint is the lane's newest and live: only a newer checkpoint of the
 * lane closes or opens runs, and pruning deletes only runs holding no live checkpoint, which an
 * open run of a live newest checkpoint always holds. A transaction that rolls back (or is
 * re-run) leaves a memo naming a checkpoint that never committed: it no longer matches.
 */
export class Manifests {
  readonly #lanes = new Map<string, LaneMemo>();

  /** Record a new checkpoint and its files (inside the write transaction holding the session's lockKey). */
  async insert(q: CheckpointQueries, row: CheckpointRow, files: readonly CheckpointFileRow[]): Promise<void> {
    if (row.lane === row.id) {
      await q.insertCheckpoint(row);
      await q.insertRuns(
        row.lane,
        files.map((f) => ({ ...f, from: row.seq, until: null })),
      );
      return;
    }
    const open = await this.#openRuns(q, row.lane);
    this.#lanes.delete(row.lane); // rebuilt below; a failure part-way must not leave it half-updated
    await q.insertCheckpoint(row);
    const { close, add } = advanceLane(open, files, row.seq);
    if (close.length > 0) await q.closeRuns(row.lane, close, row.seq);
    await q.insertRuns(row.lane, add);
    if (this.#lanes.size >= MEMO_LANES) this.#lanes.delete(this.#lanes.keys().next().value as string);
    this.#lanes.set(row.lane, { checkpointId: row.id, runs: open });
  }

  /** A checkpoint's files, by path (none once pruned). */
  async files(q: CheckpointQueries, row: CheckpointRow): Promise<CheckpointFileRow[]> {
    return row.prunedAt !== null ? [] : q.runsAt(row.lane, row.seq);
  }

  /**
   * Prune a live, unpinned checkpoint: mark it and delete the runs only it held. Returns the
   * blobs those runs named (candidates for collection), or undefined when it was pinned or
   * pruned already (also by a concurrent writer), in which case nothing changed.
   */
  async prune(q: CheckpointQueries, row: CheckpointRow, at: string): Promise<string[] | undefined> {
    if (!(await q.markPruned(row.id, at))) return undefined;
    return q.deleteRuns(row.lane, pruneWindow(row.seq, await q.liveNeighbours(row.lane, row.seq)));
  }

  /** The lane's open runs: this process's copy when it is still the table's, else read (call before adding a checkpoint to the lane). */
  async #openRuns(q: CheckpointQueries, lane: string): Promise<Map<string, OpenRun>> {
    const head = await q.laneHead(lane);
    const memo = this.#lanes.get(lane);
    if (memo && head && head.id === memo.checkpointId && head.prunedAt === null) return memo.runs;
    const runs = new Map<string, OpenRun>();
    for (const { path, until: _until, ...o } of await q.openRuns(lane)) runs.set(path, o);
    return runs;
  }
}

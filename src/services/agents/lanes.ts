/**
 * The files agent lanes write (core/lanes.ts): one row per session, path and lane
 * (`lane_writes`), written by the journal's append hook in the transaction of the
 * `turn:recorded` that names them, and dropped when the lane's agent session ends. A row written
 * since the start of its lane's running run is that lane's claim; its hash is what the lane left
 * in the file. They are kept out of the snapshot every hook reads, because a lane may write
 * thousands of files (docs/benchmarks.md, "hooks").
 *
 * Rows are a projection of the journal's turns, like the work queue: lost, they cost only a
 * notice or a kept file; they are never the truth about what happened.
 */
import type { Backend, LaneWriteRow, StoreTx } from "../../backend/contract.js";
import {
  type ClaimHolder,
  familyOf,
  isWorking,
  type LaneWrite,
  liveClaims,
  type SharedFile,
  sameFamily,
  sharedFiles,
} from "../../core/lanes.js";
import { type LaneView, laneViews } from "../../core/session/lane-view.js";
import type { JournalEvent, Snapshot } from "../../core/types.js";
import type { Journal } from "../journal/journal.js";

/** Files named per lane in status (its newest), and at most this many shared files. */
const LISTED = 20;
/** Claims of one lane a shell command's edits are checked against (its newest). */
const CLAIMS_READ = 2_000;

/** A turn's files as lane writes, one per path (the last listing wins: PostgreSQL upserts a statement's rows once each). */
function writesOf(ev: JournalEvent): LaneWriteRow[] {
  const lane = ev.data.lane;
  const files = ev.data.files;
  if (typeof lane !== "string" || !Array.isArray(files)) return [];
  const rows = new Map<string, LaneWriteRow>();
  for (const f of files) {
    if (f === null || typeof f !== "object" || Array.isArray(f) || typeof f.path !== "string") continue;
    rows.delete(f.path);
    rows.set(f.path, { sessionId: ev.sessionId, path: f.path, lane, at: ev.at, hash: typeof f.hash === "string" ? f.hash : "" });
  }
  return [...rows.values()];
}

export class LaneService {
  readonly #backend: Backend;

  constructor(backend: Backend, journal: Journal) {
    this.#backend = backend;
    journal.addAppendHook(
      (tx, _flow, ev) => this.#onAppend(tx, ev),
      (_flow, ev) => (ev.type === "turn:recorded" && writesOf(ev).length > 0) || ev.type === "lane:ended",
    );
  }

  async #onAppend(tx: StoreTx, ev: JournalEvent): Promise<void> {
    if (ev.type === "turn:recorded") {
      const rows = writesOf(ev);
      if (rows.length > 0) await tx.lanes.putWrites(rows);
    } else if (ev.type === "lane:ended" && typeof ev.data.lane === "string") {
      await tx.lanes.dropLane(ev.sessionId, familyOf(ev.data.lane));
    }
  }

  /** The live claims of every family but `lane`'s on `paths`, newest first. */
  async claimsOn(snap: Snapshot, lane: string, paths: readonly string[], nowMs: number): Promise<ClaimHolder[]> {
    if (paths.length === 0 || !snap.facets.lanes) return [];
    const rows = await this.#backend.transaction("read", (tx) => tx.lanes.writesOn(snap.sessionId, paths));
    return liveClaims(snap, rows, nowMs, lane);
  }

  /** Every live claim of every family but `lane`'s, newest first (at most CLAIMS_READ per lane). */
  async claimsOfOthers(snap: Snapshot, lane: string, nowMs: number): Promise<ClaimHolder[]> {
    const others = Object.values(snap.facets.lanes ?? {}).filter((l) => !sameFamily(l.id, lane) && isWorking(snap, l.id, nowMs));
    if (others.length === 0) return [];
    const rows = await this.#backend.transaction("read", async (tx) => {
      const out: LaneWriteRow[] = [];
      for (const l of others) {
        const since = snap.facets.lanes?.[familyOf(l.id)]?.since;
        if (since !== undefined) out.push(...(await tx.lanes.laneWrites(snap.sessionId, l.id, since, CLAIMS_READ)));
      }
      return out;
    });
    return liveClaims(snap, rows, nowMs, lane);
  }

  /** The live lanes as status shows them, each with how many files it claims and its newest. */
  async views(snap: Snapshot, nowMs: number): Promise<LaneView[]> {
    const views = laneViews(snap, nowMs);
    const working = views.filter((v) => v.status === "working" && v.since !== undefined);
    if (working.length === 0) return views;
    await this.#backend.transaction("read", async (tx) => {
      for (const v of working) {
        const since = v.since as string;
        v.claims = {
          count: await tx.lanes.countWrites(snap.sessionId, v.lane, since),
          files: (await tx.lanes.laneWrites(snap.sessionId, v.lane, since, LISTED)).map((w) => w.path),
        };
      }
    });
    return views;
  }

  /** Files two or more families at work now both claim (the next action's `shared_file`). */
  async shared(snap: Snapshot, nowMs: number): Promise<SharedFile[]> {
    const lanes = Object.values(snap.facets.lanes ?? {}).filter((l) => isWorking(snap, l.id, nowMs));
    if (new Set(lanes.map((l) => familyOf(l.id))).size < 2) return [];
    const since = lanes.reduce((m, l) => {
      const s = snap.facets.lanes?.[familyOf(l.id)]?.since ?? "";
      return m === "" || s < m ? s : m;
    }, "");
    const rows = await this.#backend.transaction("read", (tx) =>
      tx.lanes.overlapping(
        snap.sessionId,
        lanes.map((l) => l.id),
        since,
        LISTED,
      ),
    );
    return sharedFiles(liveClaims(snap, rows, nowMs));
  }

  /** Every write of these lanes at or after `since` (a rollback's view of what they did). */
  async writes(sessionId: string, lanes: readonly string[], since: string): Promise<LaneWrite[]> {
    if (lanes.length === 0) return [];
    return this.#backend.transaction("read", async (tx) => {
      const out: LaneWrite[] = [];
      for (const l of lanes) out.push(...(await tx.lanes.laneWrites(sessionId, l, since, Number.MAX_SAFE_INTEGER)));
      return out;
    });
  }
}

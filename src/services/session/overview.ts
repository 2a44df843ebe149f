/**
 * What a supervisor's view of the workspace shows (the dashboard's sessions and timeline): every
 * session's status with its last run and journal length, and a session's events filtered by
 * type and actor, read in bounded slices. Reads only.
 */
import type { WorkVersion } from "../../backend/contract.js";
import { sha256 } from "../../core/canonical.js";
import type { JournalEvent, RunRecord } from "../../core/types.js";
import type { Journal } from "../journal/journal.js";
import type { SessionStatus, StatusReport } from "./status.js";

/** One row of the sessions view: the session's status plus its last run and its last seq. */
export interface SessionOverview extends SessionStatus {
  lastRun?: Pick<RunRecord, "runId" | "agent" | "host" | "status" | "started" | "ended">;
  events: number;
}

/** Every session (or those of `ids`), active first, most recent activity first within each group. */
export async function sessionOverview(
  journal: Journal,
  status: (opts: { all?: boolean; sessionId?: string }) => Promise<StatusReport>,
  ids?: readonly string[],
): Promise<SessionOverview[]> {
  // With `ids`, only those rows (a page refreshing what changed); an unknown id is left out.
  const sessions = ids
    ? (
        await Promise.all(
          [...new Set(ids)].map((sessionId) =>
            status({ sessionId }).then(
              (r) => r.sessions,
              (err: unknown) => {
                if ((err as { code?: string }).code === "not_found") return [];
                throw err;
              },
            ),
          ),
        )
      ).flat()
    : (await status({ all: true })).sessions;
  const rows: SessionOverview[] = [];
  for (const s of sessions) {
    const view = await journal.read(s.sessionId); // the fold is cached: status just read it
    const runs = view.snapshot.facets.runs;
    const r = runs[runs.length - 1];
    const row: SessionOverview = { ...s, events: view.snapshot.lastSeq };
    if (r) {
      row.lastRun = { runId: r.runId, agent: r.agent, status: r.status, started: r.started };
      if (r.host !== undefined) row.lastRun.host = r.host;
      if (r.ended !== undefined) row.lastRun.ended = r.ended;
    }
    rows.push(row);
  }
  rows.sort((a, b) =>
    a.status !== b.status ? (a.status === "active" ? -1 : 1) : a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : 0,
  );
  return rows;
}

export interface EventScan {
  events: JournalEvent[];
  /** The last seq read: continue after it. */
  scannedTo: number;
  /** Whether the end of the journal was reached. */
  done: boolean;
}

/** Events read at most per scan before answering with where it got to. */
export const SCAN_MAX = 20_000;
const SLICE = 1_000;

/**
 * A session's events matching `type` and/or `actor`, in seq order after `after`, up to `limit`.
 * A filter over a long journal is answered in slices: at most `scanMax` events are read per
 * call, and `scannedTo` says where to continue (`done` once the end was reached).
 */
export async function scanEvents(
  journal: Journal,
  sessionId: string,
  o: { after: number; limit: number; type?: string; actor?: string; scanMax?: number },
): Promise<EventScan> {
  const scanMax = o.scanMax ?? SCAN_MAX;
  const out: JournalEvent[] = [];
  let scannedTo = o.after;
  let done = false;
  while (out.length < o.limit && scannedTo - o.after < scanMax) {
    const { events, corrupt } = await journal.events(sessionId, { afterSeq: scannedTo, limit: SLICE });
    for (const e of events) {
      scannedTo = e.seq;
      if ((o.type === undefined || e.type === o.type) && (o.actor === undefined || e.actor === o.actor)) out.push(e);
      if (out.length >= o.limit) break;
    }
    for (const d of corrupt) if (d.seq !== undefined && d.seq > scannedTo && out.length < o.limit) scannedTo = d.seq;
    if (events.length + corrupt.length < SLICE && out.length < o.limit) {
      done = true;
      break;
    }
  }
  return { events: out, scannedTo, done };
}

/**
 * What a page showing one session needs to know to re-read only what changed: a short tag per
 * part that changes without the journal growing (a ledger node written, a checkpoint taken,
 * pinned or pruned, work leased, released or dead-lettered). Equal tags, same content.
 */
export interface SessionVersions {
  ledger: string;
  checkpoints: string;
  work: string;
}

export interface VersionReads {
  /** The id of the session's newest ledger node (undefined: none). */
  newestLedgerNode: () => Promise<string | undefined>;
  checkpoints: () => Promise<readonly { id: string; pinned: boolean; prunedAt: string | null; pinChanges: number }[]>;
  work: () => Promise<WorkVersion>;
}

/**
 * The tags of one session. A tag names a state, not only its parts' ids: a page also reads a panel
 * after its own actions, so it may have seen a state the stream never sent, and a later state must
 * not come back under a tag sent before. So each tag holds something that only grows beside what
 * it shows. Four limits remain: a process of an older build on the same store pins without
 * counting `pinChanges`; two heartbeats asking for a shorter and then a longer lease within the
 * stream's quiet window can put an expiry back where it was; a lease given back in the same
 * millisecond as it expired (or under a clock that steps back) leaves the item as that expiry did,
 * since `availableMs` is a time, not a count; and the ledger's store-wide pruning can delete a
 * session's oldest nodes without a new newest one, so a chart may show them until the session
 * records again.
 */
export async function sessionVersions(r: VersionReads): Promise<SessionVersions> {
  const [node, cps, work] = await Promise.all([r.newestLedgerNode(), r.checkpoints(), r.work()]);
  const tag = (v: unknown) => sha256(JSON.stringify(v)).slice(0, 16);
  return {
    ledger: node ?? "",
    // A checkpoint by how many times its pin changed too: pinned and unpinned, it is back at
    // `pinned: false` but must not come back with the tag it had before the pin.
    checkpoints: tag(cps.map((c) => [c.id, c.pinned, c.prunedAt, c.pinChanges])),
    // Work by more than what is open and dead now, which comes back, all read in one statement
    // (QueueQueries.workVersion): the session's last journal seq (an item created, leased and
    // acked is gone again, but the event that made it moved the seq); each open item's
    // attempts, the leases it has had (leased and given back it is ready again one attempt on;
    // dead-lettered and retried, with fresh attempts but one lease on), its lease's expiry (a
    // heartbeat moves what the panel shows) and when it is next available (each expiry moves
    // it: a lease revived by its heartbeat and expired again is not the expiry before); and its
    // dead items, all of them, not the twenty the panel lists: how many, their leases summed
    // (one dead again after a retry has one more) and the newest death's time.
    work: tag([
      work.lastSeq,
      work.open.map((w) => [w.itemId, w.state, w.attempts, w.leases, w.leaseId, w.leaseExpiresMs, w.availableMs]),
      [work.dead.count, work.dead.leases, work.dead.lastAt],
    ]),
  };
}

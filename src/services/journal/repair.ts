/**
 * Repairs and exports over the journal: `rebuild` refolds a session and replaces a stored
 * snapshot that disagrees (recording `snapshot_repaired`); `verifySnapshot` does the same
 * comparison without writing (doctor); `exportRows` pages every row out.
 */
import type { Backend, EventRow } from "../../backend/contract.js";
import { canonicalJson } from "../../core/canonical.js";
import { isTerminal } from "../../core/flows/flow.js";
import { emptySnapshot } from "../../core/session/fold.js";
import type { JournalEvent } from "../../core/types.js";
import type { FlowRegistry } from "../flows.js";
import { FOLD_PAGE, foldFrom, loadFolded, notFound, parseRow, snapshotRow } from "./rows.js";

export interface RebuildResult {
  sessionId: string;
  repaired: boolean;
  lastSeq: number;
  phase: string;
}

export interface SnapshotCheck {
  sessionId: string;
  matches: boolean;
  journalSeq: number;
  storedSeq?: number;
  /** `missing`, `corrupt` (it does not verify), or `differs`. */
  problem?: "missing" | "corrupt" | "differs";
}

/** Refold one session from seq 1; a stored snapshot that disagrees is replaced and the repair recorded. */
export function rebuildSession(backend: Backend, flows: FlowRegistry, id: string, now: () => Date): Promise<RebuildResult> {
  return backend.transaction("write", async (tx) => {
    const session = await tx.getSession(id);
    if (!session) throw notFound(id);
    const flow = await flows.get(session.flow);
    const snap = await foldFrom(tx, session, flow, emptySnapshot(session.id, flow, session.createdAt));
    const fresh = snapshotRow(snap);
    const stored = await tx.getSnapshot(id);
    // The stored snapshot may lag (see SNAPSHOT_EVERY): it agrees when it verifies and,
    // with the events after it folded in, equals the full refold.
    const current = await loadFolded(tx, session, flow);
    // One folded by an older version of the fold is replaced, and that is not a repair either.
    const repaired = !stored || (!current.outdated && (current.storedSeq === 0 || canonicalJson(current.snap) !== canonicalJson(snap)));
    if (!repaired && (stored.lastSeq !== snap.lastSeq || current.outdated)) await tx.putSnapshot(fresh); // catch up; not a repair
    if (repaired) {
      await tx.putSnapshot(fresh);
      const at = now().toISOString();
      await tx.insertDiagnostic({
        sessionId: id,
        code: "snapshot_repaired",
        severity: "warning",
        message: stored
          ? `the snapshot (at seq ${stored.lastSeq}) disagreed with the journal and was rebuilt from ${snap.lastSeq} events`
          : `the snapshot was missing and was rebuilt from ${snap.lastSeq} events`,
        at,
      });
      const status = isTerminal(flow, snap.phase, snap.deadline, new Date(at)) ? "completed" : "active";
      await tx.updateSession(id, { phase: snap.phase, status, updatedAt: session.updatedAt, lastSeq: snap.lastSeq });
    }
    return { sessionId: id, repaired, lastSeq: snap.lastSeq, phase: snap.phase };
  });
}

/**
 * Refold a session from seq 1 and compare it with the stored snapshot, as `rebuildSession`
 * does, in a read transaction: nothing is written. A stored snapshot that lags (SNAPSHOT_EVERY)
 * agrees when, with the later events folded in, it equals the refold.
 */
export function verifySnapshot(backend: Backend, flows: FlowRegistry, sessionId: string): Promise<SnapshotCheck> {
  return backend.transaction("read", async (tx) => {
    const session = await tx.getSession(sessionId);
    if (!session) throw notFound(sessionId);
    const flow = await flows.get(session.flow);
    const snap = await foldFrom(tx, session, flow, emptySnapshot(session.id, flow, session.createdAt));
    const stored = await tx.getSnapshot(sessionId);
    const base = { sessionId, journalSeq: snap.lastSeq };
    if (!stored) return { ...base, matches: false, problem: "missing" as const };
    const out = { ...base, storedSeq: stored.lastSeq };
    const current = await loadFolded(tx, session, flow);
    // Folded by an older version: not a fault (the next write replaces it), and it cannot be
    // compared with today's fold.
    if (current.outdated) return { ...out, matches: true };
    if (current.storedSeq === 0) return { ...out, matches: false, problem: "corrupt" as const };
    if (canonicalJson(current.snap) !== canonicalJson(snap)) return { ...out, matches: false, problem: "differs" as const };
    return { ...out, matches: true };
  });
}

/** Every journal row of a session, in pages (unreadable rows as `{seq, corrupt}`). */
export async function* exportRows(backend: Backend, sessionId: string): AsyncGenerator<JournalEvent | { seq: number; corrupt: string }> {
  let after = 0;
  for (;;) {
    const page = await backend.transaction("read", async (tx) => {
      if (after === 0 && !(await tx.getSession(sessionId))) throw notFound(sessionId);
      return tx.readEvents(sessionId, after, FOLD_PAGE);
    });
    if (page.length === 0) return;
    for (const r of page) {
      const parsed = parseRow(r);
      yield "problem" in parsed ? { seq: r.seq, corrupt: parsed.problem } : parsed.event;
    }
    after = (page[page.length - 1] as EventRow).seq;
  }
}

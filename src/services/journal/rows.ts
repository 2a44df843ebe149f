/**
 * The journal's rows: input validation (with redaction, before anything is stored), stored rows
 * parsed back into events, and snapshots loaded and folded from the rows after them. Pure
 * functions over a transaction, used by the journal (journal.ts).
 */
import type { EventRow, SessionRow, SnapshotRow, StoreTx } from "../../backend/contract.js";
import { canonicalJson, checksum, isPlainJson, jsonBoundsProblem, randomHex, sha256 } from "../../core/canonical.js";
import { isFacetEvent } from "../../core/facets.js";
import type { FlowDefinition } from "../../core/flows/flow.js";
import { emptySnapshot, FOLD_VERSION, foldCorruptRow, foldEvent } from "../../core/session/fold.js";
import type { AppendResult, Diagnostic, EventInput, EventOutcome, JournalEvent, JsonObject, Snapshot } from "../../core/types.js";
import { BatonError, badInput } from "../../errors.js";

const EVENT_ID = /^[\x21-\x7e]{1,200}$/;
export const EVENT_TYPE = /^[a-z][a-z0-9_]*(:[a-z][a-z0-9_]*)?$/;
/** Journal rows read per query while folding or exporting. */
export const FOLD_PAGE = 2_000;

export interface Folded {
  snap: Snapshot;
  /** The seq of the snapshot stored in the database (0: none stored, or unreadable). */
  storedSeq: number;
  /** That stored snapshot as this process read or wrote it, verified (a read checks the row is still that one). */
  stored?: Pick<SnapshotRow, "body" | "hash">;
  /** The session row's phase and status at this state: as read, or as the append that made it left them. */
  row?: Pick<SessionRow, "phase" | "status">;
}

export function notFound(sessionId: string): BatonError {
  return new BatonError("not_found", `no session "${sessionId}"; run \`baton session list --all\` to see the sessions`, { sessionId });
}

export function generateSessionId(flow: string): string {
  const prefix = flow.replace(/[^a-z0-9]+/g, "").slice(0, 4) || "s";
  return `${prefix}-${randomHex(4)}`;
}

export function normalise(
  input: EventInput,
  index: number,
  total: number,
  redactJson: (value: JsonObject) => unknown,
): EventInput & { data: JsonObject } {
  const where = total > 1 ? ` (event ${index + 1} of the batch)` : "";
  if (!input || typeof input !== "object") throw badInput(`an event must be an object${where}`);
  if (typeof input.type !== "string" || !EVENT_TYPE.test(input.type)) {
    throw badInput(`event type ${JSON.stringify(input.type)} is invalid${where}: use a lowercase word, or noun:verb for facet events`);
  }
  if (input.type.includes(":") && !isFacetEvent(input.type)) {
    throw badInput(`unknown facet event "${input.type}"${where}; flow events are plain words, facet events are e.g. decision:added`);
  }
  if (input.id !== undefined && (typeof input.id !== "string" || !EVENT_ID.test(input.id))) {
    throw badInput(`event id ${JSON.stringify(input.id)} is invalid${where}: 1-200 printable ASCII characters, no spaces`);
  }
  if (
    input.actor !== undefined &&
    (typeof input.actor !== "string" || input.actor === "" || input.actor.length > 100 || /\p{Cc}/u.test(input.actor))
  ) {
    throw badInput(`actor must be a non-empty string of at most 100 characters, without control characters${where}`);
  }
  if (input.revision !== undefined && (!Number.isSafeInteger(input.revision) || input.revision < 0)) {
    throw badInput(`revision must be a whole number ≥ 0${where}`);
  }
  let data: unknown = input.data ?? {};
  if (typeof data !== "object" || data === null || Array.isArray(data)) throw badInput(`event data must be a JSON object${where}`);
  if (data instanceof Map || data instanceof Set)
    throw badInput(`event data must be a JSON object, not a ${data.constructor.name}${where}`);
  let problem = jsonBoundsProblem(data);
  if (problem) throw badInput(`event data${where}: ${problem}`);
  if (!isPlainJson(data)) {
    // Stored is what JSON.stringify writes (a URL's toJSON, a boxed string's value, no
    // undefined): that JSON is what is checked, redacted, hashed and folded, not the objects.
    let parsed: unknown;
    try {
      parsed = JSON.parse(JSON.stringify(data) ?? "null");
    } catch (err) {
      throw badInput(`event data${where} cannot be written as JSON: ${(err as Error).message}`);
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
      throw badInput(
        `event data must be a JSON object${where}; as JSON it is ${JSON.stringify(parsed).slice(0, 60)} (a Date or a boxed value?)`,
      );
    problem = jsonBoundsProblem(parsed);
    if (problem) throw badInput(`event data${where}: ${problem}`);
    data = parsed;
  }
  // Secrets are removed before anything is stored: event data carries hook payloads and user text.
  return { ...input, data: redactJson(data as JsonObject) as JsonObject };
}

/**
 * The sha256 of an event's canonical body (type, actor, data with its keys sorted, revision):
 * what tells a re-sent id's repeat (the same hash) from a conflict. `dataText`, when the caller
 * has it, is JSON.stringify(data) (the text an append stores): the canonical form is that text
 * whenever the data's keys are already in order.
 */
export function bodyHash(type: string, actor: string, data: JsonObject, revision: number | null | undefined, dataText?: string): string {
  return sha256(
    `{"actor":${JSON.stringify(actor)},"data":${canonicalJson(data, dataText)},"revision":${revision ?? null},"type":${JSON.stringify(type)}}`,
  );
}

/**
 * A stored event's body hash. An event appended with an id Baton generated is stored without one
 * (no caller can have sent that id before, so the hash is worked out only if one ever sends it):
 * it is worked out here from the row, whose data is the JSON text the hash was to be taken over.
 * An unreadable row gives "", which matches no body.
 */
export function storedBodyHash(row: EventRow): string {
  if (row.bodyHash !== "") return row.bodyHash;
  const parsed = parseRow(row);
  if (!("event" in parsed)) return "";
  const e = parsed.event;
  // The canonical text worked out anew: the stored text may not be JSON.stringify's own (a row
  // written by hand or another tool), and this runs only when a generated id is sent again.
  return bodyHash(e.type, e.actor, e.data, e.revision);
}

export async function findPrior(tx: StoreTx, sessionId: string, id: string): Promise<{ row: EventRow; result: AppendResult } | undefined> {
  const row = await tx.findEventById(sessionId, id);
  if (!row) return undefined;
  const parsed = parseRow(row);
  const event = "event" in parsed ? parsed.event : { sessionId, seq: row.seq, id, type: row.type, actor: row.actor, data: {}, at: row.at };
  return { row, result: { event, duplicate: true, outcome: row.outcome as EventOutcome, phase: "" } };
}

export function parseRow(r: EventRow): { event: JournalEvent } | { problem: string } {
  let data: unknown;
  try {
    data = JSON.parse(r.data);
  } catch (err) {
    return { problem: `data is not JSON: ${(err as Error).message}` };
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) return { problem: "data is not a JSON object" };
  if (typeof r.type !== "string" || !EVENT_TYPE.test(r.type)) return { problem: `type ${JSON.stringify(r.type)} is invalid` };
  if (Number.isNaN(Date.parse(r.at))) return { problem: `time ${JSON.stringify(r.at)} is invalid` };
  const event: JournalEvent = {
    sessionId: r.sessionId,
    seq: r.seq,
    id: r.id,
    type: r.type,
    actor: r.actor,
    data: data as JsonObject,
    at: r.at,
  };
  if (r.revision !== null) event.revision = r.revision;
  return { event };
}

export function snapshotRow(snap: Snapshot): SnapshotRow {
  const body = JSON.stringify({ ...snap, foldVersion: FOLD_VERSION });
  return { sessionId: snap.sessionId, lastSeq: snap.lastSeq, body, hash: checksum(body) };
}

/** Fold journal rows after `snap.lastSeq` into `snap` (mutated and returned). */
export async function foldFrom(tx: StoreTx, session: SessionRow, flow: FlowDefinition, snap: Snapshot): Promise<Snapshot> {
  for (;;) {
    const rows = await tx.readEvents(session.id, snap.lastSeq, FOLD_PAGE);
    if (rows.length === 0) return snap;
    for (const r of rows) {
      const parsed = parseRow(r);
      if ("problem" in parsed) foldCorruptRow(snap, r.seq, parsed.problem);
      else foldEvent(flow, snap, parsed.event);
    }
  }
}

/**
 * The current snapshot for a write, with the seq of the stored one (0 when unusable: missing,
 * corrupt, or folded by another version, `outdated`).
 */
export async function loadFolded(tx: StoreTx, session: SessionRow, flow: FlowDefinition): Promise<Folded & { outdated: boolean }> {
  const { snapshot, storedSeq, stored, outdated } = await loadSnapshot(tx, session, flow);
  const folded = { snap: snapshot, storedSeq, outdated, row: { phase: session.phase, status: session.status } };
  return stored === undefined ? folded : { ...folded, stored };
}

/**
 * The current snapshot: the stored one when its checksum verifies, plus newer events; a
 * corrupt or missing one is refolded from the journal in memory (and reported) without writing.
 */
export async function loadSnapshot(
  tx: StoreTx,
  session: SessionRow,
  flow: FlowDefinition,
): Promise<{ snapshot: Snapshot; readDiagnostics: Diagnostic[]; storedSeq: number; stored?: Folded["stored"]; outdated: boolean }> {
  const readDiagnostics: Diagnostic[] = [];
  const row = await tx.getSnapshot(session.id);
  let snap: Snapshot | undefined;
  let outdated = false;
  if (row) {
    if (checksum(row.body) === row.hash) {
      try {
        const { foldVersion, ...parsed } = JSON.parse(row.body) as Snapshot & { foldVersion?: number };
        if (parsed && parsed.sessionId === session.id && parsed.lastSeq === row.lastSeq) {
          // Folded by another version of the fold: refolded here, replaced at the next write.
          if ((foldVersion ?? 1) === FOLD_VERSION) snap = parsed as Snapshot;
          else outdated = true;
        }
      } catch {
        snap = undefined;
      }
    }
    if (!snap && !outdated) {
      readDiagnostics.push({
        code: "snapshot_corrupt",
        severity: "warning",
        message: `the stored snapshot is corrupt; this read refolded the journal. Run \`baton rebuild --session ${session.id}\` to repair it`,
      });
    }
  }
  const stored = snap && row ? { storedSeq: snap.lastSeq, stored: { body: row.body, hash: row.hash } } : { storedSeq: 0 };
  snap ??= emptySnapshot(session.id, flow, session.createdAt);
  await foldFrom(tx, session, flow, snap);
  return { snapshot: snap, readDiagnostics, ...stored, outdated };
}

/**
 * Whether the state this process kept for the session is still the journal's, as a read would
 * fold it: no event appended since (the session row's lastSeq and flow), and the stored snapshot
 * the very row this process read or wrote, intact (a rebuild elsewhere, a lost or damaged row,
 * sends the read back to the journal, which reports what it finds).
 */
export async function keptIsCurrent(tx: StoreTx, session: SessionRow, kept: Folded): Promise<boolean> {
  if (kept.snap.lastSeq !== session.lastSeq || kept.snap.flow !== session.flow || kept.stored === undefined) return false;
  const row = await tx.getSnapshot(session.id);
  // The same text as the verified one: intact, without checksumming it again (~90 µs for 60 KB).
  return row !== undefined && row.lastSeq === kept.storedSeq && row.hash === kept.stored.hash && row.body === kept.stored.body;
}

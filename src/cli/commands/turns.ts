/** `baton turn record`: one agent turn for the spiral detector (agent hooks call it after each tool). */
import { canonicalJson, sha256 } from "../../core/canonical.js";
import { redactText, redactValue } from "../../core/redaction/redact.js";
import type { TurnFile, TurnStatus } from "../../core/types.js";
import { badInput } from "../../errors.js";
import type { TurnInput } from "../../services/agents/spiral.js";
import { type Ctx, parseJsonObject } from "../context.js";
import { one } from "../render.js";

const STATUSES: readonly TurnStatus[] = ["success", "error", "no_progress", "recovered"];
const RECORD_FIELDS = [
  "tool",
  "argsHash",
  "files",
  "status",
  "fingerprint",
  "failurePlace",
  "observationHash",
  "waiting",
  "waitingOn",
  "checkpointId",
  "progress",
  "id",
];

/**
 * A short stable hash of a call's arguments or result: redacted first (a hash of a weak secret
 * could be guessed offline), and JSON is canonicalised, so key order does not matter.
 */
export function shortHash(text: string): string {
  let canonical: string;
  try {
    canonical = canonicalJson(redactValue(JSON.parse(text)));
  } catch {
    canonical = redactText(text); // not JSON: hash the redacted text
  }
  return sha256(canonical).slice(0, 16);
}

export async function turnRecord(
  ctx: Ctx,
  o: {
    session?: string;
    record?: string;
    tool?: string;
    args?: string;
    argsHash?: string;
    file?: string[];
    status?: string;
    fingerprint?: string;
    observation?: string;
    observationHash?: string;
    checkpoint?: string;
    progress?: boolean;
    id?: string;
  },
): Promise<void> {
  const base = (parseJsonObject(o.record, "--record") ?? {}) as Record<string, unknown>;
  for (const k of Object.keys(base)) {
    if (!RECORD_FIELDS.includes(k)) throw badInput(`--record: "${k}" is not a turn field (fields: ${RECORD_FIELDS.join(", ")})`);
  }
  if (o.args !== undefined && o.argsHash !== undefined) throw badInput("give --args or --args-hash, not both");
  if (o.observation !== undefined && o.observationHash !== undefined) throw badInput("give --observation or --observation-hash, not both");
  const status = (o.status ?? base.status ?? "success") as TurnStatus;
  if (!STATUSES.includes(status)) throw badInput(`--status must be one of ${STATUSES.join(", ")}, not "${String(status)}"`);
  const turn = { ...base } as unknown as TurnInput;
  turn.status = status;
  if (o.tool !== undefined) turn.tool = o.tool;
  if (o.args !== undefined) turn.argsHash = shortHash(o.args);
  if (o.argsHash !== undefined) turn.argsHash = o.argsHash;
  if (o.file?.length) turn.files = [...((base.files as (string | TurnFile)[] | undefined) ?? []), ...o.file];
  if (o.fingerprint !== undefined) turn.fingerprint = o.fingerprint;
  if (o.observation !== undefined) turn.observationHash = shortHash(o.observation);
  if (o.observationHash !== undefined) turn.observationHash = o.observationHash;
  if (o.checkpoint !== undefined) turn.checkpointId = o.checkpoint;
  if (o.progress !== undefined) turn.progress = o.progress;
  if (o.id !== undefined) turn.id = o.id;
  const b = await ctx.open();
  const sid = await b.sessions.resolve(o.session);
  const r = await b.turns.record(sid, turn);
  ctx.out(r, () => {
    const lines = [
      `${r.turn.duplicate ? "Duplicate of turn" : "Recorded turn"} ${r.turn.id} (${turn.tool}) as seq ${r.turn.seq} on ${sid}`,
    ];
    if (r.spiral.paused) {
      lines.push(`${r.detected ? "SPIRAL DETECTED" : "Session is paused by a spiral"} (${r.spiral.pattern}): ${one(r.spiral.summary)}`);
      if (r.nextAction) {
        lines.push(`  next: ${r.nextAction.action}: ${one(r.nextAction.reason)}`);
        for (const c of r.nextAction.choices ?? []) lines.push(`    ${one(c.choice)}: ${one(c.command)}`);
      }
    }
    return lines.join("\n");
  });
}

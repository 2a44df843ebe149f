/**
 * External targets: bind a session to the thing it drives (a browser tab, a remote job), and
 * resolve it later without ever falling back to "whatever is active". A target observed now
 * that is not the bound one is `target_mismatch`, unless the caller allows navigating back to
 * the bound target (the session is unchanged; the answer says where to go) or forces a rebind (a
 * new `target:set` with reason `forced`). A mismatch is noted as a stored diagnostic, and the next
 * match after it too, so status can say whether the target observed last was the bound one.
 */
import type { Backend } from "../../backend/contract.js";
import { compareTarget, cutUrl, lastTargetNote, type TargetInput } from "../../core/session/targets.js";
import type { AppendResult, JsonObject, TargetBinding } from "../../core/types.js";
import { BatonError, badInput } from "../../errors.js";
import type { Journal } from "../journal/journal.js";

export interface TargetResolution {
  sessionId: string;
  /**
   * `bound`: no target was observed, the bound one is the answer. `matched`: the observed
   * target is the bound one. `navigate`: it is not; go back to the bound target (allowed by
   * the caller). `rebound`: it is not; the session was rebound to it (forced).
   */
  status: "bound" | "matched" | "navigate" | "rebound";
  target: TargetBinding;
  observed?: TargetInput;
  differences: string[];
  warnings: string[];
}

const KIND = /^[a-z][a-z0-9_-]{0,39}$/;
const ID = /^[\x21-\x7e]{1,200}$/;

export class TargetService {
  readonly #journal: Journal;
  readonly #backend: Backend | undefined;
  readonly #now: () => Date;

  constructor(journal: Journal, backend?: Backend, now: () => Date = () => new Date()) {
    this.#journal = journal;
    this.#backend = backend;
    this.#now = now;
  }

  /**
   * Note what was observed (a stored diagnostic, outside the journal: nothing about the session
   * changed), so status can say the target no longer matched. One note per change of state: a
   * mismatch is noted when the last note (since the binding) was not already one, a match only
   * to settle a mismatch; the common case writes nothing.
   */
  async #note(sessionId: string, bound: TargetBinding, matched: boolean, message: string): Promise<void> {
    const backend = this.#backend;
    if (!backend) return;
    const last = lastTargetNote(await backend.transaction("read", (tx) => tx.listDiagnostics(sessionId, 20)));
    const mismatched = last?.code === "target_mismatch" && last.at >= bound.setAt;
    if (matched ? !mismatched : mismatched) return;
    await backend.transaction("write", async (tx) => {
      await tx.insertDiagnostic({
        sessionId,
        code: matched ? "target_matched" : "target_mismatch",
        severity: matched ? "info" : "warning",
        message,
        at: this.#now().toISOString(),
      });
    });
  }

  async set(
    sessionId: string,
    input: TargetInput & { reason?: string },
    actor = "agent",
  ): Promise<{ target: TargetBinding; result: AppendResult }> {
    const t = checkTarget(input);
    const data: JsonObject = { kind: t.kind, id: t.id };
    if (t.url !== undefined) data.url = t.url;
    if (t.label !== undefined) data.label = t.label;
    if (input.reason !== undefined) data.reason = input.reason;
    const result = await this.#journal.append(sessionId, { type: "target:set", actor, data });
    const target = (await this.#journal.read(sessionId)).snapshot.target as TargetBinding;
    return { target, result };
  }

  async get(sessionId: string): Promise<TargetBinding | undefined> {
    return (await this.#journal.read(sessionId)).snapshot.target;
  }

  async clear(sessionId: string, reason?: string, actor = "agent"): Promise<AppendResult> {
    return this.#journal.append(sessionId, { type: "target:cleared", actor, data: reason !== undefined ? { reason } : {} });
  }

  /**
   * The session's target. With `observed`, whether it is the bound one: a mismatch throws
   * `target_mismatch` unless `allowNavigate` (answer `navigate`) or `force` (rebind, answer
   * `rebound`). A session with no target is `not_found`, unless forced with an observed target.
   */
  async resolve(
    sessionId: string,
    observed?: Partial<TargetInput>,
    opts: { allowNavigate?: boolean; force?: boolean; actor?: string } = {},
  ): Promise<TargetResolution> {
    const bound = await this.get(sessionId);
    const seen = observed && Object.values(observed).some((v) => v !== undefined) ? observed : undefined;
    if (!bound) {
      if (opts.force && seen?.kind !== undefined && seen.id !== undefined) {
        const { target } = await this.set(sessionId, { ...(seen as TargetInput), reason: "forced" }, opts.actor);
        return { sessionId, status: "rebound", target, observed: checkTarget(seen as TargetInput), differences: ["unbound"], warnings: [] };
      }
      throw new BatonError(
        "not_found",
        `session ${sessionId} is not bound to a target; bind it with \`baton target set ${sessionId} --kind <kind> --id <id> [--url <url>]\``,
        { sessionId },
      );
    }
    if (!seen) return { sessionId, status: "bound", target: bound, differences: [], warnings: [] };
    const cmp = compareTarget(bound, seen);
    const shown = shownObserved(seen);
    if (cmp.match) {
      await this.#note(sessionId, bound, true, `the observed target is the bound ${bound.kind} ${bound.id} again`);
      return { sessionId, status: "matched", target: bound, observed: shown as TargetInput, differences: [], warnings: cmp.warnings };
    }
    if (!opts.force) {
      await this.#note(
        sessionId,
        bound,
        false,
        `the observed target differs from the bound ${bound.kind} ${bound.id} in ${cmp.differences.join(", ")}${seen.url !== undefined ? ` (observed ${cutUrl(seen.url)})` : ""}.`,
      );
    }
    if (opts.force) {
      const full = { kind: seen.kind ?? bound.kind, id: seen.id ?? bound.id, ...(seen.url !== undefined ? { url: seen.url } : {}) };
      const { target } = await this.set(sessionId, { ...full, reason: "forced" }, opts.actor);
      return {
        sessionId,
        status: "rebound",
        target,
        observed: shown as TargetInput,
        differences: cmp.differences,
        warnings: [`rebound from ${bound.kind} ${bound.id} (forced)`],
      };
    }
    if (opts.allowNavigate) {
      return {
        sessionId,
        status: "navigate",
        target: bound,
        observed: shown as TargetInput,
        differences: cmp.differences,
        warnings: [
          `the observed target is not the bound one (${cmp.differences.join(", ")}); go back to ${bound.kind} ${bound.id}${bound.url ? ` at ${bound.url}` : ""}`,
        ],
      };
    }
    throw new BatonError(
      "target_mismatch",
      `session ${sessionId} is bound to ${bound.kind} ${bound.id}${bound.url ? ` (${bound.url})` : ""}, but the target observed differs in ${cmp.differences.join(", ")}; it is not used. Pass --navigate to go back to the bound target, or --force to rebind the session to the observed one`,
      { sessionId, bound, observed: shown, differences: cmp.differences },
    );
  }
}

function shownObserved(o: Partial<TargetInput>): Partial<TargetInput> {
  const out: Partial<TargetInput> = {};
  if (o.kind !== undefined) out.kind = o.kind;
  if (o.id !== undefined) out.id = o.id;
  if (o.url !== undefined) out.url = cutUrl(o.url);
  return out;
}

function checkTarget(t: TargetInput): TargetInput {
  if (typeof t.kind !== "string" || !KIND.test(t.kind))
    throw badInput(`target kind ${JSON.stringify(t.kind)} is invalid: a lowercase word of at most 40 characters, e.g. browser-tab or job`);
  if (typeof t.id !== "string" || !ID.test(t.id))
    throw badInput(`target id ${JSON.stringify(t.id)} is invalid: 1-200 printable characters, no spaces`);
  const out: TargetInput = { kind: t.kind, id: t.id };
  if (t.url !== undefined) {
    try {
      new URL(t.url);
    } catch {
      throw badInput(`target url ${JSON.stringify(cutUrl(String(t.url)))} is not a URL`);
    }
    out.url = cutUrl(t.url);
  }
  if (t.label !== undefined) {
    if (typeof t.label !== "string" || t.label.length > 200) throw badInput("target label must be at most 200 characters");
    out.label = t.label;
  }
  return out;
}

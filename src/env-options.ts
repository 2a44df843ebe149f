/**
 * The environment's say in openBaton()'s options, read in one place so every process that opens
 * a workspace (the CLI, `baton serve`, the MCP server, a hook answered in its own process) runs
 * with the same settings. A bad value is `bad_input` naming the variable: the CLI prints it; a
 * hook logs it to the hook log and lets the tool call through, as it does for every failure.
 * Every variable Baton reads is documented in docs/configuration.md (test/docs.test.ts fails
 * when a BATON_* name in src is missing there).
 */

import type { Durability } from "./api.js";
import { MAX_CHECKPOINT_RETAIN } from "./core/time-travel/checkpoints.js";
import { BatonError } from "./errors.js";
import { configHome } from "./platform/config-trust.js";
import { hostIdProblem } from "./platform/process-facts.js";
import type { CheckpointOptions } from "./services/time-travel/checkpoints.js";

export interface EnvOptions {
  durability?: Durability;
  /** BATON_HOST_ID: openBaton's `hostId`. */
  hostId?: string;
  /** Variables read under a name that is going away, with what replaces them (the CLI warns). */
  deprecated?: string[];
  checkpoints?: Pick<CheckpointOptions, "retain">;
  /** BATON_LEDGER_DURABILITY: openBaton's `ledger.durability` (the records made on every tool call). */
  ledger?: { durability: "full" | "relaxed" };
}

const DURABILITIES: readonly Durability[] = ["full", "relaxed", "none"];
/** The former variable's values (SQLite's pragma), kept for one release. */
const SYNCHRONOUS: Record<string, Durability> = { FULL: "full", NORMAL: "relaxed", OFF: "none" };

export function envOptions(env: NodeJS.ProcessEnv = process.env): EnvOptions {
  const out: EnvOptions = {};
  const durability = env.BATON_DURABILITY;
  const sync = env.BATON_SYNCHRONOUS;
  if (durability) {
    const d = durability.toLowerCase() as Durability;
    if (!DURABILITIES.includes(d))
      throw new BatonError("bad_input", `BATON_DURABILITY=${durability} is not one of ${DURABILITIES.join(", ")}; fix or unset it`);
    out.durability = d;
  } else if (sync) {
    const d = SYNCHRONOUS[sync.toUpperCase()];
    if (!d)
      throw new BatonError(
        "bad_input",
        `BATON_SYNCHRONOUS=${sync} is not one of FULL, NORMAL, OFF; fix or unset it (or use BATON_DURABILITY)`,
      );
    out.durability = d;
    out.deprecated = [`BATON_SYNCHRONOUS is deprecated and goes in the next release: use BATON_DURABILITY=${d}`];
  }
  const perCall = env.BATON_LEDGER_DURABILITY;
  if (perCall) {
    const d = perCall.toLowerCase();
    if (d !== "full" && d !== "relaxed")
      throw new BatonError("bad_input", `BATON_LEDGER_DURABILITY=${perCall} is not one of full, relaxed; fix or unset it`);
    out.ledger = { durability: d };
  }
  const retain = env.BATON_CHECKPOINT_RETAIN;
  if (retain) {
    const n = /^\s*\d+\s*$/.test(retain) ? Number(retain) : Number.NaN;
    if (!(n >= 1 && n <= MAX_CHECKPOINT_RETAIN))
      throw new BatonError(
        "bad_input",
        `BATON_CHECKPOINT_RETAIN must be a whole number from 1 to ${MAX_CHECKPOINT_RETAIN}, got "${retain}"; fix or unset it`,
      );
    out.checkpoints = { retain: n };
  }
  const hostId = env.BATON_HOST_ID;
  if (hostId) {
    const problem = hostIdProblem(hostId);
    if (problem) throw new BatonError("bad_input", `BATON_HOST_ID=${hostId} is invalid: ${problem}; fix or unset it`);
    out.hostId = hostId;
  }
  return out;
}

/**
 * What the environment decides of how a process answers for a workspace, as one comparable
 * text: openBaton()'s options it sets, a PostgreSQL store's blob limit, and the user's Baton
 * directory (whose trust records decide whether `.baton/config.json` applies). A hook process
 * or `status --json` sends its own, and the server answers it only when it was started with the
 * same (a hook with `BATON_DURABILITY=full` is not committed at the server's `relaxed`). Throws
 * as envOptions does.
 */
export function envSettings(env: NodeJS.ProcessEnv = process.env): string {
  const o = envOptions(env);
  const parts: string[] = [];
  if (o.durability) parts.push(`BATON_DURABILITY=${o.durability}`);
  if (o.ledger) parts.push(`BATON_LEDGER_DURABILITY=${o.ledger.durability}`);
  if (o.checkpoints?.retain !== undefined) parts.push(`BATON_CHECKPOINT_RETAIN=${o.checkpoints.retain}`);
  if (o.hostId) parts.push(`BATON_HOST_ID=${o.hostId}`);
  // What a PostgreSQL store keeps. Its timeouts are not here: they decide only how long a
  // frozen store is waited for (within the hook's deadline either way), and the server's apply.
  // As a number where it is one (`01024` is 1024), else as written (the store reports it).
  const blobMax = env.BATON_STORE_BLOB_MAX_BYTES?.trim();
  if (blobMax) parts.push(`BATON_STORE_BLOB_MAX_BYTES=${/^\d+$/.test(blobMax) ? String(Number(blobMax)) : blobMax}`);
  parts.push(`config home ${configHome(env)}`);
  return parts.join(" ");
}

/**
 * The environment's say in openBaton()'s options, read in one place so every process that opens
 * a workspace (the CLI, `baton serve`, the MCP server, a hook answered in its own process) runs
 * with the same settings. A bad value is `bad_input` naming the variable: the CLI prints it; a
 * hook logs it to the hook log and lets the tool call through, as it does for every failure.
 */

import { BatonError } from "./errors.js";
import type { CheckpointOptions } from "./services/checkpoints.js";

export interface EnvOptions {
  synchronous?: "FULL" | "NORMAL" | "OFF";
  checkpoints?: Pick<CheckpointOptions, "retain">;
}

export function envOptions(env: NodeJS.ProcessEnv = process.env): EnvOptions {
  const out: EnvOptions = {};
  const sync = env.BATON_SYNCHRONOUS;
  if (sync) {
    const u = sync.toUpperCase();
    if (u !== "FULL" && u !== "NORMAL" && u !== "OFF") {
      throw new BatonError("bad_input", `BATON_SYNCHRONOUS=${sync} is not one of FULL, NORMAL, OFF; fix or unset it`);
    }
    out.synchronous = u;
  }
  const retain = env.BATON_CHECKPOINT_RETAIN;
  if (retain) {
    const n = /^\s*\d+\s*$/.test(retain) ? Number(retain) : Number.NaN;
    if (!(n >= 1))
      throw new BatonError("bad_input", `BATON_CHECKPOINT_RETAIN must be a whole number ≥ 1, got "${retain}"; fix or unset it`);
    out.checkpoints = { retain: n };
  }
  return out;
}

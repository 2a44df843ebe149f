/**
 * One hook answered with an open Baton: the neutral handler, then the agent's rendering. Both
 * the hook process (run.ts, in-process) and the local server (`POST /v1/hooks/:agent/:event`)
 * answer through this, so an agent gets the same answer either way.
 *
 * Fails open: whatever the handler throws is logged to `.baton/logs/hooks.log` and answered with
 * the agent's "go on" form.
 */
import type { Baton } from "../api.js";
import { logHookFailure } from "./front.js";
import { handleHook } from "./handler.js";
import type { AgentAdapter, HookEvent } from "./types.js";

/**
 * The agent's stdout for `ev` (without the final newline; "" prints nothing). `native` is the
 * event named on the command line. Never throws.
 */
export async function answerHook(b: Baton, adapter: AgentAdapter, native: string, ev: HookEvent, agentPid: number): Promise<string> {
  try {
    const response = await handleHook(b, ev, { label: adapter.label, contextLimit: adapter.contextLimit, agentPid });
    return adapter.render(ev, response);
  } catch (err) {
    await logHookFailure(b.workspace.dir, adapter.agent, native, err);
    return adapter.passThrough(native);
  }
}

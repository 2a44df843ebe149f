/**
 * Whether hooks use the workspace's server, and whether they start one: the environment
 * variable `BATON_HOOK_SERVER`, else `.baton/config.json` `{"hooks": {"server": …}}`, else
 * `auto`.
 *
 * - `auto`: hand each hook to the running server; a session-start or prompt hook that finds
 *   none starts one in the background (it exits after 30 minutes without requests).
 * - `use`: hand hooks to a server someone started (`baton serve`); never start one.
 * - `off`: every hook runs in its own process.
 */
import { configSection } from "../platform/config-file.js";

export type HookServerMode = "auto" | "use" | "off";

const MODES: readonly string[] = ["auto", "use", "off"];

function modeOf(v: unknown): HookServerMode | undefined {
  if (typeof v !== "string") return undefined;
  const m = v.trim().toLowerCase();
  if (m === "0" || m === "false" || m === "no") return "off";
  return MODES.includes(m) ? (m as HookServerMode) : undefined;
}

/**
 * The mode for a workspace. An environment value it does not understand is ignored. A
 * `.baton/config.json` that cannot be read, or a `hooks.server` it does not take, is `off`:
 * the hook runs in its own process, which meets the same `bad_input` when it opens the
 * workspace, logs it to hooks.log and lets the tool through (platform/config-file.ts).
 */
export function hookServerMode(batonDir: string, config?: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): HookServerMode {
  const fromEnv = modeOf(env.BATON_HOOK_SERVER);
  if (fromEnv) return fromEnv;
  try {
    const server = configSection(batonDir, "hooks", config)?.server;
    if (server === undefined) return "auto";
    return modeOf(server) ?? "off";
  } catch {
    return "off";
  }
}

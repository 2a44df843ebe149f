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
import { readFileSync } from "node:fs";
import { join } from "node:path";

export type HookServerMode = "auto" | "use" | "off";

const MODES: readonly string[] = ["auto", "use", "off"];

function modeOf(v: unknown): HookServerMode | undefined {
  if (typeof v !== "string") return undefined;
  const m = v.trim().toLowerCase();
  if (m === "0" || m === "false" || m === "no") return "off";
  return MODES.includes(m) ? (m as HookServerMode) : undefined;
}

/** The mode for a workspace; a value neither source understands is ignored. */
export function hookServerMode(batonDir: string): HookServerMode {
  const fromEnv = modeOf(process.env.BATON_HOOK_SERVER);
  if (fromEnv) return fromEnv;
  let text: string;
  try {
    text = readFileSync(join(batonDir, "config.json"), "utf8");
  } catch {
    return "auto";
  }
  try {
    const c = JSON.parse(text) as { hooks?: { server?: unknown } } | null;
    return modeOf(c?.hooks?.server) ?? "auto";
  } catch {
    return "auto";
  }
}

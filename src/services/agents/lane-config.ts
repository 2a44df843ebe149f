/**
 * `.baton/config.json` `{"lanes": {"claims": …}}`: what an agent is told when it is about to
 * write a file another agent, working right now, wrote in its current turn (core/lanes.ts).
 *
 * - `refuse-once` (default): the first attempt is refused with who holds the file and what to
 *   do (wait, leave it, ask the user); the next attempt at the same claim goes through. A
 *   refusal reaches every agent's model before the write (Gemini CLI takes no context before a
 *   tool), and letting the retry through means a refused agent never loops.
 * - `warn`: every write goes through; the agent and the user are told.
 * - `off`: nothing is said.
 */
import { badSetting, configSection } from "../../platform/config-file.js";

export type ClaimMode = "refuse-once" | "warn" | "off";
const MODES: readonly ClaimMode[] = ["refuse-once", "warn", "off"];

export interface LaneConfig {
  claims: ClaimMode;
}

export function readLaneConfig(batonDir: string): LaneConfig {
  const s = configSection(batonDir, "lanes");
  const claims = s?.claims ?? "refuse-once";
  if (typeof claims !== "string" || !(MODES as readonly string[]).includes(claims))
    throw badSetting(batonDir, "lanes.claims", `one of ${MODES.map((m) => JSON.stringify(m)).join(", ")}`);
  for (const k of Object.keys(s ?? {})) if (k !== "claims") throw badSetting(batonDir, `lanes.${k}`, "absent (lanes takes only claims)");
  return { claims: claims as ClaimMode };
}

/**
 * Whether a workspace's local Claude Code settings (`.claude/settings.local.json`) hold Baton's
 * HTTP hooks (`baton hooks install claude --http`): then the workspace's server is what answers
 * Claude Code's per-call hooks, and no hook process answers in its place.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CLAUDE_HTTP_EVENTS } from "../core/hooks/claude.js";
import { nativeHookPath } from "../core/hooks/config.js";

/** Whether the project's local Claude Code settings hold Baton's HTTP hooks. */
export function httpHooksOn(root: string): boolean {
  try {
    const text = readFileSync(join(root, ".claude", "settings.local.json"), "utf8");
    return CLAUDE_HTTP_EVENTS.some((e) => text.includes(nativeHookPath("claude", e)));
  } catch {
    return false;
  }
}

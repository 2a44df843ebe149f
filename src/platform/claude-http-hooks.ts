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

/** The port Baton's HTTP hooks in the local settings name (the first found), if any. */
export function httpHooksPort(root: string): number | undefined {
  try {
    const text = readFileSync(join(root, ".claude", "settings.local.json"), "utf8");
    for (const e of CLAUDE_HTTP_EVENTS) {
      const m = new RegExp(`http://127\\.0\\.0\\.1:(\\d+)${nativeHookPath("claude", e)}`).exec(text);
      if (m) return Number(m[1]);
    }
  } catch {
    // no local settings
  }
  return undefined;
}

/** What to say when the HTTP hooks name another port than the server's (`.baton/server.key`). */
export function stalePortAdvice(hooksPort: number, serverPort: number | undefined): string {
  return serverPort === undefined
    ? `the HTTP hooks name port ${hooksPort}, and the workspace's server has no key (.baton/server.key): run \`baton hooks install claude --http\` again`
    : `the HTTP hooks name port ${hooksPort}, the server is on ${serverPort}: run \`baton hooks install claude --http\` again`;
}

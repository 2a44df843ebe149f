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

/** The server an HTTP hook entry reaches: the port of its URL and the token it sends. */
export interface HttpHookTarget {
  port: number;
  token?: string;
}

/** The port and token Baton's HTTP hooks in the local settings name (the first found), if any. */
export function httpHooksTarget(root: string): HttpHookTarget | undefined {
  try {
    return httpHooksTargetIn(JSON.parse(readFileSync(join(root, ".claude", "settings.local.json"), "utf8")));
  } catch {
    return undefined;
  }
}

/** The port and token the first of Baton's HTTP hooks in a Claude Code settings object names, if any. */
export function httpHooksTargetIn(settings: unknown): HttpHookTarget | undefined {
  const hooks = (settings as { hooks?: Record<string, unknown> } | null)?.hooks;
  for (const e of CLAUDE_HTTP_EVENTS) {
    const groups = hooks?.[e];
    if (!Array.isArray(groups)) continue;
    for (const group of groups)
      for (const h of Array.isArray(group?.hooks) ? group.hooks : []) {
        if (typeof h?.url !== "string" || !h.url.endsWith(nativeHookPath("claude", e))) continue;
        const target = hookTarget(h.url, h.headers);
        if (target) return target;
      }
  }
  return undefined;
}

/** The port and bearer token of one HTTP hook entry's `url` and `headers`, if its URL is a loopback one. */
export function hookTarget(url: unknown, headers: unknown): HttpHookTarget | undefined {
  const m = typeof url === "string" ? /^http:\/\/127\.0\.0\.1:(\d+)\//.exec(url) : null;
  if (!m) return undefined;
  const auth = (headers as Record<string, unknown> | null | undefined)?.Authorization;
  const token = typeof auth === "string" && auth.startsWith("Bearer ") ? auth.slice("Bearer ".length) : undefined;
  return { port: Number(m[1]), ...(token !== undefined ? { token } : {}) };
}

/**
 * What to say when the HTTP hooks reach another server than the workspace's (`.baton/server.key`):
 * another port, or the token of an older key (after `baton serve --rotate-token`); undefined when
 * they match.
 */
export function staleHooksAdvice(hooks: HttpHookTarget, key: { port: number; token: string } | undefined): string | undefined {
  const again = "run `baton hooks install claude --http` again";
  if (key === undefined)
    return `the HTTP hooks name port ${hooks.port}, and the workspace's server has no key (.baton/server.key): ${again}`;
  if (hooks.port !== key.port) return `the HTTP hooks name port ${hooks.port}, the server is on ${key.port}: ${again}`;
  if (hooks.token !== key.token) return `the HTTP hooks send an older token than the server's (.baton/server.key): ${again}`;
  return undefined;
}

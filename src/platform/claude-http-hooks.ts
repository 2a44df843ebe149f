/**
 * Whether a workspace's local Claude Code settings (`.claude/settings.local.json`) hold Baton's
 * HTTP hooks (`baton hooks install claude --http`): then the workspace's server is what answers
 * Claude Code's per-call hooks, and no hook process answers in its place.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CLAUDE_HTTP_EVENTS } from "../core/hooks/claude.js";
import { isBatonHookUrl, nativeHookPath } from "../core/hooks/config.js";

/** Whether the project's local Claude Code settings hold Baton's HTTP hooks. */
export function httpHooksOn(root: string): boolean {
  try {
    const text = readFileSync(join(root, ".claude", "settings.local.json"), "utf8");
    return CLAUDE_HTTP_EVENTS.some((e) => text.includes(nativeHookPath("claude", e)));
  } catch {
    return false;
  }
}

/** The server an HTTP hook entry reaches: its URL's host and port, and the token it sends. */
export interface HttpHookTarget {
  host: string;
  port: number;
  token?: string;
}

/** The targets of Baton's HTTP hooks in the local settings, one per entry (none when there are none). */
export function httpHooksTargets(root: string): HttpHookTarget[] {
  try {
    return httpHooksTargetsIn(JSON.parse(readFileSync(join(root, ".claude", "settings.local.json"), "utf8")));
  } catch {
    return [];
  }
}

/** The targets of Baton's HTTP hooks in a Claude Code settings object, one per entry. */
export function httpHooksTargetsIn(settings: unknown): HttpHookTarget[] {
  const hooks = (settings as { hooks?: Record<string, unknown> } | null)?.hooks;
  const out: HttpHookTarget[] = [];
  if (hooks === null || typeof hooks !== "object") return out;
  for (const groups of Object.values(hooks)) {
    if (!Array.isArray(groups)) continue;
    for (const group of groups)
      for (const h of Array.isArray(group?.hooks) ? group.hooks : []) {
        if (h?.type !== "http" || !isBatonHookUrl(h.url, "claude")) continue;
        const target = hookTarget(h.url, h.headers);
        if (target) out.push(target);
      }
  }
  return out;
}

/** The host, port and bearer token of one HTTP hook entry's `url` and `headers`. */
export function hookTarget(url: unknown, headers: unknown): HttpHookTarget | undefined {
  const m = typeof url === "string" ? /^http:\/\/(127\.0\.0\.1|\[::1\]|localhost):(\d+)\//.exec(url) : null;
  if (!m) return undefined;
  const auth = (headers as Record<string, unknown> | null | undefined)?.Authorization;
  const token = typeof auth === "string" && auth.startsWith("Bearer ") ? auth.slice("Bearer ".length) : undefined;
  return { host: m[1] as string, port: Number(m[2]), ...(token !== undefined ? { token } : {}) };
}

/**
 * What to say when any of Baton's HTTP hooks reaches another server than the workspace's
 * (`.baton/server.key`): another host than 127.0.0.1 (the server listens there only), another
 * port, or the token of an older key (after `baton serve --rotate-token`); undefined when every
 * entry matches.
 */
export function staleHooksAdvice(targets: readonly HttpHookTarget[], key: { port: number; token: string } | undefined): string | undefined {
  const again = "run `baton hooks install claude --http` again";
  const [first] = targets;
  if (first === undefined) return undefined;
  if (key === undefined)
    return `the HTTP hooks name port ${first.port}, and the workspace's server has no key (.baton/server.key): ${again}`;
  const host = targets.find((t) => t.host !== "127.0.0.1");
  if (host) return `an HTTP hook names ${host.host}, and the workspace's server listens on 127.0.0.1 only: ${again}`;
  const port = targets.find((t) => t.port !== key.port);
  if (port) return `the HTTP hooks name port ${port.port}, the server is on ${key.port}: ${again}`;
  if (targets.some((t) => t.token !== key.token))
    return `the HTTP hooks send an older token than the server's (.baton/server.key): ${again}`;
  return undefined;
}

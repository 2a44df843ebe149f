/**
 * Whether a workspace's local Claude Code settings (`.claude/settings.local.json`) hold Baton's
 * HTTP hooks (`baton hooks install claude --http`): then the workspace's server is what answers
 * Claude Code's per-call hooks, and no hook process answers in its place.
 */
import { join } from "node:path";
import { CLAUDE_HTTP_EVENTS } from "../core/hooks/claude.js";
import { batonHookUrlHost, nativeHookPath } from "../core/hooks/config.js";
import { readSettingsText } from "./settings-text.js";

/**
 * Whether the project's local Claude Code settings hold Baton's HTTP hooks. A file that does not
 * parse (caught mid-rewrite by the server's config watch) counts by its text: the server must not
 * stop answering the hooks for a moment's half-written file.
 */
export function httpHooksOn(root: string): boolean {
  const text = localSettingsText(root);
  if (text === undefined) return false;
  try {
    return httpHooksTargetsIn(JSON.parse(text)).length > 0;
  } catch {
    return CLAUDE_HTTP_EVENTS.some((e) => text.includes(nativeHookPath("claude", e)));
  }
}

/** The local settings' text; undefined when missing or not a settings file (settings-text.ts: a FIFO never blocks). */
function localSettingsText(root: string): string | undefined {
  try {
    return readSettingsText(join(root, ".claude", "settings.local.json"));
  } catch {
    return undefined;
  }
}

/** The server an HTTP hook entry reaches: its URL's host and port, and the token it sends. */
export interface HttpHookTarget {
  host: string;
  port: number;
  token?: string;
}

/**
 * The targets of Baton's HTTP hooks in the project's local settings, one per entry: none when
 * there are none, or the file is missing, unreadable or not JSON. A repository may ship that
 * path as a FIFO or a link to a device: it is read without blocking (settings-text.ts).
 */
export function httpHooksTargets(root: string): HttpHookTarget[] {
  const text = localSettingsText(root);
  try {
    return text === undefined ? [] : httpHooksTargetsIn(JSON.parse(text));
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
        const at = h?.type === "http" ? batonHookUrlHost(h.url, "claude") : undefined;
        if (at === undefined) continue;
        const auth = (h.headers as Record<string, unknown> | null | undefined)?.Authorization;
        const token = typeof auth === "string" && auth.startsWith("Bearer ") ? auth.slice("Bearer ".length) : undefined;
        out.push({ ...at, ...(token !== undefined ? { token } : {}) });
      }
  }
  return out;
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

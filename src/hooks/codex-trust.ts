/**
 * Codex's hook trust, exactly as Codex 0.169 computes and records it (read from openai/codex
 * `codex-rs/hooks/src/engine/discovery.rs` and `codex-rs/config/src/fingerprint.rs`, and checked
 * against `codex app-server`'s `hooks/list`, which reports each hook's `key`, `currentHash` and
 * `trustStatus`).
 *
 * Codex runs a hook from a hooks.json only when `$CODEX_HOME/config.toml` trusts it:
 *
 *     [hooks.state."<abs path of hooks.json>:<event, snake_case>:<group index>:<handler index>"]
 *     trusted_hash = "sha256:<hex>"
 *
 * The hash is SHA-256 over the compact JSON, keys sorted, of the hook's normalised identity:
 * `{event_name, matcher?, hooks: [{type: "command", command, timeout, async: false,
 * statusMessage?}]}`, where `timeout` is the handler's (default 600, at least 1; SessionEnd and
 * Interrupt clamped to 3) and `matcher` is kept only for events that take one. No entry: the
 * hook is "untrusted"; another hash: "modified" (the entry or its command changed). `codex
 * exec` silently skips both.
 *
 * Pure (the installer reads and writes the files).
 */
import { createHash } from "node:crypto";
import type { JsonObject } from "../core/types.js";

export type CodexTrust = "trusted" | "untrusted" | "modified";

/** Events whose matcher Codex keeps (for the others it drops it before hashing and matching). */
const MATCHER_EVENTS = new Set([
  "pre_tool_use",
  "permission_request",
  "post_tool_use",
  "pre_compact",
  "post_compact",
  "session_start",
  "session_end",
  "subagent_start",
  "subagent_stop",
]);
/** Events whose handlers Codex gives at most 3 seconds. */
const CLAMPED_EVENTS = new Set(["session_end", "interrupt"]);
const DEFAULT_TIMEOUT_S = 600;

export function snakeEvent(event: string): string {
  return event.replace(/[A-Z]/g, (c, i: number) => (i ? "_" : "") + c.toLowerCase());
}

function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v !== null && typeof v === "object")
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
    );
  return v;
}

/** Codex's `currentHash` of one command handler. */
export function codexHookHash(event: string, matcher: string | undefined, handler: JsonObject): string {
  const name = snakeEvent(event);
  const t = typeof handler.timeout === "number" && Number.isInteger(handler.timeout) ? Math.max(1, handler.timeout) : DEFAULT_TIMEOUT_S;
  const hook: Record<string, unknown> = {
    type: "command",
    command: handler.command,
    timeout: CLAMPED_EVENTS.has(name) ? Math.min(t, 3) : t,
    async: false,
  };
  if (typeof handler.commandWindows === "string") hook.commandWindows = handler.commandWindows;
  if (typeof handler.statusMessage === "string") hook.statusMessage = handler.statusMessage;
  const identity: Record<string, unknown> = { event_name: name, hooks: [hook] };
  if (matcher !== undefined && MATCHER_EVENTS.has(name)) identity.matcher = matcher;
  return `sha256:${createHash("sha256")
    .update(JSON.stringify(canonical(identity)))
    .digest("hex")}`;
}

export interface CodexHookEntry {
  event: string;
  key: string;
  hash: string;
}

/** The trust key and hash of every command handler in a hooks.json `hooks` value that `pick` selects. */
export function codexHookEntries(file: string, hooks: unknown, pick: (command: string) => boolean): CodexHookEntry[] {
  const out: CodexHookEntry[] = [];
  if (hooks === null || typeof hooks !== "object" || Array.isArray(hooks)) return out;
  for (const [event, groups] of Object.entries(hooks as Record<string, unknown>)) {
    if (!Array.isArray(groups)) continue;
    groups.forEach((g, gi) => {
      const group = g as JsonObject;
      const handlers = group?.hooks;
      if (!Array.isArray(handlers)) return;
      handlers.forEach((h, hi) => {
        const handler = h as JsonObject;
        if (handler?.type !== "command" || typeof handler.command !== "string" || !pick(handler.command)) return;
        const matcher = typeof group.matcher === "string" ? group.matcher : undefined;
        out.push({ event, key: `${file}:${snakeEvent(event)}:${gi}:${hi}`, hash: codexHookHash(event, matcher, handler) });
      });
    });
  }
  return out;
}

// The few lines of config.toml Baton reads and writes. Writing must keep the user's text
// (comments, order, line endings), which a TOML library's parse-and-print does not, so the edit
// is line-based; reading uses the same line reader so both agree on where each table is. It
// follows TOML's key quoting, the forms Codex writes (`[hooks.state."<key>"]`) and the forms a
// user may write inside `[hooks.state]`; any other form of `hooks` makes Baton leave the file
// alone, and a text that would hold a trust key twice is never written.

const KEY_PART = /\s*(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|([A-Za-z0-9_-]+))\s*/y;

/**
 * A dotted key read from `line` at `at` (quoted parts may hold `.`, `]`, `=`), unquoted, and
 * where it ends; undefined when it is not one.
 */
function dottedKey(line: string, at: number): { path: string[]; end: number } | undefined {
  const path: string[] = [];
  let i = at;
  for (;;) {
    KEY_PART.lastIndex = i;
    const m = KEY_PART.exec(line);
    if (!m) return undefined;
    if (m[1] !== undefined) {
      try {
        path.push(JSON.parse(`"${m[1]}"`) as string);
      } catch {
        return undefined;
      }
    } else path.push((m[2] ?? m[3]) as string);
    i = KEY_PART.lastIndex;
    if (line[i] !== ".") return { path, end: i };
    i++;
  }
}

/** The dotted key of a `[table]` header line; null when the line is not a header; undefined when Baton cannot read it. */
function headerPath(line: string): string[] | null | undefined {
  const open = /^\s*\[(?!\[)/.exec(line);
  if (!open) return null;
  const k = dottedKey(line, open[0].length);
  if (!k || !/^\]\s*(?:#.*)?$/.test(line.slice(k.end))) return undefined;
  return k.path;
}

function stringValue(line: string, key: string): string | undefined {
  const m = new RegExp(`^\\s*${key}\\s*=\\s*(?:"((?:[^"\\\\]|\\\\.)*)"|'([^']*)')\\s*(?:#.*)?$`).exec(line);
  if (!m) return undefined;
  if (m[2] !== undefined) return m[2];
  try {
    return JSON.parse(`"${m[1]}"`) as string;
  } catch {
    return undefined;
  }
}

interface Table {
  path: string[];
  /** Line index of the header. */
  start: number;
  /** Line index after the table's last line. */
  end: number;
}

interface Parsed {
  tables: Table[];
  /** Keys given inside `[hooks.state]` (`"<key>" = { trusted_hash = … }`, `"<key>".trusted_hash = …`), with their hash when Baton can read it. */
  inline: Map<string, string | undefined>;
  /** `hooks` is defined some other way (or in a line Baton cannot read): Baton does not write next to it. */
  otherHooks: boolean;
}

/** The `[…]` tables of a TOML text (skipping multi-line strings) and the trust keys written other ways. */
function tables(lines: string[]): Parsed {
  const out: Table[] = [];
  const inline = new Map<string, string | undefined>();
  let current: Table | undefined;
  let inMultiline: string | undefined;
  let otherHooks = false;
  lines.forEach((line, i) => {
    if (inMultiline) {
      if (line.split(inMultiline).length % 2 === 0) inMultiline = undefined;
      return;
    }
    for (const q of ['"""', "'''"]) if (line.split(q).length % 2 === 0) inMultiline = q;
    if (inMultiline) return;
    if (/^\s*\[\[/.test(line)) {
      if (current) current.end = i;
      current = undefined;
      if (/hooks/.test(line)) otherHooks = true;
      return;
    }
    const path = headerPath(line);
    if (path !== null) {
      if (path === undefined) {
        // A `[` line Baton cannot read (a row of a multi-line array, or a header it does not
        // follow): not a boundary, but if it may be about hooks Baton leaves the file alone.
        if (/hooks/.test(line)) otherHooks = true;
        return;
      }
      if (current) current.end = i;
      current = { path, start: i, end: lines.length };
      out.push(current);
      return;
    }
    const at = current?.path.join("\u0000");
    if (at === "hooks\u0000state" && /^\s*["'A-Za-z0-9_-]/.test(line)) {
      const k = dottedKey(line, 0);
      if (!k) {
        otherHooks = true;
        return;
      }
      const rest = line.slice(k.end);
      const hash =
        k.path.length === 2 && k.path[1] === "trusted_hash"
          ? stringValue(`trusted_hash ${rest}`, "trusted_hash")
          : /\btrusted_hash\s*=\s*"(sha256:[0-9a-f]*)"/.exec(rest)?.[1];
      inline.set(k.path[0] as string, hash);
      return;
    }
    // `hooks = …` or `hooks.state… = …` at the top, or `state… = …` in [hooks]: a form this
    // reader does not follow, so Baton does not write next to it.
    const top = current === undefined && out.length === 0;
    if ((top && /^\s*["']?hooks["']?\s*[.=]/.test(line)) || (at === "hooks" && /^\s*["']?state["']?\s*[.=]/.test(line))) otherHooks = true;
  });
  if (current) current.end = lines.length;
  return { tables: out, inline, otherHooks };
}

/** `trusted_hash` per key from `[hooks.state."<key>"]` tables (and keys given inside `[hooks.state]`). */
export function codexTrustedHashes(toml: string): Map<string, string> {
  const lines = toml.split(/\r?\n/);
  const out = new Map<string, string>();
  const parsed = tables(lines);
  for (const [k, v] of parsed.inline) if (v !== undefined) out.set(k, v);
  for (const t of parsed.tables) {
    if (t.path.length !== 3 || t.path[0] !== "hooks" || t.path[1] !== "state") continue;
    for (let i = t.start + 1; i < t.end; i++) {
      const v = stringValue(lines[i] as string, "trusted_hash");
      if (v !== undefined) out.set(t.path[2] as string, v);
    }
  }
  return out;
}

/** A TOML basic string: JSON's escapes are TOML's, but TOML escapes DEL too. */
function tomlString(s: string): string {
  return JSON.stringify(s).replace(/\x7f/g, "\\u007f");
}

/** Each trust key the text defines, once per place it is defined (a key twice: not valid TOML). */
function stateKeys(p: Parsed): string[] {
  return [
    ...p.inline.keys(),
    ...p.tables.filter((t) => t.path.length === 3 && t.path[0] === "hooks" && t.path[1] === "state").map((t) => t.path[2] as string),
  ];
}

/** `trust_level` of each `[projects."<path>"]` table. */
export function codexProjectTrust(toml: string): Map<string, string> {
  const lines = toml.split(/\r?\n/);
  const out = new Map<string, string>();
  for (const t of tables(lines).tables) {
    if (t.path.length !== 2 || t.path[0] !== "projects") continue;
    for (let i = t.start + 1; i < t.end; i++) {
      const v = stringValue(lines[i] as string, "trust_level");
      if (v !== undefined) out.set(t.path[1] as string, v);
    }
  }
  return out;
}

export function trustOf(entry: CodexHookEntry, trusted: Map<string, string>): CodexTrust {
  const h = trusted.get(entry.key);
  return h === undefined ? "untrusted" : h === entry.hash ? "trusted" : "modified";
}

/**
 * config.toml with `trusted_hash` set for each entry and removed for `drop` keys (a table Baton's
 * trust emptied goes too); undefined when the file defines `hooks` in a form Baton does not
 * edit (then the user trusts the hooks in Codex's /hooks).
 */
export function withCodexTrust(toml: string, entries: readonly CodexHookEntry[], drop: readonly string[] = []): string | undefined {
  const eol = toml.includes("\r\n") ? "\r\n" : "\n";
  // Each line keeps its own ending (a CRLF file may hold LF-only lines in a multi-line string).
  const raw = toml === "" ? [] : toml.split(/(?<=\n)/);
  const lines = raw.map((l) => l.replace(/\r?\n$/, ""));
  const ends = raw.map((l) => /\r?\n$/.exec(l)?.[0] ?? "");
  const parsed = tables(lines);
  if (parsed.otherHooks) return undefined;
  const want = new Map(entries.map((e) => [e.key, e.hash]));
  const dropping = new Set(drop.filter((k) => !want.has(k)));
  // A key given inline in [hooks.state] is in the user's form: Baton does not rewrite it.
  if ([...want.keys(), ...dropping].some((k) => parsed.inline.has(k))) return undefined;
  const blank = (l: string | undefined) => l !== undefined && l.trim() === "";
  const splice = (at: number, n: number, ...add: string[]) => {
    lines.splice(at, n, ...add);
    ends.splice(at, n, ...add.map(() => eol));
  };
  // Edit from the last table up, so earlier line numbers stay right.
  const states = parsed.tables.filter((t) => t.path.length === 3 && t.path[0] === "hooks" && t.path[1] === "state").reverse();
  for (const t of states) {
    const key = t.path[2] as string;
    const body = lines.slice(t.start + 1, t.end);
    const at = body.findIndex((l) => stringValue(l, "trusted_hash") !== undefined || /^\s*trusted_hash\s*=/.test(l));
    if (want.has(key)) {
      const line = `trusted_hash = ${tomlString(want.get(key) as string)}`;
      if (at >= 0) lines[t.start + 1 + at] = line;
      else splice(t.start + 1, 0, line);
      want.delete(key);
    } else if (dropping.has(key) && at >= 0) {
      const keyLines = body.map((l, i) => (i !== at && l.trim() !== "" && !l.trim().startsWith("#") ? i : -1)).filter((i) => i >= 0);
      if (keyLines.length > 0) {
        splice(t.start + 1 + at, 1);
        continue;
      }
      // The table goes up to its trusted_hash line: blank lines and comments after it belong
      // to what follows. One of two blank lines the removal brings together goes too.
      splice(t.start, at + 2);
      if (blank(lines[t.start - 1]) && (blank(lines[t.start]) || t.start === lines.length)) splice(t.start - 1, 1);
    }
  }
  if (want.size > 0) {
    while (lines.length > 0 && blank(lines[lines.length - 1])) splice(lines.length - 1, 1);
    if (lines.length > 0) ends[ends.length - 1] ||= eol;
    for (const [key, hash] of want) {
      if (lines.length > 0) splice(lines.length, 0, "");
      splice(lines.length, 0, `[hooks.state.${tomlString(key)}]`, `trusted_hash = ${tomlString(hash)}`);
    }
  }
  const text = lines.map((l, i) => l + ends[i]).join("");
  // Never a key twice (TOML forbids it, and Codex would then read nothing of config.toml).
  const keys = stateKeys(tables(text.split(/\r?\n/)));
  if (new Set(keys).size !== keys.length) return undefined;
  return text;
}

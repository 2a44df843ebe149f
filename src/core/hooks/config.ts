/**
 * Merging Baton's entries into an agent's hook configuration, and taking them out again. Pure:
 * values in, values out; the installer (src/hooks/install.ts) does the file I/O.
 *
 * Claude Code (`.claude/settings.json`), Codex (`.codex/hooks.json`), Gemini CLI
 * (`.gemini/settings.json`) and Qwen Code (`.qwen/settings.json`) share one shape under the
 * top-level `hooks` key:
 *
 *     { "hooks": { "<Event>": [ { "matcher": "<regex>", "hooks": [ { "type": "command", "command": "…" } ] } ] } }
 *
 * Copilot CLI (`.github/hooks/baton.json`) lists its handlers under each event directly, flat:
 *
 *     { "version": 1, "hooks": { "<event>": [ { "type": "command", "bash": "…", "timeoutSec": 60 } ] } }
 *
 * (a flat entry is its own group of one, its command in `bash` or `command`).
 *
 * Baton's handlers are recognised by their command (`… baton… hook <agent> <Event>`), never by
 * position, so every other hook is kept whatever its place. Install replaces a group that holds
 * only Baton's handler where it stands (other hooks keep their indices, which Codex's trust is
 * keyed by), removes Baton's handlers elsewhere, and appends a group per event that has none:
 * installing twice gives the same value. Uninstall removes Baton's handlers, then the groups and event
 * arrays that removal emptied (a container that was empty before is left alone), so it
 * restores the configuration as it was before the install.
 */
import type { JsonObject, JsonValue } from "../types.js";

export type HookAgent = "claude" | "codex" | "gemini" | "qwen" | "copilot" | "opencode" | "cline";

/** Every agent Baton's hooks serve, by the name `baton hook <agent>` and `baton hooks install <agent>` take. */
export const HOOK_AGENTS: readonly HookAgent[] = Object.freeze(["claude", "codex", "gemini", "qwen", "copilot", "opencode", "cline"]);

/** The agents as a message lists them: "claude, codex, gemini, qwen, copilot or cline". */
export const HOOK_AGENT_LIST = `${HOOK_AGENTS.slice(0, -1).join(", ")} or ${HOOK_AGENTS.at(-1)}`;

export interface HookHandlerSpec {
  /**
   * `command`: the agent runs `command`. `http` (Claude Code only, `baton hooks install claude
   * --http`): the agent POSTs its payload to `url`, the workspace's server (`command` is then the URL).
   */
  type: "command" | "http";
  command: string;
  /**
   * Claude Code's exec form (2.1.139+): `command` is the program, started with these arguments
   * and no shell. Written only where the agent found on this machine has it (hooks/install.ts).
   */
  args?: readonly string[];
  /** `http`: headers sent with the payload (the server's bearer token). */
  headers?: Readonly<Record<string, string>>;
  /** Seconds for Claude Code, Codex and Qwen Code, milliseconds for Gemini CLI (each agent's own unit). */
  timeout?: number;
  /** Copilot CLI's time limit, in seconds (`timeoutSec`). */
  timeoutSec?: number;
  /** Gemini CLI: the name `/hooks enable|disable` uses. */
  name?: string;
  description?: string;
}

export interface HookGroupSpec {
  event: string;
  /** Tool-name regex for tool events; omitted: every occurrence of the event. */
  matcher?: string;
  handler: HookHandlerSpec;
  /** Copilot CLI: the handler itself is the event's entry (its command in `bash`), not a group. */
  flat?: boolean;
  /**
   * The agent's first version with this event. Older versions may reject a whole settings file
   * that names an event they do not know (Claude Code before 2.1.101 did), so such a group is
   * written only where the agent found on this machine is that version or later, and never into
   * a shared file or a plugin, whose readers may run older versions (hooks/install.ts).
   */
  since?: string;
}

/**
 * One agent's hook groups, each running `<command> hook <agent> <event>`; `extra` gives the
 * agent's other handler fields (time limit, Gemini CLI's name and description).
 */
export function hookGroup(
  command: string,
  agent: HookAgent,
  extra: (event: string) => Omit<HookHandlerSpec, "type" | "command">,
): (event: string, matcher?: string) => HookGroupSpec {
  return (event, matcher) => {
    const { name, ...rest } = extra(event);
    return {
      event,
      ...(matcher !== undefined ? { matcher } : {}),
      handler: { ...(name !== undefined ? { name } : {}), type: "command", command: `${command} hook ${agent} ${event}`, ...rest },
    };
  };
}

export interface InstalledHook {
  event: string;
  matcher?: string;
  /** The command the agent runs, or for an HTTP hook the URL it POSTs to. */
  command: string;
  /** Set for an HTTP hook (`type: "http"`). */
  http?: true;
}

/**
 * The path of Baton's route for an agent's own hook payload (server/native-hook-route.ts): an
 * HTTP hook entry is Baton's when its URL is a loopback URL ending in this and an event name.
 */
export function nativeHookPath(agent: HookAgent, event: string): string {
  return `/v1/agent-hooks/${agent}/${event}`;
}

/** The loopback host and port of an HTTP hook's URL that is Baton's route on this machine, for `agent`. */
export function batonHookUrlHost(url: unknown, agent: HookAgent): { host: string; port: number } | undefined {
  if (typeof url !== "string") return undefined;
  const m = new RegExp(`^http://(127\\.0\\.0\\.1|\\[::1\\]|localhost):(\\d+)/v1/agent-hooks/${agent}/[A-Za-z]+$`).exec(url);
  return m ? { host: m[1] as string, port: Number(m[2]) } : undefined;
}

/** An HTTP hook's URL that is Baton's route on this machine, for `agent`. */
export function isBatonHookUrl(url: unknown, agent: HookAgent): boolean {
  return batonHookUrlHost(url, agent) !== undefined;
}

/**
 * A command that runs `baton hook <agent> …`, whatever the path or launcher before it (and a
 * `--node=<path>` word between the baton and `hook`: NODE_WORD).
 */
export function isBatonCommand(command: unknown, agent: HookAgent): boolean {
  if (typeof command !== "string") return false;
  return new RegExp(
    `(?:^|[\\s"'/\\\\])(?:agent-)?baton(?:\\.c?js|@[\\w.^~-]+)?["']?(?:\\s+(?:--node=[^\\s"']+|"--node=(?:[^"\\\\]|\\\\.)*"|'--node=[^']*'))?\\s+hook\\s+${agent}(?:\\s|$)`,
  ).test(command);
}

/**
 * The word an install writes after a baton entry that is a shell script (bin/baton.cjs run as a
 * program), naming the Node it hands to what it does not answer itself: a hook by absolute path
 * does not look `node` up on PATH.
 */
export const NODE_WORD = "--node=";

/**
 * The Node and the baton entry a launcher (the words before `hook <agent> <Event>`) names:
 * `<node> [options] <entry>`, or `<entry> --node=<node>`. Undefined for one word (`baton`, a
 * script that stays put), whose Node is its own affair.
 */
export function launcherNodeEntry(words: readonly string[]): { node: string; entry: string } | undefined {
  const first = words[0];
  const last = words.at(-1);
  if (words.length < 2 || first === undefined || last === undefined) return undefined;
  if (last.startsWith(NODE_WORD)) return words.length === 2 ? { node: last.slice(NODE_WORD.length), entry: first } : undefined;
  return { node: first, entry: last };
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * A handler's command: Copilot CLI's `bash` where there is one (what Copilot CLI runs, even
 * beside a `command`, so an entry whose `bash` is not Baton's is not taken for Baton's), else
 * `command`.
 */
export function handlerCommand(handler: JsonObject, agent?: HookAgent): unknown {
  if (handler.bash !== undefined) return handler.bash;
  const args = agent === "claude" ? execArgs(handler) : undefined;
  return args === undefined ? handler.command : [handler.command as string, ...args].map(launcherWord).join(" ");
}

/**
 * A word of a launcher as Baton writes it into a command line: bare when safe, else in double
 * quotes with `"`, `\\`, `$` and backquotes escaped (what hooks/places.ts `launcherWords` reads back).
 */
export function launcherWord(s: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(s) ? s : `"${s.replace(/(["\\$`])/g, "\\$1")}"`;
}

/**
 * The arguments of a Claude Code handler in exec form: `command` is the program, started with
 * them and no shell; undefined for a handler whose command a shell runs. Its command line
 * (handlerCommand) is the words quoted, so it is recognised, listed and checked as one. Only
 * Claude Code has the form: another agent's `args` is not read (the agent ignores it).
 */
export function execArgs(handler: JsonObject): string[] | undefined {
  const args = handler.args;
  if (typeof handler.command !== "string" || !Array.isArray(args) || !args.every((a) => typeof a === "string")) return undefined;
  return args as string[];
}

function isOurs(handler: unknown, agent: HookAgent): boolean {
  if (!isObject(handler)) return false;
  if (handler.type === "http") return isBatonHookUrl(handler.url, agent);
  return isBatonCommand(handlerCommand(handler, agent), agent);
}

/** A flat entry (Copilot CLI): a handler listed under the event directly, not in a group. */
function isFlatOurs(entry: unknown, agent: HookAgent): boolean {
  return isObject(entry) && !Array.isArray(entry.hooks) && isOurs(entry, agent);
}

/** Problems that stop a merge: the `hooks` value or an event's value is not the documented shape. */
export function hookConfigProblem(hooks: unknown): string | undefined {
  if (hooks === undefined) return undefined;
  if (!isObject(hooks)) return '"hooks" is not an object';
  return undefined;
}

/** `hooks` without Baton's handlers for `agent`; containers the removal emptied are dropped. */
export function removeBatonHooks(hooks: JsonObject | undefined, agent: HookAgent): { hooks: JsonObject | undefined; removed: number } {
  if (!hooks) return { hooks, removed: 0 };
  let removed = 0;
  const out: JsonObject = {};
  for (const [event, value] of Object.entries(hooks)) {
    if (!Array.isArray(value)) {
      out[event] = value;
      continue;
    }
    const groups: JsonValue[] = [];
    let removedHere = 0;
    for (const group of value) {
      if (isFlatOurs(group, agent)) {
        removedHere++;
        continue;
      }
      if (!isObject(group) || !Array.isArray(group.hooks)) {
        groups.push(group);
        continue;
      }
      const kept = group.hooks.filter((h) => !isOurs(h, agent));
      const n = group.hooks.length - kept.length;
      removedHere += n;
      if (n === 0) groups.push(group);
      else if (kept.length > 0) groups.push({ ...group, hooks: kept });
    }
    removed += removedHere;
    if (removedHere === 0 || groups.length > 0) out[event] = groups;
  }
  if (removed > 0 && Object.keys(out).length === 0 && Object.keys(hooks).length > 0) return { hooks: undefined, removed };
  return { hooks: out, removed };
}

function groupOf(spec: HookGroupSpec): JsonObject {
  if (spec.flat) {
    const entry: JsonObject = { type: spec.handler.type, bash: spec.handler.command };
    if (spec.matcher !== undefined) entry.matcher = spec.matcher;
    if (spec.handler.timeoutSec !== undefined) entry.timeoutSec = spec.handler.timeoutSec;
    return entry;
  }
  const group: JsonObject = {};
  if (spec.matcher !== undefined) group.matcher = spec.matcher;
  const handler: JsonObject = {};
  if (spec.handler.name !== undefined) handler.name = spec.handler.name;
  handler.type = spec.handler.type;
  if (spec.handler.type === "http") {
    handler.url = spec.handler.command;
    if (spec.handler.headers !== undefined) handler.headers = { ...spec.handler.headers };
  } else handler.command = spec.handler.command;
  if (spec.handler.timeout !== undefined) handler.timeout = spec.handler.timeout;
  if (spec.handler.description !== undefined) handler.description = spec.handler.description;
  // Last: an install over a shell-form entry adds the key at the end (hooks/json-text.ts), and
  // uninstall's byte-for-byte restore compares with what this writes.
  if (spec.handler.type === "command" && spec.handler.args !== undefined) handler.args = [...spec.handler.args];
  group.hooks = [handler];
  return group;
}

/**
 * `hooks` with exactly one Baton group per spec (earlier Baton handlers replaced). A group that
 * held only Baton's handler is replaced where it stands, so the groups after it keep their
 * places: Codex keys its trust of every hook by group and handler index, and moving a user's
 * group would silently untrust it. Specs without such a group are appended.
 */
export function addBatonHooks(hooks: JsonObject | undefined, specs: readonly HookGroupSpec[], agent: HookAgent): JsonObject {
  const pending = new Map<string, HookGroupSpec[]>();
  for (const spec of specs) pending.set(spec.event, [...(pending.get(spec.event) ?? []), spec]);
  const out: JsonObject = {};
  for (const [event, value] of Object.entries(hooks ?? {})) {
    if (!Array.isArray(value)) {
      out[event] = value;
      continue;
    }
    const queue = pending.get(event) ?? [];
    const groups: JsonValue[] = [];
    let removedHere = 0;
    for (const group of value) {
      if (isFlatOurs(group, agent)) {
        const spec = queue.shift();
        if (spec) groups.push(groupOf(spec));
        removedHere++;
        continue;
      }
      if (!isObject(group) || !Array.isArray(group.hooks)) {
        groups.push(group);
        continue;
      }
      const kept = group.hooks.filter((h) => !isOurs(h, agent));
      const n = group.hooks.length - kept.length;
      if (n === 0) groups.push(group);
      else if (kept.length > 0) groups.push({ ...group, hooks: kept });
      else {
        const spec = queue.shift();
        if (spec) groups.push(groupOf(spec));
      }
      removedHere += n;
    }
    for (const spec of queue) groups.push(groupOf(spec));
    pending.delete(event);
    if (removedHere === 0 || groups.length > 0) out[event] = groups;
  }
  for (const [event, rest] of pending) out[event] = rest.map(groupOf);
  return out;
}

/** Baton's handlers for `agent` found in `hooks`, in order. */
export function listBatonHooks(hooks: unknown, agent: HookAgent): InstalledHook[] {
  if (!isObject(hooks)) return [];
  const out: InstalledHook[] = [];
  for (const [event, value] of Object.entries(hooks)) {
    if (!Array.isArray(value)) continue;
    for (const group of value) {
      if (isFlatOurs(group, agent)) {
        const entry = group as JsonObject;
        out.push({
          event,
          command: String(handlerCommand(entry)),
          ...(typeof entry.matcher === "string" ? { matcher: entry.matcher } : {}),
        });
        continue;
      }
      if (!isObject(group) || !Array.isArray(group.hooks)) continue;
      for (const h of group.hooks) {
        if (!isOurs(h, agent)) continue;
        const entry = h as JsonObject;
        const found: InstalledHook =
          entry.type === "http"
            ? { event, command: String(entry.url), http: true }
            : { event, command: String(handlerCommand(entry, agent)) };
        if (typeof group.matcher === "string") found.matcher = group.matcher;
        out.push(found);
      }
    }
  }
  return out;
}

/** The settings object with Baton's hooks merged in (`hooks` replaced; every other key kept). */
export function installInto(settings: JsonObject, specs: readonly HookGroupSpec[], agent: HookAgent): JsonObject {
  const problem = hookConfigProblem(settings.hooks);
  if (problem) throw new Error(problem);
  return { ...settings, hooks: addBatonHooks(settings.hooks as JsonObject | undefined, specs, agent) };
}

/** The settings object without Baton's hooks; `hooks` is dropped when the removal emptied it. */
export function uninstallFrom(settings: JsonObject, agent: HookAgent): { settings: JsonObject; removed: number } {
  const problem = hookConfigProblem(settings.hooks);
  if (problem) throw new Error(problem);
  const r = removeBatonHooks(settings.hooks as JsonObject | undefined, agent);
  if (r.removed === 0) return { settings, removed: 0 };
  const out: JsonObject = { ...settings };
  if (r.hooks === undefined) delete out.hooks;
  else out.hooks = r.hooks;
  return { settings: out, removed: r.removed };
}

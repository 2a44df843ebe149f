/**
 * `baton hooks install|uninstall|status`: Baton's entries in each agent's own hook
 * configuration. The merge itself is pure (core/hooks/config.ts); where each agent's file is and
 * what runs Baton in it is places.ts; reading, editing in place and backing up the file is
 * settings-file.ts (with json-text.ts); what else each agent needs before it runs the hooks is
 * agent-setup.ts. This file puts them together and says what it did.
 *
 * Longer than ~400 lines: install, uninstall and status for every agent and both routes (a settings
 * file, a plugin or extension) answer from the same places and readiness, read in one place.
 */
import { closeSync, constants, existsSync, fchmodSync, openSync, realpathSync, rmdirSync, unlinkSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { ADAPTERS } from "../core/hooks/adapters.js";
import { CLAUDE_HTTP_EVENTS, claudeHttpHookSpecs } from "../core/hooks/claude.js";
import {
  HOOK_AGENTS,
  type HookAgent,
  type HookGroupSpec,
  type InstalledHook,
  launcherNodeEntry,
  launcherWord,
  listBatonHooks,
  NODE_WORD,
  nativeHookPath,
  uninstallFrom,
} from "../core/hooks/config.js";
import { OPENCODE_EVENTS } from "../core/hooks/opencode.js";
import type { JsonObject } from "../core/types.js";
import { BatonError, badInput } from "../errors.js";
import { httpHooksTargetsIn, staleHooksAdvice } from "../platform/claude-http-hooks.js";
import { userHome } from "../platform/home.js";
import { liveServer } from "../platform/server-file.js";
import { ensureServerKey, readServerKey } from "../platform/server-key.js";
import {
  acknowledgeGeminiHooks,
  checkCodexConfig,
  checkGeminiTrustedHooks,
  codexShim,
  forgetGeminiHooks,
  inspectCodexShim,
  jsonFile,
  type Readiness,
  readiness,
  removeUnusedCodexShim,
  shellWords,
  trustCodexHooks,
  untrustCodexHooks,
  writeCodexShim,
} from "./agent-setup.js";
import { CLAUDE_EXEC_FORM, claudeReadiness, claudeVersion, httpHooksBlocked, versionAtLeast } from "./claude-setup.js";
import { clineInstalled, installClineHooks, uninstallClineHooks } from "./cline-setup.js";
import { copilotReadiness } from "./copilot-setup.js";
import { type OpencodeNpmInstall, opencodeNpmInstall } from "./opencode-npm.js";
import { type OpencodePluginInfo, opencodePluginText, readOpencodePlugin } from "./opencode-plugin.js";
import { opencodeLauncher, opencodeReadiness } from "./opencode-setup.js";
import {
  AGENT_NAMES,
  gitWouldCommit,
  type HookPlaceOptions,
  type HookScope,
  hookConfigFile,
  hookWords,
  insideRoot,
  installCommand,
  isShared,
  launcherProblem,
  launcherWords,
  missingFromPath,
  pathReadiness,
  placeNote,
  placeProblems,
  shellProgram,
} from "./places.js";
import { PLUGIN_LIMITS, PLUGIN_ROUTES, type PluginInstall, pluginInstalls, pluginUninstall } from "./plugins.js";
import { hookServerMode } from "./policy.js";
import { afterUninstall, BACKUP_SUFFIX, backup, checkPlace, installedText, load, readIfFile, writeAtomic } from "./settings-file.js";

export { AGENT_NAMES, type HookPlaceOptions, type HookScope, hookConfigFile, installCommand } from "./places.js";
export { BACKUP_SUFFIX } from "./settings-file.js";
export { HOOK_AGENTS };

/**
 * What Baton cannot do with an agent, whatever the install (docs/integrations.md, "Events per
 * agent and version"): said by install and `baton hooks status` beside the hooks.
 */
export const AGENT_LIMITS: Readonly<Record<HookAgent, readonly string[]>> = {
  claude: [],
  codex: [],
  gemini: [
    "Gemini CLI names no session to its shell: a `baton rollback` the agent runs there is a person's (every lane's steps).",
    "Gemini CLI fires PreCompress before every model request, compression or not: an automatic compression is not noted in the journal (STATE.md is kept current).",
  ],
  qwen: [
    'In Qwen Code, `/rollback` is its own command (an alias of /rewind), which never reaches Baton: ask in words, "undo that" or "roll back 2 steps".',
    "`qwen -p` (headless) ends without SessionEnd: each turn's Stop ends its run, and the lane stays listed until it has been idle for 2 hours.",
    "Qwen Code shows the model Baton's context with < and > escaped (&lt; &gt;).",
  ],
  copilot: [
    "Copilot CLI sends no event after it compacts its context: Baton writes STATE.md before the compaction, but cannot put the session's state back into the compacted context (the next prompt's hook adds only a spiral pause and lessons).",
    "Copilot CLI shows no hook message to the user (`systemMessage` is not read): Baton's one-line notes, such as what a rollback restored, reach only the model.",
    "A Copilot CLI subagent run in the background (the task tool's `background` mode) goes on after its parent's turn ends, and agentStop does not say so: what it writes after that is no claim another agent is told of.",
  ],
  opencode: [
    "OpenCode shows no hook message to the user: Baton's one-line notes, such as what a rollback restored, reach only the model.",
    "OpenCode lets a plugin add text only to a prompt, a tool's result and the system prompt: Baton's state after a compaction goes into the system prompt until the next prompt, which carries it from then on.",
  ],
  cline: [
    "Cline CLI runs TaskStart, TaskResume and UserPromptSubmit without waiting for them and ignores their answer: the session's state is not put into its context at the start (only PreToolUse and PostToolUse can carry Baton's context to the model).",
    'Cline CLI fires no UserPromptSubmit for the prompt of `cline "…"`, of `cline -y "…"` (only for its own follow-up messages) or of a prompt sent over ACP (`cline --acp`), and it does not wait for one: "undo that" does not reach Baton headless, so run `baton rollback` instead.',
    "Cline CLI's PreToolUse cancel stops the whole run, not only the call: a spiral pause ends the task, and Cline shows neither the model nor you Baton's reason (`baton lanes` names the pause).",
    "Cline CLI never fires PreCompact (3.0.65) and sends nothing after it compacts: Baton cannot note a compaction or put the session's state back into the compacted context.",
    "Cline CLI resumes a task (`cline --id`) only in its interactive TUI; headless, a session takes more prompts only over ACP (`cline --acp`), each a run in the same lane.",
    "Cline CLI fires no TaskCancel when a task is cancelled: ACP's session/cancel fires SessionShutdown (Baton ends the lane there); Ctrl-C may end it before that hook starts, leaving the lane's run open.",
    "Linux and macOS only: the hook files Baton writes are POSIX shell scripts.",
    "Baton has no Cline plugin (`cline plugin install` takes in-process plugins, not hook files): the hook files are its only route, and the only ones status sees.",
  ],
};

export interface InstallResult extends Readiness {
  agent: HookAgent;
  scope: HookScope;
  /** A file the team commits: its hooks run `baton` from PATH, never a path of this machine. */
  shared: boolean;
  file: string;
  /** False when the file already held exactly these hooks (nothing written). */
  changed: boolean;
  /** `<file>.baton.bak`: the file as it was before Baton's hooks were added (absent: there was no file). */
  backup?: string;
  hooks: InstalledHook[];
  notes: string[];
  /** What Baton cannot do with this agent (AGENT_LIMITS). */
  limits: readonly string[];
}

export interface UninstallResult {
  agent: HookAgent;
  scope: HookScope;
  shared: boolean;
  file: string;
  changed: boolean;
  /** Baton handlers removed. */
  removed: number;
  /** The file is again, byte for byte, what `<file>.baton.bak` holds (nothing else had changed). */
  restored: boolean;
  /** Install had created the file, and it was removed. */
  deleted: boolean;
  notes: string[];
}

export interface HookStatus extends Partial<Readiness> {
  agent: HookAgent;
  scope: HookScope;
  shared: boolean;
  file: string;
  exists: boolean;
  installed: InstalledHook[];
  /** Events Baton installs that the file lacks (all of them when not installed). */
  missing: string[];
  /** What Baton cannot do with this agent (AGENT_LIMITS), where its hooks are installed. */
  limits?: readonly string[];
  /** The hooks run a baton entry or a Node (an absolute path) that no longer exists: install again. */
  stale: boolean;
  notes: string[];
  /** Codex: the launcher script the hooks run is not the one install wrote; OpenCode: the plugin file is not (install again). */
  launcherModified?: boolean;
  /** The file could not be read or parsed. */
  problem?: string;
  /** Installed as the agent's own plugin (Claude Code) or extension (Gemini CLI), not in a settings file: `file` is its hooks.json. */
  route?: "plugin" | "extension";
  /** The agent's name for the plugin or extension (`baton@agent-baton`, `baton`). */
  id?: string;
  /** The plugin or extension is on for this project. */
  enabled?: boolean;
  /** Baton's hooks are both in a settings file and in the enabled plugin: the agent runs each twice. */
  twice?: boolean;
}

export function isHookAgent(v: string): v is HookAgent {
  return (HOOK_AGENTS as readonly string[]).includes(v);
}

const shellQuote = launcherWord;

/**
 * This Node and this baton's entry by absolute path (no PATH lookup, no npx: a hook runs on
 * every tool call), for a file of this machine; `baton` when this process is not a baton entry.
 * An entry that is a shell script as well (bin/baton.cjs) runs as a program, naming this Node
 * after it (`<entry> --node=<node>`): its shell part answers a hook through the workspace's
 * server without starting Node, and hands the rest to that Node.
 */
export function defaultLauncher(argv1 = process.argv[1], platform: NodeJS.Platform = process.platform): string {
  if (argv1 && /baton(?:\.c?js)?$/.test(argv1)) {
    let entry = argv1;
    try {
      entry = realpathSync(argv1);
    } catch {
      // keep it as given
    }
    // Its hook client needs Linux's /proc: elsewhere the shell part would only add a start.
    if (platform === "linux" && shellProgram(entry)) return `${shellQuote(entry)} ${shellQuote(`${NODE_WORD}${process.execPath}`)}`;
    return `${shellQuote(process.execPath)} ${shellQuote(entry)}`;
  }
  return "baton";
}

export function hookSpecs(agent: HookAgent, launcher: string): HookGroupSpec[] {
  return ADAPTERS[agent].hookSpecs(launcher);
}

/**
 * The groups this place takes, in the form this place's agent runs. A group of an event newer
 * than some of the agent's versions (`since`) goes only into this machine's own settings, when
 * the agent found on PATH is that version or later: a version that does not know the event may
 * reject the whole file. There too, Claude Code 2.1.139 or later gets its command hooks in exec
 * form (execForm). `left` says what was left out.
 */
function forThisPlace(agent: HookAgent, all: HookGroupSpec[], o: HookPlaceOptions): { specs: HookGroupSpec[]; left?: string } {
  const newer = all.filter((s) => s.since !== undefined);
  const version = agent === "claude" && !isShared(agent, o) ? claudeVersion(o.env ?? process.env) : undefined;
  const exec = version !== undefined && versionAtLeast(version, CLAUDE_EXEC_FORM);
  const kept = all.filter((s) => s.since === undefined || (version !== undefined && versionAtLeast(version, s.since)));
  const specs = exec ? kept.map(execForm) : kept;
  if (kept.length === all.length) return { specs };
  const names = newer.filter((s) => !kept.includes(s)).map((s) => `${s.event} (${AGENT_NAMES[agent]} ${s.since} and later)`);
  const why = isShared(agent, o)
    ? "a shared file meets everyone's version"
    : version === undefined
      ? `no \`${agent} --version\` answered here`
      : `${AGENT_NAMES[agent]} here is ${version}`;
  return {
    specs,
    left: `Left out ${names.join(", ")}: ${why}, and a version without the event may skip the whole settings file.${isShared(agent, o) ? "" : " Run the install again after upgrading."}`,
  };
}

/**
 * A command hook in Claude Code's exec form: the launcher's first word the program, the rest and
 * `hook claude <Event>` its arguments. Claude Code otherwise runs a command with `$SHELL -c`, a
 * shell start on every hook (bash's ~2-6 ms here; a zsh user's also reads .zshenv). A version
 * without the form runs `command` alone through the shell (a Node reading the payload as a
 * script), so it is written only where `claude --version` says it has it.
 */
function execForm(spec: HookGroupSpec): HookGroupSpec {
  if (spec.handler.type !== "command" || spec.handler.args !== undefined) return spec;
  const words = shellWords(spec.handler.command);
  if (words === undefined || words.length < 2) return spec;
  const [command, ...args] = words as [string, ...string[]];
  return { ...spec, handler: { ...spec.handler, command, args } };
}

/** The launcher the hooks get when `--command` does not name one. */
function launcherFor(agent: HookAgent, o: HookPlaceOptions): string {
  // A file the team commits: Baton from PATH, on whichever machine runs the agent.
  if (isShared(agent, o)) return "baton";
  const launcher = defaultLauncher();
  // Status would not count a project's hooks naming a Node or a baton inside the project (its
  // files could stand in for them): say so now rather than write them.
  const inside =
    o.scope === "project" &&
    (shellWords(launcher) ?? []).some((w) => {
      const path = w.startsWith(NODE_WORD) ? w.slice(NODE_WORD.length) : w;
      return isAbsolute(path) && insideRoot(path, o.root);
    });
  if (inside)
    throw badInput(
      `the hooks would run \`${launcher}\`: this Node or this baton is inside the project, where the repository's files could stand in for them. Install from a Node and a Baton outside the project (\`npm install --global agent-baton\`), or name another launcher: \`--command baton\` (Baton from PATH) or \`--command "npx agent-baton"\`. Baton changed nothing`,
    );
  // Codex trusts an entry by its command: a command naming this Node and this baton would be
  // untrusted again after every upgrade, so Codex's hooks run a launcher at a fixed place.
  if (agent === "codex" && launcher !== "baton") return shellQuote(writeCodexShim(o, launcher));
  return launcher;
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function notesFor(agent: HookAgent, settings: JsonObject): string[] {
  const notes: string[] = [];
  if (agent === "codex")
    notes.push(
      "Codex runs hooks when its hooks feature is on (the default in current builds; older builds need `[features] codex_hooks = true` in config.toml).",
    );
  if (agent === "gemini") {
    const tools = settings.tools as JsonObject | undefined;
    const hc = settings.hooksConfig as JsonObject | undefined;
    if (tools?.enableHooks !== false && hc?.enabled !== false)
      notes.push("Gemini CLI runs hooks while its hooks system is enabled (/settings → Advanced → Enable Hooks System).");
  }
  if (agent === "copilot")
    notes.push(
      'Copilot CLI runs hooks unless a settings file sets "disableAllHooks": true; a project\'s .github/hooks/ load only in a folder it trusts.',
    );
  if (agent === "cline")
    notes.push(
      "Cline CLI runs every hook file of a type, yours beside Baton's, in every mode (`cline -y` too); it has no switch that turns hook files off.",
    );
  if (agent === "qwen")
    notes.push(
      'Qwen Code runs hooks unless a settings file sets "disableAllHooks": true; `qwen --bare` and `qwen --safe-mode` run none, and neither does a session in its execution sandbox (tools.executionSandbox).',
    );
  return notes;
}

/** Claude Code's other project file, when it holds Baton's hooks too (Claude Code runs both files' hooks). */
function otherClaudeFile(agent: HookAgent, o: HookPlaceOptions, verb: "install" | "uninstall"): string | undefined {
  if (agent !== "claude" || o.scope !== "project") return undefined;
  const other = { ...o, shared: !o.shared };
  const file = hookConfigFile(agent, other);
  try {
    checkPlace(file, other);
    const { settings } = load(file);
    if (listBatonHooks(settings.hooks, agent).length === 0) return undefined;
  } catch {
    return undefined;
  }
  const remove = `\`${installCommand(agent, other, "uninstall")}\``;
  return verb === "install"
    ? `${file} holds Baton's hooks too, and Claude Code runs both files' hooks: remove them there with ${remove}.`
    : `${file} still holds Baton's hooks: ${remove} removes them.`;
}

/**
 * `--http`: Claude Code's per-call hooks POST to the workspace's server. The URL and token are
 * this machine's (`.baton/server.key`, made now when the server never ran: the server takes that
 * port and token when it starts), so they go only into the local `.claude/settings.local.json`,
 * left mode 0600; install refuses when git would commit that file.
 */
async function httpSpecs(agent: HookAgent, o: HookPlaceOptions, launcher: string): Promise<HookGroupSpec[]> {
  if (agent !== "claude" || o.scope !== "project" || o.shared)
    throw badInput(
      "--http is for Claude Code's local project settings (.claude/settings.local.json): the hooks name this machine's server port and token, which a shared or user file must not hold. Use `baton hooks install claude --http`",
    );
  const batonDir = join(o.root, ".baton");
  if (!existsSync(batonDir)) throw new BatonError("workspace_not_found", `no Baton workspace at ${o.root}: run \`baton init\` there first`);
  const key = await ensureServerKey(batonDir);
  return claudeHttpHookSpecs(launcher, key);
}

/** The notes an install or status gives about Claude Code's HTTP hooks in `hooks`, if any. */
function httpNotes(o: HookPlaceOptions, hooks: readonly InstalledHook[], settings: JsonObject): { notes: string[]; remaining: string[] } {
  const http = hooks.filter((h) => h.http);
  if (http.length === 0) return { notes: [], remaining: [] };
  const key = readServerKey(join(o.root, ".baton"));
  const notes = [
    `${CLAUDE_HTTP_EVENTS.join(", ")} go over HTTP to this workspace's server (its port and token are in this file, mode 0600, which only this machine's user reads and git must not commit); SessionStart (which starts the server) and the other events stay command hooks. A call whose HTTP hook the server did not answer runs without a checkpoint, and the next prompt or turn end says so.`,
  ];
  const remaining: string[] = [];
  const advice = staleHooksAdvice(httpHooksTargetsIn(settings), key);
  if (advice) remaining.push(`${advice[0]?.toUpperCase()}${advice.slice(1)}.`);
  const blocked = httpHooksBlocked(
    o,
    http.map((h) => h.command),
  );
  if (blocked) remaining.push(blocked);
  // Only a server answers HTTP hooks, and only `auto` starts one (SessionStart, UserPromptSubmit).
  const mode = hookServerMode(join(o.root, ".baton"));
  const by = process.env.BATON_HOOK_SERVER?.trim()
    ? `BATON_HOOK_SERVER=${process.env.BATON_HOOK_SERVER.trim()}`
    : `hooks.server "${mode}" (.baton/config.json)`;
  if (mode === "off")
    remaining.push(
      `${by}: no hook starts the workspace's server, so every HTTP hook goes unanswered (its call runs without a checkpoint). Set it to auto, or install without --http.`,
    );
  else if (mode === "use") {
    // Answered now, by the server the user started; not once it stops.
    if (liveServer(join(o.root, ".baton")))
      notes.push(
        `${by}: no hook starts the workspace's server, so the HTTP hooks are answered only while the server you started runs (it runs now); set it to auto, or install without --http, if it may stop.`,
      );
    else
      remaining.push(
        `${by}: no hook starts the workspace's server, so the HTTP hooks are answered only while a server you started runs (\`baton serve\`, not running now); set it to auto, or install without --http.`,
      );
  }
  return { notes, remaining };
}

export async function installHooks(
  agent: HookAgent,
  given: HookPlaceOptions & { launcher?: string; http?: boolean },
): Promise<InstallResult> {
  const o = { ...given };
  // Status counts only a launcher that is a baton: one it would not is refused here, not written.
  if (o.launcher !== undefined) {
    const words = shellWords(o.launcher);
    if (words === undefined)
      throw badInput(
        `--command ${o.launcher}: not a launcher Baton can read (an unclosed quote, or a shell operator such as ; | & $ or a backquote): name a program and its arguments only; Baton changed nothing`,
      );
    const odd = launcherProblem(words, { ...ownRoot(o), ...(agent === "codex" ? { codexShim: codexShim(o) } : {}) });
    if (odd !== undefined) throw badInput(`--command ${o.launcher}: ${odd}; Baton changed nothing`);
    // Written as Baton quotes a launcher, so its entries read as Baton's however it was quoted here.
    o.launcher = words.map(launcherWord).join(" ");
  }
  if (agent === "opencode") {
    if (o.http) throw badInput("--http is for Claude Code's hooks; OpenCode runs Baton's plugin in its own process");
    return installOpencode(o);
  }
  if (agent === "cline") {
    if (o.http) throw badInput("--http is for Claude Code's hooks; Cline CLI runs Baton's hook files");
    return installCline(o);
  }
  const file = hookConfigFile(agent, o);
  checkPlace(file, o);
  if (o.http && agent === "claude" && o.scope === "project" && !o.shared && gitWouldCommit(o.root, file)) {
    const rel = relative(o.root, file);
    throw badInput(
      `git would commit ${rel} (it is tracked, or not ignored), and with --http it holds the workspace server's token: add \`${rel.split(sep).join("/")}\` to .gitignore (or untrack it: \`git rm --cached ${rel}\`), then run \`baton hooks install claude --http\` again. Baton changed nothing`,
      { path: file },
    );
  }
  const { text, settings } = load(file, true);
  if (agent === "codex") checkCodexConfig(o);
  if (agent === "gemini") checkGeminiTrustedHooks(o);
  const launcher = o.launcher ?? launcherFor(agent, o);
  const placed = forThisPlace(agent, o.http ? await httpSpecs(agent, o, launcher) : hookSpecs(agent, launcher), o);
  const { specs } = placed;
  let next: JsonObject;
  let newText: string;
  try {
    ({ next, text: newText } = installedText(text, settings, specs, agent));
  } catch (err) {
    throw badInput(`${file}: ${(err as Error).message}; fix it by hand: Baton changed nothing`, { path: file });
  }
  const hooks = listBatonHooks(next.hooks, agent);
  const http = httpNotes(o, hooks, next);
  const notes = [placeNote(agent, o), ...placeProblems(agent, o, file, hooks), ...notesFor(agent, settings), ...http.notes];
  if (placed.left) notes.push(placed.left);
  const other = otherClaudeFile(agent, o, "install");
  if (other) notes.push(other);
  const plugin = pluginInstalls(agent, o).find((p) => p.enabled);
  if (plugin) notes.push(twiceNote(plugin, [file]));
  let changed = false;
  if (text === undefined || !sameJson(next.hooks, settings.hooks)) {
    // The first install into an existing file keeps the file as it was; a reinstall (Baton's
    // hooks are there already) keeps that first copy.
    if (text !== undefined && listBatonHooks(settings.hooks, agent).length === 0) backup(file, text, o);
    // HTTP hooks carry the server's token: a file made for them is the user's alone.
    writeAtomic(file, newText, o, o.http ? 0o600 : undefined);
    changed = true;
  }
  // An existing file keeps its mode when written: one holding the token is made the user's alone.
  if (o.http) ownerOnly(file);
  if (agent === "codex") {
    const t = trustCodexHooks(o, next.hooks, settings.hooks);
    if (t.problem) notes.push(t.problem);
    else if (t.changed) notes.push(`Recorded Codex's trust of Baton's hooks in ${t.file} (as Codex's /hooks does).`);
  }
  if (agent === "gemini") acknowledgeGeminiHooks(o, next.hooks);
  const bak = `${file}${BACKUP_SUFFIX}`;
  return {
    agent,
    scope: o.scope,
    shared: isShared(agent, o),
    file,
    changed,
    ...(existsSync(bak) ? { backup: bak } : {}),
    hooks,
    notes,
    limits: AGENT_LIMITS[agent],
    ...withRemaining(pathReadiness(readiness(agent, o, next), agent, o, hooks), http.remaining),
  };
}

function withRemaining(r: Readiness, more: readonly string[]): Readiness {
  return more.length === 0 ? r : { ...r, willRun: false, remaining: [...more, ...r.remaining] };
}

export async function uninstallHooks(agent: HookAgent, o: HookPlaceOptions): Promise<UninstallResult> {
  if (agent === "opencode") return uninstallOpencode(o);
  if (agent === "cline") {
    const { dir, removed } = uninstallClineHooks(o);
    return {
      agent,
      scope: o.scope,
      shared: isShared(agent, o),
      file: dir,
      changed: removed > 0,
      removed,
      restored: false,
      deleted: removed > 0,
      notes: [],
    };
  }
  const file = hookConfigFile(agent, o);
  checkPlace(file, o);
  const { text, settings } = load(file, true);
  const base: UninstallResult = {
    agent,
    scope: o.scope,
    shared: isShared(agent, o),
    file,
    changed: false,
    removed: 0,
    restored: false,
    deleted: false,
    notes: [],
  };
  const other = otherClaudeFile(agent, o, "uninstall");
  if (other) base.notes.push(other);
  // The agent's plugin or extension is the agent's to remove.
  for (const plugin of pluginInstalls(agent, o))
    base.notes.push(
      `Baton is also installed as ${AGENT_NAMES[agent]}'s ${PLUGIN_ROUTES[plugin.agent].kind} ${plugin.id}, which this does not remove: \`${pluginUninstall(plugin)}\` does.`,
    );
  if (text === undefined) return base;
  let r: { settings: JsonObject; removed: number };
  try {
    r = uninstallFrom(settings, agent);
  } catch (err) {
    throw badInput(`${file}: ${(err as Error).message}; fix it by hand: Baton changed nothing`, { path: file });
  }
  if (r.removed === 0) return base;
  const { text: newText, restored } = afterUninstall(file, text, settings, r.settings, agent);
  if (agent === "codex") untrustCodexHooks(o, settings.hooks, r.settings.hooks);
  if (agent === "gemini") {
    const note = forgetGeminiHooks(o, settings.hooks);
    if (note) base.notes.push(note);
  }
  if (newText === undefined) {
    try {
      unlinkSync(file);
    } catch (err) {
      throw new BatonError("io_error", `cannot remove ${file}: ${(err as Error).message}`, { path: file }, { cause: err });
    }
    // The agent's folder in the project (.claude/, .qwen/ …) that the install's file was alone in
    // goes too, as a checkout without Baton has none; a user's folder is never emptied by Baton.
    if (o.scope === "project") removeIfEmpty(dirname(file));
    // Copilot CLI's file is two folders down (.github/hooks/): .github goes too when it is empty.
    if (o.scope === "project" && agent === "copilot") removeIfEmpty(dirname(dirname(file)));
  } else writeAtomic(file, newText, o);
  // The launcher is shared by every place installed with this CODEX_HOME: it goes with the last.
  if (agent === "codex") removeUnusedCodexShim(o);
  return { ...base, changed: true, removed: r.removed, restored, deleted: newText === undefined };
}

/** Cline CLI: a script per hook type in its hooks directory (cline-setup.ts), not a settings file. */
function installCline(o: HookPlaceOptions & { launcher?: string }): InstallResult {
  const agent = "cline";
  const launcher = o.launcher ?? launcherFor(agent, o);
  const r = installClineHooks(o, launcher);
  const hooks = clineInstalled(r.dir);
  const notes = [placeNote(agent, o), ...placeProblems(agent, o, r.dir, hooks), ...notesFor(agent, {})];
  return {
    agent,
    scope: o.scope,
    shared: isShared(agent, o),
    file: r.dir,
    changed: r.changed,
    hooks,
    notes,
    limits: AGENT_LIMITS[agent],
    ...pathReadiness(readiness(agent, o, {}), agent, o, hooks),
  };
}

/** Remove a directory if it is empty; anything else (not empty, gone, not allowed) leaves it be. */
function removeIfEmpty(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // not empty, or not ours to remove: it stays
  }
}

/**
 * The baton entry a hook command runs, when it names one by absolute path, and the Node it
 * names by absolute path (before the entry, or after it as `--node=<path>`).
 */
function launcherPaths(command: string): { entry?: string; node?: string } {
  const words = launcherWords(command);
  const named = words && launcherNodeEntry(words);
  const entry = named?.entry ?? words?.at(-1);
  return {
    ...(entry !== undefined && /^\/.*baton(?:\.c?js)?$/.test(entry) ? { entry } : {}),
    ...(named?.node.startsWith("/") ? { node: named.node } : {}),
  };
}

/** Each file Baton may have installed into: a project's (Claude Code: the team's and the local one), then the user's. */
function places(agent: HookAgent, o: Omit<HookPlaceOptions, "scope">): HookPlaceOptions[] {
  const project =
    agent === "claude"
      ? [
          { ...o, shared: true },
          { ...o, shared: false },
        ]
      : [{ ...o, shared: true }];
  return [...project.map((p) => ({ ...p, scope: "project" as const })), { ...o, scope: "user", shared: false }];
}

export async function hooksStatus(
  o: Omit<HookPlaceOptions, "scope" | "shared"> & { agents?: readonly HookAgent[]; launcher?: string },
): Promise<HookStatus[]> {
  const out: HookStatus[] = [];
  const launcher = o.launcher ?? "baton";
  for (const agent of o.agents ?? HOOK_AGENTS) {
    const expected = hookSpecs(agent, launcher);
    if (agent === "opencode") {
      const files = places(agent, o).map((place) => opencodeStatus(place));
      const npm = opencodeNpmInstalls(o);
      out.push(...files, ...npm.map((i) => opencodeNpmStatus(i, { ...o, scope: i.scope, shared: i.scope === "project" })));
      // Both routes at once: OpenCode loads the plugin file and the package (it keeps one per package name only).
      // A package that is not Baton's plugin, or a listing OpenCode skips here, loads nothing.
      const loaded = npm.find((i) => i.problem === undefined && opencodeReadiness({ ...o, scope: i.scope }).willRun);
      const withHooks = files.filter((f) => f.installed.length > 0);
      if (loaded !== undefined && withHooks.length > 0) {
        const note = opencodeTwiceNote(
          loaded,
          withHooks.map((f) => f.file),
        );
        for (const s of out.filter((x) => x.agent === "opencode" && (x.route !== undefined || x.installed.length > 0))) {
          s.twice = true;
          s.notes.push(note);
        }
      }
      continue;
    }
    for (const place of places(agent, o)) {
      const { scope } = place;
      const file = hookConfigFile(agent, place);
      const s: HookStatus = {
        agent,
        scope,
        shared: isShared(agent, place),
        file,
        exists: existsSync(file),
        installed: [],
        missing: [],
        stale: false,
        notes: [],
      };
      try {
        const { settings } = agent === "cline" ? { settings: {} as JsonObject } : load(file);
        s.installed = agent === "cline" ? clineInstalled(file) : listBatonHooks(settings.hooks, agent);
        // An event newer than some of the agent's versions is not missing: the install judges it.
        s.missing = expected.filter((e) => e.since === undefined && !s.installed.some((i) => i.event === e.event)).map((e) => e.event);
        let modified: string | undefined;
        s.stale = s.installed.some((i) => {
          const { entry, node } = launcherPaths(i.command);
          if (entry === undefined) return false;
          if (!existsSync(entry) || (node !== undefined && !existsSync(node))) return true;
          if (agent !== "codex" || resolve(entry) !== codexShim(place)) return false;
          // Codex's launcher script: exactly what install wrote, and the baton it runs exists.
          const shim = inspectCodexShim(entry);
          if (shim === "modified") modified = entry;
          if (shim === undefined || shim === "modified") return false;
          if (!existsSync(shim.node) || !existsSync(shim.entry)) return true;
          // What it runs must be a Node and an installed baton, as a launcher in a settings file must.
          if (launcherProblem(shim.words, ownRoot(place, entry)) !== undefined) modified = entry;
          return false;
        });
        if (s.installed.length > 0) {
          const http = httpNotes(place, s.installed, settings);
          s.notes = [...placeProblems(agent, place, file, s.installed), ...notesFor(agent, settings), ...http.notes];
          s.limits = AGENT_LIMITS[agent];
          Object.assign(s, withRemaining(pathReadiness(readiness(agent, place, settings), agent, place, s.installed), http.remaining));
          if (modified !== undefined) {
            s.launcherModified = true;
            s.willRun = false;
            s.remaining = [
              `launcher modified: ${modified} is not the script Baton wrote, so Baton's hooks may not run: re-run \`${installCommand(agent, place)}\`.`,
              ...(s.remaining ?? []),
            ];
          }
          if (s.stale) {
            s.willRun = false;
            s.remaining = [
              `The baton or the Node these hooks run is gone: run \`${installCommand(agent, place)}\` again.`,
              ...(s.remaining ?? []),
            ];
          }
          const odd = s.installed.map((i) => entryProblem(agent, place, file, i, expected)).find((p) => p !== undefined);
          if (odd !== undefined) {
            s.launcherModified = true;
            s.willRun = false;
            s.remaining = [
              `Baton's hooks here may not run Baton: ${odd}. Run \`${installCommand(agent, place)}\` again.`,
              ...(s.remaining ?? []),
            ];
          }
        }
      } catch (err) {
        s.problem = (err as Error).message;
      }
      out.push(s);
    }
    const plugins = pluginInstalls(agent, o);
    const mine = out.filter((s) => s.agent === agent);
    for (const plugin of plugins) out.push(pluginStatus(plugin, expected, o));
    // Both routes at once: the agent runs every one of Baton's hooks twice (two checkpoints per write).
    const active = plugins.find((p) => p.enabled);
    const files = mine.filter((s) => s.installed.length > 0);
    if (active && files.length > 0)
      for (const s of [...files, ...out.filter((x) => x.agent === agent && x.route !== undefined && x.enabled)]) {
        s.twice = true;
        s.notes.push(
          twiceNote(
            active,
            files.map((f) => f.file),
          ),
        );
      }
  }
  return out;
}

function twiceNote(plugin: PluginInstall, files: readonly string[]): string {
  const kind = PLUGIN_ROUTES[plugin.agent].kind;
  return `Baton's hooks are installed twice: as ${AGENT_NAMES[plugin.agent]}'s ${kind} ${plugin.id} and in ${files.join(", ")}, so ${AGENT_NAMES[plugin.agent]} runs each hook twice. Keep one: \`${pluginUninstall(plugin)}\`, or \`baton hooks uninstall ${plugin.agent}\` (with --user or --shared for the file that holds them).`;
}

/** The plugin's or extension's hooks as `baton hooks status` reports a place. */
function pluginStatus(
  plugin: PluginInstall,
  expected: readonly HookGroupSpec[],
  o: Omit<HookPlaceOptions, "scope" | "shared">,
): HookStatus {
  const { agent } = plugin;
  const kind = PLUGIN_ROUTES[agent].kind;
  const installed = listBatonHooks(plugin.hooks, agent);
  const remaining: string[] = [];
  // Copilot CLI's uninstall of a local marketplace's plugin only disables it: removing the marketplace removes it.
  const market = plugin.live && plugin.id.includes("@") ? plugin.id.slice(plugin.id.lastIndexOf("@") + 1) : undefined;
  if (plugin.disabledBy !== undefined)
    remaining.push(
      `Baton's plugin ${plugin.id} is turned off in this repository: ${plugin.disabledBy} sets "enabledPlugins": { "${plugin.id}": false }, which ${AGENT_NAMES[agent]} applies in a trusted folder. Remove that entry (the repository's files do not decide whether the agent is supervised).`,
    );
  else if (!plugin.enabled)
    remaining.push(
      agent === "gemini"
        ? `Baton's extension ${plugin.id} is disabled here: \`gemini extensions enable ${plugin.id}\`.`
        : `Baton's plugin ${plugin.id} is installed but not enabled here: \`${agent} plugin enable ${plugin.id}\`${market ? ` (or, to remove it, \`copilot plugin marketplace remove ${market}\`)` : ""}.`,
    );
  // Gemini CLI runs an extension's hooks only with its hooks system on and in a trusted folder, as any other.
  if (agent === "gemini") {
    const user = jsonFile(join(o.home ?? userHome(), ".gemini", "settings.json")) ?? {};
    remaining.push(...readiness(agent, { ...o, scope: "user" }, user).remaining);
  }
  // Claude Code's disableAllHooks turns plugins' hooks off too.
  if (agent === "claude") remaining.push(...claudeReadiness({ ...o, scope: "user" }).remaining);
  // Copilot CLI runs a plugin's hooks in every folder, trusted or not; its disableAllHooks turns them off too.
  if (agent === "copilot") remaining.push(...copilotReadiness({ ...o, scope: "user" }).remaining);
  // The plugin's launcher runs `baton` from PATH.
  if (missingFromPath([`baton hook ${agent} SessionStart`], o.env) !== undefined)
    remaining.push(
      `\`baton\` is not on PATH here, and Baton's ${kind} runs it from PATH: ${AGENT_NAMES[agent]} goes on without Baton (${agent === "copilot" ? "silently: a failing hook would block its tool calls" : "its first hook says so"}). Install Baton: \`npm install --global agent-baton\`.`,
    );
  return {
    agent,
    scope: plugin.scope,
    shared: plugin.shared,
    file: plugin.hooksFile,
    exists: true,
    installed,
    missing: expected.filter((e) => e.since === undefined && !installed.some((i) => i.event === e.event)).map((e) => e.event),
    stale: false,
    notes: [`${AGENT_NAMES[agent]}'s ${kind} ${plugin.id} (${plugin.dir}); remove it with \`${pluginUninstall(plugin)}\`.`],
    limits: [...AGENT_LIMITS[agent], ...PLUGIN_LIMITS[agent]],
    route: kind,
    id: plugin.id,
    enabled: plugin.enabled,
    willRun: remaining.length === 0,
    remaining,
    ...(agent === "gemini" ? { trustFile: readiness(agent, { ...o, scope: "user" }, {}).trustFile } : {}),
  };
}

// OpenCode: a plugin file that is Baton's alone (opencode-plugin.ts), not entries in a settings file.

/** The plugin at `file`: its text and what it runs, when Baton wrote it; a file Baton did not write is refused. */
function opencodePluginAt(file: string, verb: string): { text: string | undefined; info?: OpencodePluginInfo } {
  const text = readIfFile(file, true);
  if (text === undefined) return { text };
  const info = readOpencodePlugin(text);
  if (!info)
    throw badInput(`${file} is not Baton's plugin (its first line is not Baton's mark): move it away to ${verb}; Baton changed nothing`, {
      path: file,
    });
  return { text, info };
}

function opencodeHooks(info: OpencodePluginInfo | undefined): InstalledHook[] {
  return (info?.events ?? []).map((event) => ({ event, command: `${info?.launcher.join(" ")} hook opencode ${event}` }));
}

function opencodeReady(o: HookPlaceOptions, info: OpencodePluginInfo): Readiness {
  const r = opencodeReadiness(o);
  const [program] = info.launcher;
  if (program === "baton" && missingFromPath(["baton hook opencode session.created"], o.env) !== undefined)
    return {
      willRun: false,
      remaining: [
        `\`baton\` is not on PATH here, and the plugin runs it from PATH: OpenCode would go on without Baton. Install Baton so it is on PATH (\`npm install --global agent-baton\`)${o.scope === "project" ? ", or install with --user (your user plugin, this machine's paths)" : ""}.`,
        ...r.remaining,
      ],
    };
  return r;
}

async function installOpencode(o: HookPlaceOptions & { launcher?: string }): Promise<InstallResult> {
  const file = hookConfigFile("opencode", o);
  checkPlace(file, o);
  const shared = isShared("opencode", o);
  const { text } = opencodePluginAt(file, "install Baton's");
  const next = opencodePluginText(
    opencodeLauncher(shared, o.launcher === undefined ? undefined : (shellWords(o.launcher) ?? [o.launcher])),
  );
  const changed = text !== next;
  if (changed) writeAtomic(file, next, o);
  const info = readOpencodePlugin(next) as OpencodePluginInfo;
  const hooks = opencodeHooks(info);
  return {
    agent: "opencode",
    scope: o.scope,
    shared,
    file,
    changed,
    hooks,
    notes: [
      placeNote("opencode", o),
      ...placeProblems("opencode", o, file, hooks),
      ...opencodeNpmInstalls(o)
        .slice(0, 1)
        .map((i) => opencodeTwiceNote(i, [file])),
    ],
    limits: AGENT_LIMITS.opencode,
    ...opencodeReady(o, info),
  };
}

/** Baton as OpenCode's npm plugin: the project's listing, then the user's. */
function opencodeNpmInstalls(o: Omit<HookPlaceOptions, "scope" | "shared">): OpencodeNpmInstall[] {
  return (["project", "user"] as const).flatMap((scope) => opencodeNpmInstall({ ...o, scope }) ?? []);
}

/** How to take Baton's npm plugin out of OpenCode: OpenCode has no command for it, and Baton leaves OpenCode's configuration alone. */
function opencodeNpmRemoval(i: OpencodeNpmInstall): string {
  return `take "${i.spec}" out of "plugin" in ${i.config} (OpenCode has no command that removes a plugin)`;
}

function opencodeTwiceNote(i: OpencodeNpmInstall, files: readonly string[]): string {
  return `Baton's hooks are installed twice: as OpenCode's npm plugin ${i.spec} (${i.config}) and in ${files.join(", ")}, so OpenCode runs each hook twice (two checkpoints per write). Keep one: ${opencodeNpmRemoval(i)}, or \`baton hooks uninstall opencode\` (with --user for the file that holds them).`;
}

/** Baton's npm plugin as `baton hooks status` reports a place: `file` is the module OpenCode loads (its configuration until it has installed the package). */
function opencodeNpmStatus(i: OpencodeNpmInstall, place: HookPlaceOptions): HookStatus {
  // Not installed yet: OpenCode fetches the package at its next start; it ships this plugin.
  const info =
    i.info ?? (i.module === undefined && i.problem === undefined ? readOpencodePlugin(opencodePluginText(["baton"])) : undefined);
  const installed = opencodeHooks(info);
  const ready = info ? opencodeReady(place, info) : { willRun: false, remaining: [] as string[] };
  const remaining = [...ready.remaining];
  if (i.problem !== undefined)
    remaining.unshift(
      `${i.problem}. Remove ${dirname(dirname(i.packageDir))} so that OpenCode installs agent-baton again at its next start (it never updates a package it has installed).`,
    );
  const pending = i.module === undefined && i.problem === undefined;
  if (pending)
    remaining.unshift(
      `OpenCode has not installed ${i.spec} yet: it does at its next start (or \`opencode plugin ${i.spec}${i.scope === "user" ? " --global" : ""}\` now), from the registry npm is set to use; nothing runs until then.`,
    );
  const where =
    i.module !== undefined
      ? `OpenCode loads ${i.module}`
      : `OpenCode installs it from npm into ${i.packageDir} at its next start (\`opencode plugin ${i.spec}${i.scope === "user" ? " --global" : ""}\` does it now)`;
  return {
    agent: "opencode",
    scope: i.scope,
    shared: i.scope === "project",
    file: i.module ?? i.config,
    exists: true,
    installed,
    missing: OPENCODE_EVENTS.filter((e) => !installed.some((h) => h.event === e)),
    stale: false,
    notes: [`OpenCode's npm plugin ${i.spec}, listed in ${i.config}; ${where}. Remove it: ${opencodeNpmRemoval(i)}.`],
    limits: AGENT_LIMITS.opencode,
    route: "plugin",
    id: i.spec,
    enabled: true,
    willRun: i.problem === undefined && !pending && ready.willRun,
    remaining,
  };
}

async function uninstallOpencode(o: HookPlaceOptions): Promise<UninstallResult> {
  const file = hookConfigFile("opencode", o);
  checkPlace(file, o);
  const { text, info } = opencodePluginAt(file, "uninstall");
  const base: UninstallResult = {
    agent: "opencode",
    scope: o.scope,
    shared: isShared("opencode", o),
    file,
    changed: false,
    removed: 0,
    restored: false,
    deleted: false,
    notes: [],
  };
  // Baton's npm plugin is OpenCode's configuration, not a file Baton wrote: say how to remove it.
  base.notes.push(
    ...opencodeNpmInstalls(o).map(
      (i) => `Baton is also OpenCode's npm plugin ${i.spec}, which this leaves in place: ${opencodeNpmRemoval(i)}.`,
    ),
  );
  if (text === undefined || !info) return base;
  try {
    unlinkSync(file);
  } catch (err) {
    throw new BatonError("io_error", `cannot remove ${file}: ${(err as Error).message}`, { path: file }, { cause: err });
  }
  // A checkout without Baton has no .opencode/plugins/ (nor .opencode/) that only held the plugin.
  if (o.scope === "project") {
    removeIfEmpty(dirname(file));
    removeIfEmpty(dirname(dirname(file)));
  }
  return { ...base, changed: true, removed: info.events.length, restored: true, deleted: true };
}

function opencodeStatus(place: HookPlaceOptions): HookStatus {
  const file = hookConfigFile("opencode", place);
  const s: HookStatus = {
    agent: "opencode",
    scope: place.scope,
    shared: isShared("opencode", place),
    file,
    exists: existsSync(file),
    installed: [],
    missing: [],
    stale: false,
    notes: [],
  };
  const expected = [...OPENCODE_EVENTS];
  try {
    const { text, info } = opencodePluginAt(file, "install Baton's");
    s.installed = opencodeHooks(info);
    s.missing = expected.filter((e) => !info?.events.includes(e));
    if (info) {
      s.notes = placeProblems("opencode", place, file, s.installed);
      s.limits = AGENT_LIMITS.opencode;
      const named = launcherNodeEntry(info.launcher);
      s.stale = named !== undefined && [named.entry, named.node].some((f) => f.startsWith("/") && !existsSync(f));
      Object.assign(s, opencodeReady(place, info));
      if (s.stale) {
        s.willRun = false;
        s.remaining = [
          `The baton or the Node this plugin runs is gone: run \`${installCommand("opencode", place)}\` again.`,
          ...(s.remaining ?? []),
        ];
      }
      // Baton's mark is two lines anyone can write (a cloned repository too): the plugin is
      // Baton's only when it is exactly what this Baton writes, for a launcher that is a baton.
      const odd = launcherProblem(info.launcher, ownRoot(place, file));
      if (odd !== undefined) {
        s.launcherModified = true;
        s.willRun = false;
        s.remaining = [
          `The plugin may not run Baton: it runs ${odd}. Run \`${installCommand("opencode", place)}\` again.`,
          ...(s.remaining ?? []),
        ];
      } else if (text !== opencodePluginText(info.launcher)) {
        s.launcherModified = true;
        s.willRun = false;
        s.remaining = [
          `${file} carries Baton's mark but is not the plugin this Baton writes (edited, or an older Baton's): run \`${installCommand("opencode", place)}\` to write it again.`,
          ...(s.remaining ?? []),
        ];
      }
    }
  } catch (err) {
    s.problem = (err as Error).message;
  }
  return s;
}

/**
 * Why an entry counted as Baton's by its words may not do Baton's job, or undefined: its launcher
 * is not a baton, its command or URL names another event than the one it is listed under, or
 * its matcher is not the one install writes (a PreToolUse matching no tool Baton checkpoints).
 */
function entryProblem(
  agent: HookAgent,
  place: HookPlaceOptions,
  file: string,
  i: InstalledHook,
  expected: readonly HookGroupSpec[],
): string | undefined {
  if (i.http) {
    if (!i.command.endsWith(nativeHookPath(agent, i.event))) return `the ${i.event} entry posts to ${i.command}, not to ${i.event}'s route`;
  } else {
    const words = launcherWords(i.command);
    if (!words) return `\`${i.command}\` is not a command Baton writes`;
    const odd = launcherProblem(words, { ...ownRoot(place, file), ...(agent === "codex" ? { codexShim: codexShim(place) } : {}) });
    if (odd !== undefined) return `they run ${odd}`;
    const tail = hookWords(i.command);
    if (tail?.length !== 3 || tail[1] !== agent || tail[2] !== i.event)
      return `the ${i.event} entry runs \`${tail?.join(" ") ?? i.command}\`, not \`hook ${agent} ${i.event}\``;
  }
  const spec = expected.find((e) => e.event === i.event);
  if (spec?.matcher !== undefined && i.matcher !== undefined && i.matcher !== "" && i.matcher !== "*" && i.matcher !== spec.matcher)
    return `the ${i.event} entry matches \`${i.matcher}\`, not Baton's \`${spec.matcher}\` (the tools it checkpoints)`;
  return undefined;
}

/**
 * The project a place's launchers must lie outside: a project's files (a repository could
 * commit them, and its files stand in for a Node or a baton). A user's file is the user's own,
 * whichever folder status runs in (`~` itself holds nvm's Nodes and npm's global prefix),
 * unless it lies in the project (a CODEX_HOME or config folder pointed into the repository)
 * and the project is not the home folder.
 */
function ownRoot(place: HookPlaceOptions, file?: string): { root?: string } {
  if (place.scope === "project") return { root: place.root };
  const inProject = file !== undefined && insideRoot(file, place.root) && !insideRoot(userHome(), place.root);
  return inProject ? { root: place.root } : {};
}

/** Mode 0600 for the settings file, never through a link (the agent may have put one there). */
function ownerOnly(file: string): void {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    fchmodSync(fd, 0o600);
  } finally {
    closeSync(fd);
  }
}

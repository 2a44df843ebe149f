/**
 * Whether an agent's shell command is Baton itself, and whether it only reads. Agent hooks let
 * exactly one plain Baton invocation through without a checkpoint (it records itself), and only
 * a read-only one through a spiral pause: a supervised agent must not be able to switch its
 * supervision off by wrapping a command in Baton's name (`rm -rf src; baton status`) or by
 * clearing its own pause (`baton resume --unpause`) or trusting a workspace's settings (`baton trust`).
 *
 * The command is tokenised by shell-quote, a shell parser (quotes, escapes, operators), and
 * refused as "not Baton" unless it is one simple command: any operator (`;`, `&&`, `||`, `|`,
 * `&`, subshell parentheses, redirections), glob, comment, variable or command substitution
 * (`$…`, backticks), a line break, or an environment assignment in front makes it not Baton.
 * shell-quote reads a line break and a backtick as ordinary characters, so those are refused
 * before it runs.
 */
import { parse } from "shell-quote";
import { userWords } from "./prompt-words.js";

export interface BatonInvocation {
  /** The arguments after the program (`baton`, `npx agent-baton`, `node …/baton.cjs`). */
  args: string[];
  /** Nothing it does changes files, the journal, the pause or the hooks. */
  readOnly: boolean;
  /**
   * It would switch supervision off or change it: `baton hooks install|uninstall`, `baton serve
   * --rotate-token` or `--port` (Claude Code's HTTP hooks name the server's port and token), and `baton
   * trust` in any form (trusting `.baton/config.json` applies its store, private files, spiral
   * and lanes settings: the user's decision, never the supervised agent's).
   */
  changesSupervision: boolean;
  /**
   * It speaks for the user over other agents' lanes (core/lanes.ts): clears a spiral pause,
   * rolls back or acts in another lane or every lane, or writes the events only hooks write.
   */
  overridesLanes: boolean;
}

/** Characters that start a substitution or a new command which shell-quote does not report. */
const UNPARSED = /[`$\r\n\0]/;

/**
 * Commands that only read, as `command` or `command subcommand`. A flag that writes (below)
 * makes any of them a writer again.
 */
const READ_ONLY = new Set([
  "status",
  "resume",
  "state",
  "export",
  "checkpoints",
  "lanes",
  "doctor",
  "help",
  "session list",
  "session show",
  "checkpoint show",
  "lessons list",
  "lessons search",
  "lessons inject",
  "lessons check",
  "ledger list",
  "ledger show",
  "ledger export",
  "hooks status",
  "artifact list",
  "artifact get",
  "lock inspect",
  "lock list",
  "target show",
  "flows list",
  "flows validate",
]);

/** Commands with subcommands: the first positional after them names the subcommand. */
const GROUPS = new Set(["session", "checkpoint", "lessons", "ledger", "hooks", "artifact", "lock", "target", "flows", "run", "turn"]);

/** Options that make a reading command write (`--out` a file, `--write` STATE.md, `--fix`, `--unpause`). */
const WRITING_LONG = new Set(["--out", "--write", "--fix", "--unpause", "--reason", "--force"]);
/** Short options that write: `-o <file>`, `-w`. Combined short flags (`-wa`) are looked into. */
const WRITING_SHORT = /^-[A-Za-z]*[ow]/;

/** Options that act beyond the caller's own lane, and the event types only hooks write. */
const LANE_OPTIONS = new Set(["--unpause", "--all-lanes", "--lane"]);
const HOOK_EVENTS = new Set(["spiral:cleared", "lane:ended", "claim:noticed"]);

/** The published package (`npx agent-baton …`). `npx baton` runs another package of that name. */
const PACKAGE = /^agent-baton(?:@[\w.^~<>=*-]+)?$/;
/** npx's own flags that change nothing about what runs. */
const NPX_FLAGS = new Set(["-y", "--yes", "--no", "--no-install", "--prefer-offline", "--offline", "-q", "--quiet"]);

/**
 * The program forms that run Baton: `baton`, `/path/to/baton`, `node …/baton.cjs`, `npx
 * agent-baton`, `npx -p agent-baton baton` (npx's harmless flags allowed).
 */
function programArgs(argv: string[]): string[] | undefined {
  const isBaton = (t: string | undefined) => t !== undefined && /(?:^|\/)baton(?:\.c?js)?$/.test(t);
  if (isBaton(argv[0])) return argv.slice(1);
  if (argv[0] === "node" && isBaton(argv[1])) return argv.slice(2);
  if (argv[0] !== "npx") return undefined;
  let i = 1;
  let pkg = false;
  for (; i < argv.length; i++) {
    const a = argv[i] as string;
    if (NPX_FLAGS.has(a)) continue;
    if ((a === "-p" || a === "--package") && PACKAGE.test(argv[i + 1] ?? "")) {
      pkg = true;
      i++;
      continue;
    }
    if (a.startsWith("--package=") && PACKAGE.test(a.slice("--package=".length))) {
      pkg = true;
      continue;
    }
    break;
  }
  const program = argv[i];
  if (program === undefined) return undefined;
  if (PACKAGE.test(program) || (pkg && program === "baton")) return argv.slice(i + 1);
  return undefined;
}

/**
 * The Baton invocation a shell command is, or undefined when it is anything else (including a
 * Baton invocation combined with anything else).
 */
export function batonInvocation(command: string | undefined): BatonInvocation | undefined {
  if (command === undefined || UNPARSED.test(command)) return undefined;
  let tokens: ReturnType<typeof parse>;
  try {
    // Variables are refused above; the callback keeps shell-quote from reading process.env.
    tokens = parse(command.trim(), () => undefined);
  } catch {
    return undefined;
  }
  const argv: string[] = [];
  for (const t of tokens) {
    if (typeof t !== "string") return undefined; // an operator, a glob or a comment
    argv.push(t);
  }
  return invocationOf(argv);
}

/** What a plain command line (program and arguments) is, as Baton: undefined when it is not Baton. */
function invocationOf(argv: string[]): BatonInvocation | undefined {
  const args = programArgs(argv);
  if (args === undefined) return undefined;
  const positional = args.filter((a, i) => !a.startsWith("-") && !takesValue(args[i - 1]));
  const [cmd, sub] = positional;
  const name = cmd !== undefined && GROUPS.has(cmd) && sub !== undefined ? `${cmd} ${sub}` : (cmd ?? "help");
  const writes = args.some((a) => WRITING_LONG.has(a.split("=")[0] as string) || (!a.startsWith("--") && WRITING_SHORT.test(a)));
  const dryRun = name === "rollback" && args.includes("--dry-run");
  return {
    args,
    readOnly: (READ_ONLY.has(name) || dryRun || args.includes("--help") || args.includes("--version")) && !writes,
    changesSupervision:
      name === "hooks install" ||
      name === "hooks uninstall" ||
      cmd === "trust" ||
      // A server on another port or with a new token: Claude Code's HTTP hooks (which name both) go unanswered.
      (cmd === "serve" && args.some((a) => /^--(?:rotate-token|port)(?:=|$)/.test(a))),
    overridesLanes: args.some((a) => LANE_OPTIONS.has(a.split("=")[0] as string) || HOOK_EVENTS.has(a)),
  };
}

const SHELL_PROGRAMS = /^(?:sh|bash|dash|zsh|ksh|mksh|ash|fish)$/;
/** Programs that run the command after them (their own options skipped). */
const WRAPPERS = new Set(["sudo", "env", "command", "exec", "nohup", "time", "nice", "xargs", "timeout"]);

/**
 * Whether any Baton invocation inside a shell command, however combined (`true; baton trust`,
 * `cd x && baton hooks uninstall claude`, `sh -c "…"`, `$(…)`, an `env VAR=x` or `sudo` before
 * it), would switch supervision off or act over other agents' lanes. batonInvocation answers
 * for a command that is one plain Baton invocation; this looks into every simple command of it.
 * A guard against an agent that follows instructions, not a sandbox.
 */
export function batonInside(command: string | undefined, depth = 0): { changesSupervision: boolean; overridesLanes: boolean } {
  const none = { changesSupervision: false, overridesLanes: false };
  if (command === undefined || depth > 3) return none;
  let tokens: ReturnType<typeof parse>;
  try {
    // Substitutions and new lines start commands of their own: read them as separators.
    tokens = parse(command.replace(/[`$\r\n\0]/g, " ; "), () => undefined);
  } catch {
    return none;
  }
  const out = { ...none };
  let sawBaton = false;
  let argv: string[] = [];
  const flush = () => {
    let i = 0;
    while (i < argv.length && (/^\w+=/.test(argv[i] as string) || WRAPPERS.has((argv[i] as string).split("/").pop() as string))) {
      const wrapper = (argv[i] as string).split("/").pop();
      i++;
      // A wrapper's options, and the value of those that take one (`env -u VAR`, `sudo -u user`).
      while (i < argv.length && (argv[i] as string).startsWith("-")) i += WRAPPER_VALUE_OPTIONS.has(argv[i] as string) ? 2 : 1;
      if (wrapper === "timeout" && /^\d+(?:\.\d+)?[smhd]?$/.test(argv[i] ?? "")) i++; // its duration
    }
    const words = argv.slice(i);
    argv = [];
    const program = words[0]?.split("/").pop();
    if (program !== undefined && SHELL_PROGRAMS.test(program)) {
      const c = words.findIndex((w, k) => k > 0 && /^-[A-Za-z]*c[A-Za-z]*$/.test(w));
      if (c >= 0) {
        const inner = batonInside(words[c + 1], depth + 1);
        out.changesSupervision ||= inner.changesSupervision;
        out.overridesLanes ||= inner.overridesLanes;
      }
      return;
    }
    const inv = invocationOf(words);
    if (!inv) return;
    sawBaton = true;
    out.changesSupervision ||= inv.changesSupervision;
    out.overridesLanes ||= inv.overridesLanes;
  };
  for (const t of tokens) {
    if (typeof t === "string") argv.push(t);
    else if ("pattern" in t) argv.push(String(t.pattern));
    else flush();
  }
  flush();
  // A Baton command beside a lane's variable (set, unset, `env -u`) acts as another lane, or as
  // none (the whole session): as --all-lanes or --lane would, which is the user's to run.
  if (sawBaton && LANE_VARIABLES.test(command)) out.overridesLanes = true;
  return out;
}

/** Options of env, sudo, nice, timeout … whose value is the next word. */
const WRAPPER_VALUE_OPTIONS = new Set([
  ...["-u", "--unset", "-C", "--chdir", "-g", "--group", "--user", "-n", "--adjustment"],
  ...["-s", "--signal", "-k", "--kill-after", "-I", "-L", "-P"],
]);

/** The variables an agent's lane is read from (core/lanes.ts, laneFromEnv). */
const LANE_VARIABLES =
  /\b(?:CLAUDE_CODE_SESSION_ID|CODEX_THREAD_ID|QWEN_CODE_SESSION_ID|COPILOT_AGENT_SESSION_ID|BATON_OPENCODE_SESSION_ID)\b/;

/** Options followed by a value, so the value is not read as a command name. */
function takesValue(prev: string | undefined): boolean {
  return prev === "--root" || prev === "--session" || prev === "-s" || prev === "--lane";
}

/**
 * A prompt that is only "unpause" (or "/unpause"), after any context block an agent put in
 * front of the user's words: the user's way to clear a pause from the agent's own prompt.
 */
export function isUnpausePrompt(prompt: string): boolean {
  const words = userWords(prompt);
  return /^\/?unpause[.!]?$/i.test(words);
}

/**
 * The shell command removes or disables Baton's plugin or extension with the agent's own CLI
 * (`claude plugin uninstall|remove|disable baton…` or `--all`, `claude plugin marketplace remove
 * agent-baton`, the same words with `copilot`, `gemini extensions uninstall|disable baton`): like `baton hooks uninstall`,
 * switching supervision off, which is the user's decision. Looked for anywhere in the command
 * (after `&&`, in quotes for `sh -c`, with options between the words, quoted or escaped letters),
 * since it is never Baton's own command that lets it through. A guard against an agent that
 * follows instructions, not a sandbox: a determined shell command can always hide a word.
 */
export function removesBatonPlugin(command: string | undefined): boolean {
  if (command === undefined) return false;
  const words = command
    .replace(/["'`\\]/g, "")
    .split(/[\s;&|()]+/)
    .filter((w) => w !== "");
  for (let i = 0; i < words.length; i++) {
    const name = (words[i] as string).split("/").pop();
    const agent =
      name === "claude" || name === "claude-code"
        ? "claude"
        : name === "gemini" || name === "gemini-cli"
          ? "gemini"
          : name === "copilot"
            ? "copilot"
            : undefined;
    if (!agent) continue;
    const plugins = agent !== "gemini";
    const rest = words.slice(i + 1, i + 14);
    const g = rest.findIndex((w) => (plugins ? /^plugins?$/ : /^extensions?$/).test(w));
    if (g < 0) continue;
    const after = rest.slice(g + 1).filter((w) => !w.startsWith("-") || w === "--all" || w === "-a");
    const [verb, ...args] = after;
    if (plugins && verb === "marketplace" && /^(?:remove|rm)$/.test(args[0] ?? "") && args.includes("agent-baton")) return true;
    if (!/^(?:uninstall|remove|rm|disable)$/.test(verb ?? "")) continue;
    if (args.some((w) => /^baton(?:@|$)/.test(w) || w === "--all" || w === "-a")) return true;
  }
  return false;
}

/** Files that decide whether and how an agent is supervised, wherever they are (POSIX paths). */
const SUPERVISION_FILES: readonly RegExp[] = [
  /(?:^|\/)\.claude\/settings(?:\.local)?\.json$/,
  /(?:^|\/)\.claude\/plugins\//,
  /(?:^|\/)\.codex\/(?:hooks\.json|config\.toml)$/,
  // Codex's user hooks run Baton through this launcher (hooks/agent-setup.ts codexShimText).
  /(?:^|\/)\.codex\/baton\//,
  /(?:^|\/)\.gemini\/(?:settings\.json|trustedFolders\.json|trusted_hooks\.json)$/,
  /(?:^|\/)\.gemini\/extensions\//,
  /(?:^|\/)\.qwen\/(?:settings\.json|trustedFolders\.json)$/,
  /(?:^|\/)\.github\/hooks\/[^/]+\.json$/,
  /(?:^|\/)\.github\/copilot\/settings(?:\.local)?\.json$/,
  /(?:^|\/)\.copilot\/(?:config\.json|settings\.json|hooks\/|installed-plugins\/)/,
  // OpenCode loads every module in its plugin folders: the project's and the user's.
  /(?:^|\/)\.?opencode\/plugins?\//,
  // Cline CLI's hook files: the project's, the user's ($CLINE_DIR), and its Documents folder.
  /(?:^|\/)\.clinerules\/hooks(?:\/|$)/,
  /(?:^|\/)\.cline\/hooks(?:\/|$)/,
  /(?:^|\/)Documents\/Cline\/Hooks(?:\/|$)/,
  // Cline CLI's plugins (`cline plugin install`: the project's, the user's and its Documents
  // folder's): modules it loads into its own process, with hooks before and after every tool.
  // (The agent plugins it loads from ~/.agents/plugins are the home's only: moved-config.ts.)
  /(?:^|\/)\.cline\/plugins(?:\/|$)/,
  /(?:^|\/)Documents\/Cline\/Plugins(?:\/|$)/,
  // An installed Baton: its plugins' hooks and launchers load live from there (a local marketplace, a linked extension).
  /(?:^|\/)node_modules\/agent-baton\//,
  /(?:^|\/)\.baton\/(?!flows\/)/,
  /(?:^|\/)baton\/trust\//,
];

/**
 * A file a write tool may not change: an agent's hook settings, plugins or trust records, or
 * Baton's own settings and store (`.baton/`, but for the flows a team commits there; the user's
 * trust records). Writing one is switching supervision off by other means, which is the user's
 * decision. Write tools name their files, so this is exact where the shell guard is not.
 */
export function isSupervisionFile(path: string): boolean {
  const p = path.replace(/\\/g, "/");
  return SUPERVISION_FILES_ANY_CASE.some((re) => re.test(p));
}

/** The same paths in any case: on a case-insensitive file system (macOS, Windows) `.ClineRules/` is `.clinerules/`. */
const SUPERVISION_FILES_ANY_CASE: readonly RegExp[] = SUPERVISION_FILES.map((re) => new RegExp(re.source, "i"));

/**
 * Where `baton hooks install` writes for each agent, and what runs Baton in the hooks there.
 *
 * | agent       | project (default)                     | `--shared`              | `--user`                       |
 * | ----------- | ------------------------------------- | ----------------------- | ------------------------------ |
 * | Claude Code | `.claude/settings.local.json` (local) | `.claude/settings.json` | `~/.claude/settings.json`      |
 * | Codex       | `.codex/hooks.json` (shared)          | the same                | `$CODEX_HOME/hooks.json`       |
 * | Gemini CLI  | `.gemini/settings.json` (shared)      | the same                | `~/.gemini/settings.json`      |
 * | Qwen Code   | `.qwen/settings.json` (shared)        | the same                | `$QWEN_HOME/settings.json`     |
 * | Copilot CLI | `.github/hooks/baton.json` (shared)   | the same                | `$COPILOT_HOME/hooks/baton.json` |
 * | OpenCode    | `.opencode/plugins/baton.js` (shared) | the same                | `$XDG_CONFIG_HOME/opencode/plugins/baton.js` |
 * | Cline CLI   | `.clinerules/hooks/<Type>.sh` (shared) | the same               | `$CLINE_DIR/hooks/<Type>.sh`   |
 *
 * A file of this machine (Claude Code's local file, which Claude Code's convention keeps out of
 * git, and each user file) runs this Node and this baton by absolute path: no PATH lookup, and
 * it works however Baton was installed. A file a team commits names no path of this machine, or a
 * teammate's checkout and CI would run a program that is not there: its hooks run `baton` from
 * PATH, so they work on every machine where Baton is installed. Codex, Gemini CLI and Qwen Code
 * read a project's hooks from one file only, the committed one, so a project install for them is
 * always shared; Copilot CLI reads every `.json` in `.github/hooks/`, and the file `baton.json`
 * there is Baton's own. Where Baton is missing, each agent reports the hook as failed (exit 127)
 * and goes on: none of them blocks on an exit code other than 2, except Copilot CLI, which denies
 * a tool call whose preToolUse hook fails; its committed hooks run Baton only where it is on PATH
 * (COPILOT_PATH_GUARD).
 */
import { spawnSync } from "node:child_process";
import { accessSync, closeSync, constants, existsSync, openSync, readSync, realpathSync, statSync } from "node:fs";
import { basename, delimiter, dirname, isAbsolute, join, posix, relative, resolve, sep } from "node:path";
import { type HookAgent, type InstalledHook, launcherNodeEntry, NODE_WORD } from "../core/hooks/config.js";
import { COPILOT_PATH_GUARD } from "../core/hooks/copilot.js";
import { userHome } from "../platform/home.js";
import { realOr } from "../platform/moved-config.js";
import { type Readiness, shellWords } from "./agent-setup.js";
import { claudeConfigDir } from "./claude-setup.js";
import { copilotHome, gitTop } from "./copilot-setup.js";
import { opencodePluginFile } from "./opencode-setup.js";
import { qwenHome } from "./qwen-setup.js";
import { settingsObjectAt } from "./settings-object.js";

export type HookScope = "project" | "user";

export interface HookPlaceOptions {
  scope: HookScope;
  /** Claude Code, project scope: the team's `.claude/settings.json` instead of the local file. */
  shared?: boolean;
  /** Project root (for a project install). */
  root: string;
  /** Home directory (for --user). Default: the user's. */
  home?: string;
  env?: NodeJS.ProcessEnv;
}

export const AGENT_NAMES: Readonly<Record<HookAgent, string>> = {
  claude: "Claude Code",
  codex: "Codex",
  gemini: "Gemini CLI",
  qwen: "Qwen Code",
  copilot: "Copilot CLI",
  opencode: "OpenCode",
  cline: "Cline CLI",
};

/** Cline CLI's user directory: `$CLINE_DIR`, else `~/.cline`. */
export function clineDir(o: { home?: string; env?: NodeJS.ProcessEnv; root: string }): string {
  const dir = (o.env ?? process.env).CLINE_DIR?.trim();
  if (dir) return isAbsolute(dir) ? dir : resolve(o.root, dir);
  return join(o.home ?? userHome(), ".cline");
}

/** Cline CLI's hooks directory for this place (a script per hook type: cline-setup.ts). */
export function clineHooksDir(o: HookPlaceOptions): string {
  return o.scope === "user" ? join(clineDir(o), "hooks") : join(o.root, ".clinerules", "hooks");
}

/** Whether the file is one a team commits (its hooks must not name this machine's paths). */
export function isShared(agent: HookAgent, o: HookPlaceOptions): boolean {
  return o.scope === "project" && (agent !== "claude" || o.shared === true);
}

export function hookConfigFile(agent: HookAgent, o: HookPlaceOptions): string {
  const home = o.home ?? userHome();
  const env = o.env ?? process.env;
  if (agent === "claude") {
    if (o.scope === "user") return join(claudeConfigDir(o), "settings.json");
    return join(o.root, ".claude", o.shared ? "settings.json" : "settings.local.json");
  }
  if (agent === "codex")
    return o.scope === "user" ? join(env.CODEX_HOME || join(home, ".codex"), "hooks.json") : join(o.root, ".codex", "hooks.json");
  if (agent === "qwen") return o.scope === "user" ? join(qwenHome(o), "settings.json") : join(o.root, ".qwen", "settings.json");
  if (agent === "copilot")
    return o.scope === "user" ? join(copilotHome(o), "hooks", "baton.json") : join(o.root, ".github", "hooks", "baton.json");
  if (agent === "opencode") return opencodePluginFile(o);
  // Cline CLI: a directory of hook files (cline-setup.ts).
  if (agent === "cline") return clineHooksDir(o);
  return o.scope === "user" ? join(home, ".gemini", "settings.json") : join(o.root, ".gemini", "settings.json");
}

/** The command that installs into this place again. */
export function installCommand(agent: HookAgent, o: HookPlaceOptions, verb: "install" | "uninstall" = "install"): string {
  const flag = o.scope === "user" ? " --user" : agent === "claude" && o.shared ? " --shared" : "";
  return `baton hooks ${verb} ${agent}${flag}`;
}

/** What the install's file is and how its hooks find Baton, for the install's output. */
export function placeNote(agent: HookAgent, o: HookPlaceOptions): string {
  const name = AGENT_NAMES[agent];
  if (o.scope === "user")
    return `Your user settings (every project on this machine): the hooks run this Node and this baton by absolute path.`;
  if (!isShared(agent, o))
    return `This machine's settings (Claude Code's local file, which is not committed): the hooks run this Node and this baton by absolute path. For hooks your team commits: ${installCommand(agent, { ...o, shared: true })}.`;
  const trust =
    agent === "codex"
      ? " Codex runs them for a teammate once they trust them: `baton hooks install codex` there records it (the file stays as it is)."
      : agent === "gemini"
        ? " Gemini CLI shows a teammate the new project hooks once; `baton hooks install gemini` there acknowledges them (the file stays as it is)."
        : "";
  if (agent === "opencode")
    return "A plugin your team commits: it runs `baton` from PATH, so it works on every machine where Baton is installed; where it is not, it does nothing and OpenCode carries on.";
  if (agent === "cline")
    return "Files your team commits (.clinerules/hooks/<Type>.sh): the hooks run `baton` from PATH, so they work on every machine where Baton is installed; where it is not, they do nothing.";
  if (agent === "copilot")
    return "A file your team commits: the hooks run `baton` from PATH, so they work on every machine where Baton is installed; where it is not, they do nothing, because Copilot CLI denies a tool call whose preToolUse hook fails.";
  return `A file your team commits: the hooks run \`baton\` from PATH, so they work on every machine where Baton is installed; where it is not, ${name} reports each hook as failed and carries on.${trust}`;
}

/** The words of a Baton hook command before `hook <agent> <event>` (its launcher), when Baton wrote it. */
export function launcherWords(command: string): string[] | undefined {
  const words = shellWords(
    command.startsWith(COPILOT_PATH_GUARD) ? command.slice(COPILOT_PATH_GUARD.length) : command.replace(/^exec /, ""),
  );
  const at = words?.lastIndexOf("hook") ?? -1;
  return at > 0 ? words?.slice(0, at) : undefined;
}

/** The words after the launcher: `hook <agent> <event>` and nothing else, when Baton wrote them. */
export function hookWords(command: string): string[] | undefined {
  const words = shellWords(
    command.startsWith(COPILOT_PATH_GUARD) ? command.slice(COPILOT_PATH_GUARD.length) : command.replace(/^exec /, ""),
  );
  const at = words?.lastIndexOf("hook") ?? -1;
  return at > 0 ? words?.slice(at) : undefined;
}

/** Whether `file` (a path resolved through its links) is a file of an installed `agent-baton` package, outside `root`. */
function batonPackageFile(file: string, root: string | undefined): boolean {
  // The repository's, there or not, or another process's view (/proc): whatever the repository put there.
  if (insideRoot(file, root)) return false;
  let real: string;
  try {
    real = realpathSync(file);
  } catch {
    return true; // gone: the status's "stale" says so
  }
  let dir = dirname(real);
  for (let i = 0; i < 4; i++) {
    const pkg = settingsObjectAt(join(dir, "package.json"));
    if (pkg) return pkg.name === "agent-baton";
    dir = dirname(dir);
  }
  return false;
}

/**
 * An absolute path as written is the path that runs: no `.`, `..` or `//` (a check that cleans
 * them up as text reads `/dev/fd/../cwd/x` as `/dev/cwd/x`, where the kernel reads the hook's own
 * working directory), and not another process's view (/proc, /dev/fd, /dev/std*).
 */
function plainPath(w: string): boolean {
  return isAbsolute(w) && posix.normalize(w) === w && !w.endsWith("/") && !/^\/(?:proc|dev\/fd|dev\/std\w*)(?:\/|$)/.test(w);
}

/**
 * Whether `entry` runs as a program that the shell reads first (bin/baton.cjs): executable, its
 * first line `#!/bin/sh`. A baton that does not (Windows, an install without the execute bit)
 * is named after its Node instead.
 */
export function shellProgram(entry: string): boolean {
  try {
    accessSync(entry, constants.X_OK);
    const fd = openSync(entry, "r");
    try {
      const head = Buffer.alloc(10);
      return readSync(fd, head, 0, 10, 0) === 10 && head.toString("latin1") === "#!/bin/sh\n";
    } finally {
      closeSync(fd);
    }
  } catch {
    return false;
  }
}

/** Whether `file` (through its links) is `root` or inside it, or another process's view (/proc/<pid>/cwd/…). */
export function insideRoot(file: string, root: string | undefined): boolean {
  if (file.startsWith("/proc/")) return true;
  const real = realOr(file);
  if (real.startsWith("/proc/")) return true;
  if (root === undefined) return false;
  const r = realRoot(root);
  return real === r || real.startsWith(r.endsWith(sep) ? r : `${r}${sep}`);
}

function realRoot(root: string): string {
  try {
    return realpathSync(root);
  } catch {
    return resolve(root);
  }
}

/**
 * Why a hook's launcher (the words before `hook <agent>`) is not a baton, or undefined when it is
 * one of the forms Baton writes or `--command` is meant for: `baton` (from PATH); `npx [-y]
 * agent-baton`; a Node (`node`, or a path to one; after it, Node options that change nothing of
 * what runs: NODE_OPTIONS) and a file of an
 * installed agent-baton package by absolute path; one absolute path that is Codex's launcher
 * script (`codexShim`) or an installed baton. Entries are recognised as Baton's by their `baton
 * hook <agent>` words, but what runs is decided by what comes before: `true baton hook …` runs
 * nothing, and a settings file a repository committed can say so. A file inside the project
 * (`root`) is the repository's, not an installed Baton.
 */
export function launcherProblem(words: readonly string[], o: { root?: string; codexShim?: string } = {}): string | undefined {
  // A Node by path is a Node outside the project: `<repo>/tools/node` is whatever the repository put there.
  const nodePath = (w: string) => plainPath(w) && /^node(?:js)?[\d.]*$/.test(basename(w)) && !insideRoot(w, o.root);
  const node = (w: string | undefined) => w !== undefined && (/^node(?:js)?$/.test(w) || nodePath(w));
  const entry = (w: string | undefined) =>
    w !== undefined &&
    plainPath(w) &&
    /^(?:agent-)?baton(?:\.c?js)?$|^cli(?:-full)?\.c?js$/.test(basename(w)) &&
    batonPackageFile(w, o.root);
  const [first, ...rest] = words;
  if (words.length === 1 && first === "baton") return undefined;
  if (
    first === "npx" &&
    rest.at(-1) !== undefined &&
    /^agent-baton(?:@[\w.^~-]+)?$/.test(rest.at(-1) as string) &&
    rest.slice(0, -1).every((w) => /^(?:-y|--yes|-q|--quiet)$/.test(w))
  )
    return undefined;
  if (words.length >= 2 && node(first) && entry(words.at(-1)) && words.slice(1, -1).every((w) => NODE_OPTIONS.test(w))) return undefined;
  // The entry as a program (bin/baton.cjs, a shell script) and the Node it hands to.
  const named = launcherNodeEntry(words);
  if (
    named !== undefined &&
    words.length === 2 &&
    words[1]?.startsWith(NODE_WORD) &&
    nodePath(named.node) &&
    /^baton(?:\.cjs)?$/.test(basename(named.entry)) &&
    entry(named.entry) &&
    (shellProgram(named.entry) || !existsSync(named.entry)) // gone: status calls it stale
  )
    return undefined;
  if (words.length === 1 && first !== undefined && plainPath(first)) {
    if (o.codexShim !== undefined && resolve(first) === resolve(o.codexShim)) return undefined;
    if (basename(first) === "baton" && batonPackageFile(first, o.root)) return undefined;
  }
  return `\`${words.join(" ")}\`, which is not a baton (Baton's hooks run \`baton\`, \`npx agent-baton\`, a Node and an installed baton by path outside the project (in either order, the Node as \`--node=<path>\` after the baton), or Codex's launcher script)`;
}

/**
 * The Node options a launcher may give before the baton entry: ones that change nothing of what
 * runs. Any other (`--eval`, `--require`, `--import`, `--check`, `--inspect`, `--env-file`, …)
 * would run other code, run nothing, or open a debugger, so a settings file a repository
 * committed could switch Baton off behind entries status would count as Baton's.
 */
const NODE_OPTIONS =
  /^(?:--max-old-space-size=\d+|--max-semi-space-size=\d+|--no-warnings|--no-deprecation|--enable-source-maps|--disable-warning=[\w-]+|--use-openssl-ca|--use-bundled-ca)$/;

/** The absolute paths the launchers of `commands` name: a path of one machine. */
export function machinePaths(commands: readonly string[]): string[] {
  const paths = commands.flatMap((c) =>
    (launcherWords(c) ?? []).map((w) => (w.startsWith(`${NODE_WORD}/`) ? w.slice(NODE_WORD.length) : w)),
  );
  return [...new Set(paths.filter((w) => w.startsWith("/")))];
}

function executable(file: string): boolean {
  try {
    const st = statSync(file);
    return st.isFile() && (st.mode & 0o111) !== 0;
  } catch {
    return false;
  }
}

/** The program a launcher runs from PATH (`baton`, `npx`), when PATH here has none of that name. */
export function missingFromPath(commands: readonly string[], env: NodeJS.ProcessEnv = process.env): string | undefined {
  const dirs = (env.PATH ?? "").split(delimiter).filter((d) => d !== "");
  for (const c of commands) {
    const program = launcherWords(c)?.[0];
    if (program === undefined || program.includes("/")) continue;
    if (!dirs.some((d) => executable(join(d, program)))) return program;
  }
  return undefined;
}

/**
 * Whether git would commit `file` (inside the project at `root`): true when it is tracked or not
 * ignored, false when ignored, undefined when there is no git repository (or no git). Run with
 * the repository's fsmonitor off: a cloned repository's config must not start a program.
 */
export function gitWouldCommit(root: string, file: string): boolean | undefined {
  const rel = relative(root, file).split(sep).join("/");
  try {
    const r = spawnSync("git", ["-c", "core.fsmonitor=false", "-C", root, "check-ignore", "-q", "--", rel], {
      stdio: "ignore",
      timeout: 5_000,
    });
    return r.status === 0 ? false : r.status === 1 ? true : undefined;
  } catch {
    return undefined;
  }
}
/** What is wrong with where the hooks are for this place: this machine's paths in a shared file, a local file git would commit. */
export function placeProblems(agent: HookAgent, o: HookPlaceOptions, file: string, hooks: readonly InstalledHook[]): string[] {
  const out: string[] = [];
  const paths = machinePaths(hooks.map((h) => h.command));
  if (isShared(agent, o) && paths.length > 0)
    out.push(
      `${file} is committed with the project, but its Baton hooks run ${paths.join(", ")}, a path of this machine: a teammate's checkout or CI cannot run them. \`${installCommand(agent, o)}\` writes \`baton\` from PATH instead.`,
    );
  if (o.scope === "project" && !isShared(agent, o) && gitWouldCommit(o.root, file))
    out.push(
      `git would commit ${relative(o.root, file)} (it is tracked, or not ignored) with this machine's paths: add it to .gitignore, as Claude Code's convention does.`,
    );
  // OpenCode looks for .opencode/ from the folder it starts in up to the repository's root, never below.
  const top = agent === "opencode" && o.scope === "project" ? gitTop(o.root) : undefined;
  if (top !== undefined && realOr(top) !== realOr(o.root))
    out.push(
      `OpenCode loads .opencode/ from the folder it starts in and the folders above it up to the repository's root: started in ${o.root} or a folder below it, it loads this plugin; started in ${top} (or another folder above ${o.root}), it does not.`,
    );
  return out;
}

/** The hooks run a program from PATH that is not there: the agent fails each one (exit 127). */
export function pathReadiness(r: Readiness, agent: HookAgent, o: HookPlaceOptions, hooks: readonly InstalledHook[]): Readiness {
  const program = missingFromPath(
    hooks.map((h) => h.command),
    o.env,
  );
  if (program === undefined) return r;
  const alt =
    agent === "claude" && o.scope === "project"
      ? `, or install without --shared (Claude Code's local file, this machine's paths)`
      : o.scope === "project"
        ? `, or install with --user (your user settings, this machine's paths)`
        : "";
  const effect = agent === "copilot" || agent === "cline" ? "skip each one (Baton sees nothing)" : "fail each one";
  return {
    ...r,
    willRun: false,
    remaining: [
      `\`${program}\` is not on PATH here, and the hooks run it from PATH: ${AGENT_NAMES[agent]} would ${effect}. Install Baton so it is on PATH (\`npm install --global agent-baton\`)${alt}.`,
      ...r.remaining,
    ],
  };
}

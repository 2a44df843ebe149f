/**
 * Where an agent's configuration (its hook settings, trust records, plugins) lives when an
 * environment variable moves it, and a path with its links resolved. Path arithmetic and
 * realpath only: the hook's front process (hooks/server-first.ts) uses it on every write hook,
 * and the write-tool guard (plugin-files.ts) with the rest of its rules.
 */
import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";

/** The names a hook or a plugin's launcher runs Baton by (`baton`, and Windows' forms). */
export const batonProgramName = /^baton(?:\.cmd|\.exe)?$/i;

/**
 * The variables that move an agent's configuration (and so its hook settings) elsewhere, and
 * HOME, for what an agent loads from the home folder alone (a repository's own folder of the
 * same name is an ordinary one: Codex's `.agents/plugins/marketplace.json`, for one).
 */
const MOVED_CONFIG_VARS = [
  "HOME",
  "COPILOT_HOME",
  "CLAUDE_CONFIG_DIR",
  "CODEX_HOME",
  "QWEN_HOME",
  "QWEN_CODE_TRUSTED_FOLDERS_PATH",
  "GEMINI_CLI_TRUSTED_FOLDERS_PATH",
  "CLINE_DIR",
  "OPENCODE_CONFIG",
] as const;

/**
 * Each variable's supervision files, relative to the folder it names (`^$`: the variable names
 * the file itself), in any case: on a case-insensitive file system (macOS) `.Agents/Plugins` is
 * `.agents/plugins`.
 */
const MOVED_FILES: Record<(typeof MOVED_CONFIG_VARS)[number], RegExp> = {
  // Cline CLI's agent plugins (a plugin.json and its extensions, loaded into its process).
  HOME: /^\.agents\/plugins(?:\/.*)?$/i,
  COPILOT_HOME: /^(?:config\.json|settings\.json|(?:hooks|installed-plugins)\/.*)$/i,
  CLAUDE_CONFIG_DIR: /^(?:settings(?:\.local)?\.json|plugins\/.*)$/i,
  CODEX_HOME: /^(?:hooks\.json|config\.toml|baton\/.*)$/i,
  QWEN_HOME: /^(?:settings\.json|trustedFolders\.json)$/i,
  QWEN_CODE_TRUSTED_FOLDERS_PATH: /^$/i,
  GEMINI_CLI_TRUSTED_FOLDERS_PATH: /^$/i,
  CLINE_DIR: /^(?:hooks|plugins)(?:\/.*)?$/i,
  // OpenCode's config file for this run: its plugin list may name agent-baton.
  OPENCODE_CONFIG: /^$/i,
};

/**
 * Whether a file is a supervision file in an agent's configuration that a variable of `env`
 * moved; each folder is taken as named and with its links resolved. The folders are found once
 * for all the files judged: a write hook judges each file it writes, by its name and by where
 * its links lead, before anything else it does.
 */
export function movedAgentConfig(root: string, env: NodeJS.ProcessEnv = process.env): (file: string) => boolean {
  const places: { dir: string; folded: string; files: RegExp }[] = [];
  for (const name of MOVED_CONFIG_VARS) {
    const named = env[name];
    if (!named) continue;
    const dir = isAbsolute(named) ? named : resolve(root, named);
    for (const d of [dir, realOr(dir)])
      if (!places.some((p) => p.dir === d && p.files === MOVED_FILES[name]))
        places.push({ dir: d, folded: resolve(d).toLowerCase(), files: MOVED_FILES[name] });
  }
  return (file) => {
    const folded = resolve(file).toLowerCase();
    return places.some((p) => {
      // Only a path that starts with the folder's (in any case) can be inside it.
      if (!folded.startsWith(p.folded)) return false;
      const rel = relative(p.dir, file).split("\\").join("/");
      return !rel.startsWith("../") && rel !== ".." && !isAbsolute(rel) && p.files.test(rel);
    });
  };
}

/**
 * Cline CLI 3.0.65's options that require a value (the next argument, whatever it looks like);
 * `--thinking [level]` and `--auto-approve [bool]` take one only when it is not an option.
 */
const CLINE_VALUE_OPTIONS = new Set([
  "-c",
  "--cwd",
  "-s",
  "--system",
  "-m",
  "--model",
  "-P",
  "--provider",
  "-k",
  "--key",
  "-t",
  "--timeout",
  "--id",
  "--data-dir",
  "--hooks-dir",
  "--compaction",
  "--team-name",
  "--retries",
]);

/**
 * Cline CLI's configuration folder as its command line moves it (`cline --config <dir>`, which
 * it keeps to itself: its hooks do not see it as CLINE_DIR), relative to its working directory;
 * undefined when not given (or relative with no directory to resolve it against). Read as
 * Cline's option parser (commander) reads it: the last one counts, the value of another option
 * that takes one is that option's (`-s --config`), nothing after `--` is an option, and the
 * folder is trimmed.
 */
export function clineConfigArg(argv: readonly string[], cwd: string | undefined): string | undefined {
  let dir: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === "--") break;
    if (a === "--config" && i + 1 < argv.length) dir = argv[++i];
    else if (a.startsWith("--config=")) dir = a.slice("--config=".length);
    else if (CLINE_VALUE_OPTIONS.has(a)) i++;
  }
  dir = dir?.trim();
  if (!dir) return undefined;
  if (isAbsolute(dir)) return dir;
  return cwd !== undefined && isAbsolute(cwd) ? resolve(cwd, dir) : undefined;
}

/**
 * Claude Code's configuration folder as a hook's `transcript_path` names it
 * (`<folder>/projects/<project>/…/<session>.jsonl`): where CLAUDE_CONFIG_DIR moved it, known also
 * where that variable is not set, as in the workspace's server answering Claude Code's HTTP hooks.
 */
export function claudeConfigDirOf(transcriptPath: string | undefined): string | undefined {
  if (transcriptPath === undefined || !isAbsolute(transcriptPath)) return undefined;
  return /^(.+)\/projects\/[^/]+\/.+\.jsonl$/.exec(transcriptPath.split("\\").join("/"))?.[1];
}

/**
 * `p` with its links resolved, whether or not what they lead to exists yet: a dangling link is
 * followed to its target, and a path that does not exist is its nearest existing folder's
 * resolved path with the rest appended.
 */
export function realOr(p: string, hops = 0): string {
  const abs = resolve(p);
  try {
    return realpathSync.native(abs); // one system call: the JavaScript one lstats each component
  } catch {
    // not there (yet), or a link to something that is not
  }
  if (hops < 40) {
    try {
      if (lstatSync(abs).isSymbolicLink()) return realOr(resolve(dirname(abs), readlinkSync(abs)), hops + 1);
    } catch {
      // nothing at this name
    }
  }
  const up = dirname(abs);
  return up === abs ? abs : join(realOr(up, hops + 1), basename(abs));
}

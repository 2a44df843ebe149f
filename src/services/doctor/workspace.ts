/** Doctor's checks of the workspace around the store: its settings, the server file, the ledger, hooks, file modes. */
import { existsSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import type { JsonObject } from "../../core/types.js";
import { removeCommand, trackedBatonFiles, untrackCommand } from "../../platform/baton-tracked.js";
import { type ConfigTrust, configPath, configSection, configTrust } from "../../platform/config-file.js";
import { HOOK_LOG_DIR, HOOK_LOG_FILE, hookFailures, hookLogPath } from "../../platform/hook-log.js";
import { entryKind, looseModes, tightenAll } from "../../platform/private-files.js";
import {
  readServerFile,
  releaseServerFile,
  type ServerInfo,
  serverAlive,
  serverFilePath,
  serverIdentity,
  servesWorkspace,
} from "../../platform/server-file.js";
import { BATON_DIR } from "../../platform/workspace.js";

/** The file names a running server: alive, and where /proc proves the process, a server of this workspace. */
function serverRuns(info: ServerInfo, batonDir: string): boolean {
  return serverAlive(info) && (serverIdentity(info) !== "same" || servesWorkspace(info.pid, batonDir));
}

import { readSpiralConfig } from "../agents/spiral.js";
import { readCheckpointConfig } from "../time-travel/checkpoint-config.js";
import { type Check, type Found, SAMPLE } from "./check.js";

/** Hook failures older than this are history, not a finding. */
const HOOK_FAILURE_WINDOW_MS = 7 * 24 * 60 * 60 * 1000;

const HOOK_SERVER_MODES = ["auto", "use", "off", "0", "false", "no"];

/**
 * Every setting of `.baton/config.json` read as the code that uses it reads it, and whether the
 * file applies at all: one its user has not trusted, or that changed since, is ignored
 * (`config_untrusted`, platform/config-file.ts). A trusted file that cannot be read at all stops
 * Baton before doctor runs (`bad_input` from every command); this finds the settings only some
 * commands read (checkpoints, the spiral detector, the hooks).
 */
export const config: Check = {
  name: "config",
  reads:
    ".baton/config.json: whether you trusted it as it is (`baton trust`), and its settings (checkpoints, spiral, hooks) as the code that uses each reads them",
  async run({ deps }) {
    const trust = configTrust(deps.batonDir);
    if (trust.state === "untrusted" || trust.state === "changed") return [untrusted(trust)];
    const problems: string[] = [];
    const attempt = (read: () => unknown) => {
      try {
        read();
      } catch (err) {
        problems.push((err as Error).message);
      }
    };
    attempt(() => readCheckpointConfig(deps.batonDir));
    attempt(() => readSpiralConfig(deps.batonDir));
    attempt(() => {
      const server = configSection(deps.batonDir, "hooks")?.server;
      if (server !== undefined && !(typeof server === "string" && HOOK_SERVER_MODES.includes(server.trim().toLowerCase())))
        throw new Error(
          `${configPath(deps.batonDir)}: hooks.server must be "auto", "use" or "off"; hooks run in their own process until it is fixed`,
        );
    });
    return problems.map((message) => ({
      code: "config_invalid",
      severity: "error" as const,
      message: `${message}; the commands and hooks that read it fail (hooks let the tool through and log it)`,
      evidence: { file: ".baton/config.json" },
      fix: `edit ${configPath(deps.batonDir)}`,
    }));
  },
};

/** A `.baton/config.json` Baton ignores: whose it may be, what it asks for, how it applies. */
function untrusted(t: ConfigTrust): Found {
  const why =
    t.state === "changed"
      ? `changed since you trusted it (${t.trustedAt})`
      : "has not been trusted by you (a repository may have shipped it)";
  const keys = t.keys.length > 0 ? `its settings (${t.keys.join(", ")}) are ignored` : "it is ignored";
  return {
    code: "config_untrusted",
    severity: "warning",
    message: `.baton/config.json ${why}: ${keys}; Baton's defaults and the environment (BATON_STORE, …) apply`,
    evidence: { file: ".baton/config.json", state: t.state, keys: t.keys },
    fix: `read ${t.file}; if its settings are yours, baton trust (else remove the file)`,
  };
}

export const server: Check = {
  name: "server",
  reads: ".baton/server.json and whether the process it names is that server (matchProcess, the rule clients use)",
  fix: {
    codes: ["server_file_invalid", "server_file_stale"],
    does: "removes the file, after checking again that no server it names runs",
    key: () => "server-file",
    subject: () => ".baton/server.json",
    async apply(_f, { deps }) {
      const file = serverFilePath(deps.batonDir);
      if (!existsSync(file)) return "already gone";
      const info = readServerFile(deps.batonDir);
      if (!info) {
        try {
          unlinkSync(file);
          return "removed";
        } catch {
          return "already gone";
        }
      }
      if (serverRuns(info, deps.batonDir)) return "left alone: the server is running again";
      releaseServerFile(deps.batonDir, info.pid);
      return "removed";
    },
  },
  async run({ deps }) {
    if (!existsSync(serverFilePath(deps.batonDir))) return [];
    const info = readServerFile(deps.batonDir);
    if (!info) {
      return [
        {
          code: "server_file_invalid",
          severity: "warning",
          message: ".baton/server.json is not a server file (half-written or foreign); the next `baton serve` replaces it",
          evidence: { file: ".baton/server.json" },
          fix: "baton serve",
        },
      ];
    }
    const evidence = { pid: info.pid, port: info.port, startedAt: info.startedAt };
    if (serverRuns(info, deps.batonDir)) {
      const running: Found = {
        code: "server_running",
        severity: "info",
        message: `the workspace's server runs as pid ${info.pid} on port ${info.port}`,
        evidence,
        fix: "",
      };
      const differ = settingsDiffer(info.settings, deps.envSettings);
      if (!differ) return [running];
      return [
        running,
        {
          code: "server_settings_differ",
          severity: "info",
          message: `the server was started with other settings from its environment (${differ.server}) than this environment's (${differ.mine}): hooks and status --json run with settings like these answer in their own process, more slowly`,
          evidence: { ...evidence, server: differ.server, mine: differ.mine },
          fix: "baton serve --stop; with hooks.server auto the agents' next session start or prompt starts one with their settings (else run `baton serve` from their environment)",
        },
      ];
    }
    const identity = serverIdentity(info);
    const why =
      identity === "reused"
        ? "now belongs to another process (it started after the server wrote the file)"
        : identity === "same"
          ? "is not a Baton server of this workspace (a file Baton did not write, or a repository's)"
          : "is not running";
    return [
      {
        code: "server_file_stale",
        severity: "warning",
        message: `.baton/server.json names pid ${info.pid}, which ${why}; clients will not use that server, and a new \`baton serve\` replaces the file`,
        evidence,
        fix: "baton serve",
      },
    ];
  },
};

export const ledger: Check = {
  name: "ledger",
  reads: "the trajectory ledger's count of failed writes and when the last one happened (never its message)",
  async run({ deps }) {
    if (!deps.ledgerHealth) return { skipped: "the trajectory ledger is not available in this build" };
    const h = await deps.ledgerHealth();
    if (h.writeFailures === 0) return [];
    // When it last failed, but never the message: it may quote what the tool call carried.
    const evidence: JsonObject = { writeFailures: h.writeFailures };
    if (h.lastAt !== null && !Number.isNaN(Date.parse(h.lastAt))) evidence.lastAt = h.lastAt;
    return [
      {
        code: "ledger_write_failures",
        severity: "warning",
        message: `the trajectory ledger reports ${h.writeFailures} write failure(s); tool calls were not affected`,
        evidence,
        fix: "",
      },
    ];
  },
};

export const hooks: Check = {
  name: "hooks",
  reads: "agent hook failures in .baton/logs/hooks.log over the last 7 days (counts, codes, times), and the agents' hook configuration",
  async run({ deps, opts }) {
    const out: Found[] = [];
    // Agent hooks fail open (the tool call goes ahead), so their failures surface here: counts,
    // codes and times from .baton/logs/hooks.log, never the messages.
    // Where failures go: anything but a folder there (a repository's link, a stray `touch`), or
    // anything but a file for the log itself, means none is recorded.
    const logs = entryKind(join(deps.batonDir, HOOK_LOG_DIR));
    const log = logs === "dir" ? entryKind(hookLogPath(deps.batonDir)) : undefined;
    const kindName = (k: string) =>
      k === "link" ? "a symbolic link" : k === "file" ? "a file" : k === "dir" ? "a folder" : "a special file";
    if (logs !== undefined && logs !== "dir") {
      out.push({
        code: "hook_log_unusable",
        severity: "warning",
        message: `.baton/${HOOK_LOG_DIR} is ${kindName(logs)}, not a folder: agent hook failures are recorded nowhere, and hooks cannot start the background server (each runs in its own process; \`baton dashboard\` refuses)`,
        evidence: { path: `.baton/${HOOK_LOG_DIR}`, kind: logs },
        fix: `remove .baton/${HOOK_LOG_DIR} (Baton makes the folder again, private to you)`,
      });
    } else if (log !== undefined && log !== "file") {
      out.push({
        code: "hook_log_unusable",
        severity: "warning",
        message: `.baton/${HOOK_LOG_DIR}/${HOOK_LOG_FILE} is ${kindName(log)}, not a file: agent hook failures are recorded nowhere`,
        evidence: { path: `.baton/${HOOK_LOG_DIR}/${HOOK_LOG_FILE}`, kind: log },
        fix: `remove .baton/${HOOK_LOG_DIR}/${HOOK_LOG_FILE} (Baton makes it again at the next failure)`,
      });
    }
    const since = new Date(deps.now().getTime() - HOOK_FAILURE_WINDOW_MS);
    const f = hookFailures(deps.batonDir, since);
    if (f.count > 0) {
      out.push({
        code: "hook_failures",
        severity: "warning",
        message: `agent hooks failed ${f.count} time(s) in the last 7 days; each failed call went ahead without Baton (no checkpoint, turn or ledger node)`,
        evidence: { count: f.count, firstAt: f.firstAt, lastAt: f.lastAt, codes: f.codes, agents: f.agents, log: f.file },
        fix: `tail ${f.file}`,
      });
    }
    // Installed hooks the agent will not run (Codex: untrusted or modified entries, an untrusted
    // project; Gemini CLI: an untrusted folder): the agent goes on without Baton, silently.
    const setup = deps.hookSetup ?? opts.hookSetup;
    const twice = new Set<string>();
    for (const h of setup ? await setup() : []) {
      // Both a settings file and the plugin (or extension): one finding per agent.
      if (h.twice && !twice.has(h.agent)) {
        twice.add(h.agent);
        out.push({
          code: "hooks_installed_twice",
          severity: "warning",
          message: `${h.agent} runs each of Baton's hooks twice: ${h.twice}`,
          evidence: { agent: h.agent, file: h.file },
          fix: h.twice.includes("Keep one:") ? h.twice.slice(h.twice.indexOf("Keep one:")) : h.twice,
        });
      }
      if (h.willRun) continue;
      out.push({
        code: "hooks_not_running",
        severity: "warning",
        message: `${h.agent} will not run Baton's hooks in ${h.file} (${h.scope}): ${h.remaining.join(" ")}`,
        evidence: { agent: h.agent, scope: h.scope, file: h.file },
        fix:
          h.remaining[0] ??
          (h.route ? `reinstall Baton's ${h.route}` : `baton hooks install ${h.agent}${h.scope === "user" ? " --user" : ""}`),
      });
    }
    return out;
  },
};

/**
 * Accurate about the exposure: while `.baton/` itself is private, other users cannot reach
 * anything inside it, whatever the inner modes; the inner modes matter once `.baton/` is
 * opened up (a chmod, a copy, an archive that keeps modes).
 */
function looseMessage(loose: readonly { path: string }[]): string {
  const n = `${loose.length} entr${loose.length === 1 ? "y" : "ies"} under .baton/`;
  if (loose.some((e) => e.path === "."))
    return `${n} can be read by other local users: .baton/ itself is open to group or others, and it holds file contents (checkpoint blobs) and the journal`;
  return `${n} allow group or others access; .baton/ itself is 0700, so other users cannot reach them now (low exposure), but they would be readable if .baton/ were opened up or copied with its modes`;
}

export const privacy: Check = {
  name: "privacy",
  reads: "the modes of every entry under .baton/ (a walk bounded at 50,000 entries), and what of .baton/ git tracks (its index)",
  fix: {
    codes: ["loose_modes"],
    does: "tightens the loose entries (found again) to 0600/0700",
    key: () => "loose-modes",
    subject: () => ".baton/",
    async apply(_f, { deps }) {
      const { loose } = looseModes(deps.batonDir);
      return `tightened ${tightenAll(deps.batonDir, loose)} entries to 0600/0700`;
    },
  },
  async run({ deps }) {
    const out: Found[] = [];
    const tracked = trackedInternals(deps.root);
    if (tracked) out.push(tracked);
    // .baton/ holds file contents verbatim (checkpoint blobs) and the journal: only its owner may
    // read it. Opening a workspace tightens .baton/ and its top level; this finds the rest.
    if (process.platform === "win32") return out.length > 0 ? out : { skipped: "POSIX modes do not apply on Windows" };
    const { loose, visited, truncated } = looseModes(deps.batonDir);
    if (loose.length === 0) return out;
    out.push({
      code: "loose_modes",
      severity: "warning",
      message: looseMessage(loose),
      evidence: {
        count: loose.length,
        sample: loose.slice(0, SAMPLE).map((e) => ({ path: e.path, mode: e.mode, kind: e.kind })),
        visited,
        truncated,
      },
      fix: "baton doctor --fix loose_modes (or chmod -R go-rwx .baton)",
    });
    return out;
  },
};

/**
 * Files of `.baton/` other than those a project may share that git tracks: a `git add -f`, or a
 * repository that came with them. Ignore rules do not apply to tracked files, so every commit of
 * the tracked paths' changes carries this checkout's journal and checkpointed file contents.
 */
function trackedInternals(root: string): Found | undefined {
  const tracked = trackedBatonFiles(root);
  if (tracked.length === 0) return undefined;
  const shown = tracked.slice(0, SAMPLE).map((e) => e.path);
  return {
    code: "baton_tracked",
    severity: "error",
    message: `git tracks ${tracked.length} of Baton's own file(s) in ${BATON_DIR}/ (${shown.map((p) => JSON.stringify(p)).join(", ")}${tracked.length > shown.length ? ", …" : ""}): ignore rules do not apply to tracked files, so commits carry this checkout's journal and checkpointed file contents (secrets among them). They were added with \`git add -f\`, or came with the repository: then they are someone else's (a journal, a server key whose token its author knows), and once untracked Baton would take them as this checkout's own, so remove them instead of untracking them (\`${removeCommand(root, tracked)}\`; git's history keeps them)`,
    evidence: { count: tracked.length, paths: shown },
    fix: `${untrackCommand(root, tracked)} (keeps the files here; then commit the removal, and purge them from the history if it was pushed)`,
  };
}

/** server.json's settings and this process's environment's, when they differ (env-options.ts `envSettings`). */
function settingsDiffer(server: string | undefined, envSettings: (() => string) | undefined): { server: string; mine: string } | undefined {
  if (!envSettings) return undefined;
  let mine: string;
  try {
    mine = envSettings();
  } catch {
    return undefined; // a bad value: the environment check reports it
  }
  return server !== undefined && server !== mine ? { server, mine } : undefined;
}

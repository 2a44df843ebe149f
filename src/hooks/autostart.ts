/**
 * Starting the workspace's server from a hook, so the following hooks are handed to it
 * instead of each opening the workspace (docs/integrations.md, "The hook server").
 *
 * A session-start or prompt hook answered in its own process (no server answered it) starts
 * `baton serve --idle-exit 30m` in the background when the policy is `auto` (policy.ts): detached, stdin closed,
 * stdout discarded, stderr to `.baton/logs/server.log`, never waited for. At most one start per
 * 30 seconds per workspace (`.baton/hooks/server-start`, created with O_EXCL), and the server's
 * own claim on `.baton/server.json` refuses a second server, so hooks racing here leave one.
 *
 * A running server of another build (server.json's `version`) is not used by this build's
 * hooks. When it is one hooks started (it has an idle exit) and the kernel proves it is the
 * process that wrote server.json, the new server is started with `--replace <pid>`: it stops
 * that one (SIGTERM, waiting for it to let go of the workspace) before it starts. A server the
 * user started is left alone.
 */
import { closeSync, openSync, renameSync, statSync, unlinkSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { BUILD } from "../core/build.js";
import { openPrivateAppend, privateSubdir } from "../platform/private-files.js";
import { liveServer, serverIdentity, servesHere } from "../platform/server-file.js";
import type { Workspace } from "../platform/workspace.js";
import { hookServerMode } from "./policy.js";

/** A background server exits after this long without a request. */
export const AUTOSTART_IDLE_EXIT = "30m";
/** Another start is not tried within this long of the last one. */
const START_INTERVAL_MS = 30_000;
const LOG_MAX_BYTES = 256 * 1024;

/**
 * Start the workspace's server if the policy allows and none of this build runs (replacing one
 * of another build that hooks started). Returns the new process's pid, if one was started.
 * Never throws.
 */
export function maybeStartServer(ws: Workspace, launcher: string): number | undefined {
  try {
    if (hookServerMode(ws.dir) !== "auto") return undefined;
    // A server.json naming a process that is not this user's `serve` of the workspace (one a
    // repository shipped, naming pid 1) holds nothing: the new server's claim removes it, unless
    // a server answers on the port it names.
    const named = liveServer(ws.dir);
    const live = named && servesHere(named.pid, ws.dir) ? named : undefined;
    let replace: number | undefined;
    if (live) {
      if (live.version === BUILD || live.idleExitMs === undefined || serverIdentity(live) !== "same") return undefined;
      replace = live.pid;
    }
    if (!takeStartTurn(ws.dir)) return undefined;
    return spawnServer(ws, launcher, replace);
  } catch {
    return undefined; // the hook has answered already; the next one runs in-process
  }
}

/** O_EXCL on the marker; a marker older than the interval is replaced. */
function takeStartTurn(batonDir: string): boolean {
  const dir = privateSubdir(batonDir, "hooks");
  if (dir === undefined) return false; // a link (a repository's): nothing is written through it
  const marker = join(dir, "server-start");
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      closeSync(openSync(marker, "wx", 0o600));
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    try {
      if (Date.now() - statSync(marker).mtimeMs < START_INTERVAL_MS) return false;
      unlinkSync(marker);
    } catch {
      // removed meanwhile: try again
    }
  }
  return false;
}

function spawnServer(ws: Workspace, launcher: string, replace: number | undefined): number | undefined {
  const logs = privateSubdir(ws.dir, "logs");
  if (logs === undefined) return undefined;
  const log = join(logs, "server.log");
  try {
    if (statSync(log).size >= LOG_MAX_BYTES) renameSync(log, `${log}.1`);
  } catch {
    // no log yet
  }
  // Not import(): bin/baton.cjs runs the bundle in a vm.Script, where import() is unavailable.
  const { spawn } = createRequire(import.meta.url)("node:child_process") as typeof import("node:child_process");
  const fd = openPrivateAppend(log);
  try {
    const args = [launcher, "serve", "--root", ws.root, "--idle-exit", AUTOSTART_IDLE_EXIT];
    if (replace !== undefined) args.push("--replace", String(replace));
    const child = spawn(process.execPath, args, {
      cwd: ws.root,
      detached: true,
      stdio: ["ignore", "ignore", fd],
      windowsHide: true,
    });
    child.on("error", () => undefined);
    child.unref();
    return child.pid;
  } finally {
    closeSync(fd);
  }
}

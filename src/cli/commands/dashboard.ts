/**
 * `baton dashboard [--open] [--demo]`: make sure the workspace's server runs (start `baton serve`
 * in the background if none does), then print a one-time login link to its dashboard (with
 * `--demo`, to the live-variant demo page) and, with `--open`, hand it to the system's browser
 * opener.
 *
 * The link is `/dashboard#login=<code>`: a code the server gives only to a holder of its token,
 * spent on first use and expiring within minutes (server/dashboard-routes.ts). The started
 * server exits after 30 minutes without a request; every dashboard view keeps a stream open,
 * which counts as a request in flight, so it stays up while any dashboard tab is open and exits
 * 30 minutes after the last one closed.
 */
import { spawn } from "node:child_process";
import { closeSync } from "node:fs";
import { join } from "node:path";
import { BatonError } from "../../errors.js";
import { openPrivateAppend, privateSubdir } from "../../platform/private-files.js";
import { unsafePath } from "../../platform/safe-fs.js";
import { serverIdentity } from "../../platform/server-file.js";
import { resolveWorkspace } from "../../platform/workspace.js";
import { findServer, requestLoginCode } from "../../server/client.js";
import type { Ctx } from "../context.js";

const START_WAIT_MS = 15_000;
export const DASHBOARD_IDLE_EXIT = "30m";

export async function dashboard(ctx: Ctx, o: { open?: boolean; demo?: boolean }): Promise<void> {
  const ws = resolveWorkspace({ ...(ctx.root ? { root: ctx.root } : {}) });
  let info = await findServer(ws.dir);
  let started = false;
  if (!info) {
    startServer(ws.root, ws.dir);
    started = true;
    const until = Date.now() + START_WAIT_MS;
    while (!info && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 100));
      info = await findServer(ws.dir);
    }
    if (!info)
      throw new BatonError(
        "server_unreachable",
        `the server did not start within ${START_WAIT_MS / 1000} s; see ${join(ws.dir, "logs", "server.log")}, or run \`baton serve\` yourself`,
      );
  }
  const login = await requestLoginCode(info, o.demo ? "demo" : "dashboard");
  const url = `http://127.0.0.1:${info.port}${login.path}`;
  let opened = false;
  if (o.open) opened = await openInBrowser(url);
  ctx.out({ url, expiresAt: login.expiresAt, port: info.port, pid: info.pid, started, opened }, () =>
    [
      started
        ? `Started the Baton server (pid ${info.pid}, port ${info.port}).`
        : `The Baton server runs (pid ${info.pid}, port ${info.port}).`,
      `Open the ${o.demo ? "demo page" : "dashboard"} (this link logs in once and expires at ${login.expiresAt}):`,
      `  ${url}`,
      ...(o.open ? [opened ? "Opened it in your browser." : "Could not open a browser: open the link yourself."] : []),
      // Where the kernel cannot prove the pid is the server (no process start times), --stop refuses.
      serverIdentity(info) === "same" ? "`baton serve --stop` stops the server." : `Stop the server with \`kill ${info.pid}\`.`,
    ].join("\n"),
  );
}

/** `baton serve --idle-exit 30m` in the background, detached, stderr to .baton/logs/server.log. */
function startServer(root: string, batonDir: string): void {
  const logs = privateSubdir(batonDir, "logs");
  if (logs === undefined) throw unsafePath(join(batonDir, "logs"), "is a symbolic link, or not a folder Baton can write in");
  let fd: number;
  try {
    fd = openPrivateAppend(join(logs, "server.log"));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ELOOP") throw unsafePath(join(logs, "server.log"), "is a symbolic link");
    throw new BatonError("workspace_unwritable", `cannot open ${join(logs, "server.log")} (${(err as Error).message})`, {}, { cause: err });
  }
  try {
    const launcher = process.argv[1];
    if (!launcher) throw new BatonError("internal", "cannot tell how this baton was started");
    const child = spawn(process.execPath, [launcher, "serve", "--root", root, "--idle-exit", DASHBOARD_IDLE_EXIT], {
      cwd: root,
      detached: true,
      stdio: ["ignore", "ignore", fd],
      windowsHide: true,
    });
    child.on("error", () => undefined);
    child.unref();
  } finally {
    closeSync(fd);
  }
}

/**
 * The commands that may open `url`, in order. `$BROWSER` is read as other tools read it (xdg-utils,
 * Python's webbrowser, sensible-browser): a colon-separated list of commands, each split on
 * spaces, with `%s` standing for the URL (`%%` for a percent sign) or the URL appended when it
 * has no `%s`. Without it: the platform's opener.
 *
 * The URL, and so the login code, is in the opener's argv for as long as it runs, where other
 * users of this machine may see it (`ps`). They cannot use it: the server trades a code only for
 * a connection the kernel lists under its own user (platform/peer-uid.ts), from its own page's
 * Origin; and the code is spent by the page within moments, expires after 5 minutes and is good
 * once. A file handed to the browser instead would leave the code on disk.
 */
export function browserCommands(
  url: string,
  env: string | undefined = process.env.BROWSER,
  platform = process.platform,
): [string, string[]][] {
  const fromEnv = (env ?? "")
    .split(":")
    .map((c) => c.trim().split(/\s+/).filter(Boolean))
    .filter((words) => words.length > 0)
    .map((words): [string, string[]] => {
      const hasUrl = words.some((w) => /%s/.test(w.replace(/%%/g, "")));
      const args = words.slice(1).map((w) => w.replace(/%(%|s)/g, (_m, c: string) => (c === "s" ? url : "%")));
      const cmd = (words[0] as string).replace(/%(%|s)/g, (_m, c: string) => (c === "s" ? url : "%"));
      return [cmd, hasUrl ? args : [...args, url]];
    });
  if (fromEnv.length > 0) return fromEnv;
  if (platform === "darwin") return [["open", [url]]];
  if (platform === "win32") return [["cmd", ["/c", "start", "", url]]];
  return [["xdg-open", [url]]];
}

/** Open `url` with the first command that starts; false when none did. */
async function openInBrowser(url: string): Promise<boolean> {
  for (const [cmd, args] of browserCommands(url)) {
    const started = await new Promise<boolean>((resolve) => {
      try {
        const child = spawn(cmd, args, { detached: true, stdio: "ignore" });
        child.once("spawn", () => {
          child.unref();
          resolve(true);
        });
        child.once("error", () => resolve(false));
      } catch {
        resolve(false);
      }
    });
    if (started) return true;
  }
  return false;
}

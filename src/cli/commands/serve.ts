/** `baton serve`: the workspace's local server, until SIGINT or SIGTERM. */
import { readFileSync } from "node:fs";
import { constants } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { BatonError } from "../../errors.js";
import { writeStderr } from "../../platform/output.js";
import { liveServer, serverIdentity, servesWorkspace, stopServer } from "../../platform/server-file.js";
import { resolveWorkspace } from "../../platform/workspace.js";
import type { AssetName } from "../../server/app.js";
import { requestLoginCode } from "../../server/client.js";
import { checkPort, type StopReason, startServer } from "../../server/server.js";
import { DASHBOARD_HTML } from "../../web/dashboard-html.js";
import { DEMO_HTML } from "../../web/demo-html.js";
import { type Ctx, parseDurationOption, parseIntOption } from "../context.js";

const STOPPED: Record<StopReason, string> = {
  idle: "no requests within the idle exit",
  workspace_gone: "the workspace's .baton directory is gone",
  config_changed: ".baton/config.json changed",
};

export async function serve(
  ctx: Ctx,
  o: { port?: string; rotateToken?: boolean; allowOrigin?: string[]; idleExit?: string; replace?: string; stop?: boolean },
): Promise<void> {
  if (o.stop) return stop(ctx, o);
  // A stop before the server starts listening ends this process as the signal would; from then
  // on (server.json names it: a hook replacing it, `baton serve --stop`) it shuts the server
  // down in order once started, rather than ending it at once with requests in flight. Either
  // way only the first signal is this code's: a second one (an impatient Ctrl-C) ends the process.
  let named = false;
  let stopListening = () => {};
  const signalled = new Promise<string>((resolve) => {
    const on = (sig: "SIGINT" | "SIGTERM") => {
      stopListening();
      if (named) return resolve(sig);
      if (process.listenerCount(sig) === 0) process.kill(process.pid, sig);
      else process.exit(128 + constants.signals[sig]);
    };
    const onInt = () => on("SIGINT");
    const onTerm = () => on("SIGTERM");
    process.on("SIGINT", onInt);
    process.on("SIGTERM", onTerm);
    stopListening = () => {
      process.off("SIGINT", onInt);
      process.off("SIGTERM", onTerm);
    };
  });
  try {
    await serving(ctx, o, signalled, () => {
      named = true;
    });
  } finally {
    stopListening();
  }
}

async function serving(
  ctx: Ctx,
  o: { port?: string; rotateToken?: boolean; allowOrigin?: string[]; idleExit?: string; replace?: string },
  signalled: Promise<string>,
  named: () => void,
): Promise<void> {
  const port = parseIntOption(o.port, "--port", 0);
  checkPort(port); // before a --replace stops anything
  const idleExitMs = parseDurationOption(o.idleExit, "--idle-exit");
  const replace = parseIntOption(o.replace, "--replace", 1);
  const baton = await ctx.open();
  // A server of another build that hooks started: it goes first (hooks/autostart.ts).
  if (replace !== undefined && !(await stopServer(baton.workspace.dir, replace))) {
    throw stillServing(replace);
  }
  // Built beside this bundle: dist/browser.js and dist/web/demo.js.
  const dist = dirname(fileURLToPath(import.meta.url));
  const cache = new Map<string, string | undefined>();
  const asset = (name: AssetName) => {
    if (name === "demo.html") return DEMO_HTML;
    if (name === "dashboard.html") return DASHBOARD_HTML;
    if (!cache.has(name)) {
      const file = name.startsWith("demo.") || name.startsWith("dashboard.") ? join(dist, "web", name) : join(dist, name);
      try {
        cache.set(name, readFileSync(file, "utf8"));
      } catch {
        cache.set(name, undefined);
      }
    }
    return cache.get(name);
  };
  named(); // from here on, server.json may name this process
  const server = await startServer(baton, {
    ...(port !== undefined ? { port } : {}),
    ...(o.rotateToken ? { rotateToken: true } : {}),
    ...(o.allowOrigin?.length ? { allowOrigins: o.allowOrigin } : {}),
    ...(idleExitMs !== undefined ? { idleExitMs } : {}),
    asset,
  });
  // The demo page's link carries a one-time login code, never the token (which would stay in
  // the browser's history and in whatever this output is pasted into).
  let login: { path: string; expiresAt: string };
  try {
    login = await requestLoginCode(server.info, "demo");
  } catch (err) {
    await server.close(); // no ready line: a server nobody was told about must not keep running
    throw err;
  }
  const pageUrl = `${server.url}${login.path}`;
  ctx.out({ url: server.url, port: server.port, pid: process.pid, pageUrl, serverFile: join(baton.workspace.dir, "server.json") }, () =>
    [
      `Baton server for ${baton.root} on ${server.url} (pid ${process.pid}).`,
      `Demo page (the link logs in once, until ${login.expiresAt}; \`baton dashboard --demo\` prints a new one):`,
      `  ${pageUrl}`,
      "Dashboard: run `baton dashboard` for a login link.",
      "The token is in .baton/server.json (mode 0600). Stop with Ctrl-C.",
    ].join("\n"),
  );
  const why = await Promise.race([signalled, server.stopped.then((reason) => STOPPED[reason])]);
  if (!ctx.json) writeStderr(`baton serve: ${why}, shutting down\n`);
  await server.close();
}

/**
 * `baton serve --stop`: stop the server that serves this workspace, whoever started it. Only a
 * server the kernel proves is the process that wrote .baton/server.json is signalled (a pid
 * reused by another program is left alone); none running is not an error. It waits until the
 * server let go of the workspace (SIGTERM: streams end, requests in flight finish).
 */
async function stop(ctx: Ctx, o: Record<string, unknown>): Promise<void> {
  const serving = ["port", "rotateToken", "allowOrigin", "idleExit", "replace"];
  if (serving.some((k) => o[k] !== undefined))
    throw new BatonError("bad_input", "--stop takes no other option: it only stops the running server");
  const ws = resolveWorkspace({ ...(ctx.root ? { root: ctx.root } : {}) });
  const info = liveServer(ws.dir);
  if (!info) {
    ctx.out({ stopped: false, running: false }, () => "No Baton server runs for this workspace.");
    return;
  }
  if (serverIdentity(info) !== "same")
    throw new BatonError(
      "server_running",
      `cannot prove that pid ${info.pid} is the server that wrote .baton/server.json (this platform does not tell process start times), so it was not signalled: stop it with \`kill ${info.pid}\` if it is`,
      { pid: info.pid },
    );
  if (!servesWorkspace(info.pid, ws.dir))
    throw new BatonError(
      "server_running",
      `pid ${info.pid}, which .baton/server.json names, is not a Baton server of this workspace (not \`baton serve\` with this workspace as its root), so it was not signalled: the file is stale or not Baton's; \`baton doctor --fix\` removes it`,
      { pid: info.pid },
    );
  if (!(await stopServer(ws.dir, info.pid))) throw stillServing(info.pid);
  ctx.out(
    { stopped: true, running: false, pid: info.pid, port: info.port },
    () => `Stopped the Baton server (pid ${info.pid}, port ${info.port}).`,
  );
}

function stillServing(pid: number): BatonError {
  return new BatonError("server_running", `the server pid ${pid} did not stop within 10 s; it still serves this workspace`, { pid });
}

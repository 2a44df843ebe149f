/**
 * `POST /v1/hook-clients/:agent/:event`: a hook answered without starting Node. `baton` is a
 * shell script as well as Node's (bin/baton.cjs): run as `baton hook <agent> <Event>`, it hands
 * the agent's payload, as the agent wrote it, to the workspace's running server on a loopback
 * connection of its own (bash's /dev/tcp), prints the answer and exits: a hook of a few ms where
 * starting Node costs ~20. Anything else the shell leaves to Node.
 *
 * The server judges the hook as a hook process would (hooks/server-first.ts `prepareHook`,
 * the same rules), with what that process would have known: the client's environment, working
 * directory and parent, read from /proc by the pid it sends (`X-Baton-Hook-Pid`; a process of
 * this user's, as only the owner reads another's environment), and its request id
 * (`X-Baton-Request-Id`, which Node gets too if it answers in the server's place). Whatever the
 * hook process would have answered itself is refused with `answer_in_process` (409), and so is
 * a client that is not this server's own bin/baton.cjs, or any hook once the installed baton
 * changed under the server (a reinstall or rebuild: Node's session-start and prompt hooks then
 * replace a server of another build, autostart.ts); the client then starts Node with the
 * payload, as it does when no server is there, the connection breaks, or any other status comes
 * back.
 *
 * As on `POST /v1/hooks/...` (hook-route.ts), the status line and headers go out as soon as the
 * hook is taken, with `X-Baton-Wait-Ms` (how long the answer may still take: the hook's deadline
 * and the grace after it), and the answer follows, chunked: exactly what the hook process would
 * have printed. A step the server took before the answer was lost is found again by the process
 * that answers in its place (every step is keyed, core/hooks/keys.ts).
 */
import { readdirSync, realpathSync, statSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { dirname, join, resolve } from "node:path";
import { adapterFor } from "../core/hooks/adapters.js";
import { BatonError, badInput } from "../errors.js";
import { findAgentPid, type HookSide, prepareHook, stdoutOf } from "../hooks/server-first.js";
import { readProcArgs, readProcEnv, readProcStat } from "../platform/process-facts.js";
import { ANSWER_GRACE_MS, fromProcess, type HookAnswerer, readText } from "./hook-route.js";
import { errorResponse } from "./http-errors.js";

const PATH = /^\/v1\/hook-clients\/([^/?#]+)\/([^/?#]+)\/?(?:\?.*)?$/;
/** How far in the past a client's start time may be (`X-Baton-Hook-Started`, ms since the epoch). */
const MAX_CLIENT_AGE_MS = 60_000;

const REQUEST_ID = /^[A-Za-z0-9_-]{8,80}$/;

/** A file's identity: device and inode. */
type FileId = { dev: number; ino: number };

/**
 * This server's own entry (bin/baton.cjs) and the bundle beside it, as they were when it started
 * (a reinstall gives the entry a new inode; a rebuild rewrites the bundle); undefined when it has
 * none (a server started otherwise: then Node answers every hook).
 */
function ownFiles(): { entry: FileId; stamp: string; files: string[] } | undefined {
  try {
    const entry = process.argv[1] ? realpathSync(process.argv[1]) : undefined;
    if (entry === undefined) return undefined;
    const files = [entry, join(dirname(entry), "..", "dist", "cli-full.cjs")];
    const stamp = stampOf(files);
    const st = statSync(entry);
    return stamp === undefined ? undefined : { entry: { dev: st.dev, ino: st.ino }, stamp, files };
  } catch {
    return undefined;
  }
}

function stampOf(files: readonly string[]): string | undefined {
  try {
    return files
      .map((f) => {
        const st = statSync(f);
        return `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}`;
      })
      .join("|");
  } catch {
    return undefined;
  }
}

/**
 * Whether the hook client runs this server's own bin/baton.cjs, the file it started from: the
 * script bash holds open (on descriptor 255, or another when that one was taken) is that file.
 * Another install, or another build's, may judge a hook otherwise: its hooks are Node's, which
 * hands them only to a server of its own build.
 */
function sameProgram(pid: number, entry: FileId): boolean {
  const is = (f: string) => {
    try {
      const st = statSync(f);
      return st.dev === entry.dev && st.ino === entry.ino;
    } catch {
      return false;
    }
  };
  if (is(`/proc/${pid}/fd/255`)) return true;
  try {
    return readdirSync(`/proc/${pid}/fd`).some((n) => n !== "255" && is(`/proc/${pid}/fd/${n}`));
  } catch {
    return false;
  }
}

export function isHookClientRequest(req: IncomingMessage): boolean {
  return req.method === "POST" && req.url !== undefined && req.url.startsWith("/v1/hook-clients/");
}

/** The hook client's process as a hook process would know itself, from /proc; an `answer_in_process` refusal when it cannot be read. */
export function hookClientSide(pid: number, words: readonly string[], startedAt: number | undefined): HookSide {
  const stat = readProcStat(pid);
  const env = readProcEnv(pid);
  const cwd = readProcArgs(pid)?.cwd;
  if (stat === undefined || env === undefined || cwd === undefined)
    throw new BatonError("answer_in_process", `the hook client's process ${pid} cannot be read in /proc: its own process answers the hook`);
  let found: number | undefined;
  return {
    env,
    cwd,
    agentPid: () => {
      found ??= findAgentPid(stat.ppid, words);
      return found;
    },
    // Without the client's own start (a bash before 5.0), the request's: never this server's.
    startedAt: startedAt ?? Date.now(),
  };
}

/** The node:http handler of `POST /v1/hook-clients/:agent/:event` (after the guard). Never throws. */
export function hookClientHttpHandler(o: { answerer: HookAnswerer; token: string; maxBodyBytes: number }) {
  let seq = 0;
  const own = ownFiles();
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    try {
      fromProcess(req, o.token, "agent hooks");
      const m = PATH.exec(req.url ?? "");
      if (!m) throw new BatonError("not_found", `no route POST ${(req.url ?? "").split("?")[0]}`);
      const [agent, native] = [m[1] as string, m[2] as string];
      if (!adapterFor(agent)) throw new BatonError("not_found", `no hook adapter for agent "${agent}"`);
      const pid = Number(req.headers["x-baton-hook-pid"]);
      if (!Number.isSafeInteger(pid) || pid <= 1) throw badInput('"X-Baton-Hook-Pid" must be the hook client\'s pid');
      const sent = Number(req.headers["x-baton-hook-started"]);
      const now = Date.now();
      const startedAt = Number.isSafeInteger(sent) && sent <= now && sent >= now - MAX_CLIENT_AGE_MS ? sent : undefined;
      const text = await readText(req, o.maxBodyBytes);
      const side = hookClientSide(pid, ["hook", agent, native], startedAt);
      if (own === undefined || !sameProgram(pid, own.entry))
        throw new BatonError(
          "answer_in_process",
          "the hook client is not this server's baton (another install or build): its own process answers the hook",
        );
      if (stampOf(own.files) !== own.stamp)
        throw new BatonError(
          "answer_in_process",
          "the installed baton changed since this server started: its own process answers the hook",
        );
      // The client's request id, which Node gets too when it answers in the server's place.
      const sentId = req.headers["x-baton-request-id"];
      const requestId =
        typeof sentId === "string" && REQUEST_ID.test(sentId)
          ? sentId
          : `client-${process.pid.toString(36)}-${now.toString(36)}-${(seq++).toString(36)}`;
      // BATON_ROOT as the client's process reads it: a relative one from its working directory.
      const root = side.env.BATON_ROOT ? resolve(side.cwd, side.env.BATON_ROOT) : undefined;
      const p = prepareHook({ agent, native, root }, text, requestId, side);
      if (p.kind === "answer") return void res.writeHead(200, { "Content-Type": "text/plain; charset=utf-8" }).end(p.stdout);
      if (p.kind === "handoff") throw new BatonError("answer_in_process", `the hook's own process answers it: ${p.reason}`);
      const { deadline, agentPid, store, settings } = p.req;
      const work = o.answerer.takeEvent(p.ev, { root: p.req.root, requestId, deadline, agentPid, store, settings });
      // Taken: say so at once, with how long the answer may take (the client gives up after that
      // and starts Node, which finds whatever was committed here), then answer.
      const wait = Math.max(0, deadline + ANSWER_GRACE_MS - Date.now());
      res.writeHead(200, { "Content-Type": "text/plain; charset=utf-8", "X-Baton-Wait-Ms": String(wait) });
      res.flushHeaders();
      const response = await work();
      res.end(stdoutOf(p.adapter.render(p.ev, response)));
    } catch (err) {
      const { status, body } = errorResponse(err);
      if (status === 500) console.error(`baton serve: POST ${(req.url ?? "").split("?")[0]} failed:`, err);
      if (!res.headersSent) {
        const text = JSON.stringify(body);
        res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) }).end(text);
      } else res.destroy();
    }
  };
}

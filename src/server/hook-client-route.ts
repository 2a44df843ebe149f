/**
 * `POST /v1/hook-clients/:agent/:event`: a hook answered without starting Node. `baton` is a
 * shell script as well as Node's (bin/baton.cjs): run as `baton hook <agent> <Event>`, it hands
 * the agent's payload, as the agent wrote it, to the workspace's running server on a loopback
 * connection of its own (bash's /dev/tcp), prints the answer and exits: a hook of ~9-15 ms where
 * starting Node alone costs ~24. Anything else the shell leaves to Node.
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
import { readdirSync, readFileSync, readlinkSync, realpathSync, statSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { dirname, join, resolve } from "node:path";
import { BUILD } from "../core/build.js";
import { adapterFor } from "../core/hooks/adapters.js";
import { isRequestId } from "../core/hooks/wire.js";
import { BatonError, badInput } from "../errors.js";
import { findAgentPid, type HookSide, prepareHook, stdoutOf } from "../hooks/server-first.js";
import { readProcCwd, readProcEnv, readProcStat } from "../platform/process-facts.js";
import { ANSWER_GRACE_MS, fromProcess, type HookAnswerer, readText } from "./hook-route.js";
import { errorResponse } from "./http-errors.js";

const PATH = /^\/v1\/hook-clients\/([^/?#]+)\/([^/?#]+)\/?(?:\?.*)?$/;
/** How far in the past a client's start time may be (`X-Baton-Hook-Started`, ms since the epoch). */
const MAX_CLIENT_AGE_MS = 60_000;

/** A file's identity: device and inode. */
type FileId = { dev: number; ino: number };

function idOf(file: string): FileId | undefined {
  try {
    const st = statSync(file);
    return { dev: st.dev, ino: st.ino };
  } catch {
    return undefined;
  }
}

const same = (a: FileId | undefined, b: FileId | undefined) => a !== undefined && b !== undefined && a.dev === b.dev && a.ino === b.ino;

/**
 * The installed baton this server answers clients for: its entry (bin/baton.cjs, links
 * resolved) and the bundle beside it (dist/cli-full.cjs), which must hold this server's own
 * build. Files replaced under it (a reinstall, a rebuild) are read again once, when their
 * identity, size or time changed: a rebuild of the same sources is still this build; another is
 * not, and then Node answers every hook (its prompt and session-start hooks replace a server of
 * another build, autostart.ts). Undefined for a server started otherwise (the library, dist/):
 * Node answers every hook.
 */
export function installedBaton(entryArg = process.argv[1], build = BUILD) {
  let entry: string;
  try {
    if (!entryArg) return undefined;
    entry = realpathSync(entryArg);
  } catch {
    return undefined;
  }
  const bundle = join(dirname(entry), "..", "dist", "cli-full.cjs");
  let checked: { stamp: string; ours: boolean } | undefined;
  const literal = JSON.stringify(build);
  return {
    /** The entry and bundle as they are now, when they still hold this server's build. */
    current(): { entry: FileId; bundle: FileId } | undefined {
      let stamp: string;
      let ids: { entry: FileId; bundle: FileId };
      try {
        const [e, b] = [statSync(entry), statSync(bundle)];
        stamp = `${e.dev}:${e.ino}:${e.size}:${e.mtimeMs}|${b.dev}:${b.ino}:${b.size}:${b.mtimeMs}`;
        ids = { entry: { dev: e.dev, ino: e.ino }, bundle: { dev: b.dev, ino: b.ino } };
      } catch {
        return undefined;
      }
      if (checked?.stamp !== stamp) {
        let ours = false;
        try {
          ours = readFileSync(bundle, "latin1").includes(literal);
        } catch {
          ours = false;
        }
        checked = { stamp, ours };
      }
      return checked.ours ? ids : undefined;
    },
  };
}

/**
 * Whether the hook client runs this installed baton: a file the client holds open (bash keeps
 * the script it runs on descriptor 255, or another when that one is taken) is its entry, and the
 * bundle beside that file is its bundle (a hard link of the entry in another install, as pnpm or
 * Nix make, is not enough). Descriptors are read as links first: only a `baton.cjs` is stat'ed.
 */
function runsInstalled(pid: number, installed: { entry: FileId; bundle: FileId }): boolean {
  const holds = (fd: string) => {
    let link: string;
    try {
      link = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      return false;
    }
    if (!link.endsWith("/baton.cjs") || !same(idOf(`/proc/${pid}/fd/${fd}`), installed.entry)) return false;
    return same(idOf(`/proc/${pid}/root${join(dirname(link), "..", "dist", "cli-full.cjs")}`), installed.bundle);
  };
  if (holds("255")) return true;
  try {
    return readdirSync(`/proc/${pid}/fd`).some((n) => n !== "255" && holds(n));
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
  const env = readProcEnv(pid, "last"); // the client is bash: its view, and the Node it would start
  const cwd = readProcCwd(pid);
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
  const own = installedBaton();
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
      const installed = own?.current();
      if (installed === undefined)
        throw new BatonError(
          "answer_in_process",
          "the installed baton is not this server's build any more: its own process answers the hook",
        );
      if (!runsInstalled(pid, installed))
        throw new BatonError(
          "answer_in_process",
          "the hook client is not this server's baton (another install or build): its own process answers the hook",
        );
      // The client's request id, which Node gets too when it answers in the server's place.
      const sentId = req.headers["x-baton-request-id"];
      const requestId = isRequestId(sentId) ? sentId : `client-${process.pid.toString(36)}-${now.toString(36)}-${(seq++).toString(36)}`;
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

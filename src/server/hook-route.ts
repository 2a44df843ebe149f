/**
 * `POST /v1/hooks/:agent/:event`: a hook process hands the neutral event it translated from the
 * agent's payload (core/hooks/) to the server, which answers it with its open workspace through
 * the same API the process would use (`baton.agents.handle`) and returns the neutral response
 * for the process to render. See docs/http-api.md and docs/integrations.md.
 *
 * The route is served on node:http directly, after the guard every request passes (server.ts:
 * Host, Origin, content type, declared length) and with the same token rule as every /v1 route
 * (the server's bearer token; a dashboard's browser session never answers a hook). Hono's conversion to and from web
 * Request/Response objects cost ~1.5 ms of each hook's ~3 ms on the server, and the agent
 * waits for every hook.
 *
 * The status line and headers go out as soon as the hook is taken, the body when it is
 * answered: a hook process that sees no status line within a second knows the server is not
 * taking hooks (stopped, or busy with a long synchronous step) and answers it itself. Nothing
 * here decides who runs a hook: every step is keyed by the agent's ids (core/hooks/keys.ts), so
 * a hook answered here and again in its process acts once.
 *
 * The server refuses (and the hook process then answers the hook itself) when the hook's
 * workspace is not the one it serves, when the hook's environment names another store
 * (`wrong_store`) or other settings than the server's own (`wrong_settings`: BATON_DURABILITY and
 * the like), when `.baton/config.json` or a user flow changed since it opened the workspace
 * (the workspace's settings would differ from what a new process reads), and while it shuts
 * down. Failures of Baton itself are not refusals: `agents.handle` logs them
 * to `.baton/logs/hooks.log` and answers `{}`, as in a hook process.
 *
 * A hook is answered in time whatever the store does: on a PostgreSQL store its calls wait at
 * most a second for a connection (as in a hook process) and none waits past the hook's deadline
 * (platform/store-limits.ts), so a frozen store fails the step by then; and a hook still
 * unanswered ANSWER_GRACE_MS after its deadline (a step stuck elsewhere) is answered `{}` then
 * and logged, its steps left to finish or fail on their own (each is keyed, and a checkpoint or
 * rollback is cancelled past the deadline). The grace lets a step that reaches its commit just
 * after the deadline say it was cancelled, and ends before the hook process stops waiting.
 */
import { readdirSync, statSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { isAbsolute, join } from "node:path";
import type { Baton } from "../api.js";
import { jsonBoundsProblem } from "../core/canonical.js";
import { HOOK_AGENT_LIST, HOOK_AGENTS } from "../core/hooks/config.js";
import type { HookEvent, HookResponse } from "../core/hooks/types.js";
import { isRequestId, readHookEvent } from "../core/hooks/wire.js";
import { envSettings } from "../env-options.js";
import { BatonError, badInput } from "../errors.js";
import { appendHookFailure } from "../platform/hook-log.js";
import { entryKind } from "../platform/private-files.js";
import { storeIdentity } from "../platform/store-config.js";
import { HOOK_STORE_CONNECT_MS, withStoreLimits } from "../platform/store-limits.js";
import { errorResponse } from "./http-errors.js";
import { bearerToken, tokenMatches } from "./security.js";

export interface HookAnswerer {
  /** Check the request and take the hook (a refusal throws before anything is done); the promise answers it. */
  take(agent: string, event: string, body: Record<string, unknown>): () => Promise<HookResponse>;
  /**
   * Take a hook already translated here (the agent's own payload: native-hook-route.ts,
   * hook-client-route.ts), with the same checks (workspace, shutdown, changed settings); the
   * store and settings are checked when the hook's process named them (a hook client's do).
   */
  takeEvent(
    ev: HookEvent,
    o: { root: string; requestId: string; deadline: number; agentPid?: number; store?: string; settings?: string },
  ): () => Promise<HookResponse>;
}

export interface HookAnswererOptions {
  baton: Baton;
  shutdown: AbortSignal;
  /** Called (once) when a hook is refused because `.baton/config.json` changed. */
  onConfigChanged?: () => void;
}

const AGENTS: readonly string[] = HOOK_AGENTS;

/**
 * The latest a hook is answered, after its deadline: less than the 2 s the hook process waits
 * past it (hooks/client.ts, CLIENT_TIMEOUTS.graceMs), so the answer still reaches it.
 */
export const ANSWER_GRACE_MS = 1_500;

/** A file's identity: device and inode (so a symlinked path names the same directory), or undefined if missing. */
function identity(path: string): string | undefined {
  try {
    const s = statSync(path);
    return `${s.dev}:${s.ino}`;
  } catch {
    return undefined;
  }
}

/**
 * The settings a hook process would read that this server read once: `.baton/config.json` and
 * the user flows in `.baton/flows/` (names, sizes, times). A change means a new process would
 * answer differently, so hooks go back to their own processes until the server restarts.
 */
function configStamp(batonDir: string): string {
  const parts: string[] = [];
  try {
    const s = statSync(join(batonDir, "config.json"));
    parts.push(`${s.mtimeMs}:${s.size}:${s.ino}`);
  } catch {
    parts.push("none");
  }
  const flows = join(batonDir, "flows");
  let names: string[] = [];
  try {
    names = readdirSync(flows).sort();
  } catch {
    // no user flows
  }
  for (const n of names) {
    try {
      const s = statSync(join(flows, n));
      parts.push(`${n}:${s.mtimeMs}:${s.size}:${s.ino}`);
    } catch {
      parts.push(`${n}:gone`);
    }
  }
  return parts.join("|");
}

/**
 * The checks every request a process hands to this server passes (a hook, or `status` and
 * `resume` for the CLI, cli-route.ts): the server is not shutting down, serves the request's
 * workspace and the store its environment names, and reads the settings a new process would
 * read. Each failure is a refusal, and the process then answers the request itself.
 */
export interface ServedWorkspace {
  dir: string;
  kind: string;
  /** Throw the refusal for a request from `root` naming the store `theirs`; `what` is the request ("the hook"). */
  check(root: unknown, theirs: unknown, what: string, theirSettings?: unknown): void;
  /** What this server's environment set (env-options.ts `envSettings`), for server.json. */
  settings: string;
}

/** The settings this server's environment gave it (env-options.ts): a bad value failed its start. */
function ownSettings(): string {
  try {
    return envSettings(process.env);
  } catch {
    return "";
  }
}

export function servedWorkspace(o: HookAnswererOptions): ServedWorkspace {
  const dir = o.baton.workspace.dir;
  const served = identity(dir);
  // A Baton opened on a backend handed in has no location to compare: only its kind is known.
  const store = o.baton.store.source === "caller" ? undefined : storeIdentity(o.baton.store);
  const kind = o.baton.store.kind;
  const config = configStamp(dir);
  const settings = ownSettings();
  let configChanged = false;
  return {
    dir,
    kind,
    settings,
    check(root, theirs, what, theirSettings) {
      if (typeof root !== "string" || !isAbsolute(root)) throw badInput(`"root" must be the absolute path of ${what}'s workspace`);
      if (o.shutdown.aborted)
        throw new BatonError("shutting_down", `the server is shutting down; ${what} is answered in a process of its own`);
      if (served === undefined || identity(join(root, ".baton")) !== served) {
        throw new BatonError("wrong_workspace", `this server serves ${o.baton.root}, not ${root}`, { root: o.baton.root });
      }
      // The same folder through a link that `.baton` itself is (a repository's): not this workspace's.
      if (entryKind(join(root, ".baton")) === "link")
        throw new BatonError(
          "wrong_workspace",
          `${join(root, ".baton")} is a symbolic link to the .baton/ of ${o.baton.root}, which this server serves`,
          {
            root: o.baton.root,
          },
        );
      if (theirs !== undefined && typeof theirs !== "string") throw badInput(`"store" must be ${what}'s store, as a string`);
      if (typeof theirs === "string" && (store !== undefined ? theirs !== store : theirs.split(" ")[0] !== kind)) {
        throw new BatonError(
          "wrong_store",
          `this server serves the store ${store ?? kind}, and ${what}'s environment names ${theirs}; ${what} runs in its own process`,
        );
      }
      if (theirSettings !== undefined && typeof theirSettings !== "string")
        throw badInput(`"settings" must be the settings ${what}'s environment sets, as a string`);
      if (typeof theirSettings === "string" && theirSettings !== settings) {
        const say = (s: string) => (s === "" ? "none" : s);
        throw new BatonError(
          "wrong_settings",
          `this server was started with the settings ${say(settings)} from its environment, and ${what}'s environment sets ${say(theirSettings)}; ${what} runs in its own process`,
        );
      }
      if (configChanged || configStamp(dir) !== config) {
        if (!configChanged) {
          configChanged = true;
          o.onConfigChanged?.();
        }
        throw new BatonError(
          "config_changed",
          `${join(dir, "config.json")} or the flows in ${join(dir, "flows")} changed since this server started; ${what} is answered in a process of its own (which reads them as they are now) until the server restarts`,
        );
      }
    },
  };
}

export function hookAnswerer(o: HookAnswererOptions, ws: ServedWorkspace = servedWorkspace(o)): HookAnswerer {
  const { dir, kind } = ws;
  const answerer: HookAnswerer = {
    take(agent, native, body) {
      if (!AGENTS.includes(agent)) throw new BatonError("not_found", `no hook adapter for agent "${agent}"; use ${HOOK_AGENT_LIST}`);
      const { requestId, root, agentPid, deadline, store: theirs, settings: theirSettings } = body;
      if (!isRequestId(requestId)) throw badInput('"requestId" must be 8 to 80 letters, digits, "-" or "_"');
      if (typeof root !== "string" || !isAbsolute(root)) throw badInput('"root" must be the absolute path of the hook\'s workspace');
      if (typeof agentPid !== "number" || !Number.isSafeInteger(agentPid) || agentPid <= 0) throw badInput('"agentPid" must be a pid');
      if (typeof deadline !== "number" || !Number.isSafeInteger(deadline) || deadline <= 0)
        throw badInput('"deadline" must be a time in ms since the epoch');
      let ev: HookEvent;
      try {
        ev = readHookEvent(body.event);
      } catch (err) {
        throw badInput(`the hook's event: ${(err as Error).message}`);
      }
      if (ev.agent !== agent || ev.native !== native)
        throw badInput(`the event is ${ev.agent} ${ev.native}, the path names ${agent} ${native}`);
      ws.check(root, theirs, "the hook", theirSettings);
      return answered(ev, { requestId, deadline, agentPid });
    },
    takeEvent(ev, { root, requestId, deadline, agentPid, store, settings }) {
      ws.check(root, store, "the hook", settings);
      return answered(ev, { requestId, deadline, ...(agentPid !== undefined ? { agentPid } : {}) });
    },
  };
  /** The hook's answer, taken after the checks. */
  function answered(ev: HookEvent, { requestId, deadline, agentPid }: { requestId: string; deadline: number; agentPid?: number }) {
    const agent = ev.agent;
    const native = ev.native;
    const answer = () => o.baton.agents.handle(ev, { ...(agentPid !== undefined ? { agentPid } : {}), requestId, deadline });
    // SQLite waits on no network: its busy timeout and the race below are enough.
    const limited = kind === "sqlite" ? answer : () => withStoreLimits({ deadline, connectTimeoutMs: HOOK_STORE_CONNECT_MS }, answer);
    return () =>
      answerBy(deadline + ANSWER_GRACE_MS, limited, () =>
        appendHookFailure(dir, {
          agent,
          event: native,
          error: new BatonError(
            "deadline_exceeded",
            `the server had not answered the hook ${ANSWER_GRACE_MS} ms after its deadline (${new Date(deadline).toISOString()}); it answered it empty, so the agent went on (its steps still running finish or fail by themselves; a checkpoint or rollback past the deadline is cancelled)`,
          ),
        }),
      );
  }
  return answerer;
}

/** The hook's answer, or `{}` at `latest` (after `late()`) when it has not come by then. Never rejects. */
function answerBy(latest: number, answer: () => Promise<HookResponse>, late: () => void): Promise<HookResponse> {
  return new Promise((resolve) => {
    const timer = setTimeout(
      () => {
        late();
        resolve({});
      },
      Math.max(0, latest - Date.now()),
    );
    const settle = (r: HookResponse) => {
      clearTimeout(timer);
      resolve(r);
    };
    answer().then(settle, () => settle({}));
  });
}

/** The path of a hook request, or undefined for any other path. */
const HOOK_PATH = /^\/v1\/hooks\/([^/?#]+)\/([^/?#]+)\/?(?:\?.*)?$/;

export function isHookRequest(req: IncomingMessage): boolean {
  return req.method === "POST" && req.url !== undefined && req.url.startsWith("/v1/hooks/");
}

/**
 * Refuse a request that is not from a local process holding the server's token. Processes never
 * send an Origin; a browser always does on a POST, and a page allowed to use the API (the demo,
 * an --allow-origin page) must still not send what only processes send.
 */
export function fromProcess(req: IncomingMessage, token: string, what: string): void {
  if (req.headers.origin !== undefined) {
    throw new BatonError("forbidden", `${what} are not accepted from a web page (the request has an Origin)`);
  }
  if (!tokenMatches(token, bearerToken(req.headers.authorization))) {
    throw new BatonError("unauthorized", "send the server's token as `Authorization: Bearer <token>` (see .baton/server.json)");
  }
}

/** The node:http handler of `POST /v1/hooks/:agent/:event` (after the guard). Never throws. */
export function hookHttpHandler(o: { answerer: HookAnswerer; token: string; maxBodyBytes: number }) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const send = (status: number, value: unknown) => {
      const text = JSON.stringify(value);
      res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) });
      res.end(text);
    };
    try {
      // A prompt hook can roll files back: no web page runs one.
      fromProcess(req, o.token, "agent hooks");
      const m = HOOK_PATH.exec(req.url ?? "");
      if (!m) throw new BatonError("not_found", `no route POST ${(req.url ?? "").split("?")[0]}`);
      let agent: string;
      let event: string;
      try {
        agent = decodeURIComponent(m[1] as string);
        event = decodeURIComponent(m[2] as string);
      } catch {
        throw badInput("the agent and event in the path must be percent-encoded names");
      }
      const body = await readBody(req, o.maxBodyBytes);
      const work = o.answerer.take(agent, event, body);
      // Taken: say so at once (the hook process stops waiting for a server that does not take
      // hooks after a second), then answer. No Content-Length: the body follows chunked.
      res.writeHead(200, { "Content-Type": "application/json" });
      res.flushHeaders();
      const response = await work();
      res.end(JSON.stringify({ response }));
    } catch (err) {
      const { status, body } = errorResponse(err);
      if (status === 500) console.error(`baton serve: POST ${(req.url ?? "").split("?")[0]} failed:`, err);
      if (!res.headersSent) send(status, body);
      else res.destroy();
    }
  };
}

/** The request body as a JSON object, at most `max` bytes (a chunked body is counted as it arrives). */
export async function readBody(req: IncomingMessage, max: number): Promise<Record<string, unknown>> {
  return jsonObjectBody(await readText(req, max));
}

/** A request body's text as a JSON object (empty: `{}`), within the nesting limits; else `bad_input`. */
export function jsonObjectBody(text: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = text.trim() === "" ? {} : JSON.parse(text);
  } catch (err) {
    throw badInput(`the request body is not valid JSON (${(err as Error).message})`);
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw badInput("the request body must be a JSON object");
  const problem = jsonBoundsProblem(v);
  if (problem) throw badInput(`the request body: ${problem}`);
  return v as Record<string, unknown>;
}

/** The request body as text, at most `max` bytes (a chunked body is counted as it arrives). */
export async function readText(req: IncomingMessage, max: number): Promise<string> {
  // Events, not `for await`: the async iterator's extra ticks cost a hook ~0.3 ms on a server
  // woken from idle, and every hook waits for them. Called in the request's own handler, before
  // any of its events; one that ended or broke before would never settle.
  if (req.readableEnded || req.destroyed) throw badInput("the request was closed before its body was read");
  return new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    // Settled once; an error is made only when it is the answer ("close" follows every "end",
    // and an error's stack costs more than the rest of the read).
    let settled = false;
    const fail = (error: () => BatonError) => {
      if (settled) return;
      settled = true;
      reject(error());
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= max) return void chunks.push(chunk);
      req.off("data", onData);
      req.pause();
      fail(() => new BatonError("payload_too_large", `the request body is limited to ${max} bytes`));
    };
    req.on("data", onData);
    req.once("end", () => {
      if (settled) return;
      settled = true;
      resolve(Buffer.concat(chunks).toString("utf8"));
    });
    req.once("error", (err) => fail(() => badInput(`the request's body could not be read (${err.message})`)));
    req.once("close", () => fail(() => badInput("the request was closed before its body arrived")));
  });
}

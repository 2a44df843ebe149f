/**
 * `POST /v1/hooks/:agent/:event`: a hook process hands its payload to the server, which answers
 * it with its open Baton exactly as the process would have (hooks/answer.ts) and returns what
 * the process prints: `{"stdout": "…"}`. See docs/http-api.md and docs/integrations.md.
 *
 * The route is served on node:http directly, after the guard every request passes (server.ts:
 * Host, Origin, content type, declared length) and with the same token rule as every /v1 route
 * (a bearer token; a cookie never authorizes a write). Hono's conversion to and from web
 * Request/Response objects cost ~1.5 ms of each hook's ~3 ms on the server, and the agent
 * waits for every hook.
 *
 * The server refuses (and the hook process then answers the hook itself) when the hook's
 * workspace is not the one it serves, when `.baton/config.json` changed since it opened the
 * workspace (the workspace's settings would differ from what a new process reads), and when
 * the hook process already took the hook back (claims.ts). Failures of Baton itself are not
 * refusals: they are logged to `.baton/logs/hooks.log` and answered with the agent's "go on"
 * form, as in a hook process.
 */
import { readdirSync, statSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { isAbsolute, join } from "node:path";
import type { Baton } from "../api.js";
import { jsonBoundsProblem } from "../core/canonical.js";
import { BatonError, badInput } from "../errors.js";
import { answerHook } from "../hooks/answer.js";
import { claim, isRequestId, recordAnswer, sweepClaims } from "../hooks/claims.js";
import { adapterFor, logHookFailure, stdoutOf } from "../hooks/front.js";
import { isNoop } from "../hooks/types.js";
import { storeIdentity } from "../services/store-config.js";
import { errorResponse } from "./http-errors.js";
import { bearerToken, tokenMatches } from "./security.js";

export interface HookAnswer {
  stdout: string;
}

export interface HookAnswerer {
  answer(agent: string, event: string, body: Record<string, unknown>): Promise<HookAnswer>;
}

export interface HookAnswererOptions {
  baton: Baton;
  shutdown: AbortSignal;
  /** Called (once) when a hook is refused because `.baton/config.json` changed. */
  onConfigChanged?: () => void;
}

const SWEEP_EVERY_MS = 5 * 60 * 1000;

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

export function hookAnswerer(o: HookAnswererOptions): HookAnswerer {
  const dir = o.baton.workspace.dir;
  const served = identity(dir);
  // A Baton opened on a backend handed in (tests) has no identity to compare.
  const store = o.baton.store.source === "caller" ? undefined : storeIdentity(o.baton.store);
  const config = configStamp(dir);
  let configChanged = false;
  let lastSweep = 0;

  return {
    async answer(agent, event, body) {
      const adapter = adapterFor(agent);
      if (!adapter) throw new BatonError("not_found", `no hook adapter for agent "${agent}"; use claude, codex or gemini`);
      const { requestId, root, cwd, agentPid, payload, store: theirs } = body;
      if (!isRequestId(requestId)) throw badInput('"requestId" must be 8 to 80 letters, digits, "-" or "_"');
      if (typeof root !== "string" || !isAbsolute(root)) throw badInput('"root" must be the absolute path of the hook\'s workspace');
      if (typeof cwd !== "string" || !isAbsolute(cwd)) throw badInput('"cwd" must be the hook process\'s absolute working directory');
      if (typeof agentPid !== "number" || !Number.isSafeInteger(agentPid) || agentPid <= 0) throw badInput('"agentPid" must be a pid');
      if (typeof payload !== "object" || payload === null || Array.isArray(payload))
        throw badInput('"payload" must be the agent\'s JSON object');
      if (o.shutdown.aborted) throw new BatonError("shutting_down", "the server is shutting down; answer the hook in its own process");
      if (served === undefined || identity(join(root, ".baton")) !== served) {
        throw new BatonError("wrong_workspace", `this server serves ${o.baton.root}, not ${root}`, { root: o.baton.root });
      }
      if (theirs !== undefined && typeof theirs !== "string") throw badInput('"store" must be the hook process\'s store, as a string');
      if (typeof theirs === "string" && store !== undefined && theirs !== store) {
        throw new BatonError(
          "wrong_store",
          `this server serves the store ${store}, and the hook's environment names ${theirs}; the hook runs in its own process`,
        );
      }
      if (configChanged || configStamp(dir) !== config) {
        if (!configChanged) {
          configChanged = true;
          o.onConfigChanged?.();
        }
        throw new BatonError(
          "config_changed",
          `${join(dir, "config.json")} or the flows in ${join(dir, "flows")} changed since this server started; hooks run in their own process until it restarts`,
        );
      }
      try {
        if (!claim(dir, requestId)) throw new BatonError("conflict", "the hook process took this hook back; it answers it itself");
      } catch (err) {
        if (err instanceof BatonError) throw err;
        throw new BatonError("io_error", `cannot record the hook's claim in ${dir}: ${(err as Error).message}`, {}, { cause: err });
      }
      let out: string;
      try {
        const ev = adapter.parse(event, payload as Record<string, unknown>, cwd);
        out = isNoop(ev) ? adapter.passThrough(event) : await answerHook(o.baton, adapter, event, ev, agentPid);
      } catch (err) {
        await logHookFailure(dir, adapter.agent, event, err);
        out = adapter.passThrough(event);
      }
      const stdout = stdoutOf(out);
      recordAnswer(dir, requestId, stdout);
      if (Date.now() - lastSweep > SWEEP_EVERY_MS) {
        lastSweep = Date.now();
        sweepClaims(dir);
      }
      return { stdout };
    },
  };
}

/** The path of a hook request, or undefined for any other path. */
const HOOK_PATH = /^\/v1\/hooks\/([^/?#]+)\/([^/?#]+)\/?(?:\?.*)?$/;

export function isHookRequest(req: IncomingMessage): boolean {
  return req.method === "POST" && req.url !== undefined && req.url.startsWith("/v1/hooks/");
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
      // Hook processes never send an Origin; a browser always does on a POST. A page allowed to
      // use the API (the demo, an --allow-origin page) must still not run hooks: a prompt hook
      // can roll files back.
      if (req.headers.origin !== undefined) {
        throw new BatonError("forbidden", "agent hooks are not accepted from a web page (the request has an Origin)");
      }
      if (!tokenMatches(o.token, bearerToken(req.headers.authorization))) {
        throw new BatonError("unauthorized", "send the server's token as `Authorization: Bearer <token>` (see .baton/server.json)");
      }
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
      const { stdout } = await o.answerer.answer(agent, event, body);
      send(200, { stdout });
    } catch (err) {
      const { status, body } = errorResponse(err);
      if (status === 500) console.error(`baton serve: POST ${(req.url ?? "").split("?")[0]} failed:`, err);
      if (!res.headersSent) send(status, body);
      else res.destroy();
    }
  };
}

/** The request body as a JSON object, at most `max` bytes (a chunked body is counted as it arrives). */
async function readBody(req: IncomingMessage, max: number): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) throw new BatonError("payload_too_large", `the request body is limited to ${max} bytes`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString("utf8");
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

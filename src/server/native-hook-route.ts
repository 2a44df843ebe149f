/**
 * `POST /v1/agent-hooks/claude/:event`: Claude Code's own HTTP hook (`{"type": "http"}` entries
 * that `baton hooks install claude --http` writes into `.claude/settings.local.json`). Claude Code
 * POSTs the hook's payload, exactly what a command hook reads on stdin, and reads the answer,
 * exactly what a command hook prints, from the body: no process per tool call.
 *
 * Only the per-call events come here (core/hooks/claude.ts, CLAUDE_HTTP_EVENTS); the others stay
 * command hooks. The request passes the guard every request passes (server.ts: Host, Origin,
 * content type, declared length), then this route's own rules, as the process route's
 * (hook-route.ts): no Origin at all, the server's bearer token. The payload is translated by
 * the same adapter as in a hook process and answered through the same `hookAnswerer`, which
 * refuses while the server shuts down and once `.baton/config.json` or a flow changed. Those two
 * refusals a command hook's process answers itself; an HTTP hook has no process, so the server
 * starts one for it (`baton hook claude <Event>`, hook-child.ts) and answers with what it prints.
 *
 * Any other refusal is an HTTP error, and Claude Code takes any HTTP error, a refused connection
 * or a timeout as a non-blocking error: the tool runs without a checkpoint. Nothing answers in its
 * place, so the loss is reported instead (services/agents/unanswered.ts): the next command hook
 * of the session (UserPromptSubmit, Stop) compares the transcript's tool calls with what Baton
 * recorded, and says how many ran without a checkpoint. See docs/integrations.md.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Baton } from "../api.js";
import { adapterFor } from "../core/hooks/adapters.js";
import { CLAUDE_HTTP_EVENTS } from "../core/hooks/claude.js";
import type { HookResponse } from "../core/hooks/types.js";
import { isNoop } from "../core/hooks/types.js";
import { BatonError, badInput, isBatonError } from "../errors.js";
import { appendHookFailure } from "../platform/hook-log.js";
import { agentSessionMark, findWorkspace } from "../platform/workspace.js";
import { answerInChild } from "./hook-child.js";
import type { HookAnswerer } from "./hook-route.js";
import { ANSWER_GRACE_MS, readBody } from "./hook-route.js";
import { errorResponse } from "./http-errors.js";
import { bearerToken, tokenMatches } from "./security.js";

const PATH = /^\/v1\/agent-hooks\/([^/?#]+)\/([^/?#]+)\/?(?:\?.*)?$/;
/** The time kept between a hook's deadline and Claude Code's timeout (as in a hook process, hooks/front.ts). */
const DEADLINE_MARGIN_MS = 15_000;
/** The refusals a command hook's own process answers: here a process started for the hook answers them. */
const IN_CHILD: ReadonlySet<string> = new Set(["config_changed", "shutting_down"]);

/**
 * Log a refused call to `.baton/logs/hooks.log` (the doctor's `hook_failures`): Claude Code
 * takes any HTTP error as "go on", so the call runs without Baton and nothing else says why.
 */
export function nativeHookRefused(batonDir: string, url: string | undefined, error: { code: string; message: string }): void {
  const m = PATH.exec(url ?? "");
  appendHookFailure(batonDir, {
    agent: "claude",
    event: m?.[2] ?? "http",
    error: { code: error.code, message: `the HTTP hook ${(url ?? "").split("?")[0]} was refused: ${error.message}` },
  });
}

export function isNativeHookRequest(req: IncomingMessage): boolean {
  return req.method === "POST" && req.url !== undefined && req.url.startsWith("/v1/agent-hooks/");
}

/** The node:http handler of `POST /v1/agent-hooks/:agent/:event` (after the guard). Never throws. */
export function nativeHookHttpHandler(o: { baton: Baton; answerer: HookAnswerer; token: string; maxBodyBytes: number }) {
  let seq = 0;
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const send = (status: number, text: string) => {
      res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) });
      res.end(text);
    };
    try {
      if (req.headers.origin !== undefined) {
        throw new BatonError("forbidden", "agent hooks are not accepted from a web page (the request has an Origin)");
      }
      if (!tokenMatches(o.token, bearerToken(req.headers.authorization))) {
        throw new BatonError(
          "unauthorized",
          "send the server's token as `Authorization: Bearer <token>`: run `baton hooks install claude --http` again to write the current one",
        );
      }
      const m = PATH.exec(req.url ?? "");
      if (!m) throw new BatonError("not_found", `no route POST ${(req.url ?? "").split("?")[0]}`);
      const [agent, native] = [m[1] as string, m[2] as string];
      if (agent !== "claude") throw new BatonError("not_found", `only Claude Code sends its own hook payloads here, not "${agent}"`);
      if (!CLAUDE_HTTP_EVENTS.includes(native))
        throw new BatonError("not_found", `${native} is not answered over HTTP; use ${CLAUDE_HTTP_EVENTS.join(", ")}`);
      const adapter = adapterFor(agent);
      if (!adapter) throw new BatonError("not_found", `no hook adapter for agent "${agent}"`);
      const body = await readBody(req, o.maxBodyBytes);
      const root = o.baton.root;
      const ev = adapter.parse(native, body, root, {});
      if (isNoop(ev)) return send(200, "{}");
      // The hook's own workspace must be this one (a nested workspace has its own server); the
      // answerer compares the two folders themselves, so a cwd through a link to it is this one.
      const own = findWorkspace(ev.cwd, [agentSessionMark(ev.agent, ev.agentSessionId)]);
      if (own === undefined)
        throw new BatonError("wrong_workspace", `this server serves ${root}, and the hook's cwd is ${ev.cwd}`, { root });
      const now = Date.now();
      const timeout = adapter.timeoutMs(native);
      const deadline = now + timeout - Math.min(DEADLINE_MARGIN_MS, timeout / 4);
      const requestId = `http-${process.pid.toString(36)}-${now.toString(36)}-${(seq++).toString(36)}`;
      let work: () => Promise<HookResponse>;
      try {
        work = o.answerer.takeEvent(ev, { root: own.root, requestId, deadline });
      } catch (err) {
        // What a command hook's process would answer itself: answered by a new process here,
        // which reads the workspace's settings as they are now (hook-child.ts).
        if (!isBatonError(err) || !IN_CHILD.has(err.code)) throw err;
        const out = await answerInChild({
          agent,
          native,
          payload: JSON.stringify(body),
          cwd: ev.cwd,
          deadline: deadline + ANSWER_GRACE_MS,
        });
        return send(200, out.trim() || "{}");
      }
      const response = await work();
      const out = adapter.render(ev, response);
      send(200, out || "{}");
    } catch (err) {
      const e = err instanceof SyntaxError ? badInput(err.message) : err;
      const { status, body } = errorResponse(e);
      // Not a web page's request (refused for its Origin): only what Claude Code can have sent is logged.
      if (status >= 400 && status < 500 && req.headers.origin === undefined) nativeHookRefused(o.baton.workspace.dir, req.url, body.error);
      if (status === 500) console.error(`baton serve: POST ${(req.url ?? "").split("?")[0]} failed:`, err);
      if (!res.headersSent) send(status, JSON.stringify(body));
      else res.destroy();
    }
  };
}

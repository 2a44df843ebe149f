/**
 * `POST /v1/cli/status` and `POST /v1/cli/resume`: the report `baton status --json` or `baton
 * resume --json` would print, made by this server from its open workspace (cli/reports.ts, the
 * functions the command itself uses) for a CLI process that then need not load SQLite's driver
 * and open the store (cli/ask.ts). Agents run these on every turn.
 *
 * Served on node:http directly like the hooks (hook-route.ts), after the guard every request
 * passes, with the server's bearer token and never from a web page; refused, like a hook, when
 * the request's workspace or store is not this server's or the workspace's settings changed
 * since it started. Any refusal or failure sends the command back to its own process, which
 * answers (and reports errors) as it always did. The status line goes out once the request is
 * checked, the report when made: a process waits a second for the first, ten for the second.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Baton } from "../api.js";
import { resumeReport, statusReport } from "../cli/reports.js";
import { BatonError, badInput } from "../errors.js";
import { fromProcess, readBody, type ServedWorkspace } from "./hook-route.js";
import { errorResponse } from "./http-errors.js";

const CLI_PATH = /^\/v1\/cli\/(status|resume)\/?(?:\?.*)?$/;

export function isCliRequest(req: IncomingMessage): boolean {
  return req.method === "POST" && req.url !== undefined && req.url.startsWith("/v1/cli/");
}

const optionalString = (v: unknown, name: string): string | undefined => {
  if (v === undefined) return undefined;
  if (typeof v !== "string" || v === "") throw badInput(`"${name}" must be a non-empty string`);
  return v;
};

/** The node:http handler of `POST /v1/cli/:command` (after the guard). Never throws. */
export function cliHttpHandler(o: { baton: Baton; ws: ServedWorkspace; token: string; maxBodyBytes: number }) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const send = (status: number, text: string) => {
      res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) });
      res.end(text);
    };
    try {
      fromProcess(req, o.token, "CLI requests");
      const m = CLI_PATH.exec(req.url ?? "");
      if (!m) throw new BatonError("not_found", `no route POST ${(req.url ?? "").split("?")[0]}`);
      const body = await readBody(req, o.maxBodyBytes);
      o.ws.check(body.root, body.store, `\`baton ${m[1]}\``, body.settings);
      const session = optionalString(body.session, "session");
      let make: () => Promise<unknown>;
      if (m[1] === "status") {
        if (body.all !== undefined && typeof body.all !== "boolean") throw badInput('"all" must be a boolean');
        if (session !== undefined) await o.baton.sessions.snapshot(session); // an unknown session: 404 here, not a cut connection
        make = async () => (await statusReport(o.baton, { ...(body.all ? { all: true } : {}), ...(session ? { session } : {}) })).json;
      } else {
        const id = optionalString(body.id, "id");
        const sid = await o.baton.sessions.resolve(id ?? session);
        await o.baton.sessions.snapshot(sid); // an unknown session is refused here, not after the status line
        make = () => resumeReport(o.baton, sid);
      }
      // Taken: say so at once (the process stops waiting for a server that has not taken it
      // after a second, ask.ts), then answer; a failure from here cuts the connection and the
      // process runs the command itself. No Content-Length: the body follows chunked.
      res.writeHead(200, { "Content-Type": "application/json" });
      res.flushHeaders();
      res.end(JSON.stringify(await make()));
    } catch (err) {
      const { status, body } = errorResponse(err);
      if (status === 500) console.error(`baton serve: POST ${(req.url ?? "").split("?")[0]} failed:`, err);
      if (!res.headersSent) send(status, JSON.stringify(body));
      else res.destroy();
    }
  };
}

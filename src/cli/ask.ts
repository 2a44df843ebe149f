/**
 * The process entry of `baton status --json` and `baton resume --json` (dist/ask.cjs, which
 * bin/baton.cjs loads instead of dist/cli.cjs for them): agents run these on every turn, and
 * loading SQLite's driver and opening the store cost more than Node's own start. When
 * `.baton/server.json` names a running server of this build, proven to be the process that
 * wrote it, the report is the server's (`POST /v1/cli/:command`, server/cli-route.ts, made by
 * the functions the command uses itself, reports.ts), printed as the command prints its own.
 *
 * Everything else runs the command in this process (dist/cli.cjs), which answers as it always
 * did: no server or one of another build, options beyond the fast path's, `resume --unpause`
 * (a change a user asked for, reported by the command itself), settings from the environment
 * other than the server was started with (BATON_DURABILITY, ...: env-options.ts `envSettings`,
 * server.json's `settings`), the deprecated BATON_SYNCHRONOUS (the command warns about it), a
 * `.baton/config.json` this user has not trusted (so does it), a store the server does not
 * serve, and any refusal, error or silence of the server. BATON_DEBUG says on stderr which one
 * answered and why.
 */
import { writeSync } from "node:fs";
import { BUILD } from "../core/build.js";
import { envOptions, envSettings } from "../env-options.js";
import { configTrust, readConfigFile } from "../platform/config-file.js";
import { type Connection, type Exchange, open, parseResponse } from "../platform/loopback.js";
import { writeStdout } from "../platform/output.js";
import { provenServer, type ServerInfo } from "../platform/server-file.js";
import { describeStore, resolveStore, storeIdentity } from "../platform/store-config.js";
import { findWorkspace, type Workspace, workingDir, workspaceAt } from "../platform/workspace.js";
import { type Options, parseCommandLine, RESUME_OPTIONS, STATUS_OPTIONS } from "./fast-options.js";

const COMMANDS: Record<string, { options: Options; positionals: number }> = {
  status: { options: STATUS_OPTIONS, positionals: 0 },
  resume: { options: RESUME_OPTIONS, positionals: 1 },
};

/** Not taken within this (no status line): the server is stopped or busy; run the command here. */
const ACCEPT_MS = 1_000;
/** Taken but not answered within this: run the command here (its reads and its crash check repeat safely). */
const ANSWER_MS = 10_000;

function debug(text: string): void {
  if (!process.env.BATON_DEBUG) return;
  try {
    writeSync(2, `baton: ${text}\n`);
  } catch {
    // nowhere to say it
  }
}

/** The request for the server, or why the command runs in this process. */
export function serverRequest(
  argv: readonly string[],
  cwd: string | undefined,
  env: NodeJS.ProcessEnv,
): { info: ServerInfo; command: string; body: Record<string, unknown>; conn: Connection } | { reason: string } {
  const command = argv[0] ?? "";
  const spec = COMMANDS[command];
  if (!spec) return { reason: `not a command the server answers (${command})` };
  let values: Record<string, unknown>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseCommandLine(argv.slice(1), spec.options));
  } catch {
    return { reason: "options the full command reads" };
  }
  if (positionals.length > spec.positionals || positionals.includes("") || Object.values(values).includes(""))
    return { reason: "options the full command reads" };
  if (values.json !== true) return { reason: "human output" };
  if (values.unpause !== undefined || values.reason !== undefined || values.lane !== undefined) return { reason: "resume --unpause" };
  // What the environment sets: the server answers only when it was started with the same.
  let settings: string;
  try {
    // The deprecated variable is warned about by the command itself.
    if (envOptions(env).deprecated) return { reason: "a deprecated setting in the environment" };
    settings = envSettings(env);
  } catch {
    return { reason: "settings from the environment" }; // a bad value: reported by the command
  }
  const root = (values.root as string | undefined) ?? (env.BATON_ROOT || undefined);
  let ws: Workspace | undefined;
  if (root) {
    ws = workspaceAt(root);
    if (findWorkspace(ws.root)?.root !== ws.root) return { reason: "no workspace there" };
  } else if (cwd === undefined) return { reason: "no working directory (it was removed) and no root" };
  else ws = findWorkspace(cwd);
  if (!ws) return { reason: "no workspace" };
  const trust = configTrust(ws.dir).state;
  if (trust !== "absent" && trust !== "trusted") return { reason: `.baton/config.json is ${trust}` };
  const info = provenServer(ws.dir);
  if (!info) return { reason: "no server" };
  if (info.version !== BUILD) return { reason: `the server is build ${info.version ?? "unknown"}, not ${BUILD}` };
  if (info.settings !== settings) return { reason: `the server runs with other settings (${info.settings ?? "unknown"}, not ${settings})` };
  if (!/^[A-Za-z0-9_-]+$/.test(info.token) || !Number.isInteger(info.port) || info.port <= 0 || info.port > 65535)
    return { reason: "server.json does not name a usable server" };
  // Connected at once: the server wakes while this process reads the store's settings (loopback.ts).
  const conn = open(info.port);
  let store: string;
  try {
    store = storeIdentity(describeStore(resolveStore(ws.dir, env, readConfigFile(ws.dir)), ws.dbPath));
  } catch {
    conn.destroy();
    return { reason: "the store configuration cannot be read" };
  }
  const body: Record<string, unknown> = { root: ws.root, store, settings };
  if (values.session !== undefined) body.session = values.session;
  if (values.all === true) body.all = true;
  if (positionals[0] !== undefined) body.id = positionals[0];
  return { info, command, body, conn };
}

/** The server's report as text, or why there is none. Never throws. */
function ask(
  info: ServerInfo,
  command: string,
  body: Record<string, unknown>,
  on: Connection,
): Promise<{ text: string } | { reason: string }> {
  const text = JSON.stringify(body);
  const request =
    `POST /v1/cli/${command} HTTP/1.1\r\nHost: 127.0.0.1:${info.port}\r\nAuthorization: Bearer ${info.token}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`;
  return new Promise((resolve) => {
    let received: Buffer = Buffer.alloc(0);
    let settled = false;
    let conn: Exchange | undefined;
    const finish = (o: { text: string } | { reason: string }) => {
      if (settled) return;
      settled = true;
      clearTimeout(acceptTimer);
      clearTimeout(answerTimer);
      conn?.destroy();
      resolve(o);
    };
    // Set once the request is on its way (below): a process's first timer costs ~0.3 ms.
    let acceptTimer: NodeJS.Timeout | undefined;
    let answerTimer: NodeJS.Timeout | undefined;
    const settle = (ended: boolean) => {
      if (received.indexOf("\r\n\r\n") >= 0) clearTimeout(acceptTimer);
      const r = parseResponse(received, ended);
      if (r === undefined) {
        if (ended) finish({ reason: "the server closed the connection without an answer" });
        return;
      }
      if (r.status !== 200) return finish({ reason: `the server answered ${r.status}` });
      try {
        const v = JSON.parse(r.body) as unknown;
        if (typeof v === "object" && v !== null && !Array.isArray(v)) return finish({ text: r.body });
      } catch {
        // not a report: below
      }
      finish({ reason: "the server's answer is not a report" });
    };
    conn = on.send(request, {
      data: (chunk) => {
        received = received.length === 0 ? chunk : Buffer.concat([received, chunk]);
        settle(false);
      },
      end: () => settle(true),
      error: (reason) => finish({ reason }),
    });
    if (settled) return;
    acceptTimer = setTimeout(() => finish({ reason: `the server did not take it within ${ACCEPT_MS} ms` }), ACCEPT_MS);
    answerTimer = setTimeout(() => finish({ reason: `the server did not answer within ${ANSWER_MS} ms` }), ANSWER_MS);
  });
}

function inProcess(reason: string): void {
  debug(`${process.argv[2]} ran in its own process: ${reason}`);
  // bin/baton.cjs provides a loader with a code cache; without it, a plain require.
  const load = (globalThis as Record<symbol, ((file: string) => void) | undefined>)[Symbol.for("baton.load")];
  if (load) load(`${__dirname}/cli.cjs`);
  else require("./cli.cjs");
}

async function main(): Promise<void> {
  let req: ReturnType<typeof serverRequest>;
  try {
    // Without a working directory (removed under the process), only an absolute root names a workspace.
    req = serverRequest(process.argv.slice(2), workingDir(), process.env);
  } catch (err) {
    return inProcess((err as Error).message); // the command reports it
  }
  if ("reason" in req) return inProcess(req.reason);
  const answer = await ask(req.info, req.command, req.body, req.conn);
  if ("reason" in answer) return inProcess(answer.reason);
  debug(`${req.command} answered by the server (pid ${req.info.pid})`);
  try {
    writeStdout(`${answer.text}\n`);
  } catch {
    // the reader closed the pipe: output ended, nothing failed
  }
}

void main();

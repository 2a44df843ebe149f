/**
 * Chapter 2, Delivery: a browser event reaches an agent that was not listening, survives that
 * agent's crash, and is finished exactly once.
 *
 * A real `baton serve --port 0` runs as a child process; this demo process plays the page and
 * sends the event over HTTP as the browser client does (bearer token from `.baton/server.json`,
 * JSON content type, the page's Host and Origin). The agents run the real `baton poll`, which
 * goes through the server; the first is killed with SIGKILL while it holds the lease.
 */
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, statSync } from "node:fs";
import { request } from "node:http";
import { LIVE_VARIANT_MARKERS as M } from "../core/flows/live-variant.js";
import { type Chapter, type CliCall, check, DemoFailure, type Json, nextOf, type Story, WIDTH, wrapAt } from "./shared.js";

const SESSION = "cta";
const FILE = "src/Cta.html";
const SERVER_FILE = ".baton/server.json";
const LEASE_MS = 1500;
const GENERATE = { variants: 3, element: ".cta" };
const RESULT = { type: "source_wrapped", data: { file: FILE } };
/** The agents' poll: this session's work, leased for 1.5 s, waiting up to 10 s for it. */
const POLL = ["poll", "--session", SESSION, "--lease-ms", String(LEASE_MS), "--timeout", "10000"];

const CTA_ORIGINAL = `<!doctype html>
<html lang="en">
<body>
  <a class="cta" href="#start">Get started</a>
</body>
</html>
`;

const CTA_WRAPPED = `<!doctype html>
<html lang="en">
<body>
  <!-- ${M.variantsStart} element=".cta" -->
    <div data-${M.original}>
      <a class="cta" href="#start">Get started</a>
    </div>
  <!-- ${M.variantsEnd} -->
</body>
</html>
`;

/**
 * The agent that gets killed: it runs the real `baton poll` (through the server, since one
 * runs), reports the lease it got, and then "works" on it until it is killed. Plain CommonJS
 * for `node -e`; configuration in argv[1].
 */
const POLLING_AGENT = String.raw`
const { execFileSync } = require("node:child_process");
const cfg = JSON.parse(process.argv[1]);
const say = (o) => process.stdout.write(JSON.stringify(o) + "\n");
say({ event: "polling", pid: process.pid });
const out = execFileSync(cfg.node, [...cfg.nodeArgs, cfg.cli, "--root", cfg.root, "--json", ...cfg.poll], { encoding: "utf8" });
say({ event: "leased", poll: JSON.parse(out) });
setTimeout(() => process.exit(0), 60000);
`;

interface HttpAnswer {
  status: number;
  json: Json;
  text: string;
}

/** POST a JSON body to the local server, with exactly these headers. */
function post(port: number, path: string, headers: Record<string, string>, body: string): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path,
        method: "POST",
        agent: false,
        timeout: 10_000,
        headers: { ...headers, "Content-Length": Buffer.byteLength(body) },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => {
          text += c;
        });
        res.on("end", () => {
          let json: Json;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, json, text });
        });
      },
    );
    req.on("timeout", () => req.destroy(new DemoFailure(`the server did not answer POST ${path} within 10 s`)));
    req.on("error", (err) => reject(err instanceof DemoFailure ? err : new DemoFailure(`POST ${path} failed: ${err.message}`)));
    req.end(body);
  });
}

function leaseLine(l: Json, via: string): string {
  return `attempt ${l.attempt}: ${l.item.kind} seq ${l.item.seq} via ${via}, lease ${l.leaseId} until ${l.expiresAt.slice(11, 23)}`;
}

function workLines(c: CliCall): string[] {
  const w = (c.json.sessions[0]?.pendingWork as Json[] | undefined) ?? [];
  if (w.length === 0) return ["pending work: none"];
  return w.map((x) =>
    x.state === "leased"
      ? `pending work: ${x.kind} (seq ${x.seq}) leased by ${x.lease.owner} until ${x.lease.expiresAt.slice(11, 23)}${x.lease.expired ? " (expired)" : ""}, attempt ${x.attempts}`
      : `pending work: ${x.kind} (seq ${x.seq}) ${x.state}, ${x.attempts} deliveries so far`,
  );
}

async function tell(s: Story): Promise<Record<string, unknown>> {
  const n = s.n;
  const inv = s.invocation;

  // 1. Session, file, server
  const fresh = !s.initialised;
  n.begin(
    "A second session, and the local server the page talks to",
    `${fresh ? "The workspace gets a journal (baton init). " : ""}A live-variant session starts for a call-to-action button. Then baton serve --port 0 starts as a child process on 127.0.0.1 and writes .baton/server.json (pid, port and token, mode 0600): that file is how the page's launcher and baton poll find the server.`,
  );
  s.ensureInit();
  s.write(FILE, CTA_ORIGINAL);
  n.note([`wrote ${FILE} (${CTA_ORIGINAL.split("\n").length - 1} lines, an <a class="cta">)`]);
  s.say(["session", "start", "--flow", "live-variant", "--id", SESSION, "--title", "Call-to-action button"], (c) => [
    `session ${c.json.sessionId}, flow ${c.json.flow}, phase ${c.json.phase}`,
  ]);
  const { child: server, command: serveCommand } = s.spawnCli(["serve", "--port", "0"], "the server", "SIGTERM");
  const started = await server.waitFor((m) => typeof m.url === "string", "print its URL");
  const file = JSON.parse(readFileSync(s.path(SERVER_FILE), "utf8")) as Json;
  const mode = statSync(s.path(SERVER_FILE)).mode & 0o777;
  n.exec(["baton serve --port 0 &"], serveCommand, [
    `${started.url} (pid ${server.pid})`,
    `${SERVER_FILE}: pid ${file.pid}, port ${file.port}, a ${String(file.token).length}-character token (not shown), mode ${mode.toString(8)}`,
  ]);
  check(file.pid === server.pid && file.pid === started.pid, `${SERVER_FILE} should name the server's pid ${server.pid}`, file.pid);
  check(
    file.port === started.port && typeof file.token === "string" && file.token.length > 0,
    `${SERVER_FILE} should hold the port and a token`,
    {
      port: file.port,
    },
  );
  check(mode === 0o600, `${SERVER_FILE} should be readable by its owner only (0600)`, mode.toString(8));
  const port = file.port as number;
  const token = file.token as string;
  n.end({
    sessionId: SESSION,
    file: FILE,
    server: { pid: server.pid, port, url: started.url },
    serverFile: { pid: file.pid, port: file.port, mode: mode.toString(8) },
  });

  // 2. Browser-style event while no agent polls
  n.begin(
    "The page asks for variants while no agent polls",
    "This demo process plays the page: it posts generate to the server over HTTP, with the token from server.json, the JSON content type and the Host and Origin the page would send. The server answers only once the event is committed. No agent is running, so baton status shows the request as pending work.",
  );
  const origin = `http://127.0.0.1:${port}`;
  const path = `/v1/sessions/${SESSION}/events`;
  const body = JSON.stringify({ type: "generate", id: `br-${randomBytes(6).toString("hex")}`, actor: "browser", data: GENERATE });
  const headers = { Host: `127.0.0.1:${port}`, Origin: origin, Authorization: `Bearer ${token}`, "Content-Type": "application/json" };
  const answer = await post(port, path, headers, body);
  const shownHeaders = Object.entries({ ...headers, Authorization: "Bearer <token from server.json>" }).map(([k, v]) => `${k}: ${v}`);
  n.exec(
    [`POST ${path} HTTP/1.1`, ...shownHeaders, "", ...wrapAt(body, WIDTH - 3)],
    `POST ${origin}${path} (${shownHeaders.join("; ")}) ${body}`,
    [
      `${answer.status}: seq ${answer.json?.seq} ${answer.json?.event?.type} (${answer.json?.event?.actor}): ${answer.json?.outcome}, phase ${answer.json?.phase}`,
    ],
    "",
  );
  check(answer.status === 201, "the server should answer 201 Created", { status: answer.status, body: answer.text });
  check(
    answer.json.phase === "generating" && answer.json.duplicate === false,
    "generate should move the session to generating",
    answer.json,
  );
  const seq = answer.json.seq as number;
  const st2 = s.say(["status", "--session", SESSION], (c) => [...workLines(c), ...nextOf(c.json.sessions[0])]);
  const pending2 = st2.json.sessions[0].pendingWork as Json[];
  check(
    pending2.length === 1 && pending2[0].kind === "generate" && pending2[0].seq === seq && pending2[0].state === "ready",
    `status should list generate (seq ${seq}) as ready pending work`,
    pending2,
  );
  n.end({
    post: { status: answer.status, seq, id: answer.json.id, outcome: answer.json.outcome, phase: answer.json.phase },
    pendingWork: pending2.map((w) => ({ itemId: w.itemId, kind: w.kind, seq: w.seq, state: w.state, attempts: w.attempts })),
    nextAction: st2.json.sessions[0].nextAction.action,
  });

  // 3. An agent leases it and is killed before acking
  n.begin(
    "An agent leases the work through the server and is killed before acking",
    `An agent process runs baton poll --lease-ms ${LEASE_MS}: the poll goes through the server (via: server), which hands it the work under a ${LEASE_MS / 1000} s lease. Before the agent can ack, it is killed with SIGKILL. The lease is now held by a process that no longer exists.`,
  );
  const { child: agent, command: agentCommand } = s.spawnScript(POLLING_AGENT, { ...inv, root: s.root, poll: POLL }, "the polling agent");
  n.ran(agentCommand);
  const got = await agent.waitFor((m) => m.event === "leased", "report its lease");
  const lease1 = got.poll?.lease as Json;
  n.exec([`node -e <agent script>   # pid ${agent.pid}, which runs:`, `baton ${POLL.join(" ")}`], agentCommand, [
    lease1 ? leaseLine(lease1, got.poll.via) : `no lease: ${JSON.stringify(got.poll)}`,
  ]);
  check(lease1 && got.poll.via === "server", "the agent's poll should lease the work through the server", got.poll);
  check(lease1.attempt === 1 && lease1.item.itemId === pending2[0].itemId, "the first delivery should be attempt 1 of that item", lease1);
  const pid = agent.pid;
  agent.proc.kill("SIGKILL");
  const exit = await agent.exited();
  check(exit.signal === "SIGKILL", "the agent should have died of SIGKILL", exit);
  n.note([`kill -KILL ${pid} → the agent exited with signal ${exit.signal}, its lease not acked`]);
  const st3 = s.say(["status", "--session", SESSION], workLines);
  const w3 = (st3.json.sessions[0].pendingWork as Json[])[0];
  check(
    w3?.state === "leased" && w3.lease?.leaseId === lease1.leaseId && w3.lease?.owner?.startsWith(`cli:${pid}@`) === true,
    `the work should still be leased to the killed agent (cli:${pid})`,
    w3,
  );
  n.end({
    pid,
    signal: exit.signal,
    lease: { leaseId: lease1.leaseId, attempt: lease1.attempt, via: got.poll.via, owner: lease1.owner, expiresAt: lease1.expiresAt },
    pendingWork: { state: w3.state, owner: w3.lease.owner },
  });

  // 4. Redelivery
  n.begin(
    "The lease runs out; a fresh poll gets the same work again",
    "Nobody acked, so nothing is lost. A fresh baton poll waits on the server until the dead agent's lease expires, then gets the same item again: attempt 2, under a new lease id.",
  );
  const t0 = Date.now();
  const p4 = s.say(POLL, (c) => [
    c.json.lease ? leaseLine(c.json.lease, c.json.via) : "no lease",
    `waited ${((Date.now() - t0) / 1000).toFixed(1)} s, until the first lease expired`,
  ]);
  const lease2 = p4.json.lease as Json;
  check(lease2 && p4.json.via === "server", "the fresh poll should lease the work through the server", p4.json);
  check(
    lease2.attempt === 2 && lease2.item.itemId === lease1.item.itemId && lease2.item.seq === seq && lease2.leaseId !== lease1.leaseId,
    `the redelivery should be attempt 2 of ${lease1.item.itemId} under a new lease`,
    lease2,
  );
  check(
    Date.parse(lease2.expiresAt) - LEASE_MS >= Date.parse(lease1.expiresAt),
    "the work should be redelivered only once the first lease expired",
    { first: lease1.expiresAt, second: lease2.expiresAt },
  );
  n.end({
    lease: {
      leaseId: lease2.leaseId,
      attempt: lease2.attempt,
      via: p4.json.via,
      itemId: lease2.item.itemId,
      seq: lease2.item.seq,
      expiresAt: lease2.expiresAt,
    },
    sameItem: lease2.item.itemId === lease1.item.itemId,
    firstLeaseExpiredAt: lease1.expiresAt,
  });

  // 5. Ack once
  n.begin(
    "The agent does the work and acks; a repeated ack is a duplicate",
    "The agent wraps the button in variant markers and acks with its result: the source_wrapped event is journaled in the ack's own transaction. The same ack again changes nothing (duplicate), and the killed agent's old lease can no longer finish the work (lease_lost).",
  );
  s.write(FILE, CTA_WRAPPED);
  n.note([`wrapped the button in ${FILE} (${M.variantsStart}, ${M.original}, ${M.variantsEnd})`]);
  const ackArgs = ["ack", lease2.leaseId, "--result", JSON.stringify(RESULT)];
  const ack = s.say(ackArgs, (c) => [
    `duplicate: ${c.json.duplicate}; seq ${c.json.result?.event.seq} ${c.json.result?.event.type}: ${c.json.result?.outcome}, phase ${c.json.result?.phase}`,
  ]);
  check(
    ack.json.duplicate === false && ack.json.result?.event?.type === "source_wrapped",
    "the ack should journal source_wrapped",
    ack.json,
  );
  check(ack.json.result.phase === "source_wrapped", "the ack's result should move the session to source_wrapped", ack.json.result);
  const again = s.say(ackArgs, (c) => [`duplicate: ${c.json.duplicate}; nothing new in the journal`]);
  check(again.json.duplicate === true && again.json.result === undefined, "a repeated ack should be a duplicate", again.json);
  const stale = s.say(["ack", lease1.leaseId], (c) => [`exit ${c.code}: ${c.json?.error?.code}`], 3);
  check(stale.json?.error?.code === "lease_lost", "the killed agent's lease should be lease_lost", stale.json);
  const st5 = s.say(["status", "--session", SESSION], (c) => [...workLines(c), ...nextOf(c.json.sessions[0])]);
  const s5 = st5.json.sessions[0];
  check((s5.pendingWork as Json[]).length === 0, "no work should be pending after the ack", s5.pendingWork);
  // The wrapper holds only the original so far: the file's markers say what is next.
  check(s5.nextAction?.action === "continue_writing_variants", "the next action should be continue_writing_variants", s5.nextAction);
  n.end({
    ack: { leaseId: lease2.leaseId, duplicate: ack.json.duplicate, resultSeq: ack.json.result.event.seq, phase: ack.json.result.phase },
    repeat: { duplicate: again.json.duplicate },
    staleLease: { leaseId: lease1.leaseId, exitCode: stale.code, error: stale.json.error.code },
    pendingWork: 0,
    phase: s5.phase,
    nextAction: s5.nextAction.action,
  });

  // 6. Stop the server
  n.begin(
    "The server stops, and its discovery file goes with it",
    "SIGTERM stops the server cleanly: it removes .baton/server.json and exits. From then on baton poll waits on the database directly (via: database).",
  );
  server.proc.kill("SIGTERM");
  const stopped = await server.exitedWithin(10_000, "exit after SIGTERM");
  const removed = !existsSync(s.path(SERVER_FILE));
  n.ran(`kill -TERM ${server.pid}`);
  n.note([
    `kill -TERM ${server.pid} → the server exited with code ${stopped.code}; ${SERVER_FILE} ${removed ? "removed" : "still there!"}`,
  ]);
  check(stopped.code === 0, "the server should exit 0 after SIGTERM", stopped);
  check(removed, `${SERVER_FILE} should be removed when the server stops`, { serverFile: "still there" });
  const p6 = s.say(["poll", "--session", SESSION, "--timeout", "0"], (c) => [
    `via ${c.json.via}: ${c.json.lease ? "a lease?!" : "no work"}`,
  ]);
  check(p6.json.via === "database" && p6.json.lease === null, "without a server, poll should use the database and find no work", p6.json);
  n.end({ signal: "SIGTERM", exitCode: stopped.code, serverFileRemoved: removed, poll: { via: p6.json.via, lease: p6.json.lease } });

  return {
    sessionId: SESSION,
    seq,
    itemId: lease2.item.itemId,
    killedPid: pid,
    attempts: lease2.attempt,
    duplicateAck: again.json.duplicate,
    serverFileRemoved: removed,
    phase: s5.phase,
  };
}

export const deliveryChapter: Chapter = {
  number: 2,
  name: "Delivery",
  tagline: "A browser event sent while no agent polls survives the crash of the agent that leased it, and is finished exactly once.",
  tell,
  summary: (r) => [
    `The page's generate (seq ${r.seq}) was durable before any agent polled, and status listed it as pending work. The agent that leased it through the server was killed (pid ${r.killedPid}); once its ${LEASE_MS / 1000} s lease ran out a fresh poll got ${r.itemId} again as attempt ${r.attempts}, acked it with source_wrapped, and the repeated ack was a duplicate.`,
    `The server stopped on SIGTERM and removed ${SERVER_FILE}; session ${SESSION} waits, in phase ${r.phase}, for its variants.`,
  ],
};

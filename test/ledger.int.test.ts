/**
 * The trajectory ledger end to end: recording through `Baton` (and the CLI), caps, restart,
 * failures that must not fail the caller, the canary scan of every byte written, and OTLP
 * export to a real HTTP server.
 */
import { once } from "node:events";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { Backend } from "../src/backend/contract.js";
import { SqliteBackend } from "../src/backend/sqlite/sqlite-backend.js";
import { type InternalOpenOptions as OpenBatonOptions, openBaton } from "../src/compose.js";
import { type Baton, BatonError, isBatonError, type LedgerNode } from "../src/index.js";
import { ensureWorkspace, workspaceAt } from "../src/platform/workspace.js";
import { CLI, cleanupDirs, cli, spawnTracked, tempDir } from "./helpers.js";

const open: Baton[] = [];
afterEach(async () => {
  for (const b of open.splice(0)) await b.close();
});
afterAll(() => cleanupDirs());

async function fresh(opts: Omit<OpenBatonOptions, "root"> = {}, root = tempDir()): Promise<{ baton: Baton; root: string }> {
  const baton = await openBaton({ root, ...opts });
  open.push(baton);
  return { baton, root };
}

async function withSession(opts: Omit<OpenBatonOptions, "root"> = {}, id = "s1") {
  const r = await fresh(opts);
  await r.baton.sessions.start({ flow: "task", id });
  return r;
}

/** A backend whose write transactions fail with io_error while `fail.on` (reads still work). */
function failingBackend(inner: Backend, fail: { on: boolean }): Backend {
  return {
    kind: inner.kind,
    capabilities: inner.capabilities,
    transaction: (mode, fn, opts) =>
      fail.on && mode === "write"
        ? Promise.reject(new BatonError("io_error", "committing: disk I/O error (simulated); check the disk"))
        : inner.transaction(mode, fn, opts),
    onChange: (l) => inner.onChange(l),
    integrityCheck: () => inner.integrityCheck(),
    close: () => inner.close(),
  };
}

describe("recording tool calls", () => {
  it("records success, error and recovery with parents, and reads them back after a restart", async () => {
    const { baton, root } = await withSession();
    const a = await baton.ledger.record("s1", {
      toolName: "click",
      status: "error",
      args: { selector: "#buy" },
      error: "element is detached from the DOM",
    });
    const b = await baton.ledger.record("s1", { toolName: "read_page", status: "success", args: { url: "https://shop.test/cart" } });
    const c = await baton.ledger.record("s1", {
      toolName: "click",
      status: "success",
      args: { selector: "#buy" },
      observation: "ordered",
    });
    const d = await baton.ledger.record("s1", { toolName: "wait", status: "no_progress", progress: "stalled" });
    expect(a).toMatchObject({ seq: 1, status: "error" });
    expect(a?.parentNodeId).toBeUndefined();
    expect(a?.fingerprint).toMatch(/^fp-/);
    expect(b).toMatchObject({ seq: 2, parentNodeId: a?.nodeId, status: "success" });
    expect(c).toMatchObject({ seq: 3, parentNodeId: b?.nodeId, status: "recovered", recovers: a?.nodeId, recoveryTool: "read_page" });
    expect(d).toMatchObject({ seq: 4, status: "no_progress", progress: "stalled" });
    const before = await baton.ledger.list("s1");
    await baton.close();
    open.length = 0;

    const { baton: again } = await fresh({}, root);
    expect(await again.ledger.list("s1")).toEqual(before);
    expect(await again.ledger.node(c?.nodeId as string)).toEqual(c);
    expect((await again.ledger.list("s1", { status: "recovered" })).map((n) => n.seq)).toEqual([3]);
    expect((await again.ledger.list("s1", { tool: "click", limit: 1 })).map((n) => n.seq)).toEqual([3]);
    // The next node continues the session's chain after the restart.
    expect(await again.ledger.record("s1", { toolName: "Read", status: "success" })).toMatchObject({ seq: 5, parentNodeId: d?.nodeId });
    await expect(again.ledger.node("ln-nope")).rejects.toSatisfy((e) => isBatonError(e, "not_found"));
  });

  it("group-commits concurrent records: contiguous seqs, each node the parent of the next", async () => {
    const { baton } = await withSession();
    const nodes = await Promise.all(
      Array.from({ length: 60 }, (_, i) => baton.ledger.record("s1", { toolName: `t${i % 3}`, status: "success" })),
    );
    expect(nodes.map((n) => n?.seq)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    for (let i = 1; i < nodes.length; i++) expect(nodes[i]?.parentNodeId).toBe(nodes[i - 1]?.nodeId);
  });

  it("is idempotent on a caller's nodeId", async () => {
    const { baton } = await withSession();
    const first = await baton.ledger.record("s1", { nodeId: "hook-42", toolName: "Edit", status: "success" });
    const again = await baton.ledger.record("s1", { nodeId: "hook-42", toolName: "Edit", status: "success" });
    expect(again).toEqual(first);
    expect(await baton.ledger.list("s1")).toHaveLength(1);
  });

  it("caps nodes per session: the session's oldest are pruned, other sessions untouched", async () => {
    const { baton } = await withSession({ ledger: { maxNodesPerSession: 5 } });
    await baton.sessions.start({ flow: "task", id: "s2" });
    await baton.ledger.record("s2", { toolName: "other", status: "success" });
    for (let i = 0; i < 9; i++) await baton.ledger.record("s1", { toolName: "Read", status: "success", args: { file_path: `f${i}` } });
    expect((await baton.ledger.list("s1")).map((n) => n.seq)).toEqual([5, 6, 7, 8, 9]);
    expect(await baton.ledger.list("s2")).toHaveLength(1);
  });

  it("caps the whole ledger's size: the oldest nodes of any session go first", async () => {
    const maxTotalBytes = 16 * 1024;
    const { baton, root } = await withSession({ ledger: { maxNodeBytes: 1024, maxTotalBytes } });
    await baton.sessions.start({ flow: "task", id: "s2" });
    const observation = "some output line ".repeat(40); // ~700 bytes per node
    const firsts: LedgerNode[] = [];
    for (let i = 0; i < 80; i++) {
      const n = await baton.ledger.record(i % 2 ? "s1" : "s2", { toolName: "Bash", status: "success", observation });
      if (i < 2 && n) firsts.push(n);
    }
    const db = new Database(join(root, ".baton", "baton.db"), { readonly: true });
    try {
      const totals = db.prepare("SELECT nodes, bytes FROM ledger_totals").get() as { nodes: number; bytes: number };
      const actual = db.prepare("SELECT count(*) AS nodes, sum(bytes) AS bytes FROM ledger_nodes").get() as {
        nodes: number;
        bytes: number;
      };
      expect(totals).toEqual(actual);
      expect(totals.bytes).toBeLessThanOrEqual(maxTotalBytes);
      expect(totals.nodes).toBeGreaterThan(10);
    } finally {
      db.close();
    }
    for (const f of firsts) await expect(baton.ledger.node(f.nodeId)).rejects.toSatisfy((e) => isBatonError(e, "not_found"));
    const s1 = await baton.ledger.list("s1");
    expect(s1.at(-1)?.seq).toBe(40);
  });

  it("shrinks an oversized node to the byte cap, keeping its core fields", async () => {
    const { baton } = await withSession({ ledger: { maxNodeBytes: 1024 } });
    const big = Array.from({ length: 300 }, (_, i) => `word${i}`).join(" ");
    const n = await baton.ledger.record("s1", {
      toolName: "Write",
      status: "error",
      args: { file_path: "src/x.ts", parts: Array.from({ length: 40 }, (_, i) => ({ i, text: big.slice(0, 200) })) },
      error: `Error: ${big}`,
      observation: big,
      workflowId: "wf",
      tabId: "tab",
    });
    expect(n?.shrunk).toBeGreaterThan(0);
    expect(Buffer.byteLength(JSON.stringify(n))).toBeLessThanOrEqual(1024);
    expect(n).toMatchObject({ seq: 1, toolName: "Write", status: "error", workflowId: "wf", tabId: "tab" });
    expect(n?.fingerprint).toMatch(/^fp-/);
    expect(n?.argsHash).toMatch(/^sha256:/);
    expect(await baton.ledger.node(n?.nodeId as string)).toEqual(n);
  });
});

describe("a ledger write never fails the caller", () => {
  it("an I/O error resolves undefined, is counted in ledgerHealth() and stays counted after a restart", async () => {
    const root = tempDir();
    const ws = workspaceAt(root);
    ensureWorkspace(ws);
    const fail = { on: false };
    const { baton } = await fresh({ backend: failingBackend(new SqliteBackend({ path: ws.dbPath }), fail) }, root);
    await baton.sessions.start({ flow: "task", id: "s1" });
    expect(baton.ledger.health()).toEqual({ writeFailures: 0, lastError: null, lastAt: null });
    fail.on = true;
    await expect(baton.ledger.record("s1", { toolName: "Edit", status: "success" })).resolves.toBeUndefined();
    const many = await Promise.all([1, 2, 3].map(() => baton.ledger.record("s1", { toolName: "Edit", status: "success" })));
    expect(many).toEqual([undefined, undefined, undefined]);
    const h = baton.ledger.health();
    expect(h.writeFailures).toBe(4);
    expect(h.lastError).toMatch(/io_error|disk I\/O/);
    expect(h.lastAt).toMatch(/^\d{4}-/);
    fail.on = false;
    expect(await baton.ledger.record("s1", { toolName: "Edit", status: "success" })).toMatchObject({ seq: 1 });
    await baton.close();
    open.length = 0;

    const { baton: again } = await fresh({}, root);
    expect(again.ledger.health()).toMatchObject({ writeFailures: 4, lastError: h.lastError });
    expect(JSON.parse(readFileSync(join(root, ".baton", "ledger-failures.json"), "utf8")).writeFailures).toBe(4);
  });

  it("a database locked by another process past the busy timeout is a counted failure, not a throw", async () => {
    const { baton, root } = await withSession({ busyTimeoutMs: 100 });
    const other = new Database(join(root, ".baton", "baton.db"));
    try {
      other.exec("BEGIN IMMEDIATE");
      await expect(baton.ledger.record("s1", { toolName: "Edit", status: "success" })).resolves.toBeUndefined();
      expect(baton.ledger.health()).toMatchObject({ writeFailures: 1 });
      expect(baton.ledger.health().lastError).toMatch(/storage_busy|locked/);
    } finally {
      other.exec("ROLLBACK");
      other.close();
    }
    expect(await baton.ledger.record("s1", { toolName: "Edit", status: "success" })).toMatchObject({ seq: 1 });
  });

  it("an unknown session and unrecordable input are counted too", async () => {
    const { baton } = await withSession();
    await expect(baton.ledger.record("nope", { toolName: "Edit", status: "success" })).resolves.toBeUndefined();
    await expect(baton.ledger.record("s1", { toolName: "Edit", status: "weird" as "success" })).resolves.toBeUndefined();
    await expect(baton.ledger.record("s1", null as never)).resolves.toBeUndefined();
    expect(baton.ledger.health().writeFailures).toBe(3);
  });

  it("when the failure file cannot be written either, the count is kept in memory", async () => {
    const root = tempDir();
    const ws = workspaceAt(root);
    ensureWorkspace(ws);
    mkdirSync(join(ws.dir, "ledger-failures.json")); // a directory where the file should be: rename fails, even as root
    const fail = { on: false };
    const { baton } = await fresh({ backend: failingBackend(new SqliteBackend({ path: ws.dbPath }), fail) }, root);
    await baton.sessions.start({ flow: "task", id: "s1" });
    fail.on = true;
    await baton.ledger.record("s1", { toolName: "Edit", status: "success" });
    await baton.ledger.record("s1", { toolName: "Edit", status: "success" });
    expect(baton.ledger.health()).toMatchObject({ writeFailures: 2 });
    expect(readdirSync(ws.dir).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });
});

/** Secrets of every category, each a unique string that must never appear in a stored or exported byte. */
const CANARIES = {
  awsKey: "AKIAQ7Z3X9W2V5CANARY",
  awsSecret: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYCANARY0001",
  gcpKey: "MIIEvQIBADANBgkqhkiG9w0CANARYgcp",
  azureKey: "Zm9vYmFyCANARYazure0123456789+/==",
  azureClient: "CANARYazureClientSecret0123456789",
  github: "ghp_CANARYgithub0123456789abcdefghijklmn",
  githubPat: "github_pat_11ABCDEFG0CANARY_abcdefghijklmnopqrstuvwxyz0123456789",
  gitlab: "glpat-CANARYgitlab0123456789ab",
  slack: "xoxb-123456789012-CANARYslack0123456789",
  stripe: "sk_live_CANARYstripe0123456789abcdef",
  openai: "sk-proj-CANARYopenai0123456789abcdefghijkl",
  anthropic: "sk-ant-api03-CANARYanthropic0123456789abcdefgh",
  jwt: "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJDQU5BUllqd3QifQ.c2lnbmF0dXJlQ0FOQVJZand0",
  rsa: "MIIEowIBAAKCAQEACANARYrsa",
  pgPass: "CANARYpgPass99",
  dotenv: "CANARYdotenv77",
  urlToken: "CANARYurltoken1",
  urlSig: "CANARYurlsig2",
  bearer: "CANARYbearer0123456789",
  cookie: "CANARYcookie0123",
  formPassword: "CANARYformpw",
  formValue: "CANARYformvalue",
  keyPassword: "CANARYkeypw1",
  keyToken: "CANARYkeytok2",
  keyApi: "CANARYkeyapi3",
  keyAuth: "CANARYkeyauth4",
  otp: "CANARY834512",
  dom: "CANARYdom",
  screenshot: "CANARYpng",
  card: "4111 1111 1111 1111",
};

async function plantCanaries(baton: Baton): Promise<void> {
  const C = CANARIES;
  const calls = [
    baton.ledger.record("s1", {
      toolName: "Bash",
      status: "error",
      args: {
        command: `AWS_ACCESS_KEY_ID=${C.awsKey} aws_secret_access_key=${C.awsSecret} psql postgres://admin:${C.pgPass}@db:5432/app`,
        env: {
          SECRET: C.dotenv,
          password: C.keyPassword,
          accessToken: C.keyToken,
          "x-api-key": C.keyApi,
          AUTH_HEADER: C.keyAuth,
          otp: C.otp,
        },
      },
      error: `401 Unauthorized: token ${C.github} rejected; Authorization: Bearer ${C.bearer}\nCookie: session=${C.cookie}; theme=dark`,
      observation: `{"type":"service_account","private_key":"-----BEGIN PRIVATE KEY-----\\n${C.gcpKey}\\n-----END PRIVATE KEY-----\\n"}`,
    }),
    baton.ledger.record("s1", {
      toolName: "WebFetch",
      status: "success",
      args: {
        url: `https://api.example.com/cb?page=2&access_token=${C.urlToken}&sig=${C.urlSig}`,
        headers: { Authorization: `Bearer ${C.bearer}` },
      },
      observation: `DefaultEndpointsProtocol=https;AccountName=a;AccountKey=${C.azureKey};EndpointSuffix=core.windows.net\nclient secret abc8Q~${C.azureClient}\n${C.gitlab} ${C.slack} ${C.stripe}`,
    }),
    baton.ledger.record("s1", {
      toolName: "Edit",
      status: "no_progress",
      args: { file_path: ".env", old_string: `OPENAI_API_KEY=${C.openai}`, new_string: `ANTHROPIC_API_KEY=${C.anthropic}` },
      error: `jwt ${C.jwt} expired; key -----BEGIN RSA PRIVATE KEY-----\n${C.rsa}\n-----END RSA PRIVATE KEY-----`,
      observation: `pat ${C.githubPat} card ${C.card}`,
    }),
    baton.ledger.record("s1", {
      toolName: "browser_type",
      status: "success",
      args: { element: "Password", ref: "e7", text: C.formPassword },
    }),
    baton.ledger.record("s1", { toolName: "fill", status: "success", args: { uid: "e12", value: C.formValue } }),
    baton.ledger.record("s1", {
      toolName: "browser_snapshot",
      status: "success",
      args: { screenshot: `iVBORw0KGgo${C.screenshot}${"A".repeat(600)}` },
      observation: `<html><body>${"<p>row</p>".repeat(60)}<input type="hidden" value="${C.dom}"></body></html>`,
      evidence: { handle: "art-1", kind: "screenshot", mediaType: "image/png", bytes: 5120 },
    }),
  ];
  const nodes = await Promise.all(calls);
  expect(nodes.every((n) => n !== undefined)).toBe(true);
}

function leaks(haystack: Buffer | string, where: string): string[] {
  const buf = typeof haystack === "string" ? Buffer.from(haystack) : haystack;
  return Object.entries(CANARIES)
    .filter(([, secret]) => buf.includes(Buffer.from(secret)))
    .map(([name]) => `${name} in ${where}`);
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((e) => {
    const p = join(dir, e);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

/** A real HTTP server standing in for an OTLP collector; records every request. */
async function collector(
  status = 200,
): Promise<{ url: string; requests: { url: string; headers: Record<string, unknown>; body: string }[]; server: Server }> {
  const requests: { url: string; headers: Record<string, unknown>; body: string }[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => {
      body += c;
    });
    req.on("end", () => {
      requests.push({ url: req.url ?? "", headers: req.headers, body });
      res.writeHead(status, { "content-type": "application/json" });
      res.end(status === 200 ? "{}" : '{"message":"collector says no"}');
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, server };
}

describe("no secret is stored or exported (canary scan)", () => {
  it("finds none of the planted secrets in the database, its WAL, or any export", async () => {
    const { baton, root } = await withSession();
    await plantCanaries(baton);
    const dir = join(root, ".baton");
    const found: string[] = [];
    // While open: the database file and its WAL (the commits are still in the WAL).
    const wal = join(dir, "baton.db-wal");
    expect(statSync(wal).size).toBeGreaterThan(0);
    for (const f of filesUnder(dir)) found.push(...leaks(readFileSync(f), f));

    // Exports: JSON Lines, OTLP lines, OTLP over HTTP, and the CLI's file export.
    let jsonl = "";
    for await (const l of baton.ledger.export({ sessionId: "s1" })) jsonl += l;
    expect(jsonl.trim().split("\n")).toHaveLength(6);
    found.push(...leaks(jsonl, "JSONL export"));
    let otlp = "";
    for await (const l of baton.ledger.export({ sessionId: "s1", format: "otlp" })) otlp += l;
    found.push(...leaks(otlp, "OTLP export"));
    const c = await collector();
    try {
      await baton.ledger.sendOtlp({ endpoint: c.url, sessionId: "s1" });
    } finally {
      c.server.close();
    }
    found.push(...leaks(c.requests.map((r) => r.body).join("\n"), "OTLP/HTTP body"));
    const health = JSON.stringify(baton.ledger.health());
    found.push(...leaks(health, "ledger health"));
    await baton.close();
    open.length = 0;

    const out = join(tempDir(), "ledger.jsonl");
    const r = cli(["ledger", "export", "--root", root, "--session", "s1", "--format", "otlp", "--out", out, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    found.push(...leaks(readFileSync(out), "CLI OTLP file"));
    // After close: the checkpointed database and anything else under .baton/.
    for (const f of filesUnder(dir)) found.push(...leaks(readFileSync(f), f));
    expect(found).toEqual([]);
    // The redaction did happen (and the nodes are still useful).
    expect(jsonl).toContain("[redacted:");
    expect(jsonl).toMatch(/sha256:[0-9a-f]{16}/);
    expect(jsonl).toContain('"evidence":{"handle":"art-1"');
  });

  it("secrets in the CLI's arguments never reach storage either", async () => {
    const { baton, root } = await withSession();
    await baton.close();
    open.length = 0;
    const r = cli([
      "ledger",
      "record",
      "--root",
      root,
      "--tool",
      "Bash",
      "--status",
      "error",
      "--args",
      JSON.stringify({ command: `curl -u admin:${CANARIES.pgPass} https://x`, token: CANARIES.keyToken }),
      "--error",
      `bad credentials ${CANARIES.github}`,
      "--observation",
      `Set-Cookie: sid=${CANARIES.cookie}; HttpOnly`,
      "--json",
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().recorded).toBe(true);
    expect(leaks(r.stdout, "CLI output")).toEqual([]);
    for (const f of filesUnder(join(root, ".baton"))) expect(leaks(readFileSync(f), f)).toEqual([]);
  });
});

describe("OpenTelemetry export", () => {
  it("POSTs OTLP/JSON spans to <endpoint>/v1/traces of a real HTTP server", async () => {
    const { baton } = await withSession();
    const fail = await baton.ledger.record("s1", {
      toolName: "click",
      status: "error",
      args: { selector: "#buy" },
      error: "detached",
      durationMs: 40,
    });
    await baton.ledger.record("s1", { toolName: "read_page", status: "success" });
    const ok = await baton.ledger.record("s1", { toolName: "click", status: "success", args: { selector: "#buy" } });
    const c = await collector();
    try {
      const r = await baton.ledger.sendOtlp({
        endpoint: `${c.url}/`,
        headers: { authorization: "Bearer collector-key-1" },
        sessionId: "s1",
      });
      expect(r).toEqual({ url: `${c.url}/v1/traces`, requests: 1, spans: 3 });
    } finally {
      c.server.close();
    }
    expect(c.requests).toHaveLength(1);
    const req = c.requests[0] as { url: string; headers: Record<string, unknown>; body: string };
    expect(req.url).toBe("/v1/traces");
    expect(req.headers["content-type"]).toBe("application/json");
    expect(req.headers.authorization).toBe("Bearer collector-key-1");
    const spans = JSON.parse(req.body).resourceSpans[0].scopeSpans[0].spans;
    expect(spans).toHaveLength(3);
    const attrs = (s: { attributes: { key: string; value: Record<string, unknown> }[] }) =>
      Object.fromEntries(s.attributes.map((a) => [a.key, Object.values(a.value)[0]]));
    expect(attrs(spans[0])).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "click",
      "gen_ai.tool.call.id": fail?.nodeId,
      "error.type": fail?.fingerprint,
      "baton.ledger.status": "error",
    });
    expect(spans[0].status.code).toBe(2);
    expect(attrs(spans[2])).toMatchObject({
      "baton.ledger.status": "recovered",
      "baton.ledger.recovers": fail?.nodeId,
      "gen_ai.tool.call.id": ok?.nodeId,
    });
    expect(new Set(spans.map((s: { traceId: string }) => s.traceId)).size).toBe(1);
  });

  it("reports a collector that refuses (export_failed), and one that is not there", async () => {
    const { baton } = await withSession();
    await baton.ledger.record("s1", { toolName: "Read", status: "success" });
    const c = await collector(503);
    try {
      await expect(baton.ledger.sendOtlp({ endpoint: c.url })).rejects.toSatisfy(
        (e) => isBatonError(e, "export_failed") && /503/.test((e as Error).message),
      );
    } finally {
      c.server.close();
    }
    await expect(baton.ledger.sendOtlp({ endpoint: c.url, timeoutMs: 2000 })).rejects.toSatisfy((e) => isBatonError(e, "export_failed"));
    await expect(baton.ledger.sendOtlp({ endpoint: "ftp://x" })).rejects.toSatisfy((e) => isBatonError(e, "bad_input"));
  });
});

describe("baton ledger (CLI)", () => {
  it("record, list, show, export, health", async () => {
    const { baton, root } = await withSession();
    await baton.close();
    open.length = 0;
    const run = (...args: string[]) => cli([...args, "--root", root, "--json"]);
    const e = run(
      "ledger",
      "record",
      "--tool",
      "Edit",
      "--status",
      "error",
      "--args",
      '{"file_path":"a.ts"}',
      "--error",
      "old_string not found",
    );
    expect(e.code, e.stderr).toBe(0);
    const failed = e.json().node;
    expect(failed).toMatchObject({ seq: 1, toolName: "Edit", status: "error" });
    run("ledger", "record", "--tool", "Read", "--status", "success", "--args", '{"file_path":"a.ts"}');
    const ok = run(
      "ledger",
      "record",
      "--tool",
      "Edit",
      "--status",
      "success",
      "--args",
      '{"file_path":"a.ts"}',
      "--duration-ms",
      "12",
    ).json().node;
    expect(ok).toMatchObject({ seq: 3, status: "recovered", recovers: failed.nodeId, recoveryTool: "Read", durationMs: 12 });
    // Plain text arguments are kept as text (redacted).
    expect(run("ledger", "record", "--tool", "Bash", "--status", "success", "--args", "ls -la").json().node.args).toBe("ls -la");

    const list = run("ledger", "list");
    expect(list.json().nodes.map((n: LedgerNode) => n.seq)).toEqual([1, 2, 3, 4]);
    expect(run("ledger", "list", "--status", "recovered").json().nodes).toHaveLength(1);
    expect(run("ledger", "show", ok.nodeId).json().node).toEqual(ok);
    const human = cli(["ledger", "list", "--root", root]);
    expect(human.stdout).toContain(`#3 ${ok.at} Edit recovered (recovers ${failed.nodeId}, via Read)`);

    const out = join(tempDir(), "nodes.jsonl");
    expect(run("ledger", "export", "--out", out).json()).toMatchObject({ lines: 4, format: "jsonl" });
    expect(
      readFileSync(out, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).seq),
    ).toEqual([1, 2, 3, 4]);
    const stdout = cli(["ledger", "export", "--root", root, "--format", "otlp"]);
    expect(JSON.parse(stdout.stdout).resourceSpans[0].scopeSpans[0].spans).toHaveLength(4);
    expect(run("ledger", "health").json()).toEqual({ writeFailures: 0, lastError: null, lastAt: null });

    // The CLI posts to a real collector (an async child: this process's server must answer it).
    const c = await collector();
    try {
      const child = spawnTracked(process.execPath, [
        CLI,
        "ledger",
        "export",
        "--root",
        root,
        "--endpoint",
        c.url,
        "--header",
        "x-team=core",
        "--json",
      ]);
      let stdoutText = "";
      child.stdout?.on("data", (d) => {
        stdoutText += d;
      });
      const [code] = await once(child, "exit");
      expect(code).toBe(0);
      expect(JSON.parse(stdoutText)).toMatchObject({ sessionId: "s1", requests: 1, spans: 4 });
    } finally {
      c.server.close();
    }
    expect(c.requests[0]?.headers["x-team"]).toBe("core");
  });

  it("input errors exit 2, an unknown session 4; a storage failure exits 0 and is counted", async () => {
    const { baton, root } = await withSession();
    await baton.close();
    open.length = 0;
    const run = (...args: string[]) => cli([...args, "--root", root, "--json"]);
    const bad = run("ledger", "record", "--tool", "Edit", "--status", "finished");
    expect(bad.code).toBe(2);
    expect(bad.json().error.code).toBe("bad_input");
    expect(run("ledger", "record", "--tool", "Edit", "--status", "success", "--id", "has space").code).toBe(2);
    expect(run("ledger", "record", "--tool", "Edit", "--status", "success", "--reward", "lots").code).toBe(2);
    expect(run("ledger", "record", "--tool", "Edit").code).toBe(2);
    expect(run("ledger", "record", "--tool", "Edit", "--status", "success", "--session", "nope").code).toBe(4);
    expect(run("ledger", "show", "ln-missing").code).toBe(4);
    expect(run("ledger", "export", "--endpoint", "http://127.0.0.1:9", "--out", "x").code).toBe(2);
    // A header value that is not valid percent-encoding: said, not an internal URIError.
    const header = run("ledger", "export", "--all", "--format", "otlp", "--endpoint", "http://127.0.0.1:9", "--header", "a=%E0%A4%A");
    expect([header.code, header.json().error.code]).toEqual([2, "bad_input"]);
    expect(header.json().error.message).toMatch(/--header: the value of "a" is not valid percent-encoding/);

    // A trigger that refuses ledger inserts stands in for a failing disk: the CLI still exits 0.
    const db = new Database(join(root, ".baton", "baton.db"));
    db.exec("CREATE TRIGGER refuse BEFORE INSERT ON ledger_nodes BEGIN SELECT RAISE(ABORT, 'simulated write failure'); END");
    db.close();
    const r = run("ledger", "record", "--tool", "Edit", "--status", "success");
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ recorded: false, health: { writeFailures: 1 } });
    expect(r.json().health.lastError).toMatch(/simulated write failure/);
    const human = cli(["ledger", "record", "--root", root, "--tool", "Edit", "--status", "success"]);
    expect(human.code).toBe(0);
    expect(human.stderr).toMatch(/not written/);
    expect(run("ledger", "health").json().writeFailures).toBe(2);
  });
});

describe("health file", () => {
  it("is replaced atomically and ignored when damaged", async () => {
    const { baton, root } = await withSession();
    writeFileSync(join(root, ".baton", "ledger-failures.json"), "{not json");
    expect(baton.ledger.health()).toEqual({ writeFailures: 0, lastError: null, lastAt: null });
    await baton.ledger.record("missing", { toolName: "x", status: "success" });
    expect(JSON.parse(readFileSync(join(root, ".baton", "ledger-failures.json"), "utf8"))).toMatchObject({ writeFailures: 1 });
  });
});

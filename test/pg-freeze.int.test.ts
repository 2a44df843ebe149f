/**
 * A PostgreSQL server that stops answering (issue 31, "waits without bound"): the postmaster and
 * every backend frozen with SIGSTOP, as in a network partition, under a running Baton. Nothing
 * waits for it without bound:
 *
 * - a library call in flight rejects with `storage_unavailable` within the statement bound (set
 *   small here), and after SIGCONT the same Baton carries on: nothing acknowledged is lost,
 *   nothing stored twice; a wait parked meanwhile is woken by a commit after it;
 * - a hook handed to a running `baton serve` is answered by that server in time: within the
 *   bound, a second to reach a store it cannot reach, and by its deadline whatever the bound;
 * - a parked long poll (`POST /v1/poll`) reports the outage (503 `storage_unavailable`), and
 *   `baton poll` says so, polls again, and leases the work that comes after the outage.
 *
 * Elapsed times are checked only against the bounds, with seconds of slack.
 */
import { execFileSync, spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { openBaton, openPostgresStore } from "../src/index.js";
import { CLI, tempDir } from "./helpers.js";
import { failOnStrayServers, hookAsync, hookLog, type Step, sleep, workspace } from "./hook-helpers.js";
import { FILES } from "./hook-scenarios.js";
import { pgAvailable } from "./pg-cluster.js";
import { clusterForSuite } from "./pg-suite.js";
import { api, serve } from "./server-helpers.js";

const available = pgAvailable();

failOnStrayServers();

/** The statement bound the tests set (the default is 30 s), its client-side grace, and the connect timeout. */
const BOUND = 1_500;
const GRACE = 1_000;
const CONNECT = 1_000;
/** Slack on every elapsed time: process starts and a loaded machine. */
const SLACK = 3_000;

let projects = 0;
const project = () => `freeze_${process.pid}_${projects++}`;

/**
 * Freeze a PostgreSQL cluster: its postmaster first (it forks no backend after), then every
 * process it started (backends, WAL writer, checkpointer). Returns the thaw, which is idempotent.
 */
function freeze(postmaster: number): () => void {
  process.kill(postmaster, "SIGSTOP");
  let children: number[] = [];
  try {
    children = execFileSync("pgrep", ["-P", String(postmaster)], { encoding: "utf8" })
      .trim()
      .split("\n")
      .filter(Boolean)
      .map(Number);
  } catch {
    // none
  }
  for (const pid of children) process.kill(pid, "SIGSTOP");
  let thawed = false;
  return () => {
    if (thawed) return;
    thawed = true;
    for (const pid of children) {
      try {
        process.kill(pid, "SIGCONT");
      } catch {
        // gone
      }
    }
    process.kill(postmaster, "SIGCONT");
  };
}

/** Run the built CLI without blocking this process (it freezes and thaws the server meanwhile). */
function runCli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    c.stdout.on("data", (d) => {
      stdout += d;
    });
    c.stderr.on("data", (d) => {
      stderr += d;
    });
    c.on("error", reject);
    c.on("exit", (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

const texts = async (b: Awaited<ReturnType<typeof openBaton>>, session: string) =>
  (await b.events.list(session)).events.map((e) => (e.data as { text?: string }).text).filter(Boolean);

describe.skipIf(!available)("PostgreSQL frozen under a running Baton", () => {
  const open: { close(): Promise<void> }[] = [];
  const cluster = clusterForSuite(open);
  const store = (name: string) =>
    openPostgresStore({ url: cluster().url, project: name, statementTimeoutMs: BOUND, connectTimeoutMs: CONNECT });

  it("calls in flight reject with storage_unavailable within the bound; after SIGCONT the same Baton carries on, nothing lost or doubled", async () => {
    const b = await openBaton({ root: tempDir(), store: await store(project()) });
    open.push(b);
    await b.sessions.start({ flow: "task", id: "f" });
    for (let i = 0; i < 5; i++) await b.events.append("f", { type: "note:added", id: `n${i}`, data: { text: `n${i}` } });
    await Promise.all([b.events.list("f"), b.events.list("f"), b.events.list("f")]); // idle pooled connections, which look fine

    const thaw = freeze(cluster().pid());
    let lone: unknown;
    let outcomes: unknown[];
    let took: number;
    try {
      // Alone, on one of those connections: the statement bound.
      let t0 = performance.now();
      lone = await b.events.list("f").catch((err: unknown) => err);
      expect(performance.now() - t0).toBeLessThan(BOUND + GRACE + SLACK);
      // Then together: a write and reads, on fresh connections (those made before a statement
      // timed out are dropped), which the connect timeout bounds.
      t0 = performance.now();
      outcomes = await Promise.all(
        [
          b.events.append("f", { type: "note:added", id: "during", data: { text: "during" } }),
          b.events.list("f"),
          b.checkpoints.list("f"),
        ].map((p) =>
          p.then(
            () => "resolved",
            (err: unknown) => err,
          ),
        ),
      );
      took = performance.now() - t0;
    } finally {
      thaw();
    }
    expect(lone).toMatchObject({ code: "storage_unavailable", details: { timedOut: "statement", limit: "statement" } });
    expect((lone as Error).message).toMatch(/did not answer a statement within 2500 ms/);
    expect((lone as Error).message).toContain("BATON_STORE_STATEMENT_TIMEOUT_MS");
    for (const o of outcomes) expect(o, String(o)).toMatchObject({ code: "storage_unavailable", details: { timedOut: "connection" } });
    expect((outcomes[1] as Error).message).toMatch(/no connection to PostgreSQL .* within 1000 ms/);
    // A connection each (an append whose commit may have landed would add one re-send).
    expect(took).toBeLessThan(2 * CONNECT + SLACK);

    // The same Baton, not reopened. The append that failed is sent again with its id: it is
    // stored once whether or not the frozen server had taken it.
    await b.events.append("f", { type: "note:added", id: "during", data: { text: "during" } });
    await b.events.append("f", { type: "note:added", id: "after", data: { text: "after" } });
    expect(await texts(b, "f")).toEqual(["n0", "n1", "n2", "n3", "n4", "during", "after"]);
  }, 30_000);

  it("a wait parked across the freeze reports the outage if it looks during it; the work committed after it is leased at once", async () => {
    const name = project();
    const waiter = await openBaton({ root: tempDir(), store: await store(name) });
    const writer = await openBaton({ root: tempDir(), store: await store(name) });
    open.push(waiter, writer);
    await writer.sessions.start({ flow: "live-variant", id: "lv" });
    expect(await waiter.work.lease("agent", { sessionId: "lv" })).toBeUndefined(); // connected, statements prepared
    // Far longer than the test may run: only a wake-up can end it in time.
    const parked = waiter.work.waitFor("agent", { timeoutMs: 600_000 }).catch((err: unknown) => err);
    await sleep(1_000); // it looked, found nothing and sleeps; its LISTEN connection is up
    const thaw = freeze(cluster().pid());
    try {
      // A call of the waiter's process meets the frozen server (so it also listens again).
      await expect(waiter.events.list("lv")).rejects.toMatchObject({ code: "storage_unavailable" });
    } finally {
      thaw();
    }
    await writer.events.append("lv", { type: "steer", actor: "browser", data: { text: "after the freeze" } });
    // It looked during the freeze (a wake-up: on PostgreSQL every claim is told to this
    // process's waiters), so it reports the outage, and the caller waits again; or it slept
    // through and is woken by the commit.
    let lease = await parked;
    if (lease instanceof Error) {
      expect(lease).toMatchObject({ code: "storage_unavailable" });
      lease = await waiter.work.waitFor("agent", { timeoutMs: 600_000 });
    }
    expect(lease, String(lease)).toMatchObject({ item: { kind: "steer" } });
  }, 30_000);

  it("a hook handed to the server is answered by the server in time: the bound, then a second to reach the store", async () => {
    const root = workspace(FILES);
    const env = { BATON_STORE: cluster().url, BATON_PROJECT: project(), BATON_HOOK_SERVER: "use" };
    const s = await serve(root, [], { ...env, BATON_STORE_STATEMENT_TIMEOUT_MS: String(BOUND) });
    try {
      const start = await hookAsync(root, { agent: "claude", fixture: "session-start-startup" }, env);
      expect(start.via, start.stderr).toBe("server");
      expect((await hookAsync(root, { agent: "claude", fixture: "pre-edit" }, env)).via).toBe("server");
      expect(hookLog(root)).toEqual([]);

      const thaw = freeze(cluster().pid());
      try {
        // On a pooled connection that looks fine: the statement bound.
        const edit: Step = { agent: "claude", fixture: "pre-edit", vars: { call: "call-frozen-1" } };
        let t0 = performance.now();
        const first = await hookAsync(root, edit, env);
        expect(performance.now() - t0).toBeLessThan(BOUND + GRACE + SLACK);
        expect([first.code, first.via], first.stderr).toEqual([0, "server"]);
        expect(JSON.parse(first.stdout || "{}").hookSpecificOutput, "the tool is let through").toBeUndefined();
        // Then on a fresh connection, which the server's hook waits for a second (its own
        // connect timeout is the default 5 s).
        t0 = performance.now();
        const second = await hookAsync(root, { ...edit, vars: { call: "call-frozen-2" } }, env);
        expect(performance.now() - t0).toBeLessThan(1_000 + SLACK);
        expect([second.code, second.via], second.stderr).toEqual([0, "server"]);
      } finally {
        thaw();
      }
      const failures = hookLog(root);
      expect(failures.map((l) => l.code)).toEqual(["storage_unavailable", "storage_unavailable"]);
      expect(failures[0].message).toMatch(/(did not answer a statement|got no answer) within \d+ ms/);
      expect(failures[1].message).toMatch(/no connection to PostgreSQL .* within 1000 ms/);
      // The store is back: the server answers as before.
      const after = await hookAsync(root, { agent: "claude", fixture: "pre-edit", vars: { call: "call-after" } }, env);
      expect(after.via, after.stderr).toBe("server");
      expect(hookLog(root)).toHaveLength(2);
    } finally {
      await s.stop();
    }
  }, 30_000);

  it("a hook handed to the server is answered by its deadline when the statement bound is longer", async () => {
    const root = workspace(FILES);
    const env = { BATON_STORE: cluster().url, BATON_PROJECT: project(), BATON_HOOK_SERVER: "use" };
    const s = await serve(root, [], env); // the default bound, 30 s
    try {
      expect((await hookAsync(root, { agent: "claude", fixture: "session-start-startup" }, env)).via).toBe("server");
      const thaw = freeze(cluster().pid());
      try {
        // The agent's timeout as 4 s: the deadline is 3 s after the hook starts.
        const t0 = performance.now();
        const r = await hookAsync(
          root,
          { agent: "claude", fixture: "pre-edit", vars: { call: "call-deadline" } },
          {
            ...env,
            BATON_HOOK_TIMEOUT_MS: "4000",
          },
        );
        expect(performance.now() - t0).toBeLessThan(3_000 + SLACK);
        expect([r.code, r.via], r.stderr).toEqual([0, "server"]);
      } finally {
        thaw();
      }
      expect(hookLog(root).map((l) => l.code)).toEqual(["deadline_exceeded"]);
    } finally {
      await s.stop();
    }
  }, 30_000);

  it("a parked long poll reports the outage (503); `baton poll` says so, polls again, and leases the work after it", async () => {
    const root = workspace();
    const name = project();
    const env = { BATON_STORE: cluster().url, BATON_PROJECT: name };
    const s = await serve(root, [], { ...env, BATON_STORE_STATEMENT_TIMEOUT_MS: String(BOUND), BATON_STORE_TIMEOUT_MS: String(CONNECT) });
    const writer = await openBaton({ root: tempDir(), store: await store(name) });
    open.push(writer);
    try {
      await writer.sessions.start({ flow: "live-variant", id: "hero" });

      // Parked when the server freezes: at its timeout it looks again, and says the store is away.
      let t0 = performance.now();
      const parked = api(s, "POST", "/v1/poll", { timeout: 2_000, session: "hero" });
      await sleep(500);
      let thaw = freeze(cluster().pid());
      try {
        const res = await parked;
        // Its timeout, a claim's bound, and the re-claim of a claim whose outcome is unknown.
        expect(performance.now() - t0).toBeLessThan(2_000 + BOUND + GRACE + CONNECT + SLACK);
        expect(res.status, res.text).toBe(503);
        expect(res.json().error.code).toBe("storage_unavailable");
      } finally {
        thaw();
      }

      // `baton poll` through the server, begun while the store is frozen, thawed 4 s later.
      thaw = freeze(cluster().pid());
      t0 = performance.now();
      let polled: Promise<{ code: number; stdout: string; stderr: string }>;
      try {
        polled = runCli(["poll", "--root", root, "--session", "hero", "--timeout", "20000", "--json"], {
          ...env,
          BATON_STORE_STATEMENT_TIMEOUT_MS: String(BOUND),
          BATON_STORE_TIMEOUT_MS: String(CONNECT),
        });
        await sleep(4_000);
      } finally {
        thaw();
      }
      await writer.events.append("hero", { type: "steer", actor: "browser", data: { text: "after the outage" } });
      const r = await polled;
      // The server's own account, should it have failed the poll (a CI run once saw "fetch failed").
      const server = () =>
        `\n--- baton serve (${s.child.proc.exitCode ?? s.child.proc.signalCode ?? "running"}):\n${s.child.stderr().slice(-4_000)}`;
      expect(r.code, r.stdout + r.stderr + server()).toBe(0);
      expect(r.stderr).toMatch(/the store is unavailable .*polling again until the timeout/);
      expect(r.stderr).toContain("the store is back");
      const out = JSON.parse(r.stdout);
      expect(out).toMatchObject({ via: "server", lease: { attempt: 1, item: { kind: "steer", sessionId: "hero" } } });
      expect(performance.now() - t0).toBeLessThan(20_000);
      // Leased once: nothing else is waiting.
      expect(await writer.work.lease("other", { sessionId: "hero" })).toBeUndefined();
    } finally {
      await s.stop();
    }
  }, 45_000);
});

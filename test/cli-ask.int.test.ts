/**
 * `baton status --json` and `baton resume --json` answered by the workspace's running server
 * (src/cli/ask.ts → `POST /v1/cli/:command`, src/server/cli-route.ts): real `baton` processes
 * (the built CLI) and a real `baton serve` child on temp workspaces.
 *
 * - the server's report is the one the command prints in its own process, byte for byte;
 * - every case the server must not answer runs the command in its own process, as before
 *   (errors included), and BATON_DEBUG says which answered;
 * - the route is guarded like every route: token, no web page, this workspace only.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupDirs, cli, tempDir, writeConfig } from "./helpers.js";
import { raw, type Served, serve } from "./server-helpers.js";

const SESSION = "fix-login";

function workspace(): string {
  const root = tempDir("baton-ask-");
  expect(cli(["init", "--root", root]).code).toBe(0);
  for (const args of [
    ["session", "start", "--flow", "task", "--id", SESSION, "--title", "Fix the login bug"],
    ["event", SESSION, "start"],
    ["decision", "add", "keep the session cookie", "--session", SESSION],
    ["session", "start", "--flow", "task", "--id", "docs", "--title", "Write the docs"],
    ["event", "docs", "abandon"],
  ]) {
    const r = cli([...args, "--json", "--root", root]);
    expect(r.code, `${args.join(" ")}: ${r.stderr}${r.stdout}`).toBe(0);
  }
  return root;
}

/** A run of `baton …` with BATON_DEBUG: its output and who answered it. */
function run(root: string, args: string[], env: Record<string, string> = {}) {
  const r = cli([...args, "--root", root], { env: { BATON_DEBUG: "1", ...env } });
  const via = /answered by the server/.test(r.stderr) ? "server" : /ran in its own process/.test(r.stderr) ? "process" : undefined;
  return { ...r, via };
}

afterAll(() => cleanupDirs());

describe("status and resume answered by the running server", () => {
  it("prints the report the command makes in its own process, for every form agents use", async () => {
    const root = workspace();
    const forms = [
      ["status", "--json"],
      ["status", "--json", "--all"],
      ["status", "--json", "--session", SESSION],
      ["status", "--json", "-q"],
      ["resume", "--json", "--session", SESSION],
      ["resume", SESSION, "--json"],
    ];
    // In its own process first (no server), then through the server: the same bytes.
    const alone = forms.map((f) => run(root, f));
    for (const [i, r] of alone.entries()) {
      expect(r.code, `${forms[i]?.join(" ")}: ${r.stderr}`).toBe(0);
      expect(r.via, forms[i]?.join(" ")).toBe("process");
    }
    const s = await serve(root);
    try {
      for (const [i, f] of forms.entries()) {
        const r = run(root, f);
        expect(r.via, `${f.join(" ")}: ${r.stderr}`).toBe("server");
        expect(r.code).toBe(0);
        expect(r.stdout, f.join(" ")).toBe(alone[i]?.stdout);
      }
    } finally {
      await s.stop();
    }
  });

  it("finds the server wherever the command finds its workspace, and loads no client where no server.json is", async () => {
    const root = workspace();
    const sub = join(root, "src", "deep");
    mkdirSync(sub, { recursive: true });
    // Without a server, bin/baton.cjs sees no server.json in or above any place the command
    // looks, and runs it in this process without asking (the same report: the first test).
    const none = cli(["status", "--json"], { cwd: sub, env: { BATON_DEBUG: "1" } });
    expect(none.code, none.stderr).toBe(0);
    expect(none.stderr).toContain("status ran in its own process: no .baton/server.json where it looks for a workspace");
    const s = await serve(root);
    try {
      const asked = (args: string[], o: { cwd?: string; env?: Record<string, string> }) => {
        const r = cli(args, { ...o, env: { BATON_DEBUG: "1", ...o.env } });
        expect(r.code, r.stderr).toBe(0);
        return /answered by the server/.test(r.stderr) ? "server" : r.stderr;
      };
      const elsewhere = tempDir("baton-ask-cwd-");
      expect(asked(["status", "--json"], { cwd: sub })).toBe("server");
      expect(asked(["resume", SESSION, "--json"], { cwd: sub })).toBe("server");
      expect(asked(["status", "--json", `--root=${root}`], { cwd: elsewhere })).toBe("server");
      expect(asked(["status", "--json", "--root", root, "--all"], { cwd: elsewhere })).toBe("server");
      expect(asked(["status", "--json", "--root", join("..", "..")], { cwd: sub })).toBe("server");
      expect(asked(["resume", "--json", "--session", SESSION], { cwd: elsewhere, env: { BATON_ROOT: root } })).toBe("server");
    } finally {
      await s.stop();
    }
  });

  it("runs in its own process whatever the server cannot answer as the command would, and errors are the command's", async () => {
    const root = workspace();
    const s = await serve(root);
    try {
      // Human output, an unpause (a change the user asked for), settings from the environment.
      expect(run(root, ["status"]).via).toBeUndefined(); // not even asked: bin/baton.cjs loads the full CLI
      const unpause = run(root, ["resume", SESSION, "--json", "--unpause"]);
      expect(unpause.via).toBe("process");
      expect(unpause.json().unpaused).toBe(false);
      // Settings from the environment other than the server's: its own process (server.json says so).
      expect(run(root, ["status", "--json"], { BATON_DURABILITY: "full" }).via).toBe("process");
      // An unknown session: the server refuses, the command reports it as it always did.
      const missing = run(root, ["resume", "nope", "--json"]);
      expect(missing.via).toBe("process");
      expect(missing.code).toBe(4);
      expect(missing.json().error.code).toBe("not_found");
      // An option the fast path does not know: the full CLI's error.
      const bad = run(root, ["status", "--json", "--bogus"]);
      expect(bad.code).not.toBe(0);
      expect(bad.stderr + bad.stdout).toMatch(/bogus/);
      // Another store named by the environment (a PostgreSQL server nobody runs): the server
      // serves the workspace's SQLite file, so the command opens that store itself and says it cannot.
      const elsewhere = run(root, ["status", "--json"], { BATON_STORE: "postgres://127.0.0.1:9/team", BATON_PROJECT: "web" });
      expect(elsewhere.via, elsewhere.stderr).toBe("process");
      expect(elsewhere.code).not.toBe(0);
    } finally {
      await s.stop();
    }
  });

  it("leaves settings the server did not start with to the command: a changed or untrusted .baton/config.json", async () => {
    const root = workspace();
    const s = await serve(root);
    try {
      // Trusted, but written after the server started: the server refuses (config_changed).
      writeConfig(root, { hooks: { server: "auto" } });
      const changed = run(root, ["status", "--json"]);
      expect(changed.via, changed.stderr).toBe("process");
      expect(changed.stderr).toMatch(/the server answered 409|the server answered 4\d\d/);
      // Not trusted by this user: not even asked, and the command warns about it as always.
      writeFileSync(join(root, ".baton", "config.json"), JSON.stringify({ hooks: { server: "off" } }));
      const r = run(root, ["status", "--json"]);
      expect(r.via, r.stderr).toBe("process");
      expect(r.stderr).toMatch(/config\.json is (untrusted|changed)/);
      expect(r.stderr).toMatch(/config_untrusted/);
    } finally {
      await s.stop();
    }
  });

  it("is answered by a server started with the settings its environment sets, and by no other", async () => {
    const root = workspace();
    const s = await serve(root, [], { BATON_DURABILITY: "full", BATON_HOST_ID: "ci-7" });
    try {
      const same = run(root, ["status", "--json"], { BATON_DURABILITY: "FULL", BATON_HOST_ID: "ci-7" });
      expect(same.via, same.stderr).toBe("server");
      const alone = run(root, ["status", "--json"]);
      expect(alone.via, alone.stderr).toBe("process");
      expect(alone.stderr).toContain("the server runs with other settings (BATON_DURABILITY=full BATON_HOST_ID=ci-7 config home");
      // The deprecated variable is left to the command, which warns about it.
      const old = run(root, ["status", "--json"], { BATON_SYNCHRONOUS: "FULL", BATON_HOST_ID: "ci-7" });
      expect(old.via, old.stderr).toBe("process");
      expect(old.stderr).toContain("BATON_SYNCHRONOUS is deprecated");
    } finally {
      await s.stop();
    }
  });

  it("does not use a server of another build", async () => {
    const root = workspace();
    const s = await serve(root);
    try {
      const file = join(root, ".baton", "server.json");
      const info = JSON.parse(await import("node:fs").then((fs) => fs.readFileSync(file, "utf8")));
      writeFileSync(file, JSON.stringify({ ...info, version: "0.0.0+000000000000" }));
      const r = run(root, ["status", "--json"]);
      expect(r.via).toBe("process");
      expect(r.stderr).toMatch(/the server is build 0\.0\.0\+000000000000/);
    } finally {
      await s.stop();
    }
  });
});

describe("POST /v1/cli/:command", () => {
  it("is guarded: the token, no web page, this workspace and store only", async () => {
    const ws = workspace();
    const s = await serve(ws);
    try {
      await guarded(ws, s);
    } finally {
      await s.stop();
    }
  });
});

/** The route's checks, against the server `s` of workspace `ws`. */
async function guarded(ws: string, s: Served): Promise<void> {
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    raw(s.port, {
      method: "POST",
      path,
      headers: { authorization: `Bearer ${s.token}`, "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
  const ok = await post("/v1/cli/status", { root: ws });
  expect(ok.status).toBe(200);
  // The status line goes out before the report is made (a process waits a second for it), so
  // the report follows chunked.
  expect(ok.headers["transfer-encoding"]).toBe("chunked");
  expect(ok.json().sessions.map((x: { sessionId: string }) => x.sessionId)).toEqual([SESSION]);
  expect((await post("/v1/cli/status", { root: ws }, { authorization: "Bearer wrong" })).status).toBe(401);
  expect((await post("/v1/cli/status", { root: ws }, { origin: `http://127.0.0.1:${s.port}` })).status).toBe(403);
  const other = await post("/v1/cli/status", { root: workspace() });
  expect(other.json().error.code).toBe("wrong_workspace");
  expect((await post("/v1/cli/status", { root: "relative/dir" })).json().error.code).toBe("bad_input");
  expect((await post("/v1/cli/status", { root: ws, store: "postgres somewhere" })).json().error.code).toBe("wrong_store");
  expect((await post("/v1/cli/status", { root: ws, all: "yes" })).json().error.code).toBe("bad_input");
  expect((await post("/v1/cli/resume", { root: ws, id: "nope" })).json().error.code).toBe("not_found");
  const unknown = await post("/v1/cli/status", { root: ws, session: "nope" });
  expect([unknown.status, unknown.json().error.code], "not a 200 and a cut connection").toEqual([404, "not_found"]);
  expect((await post("/v1/cli/lanes", { root: ws })).status).toBe(404);
  // A GET changes nothing and is no route.
  expect((await raw(s.port, { path: "/v1/cli/status", headers: { authorization: `Bearer ${s.token}` } })).status).toBe(404);
}

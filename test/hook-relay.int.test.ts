/**
 * `baton hook opencode --relay` (src/hooks/relay.ts): one process answering many hooks as JSON
 * lines, the way OpenCode's plugin sends them. Real relay processes of the built CLI, real
 * workspaces, the payloads captured from the real OpenCode (test/fixtures/agents/opencode/),
 * and a real `baton serve` for calls the server answers. The plugin's side (a relay killed
 * mid-call, the next call) is in opencode-plugin.int.test.ts.
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync, symlinkSync, utimesSync } from "node:fs";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { OPENCODE_EVENTS } from "../src/core/hooks/opencode.js";
import { type LineChild, spawnCommand, waitExit } from "./child-process.js";
import { CLI, cli, initWorkspace, REPO, tempDir, writeConfig } from "./helpers.js";
import { failOnStrayServers } from "./hook-helpers.js";
import { serve } from "./server-helpers.js";

failOnStrayServers();

const DIR = join(REPO, "test", "fixtures", "agents", "opencode");
/** The captured payloads, in the order a session sends them, with the capture's directory replaced by `root`. */
function fixtures(root: string): { name: string; event: string; payload: Record<string, unknown> }[] {
  const order = ["session.created", "chat.message", "tool.execute.before", "tool.execute.after", "session", "experimental", "dispose"];
  const rank = (n: string) => order.findIndex((p) => n.startsWith(p));
  return readdirSync(DIR)
    .filter((f) => f.endsWith(".json"))
    .sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : 1))
    .map((name) => ({
      name,
      event: OPENCODE_EVENTS.find((e) => name.startsWith(`${e}.`)) as string,
      payload: JSON.parse(readFileSync(join(DIR, name), "utf8").replaceAll("/work/project", root)),
    }));
}

interface Relay {
  child: LineChild;
  /** Send one line. */
  send(line: string): void;
  /** The answer line for `id` (parsed). */
  answer(id: unknown, timeoutMs?: number): Promise<Record<string, unknown>>;
  call(id: number, event: string, payload: unknown): Promise<Record<string, unknown>>;
}

function relay(env: Record<string, string> = {}, cli = CLI): Relay {
  const child = spawnCommand(process.execPath, [cli, "hook", "opencode", "--relay"], "baton hook opencode --relay", {
    ...process.env,
    ...env,
  });
  const send = (line: string) => child.proc.stdin?.write(`${line}\n`);
  const answer = async (id: unknown, timeoutMs = 30_000) => {
    const line = await child.waitForLine(
      (l) => {
        try {
          return JSON.parse(l).id === id;
        } catch {
          return false;
        }
      },
      timeoutMs,
      `the answer to call ${JSON.stringify(id)}`,
    );
    return JSON.parse(line) as Record<string, unknown>;
  };
  return {
    child,
    send,
    answer,
    call(id, event, payload) {
      send(JSON.stringify({ id, event, payload }));
      return answer(id);
    },
  };
}

/** Ids, times, this machine's paths: what differs between two workspaces given the same story. */
function normal(v: unknown, root: string): string {
  return JSON.stringify(v)
    .replaceAll(root, "<root>")
    .replaceAll(basename(root), "<name>")
    .replace(/task-[0-9a-f]{8}/g, "<session>")
    .replace(/cp-[0-9a-f]+/g, "<checkpoint>")
    .replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, "<time>");
}

const OFF = { BATON_HOOK_SERVER: "off" };

describe("baton hook opencode --relay", () => {
  it("answers each captured payload as `baton hook opencode <event>` does, in a workspace of its own", async () => {
    const a = initWorkspace("baton-relay-a-", { "a.txt": "one\n" });
    const b = initWorkspace("baton-relay-b-", { "a.txt": "one\n" });
    const r = relay(OFF);
    await r.child.waitForLine((l) => l === '{"relay":1}', 15_000, "its hello");
    let id = 0;
    for (const f of fixtures(a)) {
      const one = cli(["hook", "opencode", f.event], { input: JSON.stringify(f.payload), env: OFF });
      expect(one.code, f.name).toBe(0);
      const expected = one.stdout.trim() === "" ? {} : JSON.parse(one.stdout);
      const got = await r.call(++id, f.event, fixtures(b).find((g) => g.name === f.name)?.payload);
      expect(normal(got.answer, b), f.name).toBe(normal(expected, a));
    }
    // The same checkpoints and journal in both.
    const cps = (root: string) =>
      cli(["--json", "checkpoints", "--root", root])
        .json()
        .checkpoints.map((c: any) => `${c.kind}:${c.toolName}:${c.lane}`);
    expect(cps(b)).toEqual(cps(a));
    expect(cps(a).length).toBeGreaterThan(0);
    r.child.proc.stdin?.end();
    expect(await waitExit(r.child, 15_000)).toEqual({ code: 0, signal: null });
  }, 240_000);

  it("takes calls while others are under way, through the server and in its own process, answering each by its id", async () => {
    const root = initWorkspace("baton-relay-", { "a.txt": "1\n", "b.txt": "2\n", "c.txt": "3\n" });
    const pre = (n: string, call: string) => ({
      session_id: "ses_par",
      cwd: root,
      call_id: call,
      tool: "write",
      args: { filePath: join(root, n), content: "x\n" },
    });
    for (const env of [OFF, { BATON_HOOK_SERVER: "use" }]) {
      const server = env === OFF ? undefined : await serve(root);
      try {
        const r = relay({ ...env, BATON_HOOK_DEBUG: "1" });
        const base = env === OFF ? 0 : 10;
        const files = ["a.txt", "b.txt", "c.txt"];
        // All three written before any answer is read.
        for (const [i, n] of files.entries())
          r.send(JSON.stringify({ id: base + i, event: "tool.execute.before", payload: pre(n, `call_${base + i}`) }));
        const answers = await Promise.all(files.map((_, i) => r.answer(base + i)));
        expect(answers.map((x) => x.answer)).toEqual([{}, {}, {}]);
        r.child.proc.stdin?.end();
        expect(await waitExit(r.child, 15_000)).toEqual({ code: 0, signal: null });
        const via = env === OFF ? "answered in this process" : "answered by the server";
        expect(r.child.stderr().split(via).length - 1, r.child.stderr()).toBe(3);
      } finally {
        await server?.stop();
      }
    }
    const cps = cli(["--json", "checkpoints", "--root", root]).json().checkpoints;
    expect(cps.map((c: any) => c.toolName)).toEqual(["write", "write", "write", "write", "write", "write"]);
  }, 120_000);

  it("for an agent Baton does not know, says so and exits 2 at once", () => {
    for (const args of [
      ["hook", "bogus", "--relay"],
      ["hook", "--relay"],
    ]) {
      const r = cli(args);
      expect([r.code, r.stderr], args.join(" ")).toEqual([2, expect.stringContaining("unknown agent")]);
    }
  });

  it("answers a line it cannot read with an error, and goes on", async () => {
    const root = initWorkspace("baton-relay-", { "a.txt": "1\n" });
    const r = relay(OFF);
    r.send("not json");
    r.send("[1]");
    r.send(JSON.stringify({ id: 1, payload: {} }));
    r.send(JSON.stringify({ id: 2, event: "tool.execute.before", payload: "x" }));
    r.send(JSON.stringify({ event: "tool.execute.before", payload: {} }));
    await r.child.waitForLine((l) => l.includes("has no id"), 15_000, "the last error");
    expect(r.child.lines.filter((l) => l.includes('"error"')).map((l) => JSON.parse(l))).toEqual([
      { id: null, error: "the line is not JSON" },
      { id: null, error: "the line is not an object" },
      { id: 1, error: "the call names no event" },
      { id: 2, error: "the call's payload is not an object" },
      { id: null, error: "the call has no id (a string or a number)" },
    ]);
    const args = { filePath: join(root, "a.txt"), content: "2\n" };
    const ok = await r.call(3, "tool.execute.before", { session_id: "ses_1", cwd: root, call_id: "c1", tool: "write", args });
    expect(ok).toEqual({ id: 3, answer: {} });
    expect(cli(["--json", "checkpoints", "--root", root]).json().checkpoints).toHaveLength(1);
    r.child.proc.stdin?.end();
    expect(await waitExit(r.child, 15_000)).toEqual({ code: 0, signal: null });
  }, 60_000);

  it("ends when stdin closes, once the call under way is answered", async () => {
    const root = initWorkspace("baton-relay-", { "a.txt": "1\n" });
    const r = relay(OFF);
    const args = { filePath: join(root, "a.txt"), content: "2\n" };
    r.child.proc.stdin?.end(
      `${JSON.stringify({ id: "last", event: "tool.execute.before", payload: { session_id: "ses_1", cwd: root, call_id: "c1", tool: "write", args } })}\n`,
    );
    expect(await waitExit(r.child, 30_000)).toEqual({ code: 0, signal: null });
    expect(r.child.lines.map((l) => JSON.parse(l))).toEqual([{ relay: 1 }, { id: "last", answer: {} }]);
    expect(cli(["--json", "checkpoints", "--root", root]).json().checkpoints).toHaveLength(1);
  }, 60_000);

  it("reads lines however stdin cuts them: across writes, several in one, the last one unended", async () => {
    const r = relay(OFF);
    await r.child.waitForLine((l) => l === '{"relay":1}', 15_000, "its hello");
    // Calls that name no event: each is answered with its id, so the lines are read as sent.
    const line = (id: string) => JSON.stringify({ id, event: "", payload: { pad: "x".repeat(70_000) } });
    const [a, b, c] = [line("a"), line("b"), line("c")];
    const writes = [a.slice(0, 10), a.slice(10, 50_000), `${a.slice(50_000)}\n${b.slice(0, 7)}`, `${b.slice(7)}\n\n${c}`];
    for (const w of writes) {
      r.child.proc.stdin?.write(w);
      await new Promise((res) => setTimeout(res, 30));
    }
    r.child.proc.stdin?.end();
    expect(await waitExit(r.child, 30_000)).toEqual({ code: 0, signal: null });
    const said = r.child.lines.map((l) => JSON.parse(l));
    expect(said).toEqual([{ relay: 1 }, ...["a", "b", "c"].map((id) => ({ id, error: "the call names no event" }))]);
  }, 60_000);

  it("a deny is the answer, as the hook process gives it", async () => {
    const root = initWorkspace("baton-relay-");
    const payload = {
      session_id: "ses_1",
      cwd: root,
      call_id: "c1",
      tool: "write",
      args: { filePath: join(root, ".opencode/plugins/baton.js"), content: "" },
    };
    const one = cli(["hook", "opencode", "tool.execute.before"], { input: JSON.stringify(payload), env: OFF });
    const r = relay(OFF);
    const got = await r.call(1, "tool.execute.before", payload);
    expect(typeof (got.answer as { deny?: unknown }).deny).toBe("string");
    expect(got.answer).toEqual(JSON.parse(one.stdout));
    r.child.proc.stdin?.end();
    await waitExit(r.child, 15_000);
  }, 60_000);

  it("once Baton's files change under it, sends calls to a new relay ({restart: true}) and takes no more", async () => {
    // A copy of the built CLI, so that changing it changes no other test's.
    const install = tempDir("baton-relay-install-");
    mkdirSync(join(install, "bin"));
    mkdirSync(join(install, "dist"));
    copyFileSync(CLI, join(install, "bin", "baton.cjs"));
    for (const f of ["hook.cjs", "cli.cjs", "cli-full.cjs", "pg.cjs"]) copyFileSync(join(REPO, "dist", f), join(install, "dist", f));
    symlinkSync(join(REPO, "node_modules"), join(install, "node_modules"));
    const root = initWorkspace("baton-relay-", { "a.txt": "1\n" });
    const r = relay(OFF, join(install, "bin", "baton.cjs"));
    const payload = (call: string) => ({
      session_id: "ses_1",
      cwd: root,
      call_id: call,
      tool: "write",
      args: { filePath: join(root, "a.txt"), content: "2\n" },
    });
    expect(await r.call(1, "tool.execute.before", payload("c1"))).toEqual({ id: 1, answer: {} });
    const later = new Date(Date.now() + 5_000);
    utimesSync(join(install, "dist", "cli.cjs"), later, later);
    expect(await r.call(2, "tool.execute.before", payload("c2"))).toEqual({ id: 2, restart: true });
    expect(await r.call(3, "tool.execute.before", payload("c3"))).toEqual({ id: 3, restart: true });
    expect(cli(["--json", "checkpoints", "--root", root]).json().checkpoints).toHaveLength(1);
    r.child.proc.stdin?.end();
    expect(await waitExit(r.child, 15_000)).toEqual({ code: 0, signal: null });
  }, 60_000);

  it("reads server.json and .baton/config.json at every call, as a new hook process would", async () => {
    const root = initWorkspace("baton-relay-", { "a.txt": "1\n" });
    writeConfig(root, { hooks: { server: "use" } });
    // No BATON_HOOK_SERVER (the test run sets one): the config decides.
    const r = relay({ BATON_HOOK_SERVER: "", BATON_HOOK_DEBUG: "1" });
    const payload = (call: string) => ({
      session_id: "ses_1",
      cwd: root,
      call_id: call,
      tool: "write",
      args: { filePath: join(root, "a.txt"), content: `${call}\n` },
    });
    const said = () => r.child.stderr().match(/answered (?:by the server|in this process)/g) ?? [];
    await r.call(1, "tool.execute.before", payload("c1"));
    const server = await serve(root);
    try {
      // A server started after the relay: used.
      await r.call(2, "tool.execute.before", payload("c2"));
      // The config turned the server off: not used.
      writeConfig(root, { hooks: { server: "off" } });
      await r.call(3, "tool.execute.before", payload("c3"));
    } finally {
      await server.stop();
    }
    // The config says "use" again, and the server is gone: not asked.
    writeConfig(root, { hooks: { server: "use" } });
    await r.call(4, "tool.execute.before", payload("c4"));
    expect(said(), r.child.stderr()).toEqual([
      "answered in this process",
      "answered by the server",
      "answered in this process",
      "answered in this process",
    ]);
    expect(r.child.stderr()).toContain("(hooks.server is off (relay))");
    expect(r.child.stderr()).toContain("(no server (relay))");
    expect(cli(["--json", "checkpoints", "--root", root]).json().checkpoints).toHaveLength(4);
    r.child.proc.stdin?.end();
    expect(await waitExit(r.child, 15_000)).toEqual({ code: 0, signal: null });
  }, 60_000);
});

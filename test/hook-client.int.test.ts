/**
 * The shell's hook client: `baton` run as a program (as agents run it from PATH) is a shell
 * script first (bin/baton.cjs), which answers a tool call's hook through the workspace's running
 * server without starting Node (`POST /v1/hook-clients/:agent/:event`) and hands every other
 * hook, and every hook the server does not answer, to Node with its payload.
 *
 * - each agent's recorded scenario: the answers are the in-process answers, step by step, and
 *   every tool call's hook was answered by the client;
 * - no Node on PATH: a tool call's hook is still answered (so nothing started Node);
 * - what makes the client hand the hook to Node, each answered as Node answers it: no server, a
 *   server file a repository could ship (pid 1, a process that does not serve, a wrong start
 *   time), other settings, hooks configured off, a write the agent's environment decides, a
 *   stopped server, a wrong token;
 * - the route itself: its guard and refusals.
 */
import { spawn, spawnSync } from "node:child_process";
import { linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLI, REPO } from "./helpers.js";
import { baton, checkpoints, failOnStrayServers, hook, normalise, payload, type Step, workspace, writeServerFile } from "./hook-helpers.js";
import { FILES, SCENARIOS } from "./hook-scenarios.js";
import { raw, serve } from "./server-helpers.js";

failOnStrayServers();

interface ClientResult {
  code: number;
  stdout: string;
  stderr: string;
  /** Who answered: the shell's client (no Node), Node through the server, Node in its own process. */
  via: "client" | "server" | "process" | undefined;
}

/** The event a step's hook runs for (Copilot CLI's payloads do not name it: its command line does). */
function eventOf(text: string, s: Step): string {
  return s.event ?? (JSON.parse(text).hook_event_name as string);
}

/**
 * Run `bin/baton.cjs hook <agent> <event>` as a program with the step's payload: on a socket, as
 * Node-based agents hand it (spawnSync's stdin), or on a pipe (`pipe`).
 */
function client(
  root: string,
  s: Step,
  env: Record<string, string> = {},
  o: { pipe?: boolean; text?: string; node?: string } = {},
): ClientResult {
  const text = o.text ?? payload(s.agent, s.fixture, { cwd: root, session: "agent-session-1", call: "call-1", ...s.vars });
  const event = eventOf(text, s);
  const file = join(mkdtempSync(join(tmpdir(), "baton-client-")), "payload.json");
  writeFileSync(file, text);
  const opts = {
    cwd: root,
    env: { ...process.env, BATON_HOOK_DEBUG: "1", BATON_HOOK_SERVER: "use", ...env },
    encoding: "utf8",
    timeout: 60_000,
  } as const;
  const r = o.pipe
    ? spawnSync("/bin/sh", ["-c", 'cat "$1" | "$0" hook "$2" "$3"', CLI, file, s.agent, event], opts)
    : spawnSync(CLI, [...(o.node ? [`--node=${o.node}`] : []), "hook", s.agent, event], { ...opts, input: text });
  const via = /no Node started/.test(r.stderr)
    ? "client"
    : /baton hook: answered by the server/.test(r.stderr)
      ? "server"
      : /baton hook: answered in this process/.test(r.stderr)
        ? "process"
        : undefined;
  expect(r.status, `${CLI} hook ${s.agent} ${event} (${s.fixture}): ${r.stderr}`).toBe(0);
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr, via };
}

/** A folder holding only `cat` (the client reads a socket with it): PATH without Node. */
function pathWithoutNode(): string {
  const dir = mkdtempSync(join(tmpdir(), "baton-no-node-"));
  symlinkSync("/bin/cat", join(dir, "cat"));
  return dir;
}

/**
 * A process that runs `serve` in the workspace (so the client takes it for the server: its pid,
 * start time, user and working directory are right) but answers hook clients as `mode` says:
 * `count` answers nothing and counts connections; `headers` sends a 200's status line and part
 * of its headers, then closes; `ended` all of its headers, then closes; `body` sends the headers and a chunk of a chunked body, then
 * closes; `late` sends the headers with `X-Baton-Wait-Ms: 0` and never the body. Written into
 * server.json with the server's token.
 */
async function fakeServe(root: string, mode: "count" | "headers" | "ended" | "body" | "late") {
  const log = join(mkdtempSync(join(tmpdir(), "baton-fake-serve-")), "connections");
  writeFileSync(log, "");
  const script = `
    const fs = require("node:fs");
    const mode = process.env.MODE;
    let seen = 0;
    require("node:net").createServer((sock) => {
      fs.appendFileSync(process.env.LOG, "c");
      // The client's connection only: anything after it (Node's own try) is cut at once.
      if (++seen > 1) return sock.destroy();
      sock.once("data", () => {
        if (mode === "headers") sock.end("HTTP/1.1 200 OK\\r\\nContent-Type: text/plain\\r\\n");
        else if (mode === "ended") sock.end("HTTP/1.1 200 OK\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n");
        else if (mode === "body") sock.end("HTTP/1.1 200 OK\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n5\\r\\nhello\\r\\n");
        else if (mode === "late") sock.write("HTTP/1.1 200 OK\\r\\nTransfer-Encoding: chunked\\r\\nX-Baton-Wait-Ms: 0\\r\\n\\r\\n");
      });
    }).listen(0, "127.0.0.1", function () { process.stdout.write(String(this.address().port) + "\\n"); });`;
  const child = spawn(process.execPath, ["-e", script, "serve"], {
    cwd: root,
    env: { ...process.env, MODE: mode, LOG: log },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const port = await new Promise<number>((resolve) => child.stdout?.once("data", (d: Buffer) => resolve(Number(d.toString().trim()))));
  const startTime = readFileSync(`/proc/${child.pid}/stat`, "utf8").split(") ")[1]?.split(" ")[19] as string;
  writeServerFile(root, { pid: child.pid as number, port, startTime, token: "t".repeat(43) });
  return {
    connections: () => readFileSync(log, "utf8").length,
    stop: () => child.kill("SIGKILL"),
  };
}

const PRE_BASH: Step = { agent: "codex", fixture: "pre-bash" };
/** Codex's shell call `call` (its fixture names one call): a hook of another call. */
const preBash = (root: string, call: string) =>
  JSON.stringify({ ...JSON.parse(payload("codex", "pre-bash", { cwd: root, session: "agent-session-1" })), tool_use_id: call });
const POST_BASH: Step = { agent: "codex", fixture: "post-bash" };
const START: Step = { agent: "codex", fixture: "session-start-startup" };

/** Codex's shell call `call` through another install's baton, run as a program. */
const preBashThrough = (baton: string, root: string, call: string) =>
  spawnSync(baton, ["hook", "codex", "PreToolUse"], {
    cwd: root,
    env: { ...process.env, BATON_HOOK_DEBUG: "1", BATON_HOOK_SERVER: "use" },
    input: preBash(root, call),
    encoding: "utf8",
  });

describe("the shell's hook client", () => {
  for (const [agent, steps] of Object.entries(SCENARIOS)) {
    it(`${agent}: answers as the in-process hook does, step by step, starting no Node`, async () => {
      const viaClient = workspace(FILES);
      const inProcess = workspace(FILES);
      const s = await serve(viaClient);
      try {
        for (const [i, step] of steps.entries()) {
          const a = client(viaClient, step, { BATON_HOOK_SERVER: "use" });
          const b = hook(inProcess, step, { BATON_HOOK_SERVER: "off" });
          expect(normalise(a.stdout, viaClient), `step ${i} (${step.fixture})`).toBe(normalise(b.stdout, inProcess));
          expect(a.via, `step ${i} (${step.fixture}): ${a.stderr}`).toBe("client");
          step.effect?.(viaClient);
          step.effect?.(inProcess);
        }
        expect(checkpoints(viaClient).length).toBe(checkpoints(inProcess).length);
      } finally {
        await s.stop();
      }
    });
  }

  it("needs no Node on PATH for a tool call's hooks, whether the payload comes on a socket or a pipe", async () => {
    const root = workspace(FILES);
    const s = await serve(root);
    try {
      client(root, START);
      const PATH = pathWithoutNode();
      const before = client(root, PRE_BASH, { PATH });
      expect(before.via).toBe("client");
      const after = client(root, POST_BASH, { PATH }, { pipe: true });
      expect(after.via).toBe("client");
      expect(checkpoints(root)).toHaveLength(1);
      expect(baton(root, ["ledger", "list"]).nodes).toHaveLength(1);
    } finally {
      await s.stop();
    }
  });

  it("hands what it does not answer to the Node an install names (`--node=`), with no Node on PATH", async () => {
    const root = workspace(FILES);
    const PATH = pathWithoutNode();
    const node = process.execPath;
    // No server: every hook is Node's, the named one.
    expect(client(root, START, { PATH }, { node }).via).toBe("process");
    expect(client(root, PRE_BASH, { PATH }, { node }).via).toBe("process");
    const s = await serve(root);
    try {
      // With the server, the client answers; a payload past 64 KiB goes to the named Node.
      expect(client(root, POST_BASH, { PATH }, { node }).via).toBe("client");
      const big = JSON.parse(preBash(root, "call-big"));
      big.tool_input.command = `echo ${"x".repeat(100 * 1024)}`;
      expect(client(root, PRE_BASH, { PATH }, { node, text: JSON.stringify(big) }).via).toBe("server");
      expect(checkpoints(root)).toHaveLength(2);
    } finally {
      await s.stop();
    }
    // Other commands too; and a Node that is not there fails as a missing program does.
    const version = spawnSync(CLI, [`--node=${node}`, "--version"], { env: { ...process.env, PATH }, encoding: "utf8" });
    expect(version.status, version.stderr).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    const gone = spawnSync(CLI, ["--node=/nonexistent/node", "hook", "codex", "PreToolUse"], { cwd: root, input: "{}", encoding: "utf8" });
    expect(gone.status).toBe(127);
  });

  it("fails a hook that lost its arguments (Claude Code before exec form runs `command` alone) rather than print help and succeed", () => {
    const root = workspace(FILES);
    for (const args of [[], [`--node=${process.execPath}`]]) {
      const r = spawnSync(CLI, args, { cwd: root, input: preBash(root, "call-bare"), encoding: "utf8" });
      expect(r.status, r.stderr).toBe(1);
      expect(r.stderr).toContain("baton: no command given");
      expect(r.stdout).toBe("");
    }
    // No input (a tool that runs it with /dev/null): the help, as ever.
    const help = spawnSync(CLI, [], { cwd: root, stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" });
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout + help.stderr).toContain("Usage: baton");
  });

  it("sends up to 64 KiB itself, on a socket or a pipe, and hands a larger payload to Node", async () => {
    const root = workspace(FILES);
    const s = await serve(root);
    try {
      client(root, START);
      client(root, PRE_BASH);
      const base = JSON.parse(payload("codex", "post-bash", { cwd: root, session: "agent-session-1", call: "call-1" }));
      const vias: string[] = [];
      for (const [size, pipe] of [
        [60 * 1024, false],
        [60 * 1024, true],
        [2 * 1024 * 1024, false],
        [2 * 1024 * 1024, true],
      ] as const) {
        const text = JSON.stringify({ ...base, tool_use_id: `call-${size}-${pipe}`, tool_response: `${"x".repeat(size)}\nthe end` });
        vias.push(`${size}:${client(root, POST_BASH, {}, { pipe, text }).via}`);
      }
      expect(vias).toEqual([`${60 * 1024}:client`, `${60 * 1024}:client`, `${2 * 1024 * 1024}:process`, `${2 * 1024 * 1024}:process`]);
      // Each recorded once, whoever answered; the same output hashed alike either way.
      const nodes = baton(root, ["ledger", "list"]).nodes as { observation?: unknown }[];
      expect(nodes).toHaveLength(4);
      expect(nodes[1]?.observation).toBe(nodes[0]?.observation);
      expect(nodes[3]?.observation).toBe(nodes[2]?.observation);
    } finally {
      await s.stop();
    }
  });

  describe("hands the hook to Node, which answers it", () => {
    it("when no server runs", () => {
      const root = workspace(FILES);
      client(root, START);
      const r = client(root, PRE_BASH);
      expect(r.via).toBe("process");
      expect(checkpoints(root)).toHaveLength(1);
    });

    it("when the answer breaks off after a 200: in its headers, in its body, or past the time it gave", async () => {
      const root = workspace(FILES);
      client(root, START);
      for (const mode of ["headers", "ended", "body", "late"] as const) {
        const fake = await fakeServe(root, mode);
        try {
          const t = Date.now();
          const r = client(root, PRE_BASH, {}, { text: preBash(root, `call-${mode}`) });
          expect(r.via, `${mode}: ${r.stderr}`).toBe("process");
          expect(r.stderr, mode).toContain("not answered by the server: handed to Node");
          // The client connected (Node then tries the same server, and answers in its own process).
          expect(fake.connections(), mode).toBeGreaterThanOrEqual(1);
          // A late answer is waited for a second at least (`X-Baton-Wait-Ms: 0` is not "no wait").
          if (mode === "late") {
            expect(Date.now() - t).toBeGreaterThanOrEqual(1_000);
            expect(Date.now() - t).toBeLessThan(4_000);
          }
        } finally {
          fake.stop();
        }
      }
      expect(checkpoints(root)).toHaveLength(4);
    });

    it("when the server says nothing within a second: Node answers without asking it again", async () => {
      const root = workspace(FILES);
      client(root, START);
      const fake = await fakeServe(root, "count");
      try {
        const t = Date.now();
        const r = client(root, PRE_BASH, {}, { text: preBash(root, "call-silent") });
        expect(Date.now() - t).toBeGreaterThanOrEqual(1_000);
        expect(r.via, r.stderr).toBe("process");
        expect(r.stderr).toContain("not answered by the server (no answer within a second): handed to Node");
        expect(r.stderr).toContain("answered in this process (the server did not answer the shell's hook client within a second)");
        // The client's connection, and no second one from Node (a second second on a hung server).
        expect(fake.connections()).toBe(1);
        expect(checkpoints(root)).toHaveLength(1);
      } finally {
        fake.stop();
      }
    });

    it("when hooks are off in its environment, without connecting; and when it cannot connect, in bash's POSIX mode too", async () => {
      const root = workspace(FILES);
      client(root, START);
      const fake = await fakeServe(root, "count");
      try {
        for (const off of ["off", " OFF ", "0", "false", "no"]) {
          const r = client(root, PRE_BASH, { BATON_HOOK_SERVER: off }, { text: preBash(root, `call-off-${off.trim()}`) });
          expect(r.via, r.stderr).toBe("process");
        }
        expect(fake.connections()).toBe(0);
      } finally {
        fake.stop();
      }
      // The file still names the process's port, which nothing listens on any more: refused.
      const fake2 = await fakeServe(root, "count");
      fake2.stop();
      const info = JSON.parse(readFileSync(join(root, ".baton", "server.json"), "utf8"));
      const listener = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)", "serve"], { cwd: root, stdio: "ignore" });
      try {
        await new Promise((r) => setTimeout(r, 200));
        const startTime = readFileSync(`/proc/${listener.pid}/stat`, "utf8").split(") ")[1]?.split(" ")[19] as string;
        writeServerFile(root, { ...info, pid: listener.pid as number, startTime });
        for (const env of [{ POSIXLY_CORRECT: "1" }, { SHELLOPTS: "errexit:nounset" }, {}] as Record<string, string>[]) {
          const r = client(root, PRE_BASH, env, { text: preBash(root, `call-refused-${Object.keys(env).join("")}`) });
          expect(r.via, r.stderr).toBe("process");
          expect(r.stderr).toContain("not answered by the server: handed to Node");
        }
      } finally {
        listener.kill("SIGKILL");
      }
      expect(checkpoints(root)).toHaveLength(8);
    });

    it("with a relative BATON_ROOT, and from another copy of baton than the server's", async () => {
      const root = workspace(FILES);
      const s = await serve(root);
      try {
        client(root, START);
        // `.`, a folder inside the workspace, one that does not exist: the client walks up to the
        // workspace's server, which, as a hook process, takes only the workspace itself for a root.
        for (const dir of [".", "src", "no/such/folder"]) {
          const rel = client(root, PRE_BASH, { BATON_ROOT: dir }, { text: preBash(root, `call-relative-${dir}`) });
          expect(rel.via, `${dir}: ${rel.stderr}`).toBe("client");
          expect(normalise(rel.stdout, root)).toBe(
            normalise(hook(root, PRE_BASH, { BATON_ROOT: dir, BATON_HOOK_SERVER: "off" }).stdout, root),
          );
        }
        // A copy of bin/baton.cjs beside the same dist/: not the file the server started from.
        const other = mkdtempSync(join(tmpdir(), "baton-other-"));
        mkdirSync(join(other, "bin"));
        writeFileSync(join(other, "bin", "baton.cjs"), readFileSync(CLI), { mode: 0o755 });
        symlinkSync(join(CLI, "..", "..", "dist"), join(other, "dist"));
        const copy = preBashThrough(join(other, "bin", "baton.cjs"), root, "call-copy");
        expect(copy.status, copy.stderr).toBe(0);
        expect(copy.stderr).toContain("not this server's baton");
        expect(checkpoints(root), copy.stderr).toHaveLength(3); // ".", in both ways, and the copy
      } finally {
        await s.stop();
      }
    });

    it("takes a server the user started in a folder of the workspace, or with BATON_ROOT, as Node's hooks do", async () => {
      for (const how of ["a folder of it", "BATON_ROOT"] as const) {
        const root = workspace(FILES);
        client(root, START);
        const s =
          how === "BATON_ROOT"
            ? await serve(root, [], { BATON_ROOT: root }, { cwd: tmpdir() })
            : await serve(root, [], undefined, { cwd: join(root, "src") });
        try {
          const r = client(root, PRE_BASH, {}, { text: preBash(root, `call-${how.length}`) });
          expect(r.via, `${how}: ${r.stderr}`).toBe("client");
          expect(checkpoints(root)).toHaveLength(1);
        } finally {
          await s.stop();
        }
      }
    });

    it("when server.json names pid 1, another folder's or a stopped process, or a wrong start time: the client never connects", async () => {
      const root = workspace(FILES);
      client(root, START);
      // Whatever connects gets a 404 (and a hook process then answers in its own process).
      const lines: string[] = [];
      const listener = createServer((sock) =>
        sock.once("data", (d: Buffer) => {
          lines.push(d.toString().split("\r\n")[0] as string);
          sock.end("HTTP/1.1 404 X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        }),
      );
      await new Promise<void>((r) => listener.listen(0, "127.0.0.1", () => r()));
      const port = (listener.address() as { port: number }).port;
      const s = await serve(root);
      const plain = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { cwd: root, stdio: "ignore" });
      const elsewhere = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)", "serve"], { cwd: tmpdir(), stdio: "ignore" });
      const rootedElsewhere = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)", "serve", "--root", tmpdir()], {
        cwd: root,
        stdio: "ignore",
      });
      const envElsewhere = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)", "serve"], {
        cwd: root,
        env: { ...process.env, BATON_ROOT: tmpdir() },
        stdio: "ignore",
      });
      try {
        await new Promise((r) => setTimeout(r, 200));
        const startOf = (pid: number) => readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ")[19] as string;
        const forged = [
          { pid: 1, startTime: startOf(1) },
          { pid: plain.pid as number, startTime: startOf(plain.pid as number) }, // in the workspace, but it runs no `serve`
          { pid: s.pid, startTime: "1" },
          { pid: elsewhere.pid as number, startTime: startOf(elsewhere.pid as number) }, // `serve` in another folder
          { pid: rootedElsewhere.pid as number, startTime: startOf(rootedElsewhere.pid as number) }, // `serve --root` another folder
          { pid: envElsewhere.pid as number, startTime: startOf(envElsewhere.pid as number) }, // BATON_ROOT another folder
        ];
        for (const [i, f] of forged.entries()) {
          writeServerFile(root, { ...f, port, token: s.token });
          const r = client(root, PRE_BASH, {}, { text: preBash(root, `call-forged-${i}`) });
          expect(r.via, `${JSON.stringify(f)}: ${r.stderr}`).toBe("process");
          expect(r.stderr, JSON.stringify(f)).not.toContain("not answered by the server");
        }
        // Neither the client nor Node's hook connects to what these name.
        expect(lines).toEqual([]);
        expect(checkpoints(root)).toHaveLength(forged.length);
      } finally {
        plain.kill("SIGKILL");
        elsewhere.kill("SIGKILL");
        rootedElsewhere.kill("SIGKILL");
        envElsewhere.kill("SIGKILL");
        await s.stop();
        await new Promise((r) => listener.close(r));
      }
    });

    it("when the hook's environment sets other settings, turns the server off, or moves the agent's configuration", async () => {
      const root = workspace(FILES);
      const s = await serve(root);
      try {
        client(root, START);
        const other = client(root, PRE_BASH, { BATON_DURABILITY: "full" }, { text: preBash(root, "call-durable") });
        expect(other.via, other.stderr).toBe("process");
        expect(other.stderr).toContain("handed to Node");
        const off = client(root, PRE_BASH, { BATON_HOOK_SERVER: "off" }, { text: preBash(root, "call-off") });
        expect(off.via, off.stderr).toBe("process");
        expect(checkpoints(root)).toHaveLength(2);
        // A patch writing the hooks of the Codex whose home the hook's environment names.
        const home = join(root, "..", `codex-home-${Date.now()}`);
        mkdirSync(home, { recursive: true });
        const patch = JSON.parse(payload("codex", "pre-apply-patch", { cwd: root, session: "agent-session-1", call: "call-guard" }));
        patch.tool_input.command = `*** Begin Patch\n*** Add File: ${join(home, "hooks.json")}\n+{}\n*** End Patch\n`;
        const denied = client(root, { agent: "codex", fixture: "pre-apply-patch" }, { CODEX_HOME: home }, { text: JSON.stringify(patch) });
        expect(denied.via, denied.stderr).toBe("process");
        expect(denied.stdout).toContain("supervis");
      } finally {
        await s.stop();
      }
    });

    it("when the server does not take the hook within a second (stopped), or refuses its token", async () => {
      const root = workspace(FILES);
      const s = await serve(root);
      try {
        client(root, START);
        process.kill(s.pid, "SIGSTOP");
        let stopped: ClientResult;
        const t = Date.now();
        try {
          stopped = client(root, PRE_BASH, {}, { text: preBash(root, "call-stopped") });
        } finally {
          process.kill(s.pid, "SIGCONT");
        }
        expect(stopped.via, stopped.stderr).toBe("process");
        expect(stopped.stderr).toContain("not answered by the server (no answer within a second): handed to Node");
        expect(stopped.stderr).toContain("the server did not answer the shell's hook client within a second");
        expect(Date.now() - t).toBeGreaterThanOrEqual(1_000);
        const info = JSON.parse(readFileSync(join(root, ".baton", "server.json"), "utf8"));
        writeFileSync(join(root, ".baton", "server.json"), JSON.stringify({ ...info, token: "x".repeat(43) }), { mode: 0o600 });
        const refused = client(root, PRE_BASH, {}, { text: preBash(root, "call-token") });
        expect(refused.via, refused.stderr).toBe("process");
        expect(checkpoints(root)).toHaveLength(2);
      } finally {
        await s.stop();
      }
    });
  });

  it("hands a hard link of the server's baton beside another build's bundle to Node", async () => {
    const root = workspace(FILES);
    const s = await serve(root);
    // On the checkout's file system (a hard link cannot cross one), as pnpm or Nix link files of
    // two installs: the same bin/baton.cjs, another dist/.
    let other = "";
    try {
      mkdirSync(join(REPO, ".cache"), { recursive: true });
      other = mkdtempSync(join(REPO, ".cache", "hook-client-hardlink-"));
      client(root, START);
      mkdirSync(join(other, "bin"));
      mkdirSync(join(other, "dist"));
      linkSync(CLI, join(other, "bin", "baton.cjs"));
      const dist = join(REPO, "dist");
      for (const f of readdirSync(dist)) {
        if (f === "cli-full.cjs") writeFileSync(join(other, "dist", f), readFileSync(join(dist, f)));
        else symlinkSync(join(dist, f), join(other, "dist", f));
      }
      const r = preBashThrough(join(other, "bin", "baton.cjs"), root, "call-hardlink");
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).toContain("not this server's baton");
      expect(checkpoints(root)).toHaveLength(1);
    } finally {
      if (other) rmSync(other, { recursive: true, force: true });
      await s.stop();
    }
  });

  describe("POST /v1/hook-clients/:agent/:event", () => {
    it("is guarded as every process route, and refuses what its client's own process answers", async () => {
      const after: (() => void)[] = [];
      const root = workspace(FILES);
      const s = await serve(root);
      try {
        client(root, START);
        const text = preBash(root, "call-route");
        const post = (path: string, headers: Record<string, string>, body = text) =>
          raw(s.port, { method: "POST", path, headers: { "content-type": "application/json", ...headers }, body });
        // The client's process, whose environment the server reads: one started with this
        // process's environment as it is now (/proc keeps a process's environment as it started),
        // reading this baton as bash reads a script (on its file descriptor 255).
        const clientProcess = spawn("/bin/bash", ["-c", 'exec 255<"$0"; sleep 60', CLI], { env: process.env, stdio: "ignore" });
        after.push(() => clientProcess.kill("SIGKILL"));
        const auth = { authorization: `Bearer ${s.token}`, "x-baton-hook-pid": String(clientProcess.pid) };
        expect((await post("/v1/hook-clients/codex/PreToolUse", { "x-baton-hook-pid": auth["x-baton-hook-pid"] })).status).toBe(401);
        expect((await post("/v1/hook-clients/codex/PreToolUse", { ...auth, origin: `http://127.0.0.1:${s.port}` })).status).toBe(403);
        expect((await post("/v1/hook-clients/codex/PreToolUse", { authorization: auth.authorization })).json().error.code).toBe(
          "bad_input",
        );
        expect((await post("/v1/hook-clients/nobody/PreToolUse", auth)).status).toBe(404);
        // A payload that is not JSON: its process reports it, as it always has.
        const refused = await post("/v1/hook-clients/codex/PreToolUse", auth, "{not json");
        expect(refused.status).toBe(409);
        expect(refused.json().error.code).toBe("answer_in_process");
        // A pid whose /proc cannot be read (gone): its process answers.
        const gone = spawnSync("true").pid as number;
        const unread = await post("/v1/hook-clients/codex/PreToolUse", { ...auth, "x-baton-hook-pid": String(gone) });
        expect(unread.json().error.code).toBe("answer_in_process");
        expect(checkpoints(root)).toHaveLength(0);
        // Taken: the status at once, with how long the answer may take, then what the hook prints.
        const taken = await post("/v1/hook-clients/codex/PreToolUse", auth);
        expect(taken.status, taken.text).toBe(200);
        expect(Number(taken.headers["x-baton-wait-ms"])).toBeGreaterThan(0);
        expect(checkpoints(root)).toHaveLength(1);
      } finally {
        for (const f of after.splice(0)) f();
        await s.stop();
      }
    });
  });
});

/**
 * One project for a real agent CLI: a fresh git repository in a temp dir with Baton initialised
 * and Baton's hooks installed, a private HOME (and CODEX_HOME), a `baton` on PATH, and a way to
 * run the agent headless against the mock model. Every hook payload the agent sends is teed into
 * `captures/` (the `baton` shim does it), so a test sees which events fired and with what.
 */
import { spawn, spawnSync } from "node:child_process";
import {
  appendFileSync,
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import { type AgentName, REPO } from "./install.js";

/** The baton the agents run: this checkout's, or another build's `bin/baton.cjs` (BATON_AGENT_E2E_CLI). */
export const CLI = process.env.BATON_AGENT_E2E_CLI || join(REPO, "bin", "baton.cjs");

/**
 * BATON_AGENT_KEEP: the directory each run's project, captures and model requests are copied
 * into, for a look at a run (docs/integrations.md). Absolute: a relative one (or `1`) would land
 * in the directory the tests run from, the repository.
 */
export const KEEP: string | undefined = (() => {
  const dir = process.env.BATON_AGENT_KEEP;
  if (!dir) return undefined;
  if (!isAbsolute(dir)) throw new Error(`BATON_AGENT_KEEP=${dir}: give an absolute directory to keep the runs in`);
  return dir;
})();

export interface AgentRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout's JSON lines. */
  events: any[];
}

export interface Capture {
  event: string;
  payload: any;
  file: string;
}

export class Project {
  readonly base: string;
  readonly root: string;
  readonly home: string;
  readonly bin: string;
  readonly captures: string;
  env: Record<string, string>;

  constructor(
    readonly agent: AgentName,
    files: Record<string, string>,
  ) {
    this.base = mkdtempSync(join(tmpdir(), `agent-e2e-${agent}-`));
    this.root = join(this.base, "repo");
    this.home = join(this.base, "home");
    this.bin = join(this.base, "bin");
    this.captures = join(this.base, "captures");
    for (const d of [this.root, this.home, this.bin, this.captures]) mkdirSync(d, { recursive: true });
    // The agents find `baton` on PATH; with BATON_CAPTURE_DIR set, a hook's stdin is kept too.
    // It runs bin/baton.cjs as a program, as an installed `baton` runs: the shell's hook client
    // first (a tool call's hook answered by the workspace's server with no Node), then Node.
    writeFileSync(
      join(this.bin, "baton"),
      [
        "#!/bin/bash",
        'if [ "$1" = hook ] && [ -n "$BATON_CAPTURE_DIR" ]; then',
        '  f="$BATON_CAPTURE_DIR/$(date +%s%N).$2.$3.$$.json"',
        `  exec ${JSON.stringify(CLI)} "$@" < <(tee "$f")`,
        "fi",
        `exec ${JSON.stringify(CLI)} "$@"`,
        "",
      ].join("\n"),
    );
    chmodSync(join(this.bin, "baton"), 0o755);
    this.env = {
      HOME: this.home,
      // A developer's own agents (in /usr/local/bin, say) come after the suite's stand-ins
      // (test/setup.ts): only a `claude` a test links into its bin is found.
      PATH: [this.bin, process.env.TEST_AGENT_STANDINS, dirname(process.execPath), "/usr/local/bin", "/usr/bin", "/bin"]
        .filter((d) => d !== undefined)
        .join(":"),
      LANG: "C.UTF-8",
      TERM: "dumb",
      NO_COLOR: "1",
      CI: "1",
      BATON_CAPTURE_DIR: this.captures,
      // Hooks run in their own processes unless a test starts a server (docs/integrations.md).
      BATON_HOOK_SERVER: process.env.BATON_HOOK_SERVER ?? "use",
      CODEX_HOME: join(this.home, ".codex"),
    };
    for (const [rel, text] of Object.entries(files)) this.write(rel, text);
    this.git(["init", "-q"]);
    this.git(["add", "-A"]);
    this.git(["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"]);
    const init = this.baton(["init"]);
    if (init.code !== 0) throw new Error(`baton init: ${init.stderr}`);
  }

  write(rel: string, text: string): void {
    mkdirSync(dirname(join(this.root, rel)), { recursive: true });
    writeFileSync(join(this.root, rel), text);
  }

  read(rel: string): string | undefined {
    const p = join(this.root, rel);
    return existsSync(p) ? readFileSync(p, "utf8") : undefined;
  }

  /** Keep a file out of git in this clone only (`.git/info/exclude`), as `baton hooks install claude --http` asks. */
  excludeFromGit(rel: string): void {
    appendFileSync(join(this.root, ".git", "info", "exclude"), `${rel}\n`);
  }

  git(args: string[]): string {
    const r = spawnSync("git", args, { cwd: this.root, encoding: "utf8", env: { ...process.env, ...this.env } });
    if (r.status !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
    return r.stdout;
  }

  /** `baton …` in the project, as the user would run it. */
  baton(args: string[], env: Record<string, string> = {}): { code: number; stdout: string; stderr: string; json: () => any } {
    const r = spawnSync(join(this.bin, "baton"), args, {
      cwd: this.root,
      encoding: "utf8",
      env: { ...this.env, BATON_CAPTURE_DIR: "", ...env },
      timeout: 60_000,
      killSignal: "SIGKILL",
    });
    return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr, json: () => JSON.parse(r.stdout) };
  }

  /** Run the agent to its end (async: the mock model answers from this process). */
  run(cmd: string, args: string[], extraEnv: Record<string, string> = {}, timeoutMs = 120_000): Promise<AgentRun> {
    return new Promise((resolveRun, reject) => {
      const child = spawn(cmd, args, { cwd: this.root, env: { ...this.env, ...extraEnv }, stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d) => (stdout += d));
      child.stderr.on("data", (d) => (stderr += d));
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        reject(new Error(`${cmd} ${args.join(" ")} did not finish in ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
      }, timeoutMs);
      child.on("error", reject);
      child.on("close", (code) => {
        clearTimeout(timer);
        const events = stdout
          .split("\n")
          .filter((l) => l.trim().startsWith("{"))
          .flatMap((l) => {
            try {
              return [JSON.parse(l)];
            } catch {
              return [];
            }
          });
        resolveRun({ code, stdout, stderr, events });
      });
    });
  }

  /**
   * The hook payloads captured so far, in order. A relay's capture (`baton hook opencode --relay`,
   * OpenCode's plugin) holds one `{id, event, payload}` line per hook: each is a capture of its own.
   */
  captured(): Capture[] {
    return readdirSync(this.captures)
      .filter((f) => f.endsWith(".json"))
      .sort()
      .flatMap((f): Capture[] => {
        // `<time>.<agent>.<event>.<pid>.json`; OpenCode's event names have dots of their own.
        const event = f.split(".").slice(2, -2).join(".");
        const text = readFileSync(join(this.captures, f), "utf8");
        if (event === "--relay")
          return text
            .split("\n")
            .filter((l) => l.trim() !== "")
            .map((l) => {
              try {
                const call = JSON.parse(l);
                return { event: String(call.event), payload: call.payload, file: f };
              } catch {
                return { event: "--relay", payload: { unparsed: l }, file: f };
              }
            });
        let payload: any;
        try {
          payload = JSON.parse(text);
        } catch {
          payload = { unparsed: text };
        }
        return [{ event: event as string, payload, file: f }];
      });
  }

  cleanup(): void {
    rmSync(this.base, { recursive: true, force: true });
  }
}

/**
 * Claude Code's HTTP hooks in the e2e suite: `baton serve` for the project, on a port of its own,
 * behind a proxy on the port the hooks name (`.baton/server.key` at install). The proxy keeps each
 * payload in `captures/` as the `baton` shim does for command hooks (named `<time>.claude.<Event>.http.json`),
 * passes the request on with the server's Host, and the answer back unchanged.
 */
export async function httpHookServer(p: Project): Promise<{ port: number; stop(): Promise<void> }> {
  const { createServer, request } = await import("node:http");
  const keyFile = join(p.root, ".baton", "server.key");
  const keyText = readFileSync(keyFile, "utf8");
  const key = JSON.parse(keyText) as { port: number };
  const child = spawn(process.execPath, [CLI, "serve", "--json", "--root", p.root, "--port", "0"], {
    cwd: p.root,
    env: { ...p.env, BATON_CAPTURE_DIR: "" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const started = await new Promise<{ port: number; serverFile: string }>((resolveReady, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`baton serve did not start: ${stderr}`)), 30_000);
    child.stdout.on("data", (d) => {
      out += d;
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (line) {
        clearTimeout(timer);
        resolveReady(JSON.parse(line));
      }
    });
    child.on("exit", (code) => reject(new Error(`baton serve exited ${code}: ${stderr}`)));
  });
  const ready = { port: started.port, token: (JSON.parse(readFileSync(started.serverFile, "utf8")) as { token: string }).token };
  let seq = 0;
  const proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const event = (req.url ?? "").split("/").pop() ?? "unknown";
      writeFileSync(join(p.captures, `${process.hrtime.bigint()}${String(seq++).padStart(4, "0")}.claude.${event}.http.json`), body);
      // The server on another port holds another token (a token goes with one port): the proxy,
      // standing for it on the hooks' port, sends the server's.
      const headers = { ...req.headers, host: `127.0.0.1:${ready.port}`, authorization: `Bearer ${ready.token}` };
      const fwd = request({ host: "127.0.0.1", port: ready.port, path: req.url, method: req.method, headers }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      fwd.on("error", () => {
        res.writeHead(502);
        res.end();
      });
      fwd.end(body);
    });
  });
  await new Promise<void>((r) => proxy.listen(key.port, "127.0.0.1", () => r()));
  return {
    port: ready.port,
    async stop() {
      await new Promise<void>((r) => proxy.close(() => r()));
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        await exited;
      }
      // The server wrote its own port into the key; the hooks' port (the proxy's) stands for it.
      writeFileSync(keyFile, keyText);
    },
  };
}

/**
 * Whether a `baton hook <agent> [event]` process (or the shim before it) is running with its
 * working directory in `root` (Linux's /proc): a hook an agent started and did not wait for
 * (Cline CLI's), or one whose payload was captured but which has not answered yet.
 */
export function hookRunning(root: string, agent: string, event?: string): boolean {
  const here = realpathSync(root);
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      const at = argv.indexOf("hook");
      if (at < 0 || argv[at + 1] !== agent || (event !== undefined && argv[at + 2] !== event)) continue;
      const cwd = realpathSync(`/proc/${pid}/cwd`);
      if (cwd === here || cwd.startsWith(`${here}/`)) return true;
    } catch {
      // gone meanwhile
    }
  }
  return false;
}

/**
 * Stop the hub daemons Cline CLI leaves running for a project after a headless task (`cline
 * --cline-hub-daemon --cwd <repo>`, Linux's /proc): a test's own, whatever happened to it.
 */
export function killClineHubDaemons(root: string): void {
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      if (argv.includes("--cline-hub-daemon") && argv.some((a) => a === root || a.startsWith(`${root}/`)))
        process.kill(Number(pid), "SIGKILL");
    } catch {
      // exited meanwhile, or not ours to read or stop
    }
  }
}

/**
 * What Claude Code's per-call hooks cost as HTTP hooks (`baton hooks install claude --http`)
 * against command hooks, inside the real Claude Code (the version test/agents/versions.json pins)
 * driven by the e2e suite's scripted model.
 *
 *   node scripts/build.mjs --no-types && node bench/agents-http.mjs [--reps N] [--calls K] [--setups a,b]
 *
 * Each run is one headless turn of K tool calls (default 50) in a fresh project, alternating a
 * file write and a shell command (`true step-<i>`: a targeted checkpoint, then a whole-tree one).
 * The cost of one call is the time from the model's answer naming it to Claude Code's next
 * request to the model (the mock model stamps each request): the before-hooks, the tool and the
 * after-hooks. Three set-ups, in rotating order, each with the workspace's server already
 * running (`baton serve`, started before the turn) so that only the per-call path differs:
 *
 * - none:    no hooks;
 * - command: Baton's hooks as `baton hooks install claude` writes them (a process per hook,
 *            which hands its payload to the server);
 * - http:    `baton hooks install claude --http` (PreToolUse, PostToolUse, PostToolUseFailure
 *            POSTed to the server by Claude Code itself; the other events stay command hooks);
 * - http-empty: the same settings, but the port answers `{}` at once (a bare node:http server in
 *            this process, no Baton): what Claude Code's HTTP hook itself costs, without Baton's
 *            work (the checkpoint, the ledger node, the turn).
 * - mod:     the same HTTP entries removed and the same two POSTs made instead from inside Claude
 *            Code by a hooks module (a "mod", bench/claude-mod.js, loaded with --plugin-dir)
 *            wrapping each write or shell call: what an in-process integration would cost.
 * - mod-empty: that mod, the port answering `{}` at once (Claude Code's own cost of a mod's call).
 *
 * BENCH_SERVE_NODE_ARGS adds Node options to each `baton serve` (`--cpu-prof --cpu-prof-dir=<dir>`:
 * a CPU profile of the server's work behind the hooks).
 *
 * Every Baton run is checked: K checkpoints taken and K ledger nodes (every after-hook answered). Reported per kind of call: the median per
 * set-up, what command and http add to none, the ratio of the two additions, and the whole
 * turn's time. The load average is printed beside them (the machine is shared). Written to
 * bench/results/agents-http-<time>.json.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import os from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { commandLine, median, REPO } from "./lib.mjs";

const args = commandLine(import.meta.url, { valued: ["--reps", "--calls", "--setups"] });
const option = (name, dflt) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : dflt);
const REPS = option("--reps", 3);
const K = option("--calls", 50);
const ALL = ["none", "command", "http", "http-empty", "mod", "mod-empty"];
const only = args.includes("--setups") ? args[args.indexOf("--setups") + 1].split(",") : ALL;
const SETUPS = ALL.filter((s) => s === "none" || only.includes(s));
const LABELS = {
  none: "none",
  command: "command hooks (+)",
  http: "HTTP hooks (+)",
  "http-empty": "HTTP hooks answering {} (+)",
  mod: "mod (+)",
  "mod-empty": "mod answering {} (+)",
};
const HELPERS = join(REPO, "bench", "results", ".agents-http-helpers.mjs");
const BATON = join(REPO, "bin", "baton.cjs");

async function loadHelpers() {
  mkdirSync(join(REPO, "bench", "results"), { recursive: true });
  await build({
    stdin: {
      contents:
        'export * from "./harness.ts"; export * from "./install.ts"; export * from "./mock-model.ts"; export * from "./drivers.ts";',
      resolveDir: join(REPO, "test", "agents"),
      loader: "ts",
    },
    bundle: true,
    platform: "node",
    format: "esm",
    outfile: HELPERS,
    define: { "import.meta.dirname": JSON.stringify(join(REPO, "test", "agents")) },
    logLevel: "error",
  });
  return import(HELPERS);
}

function script(k) {
  const steps = [];
  for (let i = 0; i < k; i++)
    steps.push(i % 2 === 0 ? { op: "write", path: `gen/f${i}.txt`, content: `file ${i}\n` } : { op: "shell", command: `true step-${i}` });
  return [...steps, { op: "text", text: "Done." }];
}

/** `baton serve` for the project (on the port the key names, as its hooks expect); resolves once it is ready. */
function serve(p) {
  const nodeArgs = process.env.BENCH_SERVE_NODE_ARGS?.split(" ").filter(Boolean) ?? [];
  const child = spawn(process.execPath, [...nodeArgs, BATON, "serve", "--json", "--root", p.root], {
    cwd: p.root,
    env: { ...process.env, ...p.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    child.stderr.on("data", (d) => (err += d));
    child.stdout.on("data", (d) => {
      out += d;
      if (out.includes("\n")) resolve(child);
    });
    child.on("exit", (code) => reject(new Error(`baton serve exited ${code}: ${err}`)));
  });
}

/** A server on the port the hooks name that answers every hook `{}` at once. */
function emptyServer(p) {
  const { port } = JSON.parse(readFileSync(join(p.root, ".baton", "server.key"), "utf8"));
  const s = createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(200, { "Content-Type": "application/json", "Content-Length": 2 }).end("{}"));
  });
  return new Promise((resolve) => s.listen(port, "127.0.0.1", () => resolve({ close: () => new Promise((r) => s.close(r)) })));
}

/**
 * The per-call hooks as a mod: the HTTP entries `--http` wrote are removed, and a plugin
 * directory holds bench/claude-mod.js with the server's address and token. Returns the directory.
 */
function writeMod(p) {
  const settingsPath = join(p.root, ".claude", "settings.local.json");
  const settings = JSON.parse(readFileSync(settingsPath, "utf8"));
  for (const ev of ["PreToolUse", "PostToolUse", "PostToolUseFailure"]) delete settings.hooks[ev];
  writeFileSync(settingsPath, JSON.stringify(settings, null, 2));
  const { port, token } = JSON.parse(readFileSync(join(p.root, ".baton", "server.key"), "utf8"));
  const dir = join(p.base, "mod");
  mkdirSync(join(dir, ".claude-plugin"), { recursive: true });
  mkdirSync(join(dir, "hooks"), { recursive: true });
  writeFileSync(join(dir, ".claude-plugin", "plugin.json"), JSON.stringify({ name: "baton-bench-mod", version: "0.0.0" }));
  writeFileSync(join(dir, "hooks", "hooks.json"), JSON.stringify({ modules: ["./register.js"] }));
  const source = readFileSync(join(REPO, "bench", "claude-mod.js"), "utf8");
  writeFileSync(
    join(dir, "hooks", "register.js"),
    source.replace("__BASE__", `http://127.0.0.1:${port}/v1/agent-hooks/claude`).replace("__TOKEN__", token),
  );
  return dir;
}

async function stop(child) {
  if (!child) return;
  if (child.close) return child.close();
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  await exited;
}

async function once(h, mock, url, cli, d, setup) {
  const p = new h.Project("claude", { "a.txt": "one\n", "src/b.txt": "bee\n", "README.md": "# demo\n" });
  let server;
  const extra = [];
  try {
    if (setup !== "none") {
      // This node and this baton by absolute path, as Claude Code's local file has them.
      const launcher = `${process.execPath} ${BATON}`;
      // --http refuses a settings file git would commit (it holds the server's token).
      const http = setup !== "command";
      if (http) p.excludeFromGit(".claude/settings.local.json");
      execFileSync(process.execPath, [BATON, "--json", "hooks", "install", "claude", "--command", launcher, ...(http ? ["--http"] : [])], {
        cwd: p.root,
        env: { ...process.env, ...p.env },
        encoding: "utf8",
      });
      server = setup.endsWith("-empty") ? await emptyServer(p) : await serve(p);
      if (setup.startsWith("mod")) extra.push("--plugin-dir", writeMod(p));
    }
    mock.play(script(K), p.root);
    const env = { ...d.env(url), BATON_CAPTURE_DIR: "", BATON_HOOK_SERVER: "use" };
    const from = mock.requests.length;
    const started = performance.now();
    const r = await p.run(cli, [...d.args("Do the work."), ...extra], env, 600_000);
    const turnMs = performance.now() - started;
    if (r.code !== 0) throw new Error(`claude ${setup} exited ${r.code}: ${r.stderr.slice(-2000)}`);
    const mains = mock.requests.slice(from).filter((q) => q.main);
    const calls = { write: [], shell: [] };
    for (let i = 0; i + 1 < mains.length; i++) {
      const op = mains[i].step?.op;
      if (op === "write" || op === "shell") calls[op].push(mains[i + 1].at - mains[i].at);
    }
    if (calls.write.length + calls.shell.length !== K)
      throw new Error(`claude ${setup}: ${calls.write.length + calls.shell.length} calls timed`);
    if (setup !== "none" && !setup.endsWith("-empty")) {
      const cps = JSON.parse(p.baton(["--json", "checkpoints"]).stdout).checkpoints.length;
      if (cps !== K) throw new Error(`claude ${setup}: ${cps} checkpoints, expected ${K}: the hooks did not all run`);
      const nodes = JSON.parse(p.baton(["--json", "ledger", "list"]).stdout).nodes.length;
      if (nodes !== K) throw new Error(`claude ${setup}: ${nodes} ledger nodes, expected ${K}: the after-hooks did not all run`);
    }
    return { calls, turnMs };
  } finally {
    await stop(server);
    p.cleanup();
  }
}

async function main() {
  const h = await loadHelpers();
  const d = h.DRIVERS.claude;
  const cli = h.agentCli("claude");
  const mock = new h.MockModel();
  const url = await mock.start();
  const times = Object.fromEntries(SETUPS.map((s) => [s, { write: [], shell: [], turnMs: [] }]));
  const loads = [];
  try {
    for (let rep = 0; rep < REPS; rep++) {
      for (let j = 0; j < SETUPS.length; j++) {
        const setup = SETUPS[(j + rep) % SETUPS.length];
        const { calls, turnMs } = await once(h, mock, url, cli, d, setup);
        times[setup].write.push(...calls.write);
        times[setup].shell.push(...calls.shell);
        times[setup].turnMs.push(turnMs);
        loads.push(os.loadavg()[0]);
        process.stderr.write(
          `claude ${setup}: write ${median(calls.write).toFixed(1)} ms, shell ${median(calls.shell).toFixed(1)} ms, turn ${(turnMs / 1000).toFixed(1)} s\n`,
        );
      }
    }
  } finally {
    await mock.stop();
  }
  const m = Object.fromEntries(
    SETUPS.map((s) => [s, { write: median(times[s].write), shell: median(times[s].shell), turnMs: median(times[s].turnMs) }]),
  );
  const add = (s, kind) => m[s][kind] - m.none[kind];
  const cell = (s, kind) => (s === "none" ? m.none[kind].toFixed(1) : `${m[s][kind].toFixed(1)} (+${add(s, kind).toFixed(1)})`);
  const turn = (s) =>
    s === "none" ? (m.none.turnMs / 1000).toFixed(1) : `${(m[s].turnMs / 1000).toFixed(1)} (x${(m[s].turnMs / m.none.turnMs).toFixed(2)})`;
  // What HTTP hooks add to a call against what command hooks add, when both ran.
  const both = m.http !== undefined && m.command !== undefined;
  const ratio = (a, b) => (both ? ` | ${(a / b).toFixed(2)}` : "");
  const lines = [
    `Claude Code ${h.VERSIONS.claude.version}, ${K} calls per turn, ${REPS} rounds (median ms per call)`,
    `call | ${SETUPS.map((s) => LABELS[s]).join(" | ")}${both ? " | added: HTTP / command" : ""}`,
    `--- | ${SETUPS.map(() => "---:").join(" | ")}${both ? " | ---:" : ""}`,
    ...["write", "shell"].map(
      (kind) => `${kind} | ${SETUPS.map((s) => cell(s, kind)).join(" | ")}${both ? ratio(add("http", kind), add("command", kind)) : ""}`,
    ),
    `turn of ${K} calls (s) | ${SETUPS.map(turn).join(" | ")}${both ? ratio(m.http.turnMs - m.none.turnMs, m.command.turnMs - m.none.turnMs) : ""}`,
  ];
  console.log(
    `${lines.join("\n")}\nload average (1 min) during the runs: ${Math.min(...loads).toFixed(1)} to ${Math.max(...loads).toFixed(1)}, ${os.cpus().length} cores`,
  );
  const out = join(REPO, "bench", "results", `agents-http-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
  writeFileSync(out, JSON.stringify({ K, reps: REPS, loads, cores: os.cpus().length, medianMs: m, times }, null, 2));
  console.log(`written: ${out}`);
  rmSync(HELPERS, { force: true });
}

await main();

/**
 * What Baton's hooks cost per tool call inside the real agents (Claude Code, Codex, Gemini CLI,
 * Qwen Code, Copilot CLI, OpenCode, Cline CLI, the versions test/agents/versions.json pins), against the scripted model of the e2e
 * suite.
 *
 *   node scripts/build.mjs --no-types && node bench/agents.mjs [claude codex gemini qwen copilot opencode cline] [--reps N]
 *
 * Each agent runs one headless turn of K tool calls in a fresh project, alternating a file
 * write and a shell command (`true step-<i>`: a targeted checkpoint, then a whole-tree one). The
 * cost of one tool call is the time from the model's answer naming it to the agent's next
 * request to the model (the mock model stamps each request): the agent runs its before-hooks,
 * the tool and its after-hooks in between, and its start-up and per-turn hooks are left out.
 * Seven set-ups, in rotating order:
 *
 * - none:   no hooks;
 * - spawn:  the same events and matchers as Baton's, each running `true` (the agent's own cost
 *           of starting a hook process);
 * - node:   the same, each running `node -e 0` (that plus a Node start, which any Node hook pays);
 * - off:    Baton's hooks as `baton hooks install` writes them, BATON_HOOK_SERVER=off (every
 *           hook opens the workspace in its own process);
 * - server: Baton's hooks with the default (auto): the first hook starts `baton serve`, later
 *           ones hand their payload to it.
 * - client: the same, with the hooks as a project's file has them: `baton` from PATH (the e2e
 *           harness's, which runs bin/baton.cjs as a program), whose shell part answers a tool
 *           call's hook through the server without starting Node.
 * - program: the same, with the hooks as a file of this machine has them (Claude Code's local
 *           file, a user file): `<bin/baton.cjs> --node=<node>` by absolute path, the same client.
 *
 * `server` names this Node and the baton (`<node> <bin/baton.cjs>`), the form a file of this
 * machine gets where the baton cannot run as a program: every hook starts Node.
 *
 * Claude Code is on PATH, so the install writes the hooks in the form that version runs (exec
 * form, no shell, from 2.1.139); BATON_BENCH_NO_AGENT_ON_PATH=1 leaves it off, and the install
 * writes shell-form hooks (what a shared file gets), every set-up alike.
 *
 * Reported per agent and kind of call (write, shell): the median over all calls of all rounds
 * per set-up, and what spawn, off and server add to none. Written to
 * bench/results/agents-<time>.json.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { commandLine, median, REPO } from "./lib.mjs";

const args = commandLine(import.meta.url, { valued: ["--reps"], positional: [0, 4] });
const repsAt = args.indexOf("--reps");
const REPS = repsAt >= 0 ? Number(args[repsAt + 1]) : 3;
const AGENTS = args.filter((a, i) => !a.startsWith("--") && args[i - 1] !== "--reps");
const K = 12;
const SETUPS = ["none", "spawn", "node", "off", "server", "client", "program"];
const HELPERS = join(REPO, "bench", "results", ".agents-helpers.mjs");

/** The e2e suite's helpers (TypeScript), bundled for Node. */
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

/** Every hook command in the agent's config file replaced by `command`. */
function spawnOnly(file, command) {
  if (file.endsWith(".js")) {
    // OpenCode's plugin: the program it spawns per hook (`true hook opencode <event>` ignores the rest).
    const text = readFileSync(file, "utf8").replace(/^const LAUNCHER = .*;$/m, `const LAUNCHER = ${JSON.stringify(command.split(" "))};`);
    writeFileSync(file, text);
    return;
  }
  // Cline CLI's hooks are a folder of scripts, one per type, each ending `exec <baton hook …>`.
  if (statSync(file).isDirectory()) {
    for (const f of readdirSync(file)) {
      const script = join(file, f);
      writeFileSync(script, readFileSync(script, "utf8").replace(/^exec .*$/m, `exec ${command}`));
    }
    return;
  }
  const cfg = JSON.parse(readFileSync(file, "utf8"));
  for (const groups of Object.values(cfg.hooks))
    for (const g of groups) {
      // Copilot CLI's entries are flat, their command in `bash`.
      if (Array.isArray(g.hooks))
        for (const h of g.hooks) {
          // Claude Code's exec form (no shell) stays exec form: the program, then its arguments.
          if (Array.isArray(h.args)) [h.command, ...h.args] = command.split(" ");
          else h.command = command;
        }
      else g.bash = command;
    }
  writeFileSync(file, JSON.stringify(cfg, null, 2));
}

function stopServer(p) {
  const f = join(p.root, ".baton", "server.json");
  if (!existsSync(f)) return false;
  try {
    process.kill(JSON.parse(readFileSync(f, "utf8")).pid, "SIGTERM");
  } catch {
    // already gone
  }
  return true;
}

/** One turn of `k` tool calls; the time each write and shell call took, hooks included. */
async function once(h, mock, url, cli, d, setup, k) {
  // Copilot CLI's `create` refuses a file whose directory does not exist yet.
  const gen = d.agent === "copilot" ? { "gen/.keep": "" } : {};
  const p = new h.Project(d.agent, { "a.txt": "one\n", "src/b.txt": "bee\n", "README.md": "# demo\n", ...gen });
  try {
    d.configure(p, url);
    // `claude` on PATH, as users have it: the install then writes the form this version runs
    // (exec form from 2.1.139: no shell between Claude Code and each hook).
    if (d.agent === "claude" && !process.env.BATON_BENCH_NO_AGENT_ON_PATH) symlinkSync(cli, join(p.bin, "claude"));
    if (setup !== "none") {
      // This node and this baton by absolute path, as a file of this machine has them (Claude
      // Code's local file, a user file): no PATH lookup in the measurement.
      const baton = join(REPO, "bin", "baton.cjs");
      const launcher =
        setup === "client" ? "baton" : setup === "program" ? `${baton} --node=${process.execPath}` : `${process.execPath} ${baton}`;
      const installed = execFileSync(
        process.execPath,
        [join(REPO, "bin", "baton.cjs"), "--json", "hooks", "install", d.agent, "--command", launcher],
        { cwd: p.root, env: { ...process.env, ...p.env }, encoding: "utf8" },
      );
      const file = JSON.parse(installed).file;
      if (setup === "spawn") spawnOnly(file, "true");
      if (setup === "node") spawnOnly(file, `${process.execPath} -e 0`);
      await d.trustHooks?.(p, cli, true);
    }
    mock.play(script(k), p.root);
    const env = {
      ...d.env(url),
      BATON_CAPTURE_DIR: "",
      BATON_HOOK_SERVER: ["server", "client", "program"].includes(setup) ? "auto" : "off",
    };
    const from = mock.requests.length;
    const r = await p.run(cli, d.args("Do the work."), env, 300_000);
    if (r.code !== 0) throw new Error(`${d.agent} ${setup} exited ${r.code}: ${r.stderr.slice(-2000)}`);
    // Request i+1 arrives once the call answered to request i has run, hooks included.
    const mains = mock.requests.slice(from).filter((q) => q.main);
    const calls = { write: [], shell: [] };
    for (let i = 0; i + 1 < mains.length; i++) {
      const op = mains[i].step?.op;
      if (op === "write" || op === "shell") calls[op].push(mains[i + 1].at - mains[i].at);
    }
    if (calls.write.length + calls.shell.length !== k)
      throw new Error(`${d.agent} ${setup}: ${calls.write.length + calls.shell.length} calls timed, expected ${k}`);
    const written = Array.from({ length: k }, (_, i) => i).filter((i) => i % 2 === 0);
    if (!written.every((i) => p.read(`gen/f${i}.txt`) === `file ${i}\n`))
      throw new Error(`${d.agent} ${setup}: the writes did not all happen`);
    if (["off", "server", "client", "program"].includes(setup)) {
      const cps = JSON.parse(p.baton(["--json", "checkpoints"]).stdout).checkpoints.length;
      if (cps !== k) throw new Error(`${d.agent} ${setup}: ${cps} checkpoints, expected ${k}: the hooks did not run`);
    }
    if (["server", "client", "program"].includes(setup) && !stopServer(p)) throw new Error(`${d.agent} ${setup}: no server was started`);
    return calls;
  } finally {
    stopServer(p);
    p.cleanup();
  }
}

async function main() {
  const h = await loadHelpers();
  const agents = AGENTS.length ? AGENTS : ["claude", "codex", "gemini", "qwen", "copilot", "opencode", "cline"];
  const results = {};
  for (const agent of agents) {
    const d = h.DRIVERS[agent];
    const cli = h.agentCli(agent);
    const mock = new h.MockModel();
    const url = await mock.start();
    const times = Object.fromEntries(SETUPS.map((s) => [s, { write: [], shell: [] }]));
    try {
      for (let rep = 0; rep < REPS; rep++) {
        for (let j = 0; j < SETUPS.length; j++) {
          const setup = SETUPS[(j + rep) % SETUPS.length];
          const calls = await once(h, mock, url, cli, d, setup, K);
          times[setup].write.push(...calls.write);
          times[setup].shell.push(...calls.shell);
          process.stderr.write(
            `${agent} ${setup}: write ${median(calls.write).toFixed(0)} ms, shell ${median(calls.shell).toFixed(0)} ms\n`,
          );
        }
      }
    } finally {
      await mock.stop();
    }
    const med = Object.fromEntries(SETUPS.map((s) => [s, { write: median(times[s].write), shell: median(times[s].shell) }]));
    results[agent] = { version: h.VERSIONS[agent].version, medianMs: med, times };
  }
  const lines = [
    "agent | call | none | `true` (+) | `node -e 0` (+) | Baton, server off (+) | Baton, server (+) | Baton, server, `baton` from PATH (+) | Baton, server, `<baton> --node=` (+)",
    "--- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---:",
  ];
  for (const [a, r] of Object.entries(results))
    for (const kind of ["write", "shell"]) {
      const m = r.medianMs;
      const plus = (s) => `${m[s][kind].toFixed(0)} (+${(m[s][kind] - m.none[kind]).toFixed(0)})`;
      lines.push(
        `${a} ${r.version} | ${kind} | ${m.none[kind].toFixed(0)} | ${plus("spawn")} | ${plus("node")} | ${plus("off")} | ${plus("server")} | ${plus("client")} | ${plus("program")}`,
      );
    }
  const load = os.loadavg().map((x) => x.toFixed(1));
  console.log(`${lines.join("\n")}\nload average: ${load.join(" ")}`);
  const out = join(REPO, "bench", "results", `agents-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
  writeFileSync(out, JSON.stringify({ K, reps: REPS, loadavg: os.loadavg(), results }, null, 2));
  console.log(`written: ${out}`);
  rmSync(HELPERS, { force: true });
}

await main();

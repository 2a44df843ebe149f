/**
 * What Baton's hooks cost per tool call inside the real agents (Claude Code, Codex, Gemini CLI,
 * the versions test/agents/versions.json pins), against the scripted model of the e2e suite.
 *
 *   node scripts/build.mjs --no-types && node bench/agents.mjs [claude codex gemini] [--reps N]
 *
 * Each agent runs one headless turn of K tool calls (alternating a file write and the shell
 * command `true step-<i>`, so half the calls take a targeted checkpoint and half a whole-tree one) in a
 * fresh project, for K = K1 and K = K2; the cost of one tool call is the slope
 * (t(K2) - t(K1)) / (K2 - K1), which leaves out the agent's start-up and the per-turn hooks.
 * Four set-ups, in rotating order:
 *
 * - none:   no hooks;
 * - spawn:  the same events and matchers as Baton's, each running `true` (the agent's own cost
 *           of starting a hook process);
 * - off:    Baton's hooks as `baton hooks install` writes them, BATON_HOOK_SERVER=off (every
 *           hook opens the workspace in its own process);
 * - server: Baton's hooks with the default (auto): the first hook starts `baton serve`, later
 *           ones hand their payload to it.
 *
 * Reported: the median slope per set-up, and Baton's added cost per tool call (off and server
 * minus none) beside the spawn cost. Written to bench/results/agents-<time>.json.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";
import { REPO } from "./lib.mjs";

const args = process.argv.slice(2);
const repsAt = args.indexOf("--reps");
const REPS = repsAt >= 0 ? Number(args[repsAt + 1]) : 3;
const AGENTS = args.filter((a, i) => !a.startsWith("--") && args[i - 1] !== "--reps");
const K1 = 2;
const K2 = 12;
const SETUPS = ["none", "spawn", "off", "server"];
const CONFIG = { claude: ".claude/settings.json", codex: ".codex/hooks.json", gemini: ".gemini/settings.json" };

/** The e2e suite's helpers (TypeScript), bundled for Node. */
async function loadHelpers() {
  const out = join(REPO, "bench", "results", ".agents-helpers.mjs");
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
    outfile: out,
    define: { "import.meta.dirname": JSON.stringify(join(REPO, "test", "agents")) },
    logLevel: "error",
  });
  return import(out);
}

function script(k) {
  const steps = [];
  for (let i = 0; i < k; i++)
    steps.push(i % 2 === 0 ? { op: "write", path: `gen/f${i}.txt`, content: `file ${i}\n` } : { op: "shell", command: `true step-${i}` });
  return [...steps, { op: "text", text: "Done." }];
}

/** Every hook command in the agent's config file replaced by `true`. */
function spawnOnly(p, agent) {
  const file = join(p.root, CONFIG[agent]);
  const cfg = JSON.parse(readFileSync(file, "utf8"));
  for (const groups of Object.values(cfg.hooks)) for (const g of groups) for (const h of g.hooks) h.command = "true";
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

async function once(h, mock, url, cli, d, setup, k) {
  const p = new h.Project(d.agent, { "a.txt": "one\n", "src/b.txt": "bee\n", "README.md": "# demo\n" });
  try {
    d.configure(p, url);
    if (setup !== "none") {
      // As a user installs them: this node and this baton by absolute path.
      execFileSync(process.execPath, [join(REPO, "bin", "baton.cjs"), "hooks", "install", d.agent], {
        cwd: p.root,
        env: { ...process.env, ...p.env },
      });
      if (setup === "spawn") spawnOnly(p, d.agent);
      await d.trustHooks?.(p, cli, true);
    }
    mock.play(script(k), p.root);
    const env = { ...d.env(url), BATON_CAPTURE_DIR: "", BATON_HOOK_SERVER: setup === "server" ? "auto" : "off" };
    const t0 = process.hrtime.bigint();
    const r = await p.run(cli, d.args("Do the work."), env, 300_000);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (r.code !== 0) throw new Error(`${d.agent} ${setup} K=${k} exited ${r.code}: ${r.stderr.slice(-2000)}`);
    const files = Array.from({ length: k }, (_, i) => i).filter((i) => i % 2 === 0);
    if (!files.every((i) => p.read(`gen/f${i}.txt`) === `file ${i}\n`))
      throw new Error(`${d.agent} ${setup} K=${k}: the writes did not all happen`);
    if (setup !== "none" && setup !== "spawn") {
      const cps = JSON.parse(p.baton(["--json", "checkpoints"]).stdout).checkpoints.length;
      if (cps !== k) throw new Error(`${d.agent} ${setup} K=${k}: ${cps} checkpoints, expected ${k}: the hooks did not run`);
    }
    if (setup === "server" && !stopServer(p)) throw new Error(`${d.agent} server K=${k}: no server was started`);
    return ms;
  } finally {
    stopServer(p);
    p.cleanup();
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function main() {
  const h = await loadHelpers();
  const agents = AGENTS.length ? AGENTS : ["claude", "codex", "gemini"];
  const results = {};
  for (const agent of agents) {
    const d = h.DRIVERS[agent];
    const cli = h.agentCli(agent);
    const mock = new h.MockModel();
    const url = await mock.start();
    const times = Object.fromEntries(SETUPS.map((s) => [s, { [K1]: [], [K2]: [] }]));
    try {
      for (let rep = 0; rep < REPS; rep++) {
        for (let j = 0; j < SETUPS.length; j++) {
          const setup = SETUPS[(j + rep) % SETUPS.length];
          for (const k of rep % 2 ? [K2, K1] : [K1, K2]) {
            const ms = await once(h, mock, url, cli, d, setup, k);
            times[setup][k].push(ms);
            process.stderr.write(`${agent} ${setup} K=${k}: ${ms.toFixed(0)} ms\n`);
          }
        }
      }
    } finally {
      await mock.stop();
    }
    const slope = Object.fromEntries(SETUPS.map((s) => [s, (median(times[s][K2]) - median(times[s][K1])) / (K2 - K1)]));
    results[agent] = {
      version: h.VERSIONS[agent].version,
      msPerToolCall: slope,
      spawnAdds: slope.spawn - slope.none,
      batonOffAdds: slope.off - slope.none,
      batonServerAdds: slope.server - slope.none,
      times,
    };
  }
  const rows = Object.entries(results).map(([a, r]) =>
    [
      `${a} ${r.version}`,
      r.msPerToolCall.none.toFixed(0),
      r.spawnAdds.toFixed(0),
      r.batonOffAdds.toFixed(0),
      r.batonServerAdds.toFixed(0),
    ].join(" | "),
  );
  console.log(
    `agent | ms per tool call, no hooks | + hook process \`true\` | + Baton, server off | + Baton, with server\n${rows.join("\n")}`,
  );
  const out = join(REPO, "bench", "results", `agents-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
  writeFileSync(out, JSON.stringify({ K1, K2, reps: REPS, results }, null, 2));
  console.log(`written: ${out}`);
  rmSync(join(REPO, "bench", "results", ".agents-helpers.mjs"), { force: true });
}

await main();

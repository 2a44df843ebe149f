/**
 * The CLI as agents use it on every turn: whole `node bin/baton.cjs status --json --root <dir>`
 * and `… resume --json` processes, spawned and waited for, vs `node -e 0` (the floor of any Node
 * CLI): in their own process, and answered by the workspace's running `baton serve` (src/cli/ask.ts)
 * on a second workspace made the same way. A last,
 * informational row starts Node, loads better-sqlite3 and opens the same database: the floor
 * for any CLI that reads SQLite.
 *
 * Children run without NODE_EXTRA_CA_CERTS (it adds a fixed cost to every Node start on some
 * machines, which would shrink the ratio without saying anything about Baton).
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { hr, info, loadBaton, REPO, ratio, scaled, summarise, TARGET, tempDir } from "./lib.mjs";

export const name = "cli";
export const title = "CLI process: `baton status --json` and `baton resume --json` wall time";

const SESSION = "bench-cli";
const FLOOR = "node -e: require better-sqlite3, open, 1 query (reference)";
const SERVED_STATUS = "baton status --json, the server running";
const SERVED_RESUME = "baton resume --json, the server running";

/** The CLI entry the package installs (package.json `bin.baton`), in the build under test. */
function cliEntry() {
  for (const dir of [TARGET, REPO]) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
      const rel = typeof pkg.bin === "string" ? pkg.bin : pkg.bin?.baton;
      if (rel && existsSync(join(dir, rel))) return join(dir, rel);
    } catch {
      // no package.json in a candidate build: fall through
    }
  }
  for (const rel of ["bin/baton.cjs", "bin/baton.js", "bin/baton.mjs"]) if (existsSync(join(TARGET, rel))) return join(TARGET, rel);
  throw new Error(`no baton CLI entry found under ${TARGET}`);
}

/** A workspace with one session in progress: decisions, a blocker, progress and 100 notes. */
async function workspace(openBaton, name) {
  const root = tempDir(name);
  {
    const baton = await openBaton({ root });
    await baton.sessions.start({ flow: "task", id: SESSION, title: "Fix the login bug" });
    await baton.events.append(SESSION, { type: "start" });
    await baton.facets.addDecision(SESSION, { decision: "keep the session cookie", reason: "fewer moving parts" });
    await baton.facets.addBlocker(SESSION, { id: "blk-1", text: "CI is red on main" });
    await baton.facets.setProgress(SESSION, { total: 10, completed: 3 });
    for (let i = 0; i < 100; i++) await baton.events.append(SESSION, { type: "note:added", data: { text: `note ${i}` } });
    await baton.close();
  }

  return root;
}

/** `baton serve` on `root` until `stop()`: the server that answers status and resume for the CLI. */
async function serve(bin, root, env) {
  const child = spawn(process.execPath, [bin, "serve", "--port", "0", "--idle-exit", "10m", "--root", root], { env, stdio: "ignore" });
  const deadline = Date.now() + 20_000;
  while (!existsSync(join(root, ".baton", "server.json"))) {
    if (Date.now() > deadline) throw new Error("baton serve did not start within 20 s");
    await new Promise((r) => setTimeout(r, 50));
  }
  return () =>
    new Promise((resolve) => {
      child.once("exit", resolve);
      child.kill("SIGTERM");
    });
}

export async function run() {
  const { openBaton } = await loadBaton();
  const root = await workspace(openBaton, "cli");
  const served = await workspace(openBaton, "cli-served");
  const bin = cliEntry();
  const env = { ...process.env };
  delete env.NODE_EXTRA_CA_CERTS;
  // Each command runs in its own process for the first rows, and is answered by the server for the others.
  delete env.BATON_DEBUG;
  const stop = await serve(bin, served, env);
  try {
    return measure({ bin, env, root, served });
  } finally {
    await stop();
  }
}

function measure({ bin, env, root, served }) {
  const node = process.execPath;
  const dbPath = join(root, ".baton", "baton.db");
  const commands = {
    "baton status --json": [bin, "status", "--json", "--root", root],
    "baton resume --json": [bin, "resume", SESSION, "--json", "--root", root],
    [SERVED_STATUS]: [bin, "status", "--json", "--root", served],
    [SERVED_RESUME]: [bin, "resume", SESSION, "--json", "--root", served],
    "node -e 0": ["-e", "0"],
    [FLOOR]: [
      "-e",
      `const D = require("better-sqlite3"); const db = new D(${JSON.stringify(dbPath)}, { nativeBinding: require.resolve("better-sqlite3/build/Release/better_sqlite3.node") }); db.prepare("SELECT count(*) FROM sessions").get(); db.close();`,
    ],
  };
  const run = (args, extra = {}) => {
    const t = hr();
    const r = spawnSync(node, args, { env: { ...env, ...extra }, cwd: REPO, encoding: "utf8" });
    const ns = Number(hr() - t);
    if (r.status !== 0) throw new Error(`${args.join(" ")} exited ${r.status}: ${r.stderr || r.stdout}`);
    return { ns, stdout: r.stdout, stderr: r.stderr };
  };

  // Correctness once: the status output names the session, and who answered is who the row says.
  for (const [label, by] of [
    ["baton status --json", "ran in its own process"],
    [SERVED_STATUS, "answered by the server"],
    [SERVED_RESUME, "answered by the server"],
  ]) {
    const r = run(commands[label], { BATON_DEBUG: "1" });
    if (!r.stderr.includes(by)) throw new Error(`${label}: expected "${by}" on stderr, got: ${r.stderr.slice(0, 300)}`);
    if (label !== SERVED_RESUME && JSON.parse(r.stdout).sessions?.[0]?.sessionId !== SESSION)
      throw new Error(`${label}: unexpected output: ${r.stdout.slice(0, 200)}`);
  }

  const labels = Object.keys(commands);
  for (let i = 0; i < 3; i++) for (const l of labels) run(commands[l]);
  const samples = Object.fromEntries(labels.map((l) => [l, []]));
  const runs = scaled(25, 5);
  for (let i = 0; i < runs; i++) {
    for (let k = 0; k < labels.length; k++) {
      const l = labels[(i + k) % labels.length];
      samples[l].push(run(commands[l]).ns);
    }
  }
  const s = Object.fromEntries(labels.map((l) => [l, summarise(samples[l])]));
  const rows = labels.map((l) => ({ subject: l, unit: "processes", ...s[l] }));
  const b = s["baton status --json"].medianMs;
  return {
    rows,
    ratios: [
      ratio("baton status / node -e 0 (median wall time)", b / s["node -e 0"].medianMs, "<=", 1.5),
      ratio("baton resume / node -e 0 (median wall time)", s["baton resume --json"].medianMs / s["node -e 0"].medianMs, "<=", 1.5),
      ratio("baton status, server running / node -e 0", s[SERVED_STATUS].medianMs / s["node -e 0"].medianMs, "<=", 1.3),
      ratio("baton resume, server running / node -e 0", s[SERVED_RESUME].medianMs / s["node -e 0"].medianMs, "<=", 1.3),
      info("better-sqlite3 reference / node -e 0", s[FLOOR].medianMs / s["node -e 0"].medianMs),
      info("baton status / better-sqlite3 reference", b / s[FLOOR].medianMs),
    ],
    notes: [
      `entry: node ${relative(TARGET, bin)} (package.json bin.baton)`,
      `${runs} runs each, interleaved, after 3 warm-up runs; NODE_EXTRA_CA_CERTS removed from the children's environment`,
    ],
  };
}

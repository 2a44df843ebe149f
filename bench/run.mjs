/**
 * Baton benchmarks. `node --expose-gc bench/run.mjs` runs them all (after `npm run build`);
 * `node bench/run.mjs append status` runs some. Results are printed as tables and written to
 * bench/results/latest.json. See docs/benchmarks.md. `--help` prints this.
 *
 *   node bench/run.mjs [--check | --record] [append batch status cli queue checkpoints ledger hooks lanes dashboard redact]
 *
 *   --check                    compare each goal with the run of record (bench/baseline.json) and
 *                              exit 1 when one moved more than 15% the wrong way (bench/check.mjs)
 *   --record                   make this run the run of record for the goals it measured
 *                              (on a quiet machine: its load average is recorded)
 *   BENCH_SCALE=0.2            shorten every loop (smoke run)
 *   BATON_BENCH_TARGET=<dir>   benchmark another build (with dist/ and bin/) against the same baselines
 *   BENCH_RESULTS=<file>       write the JSON elsewhere
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join, resolve } from "node:path";
import Database from "better-sqlite3";
import { BASELINE, compareGoals, MARGIN, readBaseline, recordBaseline } from "./check.mjs";
import { cleanupAll, commandLine, fmt, REPO, TARGET, table } from "./lib.mjs";

const ALL = ["append", "batch", "status", "cli", "queue", "checkpoints", "ledger", "hooks", "lanes", "dashboard", "redact"];

const argv = commandLine(import.meta.url, { flags: ["--check", "--record"], positional: [0, ALL.length] });
const check = argv.includes("--check");
const record = argv.includes("--record");
if (check && record) {
  console.error("give --check or --record, not both");
  process.exit(2);
}
const args = argv.filter((a) => !a.startsWith("--"));
const unknown = args.filter((a) => !ALL.includes(a));
if (unknown.length > 0) {
  console.error(`unknown benchmark(s): ${unknown.join(", ")}; choose from ${ALL.join(", ")}`);
  process.exit(2);
}
const selected = args.length > 0 ? args : ALL;

function machine() {
  const sqlite = new Database(":memory:");
  const sqliteVersion = sqlite.prepare("SELECT sqlite_version() AS v").get().v;
  sqlite.close();
  const df = spawnSync("df", ["-T", os.tmpdir()], { encoding: "utf8" });
  const fsLine = df.status === 0 ? df.stdout.trim().split("\n").pop().split(/\s+/) : [];
  const pkg = (p) => {
    try {
      return JSON.parse(
        spawnSync(process.execPath, ["-p", `JSON.stringify(require("${p}/package.json").version)`], { cwd: REPO, encoding: "utf8" }).stdout,
      );
    } catch {
      return undefined;
    }
  };
  return {
    cpu: os.cpus()[0]?.model ?? "unknown",
    cores: os.availableParallelism(),
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    sqlite: sqliteVersion,
    betterSqlite3: pkg("better-sqlite3"),
    langgraphCheckpointSqlite: pkg("@langchain/langgraph-checkpoint-sqlite"),
    tmpdir: os.tmpdir(),
    tmpdirFilesystem: fsLine[1],
    exposeGc: typeof globalThis.gc === "function",
    benchScale: process.env.BENCH_SCALE ?? "1",
    target: TARGET,
    loadAverageAtStart: os.loadavg().map((x) => Number(x.toFixed(2))),
  };
}

function printResult(title, result) {
  console.log(`\n## ${title}\n`);
  console.log(
    table(
      ["subject", "ops/s", "median ms", "p99 ms", "samples"],
      result.rows.map((r) => [
        r.subject,
        `${fmt.ops(r.opsPerSec)}${r.unit && r.unit !== "ops" ? ` ${r.unit}/s` : ""}`,
        fmt.ms(r.medianMs),
        fmt.ms(r.p99Ms),
        r.samples,
      ]),
    ),
  );
  console.log("");
  console.log(
    table(
      ["ratio", "measured", "goal", "result"],
      result.ratios.map((q) => [q.label, fmt.x(q.value, q.unit), q.goal ?? "—", q.pass === null ? "info" : q.pass ? "PASS" : "FAIL"]),
    ),
  );
  for (const n of result.notes ?? []) console.log(`  · ${n}`);
}

const info = machine();
console.log(
  `Baton benchmarks: ${info.node}, ${info.cores} cores (${info.cpu}), SQLite ${info.sqlite}, tmpdir ${info.tmpdir} (${info.tmpdirFilesystem ?? "?"})`,
);
if (TARGET !== REPO) console.log(`Baton under test: ${TARGET}`);
if (!info.exposeGc) console.log("(run with node --expose-gc for steadier numbers: `npm run bench`)");

const results = {};
const startedAt = new Date().toISOString();
const t0 = Date.now();
let failed = false;
try {
  for (const name of selected) {
    const mod = await import(`./${name}.mjs`);
    const t = Date.now();
    process.stdout.write(`\nrunning ${name} …`);
    const result = await mod.run();
    process.stdout.write(` ${((Date.now() - t) / 1000).toFixed(1)} s\n`);
    results[name] = { title: mod.title, seconds: (Date.now() - t) / 1000, ...result };
    printResult(mod.title, result);
  }
} catch (err) {
  failed = true;
  console.error(`\nbenchmark failed: ${err instanceof Error ? err.stack : err}`);
} finally {
  cleanupAll();
}

const goals = Object.entries(results).flatMap(([bench, r]) => r.ratios.filter((q) => q.pass !== null).map((q) => ({ bench, ...q })));
if (goals.length > 0) {
  console.log("\n## Goals\n");
  console.log(
    table(
      ["benchmark", "ratio", "measured", "goal", "result"],
      goals.map((g) => [g.bench, g.label, fmt.x(g.value, g.unit), g.goal, g.pass ? "PASS" : "FAIL"]),
    ),
  );
}
const totalSeconds = (Date.now() - t0) / 1000;
info.loadAverageAtEnd = os.loadavg().map((x) => Number(x.toFixed(2)));
console.log(
  `\ntotal ${totalSeconds.toFixed(1)} s; load average ${info.loadAverageAtStart[0]} at start, ${info.loadAverageAtEnd[0]} at end (${info.cores} cores)`,
);

const outDir = join(REPO, "bench", "results");
mkdirSync(outDir, { recursive: true });
const file = process.env.BENCH_RESULTS ? resolve(process.env.BENCH_RESULTS) : join(outDir, "latest.json");
writeFileSync(file, `${JSON.stringify({ startedAt, totalSeconds, machine: info, selected, results, goals }, null, 2)}\n`);
// biome.json includes bench/**, so keep the (gitignored) results file in the project's JSON style;
// `npm run lint` would otherwise flag it. Best effort: skipped when biome is not installed.
const biome = join(REPO, "node_modules", ".bin", process.platform === "win32" ? "biome.cmd" : "biome");
if (existsSync(biome)) spawnSync(biome, ["format", "--write", file], { cwd: REPO, stdio: "ignore" });
console.log(`results: ${file}`);
let regressed = false;
if (record && !failed) {
  recordBaseline(goals, info);
  console.log(`run of record: ${BASELINE} (load average ${info.loadAverageAtStart[0]} at start)`);
} else if (check) {
  const baseline = readBaseline();
  if (!baseline) {
    console.error(`no run of record in ${BASELINE}: make one on a quiet machine with --record`);
    regressed = true;
  } else {
    const rows = compareGoals(baseline.goals, goals);
    console.log(`\n## Against the run of record (margin ${Math.round(MARGIN * 100)}%)\n`);
    console.log(
      table(
        ["benchmark", "goal", "recorded", "now", "change", "verdict"],
        rows.map((r) => [
          r.bench,
          r.label,
          r.before === undefined ? "—" : fmt.x(r.before, r.unit),
          fmt.x(r.value, r.unit),
          r.change === undefined ? "—" : `${r.change > 0 ? "+" : ""}${(r.change * 100).toFixed(1)}%`,
          r.verdict,
        ]),
      ),
    );
    const worse = rows.filter((r) => r.verdict === "worse");
    for (const r of worse) console.log(`WORSE: ${r.bench}: ${r.label}: ${fmt.x(r.before, r.unit)} → ${fmt.x(r.value, r.unit)}`);
    regressed = worse.length > 0;
  }
}
// Exit rather than wait for the event loop to drain: a peer library may keep the process busy
// after its last call (secretlint, after a few thousand lintSource calls, keeps scheduling work
// for minutes), which would also load the machine for whatever runs next.
process.exit(failed || regressed ? 1 : 0);

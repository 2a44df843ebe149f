/**
 * Shared helpers for the benchmarks: temp workspaces, timing, statistics, the raw SQLite
 * baseline table, and goal checks. Every benchmark module exports
 * `{ name, title, run(ctx) }`; `run` returns `{ rows, ratios, notes?, extra? }`.
 */
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import Database from "better-sqlite3";

export const REPO = join(dirname(fileURLToPath(import.meta.url)), "..");
/**
 * The Baton under test: this checkout, or another build's root (a directory with `dist/` and
 * `bin/`) named by BATON_BENCH_TARGET, to compare a candidate change against the same baselines.
 */
export const TARGET = process.env.BATON_BENCH_TARGET ? resolve(process.env.BATON_BENCH_TARGET) : REPO;
export const DIST = join(TARGET, "dist", "index.js");

/** The built library of another checkout (`dist/index.js`); exits with a clear message when it is not built. */
export function builtLibrary(checkout) {
  const file = join(resolve(checkout), "dist", "index.js");
  if (existsSync(file)) return file;
  console.error(`${checkout}: no dist/index.js (run node scripts/build.mjs there first)`);
  process.exit(2);
}

/**
 * A runnable benchmark's command line, read before it does anything: `--help` / `-h` prints its
 * usage, the opening comment of the script (what it measures, how it is run, its arguments and
 * variables), and exits 0; an option it does not take (anything else starting with `-` that is
 * not one of `flags`), a
 * value missing after one of `valued`, or a count of arguments outside `positional` (min, max)
 * is an error with the usage, exit 2. Returns the arguments, with `valued` options and their
 * values among them, for the script's own parsing.
 */
export function commandLine(scriptUrl, { valued = [], flags = [], positional = [0, 0] } = {}) {
  const file = fileURLToPath(scriptUrl);
  const args = process.argv.slice(2);
  const header = /^\/\*\*\n([\s\S]*?)\n \*\//.exec(readFileSync(file, "utf8"))?.[1] ?? "";
  const usage = header.replace(/^ \* ?/gm, "");
  const fail = (problem) => {
    console.error(`bench/${basename(file)}: ${problem}\n\n${usage}`);
    process.exit(2);
  };
  if (args.includes("--help") || args.includes("-h")) {
    console.log(usage);
    process.exit(0);
  }
  let count = 0;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (valued.includes(a)) {
      if (args[i + 1] === undefined) fail(`${a} needs a value`);
      i++;
    } else if (flags.includes(a)) continue;
    else if (a.startsWith("-")) fail(`unknown option ${a}`);
    else count++;
  }
  const [min, max] = positional;
  if (count < min || count > max)
    fail(
      max === 0 ? `takes no arguments, got ${args.join(" ")}` : `takes ${min === max ? min : `${min} to ${max}`} argument(s), got ${count}`,
    );
  return args;
}

/** Import the built library; fail with a clear message when `dist/` is missing. */
export async function loadBaton() {
  if (!existsSync(DIST)) throw new Error(`${DIST} is missing: run \`npm run build\` (or \`node scripts/build.mjs --no-types\`) first`);
  return import(DIST);
}

/**
 * Import a TypeScript module of this repository (a test fixture such as test/redaction/corpus.ts),
 * bundled by esbuild into a temporary file: the benchmarks run on plain Node.
 */
export async function loadTs(path) {
  const { build } = await import("esbuild");
  const dir = mkdtempSync(join(os.tmpdir(), "baton-bench-ts-"));
  const outfile = join(dir, "module.mjs");
  try {
    await build({ entryPoints: [join(REPO, path)], bundle: true, platform: "node", format: "esm", outfile, logLevel: "error" });
    return await import(pathToFileURL(outfile).href);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const made = [];

/** A fresh directory under os.tmpdir(), removed by `cleanupAll()`. */
export function tempDir(label) {
  const dir = mkdtempSync(join(os.tmpdir(), `baton-bench-${label}-`));
  made.push(dir);
  return dir;
}

export function cleanupAll() {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export const hr = () => process.hrtime.bigint();

/** Collect garbage between phases when run with --expose-gc. */
export function gc() {
  if (typeof globalThis.gc === "function") globalThis.gc();
}

/** Scale an iteration count by BENCH_SCALE (e.g. 0.2 for a quick smoke run), never below `min`. */
export function scaled(n, min = 1) {
  const f = Number(process.env.BENCH_SCALE ?? "1");
  return Math.max(min, Math.round(n * (Number.isFinite(f) && f > 0 ? f : 1)));
}

/** The median (the mean of the two middle values when the count is even); NaN when empty. */
export function median(xs) {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const h = s.length >> 1;
  return s.length % 2 === 1 ? s[h] : (s[h - 1] + s[h]) / 2;
}

/** The arithmetic mean; NaN when empty. */
export const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

function quantile(sorted, q) {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i];
}

/**
 * Summarise per-operation latencies (nanoseconds). `units` is how many logical operations one
 * sample covers (e.g. 1,000 events per batch), for the throughput figure.
 */
export function summarise(samplesNs, units = 1) {
  const sorted = Float64Array.from(samplesNs).sort();
  const total = sorted.reduce((a, b) => a + b, 0);
  return {
    samples: sorted.length,
    opsPerSec: (sorted.length * units) / (total / 1e9),
    meanMs: total / sorted.length / 1e6,
    medianMs: quantile(sorted, 0.5) / 1e6,
    p99Ms: quantile(sorted, 0.99) / 1e6,
    minMs: sorted[0] / 1e6,
    maxMs: sorted[sorted.length - 1] / 1e6,
  };
}

/**
 * Time several contestants side by side: `rounds` rounds of `perRound` operations each, with the
 * order rotated every round so drift in the disk or the CPU hits every side alike. `warmup`
 * untimed operations per side run first. Each side is `{ label, op(i) }`; `op` may be async.
 * Returns `{ [label]: number[] }` of per-operation nanoseconds.
 */
export async function interleave(sides, { rounds, perRound, warmup }) {
  const out = Object.fromEntries(sides.map((s) => [s.label, []]));
  const next = Object.fromEntries(sides.map((s) => [s.label, 0]));
  for (const s of sides) {
    for (let i = 0; i < warmup; i++) {
      const r = s.op(next[s.label]++);
      if (r && typeof r.then === "function") await r;
    }
  }
  gc();
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < sides.length; k++) {
      const s = sides[(round + k) % sides.length];
      const samples = out[s.label];
      for (let i = 0; i < perRound; i++) {
        const n = next[s.label]++;
        const t0 = hr();
        const r = s.op(n);
        if (r && typeof r.then === "function") await r;
        samples.push(Number(hr() - t0));
      }
    }
    gc();
  }
  return out;
}

/** The same `events` table Baton's migration creates (WITHOUT ROWID, primary key + unique id index). */
export const EVENTS_DDL = `
  CREATE TABLE IF NOT EXISTS events (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    id TEXT NOT NULL,
    type TEXT NOT NULL,
    actor TEXT NOT NULL,
    data TEXT NOT NULL,
    revision INTEGER,
    at TEXT NOT NULL,
    body_hash TEXT NOT NULL,
    outcome TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
  ) WITHOUT ROWID;
  CREATE UNIQUE INDEX IF NOT EXISTS events_by_id ON events (session_id, id);
`;

/** A 64-hex placeholder, so raw rows occupy the same space as Baton's sha256 body hash. */
export const FIXED_HASH = "0".repeat(64);

let lastMs = 0;
let sequence = 0;
/**
 * An event id as Baton makes one (`ev_` and a version-7 UUID: the millisecond, a sequence, random
 * bits; core/canonical.ts timeOrderedId), so the raw peer's row and index writes are Baton's.
 */
export function eventId() {
  const now = Date.now();
  if (now > lastMs) [lastMs, sequence] = [now, 0];
  else if (++sequence > 0xfff) [lastMs, sequence] = [lastMs + 1, 0];
  const t = lastMs.toString(16).padStart(12, "0");
  return `ev_${t.slice(0, 8)}-${t.slice(8, 12)}-7${sequence.toString(16).padStart(3, "0")}-${randomUUID().slice(19)}`;
}

/** Open a raw better-sqlite3 database with Baton's table and the given durability. */
export function openRaw(path, synchronous = "FULL") {
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma(`synchronous = ${synchronous}`);
  db.exec(EVENTS_DDL);
  const insert = db.prepare(
    "INSERT INTO events (session_id, seq, id, type, actor, data, revision, at, body_hash, outcome) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
  );
  return { db, insert };
}

/**
 * Pages a commit writes, measured from the WAL: truncate the WAL through a side connection,
 * run `ops` operations, and count the frames appended. `run(i)` performs operation i.
 */
export async function walPagesPerOp(dbPath, ops, run) {
  const side = new Database(dbPath);
  try {
    const pageSize = side.pragma("page_size", { simple: true });
    side.pragma("wal_checkpoint(TRUNCATE)");
    const frames = () => {
      try {
        return Math.max(0, (statSync(`${dbPath}-wal`).size - 32) / (pageSize + 24));
      } catch {
        return 0;
      }
    };
    const before = frames();
    for (let i = 0; i < ops; i++) {
      const r = run(i);
      if (r && typeof r.then === "function") await r;
    }
    return (frames() - before) / ops;
  } finally {
    side.close();
  }
}

/** Read back the durability a connection really runs with. */
export function pragmas(db) {
  const sync = { 0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA" }[db.pragma("synchronous", { simple: true })];
  return { journalMode: String(db.pragma("journal_mode", { simple: true })).toUpperCase(), synchronous: sync };
}

/** journal_mode is persistent, so a second, read-only connection can confirm a private connection's WAL. */
export function peekJournalMode(path) {
  const db = new Database(path, { readonly: true });
  try {
    return pragmas(db).journalMode;
  } finally {
    db.close();
  }
}

/** A ratio checked against a goal: `op` is ">=" or "<=". */
export function ratio(label, value, op, target, unit = "×") {
  const pass = op === ">=" ? value >= target : value <= target;
  return { label, value, goal: `${op === ">=" ? "≥" : "≤"} ${target}${unit === "×" ? "×" : ` ${unit}`}`, op, target, unit, pass };
}

/** A ratio printed for information, without a goal. */
export function info(label, value, unit = "×") {
  return { label, value, goal: null, unit, pass: null };
}

export const fmt = {
  ops: (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "—"),
  ms: (n) => (Number.isFinite(n) ? (n < 1 ? n.toFixed(3) : n < 100 ? n.toFixed(2) : n.toFixed(0)) : "—"),
  x: (n, unit = "×") => (Number.isFinite(n) ? `${n.toFixed(2)}${unit === "×" ? "×" : ` ${unit}`}` : "—"),
};

/** Render rows as an aligned plain-text table. */
export function table(headers, rows) {
  const cells = [headers, ...rows].map((r) => r.map((c) => String(c ?? "")));
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => r[i].length)));
  const line = (r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");
  return [line(cells[0]), widths.map((w) => "-".repeat(w)).join("  "), ...cells.slice(1).map(line)].join("\n");
}

#!/usr/bin/env node
"use strict";
// Starts dist/cli.cjs through a V8 code cache. Agent hooks start `baton` on every tool call,
// and compiling the bundle was the largest single start-up cost (see docs/benchmarks.md).
// The cache sits beside the bundle, or in the user's cache directory when the install is not
// writable (a global install by root); V8 rejects it when the bundle or Node changes, and it is
// then rewritten. It is only a cache: if it cannot be read or written, baton runs without it.
const fs = require("node:fs");
const path = require("node:path");
const vm = require("node:vm");
const Module = require("node:module");

/**
 * The cache's name after the bundle's: `<bundle>.[<kind>.]<node version>.v8cache`. A cache holds
 * what the process that wrote it ran, and dist/cli.cjs runs quite different code for `status`,
 * `resume` and a hook answered in its own process: each has a cache of its own, so none pays for
 * (or compiles again) the others' functions.
 */
function cacheName(file) {
  const cmd = process.argv[2];
  const kind = path.basename(file) === "cli.cjs" && (cmd === "status" || cmd === "resume" || cmd === "hook") ? `${cmd}.` : "";
  return `${kind}${process.version}.v8cache`;
}

/** The user's cache for `file` (`$XDG_CACHE_HOME/baton/v8/…`), named after the bundle's path. */
function userCache(file) {
  const base = process.env.XDG_CACHE_HOME || path.join(require("node:os").homedir(), ".cache");
  return path.join(base, "baton", "v8", `${encodeURIComponent(file)}.${cacheName(file)}`);
}

function readCache(files) {
  for (const f of files) {
    try {
      return fs.readFileSync(f);
    } catch {
      // not there (yet)
    }
  }
  return undefined;
}

function writeCache(files, data) {
  for (const f of files) {
    try {
      fs.mkdirSync(path.dirname(f), { recursive: true, mode: 0o700 });
      const tmp = `${f}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, data, { mode: 0o644 });
      fs.renameSync(tmp, f);
      return;
    } catch {
      // read-only: try the next place
    }
  }
}

function load(file) {
  const beside = `${file}.${cacheName(file)}`;
  const places = () => [beside, userCache(file)];
  let cached;
  try {
    cached = fs.readFileSync(beside);
  } catch {
    cached = readCache(places().slice(1));
  }
  const script = new vm.Script(Module.wrap(fs.readFileSync(file, "utf8")), { filename: file, cachedData: cached });
  if (cached === undefined || script.cachedDataRejected) {
    // After the run, so the functions that ran are compiled into the cache too.
    process.once("exit", () => writeCache(places(), script.createCachedData()));
  }
  const mod = new Module(file, module);
  mod.filename = file;
  mod.paths = Module._nodeModulePaths(path.dirname(file));
  script.runInThisContext()(mod.exports, Module.createRequire(file), mod, file, path.dirname(file));
  return mod.exports;
}

// dist/cli.cjs loads dist/cli-full.cjs (the whole command table) through the same cache, and
// dist/pg.cjs when a PostgreSQL store is configured; dist/hook.cjs loads dist/cli.cjs when a
// hook is answered in its own process.
globalThis[Symbol.for("baton.load")] = load;
/**
 * Whether a `.baton/server.json` is in or above a folder where `baton status|resume --json`
 * looks for its workspace (src/cli/ask.ts): the working directory, a `--root` given, BATON_ROOT.
 * More places than ask.ts reads, never fewer: only a hint. With none, no server can answer and
 * dist/ask.cjs is not loaded (a bundle fewer to read and run); with one, ask.cjs decides.
 */
function serverNamed(args) {
  try {
    const starts = [process.cwd()];
    if (process.env.BATON_ROOT) starts.push(process.env.BATON_ROOT);
    for (let i = 0; i < args.length; i++) {
      if (args[i] === "--root" && i + 1 < args.length) starts.push(args[i + 1]);
      else if (args[i].startsWith("--root=")) starts.push(args[i].slice("--root=".length));
    }
    for (const start of starts) {
      for (let dir = path.resolve(start), up; ; dir = up) {
        if (fs.existsSync(path.join(dir, ".baton", "server.json"))) return true;
        up = path.dirname(dir);
        if (up === dir) break;
      }
    }
    return false;
  } catch {
    return true; // no working directory, say: let ask.cjs judge
  }
}

// `baton hook <agent> <Event>` (agent hooks, on every tool call) starts with dist/hook.cjs, a
// small bundle that hands the hook to the workspace's running server (src/hooks/entry.ts);
// `baton status --json` and `baton resume --json` (agents, every turn) with dist/ask.cjs,
// which asks that server for the report (src/cli/ask.ts); `--help` goes to the full CLI.
const argv = process.argv;
const help = argv.includes("--help") || argv.includes("-h");
const hook = argv[2] === "hook" && argv.length >= 4 && !help;
let ask = (argv[2] === "status" || argv[2] === "resume") && argv.includes("--json") && !help;
if (ask && !serverNamed(argv.slice(3))) {
  ask = false;
  if (process.env.BATON_DEBUG) {
    try {
      fs.writeSync(2, `baton: ${argv[2]} ran in its own process: no .baton/server.json where it looks for a workspace\n`);
    } catch {
      // nowhere to say it
    }
  }
}
load(path.join(__dirname, "..", "dist", hook ? "hook.cjs" : ask ? "ask.cjs" : "cli.cjs"));

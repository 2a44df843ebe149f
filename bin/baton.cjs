#!/usr/bin/env node
"use strict";
// Starts dist/cli.cjs through a V8 code cache. Agent hooks start `baton` on every tool call,
// and compiling the bundle was the largest single start-up cost (see docs/benchmarks.md).
// The cache sits beside the bundle, or in the user's cache directory when the install is not
// writable (a global install by root); a new bundle or Node gets a new one. It is only a cache:
// if it cannot be read or written, baton runs without it.
const fs = require("node:fs");
const path = require("node:path");
const vm = require("node:vm");
const Module = require("node:module");

/**
 * Where the cache of `file` is (`<place><bundle>.[<kind>.]<node version>.`, then `<size>-<ctime>.v8cache`):
 * beside the bundle, or in the user's cache directory (`$XDG_CACHE_HOME/baton/v8/`, named after
 * the bundle's path) when the install is not writable. A cache holds what the process that wrote
 * it ran, and dist/cli.cjs runs quite different code for `status`, `resume` and a hook answered
 * in its own process: each has a cache of its own, so none compiles its own functions again.
 */
function cacheStems(file) {
  const kind = path.basename(file) === "cli.cjs" ? cliKind : "";
  const name = `${kind}${process.version}.`;
  return [
    `${file}.${name}`,
    () => {
      const base = process.env.XDG_CACHE_HOME || path.join(require("node:os").homedir(), ".cache");
      return path.join(base, "baton", "v8", `${encodeURIComponent(file)}.${name}`);
    },
  ];
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
      dropStale(f);
      return;
    } catch {
      // read-only: try the next place
    }
  }
}

/** Caches of the same bundle, kind and Node made from an earlier bundle (an upgrade): never read again. */
function dropStale(f) {
  const dir = path.dirname(f);
  const name = path.basename(f);
  const stem = name.slice(0, name.lastIndexOf(".", name.length - ".v8cache".length - 1) + 1);
  for (const other of fs.readdirSync(dir)) {
    if (other !== name && other.startsWith(stem) && other.endsWith(".v8cache")) fs.rmSync(path.join(dir, other), { force: true });
  }
}

function load(file) {
  // V8 checks a cache against the source's length only (and Node's version and flags): a new
  // bundle of the same length (an upgrade, under a cache in the user's directory, which outlives
  // it) would run the old one's compiled code. The bundle's size and inode change time name the
  // file a cache was made from (npm gives every file it installs the same modification time).
  const st = fs.statSync(file);
  const id = `${st.size}-${Math.trunc(st.ctimeMs)}.v8cache`;
  const [beside, user] = cacheStems(file);
  const places = () => [beside + id, user() + id];
  let cached;
  try {
    cached = fs.readFileSync(beside + id);
  } catch {
    cached = readCache(places().slice(1));
  }
  const script = new vm.Script(Module.wrap(fs.readFileSync(file, "utf8")), { filename: file, cachedData: cached });
  if (cached === undefined || script.cachedDataRejected) {
    // After the run, so the functions that ran are compiled into the cache too; only after a
    // run that succeeded (help, or a failure, runs little of what the command runs).
    process.once("exit", (code) => {
      if (code === 0) writeCache(places(), script.createCachedData());
    });
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
// The kind of dist/cli.cjs's cache this process reads and writes (cacheStems).
const cliKind = hook ? "hook." : (argv[2] === "status" || argv[2] === "resume") && !help ? `${argv[2]}.` : "";
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

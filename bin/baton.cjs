#!/usr/bin/env node
"use strict";
// Starts dist/cli.cjs through a V8 code cache. Agent hooks start `baton` on every tool call,
// and compiling the bundle was the largest single start-up cost (see docs/benchmarks.md).
// The cache sits beside the bundle; V8 rejects it when the bundle or Node changes, and it is
// then rewritten. It is only a cache: if it cannot be read or written, baton runs without it.
const fs = require("node:fs");
const path = require("node:path");
const vm = require("node:vm");
const Module = require("node:module");

function load(file) {
  const cacheFile = `${file}.${process.version}.v8cache`;
  let cached;
  try {
    cached = fs.readFileSync(cacheFile);
  } catch {
    cached = undefined;
  }
  const script = new vm.Script(Module.wrap(fs.readFileSync(file, "utf8")), { filename: file, cachedData: cached });
  if (cached === undefined || script.cachedDataRejected) {
    // After the run, so the functions that ran are compiled into the cache too.
    process.once("exit", () => {
      try {
        const tmp = `${cacheFile}.${process.pid}.tmp`;
        fs.writeFileSync(tmp, script.createCachedData());
        fs.renameSync(tmp, cacheFile);
      } catch {
        // read-only install: run without a cache
      }
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
// `baton hook <agent> <Event>` (agent hooks, on every tool call) starts with dist/hook.cjs, a
// small bundle that hands the hook to the workspace's running server (src/hooks/entry.ts);
// `--help` goes to the full CLI.
const argv = process.argv;
const hook = argv[2] === "hook" && argv.length >= 4 && !argv.includes("--help") && !argv.includes("-h");
load(path.join(__dirname, "..", "dist", hook ? "hook.cjs" : "cli.cjs"));

// Writes the V8 code caches of the CLI bundles (dist/*.cjs.[<kind>.]<node version>.<size>-<ctime>.v8cache)
// from runs of the commands start-up matters for. bin/baton.cjs writes a bundle's cache at the
// exit of the first process that loads the bundle without one, and the cache holds the
// functions that process ran; left to chance, the first command after a build decides (a cache
// written by a hook made `baton status` ~5 ms slower, docs/benchmarks.md). dist/cli.cjs has a
// cache for each of `status`, `resume` and a hook answered in its own process. So the build
// runs, in a scratch workspace: `baton status --json` and `resume --json` and a session-start
// hook in its own process (dist/cli.cjs), `baton serve` (dist/cli-full.cjs), a hook handed to
// that server (dist/hook.cjs) and `baton status --json` it answers (dist/ask.cjs). An installed
// package carries no caches (they are Node's own), so there each is written by the first of its
// kind. Failures only cost speed: warn and go on.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..");
const bin = join(repo, "bin", "baton.cjs");
const root = mkdtempSync(join(tmpdir(), "baton-warm-"));
const env = { ...process.env, BATON_HOOK_SERVER: "use" };
delete env.NODE_OPTIONS;

function run(args, input, more = {}) {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: root, env: { ...env, ...more }, input, encoding: "utf8", timeout: 30_000 });
  if (r.status !== 0) throw new Error(`baton ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  return r;
}

/** Run `args` and check that the server answered it (else the cache it writes is another path's). */
function served(args, input) {
  const r = run(args, input, { BATON_DEBUG: "1", BATON_HOOK_DEBUG: "1" });
  if (!/answered by the server/.test(r.stderr))
    throw new Error(`baton ${args.join(" ")} was not answered by the server: ${r.stderr.trim()}`);
}

async function warm() {
  const { openBaton } = await import(join(repo, "dist", "index.js"));
  const b = await openBaton({ root });
  await b.sessions.start({ flow: "task", id: "warm", title: "Warm the code caches" });
  await b.events.append("warm", { type: "decision:added", data: { decision: "start fast" } });
  await b.close();
  run(["status", "--json"]);
  run(["resume", "--json"]);
  // No server yet, and BATON_HOOK_SERVER=use starts none: answered in its own process.
  const start = { session_id: "warm-agent", cwd: root, hook_event_name: "SessionStart", source: "startup" };
  run(["hook", "claude", "SessionStart"], JSON.stringify({ ...start, transcript_path: join(root, "warm-agent.jsonl") }));
  const server = spawn(process.execPath, [bin, "serve", "--port", "0", "--idle-exit", "1m"], { cwd: root, env, stdio: "ignore" });
  const exited = new Promise((resolve) => server.once("exit", resolve));
  try {
    const deadline = Date.now() + 15_000;
    while (!existsSync(join(root, ".baton", "server.json"))) {
      if (Date.now() > deadline) throw new Error("baton serve did not start within 15 s");
      await new Promise((r) => setTimeout(r, 50));
    }
    const payload = {
      session_id: "warm-agent",
      cwd: root,
      hook_event_name: "PostToolUse",
      tool_name: "Read",
      tool_input: { file_path: join(root, "README.md") },
      tool_use_id: "toolu_warm",
      tool_response: {},
    };
    // dist/hook.cjs's cache came from the session-start hook above, which handed itself to its
    // own process: write it again from one the server answers, the run that start-up matters
    // for. Likewise dist/ask.cjs's, should an earlier run have written it.
    for (const f of readdirSync(join(repo, "dist")))
      if ((f.startsWith(`hook.cjs.${process.version}.`) || f.startsWith(`ask.cjs.${process.version}.`)) && f.endsWith(".v8cache"))
        rmSync(join(repo, "dist", f), { force: true });
    served(["hook", "claude", "PostToolUse"], JSON.stringify(payload));
    served(["status", "--json"]);
  } finally {
    server.kill("SIGTERM");
    await exited;
  }
}

try {
  await warm();
} catch (err) {
  console.warn(`baton build: code caches not warmed (${err.message}); each is written by the first command that runs`);
} finally {
  rmSync(root, { recursive: true, force: true });
}

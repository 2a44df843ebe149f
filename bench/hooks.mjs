/**
 * Agent hooks as the agents run them: one whole `node bin/baton.cjs hook <agent> <Event>`
 * process per hook, fed a real payload on stdin (the recorded fixtures in
 * test/fixtures/hooks/), spawned and waited for, against `node -e 0` in the same rounds.
 * Goal: every hook process ≤ 1.5× `node -e 0` (median wall time), and every hook run as an agent
 * runs `baton` from PATH (the [client] mode below) ≤ 1.3×.
 *
 * Two modes, in the same rounds, each on a workspace of its own (set up alike): with the
 * workspace's server running (`baton serve`, the setup hooks start by themselves: each hook
 * hands its payload to the server), which the goal is judged on, and in-process
 * (BATON_HOOK_SERVER=off: each hook opens the workspace itself, what happens when no server
 * runs). The benchmark checks that every server-mode hook with something to do really was
 * answered by the server, and every in-process one by its own process (BATON_HOOK_DEBUG=1: each
 * hook says on stderr who answered it).
 *
 * Each workspace is a small project (200 source files in 10 directories, a .gitignore'd
 * node_modules), with a session started by a SessionStart hook, a decision, a blocker and
 * three lessons. Between a before-hook and its after-hook the benchmark makes the edit the
 * tool would (untimed), so checkpoints and turns see real changes; arguments differ per call,
 * as an agent's do, so the spiral detector has nothing to pause.
 *
 * Children run without NODE_EXTRA_CA_CERTS (it adds a fixed cost to every Node start on some
 * machines, which would shrink the ratio without saying anything about Baton).
 *
 * [client] is the server mode with each hook run as `baton` from PATH runs, bin/baton.cjs as a
 * program: its shell part answers each hook through the server without starting Node
 * (src/server/hook-client-route.ts); the benchmark checks that it did.
 *
 * A third mode, [3 lanes], is the server mode on a workspace where two more agent sessions (a
 * second Claude Code session and a Codex session) work at once, claiming 1,000 files between
 * them (core/lanes.ts): how much slower each hook is there than in the server mode (median wall
 * time, the same rounds), for information: the goal (at most 1 ms) is judged by bench/lanes.mjs,
 * which times the server's own work without Node's start around it.
 *
 * BATON_BENCH_BEFORE=<dir of another build> adds both modes for that build (its own server and
 * workspaces) to the same rounds, and reports each hook against itself there: a change to the
 * hook path measured side by side with the build before it, under the same load.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { hr, info, REPO, ratio, scaled, summarise, TARGET, tempDir } from "./lib.mjs";

export const name = "hooks";
export const title = "agent hook processes: `baton hook <agent> <Event>` wall time vs `node -e 0`";

const FIXTURES = join(REPO, "test", "fixtures", "hooks");
const NODE = "node -e 0";

function fixture(agent, file, vars) {
  let text = readFileSync(join(FIXTURES, agent, `${file}.json`), "utf8");
  for (const [k, v] of Object.entries({ time: new Date().toISOString(), ...vars }))
    text = text.split(`{{${k}}}`).join(JSON.stringify(v).slice(1, -1));
  return JSON.parse(text);
}

function bin() {
  const b = join(TARGET, "bin", "baton.cjs");
  if (!existsSync(b)) throw new Error(`${b} is missing: build first`);
  return b;
}

/** The other build to compare with (BATON_BENCH_BEFORE), if any. */
function beforeBin() {
  const dir = process.env.BATON_BENCH_BEFORE;
  if (!dir) return undefined;
  const b = join(resolve(dir), "bin", "baton.cjs");
  if (!existsSync(b)) throw new Error(`${b} is missing: build that checkout first`);
  return b;
}

export async function run() {
  const baton = bin();
  const before = beforeBin();
  const env = { ...process.env };
  delete env.NODE_EXTRA_CA_CERTS;
  delete env.BATON_ROOT;
  delete env.BATON_HOOK_SERVER;
  const node = process.execPath;
  // `direct`: run args[0] (bin/baton.cjs) as a program, as an agent runs `baton` from PATH.
  const sh = (root, args, input, extraEnv, direct = false) => {
    const t = hr();
    const [file, argv] = direct ? [args[0], args.slice(1)] : [node, args];
    const r = spawnSync(file, argv, { env: extraEnv ? { ...env, ...extraEnv } : env, cwd: root, input: input ?? "", encoding: "utf8" });
    const ns = Number(hr() - t);
    if (r.status !== 0) throw new Error(`${args.join(" ")} exited ${r.status}: ${r.stderr || r.stdout}`);
    return { ns, stdout: r.stdout, stderr: r.stderr };
  };
  const modesOf = (bin, tag) => [
    { key: "server", suffix: tag ? ` [${tag}]` : "", env: { BATON_HOOK_SERVER: "use" }, root: tempDir("hooks-server"), baton: bin, tag },
    {
      key: "in-process",
      suffix: tag ? ` [in-process, ${tag}]` : " [in-process]",
      env: { BATON_HOOK_SERVER: "off" },
      root: tempDir("hooks-inproc"),
      baton: bin,
      tag,
    },
  ];
  const lanes = { key: "server", suffix: " [3 lanes]", env: { BATON_HOOK_SERVER: "use" }, root: tempDir("hooks-lanes"), baton, lanes: 2 };
  // The server mode with each hook run as `baton` from PATH runs: the shell's hook client first.
  const client = {
    key: "server",
    suffix: " [client]",
    env: { BATON_HOOK_SERVER: "use" },
    root: tempDir("hooks-client"),
    baton,
    direct: true,
  };
  const modes = [...modesOf(baton, undefined), client, ...(before ? modesOf(before, "before") : []), lanes];
  for (const m of modes) project(m.root, m.baton, sh);
  const servers = [];
  try {
    for (const m of modes) {
      if (m.key !== "server") continue;
      m.server = await startServer(m.baton, m.root, env);
      servers.push(m.server);
    }
    for (const m of modes) m.sid = setup(m, sh);
    await otherLanes(lanes, sh);
    return measure({ modes, sh });
  } finally {
    for (const s of servers) await s.stop();
  }
}

/** The project: 200 source files in 10 directories, a gitignored node_modules, then `baton init`. */
function project(root, baton, sh) {
  for (let d = 0; d < 10; d++) {
    mkdirSync(join(root, "src", `mod${d}`), { recursive: true });
    for (let f = 0; f < 20; f++)
      writeFileSync(join(root, "src", `mod${d}`, `file${f}.ts`), `export const v${f} = ${d * 100 + f};\n`.repeat(40));
  }
  mkdirSync(join(root, "node_modules", "dep"), { recursive: true });
  writeFileSync(join(root, "node_modules", "dep", "index.js"), "module.exports = 1;\n");
  writeFileSync(join(root, ".gitignore"), "node_modules/\n");
  writeFileSync(join(root, "src", "app.ts"), 'export function app() {\n  return redirect("/login");\n}\n');
  writeFileSync(join(root, "README.md"), "# App\n");
  sh(root, [baton, "init", "--root", root]);
}

/** A session started by a SessionStart hook (in the mode's way), a decision, a blocker and three lessons. */
function setup(mode, sh) {
  const { root, baton } = mode;
  const vars = { cwd: root, session: "bench-agent-session", call: "call_0" };
  sh(root, [baton, "hook", "claude", "SessionStart"], JSON.stringify(fixture("claude", "session-start-startup", vars)), mode.env);
  const sid = JSON.parse(sh(root, [baton, "status", "--json"]).stdout).sessions[0].sessionId;
  sh(root, [baton, "decision", "add", "Keep the session cookie", "--reason", "fewer moving parts", "--session", sid]);
  sh(root, [baton, "blocker", "add", "The staging login server is down", "--session", sid]);
  for (const l of [
    "Read src/app.ts before replacing the login redirect: its whitespace is fragile.",
    "The login redirect loops when the session cookie has expired; check expiry first.",
    "Generated API clients live in gen/; never edit them.",
  ])
    sh(root, [baton, "lessons", "add", l, "--workspace"]);
  return sid;
}

/** Files the other lanes claim between them (none of them a file the measured hooks write). */
const CLAIMED = 1_000;

/**
 * Two more agent sessions at work in the mode's session: a Claude Code and a Codex session
 * started by their SessionStart hooks, each then recording writes of half the claimed files
 * through the library (the turns their after-tool hooks would record), so the claims are live.
 */
async function otherLanes(mode, sh) {
  const agents = [
    ["claude", "bench-lane-2"],
    ["codex", "bench-lane-3"],
  ];
  for (const [agent, session] of agents) {
    const vars = { cwd: mode.root, session, call: "call_0" };
    sh(mode.root, [mode.baton, "hook", agent, "SessionStart"], JSON.stringify(fixture(agent, "session-start-startup", vars)), mode.env);
  }
  const { openBaton } = await import(join(TARGET, "dist", "index.js"));
  const b = await openBaton({ root: mode.root });
  try {
    for (const [a, [agent, session]] of agents.entries()) {
      const lane = `${agent}:${session}`;
      for (let i = 0; i < CLAIMED / agents.length; i += 100) {
        const files = Array.from({ length: 100 }, (_, j) => ({ path: `gen/lane${a}/file${i + j}.ts`, hash: "a".repeat(64) }));
        await b.turns.record(mode.sid, { tool: "Write", files, lane, argsHash: `${a}-${i}` });
      }
    }
    const live = (await b.sessions.status({ sessionId: mode.sid })).sessions[0].lanes ?? [];
    const claims = live.reduce((n, l) => n + l.claims.count, 0);
    if (live.length < 3 || claims < CLAIMED)
      throw new Error(`[3 lanes]: ${live.length} live lanes with ${claims} claims, not 3 with ${CLAIMED}`);
  } finally {
    await b.close();
  }
}

/** `baton serve` on the workspace, as hooks would start it; resolves once it is listening. */
function startServer(baton, root, env) {
  const child = spawn(process.execPath, [baton, "serve", "--json", "--port", "0", "--root", root], {
    env,
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stderr.on("data", (d) => {
    err += d;
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  return new Promise((resolve, reject) => {
    child.stdout.on("data", (d) => {
      out += d;
      if (!out.includes("\n")) return;
      const ready = JSON.parse(out.split("\n")[0]);
      resolve({
        pid: ready.pid,
        stop: async () => {
          child.kill("SIGTERM");
          await exited;
        },
      });
    });
    void exited.then((code) => reject(new Error(`baton serve exited (${code}) before it was ready: ${err}`)));
  });
}

/** The hooks of one round, in agent order, on `root`: a payload per call (i), and the tool's own effect (untimed) where it has one. */
function hooksFor(root) {
  const vars = (i) => ({ cwd: root, session: "bench-agent-session", call: `call_${i}` });
  const edit = (i) => writeFileSync(join(root, "src", "app.ts"), `export function app() {\n  return redirect("/login?v=${i}");\n}\n`);
  const withArgs = (p, i) => ({ ...p, tool_input: { ...p.tool_input, __call: i } });
  const copilotArgs = (p, i) => ({ ...p, toolArgs: { ...p.toolArgs, __call: i } });
  const clineArgs = (p, i) => {
    const key = p.tool_call ? "tool_call" : "tool_result";
    return { ...p, [key]: { ...p[key], input: { ...p[key].input, __call: i } } };
  };
  return [
    {
      label: "claude SessionStart (resume)",
      agent: "claude",
      event: "SessionStart",
      payload: (i) => fixture("claude", "session-start-resume", vars(i)),
    },
    {
      label: "claude UserPromptSubmit",
      agent: "claude",
      event: "UserPromptSubmit",
      payload: (i) => fixture("claude", "user-prompt", vars(i)),
    },
    {
      label: "claude PreToolUse Edit (checkpoint)",
      agent: "claude",
      event: "PreToolUse",
      payload: (i) => withArgs({ ...fixture("claude", "pre-edit", vars(i)), tool_use_id: `toolu_e${i}` }, i),
      after: edit,
    },
    {
      label: "claude PostToolUse Edit",
      agent: "claude",
      event: "PostToolUse",
      payload: (i) => withArgs({ ...fixture("claude", "post-edit", vars(i)), tool_use_id: `toolu_e${i}` }, i),
    },
    {
      label: "claude PreToolUse Bash (tree checkpoint)",
      agent: "claude",
      event: "PreToolUse",
      payload: (i) => withArgs({ ...fixture("claude", "pre-bash", vars(i)), tool_use_id: `toolu_b${i}` }, i),
      after: (i) => writeFileSync(join(root, "src", "mod3", `file${i % 20}.ts`), `export const changed = ${i};\n`),
    },
    {
      label: "claude PostToolUse Bash",
      agent: "claude",
      event: "PostToolUse",
      payload: (i) => withArgs({ ...fixture("claude", "post-bash", vars(i)), tool_use_id: `toolu_b${i}` }, i),
    },
    {
      label: "claude PreToolUse Read (nothing to do)",
      agent: "claude",
      event: "PreToolUse",
      payload: (i) => fixture("claude", "pre-read", vars(i)),
      noop: true,
    },
    {
      label: "claude PostToolUse Read",
      agent: "claude",
      event: "PostToolUse",
      payload: (i) => withArgs(fixture("claude", "post-read", vars(i)), i),
    },
    { label: "claude Stop", agent: "claude", event: "Stop", payload: (i) => fixture("claude", "stop", vars(i)) },
    {
      label: "codex PreToolUse apply_patch",
      agent: "codex",
      event: "PreToolUse",
      payload: (i) => ({ ...fixture("codex", "pre-apply-patch", vars(i)), tool_use_id: `call_p${i}` }),
      // The patch edits src/app.ts and adds src/signup.ts: both change, as applying it would
      // (a file left as it was on three turns in a row of one agent is a spiral).
      after: (i) => {
        edit(i);
        writeFileSync(join(root, "src", "signup.ts"), `export const signup = () => "signup ${i}";\n`);
      },
    },
    {
      label: "codex PostToolUse apply_patch",
      agent: "codex",
      event: "PostToolUse",
      payload: (i) => withArgs({ ...fixture("codex", "post-apply-patch", vars(i)), tool_use_id: `call_p${i}` }, i),
    },
    {
      label: "gemini BeforeTool write_file",
      agent: "gemini",
      event: "BeforeTool",
      payload: (i) => withArgs(fixture("gemini", "before-write-file", vars(i)), i),
      after: (i) => writeFileSync(join(root, "README.md"), `# App\n\nVersion ${i}\n`),
    },
    {
      label: "gemini AfterTool write_file",
      agent: "gemini",
      event: "AfterTool",
      payload: (i) => withArgs(fixture("gemini", "after-write-file", vars(i)), i),
    },
    {
      label: "qwen PreToolUse edit (checkpoint)",
      agent: "qwen",
      event: "PreToolUse",
      payload: (i) => withArgs({ ...fixture("qwen", "pre-edit", vars(i)), tool_use_id: `toolu_q${i}` }, i),
      after: edit,
    },
    {
      label: "qwen PostToolUse edit",
      agent: "qwen",
      event: "PostToolUse",
      payload: (i) => withArgs({ ...fixture("qwen", "post-edit", vars(i)), tool_use_id: `toolu_q${i}` }, i),
    },
    {
      // Fired for every request of a turn that returns tool results, with no words.
      label: "qwen UserPromptSubmit (tool results, nothing to do)",
      agent: "qwen",
      event: "UserPromptSubmit",
      payload: (i) => fixture("qwen", "user-prompt-continuation", vars(i)),
      noop: true,
    },
    // Copilot CLI sends no call id: each invocation is told by its send time (here per call).
    {
      label: "copilot preToolUse edit (checkpoint)",
      agent: "copilot",
      event: "preToolUse",
      payload: (i) => copilotArgs(fixture("copilot", "pre-edit", { ...vars(i), time: `t${i}` }), i),
      after: edit,
    },
    {
      label: "copilot postToolUse edit",
      agent: "copilot",
      event: "postToolUse",
      payload: (i) => copilotArgs(fixture("copilot", "post-edit", { ...vars(i), time: `t${i}` }), i),
    },
    // OpenCode: the payloads Baton's plugin sends (one `baton hook` process per hook, as here).
    {
      label: "opencode tool.execute.before edit (checkpoint)",
      agent: "opencode",
      event: "tool.execute.before",
      payload: (i) => fixture("opencode", "pre-edit", vars(i)),
      after: edit,
    },
    {
      label: "opencode tool.execute.after edit",
      agent: "opencode",
      event: "tool.execute.after",
      payload: (i) => fixture("opencode", "post-edit", vars(i)),
    },
    // Cline CLI's payloads are its real ones (test/fixtures/agents/cline/) with a call id per call.
    {
      label: "cline PreToolUse editor (checkpoint)",
      agent: "cline",
      event: "PreToolUse",
      payload: (i) => clineArgs(fixture("cline", "pre-edit", vars(i)), i),
      after: edit,
    },
    {
      label: "cline PostToolUse editor",
      agent: "cline",
      event: "PostToolUse",
      payload: (i) => clineArgs(fixture("cline", "post-edit", vars(i)), i),
    },
  ];
}

/** Claims a build before BATON_HOOK_DEBUG left for the hooks its server took. */
function claims(root) {
  const dir = join(root, ".baton", "hooks", "claims");
  return existsSync(dir) ? readdirSync(dir).length : 0;
}

function measure({ modes, sh }) {
  for (const m of modes) m.hooks = hooksFor(m.root);
  const hooks = modes[0].hooks;
  let n = 0;
  const runHook = (h, mode) => {
    const i = n++;
    const input = JSON.stringify(h.payload(i));
    const claimed = claims(mode.root);
    const r = sh(mode.root, [mode.baton, "hook", h.agent, h.event], input, { ...mode.env, BATON_HOOK_DEBUG: "1" }, mode.direct);
    if (r.stdout.includes('"deny"')) throw new Error(`${h.label} was denied (a spiral pause?): ${r.stdout.slice(0, 300)}`);
    if (r.stdout.includes("cancelled")) throw new Error(`${h.label}: a step was cancelled at its deadline: ${r.stdout.slice(0, 300)}`);
    // Every server-mode hook with something to do was answered by the server; no other hook was.
    // (A build from before BATON_HOOK_DEBUG says nothing: its server's claims tell.)
    const told = r.stderr.includes("baton hook: answered");
    const byServer = told ? r.stderr.includes("answered by the server") : claims(mode.root) > claimed;
    const by = r.stderr.includes("no Node started") ? "client" : byServer ? "server" : told ? "in-process" : mode.tag ? "untold" : "noop";
    // The shell's client answers every hook (with nothing to do too).
    const expected = mode.direct ? "client" : h.noop ? "noop" : mode.key;
    if (by !== expected && !(by === "untold" && expected !== "server"))
      throw new Error(`${h.label}${mode.suffix} was answered ${by}, not ${expected} (server pid ${mode.server?.pid}): ${r.stderr}`);
    h.after?.(i);
    return r.ns;
  };
  const label = (k, mode) => `${hooks[k].label}${mode.suffix}`;
  const labels = modes.flatMap((m) => hooks.map((_, k) => label(k, m)));
  const samples = Object.fromEntries([NODE, ...labels].map((l) => [l, []]));
  // Warm-up (also writes the V8 code caches if the build has none yet).
  for (let w = 0; w < 2; w++) {
    sh(modes[0].root, ["-e", "0"]);
    for (const m of modes) for (const h of m.hooks) runHook(h, m);
  }
  const rounds = scaled(20, 4);
  for (let r = 0; r < rounds; r++) {
    // Hooks run in their natural order (a before-hook precedes its after-hook); each runs in
    // every mode back to back, the first mode rotating from round to round, so load drift hits
    // every mode alike. `node -e 0` moves through the round so it meets the same drift.
    const at = r % (hooks.length + 1);
    for (let k = 0; k <= hooks.length; k++) {
      for (let j = 0; j < modes.length; j++) {
        const m = modes[(j + r) % modes.length];
        if (k === at) samples[NODE].push(sh(m.root, ["-e", "0"]).ns);
        const h = m.hooks[k];
        if (h) samples[label(k, m)].push(runHook(h, m));
      }
    }
  }
  const s = Object.fromEntries(Object.entries(samples).map(([l, v]) => [l, summarise(v)]));
  const floor = s[NODE].medianMs;
  const [serverMode, inProcess, serverBefore, inProcessBefore] = modes.filter((m) => !m.lanes && !m.direct);
  const lanesMode = modes.find((m) => m.lanes);
  const clientMode = modes.find((m) => m.direct);
  const per = (m) => hooks.map((_, k) => s[label(k, m)].medianMs / floor);
  const ratios = hooks.map((_, k) => ratio(`${label(k, serverMode)} / node -e 0`, per(serverMode)[k], "<=", 1.5));
  ratios.push(info("slowest hook / node -e 0", Math.max(...per(serverMode))));
  // A hook as agents run `baton` from PATH: answered by the shell's client, no Node.
  for (const [k] of hooks.entries()) ratios.push(ratio(`${label(k, clientMode)} / node -e 0`, per(clientMode)[k], "<=", 1.3));
  for (const [k] of hooks.entries()) ratios.push(info(`${label(k, inProcess)} / node -e 0`, per(inProcess)[k]));
  ratios.push(info("slowest in-process hook / node -e 0", Math.max(...per(inProcess))));
  // Information only: the goal (≤ 1 ms more) is judged by bench/lanes.mjs, which times the
  // server's work itself; here Node's start (its p99 twice its median) hides a millisecond.
  for (const [k] of hooks.entries())
    ratios.push(
      info(
        `${hooks[k].label}: 3 lanes, ${CLAIMED.toLocaleString("en-US")} claims − 1 lane`,
        s[label(k, lanesMode)].medianMs - s[label(k, serverMode)].medianMs,
        "ms",
      ),
    );
  if (serverBefore && inProcessBefore) {
    for (const m of [serverBefore, inProcessBefore])
      for (const [k] of hooks.entries()) ratios.push(info(`${label(k, m)} / node -e 0`, per(m)[k]));
    for (const [now, then] of [
      [serverMode, serverBefore],
      [inProcess, inProcessBefore],
    ])
      for (const [k] of hooks.entries()) ratios.push(info(`${label(k, now)} / ${label(k, then)}`, per(now)[k] / per(then)[k]));
  }
  return {
    rows: [NODE, ...labels].map((l) => ({ subject: l, unit: "processes", ...s[l] })),
    ratios,
    notes: [
      `${rounds} rounds after 2 warm-up rounds; each round runs every hook once per mode, in agent order, each hook in every mode back to back (the first mode rotating), with node -e 0 at a rotating position`,
      `modes: with the workspace's server running (baton serve pid ${serverMode.server.pid}; the 1.5x goal is judged on this mode), [client] (the same, each hook run as \`baton\` from PATH runs: bin/baton.cjs as a program, whose shell client answers each hook with no Node; the 1.3x goal) and [in-process] (BATON_HOOK_SERVER=off), each on its own workspace${serverBefore ? `; the same for the build in ${process.env.BATON_BENCH_BEFORE}, [before]` : ""}; [3 lanes]: the server mode with two more agent sessions at work claiming ${CLAIMED} files`,
      "payloads: test/fixtures/hooks/<agent>/*.json (call ids and arguments made unique per call); NODE_EXTRA_CA_CERTS removed from the children's environment",
      `workspaces: 200 source files in 10 directories; sessions ${modes.map((m) => m.sid).join(", ")}, each with a decision, a blocker and 3 lessons`,
    ],
  };
}

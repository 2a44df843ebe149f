/**
 * Agent hooks as the agents run them: one whole `node bin/baton.cjs hook <agent> <Event>`
 * process per hook, fed a real payload on stdin (the recorded fixtures in
 * test/fixtures/hooks/), spawned and waited for, against `node -e 0` in the same rounds.
 * Goal: every hook process ≤ 1.5× `node -e 0` (median wall time).
 *
 * The workspace is a small project (200 source files in 10 directories, a .gitignore'd
 * node_modules), with a session started by a SessionStart hook, a decision, a blocker and
 * three lessons. Between a before-hook and its after-hook the benchmark makes the edit the
 * tool would (untimed), so checkpoints and turns see real changes; arguments differ per call,
 * as an agent's do, so the spiral detector has nothing to pause.
 *
 * Children run without NODE_EXTRA_CA_CERTS (it adds a fixed cost to every Node start on some
 * machines, which would shrink the ratio without saying anything about Baton).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { hr, info, REPO, ratio, scaled, summarise, TARGET, tempDir } from "./lib.mjs";

export const name = "hooks";
export const title = "agent hook processes: `baton hook <agent> <Event>` wall time vs `node -e 0`";

const FIXTURES = join(REPO, "test", "fixtures", "hooks");
const NODE = "node -e 0";

function fixture(agent, file, vars) {
  let text = readFileSync(join(FIXTURES, agent, `${file}.json`), "utf8");
  for (const [k, v] of Object.entries(vars)) text = text.split(`{{${k}}}`).join(JSON.stringify(v).slice(1, -1));
  return JSON.parse(text);
}

function bin() {
  const b = join(TARGET, "bin", "baton.cjs");
  if (!existsSync(b)) throw new Error(`${b} is missing: build first`);
  return b;
}

export async function run() {
  const root = tempDir("hooks");
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

  const baton = bin();
  const env = { ...process.env };
  delete env.NODE_EXTRA_CA_CERTS;
  delete env.BATON_ROOT;
  const node = process.execPath;
  const sh = (args, input) => {
    const t = hr();
    const r = spawnSync(node, args, { env, cwd: root, input: input ?? "", encoding: "utf8" });
    const ns = Number(hr() - t);
    if (r.status !== 0) throw new Error(`${args.join(" ")} exited ${r.status}: ${r.stderr || r.stdout}`);
    return { ns, stdout: r.stdout };
  };
  sh([baton, "init", "--root", root]);
  const vars = (i) => ({ cwd: root, session: "bench-agent-session", call: `call_${i}` });
  const hookArgs = (agent, event) => [baton, "hook", agent, event];
  sh(hookArgs("claude", "SessionStart"), JSON.stringify(fixture("claude", "session-start-startup", vars(0))));
  const status = JSON.parse(sh([baton, "status", "--json"]).stdout);
  const sid = status.sessions[0].sessionId;
  sh([baton, "decision", "add", "Keep the session cookie", "--reason", "fewer moving parts", "--session", sid]);
  sh([baton, "blocker", "add", "The staging login server is down", "--session", sid]);
  for (const l of [
    "Read src/app.ts before replacing the login redirect: its whitespace is fragile.",
    "The login redirect loops when the session cookie has expired; check expiry first.",
    "Generated API clients live in gen/; never edit them.",
  ])
    sh([baton, "lessons", "add", l, "--workspace"]);

  // Each contestant: a payload per call (i), and the tool's own effect (untimed) where it has one.
  let n = 0;
  const edit = (i) => writeFileSync(join(root, "src", "app.ts"), `export function app() {\n  return redirect("/login?v=${i}");\n}\n`);
  const withArgs = (p, i) => ({ ...p, tool_input: { ...p.tool_input, __call: i } });
  const hooks = [
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
      after: edit,
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
  ];

  const runHook = (h) => {
    const i = n++;
    const input = JSON.stringify(h.payload(i));
    const r = sh(hookArgs(h.agent, h.event), input);
    if (r.stdout.includes('"deny"')) throw new Error(`${h.label} was denied (a spiral pause?): ${r.stdout.slice(0, 300)}`);
    h.after?.(i);
    return r.ns;
  };
  const samples = Object.fromEntries([NODE, ...hooks.map((h) => h.label)].map((l) => [l, []]));
  // Warm-up (also writes the V8 code cache if the build has none yet).
  for (let w = 0; w < 2; w++) {
    sh(["-e", "0"]);
    for (const h of hooks) runHook(h);
  }
  const rounds = scaled(20, 4);
  for (let r = 0; r < rounds; r++) {
    // Hooks run in their natural order (a before-hook precedes its after-hook); `node -e 0`
    // moves through the round so load drift hits it as it hits the hooks.
    const at = r % (hooks.length + 1);
    for (let k = 0; k <= hooks.length; k++) {
      if (k === at) samples[NODE].push(sh(["-e", "0"]).ns);
      const h = hooks[k];
      if (h) samples[h.label].push(runHook(h));
    }
  }
  const s = Object.fromEntries(Object.entries(samples).map(([l, v]) => [l, summarise(v)]));
  const floor = s[NODE].medianMs;
  const ratios = hooks.map((h) => ratio(`${h.label} / node -e 0`, s[h.label].medianMs / floor, "<=", 1.5));
  const worst = Math.max(...hooks.map((h) => s[h.label].medianMs / floor));
  ratios.push(info("slowest hook / node -e 0", worst));
  return {
    rows: [NODE, ...hooks.map((h) => h.label)].map((l) => ({ subject: l, unit: "processes", ...s[l] })),
    ratios,
    notes: [
      `${rounds} rounds after 2 warm-up rounds; each round runs every hook once, in agent order, with node -e 0 at a rotating position`,
      "payloads: test/fixtures/hooks/<agent>/*.json (call ids and arguments made unique per call); NODE_EXTRA_CA_CERTS removed from the children's environment",
      `workspace: 200 source files in 10 directories, session ${sid} with a decision, a blocker and 3 lessons`,
    ],
  };
}

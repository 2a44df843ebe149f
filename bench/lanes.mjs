/**
 * What several agents at once cost a hook (core/lanes.ts): the work Baton does for one agent
 * hook (`baton.agents.handle`, what the workspace's server runs for each hook process), in a
 * session where this agent works alone, and in one where two more agent sessions (a second
 * Claude Code session and a Codex session) work at once and claim 1,000 files between them.
 * Goal: with 3 lanes and 1,000 claims, every hook at most 1 ms more (median) than alone.
 *
 * BATON_BENCH_BEFORE=<dir of another build> adds that build, alone, as "today": then the goal is
 * judged against it (3 lanes on this build − 1 agent on the build before lanes).
 *
 * Each side is a small project (50 files) with its own SQLite store at the default durability;
 * the hooks run in agent order (prompt, a checkpointed Edit, a checkpointed shell command, the
 * turn's end), each side back to back, the first side rotating every round. The tool's own
 * edit is made between its before and after hooks, untimed.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { builtLibrary, hr, info, loadBaton, ratio, scaled, summarise, tempDir } from "./lib.mjs";

export const name = "lanes";
export const title = "agent hooks with 3 lanes and 1,000 claimed files vs one agent alone (baton.agents.handle)";

const CLAIMED = 1_000;
const PER_TURN = 10;
const SESSION = "bench-lane-1";

function project(root) {
  for (let d = 0; d < 5; d++) {
    mkdirSync(join(root, "src", `mod${d}`), { recursive: true });
    for (let f = 0; f < 10; f++)
      writeFileSync(join(root, "src", `mod${d}`, `file${f}.ts`), `export const v${f} = ${d * 100 + f};\n`.repeat(20));
  }
  writeFileSync(join(root, "src", "app.ts"), "export const app = 0;\n");
}

const base = (root, agent, session) => ({ agent, native: "", cwd: root, agentSessionId: session });

/** The hook events of one round for the measured agent, with the tool's effect where it has one. */
function hooksFor(root) {
  const b = (kind, native, more) => ({ ...base(root, "claude", SESSION), native, kind, ...more });
  const edit = (i) => ({
    name: "Edit",
    kind: "write",
    files: [join(root, "src", "app.ts")],
    input: { file_path: join(root, "src", "app.ts"), i },
    callId: `toolu_e${i}`,
  });
  const bash = (i) => ({
    name: "Bash",
    kind: "shell",
    files: [],
    input: { command: `touch x${i}`, i },
    command: `touch x${i}`,
    callId: `toolu_b${i}`,
  });
  return [
    { label: "prompt", event: (i) => b("prompt", "UserPromptSubmit", { prompt: `carry on ${i}` }) },
    {
      label: "before Edit (checkpoint, claims looked up)",
      event: (i) => b("before_tool", "PreToolUse", { tool: edit(i) }),
      after: (i) => writeFileSync(join(root, "src", "app.ts"), `export const app = ${i};\n`),
    },
    { label: "after Edit (turn, claims written)", event: (i) => b("after_tool", "PostToolUse", { tool: edit(i), status: "success" }) },
    {
      label: "before shell (tree checkpoint)",
      event: (i) => b("before_tool", "PreToolUse", { tool: bash(i) }),
      after: (i) => writeFileSync(join(root, "src", "mod1", `file${i % 10}.ts`), `export const changed = ${i};\n`),
    },
    { label: "after shell (others' claims checked)", event: (i) => b("after_tool", "PostToolUse", { tool: bash(i), status: "success" }) },
    { label: "turn end", event: () => b("stop", "Stop", { sessionEnd: false }) },
  ];
}

async function side(label, lib, lanes) {
  const root = tempDir(`lanes-${label.replace(/\W+/g, "-")}`);
  project(root);
  const baton = await lib.openBaton({ root, create: true });
  await baton.agents.handle(
    { ...base(root, "claude", SESSION), native: "SessionStart", kind: "session_start", source: "startup" },
    { agentPid: process.pid },
  );
  if (lanes) {
    const others = [
      ["claude", "bench-lane-2"],
      ["codex", "bench-lane-3"],
    ];
    for (const [agent, session] of others)
      await baton.agents.handle(
        { ...base(root, agent, session), native: "SessionStart", kind: "session_start", source: "startup" },
        { agentPid: process.pid },
      );
    const sid = (await baton.sessions.list())[0].id;
    // Patch-sized turns (10 files each), as an agent rewriting a module writes them.
    for (const [a, [agent, session]] of others.entries()) {
      for (let i = 0; i < CLAIMED / others.length; i += PER_TURN) {
        const files = Array.from({ length: PER_TURN }, (_, j) => ({ path: `gen/lane${a}/file${i + j}.ts`, hash: "a".repeat(64) }));
        await baton.turns.record(sid, { tool: "Write", files, lane: `${agent}:${session}`, argsHash: `${a}-${i}` });
      }
    }
    const live = await baton.lanes.list(sid);
    const claims = live.reduce((n, l) => n + l.claims.count, 0);
    if (live.length < 3 || claims < CLAIMED)
      throw new Error(`${label}: ${live.length} live lanes with ${claims} claims, not 3 with ${CLAIMED}`);
  }
  return { label, root, baton, hooks: hooksFor(root) };
}

export async function run() {
  const now = await loadBaton();
  const sides = [await side("1 agent", now, false), await side("3 lanes", now, true)];
  const beforeDir = process.env.BATON_BENCH_BEFORE;
  if (beforeDir) sides.push(await side("1 agent, today", await import(builtLibrary(beforeDir)), false));
  try {
    const hooks = sides[0].hooks;
    const samples = Object.fromEntries(sides.flatMap((s) => hooks.map((h) => [`${h.label} [${s.label}]`, []])));
    let n = 0;
    const round = async (r, timed) => {
      for (const [k, h] of hooks.entries()) {
        for (let j = 0; j < sides.length; j++) {
          const s = sides[(j + r) % sides.length];
          const i = n++;
          const ev = s.hooks[k].event(i);
          const t = hr();
          const res = await s.baton.agents.handle(ev, { agentPid: process.pid, requestId: `bench-${i}-req` });
          const ns = Number(hr() - t);
          if (res.deny) throw new Error(`${h.label} [${s.label}] was denied: ${res.deny.reason.slice(0, 200)}`);
          if (timed) samples[`${h.label} [${s.label}]`].push(ns);
          s.hooks[k].after?.(i);
        }
      }
    };
    for (let w = 0; w < 5; w++) await round(w, false);
    const rounds = scaled(200, 10);
    for (let r = 0; r < rounds; r++) await round(r, true);
    const s = Object.fromEntries(Object.entries(samples).map(([l, v]) => [l, summarise(v)]));
    const med = (h, side) => s[`${h.label} [${side}]`].medianMs;
    const judged = beforeDir ? "1 agent, today" : "1 agent";
    const ratios = hooks.map((h) =>
      ratio(`${h.label}: 3 lanes, 1,000 claims − ${judged}`, med(h, "3 lanes") - med(h, judged), "<=", 1, "ms"),
    );
    if (beforeDir)
      for (const h of hooks) ratios.push(info(`${h.label}: 1 agent − 1 agent, today`, med(h, "1 agent") - med(h, "1 agent, today"), "ms"));
    else for (const h of hooks) ratios.push(info(`${h.label}: 3 lanes / 1 agent`, med(h, "3 lanes") / med(h, "1 agent")));
    return {
      rows: Object.entries(s).map(([subject, v]) => ({ subject, unit: "hooks", ...v })),
      ratios,
      notes: [
        `${rounds} rounds after 5 warm-up rounds; each round runs the hooks in agent order, each on every side back to back, the first side rotating`,
        `sides: the agent alone; the same agent with two more agent sessions at work claiming ${CLAIMED} files (in turns of ${PER_TURN})${beforeDir ? `; the build in ${beforeDir} (before lanes), alone` : ""}; each on its own SQLite workspace at the default durability`,
        "measured: baton.agents.handle, what the workspace's server does for each hook process (a hook process adds Node's start, the same on every side)",
      ],
    };
  } finally {
    for (const s of sides) await s.baton.close();
  }
}

/**
 * `baton demo`: a recovery story told for real in a temporary workspace.
 *
 * Every journal operation is a separate process running this same CLI (`process.execPath` with
 * the CLI script, `--root <workspace> --json`), the agent that gets killed is a real child
 * process killed with a real SIGKILL, and every file is a real file. The demo checks each result
 * it relies on and fails (exit 1, the workspace kept for inspection) when reality differs from
 * the story.
 *
 * Output: prose by default; `--quiet` prints only the summary; `--json` prints JSON Lines, one
 * `{step, title, command, result}` object per step (`command` lists the commands the step ran,
 * in order) and a final `{summary}` object.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Ctx } from "../cli/context.js";
import { LIVE_VARIANT_MARKERS as M } from "../core/flows/live-variant.js";
import { BatonError, EXIT_CODES } from "../errors.js";

export interface DemoOptions {
  keep?: boolean;
  quiet?: boolean;
  json?: boolean;
}

// biome-ignore lint/suspicious/noExplicitAny: results are parsed CLI JSON, checked field by field
type Json = any;

const SESSION = "hero";
const FILE = "src/Hero.html";
const ACCEPTED = { variantId: "v2", paramValues: { hue: 210, density: "airy" } } as const;
const CARBONIZE_END = "baton-carbonize-end";
const WIDTH = 100;
const CLI_TIMEOUT_MS = 30_000;
const AGENT_TIMEOUT_MS = 15_000;

const HERO_ORIGINAL = `<!doctype html>
<html lang="en">
<body>
  <section class="hero">
    <h1>Ship calmer releases</h1>
    <p>Every agent session keeps its place, even when the agent does not.</p>
    <a class="cta" href="#start">Get started</a>
  </section>
</body>
</html>
`;

/** The original hero, indented to sit inside a wrapper `<div>`. */
const ORIGINAL_SECTION = HERO_ORIGINAL.split("\n").slice(3, 8);

const VARIANTS: Record<string, string[]> = {
  v1: [
    '<section class="hero hero--centered" data-density="compact" style="--hue: 30">',
    "  <h1>Ship calmer releases</h1>",
    '  <a class="cta cta--large" href="#start">Get started</a>',
    "</section>",
  ],
  v2: [
    '<section class="hero hero--split" data-density="compact" style="--hue: 160">',
    '  <div class="hero__copy">',
    "    <h1>Ship calmer releases</h1>",
    "    <p>Every agent session keeps its place, even when the agent does not.</p>",
    "  </div>",
    '  <a class="cta" href="#start">Get started</a>',
    "</section>",
  ],
  v3: [
    '<section class="hero hero--banner" data-density="compact" style="--hue: 280">',
    "  <p>Every agent session keeps its place.</p>",
    '  <a class="cta cta--ghost" href="#start">Get started</a>',
    "</section>",
  ],
};

/** The hero wrapped in variant markers: the original, then each variant written so far. */
function wrappedHero(variantIds: string[]): string {
  const block = (open: string, body: string[]) => [`    ${open}`, ...body.map((l) => `      ${l}`), "    </div>"];
  const lines = [
    "<!doctype html>",
    '<html lang="en">',
    "<body>",
    `  <!-- ${M.variantsStart} element=".hero" -->`,
    ...block(
      `<div data-${M.original}>`,
      ORIGINAL_SECTION.map((l) => l.slice(2)),
    ),
    ...variantIds.flatMap((id) => block(`<div data-${M.variant}"${id}">`, VARIANTS[id] ?? [])),
    `  <!-- ${M.variantsEnd} -->`,
    "</body>",
    "</html>",
    "",
  ];
  return lines.join("\n");
}

/**
 * The agent that gets killed. It records its run, reads its next action from `baton status`,
 * starts the accept cleanup (removes the first rejected variant from the file), reports that,
 * and then "thinks" for a long time. Plain CommonJS for `node -e`; configuration in argv[1].
 */
const DOOMED_AGENT = String.raw`
const { execFileSync } = require("node:child_process");
const { readFileSync, writeFileSync } = require("node:fs");
const { join } = require("node:path");
const cfg = JSON.parse(process.argv[1]);
const say = (o) => process.stdout.write(JSON.stringify(o) + "\n");
const baton = (...args) =>
  JSON.parse(execFileSync(cfg.node, [...cfg.nodeArgs, cfg.cli, "--root", cfg.root, "--json", ...args], { encoding: "utf8" }));
const run = baton("run", "start", "--session", cfg.session, "--agent", "demo-agent");
say({ event: "run_started", runId: run.runId, pid: process.pid });
const s = baton("status", "--session", cfg.session).sessions[0];
const { variantId, paramValues, file } = s.context;
say({ event: "applying", action: s.nextAction.action, variantId, paramValues, file });
const abs = join(cfg.root, file);
const text = readFileSync(abs, "utf8");
const ids = [...text.matchAll(/data-baton-variant="([^"]+)"/g)].map((m) => m[1]);
const rejected = ids.filter((id) => id !== variantId);
const block = new RegExp("^( *)<div data-baton-variant=\"" + rejected[0] + "\"[^\\n]*\\n[\\s\\S]*?^\\1</div>\\n", "m");
writeFileSync(abs, text.replace(block, ""));
say({ event: "removed", variantId: rejected[0], next: rejected.slice(1) });
setTimeout(() => process.exit(0), 60000);
`;

interface StepRecord {
  step: number;
  title: string;
  command: string[];
  result: Record<string, unknown>;
}

interface CliCall {
  command: string;
  code: number;
  stdout: string;
  stderr: string;
  json: Json;
}

class DemoFailure extends Error {}

/** How to start this CLI in another process. */
function cliInvocation(): { node: string; nodeArgs: string[]; cli: string } {
  const argv1 = process.argv[1];
  const cli = argv1 && existsSync(argv1) ? argv1 : fileURLToPath(new URL("../bin/baton.cjs", import.meta.url));
  const nodeArgs = process.execArgv.filter((a) => !a.startsWith("--inspect") && !a.startsWith("--debug"));
  return { node: process.execPath, nodeArgs, cli };
}

function shellQuote(arg: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

function wrapWords(text: string, indent: string, width = WIDTH): string[] {
  const out: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && indent.length + line.length + 1 + word.length > width) {
      out.push(indent + line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) out.push(indent + line);
  return out;
}

/** A shell command, broken with `\` between arguments to stay within the width. */
function wrapCommand(args: string[], indent: string): string[] {
  const out: string[] = [];
  let line = `${indent}$ baton`;
  for (const a of args.map(shellQuote)) {
    if (line.length + 1 + a.length + 2 > WIDTH) {
      out.push(`${line} \\`);
      line = `${indent}    ${a}`;
    } else line = `${line} ${a}`;
  }
  out.push(line);
  return out;
}

function brief(text: string, max = 800): string {
  const t = text.trim();
  return t.length > max ? `${t.slice(0, max)}…` : t;
}

function clip(line: string): string {
  return line.length > WIDTH ? `${line.slice(0, WIDTH - 1)}…` : line;
}

class Narrator {
  readonly #mode: "prose" | "json" | "quiet";
  #current: StepRecord | undefined;
  readonly steps: StepRecord[] = [];

  constructor(mode: "prose" | "json" | "quiet") {
    this.#mode = mode;
  }

  get step(): number {
    return this.#current?.step ?? 0;
  }

  #print(lines: string[]): void {
    if (this.#mode === "prose") process.stdout.write(`${lines.map(clip).join("\n")}\n`);
  }

  intro(lines: string[]): void {
    this.#print(lines);
  }

  begin(title: string, explanation: string): void {
    this.#current = { step: this.steps.length + 1, title, command: [], result: {} };
    this.#print(["", `${this.#current.step}. ${title}`, ...wrapWords(explanation, "   ")]);
  }

  command(args: string[], fullCommand: string, result: string[]): void {
    this.#current?.command.push(fullCommand);
    const shown = result.flatMap((item) => item.split("\n").map((l, i) => (i === 0 ? `     → ${l}` : `       ${l}`)));
    this.#print([...wrapCommand(args, "   "), ...shown]);
  }

  /** A command that is not a CLI call (shown by the caller its own way). */
  ran(fullCommand: string): void {
    this.#current?.command.push(fullCommand);
  }

  note(lines: string[]): void {
    this.#print(lines.map((l) => `   ${l}`));
  }

  end(result: Record<string, unknown>): void {
    const cur = this.#current;
    if (!cur) return;
    cur.result = result;
    this.steps.push(cur);
    this.#current = undefined;
    if (this.#mode === "json") process.stdout.write(`${JSON.stringify(cur)}\n`);
  }
}

class Story {
  readonly #inv = cliInvocation();
  readonly root: string;
  readonly n: Narrator;

  constructor(root: string, narrator: Narrator) {
    this.root = root;
    this.n = narrator;
  }

  get invocation() {
    return this.#inv;
  }

  /** Run `baton --root <ws> --json <args>` in a fresh process. */
  run(args: string[], expectCode = 0): CliCall {
    const full = ["--root", this.root, "--json", ...args];
    const r = spawnSync(this.#inv.node, [...this.#inv.nodeArgs, this.#inv.cli, ...full], {
      encoding: "utf8",
      timeout: CLI_TIMEOUT_MS,
      env: process.env,
    });
    const command = `baton ${full.map(shellQuote).join(" ")}`;
    const code = r.status ?? -1;
    let json: Json;
    try {
      json = r.stdout.trim() ? JSON.parse(r.stdout) : undefined;
    } catch {
      json = undefined;
    }
    if (code !== expectCode) {
      const why = r.error ? r.error.message : r.signal ? `killed by ${r.signal}` : `exit ${code}`;
      const out = [`\`${command}\` ended with ${why}, expected exit ${expectCode}`];
      if (r.stdout.trim()) out.push(`stdout: ${brief(json === undefined ? r.stdout : JSON.stringify(json))}`);
      if (r.stderr.trim()) out.push(`stderr: ${brief(r.stderr)}`);
      throw new DemoFailure(out.join("\n"));
    }
    return { command, code, stdout: r.stdout, stderr: r.stderr, json };
  }

  /** Run and narrate: show the command (without the common `--root <ws> --json`) and its key result. */
  say(args: string[], describe: (c: CliCall) => string[], expectCode = 0): CliCall {
    const c = this.run(args, expectCode);
    this.n.command(args, c.command, describe(c));
    return c;
  }

  /** `baton status --json`: the single session's status, or the no-session report. */
  status(): Json {
    return this.run(["status"]).json;
  }

  file(): string {
    return readFileSync(join(this.root, FILE), "utf8");
  }

  writeFile(text: string): void {
    writeFileSync(join(this.root, FILE), text);
  }
}

function check(cond: unknown, what: string, actual: unknown): asserts cond {
  if (!cond) throw new DemoFailure(`${what}; got ${brief(JSON.stringify(actual) ?? "undefined")}`);
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function appended(c: CliCall): string[] {
  const r = c.json;
  return [`seq ${r.event.seq} ${r.event.type} (${r.event.actor}): ${r.outcome}, phase ${r.phase}`];
}

function nextOf(s: Json): string[] {
  return [`phase ${s.phase}, next action ${s.nextAction.action}`, wrapWords(`"${s.nextAction.reason}"`, "", WIDTH - 7).join("\n")];
}

function agentLine(m: Json): string {
  switch (m.event) {
    case "run_started":
      return `recorded run ${m.runId} (pid ${m.pid})`;
    case "applying":
      return `${m.action}: applying ${m.variantId} ${JSON.stringify(m.paramValues)} in ${m.file}…`;
    case "removed":
      return `removed ${m.variantId} from the file; ${m.next.join(", ")} next (thinking…)`;
    default:
      return JSON.stringify(m);
  }
}

function variantIds(text: string): string[] {
  return [...text.matchAll(/data-baton-variant="([^"]+)"/g)].map((m) => m[1] as string);
}

function lineOf(text: string, needle: string): number {
  return text.split("\n").findIndex((l) => l.includes(needle)) + 1;
}

/** Wait for the child to print a JSON line with `event === name`; fails if it exits first. */
function waitForLine(child: ChildProcess, name: string, seen: Json[], stderr: () => string): Promise<Json> {
  return new Promise((resolve, reject) => {
    let buf = "";
    const timer = setTimeout(
      () => done(new DemoFailure(`the agent did not report "${name}" within ${AGENT_TIMEOUT_MS} ms`)),
      AGENT_TIMEOUT_MS,
    );
    const onData = (chunk: Buffer) => {
      buf += chunk.toString("utf8");
      let i = buf.indexOf("\n");
      while (i >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        i = buf.indexOf("\n");
        if (!line.trim()) continue;
        let msg: Json;
        try {
          msg = JSON.parse(line);
        } catch {
          msg = { event: "output", text: line };
        }
        seen.push(msg);
        if (msg.event === name) return done(undefined, msg);
      }
    };
    const onExit = (code: number | null, signal: string | null) =>
      done(new DemoFailure(`the agent exited (${signal ?? `code ${code}`}) before reporting "${name}"\nstderr: ${stderr().trim()}`));
    function done(err: Error | undefined, msg?: Json) {
      clearTimeout(timer);
      child.stdout?.off("data", onData);
      child.off("exit", onExit);
      if (err) reject(err);
      else resolve(msg);
    }
    child.stdout?.on("data", onData);
    child.once("exit", onExit);
  });
}

function killed(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve({ code: child.exitCode, signal: child.signalCode });
    else child.once("exit", (code, signal) => resolve({ code, signal }));
  });
}

async function tell(s: Story, keep: boolean, agentRef: { child?: ChildProcess }): Promise<Record<string, unknown>> {
  const n = s.n;
  const inv = s.invocation;
  n.intro([
    "Baton demo: a live-variant session survives an agent killed mid-work.",
    `Workspace: ${s.root}`,
    ...wrapWords(`Every "$ baton …" line below is a separate process: ${process.execPath} ${inv.cli} --root <workspace> --json …`, ""),
  ]);

  // 1. Workspace
  n.begin(
    "A workspace with one source file",
    "A temporary directory gets a journal (baton init: embedded SQLite, no server) and a small HTML hero section, the piece of UI the user will redesign.",
  );
  const init = s.say(["init"], (c) => [`journal at ${c.json.database}`]);
  mkdirSync(join(s.root, "src"), { recursive: true });
  s.writeFile(HERO_ORIGINAL);
  n.note([`wrote ${FILE} (${HERO_ORIGINAL.split("\n").length - 1} lines, a <section class="hero">)`]);
  n.end({ workspace: s.root, database: init.json.database, file: FILE });

  // 2. Session + generate with no agent
  n.begin(
    "The browser asks for variants while no agent is listening",
    "A live-variant session starts. The browser sends `generate`; no agent process exists, so the request only lands in the journal. A later, separate process reads it back.",
  );
  s.say(["session", "start", "--flow", "live-variant", "--id", SESSION, "--title", "Hero redesign"], (c) => [
    `session ${c.json.sessionId}, flow ${c.json.flow}, phase ${c.json.phase}`,
  ]);
  const gen = s.say(
    ["event", SESSION, "generate", "--actor", "browser", "--data", JSON.stringify({ variants: 3, element: ".hero" })],
    appended,
  );
  const st2 = s.say(["status"], (c) => nextOf(c.json.sessions[0]));
  const s2 = st2.json.sessions[0];
  check(s2?.nextAction?.action === "write_variants", "after generate, status should say write_variants", s2?.nextAction);
  n.end({
    sessionId: SESSION,
    generate: { seq: gen.json.event.seq, outcome: gen.json.outcome },
    phase: s2.phase,
    nextAction: "write_variants",
  });

  // 3. Agent wraps the source and writes variants
  n.begin(
    "An agent wraps the source and writes three variants",
    `The agent puts the hero inside variant markers (${M.variantsStart}, ${M.original}, ${M.variant}"…", ${M.variantsEnd}) and records the file; then it writes v1, v2 and v3 into the wrapper and records the count.`,
  );
  s.writeFile(wrappedHero([]));
  n.note([`wrapped the hero in ${FILE}: markers at lines ${lineOf(s.file(), M.variantsStart)}–${lineOf(s.file(), M.variantsEnd)}`]);
  s.say(["event", SESSION, "source_wrapped", "--actor", "agent", "--data", JSON.stringify({ file: FILE })], appended);
  s.writeFile(wrappedHero(["v1", "v2", "v3"]));
  n.note([`wrote variants ${variantIds(s.file()).join(", ")} into the wrapper`]);
  s.say(["event", SESSION, "variants_written", "--actor", "agent", "--data", JSON.stringify({ count: 3, expected: 3 })], appended);
  const s3 = s.say(["status"], (c) => [...nextOf(c.json.sessions[0]), `markers found in ${FILE}: ${c.json.sessions[0].markers.length}`])
    .json.sessions[0];
  check(s3?.phase === "variants_written", "after variants_written, the phase should be variants_written", s3?.phase);
  n.end({
    file: FILE,
    variants: variantIds(s.file()),
    phase: s3.phase,
    nextAction: s3.nextAction.action,
    markers: [...new Set((s3.markers as Json[]).map((m) => m.marker))],
  });

  // 4. Browser cycles, tunes and accepts; still no agent
  n.begin(
    "The user cycles, tunes and accepts v2; still no agent is listening",
    "The agent has gone quiet. In the browser the user cycles through the variants, tunes v2 (a checkpoint at revision 1), and accepts it. Each event is one CLI process that exits at once.",
  );
  s.say(["event", SESSION, "cycling", "--actor", "browser", "--data", JSON.stringify({ visibleVariant: "v1" })], appended);
  s.say(
    [
      "event",
      SESSION,
      "checkpoint",
      "--actor",
      "browser",
      "--revision",
      "1",
      "--data",
      JSON.stringify({ visibleVariant: "v2", paramValues: ACCEPTED.paramValues }),
    ],
    appended,
  );
  const acc = s.say(["event", SESSION, "accept", "--actor", "browser", "--data", JSON.stringify(ACCEPTED)], appended);
  check(acc.json.phase === "accept_pending", "accept should move the session to accept_pending", acc.json.phase);
  n.end({ phase: acc.json.phase, accept: { seq: acc.json.event.seq, data: acc.json.event.data }, revision: 1 });

  // 5. Agent starts applying and is killed
  n.begin(
    "An agent starts applying the accept and is killed with SIGKILL",
    "A new agent process records its run, reads its next action from baton status, and starts the cleanup: it removes the first rejected variant from the file. Then, mid-work, it is killed with SIGKILL: no exit handler, no goodbye.",
  );
  const agentCfg = { ...inv, root: s.root, session: SESSION };
  const child = spawn(inv.node, [...inv.nodeArgs, "--input-type=commonjs", "-e", DOOMED_AGENT, JSON.stringify(agentCfg)], {
    stdio: ["ignore", "pipe", "pipe"],
    env: process.env,
  });
  agentRef.child = child;
  n.ran(`${shellQuote(inv.node)} -e <agent script> ${shellQuote(JSON.stringify(agentCfg))}`);
  let agentErr = "";
  child.stderr?.on("data", (d: Buffer) => {
    agentErr += d.toString("utf8");
  });
  const seen: Json[] = [];
  const removed = await waitForLine(child, "removed", seen, () => agentErr);
  const started = seen.find((m) => m.event === "run_started");
  const applying = seen.find((m) => m.event === "applying");
  n.note([`$ node -e <agent script>   # pid ${child.pid}`, ...seen.map((m) => `  agent: ${agentLine(m)}`)]);
  check(applying?.action === "run_accept_cleanup", "the agent should have read run_accept_cleanup", applying);
  const afterPartial = variantIds(s.file());
  const pid = child.pid as number;
  child.kill("SIGKILL");
  const exit = await killed(child);
  check(exit.signal === "SIGKILL", "the agent should have died of SIGKILL", exit);
  n.note([
    `kill -KILL ${pid} → the agent exited with signal ${exit.signal} (exit code ${exit.code})`,
    `${FILE} is half-edited: ${removed.variantId} removed, ${afterPartial.join(" and ")} still there`,
  ]);
  n.end({
    pid,
    signal: exit.signal,
    runId: started?.runId,
    agentOutput: seen,
    variantsLeftInFile: afterPartial,
  });

  // 6. Fresh process: status
  n.begin(
    "A fresh process asks where things stand",
    "Nothing survives in memory. A brand-new process runs baton status: it finds the killed agent's run dead (its pid is gone) and records it as crashed, then gives the next action, with the accepted variant and its params, straight from the journal and the files.",
  );
  const st6 = s.say(["status"], (c) => {
    const x = c.json.sessions[0];
    const crashed = (c.json.crashedRuns as Json[] | undefined) ?? [];
    return [
      ...crashed.map((r) => `run ${r.runId} crashed (${r.proof}): recorded by status; its leased work went back to the queue`),
      ...nextOf(x),
      `context: variantId=${x.context.variantId} paramValues=${JSON.stringify(x.context.paramValues)} file=${x.context.file}`,
    ];
  });
  const s6 = st6.json.sessions[0];
  check(s6?.nextAction?.action === "run_accept_cleanup", "a fresh status should say run_accept_cleanup", s6?.nextAction);
  check(s6.context.variantId === ACCEPTED.variantId, `the context should name variant ${ACCEPTED.variantId}`, s6.context.variantId);
  check(sameJson(s6.context.paramValues, ACCEPTED.paramValues), "the context should hold the accepted params", s6.context.paramValues);
  check(s6.context.file === FILE, `the context should name ${FILE}`, s6.context.file);
  let alive = true;
  try {
    process.kill(pid, 0);
  } catch {
    alive = false;
  }
  // The journal's own record of the killed agent's run: marked crashed by status, with the dead pid.
  const runOf = (c: CliCall): Json => (c.json.facets?.runs as Json[] | undefined)?.find((r) => r.pid === pid);
  const resumed = s.say(["resume", SESSION], (c) => {
    const r = runOf(c);
    return [`run ${r?.runId} (pid ${r?.pid}) is "${r?.status}" in the journal; pid ${r?.pid} is ${alive ? "alive?!" : "gone"}`];
  });
  const deadRun = runOf(resumed);
  check(
    deadRun?.runId === started?.runId && deadRun?.status === "crashed",
    `the journal should list the killed agent's run (pid ${pid}) as crashed`,
    resumed.json.facets?.runs,
  );
  check(!alive, `the killed agent (pid ${pid}) should be gone`, { pid });
  n.end({
    phase: s6.phase,
    nextAction: s6.nextAction.action,
    variantId: s6.context.variantId,
    paramValues: s6.context.paramValues,
    file: s6.context.file,
    reason: s6.nextAction.reason,
    deadRun: { runId: deadRun.runId, pid: deadRun.pid, status: deadRun.status },
    pidAlive: alive,
  });

  // 7. Fresh agent applies v2 with carbonize markers; complete refused
  const { variantId, paramValues } = s6.context as { variantId: string; paramValues: { hue: number; density: string } };
  n.begin(
    `The fresh agent applies ${variantId}; completing too early is refused`,
    `Using only what the journal and the file say, the agent keeps ${variantId} with its params inside carbonize markers, and records accepted. Completing now is refused: the markers are still in the source.`,
  );
  const before = s.file();
  const block = new RegExp(`^( *)<div data-${M.variant}"${variantId}"[^\\n]*\\n([\\s\\S]*?)^\\1</div>\\n`, "m").exec(before);
  check(block, `${FILE} should still hold variant ${variantId}`, variantIds(before));
  const body = (block[2] as string)
    .split("\n")
    .filter(Boolean)
    .map((l) => `  ${l.slice((block[1] as string).length + 2)}`)
    .map((l) =>
      l.replace(/--hue: \d+/, `--hue: ${paramValues.hue}`).replace(/data-density="[^"]*"/, `data-density="${paramValues.density}"`),
    );
  const start = before.split("\n").findIndex((l) => l.includes(M.variantsStart));
  const end = before.split("\n").findIndex((l) => l.includes(M.variantsEnd));
  const lines = before.split("\n");
  s.writeFile(
    [
      ...lines.slice(0, start),
      `  <!-- ${M.carbonize} variant="${variantId}" -->`,
      ...body,
      `  <!-- ${CARBONIZE_END} -->`,
      ...lines.slice(end + 1),
    ].join("\n"),
  );
  n.note([
    `rewrote ${FILE}: only ${variantId}, with --hue: ${paramValues.hue} and data-density="${paramValues.density}",`,
    `between ${M.carbonize} and ${CARBONIZE_END} comments`,
  ]);
  s.say(["event", SESSION, "accepted", "--actor", "agent", "--data", JSON.stringify({ carbonize: true })], appended);
  const s7 = s.say(["status"], (c) => nextOf(c.json.sessions[0])).json.sessions[0];
  check(s7?.nextAction?.action === "run_carbonize_cleanup", "after accepted, status should say run_carbonize_cleanup", s7?.nextAction);
  const refused = s.say(
    ["complete", SESSION],
    (c) => [`exit ${c.code}: ${c.json?.error?.code}`, wrapWords(c.json?.error?.message ?? "", "", WIDTH - 7).join("\n")],
    3,
  );
  const err = refused.json?.error;
  check(err?.code === "source_dirty", "complete should be refused with source_dirty", err);
  const finding = (err.findings as Json[] | undefined)?.[0];
  check(finding?.file === FILE && finding?.marker === "carbonize", `the finding should be a carbonize marker in ${FILE}`, finding);
  n.end({
    crashedRun: deadRun.runId,
    phase: s7.phase,
    nextAction: s7.nextAction.action,
    complete: { exitCode: refused.code, error: err.code, finding: `${finding.file}:${finding.line}`, marker: finding.marker },
  });

  // 8. Remove markers, complete
  n.begin(
    "The agent makes it permanent; the session completes",
    "The agent removes the carbonize markers, so v2 is plain source. Now completion is accepted, and status has nothing left to do.",
  );
  s.writeFile(
    s
      .file()
      .split("\n")
      .filter((l) => !l.includes(M.carbonize) && !l.includes(CARBONIZE_END))
      .join("\n"),
  );
  const finalText = s.file();
  check(!/baton-/.test(finalText), `${FILE} should hold no baton markers`, finalText);
  n.note([`${FILE} now holds ${variantId} as plain source, no markers`]);
  const done = s.say(["complete", SESSION], (c) => [`phase ${c.json.phase}`]);
  check(done.json.phase === "complete", "complete should move the session to complete", done.json);
  const fin = s.say(["status"], (c) => [`next action ${c.json.nextAction?.action} (${c.json.sessions.length} active sessions)`]).json;
  check(fin.nextAction?.action === "no_active_session", "after completion, status should say no_active_session", fin);
  const md: string = s.say(["state", SESSION], (c) => [`STATE.md, ${c.json.markdown.split("\n").length} lines:`]).json.markdown;
  // The title, the header line, the next action and the runs table's rows.
  const excerpt = md.split("\n").filter((l) => /^(# |Session |\*\*|\| run-)/.test(l));
  n.note(excerpt.map((l) => `  | ${l}`));
  const exported = s.run(["export", SESSION]);
  const events = exported.stdout.split("\n").filter((l) => l.trim()).length;
  n.command(["export", SESSION], exported.command, [`${events} journal events`]);
  n.end({ phase: done.json.phase, nextAction: fin.nextAction.action, events, stateExcerpt: excerpt });

  return {
    ok: true,
    sessionId: SESSION,
    events,
    variantId,
    paramValues,
    killedPid: pid,
    signal: exit.signal,
    workspace: s.root,
    kept: keep,
  };
}

export async function demo(ctx: Ctx, opts: DemoOptions = {}): Promise<void> {
  const json = ctx.json || opts.json === true;
  const quiet = opts.quiet === true;
  const keep = opts.keep === true;
  const started = Date.now();
  const root = mkdtempSync(join(tmpdir(), "baton-demo-"));
  const narrator = new Narrator(json ? (quiet ? "quiet" : "json") : quiet ? "quiet" : "prose");
  const story = new Story(root, narrator);
  const agent: { child?: ChildProcess } = {};
  let summary: Record<string, unknown>;
  try {
    summary = await tell(story, keep, agent);
  } catch (err) {
    const step = narrator.step;
    const detail = err instanceof Error ? err.message : String(err);
    const failure = new BatonError("internal", `demo failed at step ${step}: ${detail}\nworkspace kept for inspection: ${root}`, {
      step,
      workspace: root,
    });
    if (!json) throw failure;
    // JSON Lines to the end: the failure is one line too.
    process.stdout.write(`${JSON.stringify({ error: failure.toJSON() })}\n`);
    process.exitCode = EXIT_CODES.internal;
    return;
  } finally {
    const c = agent.child;
    if (c && c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  }
  if (!keep) rmSync(root, { recursive: true, force: true });
  summary.elapsedMs = Date.now() - started;
  if (json) {
    process.stdout.write(`${JSON.stringify({ summary })}\n`);
    return;
  }
  const p = summary.paramValues;
  const lines = [
    "",
    "Summary",
    ...wrapWords(
      `What survived: the browser's generate and accept, sent while no agent was listening; the accepted variant ${summary.variantId} with params ${JSON.stringify(p)}; and the run of the agent killed with ${summary.signal} (pid ${summary.killedPid}), now recorded as crashed.`,
      "  ",
    ),
    ...wrapWords(
      `Recovery: a fresh process read run_accept_cleanup from baton status, finished the half-done edit, and completed the session after the source_dirty refusal.`,
      "  ",
    ),
    `  Journal: ${summary.events} events for session ${SESSION}, in embedded SQLite (.baton/baton.db).`,
    keep ? `  Workspace kept: ${root}` : `  Workspace removed: ${root} (pass --keep to keep it).`,
    `  Took ${(Number(summary.elapsedMs) / 1000).toFixed(1)} s.`,
  ];
  process.stdout.write(`${lines.map(clip).join("\n")}\n`);
}

/**
 * Chapter 1, Recovery: a live-variant session survives an agent killed mid-work.
 *
 * The browser's events land while no agent listens; an agent starts applying the accepted
 * variant and is killed with a real SIGKILL, half-way through its edit; a fresh process learns
 * from `baton status` alone what to do, finishes the edit, and completes the session after the
 * source_dirty refusal.
 */
import { LIVE_VARIANT_MARKERS as M } from "../core/flows/live-variant.js";
import { processAlive } from "../platform/process-facts.js";
import { appended, type Chapter, type CliCall, check, type Json, nextOf, type Story, sameJson, WIDTH, wrapWords } from "./shared.js";

const SESSION = "hero";
const FILE = "src/Hero.html";
const ACCEPTED = { variantId: "v2", paramValues: { hue: 210, density: "airy" } } as const;
const CARBONIZE_END = "baton-carbonize-end";

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
async function tell(s: Story): Promise<Record<string, unknown>> {
  const n = s.n;
  const inv = s.invocation;

  // 1. Workspace
  n.begin(
    "A workspace with one source file",
    "A temporary directory gets a journal (baton init: embedded SQLite, no server) and a small HTML hero section, the piece of UI the user will redesign.",
  );
  const init = s.say(["init"], (c) => [`journal at ${c.json.database}`]);
  s.write(FILE, HERO_ORIGINAL);
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
  s.write(FILE, wrappedHero([]));
  n.note([`wrapped the hero in ${FILE}: markers at lines ${lineOf(s.read(FILE), M.variantsStart)}–${lineOf(s.read(FILE), M.variantsEnd)}`]);
  s.say(["event", SESSION, "source_wrapped", "--actor", "agent", "--data", JSON.stringify({ file: FILE })], appended);
  s.write(FILE, wrappedHero(["v1", "v2", "v3"]));
  n.note([`wrote variants ${variantIds(s.read(FILE)).join(", ")} into the wrapper`]);
  s.say(["event", SESSION, "variants_written", "--actor", "agent", "--data", JSON.stringify({ count: 3, expected: 3 })], appended);
  const s3 = s.say(["status"], (c) => [...nextOf(c.json.sessions[0]), `markers found in ${FILE}: ${c.json.sessions[0].markers.length}`])
    .json.sessions[0];
  check(s3?.phase === "variants_written", "after variants_written, the phase should be variants_written", s3?.phase);
  n.end({
    file: FILE,
    variants: variantIds(s.read(FILE)),
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
  const { child, command } = s.spawnScript(DOOMED_AGENT, { ...inv, root: s.root, session: SESSION }, "the agent");
  n.ran(command);
  const removed = await child.waitFor((m) => m.event === "removed", 'report "removed"');
  const seen = child.lines.slice(0, child.lines.indexOf(removed) + 1);
  const started = seen.find((m) => m.event === "run_started");
  const applying = seen.find((m) => m.event === "applying");
  n.note([`$ node -e <agent script>   # pid ${child.pid}`, ...seen.map((m) => `  agent: ${agentLine(m)}`)]);
  check(applying?.action === "run_accept_cleanup", "the agent should have read run_accept_cleanup", applying);
  const afterPartial = variantIds(s.read(FILE));
  const pid = child.pid;
  child.proc.kill("SIGKILL");
  const exit = await child.exited();
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
  const alive = processAlive(pid);
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
  const before = s.read(FILE);
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
  s.write(
    FILE,
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
  s.write(
    FILE,
    s
      .read(FILE)
      .split("\n")
      .filter((l) => !l.includes(M.carbonize) && !l.includes(CARBONIZE_END))
      .join("\n"),
  );
  const finalText = s.read(FILE);
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
    sessionId: SESSION,
    events,
    variantId,
    paramValues,
    killedPid: pid,
    signal: exit.signal,
  };
}

export const liveVariantChapter: Chapter = {
  number: 1,
  name: "Recovery",
  tagline: "A live-variant session survives an agent killed mid-work.",
  tell,
  summary: (r) => [
    `What survived: the browser's generate and accept, sent while no agent was listening; the accepted variant ${r.variantId} with params ${JSON.stringify(r.paramValues)}; and the run of the agent killed with ${r.signal} (pid ${r.killedPid}), now recorded as crashed.`,
    "Recovery: a fresh process read run_accept_cleanup from baton status, finished the half-done edit, and completed the session after the source_dirty refusal.",
    `Journal: ${r.events} events for session ${SESSION}, in embedded SQLite (.baton/baton.db).`,
  ],
};

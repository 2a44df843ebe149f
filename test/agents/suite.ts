/**
 * The checks every real agent goes through (one describe per agent; the runs are shared so the
 * suite stays within a few minutes). A driver (drivers.ts) says how to set the agent up, run it
 * headless and resume it; this file plays the same story for each:
 *
 * 1. a turn that writes, edits and runs shell commands (each must be checkpointed first), with
 *    the session's next action and a pinned lesson in the model's request; then a resumed turn
 *    in which the agent compacts its context (so every event Baton installs fires);
 * 2. a resumed turn "undo that", then "/rollback 2" (or the driver's words for it), then
 *    `baton rollback` twice: back to the
 *    original tree;
 * 3. a turn that lists the files twice (the same result each time, though Gemini CLI reports a
 *    new process group each run), adds one and lists them again (a changed result), then runs
 *    identical failing shell commands: recorded as failures, recognised as the same failure,
 *    the session paused, and Baton's reason given to the model as the tool's result;
 * 4. no warning from the agent about Baton's configuration, and a clean `baton doctor`.
 *
 * The hook payloads the agent sent are written to test/fixtures/agents/<agent>/ when
 * BATON_AGENT_FIXTURES=write (and copied to $BATON_AGENT_CAPTURES_OUT/<agent>/ when set).
 */
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { argsHash } from "../../src/core/hooks/keys.js";
import { laneFromEnv } from "../../src/core/lanes.js";
import { readOpencodePlugin } from "../../src/hooks/opencode-plugin.js";
import { type Driver, pluginSource } from "./drivers.js";
import { type AgentRun, type Capture, httpHookServer, KEEP, Project } from "./harness.js";
import { type AgentName, agentCli, REPO, VERSIONS } from "./install.js";
import { MockModel, repeat, type Step, toolResults } from "./mock-model.js";

export const FILES: Record<string, string> = { "a.txt": "one\n", "src/b.txt": "bee\n", "README.md": "# demo\n" };
const PINNED = "Always run the parser tests before you commit.";
const FAIL_CMD = "cat does-not-exist.txt";
const LIST_CMD = "ls";

/** The first turn: every kind of tool Baton checkpoints, and a read it does not. */
const WORK: Step[] = [
  // First: an agent whose only way to read is its shell (Codex) checkpoints it like any shell
  // command, and a checkpoint of the untouched tree does not move the rollback story below.
  { op: "read", path: "a.txt" },
  { op: "write", path: "new.txt", content: "fresh\n" },
  { op: "edit", path: "a.txt", old: "one", new: "uno" },
  { op: "shell", command: "echo made-by-shell > c.txt" },
  { op: "edit", path: "src/b.txt", old: "bee", new: "bumblebee" },
  { op: "shell", command: "echo second > d.txt" },
  { op: "text", text: "Made the changes." },
];

interface Tree {
  [rel: string]: string | undefined;
}

function tree(p: Project): Tree {
  const out: Tree = {};
  for (const rel of ["a.txt", "src/b.txt", "README.md", "new.txt", "c.txt", "d.txt"]) out[rel] = p.read(rel);
  return out;
}

const ORIGINAL: Tree = { ...FILES, "new.txt": undefined, "c.txt": undefined, "d.txt": undefined };
const AFTER_WORK: Tree = {
  "a.txt": "uno\n",
  "src/b.txt": "bumblebee\n",
  "README.md": "# demo\n",
  "new.txt": "fresh\n",
  "c.txt": "made-by-shell\n",
  "d.txt": "second\n",
};

/** Placeholders for what differs between runs, so fixtures stay stable. */
function scrub(value: unknown, p: Project): unknown {
  const text = JSON.stringify(value)
    // Claude Code names a project's transcript directory after its path, every `/` and `.` a `-`.
    .split(p.root.replace(/[^A-Za-z0-9]/g, "-"))
    .join("-work-project")
    .split(p.root)
    .join("/work/project")
    .split(p.home)
    .join("/home/user")
    .split(p.base)
    .join("/tmp/e2e");
  return JSON.parse(text);
}

/** The script for an agent that edits only what it has read in the session: a read before each edit. */
function readsFirst(steps: Step[]): Step[] {
  return steps.flatMap((s) => (s.op === "edit" ? [{ op: "read", path: s.path } as Step, s] : [s]));
}

/**
 * `route: "plugin"`: Baton installed as the agent's own plugin or extension (the driver's
 * `plugin`, with the agent's own commands) instead of `baton hooks install`; the same story,
 * then the MCP server's tools in the model's request, `baton hooks status` seeing the plugin,
 * and the agent's own uninstall.
 */
/**
 * `route: "http"` (Claude Code): `baton hooks install claude --http`, the per-call hooks POSTed to
 * the workspace's server (harness.ts httpHookServer); the same story, and no per-call hook ran
 * as a process.
 */
export function agentSuite(d: Driver, o: { route?: "settings" | "plugin" | "http" } = {}): void {
  const pin = VERSIONS[d.agent];
  const work = d.readsBeforeEdit ? readsFirst(WORK) : WORK;
  const rollback2 = d.rollbackTwo ?? "/rollback 2";
  const plugin = o.route === "plugin" ? d.plugin : undefined;
  if (o.route === "plugin" && !plugin) throw new Error(`${d.agent}: no plugin route`);
  const http = o.route === "http";
  const label = plugin ? " (Baton as its plugin)" : http ? " (per-call hooks over HTTP)" : "";
  describe(`${pin.package}@${pin.version} through Baton's hooks${label}`, () => {
    let server: { stop(): Promise<void> } | undefined;
    const mock = new MockModel();
    let p: Project;
    let cli: string;
    let url: string;
    const runs: Record<string, AgentRun> = {};
    const marks: Record<string, number> = {};
    let checkpointsAfterWork: any[] = [];
    let sessionId: string | undefined;
    let batonSession = "";
    let hooksFile = "";
    let nextAction: { action: string; reason: string } = { action: "", reason: "" };
    const trees: Record<string, Tree> = {};
    /** Turns the agent ended itself with an error (its own loop guard). */
    const halted = new Set<string>();

    function runningInLane(): boolean {
      const runs: any[] = p.baton(["--json", "session", "show", batonSession]).json().snapshot.facets.runs;
      return runs.some((r) => r.lane === `${d.agent}:${sessionId}` && r.status === "running");
    }

    async function turn(name: string, prompt: string, steps: Step[], resume?: string): Promise<AgentRun> {
      mock.play(steps, p.root);
      marks[name] = mock.requests.length;
      const r = await p.run(cli, d.args(prompt, resume), d.env(url));
      runs[name] = r;
      mkdirSync(join(p.base, "runs"), { recursive: true });
      writeFileSync(join(p.base, "runs", `${name}.stdout`), r.stdout);
      writeFileSync(join(p.base, "runs", `${name}.stderr`), r.stderr);
      // An agent that halts a run of identical calls itself may end the spiral turn with an error,
      // once Baton has paused it (the checks below say whether it had).
      if (r.code !== 0 && name === "spiral" && d.loopGuard?.test(r.stdout) === true) halted.add(name);
      else if (r.code !== 0)
        throw new Error(`${d.agent} turn "${name}" exited ${r.code}\nstdout: ${r.stdout.slice(-3000)}\nstderr: ${r.stderr.slice(-3000)}`);
      return r;
    }

    beforeAll(async () => {
      cli = agentCli(d.agent);
      url = await mock.start();
      p = new Project(d.agent, FILES);
      const s = p.baton(["--json", "session", "start", "--flow", "task", "--title", "Parser rework"]);
      expect(s.code, s.stderr).toBe(0);
      batonSession = s.json().sessionId;
      expect(p.baton(["position", "set", "--task", "wire the parser to the new lexer"]).code).toBe(0);
      const lesson = p.baton(["lessons", "add", PINNED, "--workspace", "--pin"]);
      expect(lesson.code, lesson.stderr).toBe(0);
      expect(p.baton(["event", "start"]).code).toBe(0);
      nextAction = p.baton(["--json", "status"]).json().sessions[0].nextAction;
      d.configure(p, url);
      if (plugin) {
        // The plugin's launcher runs the `baton` on PATH (the harness's, which keeps each payload).
        hooksFile = await plugin.install(p, cli, pluginSource(p));
      } else {
        // Baton from PATH (the harness's `baton`, which keeps each hook's payload), in the file
        // a project install writes for the agent (Claude Code: its local settings file).
        // The local settings hold the server's token: install --http refuses a file git would commit.
        if (http) p.excludeFromGit(".claude/settings.local.json");
        const hooks = p.baton(["--json", "hooks", "install", d.agent, "--command", "baton", ...(http ? ["--http"] : [])]);
        expect(hooks.code, hooks.stderr).toBe(0);
        hooksFile = hooks.json().file;
        if (http) server = await httpHookServer(p);
        await d.expectHooksTrusted?.(p, cli);
      }

      await turn("work", "Make the planned changes.", work);
      sessionId = d.sessionId(runs.work as AgentRun);
      trees.work = tree(p);
      checkpointsAfterWork = p.baton(["--json", "checkpoints"]).json().checkpoints;
      mock.inputTokens = d.compact.inputTokens ?? 10;
      await turn("compact", d.compact.prompt, d.compact.steps ?? [{ op: "text", text: "Summary: made the planned changes." }], sessionId);
      mock.inputTokens = 10;
      await turn("undo", "undo that", [{ op: "text", text: "Noted." }], sessionId);
      trees.undo = tree(p);
      await turn("rollback2", rollback2, [{ op: "text", text: "Noted." }], sessionId);
      trees.rollback2 = tree(p);
      p.baton(["rollback"]);
      trees.cli1 = tree(p);
      p.baton(["rollback"]);
      trees.cli2 = tree(p);
      await turn(
        "spiral",
        "Show me the missing file.",
        [
          // The variable the agent's shell tool names its session by (core/lanes.ts laneFromEnv).
          ...(d.shellSessionEnv ? [{ op: "shell", command: `printenv ${d.shellSessionEnv} > agent-session.txt` } as Step] : []),
          { op: "shell", command: LIST_CMD },
          { op: "shell", command: LIST_CMD },
          { op: "shell", command: "echo more > e.txt" },
          { op: "shell", command: LIST_CMD },
          ...repeat(6, { op: "shell", command: FAIL_CMD }),
          { op: "text", text: "I am stuck." },
        ],
        sessionId,
      );
      // A turn the agent halted itself ends with a hook it fires after exiting (Qwen Code's
      // StopFailure): wait for it to end the turn's run.
      for (let i = 0; halted.has("spiral") && i < 50 && runningInLane(); i++) await new Promise((r) => setTimeout(r, 200));
    }, 600_000);

    afterAll(async () => {
      await mock.stop();
      await server?.stop();
      if (p) {
        if (!plugin) saveFixtures(d.agent, p, rollback2);
        // For a look at a run: the project, its captures, the agent's output and the model's requests.
        if (KEEP) {
          writeFileSync(join(p.base, "requests.jsonl"), mock.requests.map((r) => JSON.stringify(r)).join("\n"));
          cpSync(p.base, join(KEEP, d.agent), { recursive: true });
        }
        p.cleanup();
      }
    });

    test.runIf(http)("the per-call hooks went over HTTP, none through a process", () => {
      const perCall = p.captured().filter((c) => /^(?:PreToolUse|PostToolUse|PostToolUseFailure)$/.test(c.event));
      expect(perCall.length).toBeGreaterThan(10);
      expect(perCall.filter((c) => !c.file.endsWith(".http.json")).map((c) => c.file)).toEqual([]);
      expect(p.captured().filter((c) => c.event === "SessionStart" && c.file.endsWith(".http.json"))).toEqual([]);
    });

    test("the turn's writes, edits and shell commands all happened", () => {
      expect(trees.work).toEqual(AFTER_WORK);
      expect(sessionId, "the agent's JSON output names its session").toBeTruthy();
    });

    test("every event Baton installs fires", () => {
      const installed = installedEvents(hooksFile).filter((e) => !d.headlessNeverFires?.[e] && !d.unscripted?.[e]);
      const fired = new Set(p.captured().map((c) => c.event));
      const missing = installed.filter((e) => !fired.has(e));
      expect(missing, `installed: ${installed.join(", ")}; fired: ${[...fired].join(", ")}`).toEqual([]);
    });

    test("every hook was recorded: agent session, checkpoints, ledger, runs; nothing failed in Baton", () => {
      const show = p.baton(["--json", "session", "show", batonSession]).json().snapshot;
      // The agent session is a lane of the session (core/lanes.ts), and its run is the lane's.
      const lane = show.facets.lanes?.[`${d.agent}:${sessionId}`];
      expect(lane, JSON.stringify(show.facets.lanes)).toBeDefined();
      expect(show.facets.runs.filter((r: any) => r.lane === lane.id).length).toBeGreaterThan(0);
      const ledger = p.baton(["--json", "ledger", "list", "--session", batonSession]).json();
      const nodes: any[] = ledger.nodes;
      // Every tool call of the first turn is a ledger node (the reads too).
      expect(nodes.length).toBeGreaterThanOrEqual(work.length - 1);
      const events = p
        .baton(["export", batonSession])
        .stdout.split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l));
      const types = events.map((e) => e.type);
      expect(types).toContain("run:started");
      expect(types).toContain("run:ended");
      const log = p.read(".baton/logs/hooks.log");
      expect(log ?? "", "hooks.log records Baton's own failures").toBe("");
    });

    test("the one real compaction is noted once in the journal (none falsely), STATE.md written", () => {
      const notes = p
        .baton(["export", batonSession])
        .stdout.split("\n")
        .filter((l) => l.includes("compacted its context"));
      // Gemini CLI fires PreCompress "auto" before every model request, before it decides whether
      // to compress, and nothing after: a real automatic compression cannot be told from the
      // check, so Baton notes none (it refreshes STATE.md) rather than one per request
      // (docs/integrations.md). Claude Code and Codex say so with PostCompact.
      expect(notes.length, notes.join("\n")).toBe(d.agent === "gemini" ? 0 : 1);
      expect(p.read(`.baton/sessions/${batonSession}/STATE.md`)).toContain(batonSession);
      expect(
        p.captured().some((c) => (c.event === "SessionStart" || c.event === "session.created") && c.payload.source === "compact") ||
          d.agent === "gemini" ||
          d.noEventAfterCompact,
      ).toBe(true);
    });

    test("a checkpoint precedes each write, edit and shell command", () => {
      const tools = checkpointsAfterWork.map((c) => `${c.kind}:${c.toolName}`);
      const expected = work
        .filter((s) => s.op !== "text" && (s.op !== "read" || d.readIsShell))
        .map((s) => (s.op === "shell" || s.op === "read" ? "tree" : "targeted"));
      expect(tools.map((t) => t.split(":")[0])).toEqual(expected);
      // Each before-hook ran before its tool: the checkpoint holds the file as it was.
      const capturesPre = p.captured().filter((c) => /PreToolUse|BeforeTool|tool\.execute\.before/i.test(c.event));
      expect(capturesPre.length).toBeGreaterThanOrEqual(expected.length);
    });

    test('"undo that" in a resumed turn restores the last step', () => {
      expect(trees.undo).toEqual({ ...AFTER_WORK, "d.txt": undefined });
      expect(JSON.stringify(mock.requests.slice(marks.undo, marks.rollback2).map((r) => r.body))).toMatch(/restored|rolled back/i);
    });

    test(`"${rollback2}" rolls back two more steps`, () => {
      expect(trees.rollback2).toEqual({ ...AFTER_WORK, "d.txt": undefined, "src/b.txt": "bee\n", "c.txt": undefined });
    });

    test("`baton rollback` twice then walks back to the original tree", () => {
      expect(trees.cli1).toEqual({ ...ORIGINAL, "new.txt": "fresh\n" });
      expect(trees.cli2).toEqual(ORIGINAL);
    });

    test("the session-start context (next action, pinned lesson) reaches the model", () => {
      const first = JSON.stringify(mock.mains(marks.work)[0]?.body ?? {});
      expect(first).toContain("Baton: where this work stands");
      expect(first).toContain(`## Next action\\n${nextAction.action}: ${nextAction.reason}`);
      expect(first).toContain(PINNED);
    });

    test("identical failing shell commands are recorded as failures", () => {
      const failing = p
        .captured()
        .filter((c) => /PostToolUse|AfterTool|tool\.execute\.after/i.test(c.event) && JSON.stringify(c.payload).includes(FAIL_CMD));
      expect(failing.length, "some failing commands ran before the pause").toBeGreaterThanOrEqual(2);
      const ledger = p.baton(["--json", "ledger", "list", "--session", batonSession]).json();
      const nodes: any[] = ledger.nodes.filter((n: any) => JSON.stringify(n).includes(FAIL_CMD));
      expect(nodes.length).toBe(failing.length);
      expect(nodes.filter((n) => n.status !== "error" && n.status !== "no_progress").map((n) => n.status)).toEqual([]);
    });

    test("a repeated command is judged by its result: the same listing is the same, a changed one is not, the failures are one failure", () => {
      const turns = p
        .baton(["export", batonSession])
        .stdout.split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        .filter((e) => e.type === "turn:recorded" && e.data.lane === `${d.agent}:${sessionId}`);
      const after = p.captured().filter((c) => /PostToolUse|AfterTool|tool\.execute\.after/i.test(c.event));
      // The turns of one command: its calls' argument hashes, as the hooks computed them.
      const of = (command: string) => {
        const hashes = new Set(after.filter((c) => toolInput(c.payload)?.command === command).map((c) => argsHash(toolInput(c.payload))));
        return turns.filter((t) => hashes.has(t.data.argsHash)).map((t) => t.data);
      };
      const lists = of(LIST_CMD);
      expect(lists.map((t) => t.status)).toEqual(["success", "success", "success"]);
      const [a, b, c] = lists.map((t) => t.observationHash);
      expect(a, JSON.stringify(lists)).toBeDefined();
      // What the agent returned for each listing, to tell which part changed when they differ.
      const returned = JSON.stringify(after.filter((c) => toolInput(c.payload)?.command === LIST_CMD).map((c) => c.payload.tool_response));
      expect(b, `the same listing twice is the same result: ${returned}`).toBe(a);
      expect(c, "the listing with a new file is another result").not.toBe(a);
      const failures = of(FAIL_CMD);
      expect(failures.length).toBeGreaterThanOrEqual(3);
      expect(failures.map((t) => t.failurePlace).every((x) => typeof x === "string")).toBe(true);
      expect(new Set(failures.map((t) => t.failurePlace)).size, JSON.stringify(failures)).toBe(1);
    });

    test("they pause the agent session's lane", () => {
      const snap = p.baton(["--json", "session", "show", batonSession]).json().snapshot;
      const lane = snap.facets.lanes?.[`${d.agent}:${sessionId}`];
      expect(lane?.spiral?.paused, JSON.stringify(snap.facets.lanes)).toBe(true);
    });

    test("the model receives Baton's reason as the refused call's result", () => {
      const results = mock.requests.slice(marks.spiral).flatMap((r) => toolResults(r));
      expect(
        results.some((t) => t.includes(`Baton paused session ${batonSession}`)),
        results.join("\n---\n").slice(-3000),
      ).toBe(true);
    });

    test.runIf(d.shellSessionEnv)("the agent's shell names its session: a `baton` command it runs works in its lane", () => {
      const named = p.read("agent-session.txt")?.trim();
      expect(named).toBe(sessionId);
      expect(laneFromEnv({ [d.shellSessionEnv as string]: named })).toBe(`${d.agent}:${sessionId}`);
    });

    test("the agent prints no warning about Baton's configuration", () => {
      const bad: string[] = [];
      for (const [name, r] of Object.entries(runs)) {
        for (const line of agentWarnings(r)) {
          // Baton's own pause: "Baton paused session …", "Baton paused this agent session …: <what repeated>".
          if (/Baton paused (?:this agent )?session/.test(line) || line.includes(FAIL_CMD)) continue;
          if (d.benign?.some((re) => re.test(line))) continue;
          bad.push(`${name}: ${line.slice(0, 300)}`);
        }
      }
      expect(bad).toEqual([]);
    });

    test("baton doctor is clean", async () => {
      // A running server is a finding of its own (info): the HTTP route's is stopped first.
      await server?.stop();
      server = undefined;
      // HTTP hooks are answered only by a server the hooks start (`auto`, as a user runs them); the
      // harness's `use` (the test starts the server) is itself a finding for them.
      const doc = p.baton(["--json", "doctor"], http ? { BATON_HOOK_SERVER: "auto" } : {}).json();
      const bad = doc.checks.filter((c: any) => c.status !== "ok" && c.status !== "skipped");
      expect(bad).toEqual([]);
      expect(doc.ok).toBe(true);
    });

    const mcpTool = plugin && typeof plugin.mcpTool === "function" ? plugin.mcpTool : undefined;
    test.runIf(mcpTool)("the plugin's MCP server lists Baton's tools to the model", () => {
      // The agent starts the server beside the session, and a slow start (a loaded machine) may
      // miss the first request: some request of the session lists them.
      const requests = mock.mains().map((r) => JSON.stringify(r.body));
      for (const tool of ["list_checkpoints", "lessons_inject", "ledger_recent"])
        expect(
          requests.some((r) => r.includes(mcpTool?.(tool) as string)),
          tool,
        ).toBe(true);
    });

    test.runIf(plugin)("`baton hooks status` sees the plugin with every hook, and nothing installed twice", () => {
      const list: any[] = p.baton(["--json", "hooks", "status", d.agent]).json().hooks;
      const routes = list.filter((s) => s.route);
      expect(routes, JSON.stringify(list)).toHaveLength(1);
      expect(routes[0]).toMatchObject({ file: hooksFile, enabled: true, missing: [], willRun: true });
      expect(list.filter((s) => !s.route && s.installed.length > 0)).toEqual([]);
      expect(list.some((s) => s.twice)).toBe(false);
    });

    test.runIf(plugin)("the agent's own uninstall removes it: status shows Baton's hooks nowhere", () => {
      plugin?.uninstall(p, cli);
      const list: any[] = p.baton(["--json", "hooks", "status", d.agent]).json().hooks;
      expect(list.filter((s) => s.installed.length > 0)).toEqual([]);
    });

    // Last: it takes the hooks out. An agent that rewrites a settings file it loads (Qwen Code
    // stamps "$version" into one that lacks it) would leave Baton's file changed after its runs.
    test.runIf(d.checkUninstall && !plugin)("after the agent's runs, uninstall removes the settings file install created", () => {
      const r = p.baton(["--json", "hooks", "uninstall", d.agent]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.json()).toMatchObject({ file: hooksFile, changed: true, deleted: true });
      expect(p.read(hooksFile.slice(p.root.length + 1))).toBeUndefined();
    });
  });
}

/** Lines of the agent's stderr, and JSON events of a warning or error kind, that speak of hooks or Baton. */
function agentWarnings(r: AgentRun): string[] {
  const lines = r.stderr.split("\n");
  for (const e of r.events) {
    const kind = `${e.type ?? ""} ${e.subtype ?? ""} ${e.level ?? ""} ${e.severity ?? ""} ${e.item?.type ?? ""}`;
    // Claude Code reports each hook's exit code, outcome and stderr in its stream.
    const hookFailed =
      /hook/i.test(kind) && ((e.exit_code ?? 0) !== 0 || /error|fail|cancel/i.test(String(e.outcome ?? "")) || (e.stderr ?? "") !== "");
    if (hookFailed) lines.push(`hook failed: ${JSON.stringify(e)}`);
    else if (/warn|error/i.test(kind)) lines.push(JSON.stringify(e));
  }
  return lines.filter((l) => /hook|baton|settings/i.test(l) && /warn|error|invalid|fail|untrusted|skipp|ignor|not trusted/i.test(l));
}

/** A payload's tool arguments: `tool_input`, Copilot CLI's `toolArgs`, or OpenCode's `args`. */
function toolInput(payload: any): any {
  return payload?.tool_input ?? payload?.toolArgs ?? payload?.args;
}

function installedEvents(file: string): string[] {
  const text = readFileSync(file, "utf8");
  // OpenCode's plugin says what it sends on its second line.
  if (file.endsWith(".js")) return readOpencodePlugin(text)?.events ?? [];
  return Object.keys(JSON.parse(text).hooks ?? {});
}

/**
 * The agent's real payloads: the first of each event and variant (`<Event>.json`, then
 * `<Event>.<tool>.json`, `<Event>.<tool>.failure.json`, `<Event>.undo.json`,
 * `<Event>.rollback.json`, `<Event>.<source>.json`).
 */
function saveFixtures(agent: AgentName, p: Project, rollback2: string): void {
  const picked = new Map<string, Capture>();
  for (const c of p.captured()) {
    const q = c.payload ?? {};
    const variants = [c.event];
    const toolName = q.tool_name ?? q.toolName ?? (agent === "opencode" ? q.tool : undefined);
    if (typeof toolName === "string") {
      const failed = JSON.stringify(q).includes(FAIL_CMD) && /Post|After|tool\.execute\.after/i.test(c.event);
      variants.push(`${c.event}.${toolName}${failed ? ".failure" : ""}`);
    }
    // The user's words end the prompt (Gemini CLI puts Baton's own context before them).
    if (typeof q.prompt === "string" && /(^|\n)undo that$/.test(q.prompt.trim())) variants.push(`${c.event}.undo`);
    if (typeof q.prompt === "string" && (q.prompt.trim() === rollback2 || q.prompt.trim().endsWith(`\n${rollback2}`)))
      variants.push(`${c.event}.rollback`);
    if (typeof q.source === "string") variants.push(`${c.event}.${q.source}`);
    for (const v of variants) if (!picked.has(v)) picked.set(v, c);
  }
  const targets: string[] = [];
  if (process.env.BATON_AGENT_FIXTURES === "write") targets.push(join(REPO, "test", "fixtures", "agents", agent));
  if (process.env.BATON_AGENT_CAPTURES_OUT) targets.push(join(process.env.BATON_AGENT_CAPTURES_OUT, agent));
  const transcript = agent === "codex" ? codexTranscript(p, [...picked.values()]) : undefined;
  for (const dir of targets) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    for (const [name, c] of picked) writeFileSync(join(dir, `${name}.json`), `${JSON.stringify(scrub(c.payload, p), null, 2)}\n`);
    if (transcript) writeFileSync(join(dir, "rollout.jsonl"), transcript);
  }
}

/**
 * Codex's session transcript (`transcript_path`, where a call's exit code is: its PostToolUse
 * payload carries only the output), cut to the lines about the captured calls.
 */
function codexTranscript(p: Project, picked: Capture[]): string | undefined {
  const file = picked.map((c) => c.payload.transcript_path).find((t) => typeof t === "string");
  if (!file) return undefined;
  const ids = picked.map((c) => c.payload.tool_use_id).filter((id): id is string => typeof id === "string");
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => ids.some((id) => l.includes(id)))
    .map((l) => JSON.stringify(scrub(JSON.parse(l), p)))
    .join("\n")
    .concat("\n");
}

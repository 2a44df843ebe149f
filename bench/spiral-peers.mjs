/**
 * Re-implementations of other agents' loop detectors, rule for rule, over Baton's trajectory
 * format (test/fixtures/trajectories/README.md), for bench/spiral.mjs. Each takes a trajectory
 * and returns the tool steps (1-based) at which the detector reports a loop, so the bench can
 * take the first and check the peer's own test expectations against every step.
 *
 * Only the rules that look at tool calls and their results are here: OpenHands' monologue and
 * context-window rules and Gemini CLI's content-chanting and LLM checks judge the model's own
 * text or the context window, which no trajectory (and no Baton hook) carries.
 *
 * - OpenHands `openhands/controller/stuck.py` (All-Hands-AI/OpenHands@156d0686), headless mode
 *   (its default): four identical action/observation pairs; three identical actions whose
 *   observations are all errors (or the same IPython syntax error); A-B-A-B-A-B with the same
 *   observations; three identical agent messages. A command's observation is compared by
 *   command and exit code only (its output is ignored, as `_eq_no_pid` does).
 * - OpenHands agent SDK `openhands/sdk/conversation/stuck_detector.py` (All-Hands-AI/agent-sdk@
 *   7e6774f7): the same four rules over the events after the last user message, observations
 *   compared by their whole content; without a user message it never reports.
 * - Gemini CLI `packages/core/src/services/loopDetectionService.ts` (google-gemini/gemini-cli@
 *   5411f113), `checkToolCallLoop`: a call (name + JSON of its arguments, in the order sent)
 *   repeating with a cycle of 1 to 5 calls, five times over; checked before the call runs;
 *   a new user prompt resets it.
 * - Roo Code `src/core/tools/ToolRepetitionDetector.ts` (RooCodeInc/Roo-Code@cb836567): the same
 *   call (name + parameters, keys sorted) more than `limit` (3) times in a row is refused before
 *   it runs; the count starts again after a refusal.
 */

const SHELL = /^(Bash|execute_bash|run_shell_command|execute_command|shell|exec_command|local_shell)$/;
const READ = /^(Read|read_file|read_many_files)$/;
const IPYTHON = "execute_ipython_cell";

/** JSON with object keys sorted (Roo Code's safe-stable-stringify; equality of arguments elsewhere). */
export function stableJson(v) {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(",")}]`;
  if (v && typeof v === "object")
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson(v[k])}`)
      .join(",")}}`;
  return JSON.stringify(v ?? null);
}

/** The events of a trajectory in order: user and agent messages, then each step's call and result. */
function events(traj) {
  const out = [];
  traj.steps.forEach((s, i) => {
    for (const b of s.before ?? []) out.push("user" in b ? { kind: "user", text: b.user } : { kind: "say", text: b.say });
    out.push({ kind: "call", step: i + 1, s });
  });
  return out;
}

// OpenHands

function ohAction(s) {
  if (SHELL.test(s.tool)) return { cls: "CmdRunAction", key: stableJson({ command: s.args.command }), s };
  if (s.tool === IPYTHON) return { cls: "IPythonRunCellAction", key: s.args.code, code: s.args.code, s };
  if (READ.test(s.tool)) return { cls: "FileReadAction", key: stableJson(s.args), s };
  return { cls: `Action:${s.tool}`, key: stableJson(s.args), s };
}

function ohObservation(s) {
  const content = s.out ?? "";
  if (s.err !== undefined) return { cls: "ErrorObservation", content: s.err };
  if (s.tool === IPYTHON) return { cls: "IPythonRunCellObservation", content };
  if (SHELL.test(s.tool)) return { cls: "CmdOutputObservation", command: s.args.command, exit: s.exit ?? 0, content };
  if (READ.test(s.tool)) return { cls: "FileReadObservation", path: s.args.file_path ?? s.args.path, content };
  return { cls: `Observation:${s.tool}`, content };
}

/** `_eq_no_pid`: an edit_file_by_replace cell by its first three lines, a command's output by command and exit code. */
function ohEq(a, b) {
  if (a.cls !== b.cls) return false;
  if (a.cls === "IPythonRunCellAction" && a.code.includes("edit_file_by_replace(") && b.code.includes("edit_file_by_replace(")) {
    const la = a.code.split("\n");
    return la.length > 2 && la.slice(0, 3).join("\n") === b.code.split("\n").slice(0, 3).join("\n");
  }
  if (a.cls === "CmdOutputObservation") return a.command === b.command && a.exit === b.exit;
  if (a.cls === "message") return a.text === b.text;
  return a.key !== undefined ? a.key === b.key : a.content === b.content && a.path === b.path;
}

const SYNTAX_ERRORS = [
  "SyntaxError: unterminated string literal (detected at line",
  "SyntaxError: invalid syntax. Perhaps you forgot a comma?",
  "SyntaxError: incomplete input",
];
const lines = (c) => c.trim().split("\n");

function consistentInvalidSyntax(obs, msg) {
  const first = [];
  const valid = [];
  for (const o of obs) {
    const l = lines(o.content);
    if (l.length < 6) return false;
    const l1 = l[0].trim();
    if (!l1.startsWith("Cell In[1], line")) return false;
    first.push(l1);
    if (
      l.at(-1).startsWith("[Jupyter Python interpreter:") &&
      l.at(-2).startsWith("[Jupyter current working directory:") &&
      l.at(-3).includes(msg)
    )
      valid.push(o);
  }
  return new Set(first).size === 1 && valid.length === 3 && new Set(valid.map((o) => lines(o.content).slice(0, -2).at(-1))).size === 1;
}

function consistentLineError(obs, msg) {
  const errs = [];
  for (const o of obs) {
    const l = lines(o.content);
    if (l.length < 3) return false;
    const last = l.slice(-3);
    if (!(last[1].startsWith("[Jupyter current working directory:") && last[2].startsWith("[Jupyter Python interpreter:"))) return false;
    if (last[0].includes(msg)) errs.push(last[0]);
  }
  return errs.length === 3 && new Set(errs).size === 1;
}

/** `StuckDetector.is_stuck(headless_mode=True)` over a history of actions, observations and messages. */
function ohIsStuck(history) {
  const h = history.filter((e) => !(e.cls === "message" && e.source === "user"));
  if (h.length < 3) return false;
  const acts = [];
  const obs = [];
  for (let i = h.length - 1; i >= 0 && (acts.length < 4 || obs.length < 4); i--) {
    const e = h[i];
    if (e.action && acts.length < 4) acts.push(e);
    else if (!e.action && obs.length < 4) obs.push(e);
  }
  // 1: the same action and observation four times.
  if (acts.length === 4 && obs.length === 4 && acts.every((a) => ohEq(acts[0], a)) && obs.every((o) => ohEq(obs[0], o))) return true;
  // 2: the same action three times, each an error (or the same IPython syntax error).
  if (acts.length >= 3 && obs.length >= 3 && acts.slice(0, 3).every((a) => ohEq(acts[0], a))) {
    const o3 = obs.slice(0, 3);
    if (o3.every((o) => o.cls === "ErrorObservation")) return true;
    if (o3.every((o) => o.cls === "IPythonRunCellObservation")) {
      for (const msg of SYNTAX_ERRORS) {
        if (msg.startsWith("SyntaxError: unterminated string literal (detected at line")) {
          if (consistentLineError(o3, msg)) return true;
        } else if (consistentInvalidSyntax(o3, msg)) return true;
      }
    }
  }
  // 3: the agent saying the same thing three times with no observation in between.
  const says = h.map((e, i) => [i, e]).filter(([, e]) => e.cls === "message" && e.source === "agent");
  if (says.length >= 3) {
    const last3 = says.slice(-3);
    if (last3.every(([, e]) => e.text === last3[0][1].text) && !h.slice(last3[0][0] + 1, last3[2][0]).some((e) => !e.action)) return true;
  }
  // 4: A-B-A-B-A-B, actions and observations alike.
  if (h.length >= 6) {
    const a6 = [];
    const o6 = [];
    for (let i = h.length - 1; i >= 0 && (a6.length < 6 || o6.length < 6); i--) {
      const e = h[i];
      if (e.action && a6.length < 6) a6.push(e);
      else if (!e.action && o6.length < 6) o6.push(e);
    }
    const alt = (x) => x.length === 6 && ohEq(x[0], x[2]) && ohEq(x[0], x[4]) && ohEq(x[1], x[3]) && ohEq(x[1], x[5]);
    if (alt(a6) && alt(o6)) return true;
  }
  return false;
}

export function openhands(traj) {
  const history = [];
  const hits = [];
  for (const e of events(traj)) {
    if (e.kind === "user") history.push({ cls: "message", source: "user", text: e.text, action: true });
    else if (e.kind === "say") history.push({ cls: "message", source: "agent", text: e.text, action: true });
    else {
      history.push({ ...ohAction(e.s), action: true });
      history.push(ohObservation(e.s));
      if (ohIsStuck(history)) hits.push(e.step);
    }
  }
  return hits;
}

// OpenHands agent SDK

function sdkEq(a, b) {
  if (a.type !== b.type) return false;
  if (a.type === "ActionEvent") return a.tool === b.tool && a.action === b.action;
  if (a.type === "ObservationEvent") return a.tool === b.tool && a.observation === b.observation;
  if (a.type === "AgentErrorEvent") return a.error === b.error;
  if (a.type === "MessageEvent") return a.source === b.source && a.text === b.text;
  return false;
}

function sdkIsStuck(all) {
  let u = -1;
  for (let i = all.length - 1; i >= 0; i--)
    if (all[i].type === "MessageEvent" && all[i].source === "user") {
      u = i;
      break;
    }
  if (u === -1) return false;
  const ev = all.slice(u + 1);
  if (ev.length < 3) return false;
  const isObs = (e) => e.type === "ObservationEvent" || e.type === "AgentErrorEvent";
  const acts = [];
  const obs = [];
  for (let i = ev.length - 1; i >= 0 && (acts.length < 4 || obs.length < 4); i--) {
    if (ev[i].type === "ActionEvent" && acts.length < 4) acts.push(ev[i]);
    else if (isObs(ev[i]) && obs.length < 4) obs.push(ev[i]);
  }
  if (acts.length === 4 && obs.length === 4 && acts.every((a) => sdkEq(acts[0], a)) && obs.every((o) => sdkEq(obs[0], o))) return true;
  if (
    acts.length >= 3 &&
    obs.length >= 3 &&
    acts.slice(0, 3).every((a) => sdkEq(acts[0], a)) &&
    obs.slice(0, 3).every((o) => o.type === "AgentErrorEvent")
  )
    return true;
  let said = 0;
  for (let i = ev.length - 1; i >= 0; i--) {
    if (ev[i].type === "MessageEvent" && ev[i].source === "agent") said++;
    else break;
  }
  if (said >= 3) return true;
  if (ev.length >= 6) {
    const a6 = [];
    const o6 = [];
    for (let i = ev.length - 1; i >= 0 && (a6.length < 6 || o6.length < 6); i--) {
      if (ev[i].type === "ActionEvent" && a6.length < 6) a6.push(ev[i]);
      else if (isObs(ev[i]) && o6.length < 6) o6.push(ev[i]);
    }
    const alt = (x) => x.length === 6 && sdkEq(x[0], x[2]) && sdkEq(x[0], x[4]) && sdkEq(x[1], x[3]) && sdkEq(x[1], x[5]);
    if (alt(a6) && alt(o6)) return true;
  }
  return false;
}

export function openhandsSdk(traj) {
  // The task itself is the first user message.
  const all = [{ type: "MessageEvent", source: "user", text: "(task)" }];
  const hits = [];
  for (const e of events(traj)) {
    if (e.kind === "user") all.push({ type: "MessageEvent", source: "user", text: e.text });
    else if (e.kind === "say") all.push({ type: "MessageEvent", source: "agent", text: e.text });
    else {
      const s = e.s;
      all.push({ type: "ActionEvent", tool: s.tool, action: stableJson(s.args) });
      all.push(
        s.err !== undefined
          ? { type: "AgentErrorEvent", error: s.err }
          : { type: "ObservationEvent", tool: s.tool, observation: stableJson({ out: s.out ?? "", exit: s.exit ?? null }) },
      );
      if (sdkIsStuck(all)) hits.push(e.step);
    }
  }
  return hits;
}

// Gemini CLI

const GEMINI_THRESHOLD = 5;

export function geminiCli(traj) {
  let history = [];
  let detected = false;
  const hits = [];
  for (const e of events(traj)) {
    if (e.kind === "user") {
      // A new prompt: `reset(promptId)`.
      history = [];
      detected = false;
      continue;
    }
    if (e.kind === "say") continue;
    if (detected) {
      hits.push(e.step);
      continue;
    }
    history.push(`${e.s.tool}:${JSON.stringify(e.s.args)}`);
    if (history.length > 5 * GEMINI_THRESHOLD) history = history.slice(-5 * GEMINI_THRESHOLD);
    const n = history.length;
    for (let k = 1; k <= 5 && !detected; k++) {
      const need = k * GEMINI_THRESHOLD;
      if (n < need) continue;
      const cycle = history.slice(-k);
      let match = true;
      for (let i = 0; i < need; i++) if (history[n - need + i] !== cycle[i % k]) match = false;
      if (match) detected = true;
    }
    if (detected) hits.push(e.step);
  }
  return hits;
}

// Roo Code

export function rooCode(traj, { limit = 3 } = {}) {
  let previous = null;
  let count = 0;
  const hits = [];
  for (const e of events(traj)) {
    if (e.kind !== "call") continue;
    const json = stableJson({ name: e.s.tool, params: e.s.args });
    if (json === previous) count++;
    else {
      count = 0;
      previous = json;
    }
    if (limit > 0 && count >= limit) {
      count = 0;
      previous = null;
      hits.push(e.step);
    }
  }
  return hits;
}

export const PEERS = [
  { name: "openhands", label: "OpenHands", run: openhands, checkedBefore: false },
  { name: "openhands-sdk", label: "OpenHands SDK", run: openhandsSdk, checkedBefore: false },
  { name: "gemini-cli", label: "Gemini CLI", run: geminiCli, checkedBefore: true },
  { name: "roo-code", label: "Roo Code", run: rooCode, checkedBefore: true },
];

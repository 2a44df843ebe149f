/**
 * What the demo's chapters share: the narrator (numbered steps in prose, JSON Lines, or
 * nothing), the story's workspace (every journal operation is this same CLI in a fresh process,
 * `--root <workspace> --json`), child processes that are stopped whatever happens, and the
 * checks that end the demo when reality differs from the story.
 *
 * Longer than ~400 lines, a little: the narrator and the child-process handling every chapter uses.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { writeStdout } from "../platform/output.js";

// biome-ignore lint/suspicious/noExplicitAny: results are parsed CLI JSON, checked field by field
export type Json = any;

export const WIDTH = 100;
const CLI_TIMEOUT_MS = 30_000;
/** How long a child process may take to report what the story waits for. */
export const CHILD_TIMEOUT_MS = 15_000;

/** One chapter of the demo: a short story with its own session(s), told in numbered steps. */
export interface Chapter {
  readonly number: number;
  /** One or two words: "Recovery". */
  readonly name: string;
  /** What the chapter shows, in one sentence. */
  readonly tagline: string;
  /** Tell the story; returns the chapter's summary fields (JSON). */
  tell(s: Story): Promise<Record<string, unknown>>;
  /** The chapter's paragraphs in the prose summary. */
  summary(r: Record<string, unknown>): string[];
}

export interface StepRecord {
  chapter: number;
  step: number;
  title: string;
  command: string[];
  result: Record<string, unknown>;
}

export interface CliCall {
  command: string;
  code: number;
  stdout: string;
  stderr: string;
  json: Json;
}

export class DemoFailure extends Error {}

export function check(cond: unknown, what: string, actual: unknown): asserts cond {
  if (!cond) throw new DemoFailure(`${what}; got ${brief(JSON.stringify(actual) ?? "undefined")}`);
}

export function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** How to start this CLI in another process. */
export function cliInvocation(): { node: string; nodeArgs: string[]; cli: string } {
  const argv1 = process.argv[1];
  const cli = argv1 && existsSync(argv1) ? argv1 : fileURLToPath(new URL("../bin/baton.cjs", import.meta.url));
  const nodeArgs = process.execArgv.filter((a) => !a.startsWith("--inspect") && !a.startsWith("--debug"));
  return { node: process.execPath, nodeArgs, cli };
}

export function shellQuote(arg: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

export function wrapWords(text: string, indent: string, width = WIDTH): string[] {
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

/** Text (JSON, say) broken after commas to stay within the width. */
export function wrapAt(text: string, width: number): string[] {
  const out: string[] = [];
  let line = "";
  for (const part of text.split(/(?<=,)/)) {
    if (line && line.length + part.length > width) {
      out.push(line);
      line = part;
    } else line += part;
  }
  if (line) out.push(line);
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

export function brief(text: string, max = 800): string {
  const t = text.trim();
  return t.length > max ? `${t.slice(0, max)}…` : t;
}

export function clip(line: string): string {
  return line.length > WIDTH ? `${line.slice(0, WIDTH - 1)}…` : line;
}

/** A result line of a CLI call that appended an event. */
export function appended(c: CliCall): string[] {
  const r = c.json;
  return [`seq ${r.event.seq} ${r.event.type} (${r.event.actor}): ${r.outcome}, phase ${r.phase}`];
}

/** A session's phase and next action, with the reason wrapped. */
export function nextOf(s: Json): string[] {
  return [`phase ${s.phase}, next action ${s.nextAction.action}`, wrapWords(`"${s.nextAction.reason}"`, "", WIDTH - 7).join("\n")];
}

export class Narrator {
  readonly #mode: "prose" | "json" | "quiet";
  #chapter = 0;
  #step = 0;
  #current: StepRecord | undefined;
  readonly steps: StepRecord[] = [];

  constructor(mode: "prose" | "json" | "quiet") {
    this.#mode = mode;
  }

  /** The chapter being told. */
  get chapter(): number {
    return this.#chapter;
  }

  /** The step being told, or the last one told. */
  get step(): number {
    return this.#step;
  }

  #print(lines: string[]): void {
    if (this.#mode === "prose") writeStdout(`${lines.map((l) => clip(l).trimEnd()).join("\n")}\n`);
  }

  intro(lines: string[]): void {
    this.#print(lines);
  }

  startChapter(ch: Chapter, total: number): void {
    this.#chapter = ch.number;
    this.#step = 0;
    const head = `Chapter ${ch.number} of ${total} · ${ch.name}`;
    this.#print(["", head, "═".repeat(head.length), ...wrapWords(ch.tagline, "")]);
  }

  begin(title: string, explanation: string): void {
    this.#step += 1;
    this.#current = { chapter: this.#chapter, step: this.#step, title, command: [], result: {} };
    this.#print(["", `${this.#step}. ${title}`, ...wrapWords(explanation, "   ")]);
  }

  /** A baton command (shown without the common `--root <ws> --json`) and its key result. */
  command(args: string[], fullCommand: string, result: string[]): void {
    this.#current?.command.push(fullCommand);
    this.#print([...wrapCommand(args, "   "), ...arrows(result)]);
  }

  /**
   * Another command: `shown` lines (the first after the prompt, `$` for a shell command; an empty
   * prompt shows the lines as they are, an HTTP request say), the full command, the key result.
   */
  exec(shown: string[], fullCommand: string, result: string[], prompt = "$"): void {
    this.#current?.command.push(fullCommand);
    const lines = prompt ? shown.map((l, i) => (i === 0 ? `   ${prompt} ${l}` : `       ${l}`)) : shown.map((l) => `   ${l}`);
    this.#print([...lines, ...arrows(result)]);
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
    if (this.#mode === "json") writeStdout(`${JSON.stringify(cur)}\n`);
  }
}

function arrows(result: string[]): string[] {
  return result.flatMap((item) => item.split("\n").map((l, i) => (i === 0 ? `     → ${l}` : `       ${l}`)));
}

/** A child process the story started: its JSON output lines, its stderr, and its end. */
export class Child {
  readonly proc: ChildProcess;
  readonly label: string;
  /** Signal that stops it if the demo ends while it still runs. */
  readonly stopSignal: NodeJS.Signals;
  /** Every line it printed on stdout, parsed as JSON (`{event: "output", text}` when not JSON). */
  readonly lines: Json[] = [];
  #stderr = "";
  #buf = "";
  #closed = false;
  readonly #listeners = new Set<() => void>();
  readonly #exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(proc: ChildProcess, label: string, stopSignal: NodeJS.Signals) {
    this.proc = proc;
    this.label = label;
    this.stopSignal = stopSignal;
    this.#exit = new Promise((resolve) => proc.once("exit", (code, signal) => resolve({ code, signal })));
    proc.stdout?.on("data", (chunk: Buffer) => {
      this.#buf += chunk.toString("utf8");
      for (let i = this.#buf.indexOf("\n"); i >= 0; i = this.#buf.indexOf("\n")) {
        const line = this.#buf.slice(0, i);
        this.#buf = this.#buf.slice(i + 1);
        if (!line.trim()) continue;
        try {
          this.lines.push(JSON.parse(line));
        } catch {
          this.lines.push({ event: "output", text: line });
        }
      }
      this.#notify();
    });
    proc.stderr?.on("data", (d: Buffer) => {
      this.#stderr += d.toString("utf8");
    });
    proc.once("close", () => {
      this.#closed = true;
      this.#notify();
    });
    proc.once("error", (err) => {
      this.#stderr += `${err.message}\n`;
      this.#closed = true;
      this.#notify();
    });
  }

  get pid(): number {
    return this.proc.pid as number;
  }

  get running(): boolean {
    return this.proc.exitCode === null && this.proc.signalCode === null && !this.#closed;
  }

  #notify(): void {
    for (const l of [...this.#listeners]) l();
  }

  /** The first output line matching, waiting for it; fails if the child ends first or takes too long. */
  waitFor(match: (line: Json) => boolean, what: string, timeoutMs = CHILD_TIMEOUT_MS): Promise<Json> {
    return new Promise((resolve, reject) => {
      const done = (err: Error | undefined, line?: Json) => {
        clearTimeout(timer);
        this.#listeners.delete(look);
        if (err) reject(err);
        else resolve(line);
      };
      const look = () => {
        const hit = this.lines.find(match);
        if (hit !== undefined) return done(undefined, hit);
        if (this.#closed) {
          const how = this.proc.signalCode ?? `code ${this.proc.exitCode}`;
          const printed = this.lines.length ? `\nstdout: ${brief(this.lines.map((l) => JSON.stringify(l)).join("\n"))}` : "";
          done(
            new DemoFailure(`${this.label} exited (${how}) before it could ${what}${printed}\nstderr: ${brief(this.#stderr) || "(none)"}`),
          );
        }
      };
      const timer = setTimeout(() => done(new DemoFailure(`${this.label} did not ${what} within ${timeoutMs} ms`)), timeoutMs);
      this.#listeners.add(look);
      look();
    });
  }

  /** Its exit: code and signal. */
  exited(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    return this.#exit;
  }

  /** Its exit, or a failure after `timeoutMs`. */
  async exitedWithin(timeoutMs: number, what: string): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new DemoFailure(`${this.label} did not ${what} within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      return await Promise.race([this.#exit, late]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** The workspace the story is told in, and the processes it runs there. */
export class Story {
  readonly invocation = cliInvocation();
  readonly root: string;
  readonly n: Narrator;
  readonly #children: Child[] = [];

  constructor(root: string, narrator: Narrator) {
    this.root = root;
    this.n = narrator;
  }

  /** Run `baton --root <ws> --json <args>` in a fresh process; any exit but `expectCode` fails the story. */
  run(args: string[], expectCode = 0): CliCall {
    const full = ["--root", this.root, "--json", ...args];
    const inv = this.invocation;
    const r = spawnSync(inv.node, [...inv.nodeArgs, inv.cli, ...full], { encoding: "utf8", timeout: CLI_TIMEOUT_MS, env: process.env });
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

  /** Run `node <args>` in the workspace (a project's own script, say); any exit code is returned. */
  node(args: string[]): { command: string; code: number; stdout: string; stderr: string } {
    const r = spawnSync(this.invocation.node, args, { cwd: this.root, encoding: "utf8", timeout: CLI_TIMEOUT_MS, env: process.env });
    const command = `cd ${shellQuote(this.root)} && node ${args.map(shellQuote).join(" ")}`;
    if (r.error || r.signal) throw new DemoFailure(`\`${command}\` did not finish: ${r.error?.message ?? r.signal}`);
    return { command, code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
  }

  /** Start `baton --root <ws> --json <args>` as a child process; stopped with `stopSignal` if the demo ends first. */
  spawnCli(args: string[], label: string, stopSignal: NodeJS.Signals): { child: Child; command: string } {
    const full = ["--root", this.root, "--json", ...args];
    const inv = this.invocation;
    const proc = spawn(inv.node, [...inv.nodeArgs, inv.cli, ...full], { stdio: ["ignore", "pipe", "pipe"], env: process.env });
    return { child: this.#track(new Child(proc, label, stopSignal)), command: `baton ${full.map(shellQuote).join(" ")}` };
  }

  /** Start a CommonJS script with `node -e`, its configuration as JSON in argv[1]; stopped with SIGKILL if the demo ends first. */
  spawnScript(script: string, cfg: Record<string, unknown>, label: string): { child: Child; command: string } {
    const inv = this.invocation;
    const arg = JSON.stringify(cfg);
    const proc = spawn(inv.node, [...inv.nodeArgs, "--input-type=commonjs", "-e", script, arg], {
      stdio: ["ignore", "pipe", "pipe"],
      env: process.env,
    });
    return {
      child: this.#track(new Child(proc, label, "SIGKILL")),
      command: `${shellQuote(inv.node)} -e <agent script> ${shellQuote(arg)}`,
    };
  }

  #track(c: Child): Child {
    this.#children.push(c);
    return c;
  }

  /** Stop every child still running (the demo is ending, perhaps failing). */
  stopChildren(): void {
    for (const c of this.#children) if (c.running) c.proc.kill(c.stopSignal);
  }

  path(rel: string): string {
    return join(this.root, rel);
  }

  read(rel: string): string {
    return readFileSync(this.path(rel), "utf8");
  }

  write(rel: string, text: string): void {
    mkdirSync(dirname(this.path(rel)), { recursive: true });
    writeFileSync(this.path(rel), text);
  }

  /** Whether `baton init` has run here (a chapter told on its own starts in an empty directory). */
  get initialised(): boolean {
    return existsSync(join(this.root, ".baton"));
  }

  /** `baton init` when the workspace has no journal yet. */
  ensureInit(): void {
    if (!this.initialised) this.say(["init"], (c) => [`journal at ${c.json.database}`]);
  }
}

/**
 * The `baton` CLI. This file only declares commands; each command's code is a lazily imported
 * chunk, so `baton status` parses only what status needs (agent hooks start this process on
 * every tool call; see docs/benchmarks.md).
 */
import { Command, CommanderError, Option } from "commander";
import { Ctx, reportError } from "./context.js";
import { writeStdout } from "./output.js";

declare const BATON_VERSION: string | undefined;

type Handler = (ctx: Ctx, ...args: never[]) => Promise<void>;

/** Wrap a lazily loaded handler: build the context, run, report errors with exit codes. */
function lazy<M>(load: () => Promise<M>, pick: (m: M) => Handler) {
  return async (...args: unknown[]): Promise<void> => {
    const cmd = args[args.length - 1] as Command;
    const opts = cmd.optsWithGlobals() as Record<string, unknown>;
    const positional = args.slice(0, -2);
    const ctx = new Ctx(opts);
    try {
      const fn = pick(await load()) as (ctx: Ctx, ...a: unknown[]) => Promise<void>;
      await fn(ctx, ...positional, opts);
    } catch (err) {
      process.exitCode = reportError(err, ctx.json);
    } finally {
      await ctx.close().catch(() => undefined);
    }
  };
}

const journal = () => import("./commands/journal.js");
const facets = () => import("./commands/facets.js");
const flows = () => import("./commands/flows.js");
const collect = (v: string, prev: string[] = []) => [...prev, v];
const session = () => new Option("-s, --session <id>", "session id (default: the single active session)");

export function buildProgram(json = false): Command {
  // Set before any subcommand is added: subcommands copy these settings when created.
  const program = new Command("baton").exitOverride();
  if (json) program.configureOutput({ writeErr: () => undefined });
  program
    .description("Durable sessions for AI agents: what happened, where things stand, and what to do next.")
    .version(typeof BATON_VERSION === "string" ? BATON_VERSION : "0.0.0-dev", "-V, --version")
    .option("--json", 'machine-readable output (errors too: {"error": {code, message}} on stdout)')
    .option("--root <dir>", "workspace root (default: BATON_ROOT, else the nearest directory with .baton/)")
    .showHelpAfterError("(run with --help for usage)")
    .addHelpText(
      "after",
      "\nExit codes: 0 ok · 1 internal failure · 2 bad input · 3 refused by state (invalid transition, conflict, source_dirty) · 4 not found · 5 storage failure",
    );

  program
    .command("init")
    .description("create .baton/ here (or at --root)")
    .action(lazy(journal, (m) => m.init));

  const s = program.command("session").description("start, list and show sessions");
  s.command("start")
    .description("start a session")
    .requiredOption("-f, --flow <flow>", "flow: task, external-run, live-variant, or a user flow in .baton/flows/")
    .option("--id <id>", "session id (default: generated)")
    .option("-t, --title <title>", "a human title")
    .option("--deadline <iso>", "deadline (ISO-8601); external runs time out transiently before it")
    .action(lazy(journal, (m) => m.sessionStart));
  s.command("list")
    .description("list active sessions")
    .option("-a, --all", "include completed sessions")
    .action(lazy(journal, (m) => m.sessionList));
  s.command("show [id]")
    .description("show a session's snapshot")
    .addOption(session())
    .action(lazy(journal, (m) => m.sessionShow));

  program
    .command("event <session-or-type> [type]")
    .description("append an event: `baton event <session> <type>` or `baton event <type>` for the single active session")
    .addOption(session())
    .option("-d, --data <json>", "event data, a JSON object")
    .option("--id <id>", "idempotency key (default: generated); re-sending the same id and body is a no-op")
    .option("--actor <actor>", "who produced it: agent, browser, user, system (default: user)")
    .option("--revision <n>", "client revision; a revision not newer than the last is kept as stale")
    .action(lazy(journal, (m) => m.event));

  program
    .command("status")
    .description("active sessions with their next action")
    .option("-a, --all", "include completed sessions")
    .addOption(session())
    .action(lazy(journal, (m) => m.status));
  program
    .command("resume [id]")
    .description("everything a fresh agent needs to take the next step")
    .addOption(session())
    .action(lazy(journal, (m) => m.resume));
  program
    .command("complete [id]")
    .description("complete a session (refused while source markers remain)")
    .addOption(session())
    .option("--force", "complete even though markers remain")
    .action(lazy(journal, (m) => m.complete));
  program
    .command("state [id]")
    .description("render STATE.md for a session")
    .addOption(session())
    .option("-w, --write", "write it to .baton/sessions/<id>/STATE.md")
    .action(lazy(journal, (m) => m.state));
  program
    .command("export [id]")
    .description("the session's journal as JSON Lines")
    .addOption(session())
    .option("-o, --out <file>", "write to a file instead of stdout")
    .action(lazy(journal, (m) => m.exportJournal));
  program
    .command("rebuild")
    .description("refold snapshots from the journal and repair any that disagree")
    .addOption(session())
    .action(lazy(journal, (m) => m.rebuild));

  program
    .command("decision")
    .description("record decisions")
    .command("add <decision>")
    .description("record a decision")
    .addOption(session())
    .option("--context <text>", "what prompted it")
    .option("--reason <text>", "why")
    .option("--alternative <text>", "an alternative considered (repeatable)", collect)
    .option("--reversible", "the decision can be undone")
    .option("--no-reversible", "the decision cannot be undone")
    .action(lazy(facets, (m) => m.decisionAdd));

  const bl = program.command("blocker").description("record blockers");
  bl.command("add <text>")
    .description("add an active blocker")
    .addOption(session())
    .option("--id <id>", "blocker id (default: generated)")
    .option("--affects <what>", "what it blocks")
    .option("--workaround <text>", "a known workaround")
    .action(lazy(facets, (m) => m.blockerAdd));
  bl.command("resolve <id>")
    .description("mark a blocker resolved")
    .addOption(session())
    .option("--resolution <text>", "how it was resolved")
    .action(lazy(facets, (m) => m.blockerResolve));
  bl.command("bypass <id>")
    .description("mark a blocker bypassed")
    .addOption(session())
    .requiredOption("--workaround <text>", "the workaround in use")
    .action(lazy(facets, (m) => m.blockerBypass));

  program
    .command("position")
    .description("record the position")
    .command("set")
    .description("set phase / plan / task / wave / status")
    .addOption(session())
    .option("--phase <v>")
    .option("--plan <v>")
    .option("--task <v>")
    .option("--wave <v>")
    .option("--status <v>")
    .action(lazy(facets, (m) => m.positionSet));
  program
    .command("progress")
    .description("record progress")
    .command("set")
    .description("set totals")
    .addOption(session())
    .option("--total <n>")
    .option("--completed <n>")
    .action(lazy(facets, (m) => m.progressSet));

  const run = program.command("run").description("agent runs on a session");
  run
    .command("start")
    .description("record that an agent run started")
    .addOption(session())
    .requiredOption("--agent <name>", "agent name, e.g. claude-code")
    .option("--run-id <id>", "run id (default: generated)")
    .option("--pid <pid>", "the agent's process id (default: the calling process)")
    .action(lazy(facets, (m) => m.runStart));
  run
    .command("end <runId>")
    .description("record that a run ended")
    .addOption(session())
    .option("--reason <text>", "handoff reason (e.g. context full)")
    .option("--completed-work <text>", "what the run finished")
    .option("--context-usage <n>", "context used (fraction or tokens)")
    .action(lazy(facets, (m) => m.runEnd));

  program
    .command("files")
    .description("resume context")
    .command("add <paths...>")
    .description("record modified files (hashed now, verified on resume) and notes")
    .addOption(session())
    .option("--question <text>", "an open question (repeatable)", collect)
    .option("--implementation <text>", "a key implementation note (repeatable)", collect)
    .action(lazy(facets, (m) => m.filesAdd));
  program
    .command("context")
    .description("free context")
    .command("set <pairs...>")
    .description("set key=value pairs (values parsed as JSON when they are JSON)")
    .addOption(session())
    .action(lazy(facets, (m) => m.contextSet));

  const fl = program.command("flows").description("flows: built in and in .baton/flows/");
  fl.command("list")
    .description("list flows and report invalid flow files")
    .action(lazy(flows, (m) => m.flowsList));
  fl.command("validate <files...>")
    .description("validate flow files; problems name the line and field")
    .action(lazy(flows, (m) => m.flowsValidate));

  program
    .command("demo")
    .description("tell a recovery story in a temporary workspace")
    .option("--keep", "keep the temporary workspace")
    .option("--quiet", "only the final summary")
    .action(
      lazy(
        () => import("../demo/demo.js"),
        (m) => m.demo,
      ),
    );

  return program;
}

export async function main(argv: string[]): Promise<void> {
  const json = argv.includes("--json");
  const program = buildProgram(json);
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === "commander.helpDisplayed" || err.code === "commander.version" || err.code === "commander.help") {
        process.exitCode = 0;
        return;
      }
      const message = err.message.replace(/^error: /, "");
      if (json) writeStdout(`${JSON.stringify({ error: { code: "bad_input", message } })}\n`);
      process.exitCode = 2;
      return;
    }
    process.exitCode = reportError(err, json);
  }
}

void main(process.argv);

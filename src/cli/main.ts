/**
 * The `baton` CLI. This file builds the program; the commands are declared by group in
 * cli/program/ (journal, files, learning, operations), and each command's code is a lazily imported
 * chunk, so `baton status` parses only what status needs (agent hooks start this process on
 * every tool call; see docs/benchmarks.md).
 */
import { Command, CommanderError } from "commander";
import { BatonError } from "../errors.js";
import { writeStderr, writeStdout } from "../platform/output.js";
import { reportError } from "./context.js";
import { defineFileCommands } from "./program/files.js";
import { defineJournalCommands } from "./program/journal.js";
import { defineLearningCommands } from "./program/learning.js";
import { defineOperationCommands } from "./program/operations.js";

declare const BATON_VERSION: string | undefined;

export function buildProgram(json = false): Command {
  // Set before any subcommand is added: subcommands copy these settings when created.
  const program = new Command("baton").exitOverride();
  // Help and version go through the shared stdout path too (a closed pipe ends them quietly).
  program.configureOutput({ writeOut: writeStdout, writeErr: json ? () => undefined : writeStderr });
  // Each command's --help lists the global options too (--json, --root, --quiet), as git's and gh's do.
  program.configureHelp({ showGlobalOptions: true });
  program
    .description("Durable sessions for AI agents: what happened, where things stand, and what to do next.")
    .version(typeof BATON_VERSION === "string" ? BATON_VERSION : "0.0.0-dev", "-V, --version")
    .option("--json", 'machine-readable output (errors too: {"error": {code, message}} on stdout)')
    .option("--root <dir>", "workspace root (default: BATON_ROOT, else the nearest directory with .baton/)")
    .option(
      "-q, --quiet",
      "print nothing on success (the demo: only its summary); errors and warnings still go to stderr, --json output is still printed",
    )
    .showHelpAfterError("(run with --help for usage)")
    .addHelpText(
      "after",
      "\nExit codes: 0 ok · 1 internal failure · 2 bad input · 3 refused by state (invalid transition, conflict, source_dirty, lock_held, lock_lost) · 4 not found · 5 storage failure · 126/127 `lock run`: the command cannot run / is not there",
    );

  defineJournalCommands(program);
  defineFileCommands(program);
  defineLearningCommands(program);
  defineOperationCommands(program);
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
      process.exitCode = 2;
      if (json) process.exitCode = reportError(new BatonError("bad_input", message), true);
      return;
    }
    process.exitCode = reportError(err, json);
  }
}

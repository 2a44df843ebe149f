/**
 * The commands `baton` runs without the full command table (src/cli/entry.ts): those an agent
 * runs on every turn. Parsed with Node's `util.parseArgs`; anything the table here does not
 * recognise goes to the full CLI, which owns help text and error messages.
 */
import { type ParseArgsConfig, parseArgs } from "node:util";
import type { Ctx } from "./context.js";

export type Options = NonNullable<ParseArgsConfig["options"]>;

export interface FastCommand {
  options: Options;
  /** How many positional arguments it takes at most (each optional). */
  positionals?: number;
  run(ctx: Ctx, values: Record<string, unknown>, positionals: string[]): Promise<void>;
}

// The global options of the full CLI (src/cli/main.ts), as far as these commands use them.
const GLOBAL: Options = { json: { type: "boolean" }, root: { type: "string" }, quiet: { type: "boolean", short: "q" } };
const SESSION: Options = { session: { type: "string", short: "s" } };

// The commands an agent runs on every turn (docs/benchmarks.md, "Status and CLI"). Their options
// must be exactly those of src/cli/program/journal.ts (test/cli-fast-path.int.test.ts).
export const FAST: Record<string, FastCommand> = {
  status: {
    options: { ...GLOBAL, ...SESSION, all: { type: "boolean", short: "a" } },
    run: async (ctx, v) => (await import("./commands/journal.js")).status(ctx, v),
  },
  resume: {
    options: { ...GLOBAL, ...SESSION, unpause: { type: "boolean" }, reason: { type: "string" }, lane: { type: "string" } },
    positionals: 1,
    run: async (ctx, v, p) => (await import("./commands/journal.js")).resume(ctx, p[0], v),
  },
};

export function fastPath(argv: string[]): { cmd: FastCommand; values: Record<string, unknown>; positionals: string[] } | undefined {
  const cmd = argv[0] === undefined ? undefined : FAST[argv[0]];
  if (!cmd) return undefined;
  try {
    const { values, positionals } = parseArgs({ args: argv.slice(1), options: cmd.options, strict: true, allowPositionals: true });
    return positionals.length <= (cmd.positionals ?? 0) ? { cmd, values, positionals } : undefined;
  } catch {
    return undefined; // let the full CLI report it properly
  }
}

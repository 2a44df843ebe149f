/**
 * The commands `baton` runs without the full command table (src/cli/entry.ts): those an agent
 * runs on every turn. Parsed as Node's `util.parseArgs` does (fast-options.ts); anything the
 * table here does not recognise goes to the full CLI, which owns help text and error messages.
 */
import type { Ctx } from "./context.js";
import { type Options, parseCommandLine, RESUME_OPTIONS, STATUS_OPTIONS } from "./fast-options.js";

export interface FastCommand {
  options: Options;
  /** How many positional arguments it takes at most (each optional). */
  positionals?: number;
  run(ctx: Ctx, values: Record<string, unknown>, positionals: string[]): Promise<void>;
}

// The commands an agent runs on every turn (docs/benchmarks.md, "Status and CLI"). Their options
// (fast-options.ts) must be exactly those of src/cli/program/journal.ts (test/cli-fast-path.int.test.ts).
export const FAST: Record<string, FastCommand> = {
  status: {
    options: STATUS_OPTIONS,
    run: async (ctx, v) => (await import("./commands/journal.js")).status(ctx, v),
  },
  resume: {
    options: RESUME_OPTIONS,
    positionals: 1,
    run: async (ctx, v, p) => (await import("./commands/journal.js")).resume(ctx, p[0], v),
  },
};

export function fastPath(argv: string[]): { cmd: FastCommand; values: Record<string, unknown>; positionals: string[] } | undefined {
  const cmd = argv[0] === undefined ? undefined : FAST[argv[0]];
  if (!cmd) return undefined;
  try {
    const { values, positionals } = parseCommandLine(argv.slice(1), cmd.options);
    // An empty value (`--session ""`) is the full CLI's to refuse.
    if (positionals.includes("") || Object.values(values).includes("")) return undefined;
    return positionals.length <= (cmd.positionals ?? 0) ? { cmd, values, positionals } : undefined;
  } catch {
    return undefined; // let the full CLI report it properly
  }
}

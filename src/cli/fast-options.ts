/**
 * The options of the commands `baton` answers without its full command table (fast.ts), and
 * without opening the store when the workspace's server answers them (ask.ts): those an agent
 * runs on every turn. They must be exactly those of src/cli/program/journal.ts
 * (test/cli-fast-path.int.test.ts).
 */
import type { ParseArgsConfig } from "node:util";

export type Options = NonNullable<ParseArgsConfig["options"]>;

// The global options of the full CLI (src/cli/main.ts), as far as these commands use them.
const GLOBAL: Options = { json: { type: "boolean" }, root: { type: "string" }, quiet: { type: "boolean", short: "q" } };
const SESSION: Options = { session: { type: "string", short: "s" } };

export const STATUS_OPTIONS: Options = { ...GLOBAL, ...SESSION, all: { type: "boolean", short: "a" } };
export const RESUME_OPTIONS: Options = {
  ...GLOBAL,
  ...SESSION,
  unpause: { type: "boolean" },
  reason: { type: "string" },
  lane: { type: "string" },
};

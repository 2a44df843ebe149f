/**
 * The options of the commands `baton` answers without its full command table (fast.ts), and
 * without opening the store when the workspace's server answers them (ask.ts): those an agent
 * runs on every turn. They must be exactly those of src/cli/program/journal.ts
 * (test/cli-fast-path.int.test.ts).
 */
import { type ParseArgsConfig, parseArgs } from "node:util";

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

export interface ParsedLine {
  values: Record<string, unknown>;
  positionals: string[];
}

/**
 * `util.parseArgs` (strict, positionals allowed) for the command lines agents run on every turn,
 * without loading it there: Node compiles its parser on first use, ~0.4 ms of a ~20 ms process.
 * Only the plain forms are read here (`--flag`, `--name value`, `--name=value`, `-f`, `-n value`
 * and positionals, each option once or the last one winning, as parseArgs has it); anything else
 * (`--`, grouped or attached short options, a value that starts with "-", an unknown option)
 * goes to `util.parseArgs` itself, which says what it makes of it. Throws as it does.
 */
export function parseCommandLine(args: readonly string[], options: Options, full = nodeParse): ParsedLine {
  return plainParse(args, options) ?? full(args, options);
}

/** Node's parser, loaded when first used (util.parseArgs is a lazy property). */
function nodeParse(args: readonly string[], options: Options): ParsedLine {
  return parseArgs({ args: [...args], options, strict: true, allowPositionals: true });
}

function plainParse(args: readonly string[], options: Options): ParsedLine | undefined {
  if (Object.values(options).some((o) => o.multiple || o.default !== undefined)) return undefined;
  const values: Record<string, unknown> = Object.create(null);
  const positionals: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === "-" || !a.startsWith("-")) {
      positionals.push(a);
      continue;
    }
    let name: string | undefined;
    let inline: string | undefined;
    if (a.startsWith("--")) {
      const eq = a.indexOf("=");
      name = eq < 0 ? a.slice(2) : a.slice(2, eq);
      if (eq >= 0) inline = a.slice(eq + 1);
      if (!Object.hasOwn(options, name)) return undefined;
    } else {
      if (a.length !== 2) return undefined; // grouped (-aq) or attached (-sID): parseArgs's to read
      name = Object.keys(options).find((k) => options[k]?.short === a[1]);
      if (name === undefined) return undefined;
    }
    const type = options[name]?.type;
    if (type === "boolean") {
      if (inline !== undefined) return undefined;
      values[name] = true;
    } else if (inline !== undefined) values[name] = inline;
    else {
      const next = args[i + 1];
      if (next === undefined || next.startsWith("-")) return undefined;
      values[name] = next;
      i++;
    }
  }
  return { values, positionals };
}

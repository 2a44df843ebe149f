/** What every command declaration shares: the lazy handler wrapper, the handler modules used by several groups, and common options. */
import { type Command, Option } from "commander";
import { BatonError } from "../../errors.js";
import { Ctx, reportError } from "../context.js";

type Handler = (ctx: Ctx, ...args: never[]) => Promise<void>;

const REQUIRED = new WeakSet<Option>();

/**
 * An option the command cannot run without. Checked when the command runs, after commander
 * has refused unknown options: `session start --flwo task` names `--flwo` as unknown, where
 * commander's own required options would first say that `--flow` is missing.
 */
export function required(flags: string, description: string): Option {
  const o = new Option(flags, `${description} (required)`);
  REQUIRED.add(o);
  return o;
}

/** Wrap a lazily loaded handler: build the context, run, report errors with exit codes. */
export function lazy<M>(load: () => Promise<M>, pick: (m: M) => Handler) {
  return async (...args: unknown[]): Promise<void> => {
    const cmd = args[args.length - 1] as Command;
    const opts = cmd.optsWithGlobals() as Record<string, unknown>;
    const positional = args.slice(0, -2);
    const ctx = new Ctx(opts);
    try {
      const missing = cmd.options.find((o) => REQUIRED.has(o) && opts[o.attributeName()] === undefined);
      if (missing)
        throw new BatonError("bad_input", `required option '${missing.flags}' not specified; see \`baton ${fullName(cmd)} --help\``);
      // An empty id (`--session "$SID"` with SID unset) must not quietly mean "the default one".
      const empty = cmd.options.find((o) => /<\w*(?:id|Id)>/.test(o.flags) && opts[o.attributeName()] === "");
      if (empty) throw new BatonError("bad_input", `${empty.long ?? empty.flags} is empty: give an id, or leave the option out`);
      const fn = pick(await load()) as (ctx: Ctx, ...a: unknown[]) => Promise<void>;
      await fn(ctx, ...positional, opts);
    } catch (err) {
      process.exitCode = reportError(err, ctx.json);
    } finally {
      await ctx.close().catch(() => undefined);
    }
  };
}

export const journal = () => import("../commands/journal.js");
export const facets = () => import("../commands/facets.js");
export const flows = () => import("../commands/flows.js");
export const collect = (v: string, prev: string[] = []) => [...prev, v];
export const session = () => new Option("-s, --session <id>", "session id (default: the single active session)");

/** `session start` for the command `start` under `session`. */
function fullName(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(" ");
}

/**
 * The process entry of `baton`. Agent hooks start this process on every tool call, so the
 * commands they run most are parsed here as Node's `util.parseArgs` parses them
 * (fast-options.ts) and run without loading the full command table (commander and every
 * command, ~2.5× the code to compile). Anything else, and any argument the fast path does
 * not recognise, goes to the full CLI (dist/cli-full.cjs), which owns help text and error
 * messages.
 */
import { Ctx, reportError } from "./context.js";
import { fastPath } from "./fast.js";

/** `baton hook <agent> <Event>` (agent hooks, on every tool call); `--help` goes to the full CLI. */
function isHook(argv: string[]): boolean {
  return argv[0] === "hook" && argv.length >= 2 && !argv.includes("--help") && !argv.includes("-h");
}

/** What dist/hook.cjs hands over when a hook is to be answered in this process (hooks/entry.ts). */
function hookHandoff(): { text: string; requestId: string; reason: string } | undefined {
  const h = (globalThis as Record<symbol, unknown>)[Symbol.for("baton.hookHandoff")] as Record<string, unknown> | undefined;
  return h && typeof h.text === "string" && typeof h.requestId === "string" && typeof h.reason === "string"
    ? { text: h.text, requestId: h.requestId, reason: h.reason }
    : undefined;
}

async function run(): Promise<void> {
  // Loaded by a relay (`baton hook <agent> --relay`, hooks/relay.ts): it answers hooks through
  // run.ts's answerHook, call after call; this process runs no command of its own.
  const relay = (globalThis as Record<symbol, unknown>)[Symbol.for("baton.hookRelay")];
  if (typeof relay === "function") {
    const { answerHook, logHookFailure } = await import("../hooks/run.js");
    return relay({ answerHook, logHookFailure });
  }
  const argv = process.argv.slice(2);
  if (isHook(argv)) {
    if (argv.includes("--relay")) return (await import("./relay-bundle.js")).runRelayBundle();
    const h = hookHandoff();
    return (await import("../hooks/run.js")).runHook(argv.slice(1), {
      exit: true,
      // The script that started this process: session-start and prompt hooks may start a server with it.
      ...(process.argv[1] ? { launcher: process.argv[1] } : {}),
      ...(h ? { input: h.text, requestId: h.requestId, reason: h.reason } : {}),
    });
  }
  const fast = fastPath(argv);
  if (!fast) {
    // Built next to this file, external to this bundle on purpose; bin/baton.cjs provides a
    // loader with a code cache.
    const load = (globalThis as Record<symbol, ((file: string) => void) | undefined>)[Symbol.for("baton.load")];
    if (load) load(`${__dirname}/cli-full.cjs`);
    else require("./cli-full.cjs");
    return;
  }
  const ctx = new Ctx(fast.values);
  try {
    await fast.cmd.run(ctx, fast.values, fast.positionals);
  } catch (err) {
    process.exitCode = reportError(err, ctx.json);
  } finally {
    await ctx.close().catch(() => undefined);
  }
}

void run();

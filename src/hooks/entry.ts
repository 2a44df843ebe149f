/**
 * The process entry of `baton hook <agent> <Event>` (dist/hook.cjs, which bin/baton.cjs loads
 * instead of dist/cli.cjs for hooks). Agents start it on every tool call, so it is small: it
 * reads the payload, translates it (front.ts), answers what needs no workspace, and hands the
 * rest to the workspace's running server (client.ts) when `.baton/server.json` names one of
 * this build that is proven to be the process that wrote it.
 *
 * Everything else goes to the in-process path (run.ts in dist/cli.cjs) with the payload, the
 * request id and the deadline: no server, a server of another build, a server that refused or
 * broke off (a blind retry: every step is keyed, core/hooks/keys.ts), hooks configured `off`,
 * an unknown agent or an unreadable payload (both reported there as they always were).
 */
import { writeStdout } from "../platform/output.js";
import { workingDir } from "../platform/workspace.js";
import { adapterFor, newRequestId, parseHookArgs, readStdin } from "./front.js";
import { runRelay } from "./relay.js";
import { type HookHandoff, serverFirst } from "./server-first.js";

export type { HookHandoff } from "./server-first.js";

export const HANDOFF = Symbol.for("baton.hookHandoff");

function handOff(h: HookHandoff): void {
  (globalThis as Record<symbol, unknown>)[HANDOFF] = h;
  // bin/baton.cjs provides a loader with a code cache; without it, a plain require.
  const load = (globalThis as Record<symbol, ((file: string) => void) | undefined>)[Symbol.for("baton.load")];
  if (load) load(`${__dirname}/cli.cjs`);
  else require("./cli.cjs");
}

function answer(stdout: string): void {
  try {
    if (stdout) writeStdout(stdout);
  } catch {
    // the agent closed the pipe
  }
  process.exit(0);
}

async function main(): Promise<void> {
  const argv = process.argv.slice(3);
  const args = parseHookArgs(argv);
  // `baton hook <agent> --relay`: one process for many hooks (relay.ts).
  if (argv.includes("--relay")) {
    if (adapterFor(args.agent)) return runRelay(args, `${__dirname}/cli.cjs`);
    // Not handed to the CLI: it would load this relay again.
    process.stderr.write(
      `baton hook: unknown agent "${args.agent ?? ""}" for --relay: name one of Baton's agents (\`baton hook --help\`)\n`,
    );
    process.exit(2);
  }
  const requestId = args.requestId ?? newRequestId();
  if (!adapterFor(args.agent)) return handOff({ text: "", requestId, reason: "unknown agent" });
  const text = readStdin();
  let r: Awaited<ReturnType<typeof serverFirst>>;
  try {
    // A removed working directory is no workspace's: the payload's own cwd comes first anyway.
    r = await serverFirst(args, text, requestId, workingDir() ?? "/", args.startedAt);
  } catch (err) {
    // Never the agent's problem: the in-process path answers it, and logs what fails there.
    return handOff({ text, requestId, reason: `not handed to a server (${(err as Error).message})` });
  }
  if (r.kind === "handoff") return handOff(r.handoff);
  return answer(r.stdout);
}

void main();

/**
 * A hook the server cannot answer with the workspace it opened (`.baton/config.json` or a flow
 * changed since, or it is shutting down), answered by a new process instead: `baton hook
 * <agent> <Event>` with the payload on stdin and `BATON_HOOK_SERVER=off`, its stdout the answer.
 * A command hook does this by itself (its process answers when the server refuses); an HTTP hook
 * (Claude Code's `{"type": "http"}` entries) has no process of its own, so the server starts it.
 * The answer is what a new process reads: the settings as they are now.
 */
import { spawn } from "node:child_process";
import { BatonError } from "../errors.js";

/** Most of an answer read from the child (a hook's answer is a few KiB). */
const MAX_OUT_BYTES = 4 * 1024 * 1024;

/**
 * `node <entry> hook …` when this process was started as baton (bin/baton.cjs, dist/cli.js),
 * else `baton` from PATH (a server started by a program of its own).
 */
function hookCommand(): { file: string; args: string[] } {
  const entry = process.argv[1];
  if (entry && /baton(?:\.c?js)?$|[/\\]dist[/\\]cli\.c?js$/.test(entry)) return { file: process.execPath, args: [entry] };
  return { file: "baton", args: [] };
}

/** The deadlines of the answers children are working on now. */
const pending = new Set<{ deadline: number }>();

/**
 * The latest deadline of the answers children are still working on, if any: a server shutting
 * down keeps their connections that long (a call refused while shutting down is answered so).
 */
export function childAnswersDueBy(): number | undefined {
  let latest: number | undefined;
  for (const p of pending) latest = Math.max(latest ?? 0, p.deadline);
  return latest;
}

/** The child's stdout, or a BatonError (`internal`, or `deadline_exceeded`) when it fails, says nothing readable, or is not done by `deadline`. */
export function answerInChild(o: { agent: string; native: string; payload: string; cwd: string; deadline: number }): Promise<string> {
  const entry = { deadline: o.deadline };
  pending.add(entry);
  return spawnAnswer(o).finally(() => pending.delete(entry));
}

function spawnAnswer(o: { agent: string; native: string; payload: string; cwd: string; deadline: number }): Promise<string> {
  const { file, args } = hookCommand();
  return new Promise((resolve, reject) => {
    const start = () =>
      spawn(file, [...args, "hook", o.agent, o.native], {
        cwd: o.cwd,
        env: { ...process.env, BATON_HOOK_SERVER: "off" },
        stdio: ["pipe", "pipe", "ignore"],
        windowsHide: true,
      });
    let child: ReturnType<typeof start>;
    try {
      child = start();
    } catch (err) {
      // Some failures are thrown rather than emitted (a cwd that is a file: ENOTDIR).
      return reject(
        new BatonError("internal", `the hook's own process (baton hook ${o.agent} ${o.native}) could not start: ${(err as Error).message}`),
      );
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const fail = (why: string, code: "internal" | "deadline_exceeded" = "internal") => {
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(new BatonError(code, `the hook's own process (baton hook ${o.agent} ${o.native}) ${why}`));
    };
    const timer = setTimeout(
      () => fail("did not answer by the hook's deadline", "deadline_exceeded"),
      Math.max(0, o.deadline - Date.now()),
    );
    child.on("error", (err) => fail(`could not start: ${err.message}`));
    child.stdout.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_OUT_BYTES) fail(`printed more than ${MAX_OUT_BYTES} bytes`);
      else chunks.push(c);
    });
    child.stdin.on("error", () => undefined);
    child.stdin.end(o.payload);
    child.on("close", (code) => {
      clearTimeout(timer);
      if (code !== 0)
        return reject(new BatonError("internal", `the hook's own process (baton hook ${o.agent} ${o.native}) exited with ${code}`));
      resolve(Buffer.concat(chunks).toString("utf8"));
    });
  });
}

/**
 * `baton lock …`: named, fenced locks from the shell. The CLI process exits at once, so a lock
 * it acquires is held by the process that called it (its parent: the agent's shell) unless
 * `--pid` names another; `lock run` holds the lock itself, heartbeating, while a command runs.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { constants } from "node:os";
import { BatonError, isBatonError } from "../../errors.js";
import { writeStderr } from "../../platform/output.js";
import { descendants, readProcStat } from "../../platform/process-facts.js";
import type { LockInfo } from "../../services/work/locks.js";
import { type Ctx, parseIntOption } from "../context.js";

type HolderOpts = { pid?: string; epoch?: string };

async function epochOf(ctx: Ctx, name: string, o: HolderOpts): Promise<number> {
  const b = await ctx.open();
  const epoch = parseIntOption(o.epoch, "--epoch", 1);
  if (epoch !== undefined) return epoch;
  return b.locks.epochHeldBy(name, parseIntOption(o.pid, "--pid", 1) ?? process.ppid);
}

export async function acquire(
  ctx: Ctx,
  name: string,
  o: { ttl?: string; wait?: string; pid?: string; owner?: string; run?: string },
): Promise<void> {
  const b = await ctx.open();
  const pid = parseIntOption(o.pid, "--pid", 1) ?? process.ppid;
  const ttlMs = parseIntOption(o.ttl, "--ttl", 1);
  const waitMs = parseIntOption(o.wait, "--wait", 0);
  const g = await b.locks.acquire(name, {
    pid,
    owner: o.owner ?? `cli:${pid}`,
    ...(ttlMs !== undefined ? { ttlMs } : {}),
    ...(waitMs !== undefined ? { waitMs } : {}),
    ...(o.run ? { runId: o.run } : {}),
  });
  ctx.out(g, () => {
    const lines = [
      `Lock ${name} acquired: epoch ${g.epoch}, held by pid ${g.holder.pid}, expires at ${g.holder.expiresAt} unless heartbeated`,
    ];
    if (g.reclaimed) lines.push(`  reclaimed from epoch ${g.reclaimed.epoch}: ${g.reclaimed.proof}: ${g.reclaimed.evidence}`);
    return lines.join("\n");
  });
}

export async function release(ctx: Ctx, name: string, o: HolderOpts): Promise<void> {
  const b = await ctx.open();
  const r = await b.locks.release(name, await epochOf(ctx, name, o));
  ctx.out(r, () => `Lock ${name} (epoch ${r.epoch}) released`);
}

export async function heartbeat(ctx: Ctx, name: string, o: HolderOpts & { ttl?: string }): Promise<void> {
  const b = await ctx.open();
  const ttlMs = parseIntOption(o.ttl, "--ttl", 1);
  const r = await b.locks.heartbeat(name, await epochOf(ctx, name, o), ttlMs !== undefined ? { ttlMs } : {});
  ctx.out(r, () => `Lock ${name} (epoch ${r.epoch}) held until ${r.expiresAt}`);
}

export async function inspect(ctx: Ctx, name: string): Promise<void> {
  const b = await ctx.open();
  const info = await b.locks.inspect(name);
  ctx.out(info, () => renderLock(info));
}

export async function list(ctx: Ctx): Promise<void> {
  const b = await ctx.open();
  const locks = await b.locks.list();
  ctx.out({ locks }, () => (locks.length === 0 ? "No locks." : locks.map(renderLock).join("\n")));
}

function renderLock(l: LockInfo): string {
  if (l.state === "free") return `${l.name}\tfree\tepoch ${l.epoch}${l.releaseReason ? `\t(${l.releaseReason} at ${l.releasedAt})` : ""}`;
  const h = l.holder;
  const stale = l.stale?.stale ? `STALE (${l.stale.proof}): ${l.stale.evidence}` : `live: ${l.stale?.evidence ?? ""}`;
  return `${l.name}\theld\tepoch ${l.epoch}\t${h?.owner} pid ${h?.pid ?? "?"} on ${h?.host ?? "?"}\texpires ${h?.expiresAt}\t${stale}`;
}

/**
 * `baton lock run <name> -- <command…>`: hold the lock (this process is the holder) with
 * heartbeats every ttl/3 while the command runs; release it when the command ends and exit
 * with the command's code. Signals are forwarded. The command sees BATON_LOCK_NAME and
 * BATON_LOCK_EPOCH, so its own guarded writes can carry the epoch. If the lock is lost (this
 * process was paused past the ttl and someone took it over), the command is terminated and
 * the exit code is 3 (`lock_lost`).
 */
export async function run(ctx: Ctx, name: string, command: string[], o: { ttl?: string; wait?: string; owner?: string }): Promise<void> {
  if (command.length === 0)
    throw new BatonError("bad_input", "give the command to run after --, e.g. baton lock run deploy -- make deploy");
  const b = await ctx.open();
  const ttlMs = parseIntOption(o.ttl, "--ttl", 1000) ?? 60_000;
  const waitMs = parseIntOption(o.wait, "--wait", 0);
  const g = await b.locks.acquire(name, {
    pid: process.pid,
    owner: o.owner ?? `lock-run:${process.pid}`,
    ttlMs,
    ...(waitMs !== undefined ? { waitMs } : {}),
  });
  // A signal goes to the command and everything it started: a shell or `npm run` that dies of
  // it does not pass it on, and its children would run on (under pid 1) after the lock is
  // released. The command stays in this process group, so it can still read the terminal. A
  // Ctrl-C (or Ctrl-\) at the terminal has already reached every process in the foreground
  // group, this one's included: those are not sent it a second time (many tools read a second
  // Ctrl-C as "quit without cleaning up"), only the ones in groups of their own.
  let child: ChildProcess | undefined;
  const signalAll = (sig: NodeJS.Signals) => {
    if (child?.pid === undefined) return;
    const me = readProcStat(process.pid);
    const fromTerminal = (sig === "SIGINT" || sig === "SIGQUIT") && me !== undefined && me.tpgid === me.pgrp;
    let tree: { pid: number; pgrp: number }[] = [];
    try {
      tree = descendants(child.pid);
    } catch {
      // /proc unreadable: the command alone
    }
    for (const p of [{ pid: child.pid, pgrp: me?.pgrp ?? -1 }, ...tree]) {
      if (fromTerminal && p.pgrp === me?.pgrp) continue;
      try {
        process.kill(p.pid, sig);
      } catch {
        // gone meanwhile
      }
    }
  };
  // Listening before the command starts (a signal is handled once this code returns, the
  // command started): one that came in between would otherwise end this process at once (the
  // default action), the command left running, unsignalled.
  const forward = (sig: NodeJS.Signals) => () => signalAll(sig);
  const handlers = (["SIGINT", "SIGTERM", "SIGHUP"] as const).map((sig) => [sig, forward(sig)] as const);
  for (const [sig, h] of handlers) process.on(sig, h);
  type Exit = { code: number | null; signal: NodeJS.Signals | null; error?: Error };
  let lost: BatonError | undefined;
  const exit = await (async (): Promise<Exit> => {
    try {
      child = spawn(command[0] as string, command.slice(1), {
        stdio: "inherit",
        env: { ...process.env, BATON_LOCK_NAME: name, BATON_LOCK_EPOCH: String(g.epoch) },
      });
    } catch (error) {
      // Some failures are thrown rather than emitted (a path through a file, an argument list
      // too long, a NUL in an argument): nothing ran, as with those emitted.
      return { code: null, signal: null, error: error as Error };
    }
    const started = child;
    const beat = setInterval(
      () => {
        b.locks.heartbeat(name, g.epoch).catch((err: unknown) => {
          if (!isBatonError(err, "lock_lost") || lost) return; // a busy database: the next beat retries
          lost = err;
          writeStderr(`baton: ${err.message} [lock_lost]; stopping the command\n`);
          signalAll("SIGTERM");
        });
      },
      Math.max(250, Math.floor(ttlMs / 3)),
    );
    try {
      return await new Promise<Exit>((resolve) => {
        started.once("error", (error) => resolve({ code: null, signal: null, error }));
        started.once("exit", (code, signal) => resolve({ code, signal }));
      });
    } finally {
      clearInterval(beat);
    }
  })();
  for (const [sig, h] of handlers) process.off(sig, h);
  if (!lost) {
    await b.locks.release(name, g.epoch).catch((err: unknown) => {
      if (!isBatonError(err, "lock_lost")) throw err;
      lost = err;
      writeStderr(`baton: ${err.message} [lock_lost]; the command ran without the lock at the end\n`);
    });
  }
  if (exit.error) {
    // As shells say it: 127 for a command that is not there, 126 for one that cannot run (a
    // script whose interpreter is missing is ENOENT too, but the file is there: 126).
    const file = command[0] as string;
    const missing = (exit.error as NodeJS.ErrnoException).code === "ENOENT" && !(file.includes("/") && existsSync(file));
    throw new BatonError(
      missing ? "command_not_found" : "command_not_executable",
      missing
        ? `${command[0]}: command not found (nothing ran; the lock was released): check the name and PATH`
        : `cannot run ${command[0]}: ${exit.error.message} (nothing ran; the lock was released)`,
      { command: command[0] },
    );
  }
  if (lost) {
    process.exitCode = 3;
    return;
  }
  process.exitCode = exit.code ?? 128 + ((exit.signal && constants.signals[exit.signal]) || 0);
}

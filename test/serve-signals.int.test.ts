/**
 * `baton serve` and the signals that stop it: hooks replace a server of another build and
 * `baton serve --stop` stops one as soon as `.baton/server.json` names it, which it does from
 * the moment it listens, before it has finished starting. Such a stop must still shut it down in
 * order (requests in flight answered, server.json removed); a stop before it listens ends it as
 * the signal would.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readProcStat } from "../src/platform/process-facts.js";
import { killAll, type LineChild, spawnCommand, spawnNode, waitExit } from "./child-process.js";
import { CLI, cleanupDirs, cli, initWorkspace } from "./helpers.js";

afterEach(() => cleanupDirs());

async function until(cond: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`${what} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 1));
  }
}

describe("baton serve, stopped while it starts", () => {
  it("a SIGTERM as soon as server.json names it: shut down in order, exit 0, server.json removed", async () => {
    for (let round = 0; round < 3; round++) {
      const root = initWorkspace("baton-serve-sig-");
      const file = join(root, ".baton", "server.json");
      const server = spawnNode(CLI, ["serve", "--json", "--port", "0", "--root", root], "baton serve");
      try {
        await until(() => existsSync(file), 20_000, "server.json was written");
        server.proc.kill("SIGTERM");
        expect(await waitExit(server, 20_000), `round ${round}`).toEqual({ code: 0, signal: null });
        expect(existsSync(file), "server.json removed").toBe(false);
      } finally {
        await killAll([server]);
      }
    }
  }, 120_000);

  it("a SIGTERM before it listens ends it as the signal does, at once, with nothing left behind", async () => {
    const root = initWorkspace("baton-serve-sig-");
    // A process server.json names (its start time proven) that will not stop: `--replace` waits
    // for it, so the new server is held before it listens. It says when it was asked to stop.
    // It passes for a server of the workspace: `serve --root <root>` on its command line.
    const holder = spawnCommand(
      "sh",
      ["-c", "trap 'echo asked to stop' TERM; echo ready; while :; do sleep 0.1; done", "serve", "--root", root],
      "holder",
    );
    const file = join(root, ".baton", "server.json");
    let server: LineChild | undefined;
    try {
      await holder.waitForLine((l) => l === "ready", 10_000, "ready");
      const pid = holder.proc.pid as number;
      const startTime = readProcStat(pid)?.startTime;
      const named = { pid, port: 1, token: "t", startedAt: new Date().toISOString(), startTime };
      writeFileSync(file, JSON.stringify(named));
      server = spawnNode(CLI, ["serve", "--json", "--port", "0", "--replace", String(pid), "--root", root], "baton serve");
      await holder.waitForLine((l) => l === "asked to stop", 20_000, "the holder asked to stop");
      const asked = Date.now();
      server.proc.kill("SIGTERM");
      expect(await waitExit(server, 20_000)).toEqual({ code: null, signal: "SIGTERM" });
      expect(Date.now() - asked, "not after --replace's wait").toBeLessThan(5_000);
      expect(JSON.parse(readFileSync(file, "utf8")), "server.json left to its holder").toEqual(named);
    } finally {
      await killAll([holder, ...(server ? [server] : [])]);
    }
  }, 60_000);
});

describe("a server.json Baton did not write", () => {
  it("names a live process of the user with its true start time (as a repository can for pid 1): it is never signalled", async () => {
    const root = initWorkspace("baton-serve-sig-");
    const victim = spawnCommand("sh", ["-c", "trap 'echo signalled' TERM; echo ready; while :; do sleep 0.1; done"], "victim");
    try {
      await victim.waitForLine((l) => l === "ready", 10_000, "ready");
      const pid = victim.proc.pid as number;
      const shipped = {
        pid,
        port: 1,
        token: "t",
        startedAt: new Date().toISOString(),
        startTime: readProcStat(pid)?.startTime,
        version: "0.0.1",
        idleExitMs: 1_800_000,
      };
      writeFileSync(join(root, ".baton", "server.json"), JSON.stringify(shipped));
      const stop = cli(["serve", "--stop", "--root", root, "--json"]);
      expect(stop.code, stop.stderr).not.toBe(0);
      expect(stop.json().error).toMatchObject({ code: "server_running" });
      expect(stop.json().error.message).toContain(`pid ${pid}, which .baton/server.json names, is not a Baton server of this workspace`);
      // Nor does a server asked to replace it (as a hook's start would ask) signal it.
      const replace = cli(["serve", "--json", "--port", "0", "--replace", String(pid), "--root", root]);
      expect(replace.code, replace.stdout).not.toBe(0);
      const doctor = cli(["doctor", "--root", root, "--json"]).json();
      expect(doctor.findings).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            code: "server_file_stale",
            message: expect.stringContaining("is not a Baton server of this workspace"),
          }),
        ]),
      );
      expect(cli(["doctor", "--fix", "--root", root, "--json"]).code).toBe(0);
      expect(existsSync(join(root, ".baton", "server.json"))).toBe(false);
      await new Promise((r) => setTimeout(r, 300));
      expect(victim.lines, "the victim was never signalled").not.toContain("signalled");
      expect(victim.proc.exitCode).toBeNull();
    } finally {
      await killAll([victim]);
    }
  }, 60_000);
});

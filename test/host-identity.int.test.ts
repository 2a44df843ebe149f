/**
 * Host identity with real processes (issue 31 item 2). A `baton lock run` in a pid namespace of
 * its own (`unshare --pid`: a container's, with the same host name) holds a lock that a
 * contender outside never takes on a pid proof: its pid 1 is another process out here. And
 * BATON_HOST_ID makes two processes of one machine two hosts, so a dead holder of the other is
 * freed by its expiry, not by its pid.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { killAll, type LineChild, lockRunArgs, spawnCommand, waitExit } from "./child-process.js";
import { CLI, cleanupDirs, cli, tempDir } from "./helpers.js";

afterAll(() => cleanupDirs());

const UNSHARE = ["--pid", "--fork", "--mount-proc", "--kill-child"];

/** Why this machine cannot start a process in a new pid namespace, or undefined when it can. */
function unshareUnavailable(): string | undefined {
  const r = spawnSync("unshare", [...UNSHARE, "true"], { encoding: "utf8" });
  const err = r.error as NodeJS.ErrnoException | undefined;
  if (err?.code === "ENOENT") return "unshare(1) is not installed";
  if (r.status !== 0 && /permitted|EPERM/i.test(`${r.stderr}`))
    return `unshare --pid is not permitted here (not root, or a sandbox): ${r.stderr.trim()}`;
  return undefined;
}

const noUnshare = unshareUnavailable();

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

describe("a lock held from another pid namespace of the same host name", () => {
  it.skipIf(noUnshare !== undefined)(
    `is never taken on a pid proof by a contender outside it${noUnshare ? ` (skipped: ${noUnshare})` : ""}`,
    async () => {
      const root = tempDir();
      const o = ["--root", root, "--json"];
      cli(["init", ...o]);
      const holder: LineChild = spawnCommand(
        "unshare",
        [...UNSHARE, process.execPath, CLI, ...lockRunArgs("job", root, 6000)],
        "baton lock run in a new pid namespace",
      );
      try {
        await holder.waitForLine((l) => l === "child ready", 20_000, "child ready");
        const info = cli(["lock", "inspect", "job", ...o]).json();
        // Inside its namespace `lock run` is pid 1; out here pid 1 is another process, started
        // at another time: by the host name alone, that was a pid_reused proof.
        expect(info).toMatchObject({ state: "held", epoch: 1, holder: { pid: 1 }, stale: { stale: false, reason: "other_host" } });
        const stat = readFileSync("/proc/1/stat", "utf8");
        const outsideStart = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
        expect(outsideStart).not.toBe(info.holder.startTime);
        const here = cli(["lock", "acquire", "probe", ...o]).json().holder;
        expect(info.holder.host).toBe(here.host);
        expect(info.holder.hostId).not.toBe(here.hostId);
        // A pid proof would free it at once; its heartbeats (every 2 s) keep it from expiring,
        // however slow this machine is today. Three seconds of attempts, as in the issue.
        for (let i = 0; i < 3; i++) {
          const taken = cli(["lock", "acquire", "job", ...o]);
          expect(taken.code, taken.stdout).toBe(3);
          expect(taken.json().error).toMatchObject({ code: "lock_held", epoch: 1 });
          expect(taken.json().error.evidence).toContain("another host of the same name");
          await sleep(1_000);
        }
        expect(cli(["lock", "inspect", "job", ...o]).json()).toMatchObject({ state: "held", epoch: 1, stale: { stale: false } });
        // The holder was never stopped: its command gets SIGTERM only from us, and it releases.
        const inner = readFileSync(`/proc/${holder.proc.pid}/task/${holder.proc.pid}/children`, "utf8").trim().split(/\s+/);
        expect(inner).toHaveLength(1);
        process.kill(Number(inner[0]), "SIGTERM");
        expect(await waitExit(holder, 20_000)).toEqual({ code: 0, signal: null });
        expect(holder.lines).toContain("child got SIGTERM");
        expect(holder.stderr()).not.toContain("lock_lost");
        expect(cli(["lock", "inspect", "job", ...o]).json()).toMatchObject({ state: "free", epoch: 1, releaseReason: "released" });
      } finally {
        await killAll([holder]);
      }
    },
  );
});

describe("BATON_HOST_ID", () => {
  it("makes two processes of this machine two hosts: the other's lock is freed by its expiry, not by its dead pid", async () => {
    const root = tempDir();
    const o = ["--root", root, "--json"];
    const as = (id: string) => ({ env: { BATON_HOST_ID: id } });
    cli(["init", ...o]);
    const dead = spawnSync(process.execPath, ["-e", "0"]).pid as number;
    const g = cli(["lock", "acquire", "x", "--pid", String(dead), "--ttl", "600000", ...o], as("host-a")).json();
    expect(g.holder.hostId).toMatch(/^host-a@/);
    // host-b, and this machine without an id, know nothing of host-a's pids.
    for (const env of [as("host-b"), {}]) {
      expect(cli(["lock", "inspect", "x", ...o], env).json().stale).toMatchObject({ stale: false, reason: "other_host" });
      const r = cli(["lock", "acquire", "x", ...o], env);
      expect(r.code, r.stdout).toBe(3);
      expect(r.json().error.code).toBe("lock_held");
    }
    // host-a itself judges the pid, as before.
    expect(cli(["lock", "inspect", "x", ...o], as("host-a")).json().stale).toMatchObject({ stale: true, proof: "dead_pid" });
    // Its expiry frees host-a's lock for host-b.
    const y = cli(["lock", "acquire", "y", "--pid", String(dead), "--ttl", "1000", ...o], as("host-a")).json();
    await sleep(Math.max(0, Date.parse(y.holder.expiresAt) + 100 - Date.now()));
    expect(cli(["lock", "acquire", "y", ...o], as("host-b")).json()).toMatchObject({ epoch: 2, reclaimed: { epoch: 1, proof: "expired" } });
    const bad = cli(["lock", "list", ...o], as("not valid"));
    expect(bad.code).toBe(2);
    expect(bad.json().error).toMatchObject({ code: "bad_input" });
    expect(bad.json().error.message).toContain("BATON_HOST_ID");
  });
});

/**
 * `baton lock` from the shell: the holder defaults to the calling process (the CLI's parent),
 * a dead holder's lock is reclaimed at once with the proof, and `lock run` holds the lock with
 * heartbeats while a command runs, passes its exit code through, forwards signals and releases.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { processAlive } from "../src/platform/process-facts.js";
import { killAll, lockRunArgs, spawnCommand, spawnNode, waitExit } from "./child-process.js";
import { CLI, cleanupDirs, cli, tempDir } from "./helpers.js";

afterAll(() => cleanupDirs());

describe("baton lock", () => {
  it("acquire / heartbeat / inspect / list / release, and reclaim on a dead pid", () => {
    const root = tempDir();
    const o = ["--root", root, "--json"];
    cli(["init", ...o]);
    const g = cli(["lock", "acquire", "build", "--ttl", "60000", ...o]).json();
    expect(g).toMatchObject({ name: "build", epoch: 1, holder: { pid: process.pid, owner: `cli:${process.pid}`, ttlMs: 60000 } });
    const again = cli(["lock", "acquire", "build", ...o]);
    expect(again.code).toBe(3);
    expect(again.json().error).toMatchObject({ code: "lock_held", epoch: 1, holder: { pid: process.pid } });
    expect(cli(["lock", "heartbeat", "build", "--ttl", "90000", ...o]).json()).toMatchObject({ name: "build", epoch: 1 });
    expect(cli(["lock", "inspect", "build", ...o]).json()).toMatchObject({
      state: "held",
      epoch: 1,
      holder: { ttlMs: 90000 },
      stale: { stale: false, reason: "live" },
    });
    expect(cli(["lock", "list", ...o]).json().locks).toHaveLength(1);
    expect(cli(["lock", "release", "build", ...o]).json()).toMatchObject({ released: true, epoch: 1 });
    expect(cli(["lock", "inspect", "build", ...o]).json()).toMatchObject({ state: "free", epoch: 1, releaseReason: "released" });
    expect(cli(["lock", "release", "build", ...o]).json().error.code).toBe("lock_lost");

    const dead = spawnSync(process.execPath, ["-e", "0"]).pid as number;
    expect(cli(["lock", "acquire", "build", "--pid", String(dead), "--ttl", "3600000", ...o]).json().epoch).toBe(2);
    expect(cli(["lock", "inspect", "build", ...o]).json().stale).toMatchObject({ stale: true, proof: "dead_pid" });
    const notMine = cli(["lock", "release", "build", ...o]);
    expect(notMine.code).toBe(3);
    expect(notMine.json().error.code).toBe("lock_held");
    const taken = cli(["lock", "acquire", "build", ...o]).json();
    expect(taken).toMatchObject({ epoch: 3, reclaimed: { epoch: 2, proof: "dead_pid" } });
    expect(cli(["lock", "heartbeat", "build", "--epoch", "2", ...o]).json().error.code).toBe("lock_lost");
    // Fenced appends from the shell: the holder's epoch is accepted, a stale one refused.
    cli(["session", "start", "--flow", "task", "--id", "t", ...o]);
    const note = (epoch: string) => cli(["event", "t", "note:added", "--data", '{"text":"x"}', "--lock", "build", "--epoch", epoch, ...o]);
    expect(note("3").json().event.seq).toBe(2);
    const stale = note("2");
    expect(stale.code).toBe(3);
    expect(stale.json().error).toMatchObject({ code: "lock_lost", currentEpoch: 3 });
    expect(cli(["lock", "acquire", "bad name", ...o]).code).toBe(2);
  });

  it("lock run passes the exit code through, gives the command its epoch, heartbeats, and releases", async () => {
    const root = tempDir();
    const o = ["--root", root, "--json"];
    cli(["init", ...o]);
    const r = cli([
      "lock",
      "run",
      "job",
      ...o,
      "--",
      process.execPath,
      "-e",
      "process.stdout.write(process.env.BATON_LOCK_EPOCH); process.exit(5)",
    ]);
    expect(r.code).toBe(5);
    expect(r.stdout).toBe("1");
    expect(cli(["lock", "inspect", "job", ...o]).json()).toMatchObject({ state: "free", epoch: 1 });
    // The command's own appends are fenced by the epoch it was handed (BATON_LOCK_*).
    cli(["session", "start", "--flow", "task", "--id", "t", ...o]);
    const inLock = ["event", "t", "note:added", "--data", '{"text":"in lock"}', "--lock", "job", ...o];
    const fenced = cli(["lock", "run", "job", ...o, "--", process.execPath, CLI, ...inLock]);
    expect(fenced.code, fenced.stdout).toBe(0);
    expect(JSON.parse(fenced.stdout).event.seq).toBe(2);

    // A held lock: the command does not run.
    cli(["lock", "acquire", "job", ...o]);
    const refused = cli(["lock", "run", "job", ...o, "--", process.execPath, "-e", "console.log('ran')"]);
    expect(refused.code).toBe(3);
    expect(refused.stdout).not.toContain("ran");
    cli(["lock", "release", "job", ...o]);

    // Heartbeats keep a short ttl alive for a longer command; signals are forwarded.
    const child = spawnNode(CLI, lockRunArgs("job", root, 1000), "baton lock run");
    try {
      await child.waitForLine((l) => l === "child ready", 20_000, "child ready");
      await new Promise((res) => setTimeout(res, 2_000)); // twice the ttl
      const info = cli(["lock", "inspect", "job", ...o]).json();
      expect(info).toMatchObject({ state: "held", epoch: 4, holder: { pid: child.proc.pid }, stale: { stale: false } });
      expect(cli(["lock", "acquire", "job", ...o]).json().error.code).toBe("lock_held");
      child.proc.kill("SIGTERM");
      expect(await waitExit(child, 20_000)).toEqual({ code: 0, signal: null });
      expect(child.lines).toContain("child got SIGTERM");
      expect(cli(["lock", "inspect", "job", ...o]).json()).toMatchObject({ state: "free", epoch: 4, releaseReason: "released" });
    } finally {
      await killAll([child]);
    }
  });

  it("lock run stops what the command started on SIGTERM, and exits 127 / 126 as shells do when it cannot run", async () => {
    const root = tempDir();
    const o = ["--root", root, "--json"];
    cli(["init", ...o]);
    // A shell that starts a worker and dies of SIGTERM without passing it on. The worker writes
    // nowhere, and both pids are kept: whatever fails below, neither is left holding this test's
    // pipe open (waiting for it would hide the failure behind the test's timeout).
    const pidFile = `${tempDir()}/worker.pid`;
    const script = `sleep 300 >/dev/null 2>&1 & echo $$ $! > ${pidFile}; echo started; wait`;
    const child = spawnNode(CLI, ["lock", "run", "deploy", "--root", root, "--", "sh", "-c", script], "baton lock run");
    let worker = 0;
    let shell = 0;
    try {
      await child.waitForLine((l) => l === "started", 20_000, "the worker started");
      [shell, worker] = readFileSync(pidFile, "utf8").trim().split(" ").map(Number) as [number, number];
      expect(processAlive(worker)).toBe(true);
      child.proc.kill("SIGTERM");
      expect(await waitExit(child, 20_000)).toEqual({ code: 143, signal: null });
      for (let i = 0; i < 100 && processAlive(worker); i++) await new Promise((res) => setTimeout(res, 50));
      expect(processAlive(worker), "the shell's worker outlived the lock").toBe(false);
      expect(cli(["lock", "inspect", "deploy", ...o]).json()).toMatchObject({ state: "free", releaseReason: "released" });
    } finally {
      for (const pid of [worker, shell]) if (pid && processAlive(pid)) process.kill(pid, "SIGKILL");
      await killAll([child]);
    }

    const missing = cli(["lock", "run", "deploy", ...o, "--", "no-such-command-here"]);
    expect(missing.code).toBe(127);
    expect(missing.json().error).toMatchObject({ code: "command_not_found", command: "no-such-command-here" });
    const plain = `${tempDir()}/not-executable.sh`;
    writeFileSync(plain, "echo hi\n", { mode: 0o644 });
    const refused = cli(["lock", "run", "deploy", ...o, "--", plain]);
    expect(refused.code).toBe(126);
    expect(refused.json().error.code).toBe("command_not_executable");
    // A script whose interpreter is missing is there but cannot run: 126, as shells say.
    const orphan = `${tempDir()}/orphan.sh`;
    writeFileSync(orphan, "#!/no/such/interpreter\necho hi\n", { mode: 0o755 });
    expect(cli(["lock", "run", "deploy", ...o, "--", orphan]).code).toBe(126);
    // A failure Node throws rather than reports (a path through a file): the same.
    const thrown = cli(["lock", "run", "deploy", ...o, "--", `${plain}/x`]);
    expect(thrown.code, thrown.stdout).toBe(126);
    expect(thrown.json().error.code).toBe("command_not_executable");
    // Nothing ran, and the lock is free again.
    expect(cli(["lock", "inspect", "deploy", ...o]).json()).toMatchObject({ state: "free" });
  }, 120_000); // past cli()'s own 60 s bound, so a hung command is named (a CI run once hung here)

  it("lock run at a terminal: a Ctrl-C reaches each process of the command once", async () => {
    const root = tempDir();
    cli(["init", "--root", root]);
    // A grandchild (under a shell) that counts the SIGINTs it gets, then exits.
    const handler = `${tempDir()}/handler.cjs`;
    writeFileSync(
      handler,
      "let n = 0; process.on('SIGINT', () => { n++; console.log('SIGINT ' + n); setTimeout(() => process.exit(0), 500); }); console.log('handler ready'); setInterval(() => {}, 1000);\n",
    );
    const inner = ["lock", "run", "ctrl-c", "--root", root, "--", "sh", "-c", `'${process.execPath}' '${handler}'`];
    const quoted = [process.execPath, CLI, ...inner].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ");
    const term = spawnCommand("script", ["-qec", quoted, "/dev/null"], "baton lock run on a pseudo-terminal");
    try {
      await term.waitForLine((l) => l.includes("handler ready"), 20_000, "the handler started");
      term.proc.stdin?.write("\x03"); // Ctrl-C, as the terminal's line discipline sends it
      await waitExit(term, 20_000);
      // (The terminal echoes the Ctrl-C as ^C in front of the line.)
      const got = term.lines.flatMap((l) => /SIGINT \d+/.exec(l) ?? []);
      expect(got).toEqual(["SIGINT 1"]);
      expect(cli(["lock", "inspect", "ctrl-c", "--root", root, "--json"]).json()).toMatchObject({ state: "free" });
    } finally {
      await killAll([term]);
    }
  });
});

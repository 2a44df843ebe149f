/**
 * The throwaway cluster cleans up after itself: a test process that exits or is interrupted
 * stops its postmaster and removes the directory, and directories abandoned for over a day
 * (SIGKILLed workers, old kept failures) are removed when the next cluster starts. Skipped
 * without PostgreSQL binaries unless BATON_TEST_POSTGRES=require.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildSync } from "esbuild";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupDirs, REPO, tempDir } from "./helpers.js";
import { pgAvailable } from "./pg-cluster.js";

const available = pgAvailable();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  // A stopped postmaster whose parent never reaps it (a container's init) stays a zombie.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return true;
  }
}

/** A child process that starts a cluster, prints its directory and postmaster pid, then `then`s. */
function child(then: "exit" | "wait"): Promise<{ dir: string; pid: number; exited: Promise<void>; kill: (s: NodeJS.Signals) => void }> {
  const out = join(tempDir("pg-child-"), "child.mjs");
  writeFileSync(
    join(out, "..", "entry.ts"),
    `import { startCluster } from ${JSON.stringify(join(REPO, "test", "pg-cluster.ts"))};
const c = await startCluster();
console.log(JSON.stringify({ dir: c.dir, pid: c.pid() }));
${then === "exit" ? "process.exit(0);" : "setInterval(() => undefined, 1000);"}
`,
  );
  buildSync({
    entryPoints: [join(out, "..", "entry.ts")],
    bundle: true,
    platform: "node",
    format: "esm",
    outfile: out,
    logLevel: "silent",
  });
  const p = spawn(process.execPath, [out], { stdio: ["ignore", "pipe", "inherit"] });
  const exited = new Promise<void>((r) => p.once("exit", () => r()));
  return new Promise((resolve, reject) => {
    let buf = "";
    p.stdout.on("data", (d: Buffer) => {
      buf += d.toString();
      const line = buf.split("\n").find((l) => l.startsWith("{"));
      if (line) resolve({ ...(JSON.parse(line) as { dir: string; pid: number }), exited, kill: (s) => p.kill(s) });
    });
    p.once("exit", (code) => reject(new Error(`child exited ${code} before starting its cluster: ${buf}`)));
  });
}

describe.skipIf(!available)("test clusters clean up after themselves", () => {
  afterAll(() => cleanupDirs());

  it("a process that exits without stopping its cluster stops it and removes the directory", { timeout: 60_000 }, async () => {
    const c = await child("exit");
    await c.exited;
    expect(alive(c.pid)).toBe(false);
    expect(existsSync(c.dir)).toBe(false);
  });

  it("an interrupted process (SIGTERM) stops its cluster and removes the directory", { timeout: 60_000 }, async () => {
    const c = await child("wait");
    expect(alive(c.pid)).toBe(true);
    c.kill("SIGTERM");
    await c.exited;
    expect(alive(c.pid)).toBe(false);
    expect(existsSync(c.dir)).toBe(false);
  });

  it("directories abandoned for over a day are removed when a cluster starts; fresh ones are left", { timeout: 60_000 }, async () => {
    const old = join(tmpdir(), `baton-pg-agedout-${process.pid}`);
    const fresh = join(tmpdir(), `baton-pg-fresh-${process.pid}`);
    for (const d of [old, fresh]) {
      mkdirSync(join(d, "data"), { recursive: true });
      writeFileSync(join(d, "server.log"), "");
    }
    const twoDaysAgo = new Date(Date.now() - 2 * 24 * 60 * 60 * 1000);
    for (const f of [join(old, "server.log"), old]) utimesSync(f, twoDaysAgo, twoDaysAgo);
    const c = await child("exit");
    await c.exited;
    expect(existsSync(old)).toBe(false);
    expect(existsSync(fresh)).toBe(true);
    cleanupDirs();
    rmSync(fresh, { recursive: true, force: true });
  });
});

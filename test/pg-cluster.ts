/**
 * A throwaway PostgreSQL cluster for the PostgreSQL spec files: initdb in a temp dir, run as a
 * non-root user (initdb refuses root; CI runs as root, so the cluster runs as Debian's
 * `postgres` user), listening on 127.0.0.1 on a free port and on a unix socket in the temp dir.
 * Started once per spec file, stopped at its end, and also when the test process exits or is
 * interrupted (a worker that dies must not leave a postmaster and ~86 MB behind). Each test gets
 * its own schema (project); when a test fails the cluster directory is kept and its location
 * printed; kept or abandoned directories older than a day are removed when a cluster starts.
 *
 * Clusters run with fsync and full_page_writes off (fast), except `startCluster({ durable:
 * true })`, which keeps PostgreSQL's defaults for the tests about durability. Note that a
 * SIGKILL of the server alone cannot lose what fsync=off leaves in the OS page cache; the
 * durable cluster makes those tests exercise the real commit path (WAL flush on COMMIT).
 *
 * Without PostgreSQL server binaries the PostgreSQL specs are skipped (the README's commands
 * need no PostgreSQL), unless BATON_TEST_POSTGRES=require (CI sets it after installing them).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface PgCluster {
  url: string;
  dir: string;
  port: number;
  bin: string;
  /** The postmaster's pid (for the kill -9 test). */
  pid(): number;
  /** Start it again after a crash or a stop, on the same port and data. */
  start(): void;
  /** Stop it, keeping the directory when `keep`. */
  stop(keep?: boolean): void;
}

/** Where initdb, pg_ctl and postgres are: PATH, else Debian's /usr/lib/postgresql/<version>/bin. */
export function pgBinDir(): string | undefined {
  const which = spawnSync("sh", ["-c", "command -v initdb"], { encoding: "utf8" });
  const onPath = which.status === 0 ? which.stdout.trim() : "";
  if (onPath) return onPath.replace(/\/initdb$/, "");
  const base = "/usr/lib/postgresql";
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base)
    .filter((v) => existsSync(join(base, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(base, versions[0], "bin") : undefined;
}

export const POSTGRES_REQUIRED = process.env.BATON_TEST_POSTGRES === "require";

/**
 * Whether a spec file's PostgreSQL tests can run. Under BATON_TEST_POSTGRES=require (CI) a
 * missing server fails the file instead of skipping it, so CI never passes without them.
 */
export function pgAvailable(): boolean {
  const available = pgBinDir() !== undefined;
  if (!available && POSTGRES_REQUIRED) throw new Error("BATON_TEST_POSTGRES=require but no PostgreSQL server binaries were found");
  return available;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

/** Clusters this process started and has not stopped: stopped on exit or a signal. */
const live = new Set<PgCluster>();
let hooked = false;

function stopAllOnExit(): void {
  if (hooked) return;
  hooked = true;
  // Synchronous work only: pg_ctl through execFileSync works inside an 'exit' handler.
  process.once("exit", () => {
    for (const c of [...live]) c.stop();
  });
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    const onSignal = () => {
      for (const c of [...live]) c.stop();
      process.removeListener(sig, onSignal);
      process.kill(process.pid, sig); // then die of the signal as before
    };
    process.once(sig, onSignal);
  }
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** Remove cluster directories left for over a day (kept failures, killed workers) whose postmaster is gone. */
function ageOut(): void {
  const tmp = tmpdir();
  let names: string[];
  try {
    names = readdirSync(tmp).filter((n) => n.startsWith("baton-pg-"));
  } catch {
    return;
  }
  const now = Date.now();
  for (const name of names) {
    const dir = join(tmp, name);
    try {
      const log = join(dir, "server.log");
      const touched = Math.max(statSync(dir).mtimeMs, existsSync(log) ? statSync(log).mtimeMs : 0);
      if (now - touched < DAY_MS) continue;
      const pidFile = join(dir, "data", "postmaster.pid");
      if (existsSync(pidFile)) {
        const pid = Number(readFileSync(pidFile, "utf8").split("\n")[0]);
        if (pid > 0 && isAlive(pid)) continue; // someone's cluster still runs there
      }
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // another process removed it first, or it is not ours to read
    }
  }
}

function isAlive(pid: number): boolean {
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

export async function startCluster(opts: { durable?: boolean } = {}): Promise<PgCluster> {
  const bin = pgBinDir();
  if (!bin) throw new Error("PostgreSQL server binaries (initdb, pg_ctl) not found: apt-get install -y postgresql");
  ageOut();
  stopAllOnExit();
  const root = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), "baton-pg-"));
  const data = join(dir, "data");
  const asOwner = (cmd: string, args: string[]) => {
    const [file, argv] = root ? ["runuser", ["-u", "postgres", "--", join(bin, cmd), ...args]] : [join(bin, cmd), args];
    return execFileSync(file as string, argv as string[], { stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" });
  };
  if (root) execFileSync("chown", ["postgres:postgres", dir]);
  asOwner("initdb", ["-D", data, "-U", "baton", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"]);
  const port = await freePort();
  const start = () => {
    // After a SIGKILL the old backends notice their postmaster is gone and exit within moments;
    // until then the data directory's shared memory is still in use, so retry.
    for (let attempt = 1; ; attempt++) {
      try {
        startOnce();
        return;
      } catch (err) {
        if (attempt >= 20) throw err;
        spawnSync("sleep", ["0.25"]);
      }
    }
  };
  const startOnce = () => {
    asOwner("pg_ctl", [
      "-D",
      data,
      "-l",
      join(dir, "server.log"),
      "-w",
      "-t",
      "60",
      "-o",
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=200${opts.durable ? "" : " -c fsync=off -c full_page_writes=off"}`,
      "start",
    ]);
  };
  start();
  let stopped = false;
  const cluster: PgCluster = {
    url: `postgres://baton@127.0.0.1:${port}/postgres`,
    dir,
    port,
    bin,
    pid: () => Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0]),
    start,
    stop(keep = false) {
      if (stopped) return;
      stopped = true;
      live.delete(cluster);
      try {
        asOwner("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
      } catch {
        // already down (a crash test)
      }
      if (keep) {
        console.error(
          `PostgreSQL test cluster kept at ${dir} (a test failed); start it with: ${root ? "runuser -u postgres -- " : ""}${join(bin, "pg_ctl")} -D ${data} -o "-p ${port} -k ${dir}" start`,
        );
      } else rmSync(dir, { recursive: true, force: true });
    },
  };
  live.add(cluster);
  return cluster;
}

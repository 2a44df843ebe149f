/**
 * A throwaway PostgreSQL cluster for the PostgreSQL spec files: initdb in a temp dir, run as a
 * non-root user (initdb refuses root; CI runs as root, so the cluster runs as Debian's
 * `postgres` user), listening on 127.0.0.1 on a free port and on a unix socket in the temp dir.
 * Started once per spec file, stopped at its end. Each test gets its own schema (project); when
 * a test fails the cluster directory is kept and its location printed.
 *
 * Without PostgreSQL server binaries the PostgreSQL specs are skipped (the README's commands
 * need no PostgreSQL), unless BATON_TEST_POSTGRES=require (CI sets it after installing them).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
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

export async function startCluster(): Promise<PgCluster> {
  const bin = pgBinDir();
  if (!bin) throw new Error("PostgreSQL server binaries (initdb, pg_ctl) not found: apt-get install -y postgresql");
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
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=off -c full_page_writes=off`,
      "start",
    ]);
  };
  start();
  return {
    url: `postgres://baton@127.0.0.1:${port}/postgres`,
    dir,
    port,
    bin,
    pid: () => Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0]),
    start,
    stop(keep = false) {
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
}

/**
 * Choosing a PostgreSQL store without a reachable server: nothing is written down until the
 * store answered, no password is ever printed, and a missing `pg` driver is a typed error that
 * says to install it. Needs no PostgreSQL (postgres-store.int.test.ts covers a live cluster).
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isBatonError, openPostgresStore } from "../src/index.js";
import { CLI, cleanupDirs, cli, REPO, tempDir } from "./helpers.js";

const unreachable = "postgres://baton@127.0.0.1:1/postgres";

describe("choosing a PostgreSQL store", () => {
  afterAll(() => cleanupDirs());

  it("init --store connects before writing: an unreachable store leaves no config.json", () => {
    const root = tempDir();
    const r = cli(["init", "--root", root, "--store", unreachable, "--project", "p", "--json"], { env: { BATON_STORE_TIMEOUT_MS: "200" } });
    expect(r.code, r.stdout + r.stderr).toBe(5);
    expect(r.json().error.code).toBe("storage_unavailable");
    expect(existsSync(join(root, ".baton", "config.json"))).toBe(false);
  });

  it("init --store reads the store limits from the environment as every later open does", () => {
    const root = tempDir();
    for (const [name, value] of [
      ["BATON_STORE_STATEMENT_TIMEOUT_MS", "0"],
      ["BATON_STORE_STATEMENT_TIMEOUT_MS", "soon"],
      ["BATON_STORE_TIMEOUT_MS", "-1"],
    ] as const) {
      const r = cli(["init", "--root", root, "--store", unreachable, "--project", "p", "--json"], { env: { [name]: value } });
      expect(r.code, `${name}=${value}: ${r.stdout}${r.stderr}`).toBe(2);
      expect(r.json().error).toMatchObject({ code: "bad_input", message: expect.stringContaining(name) });
      expect(existsSync(join(root, ".baton", "config.json"))).toBe(false);
    }
  });

  it("prints no password from a URL it cannot parse or from its query string", () => {
    const root = tempDir();
    expect(cli(["init", "--root", root]).code).toBe(0);
    for (const store of ["postgres://u:s3cret@h:99999/db", "postgres://baton@127.0.0.1:1/postgres?password=s3cret"]) {
      const r = cli(["status", "--root", root, "--json"], {
        env: { BATON_STORE: store, BATON_PROJECT: "p", BATON_STORE_TIMEOUT_MS: "200" },
      });
      expect(r.code).not.toBe(0);
      expect(r.stdout + r.stderr).not.toContain("s3cret");
    }
    const w = cli(["init", "--root", root, "--store", "postgres://baton@127.0.0.1:1/db?password=s3cret", "--project", "p", "--json"]);
    expect(w.code).toBe(2);
    expect(w.stdout + w.stderr).not.toContain("s3cret");
  });

  it("a configured store without the pg driver says to install it (typed, exit 5)", () => {
    const root = tempDir();
    expect(cli(["init", "--root", root]).code).toBe(0);
    const r = spawnSync(process.execPath, ["-r", join(REPO, "test", "fixtures", "no-pg.cjs"), CLI, "status", "--root", root, "--json"], {
      env: { ...process.env, BATON_STORE: unreachable, BATON_PROJECT: "p" },
      encoding: "utf8",
    });
    expect(r.status, r.stdout + r.stderr).toBe(5);
    const err = JSON.parse(r.stdout).error;
    expect(err.code).toBe("storage_unavailable");
    expect(err.message).toMatch(/npm install pg/);
  });

  it("the CLI reads the PostgreSQL backend's bundle only when a PostgreSQL store is configured", () => {
    const root = tempDir();
    expect(cli(["init", "--root", root]).code).toBe(0);
    const bundles = (env: Record<string, string>) => {
      const r = spawnSync(
        process.execPath,
        ["-r", join(REPO, "test", "fixtures", "reads-log.cjs"), CLI, "status", "--root", root, "--json"],
        {
          env: { ...process.env, BATON_STORE_TIMEOUT_MS: "200", ...env },
          encoding: "utf8",
        },
      );
      return /bundles read: (.*)/.exec(r.stderr)?.[1]?.split(" ") ?? [];
    };
    const onSqlite = bundles({ BATON_STORE: "" });
    expect(onSqlite, "the fixture saw the CLI's own bundle").toContain("cli.cjs");
    expect(onSqlite).not.toContain("pg.cjs");
    expect(bundles({ BATON_STORE: unreachable, BATON_PROJECT: "p" })).toContain("pg.cjs");
  });

  it("a refused connection fails after two quick tries, not after the whole connect timeout", { timeout: 20_000 }, async () => {
    // The timeout is far beyond the test's own: only the fast path can finish in time.
    const err = await openPostgresStore({ url: unreachable, project: "p", connectTimeoutMs: 600_000 }).catch((e) => e);
    expect(isBatonError(err, "storage_unavailable"), String(err)).toBe(true);
    expect(err.message).toMatch(/pg_isready/);
  });
});

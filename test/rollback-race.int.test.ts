/**
 * Restores never write outside the workspace, even while the tree changes under them: a child
 * process swaps the workspace directory `sub/` with a symbolic link to an outside directory as
 * fast as it can while rollbacks (library and CLI) restore `sub/b.txt`, over and over. The
 * outside directory must stay byte-for-byte as it was, and no rollback may answer `internal`.
 * Race-free on Linux (directories pinned by descriptor, docs/architecture.md); the CI size is
 * here, a larger one is `node bench/restore-race.mjs`.
 */
import { spawn } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isBatonError, openBaton } from "../src/index.js";
import { FIXTURES } from "./child-process.js";
import { CLI, cleanupDirs, initWorkspace, tempDir } from "./helpers.js";

afterAll(() => cleanupDirs());

const LIBRARY_ROLLBACKS = 1_500;
const CLI_ROLLBACKS = 40;

function snapshotDir(dir: string): Record<string, string> {
  return Object.fromEntries(readdirSync(dir).map((n) => [n, readFileSync(join(dir, n), "utf8")]));
}

function cliRollback(root: string, to: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [CLI, "rollback", "--to", to, "--session", "s1", "--json", "--root", root], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    c.stdout.on("data", (d) => {
      out += d;
    });
    c.stderr.on("data", (d) => {
      out += d;
    });
    c.on("exit", (code) => resolve({ code, out }));
  });
}

describe("rollback under a directory swapped for a link", () => {
  it("never writes outside the workspace and never answers internal", async () => {
    const root = initWorkspace("baton-race-");
    const outside = tempDir("baton-outside-");
    writeFileSync(join(outside, "b.txt"), "OUTSIDE: must never change\n");
    writeFileSync(join(outside, "keep.txt"), "outside neighbour\n");
    const before = snapshotDir(outside);

    mkdirSync(join(root, "sub"));
    const b = await openBaton({ root, durability: "relaxed" });
    await b.sessions.start({ flow: "task", id: "s1" });
    writeFileSync(join(root, "sub", "b.txt"), "version A\n");
    const a = (await b.checkpoints.create("s1", { files: ["sub/b.txt"] })).checkpoint.id;
    writeFileSync(join(root, "sub", "b.txt"), "version B\n");
    const bb = (await b.checkpoints.create("s1", { files: ["sub/b.txt"] })).checkpoint.id;
    // Pinned: each rollback adds a safety checkpoint, and retention must not prune the targets.
    await b.checkpoints.pin(a);
    await b.checkpoints.pin(bb);

    const swapper = spawn(process.execPath, [join(FIXTURES, "dir-swapper.mjs"), root, outside], { stdio: ["ignore", "pipe", "inherit"] });
    const outcomes = new Map<string, number>();
    const count = (k: string) => outcomes.set(k, (outcomes.get(k) ?? 0) + 1);
    try {
      await new Promise<void>((resolve) => swapper.stdout.once("data", () => resolve()));
      for (let i = 0; i < LIBRARY_ROLLBACKS; i++) {
        try {
          await b.checkpoints.rollback("s1", { to: i % 2 ? a : bb });
          count("ok");
        } catch (err) {
          if (!isBatonError(err)) throw err;
          expect(err.code, `rollback ${i}: ${err.message}`).not.toBe("internal");
          count(err.code);
        }
      }
      const cli = await Promise.all(Array.from({ length: CLI_ROLLBACKS }, (_, i) => cliRollback(root, i % 2 ? a : bb)));
      for (const r of cli) {
        expect(r.out, "a CLI rollback answered internal").not.toMatch(/"internal"|please report it/);
        count(r.code === 0 ? "cli ok" : `cli exit ${r.code}`);
      }
    } finally {
      swapper.kill("SIGKILL");
      await new Promise((r) => swapper.once("exit", r));
      await b.close();
    }
    expect(snapshotDir(outside), `outcomes: ${JSON.stringify(Object.fromEntries(outcomes))}`).toEqual(before);
    // The race was real: some rollbacks met the link and were refused, and some restored.
    const summary = JSON.stringify(Object.fromEntries(outcomes));
    expect(outcomes.get("unsafe_path") ?? 0, summary).toBeGreaterThan(0);
    expect(outcomes.get("ok") ?? 0, summary).toBeGreaterThan(0);
    expect(outcomes.get("checkpoint_pruned") ?? 0, summary).toBe(0);
  }, 180_000); // a fixed amount of work (1,540 rollbacks): ~20 s on an idle machine, past 60 s under load
});

/**
 * `baton serve` on a full disk (a real filesystem with no free inode, mounted in a private
 * mount namespace): it fails with io_error, leaves no server.json (not even an empty one),
 * closes its listener and exits non-zero instead of listening forever.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { FIXTURES } from "./child-process.js";
import { cleanupDirs, REPO, tempDir } from "./helpers.js";

afterAll(() => cleanupDirs());

describe("baton serve on a full disk", () => {
  it("answers io_error, writes no server.json and exits", () => {
    const base = tempDir("baton-full-");
    const mnt = join(base, "mnt");
    mkdirSync(mnt);
    // Root (CI) gets a private mount namespace; anyone else also maps to root in a user namespace.
    const asRoot = process.getuid?.() === 0;
    const r = spawnSync(
      "unshare",
      [
        ...(asRoot ? [] : ["--user", "--map-root-user"]),
        "--mount",
        "--propagation",
        "private",
        "sh",
        join(FIXTURES, "full-disk-serve.sh"),
        mnt,
        REPO,
      ],
      { encoding: "utf8", timeout: 60_000 },
    );
    expect(r.status, `the scenario could not run (unshare, mount): ${r.stdout}${r.stderr}`).toBe(0);
    const facts = Object.fromEntries(
      r.stdout
        .trim()
        .split("\n")
        .map((l) => l.split("=") as [string, string]),
    );
    const out = readFileSync(join(base, "serve.out"), "utf8");
    const err = readFileSync(join(base, "serve.err"), "utf8");
    expect(Number(facts.filled), "the filesystem filled up").toBeGreaterThan(0);
    expect(facts.exit, `serve exit (124: still listening after 20 s). stdout: ${out} stderr: ${err}`).toBe("5");
    expect(JSON.parse(out).error).toMatchObject({ code: "io_error", message: expect.stringMatching(/server\.json.*(ENOSPC|no space)/i) });
    expect(facts.server_json).toBe("absent");
    expect(facts.leftovers).toBe("0");
  });
});

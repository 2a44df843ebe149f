/**
 * Progress lines for long work (cli/progress.ts): a person at a terminal sees how far a
 * whole-tree checkpoint or a rollback got, on stderr, erased when the result is printed; a pipe,
 * --json and --quiet see none. The terminal is a real pseudo-terminal (util-linux `script`).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Ctx } from "../src/cli/context.js";
import { PROGRESS_AFTER_MS, progress } from "../src/cli/progress.js";
import { CLI, cleanupDirs, cli, tempDir } from "./helpers.js";

afterAll(() => cleanupDirs());

/** `baton …` with a pseudo-terminal for stdin, stdout and stderr: what the terminal showed. */
function onTerminal(args: string[], env: Record<string, string> = {}, exit = 0): string {
  const quoted = [process.execPath, CLI, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ");
  const r = spawnSync("script", ["-qec", quoted, "/dev/null"], {
    encoding: "utf8",
    env: { ...process.env, TERM: "xterm", ...env },
    timeout: 120_000,
  });
  expect(r.status, r.stdout + r.stderr).toBe(exit);
  return r.stdout;
}

describe("progress lines", () => {
  it("show how far a whole-tree checkpoint and a rollback got, on a terminal only", () => {
    const root = tempDir();
    cli(["--root", root, "init"]);
    for (let d = 0; d < 10; d++) {
      mkdirSync(join(root, `d${d}`));
      for (let i = 0; i < 30; i++) writeFileSync(join(root, `d${d}`, `f${i}.txt`), `one ${d} ${i}\n`);
    }
    cli(["--root", root, "session", "start", "--flow", "task"]);
    const now = { BATON_PROGRESS_AFTER_MS: "0" };
    const shown = onTerminal(["--root", root, "checkpoint", "--all"], now);
    expect(shown).toMatch(/\r\x1b\[Kcheckpoint: [\d,]+ files found…/);
    expect(shown).toMatch(/\r\x1b\[Kcheckpoint: [\d,]+\/300 new or changed files stored…/);
    // Erased before the result, which stands on a clean line.
    expect(shown).toMatch(/\r\x1b\[KCheckpoint cp-[0-9a-f]+ \(tree, 300 file\(s\)/);

    for (let d = 0; d < 10; d++) for (let i = 0; i < 30; i++) writeFileSync(join(root, `d${d}`, `f${i}.txt`), `two ${d} ${i}\n`);
    const back = onTerminal(["--root", root, "rollback"], now);
    expect(back).toMatch(/rollback: [\d,]+\/300 files written beside their place…/);
    expect(back).toMatch(/rollback: [\d,]+\/300 files restored…/);
    expect(back).toMatch(/\r\x1b\[KRolled back /);

    // No terminal, --json or --quiet: no progress at all.
    expect(cli(["--root", root, "checkpoint", "--all"], { env: now }).stderr).toBe("");
    expect(onTerminal(["--root", root, "--json", "checkpoint", "--all"], now)).not.toContain("\x1b[K");
    // --quiet: nothing but the error.
    for (let d = 0; d < 10; d++) writeFileSync(join(root, `d${d}`, "f0.txt"), "three\n");
    const quiet = onTerminal(["--root", root, "--quiet", "rollback"], now);
    expect(quiet).toBe("");
    expect(onTerminal(["--root", root, "--quiet", "rollback", "--to", "cp-nope"], now, 4)).toMatch(
      /^\x1b\[31mbaton:\x1b\[39m .*\[checkpoint_not_found\]\r?\n$/,
    );
  });

  it("waits before the first line, redraws at most every 100 ms, and erases only what it drew", () => {
    const writes: string[] = [];
    const clock = { t: 0 };
    const line = progress(new Ctx({}), { tty: true, now: () => clock.t, write: (s) => writes.push(s) });
    let built = 0;
    const text = () => `step ${++built}`;
    line.update(text);
    clock.t = PROGRESS_AFTER_MS - 1;
    line.update(text);
    expect(writes).toEqual([]);
    expect(built).toBe(0); // the text is not even built before it would be shown
    clock.t = PROGRESS_AFTER_MS;
    line.update(text);
    clock.t += 99;
    line.update(text);
    clock.t += 1;
    line.update(text);
    line.update(text, "next"); // a new phase: drawn at once
    line.end();
    line.end();
    expect(writes).toEqual(["\r\x1b[Kstep 1", "\r\x1b[Kstep 2", "\r\x1b[Kstep 3", "\r\x1b[K"]);

    const quick: string[] = [];
    const fast = progress(new Ctx({}), { tty: true, now: () => 0, write: (s) => quick.push(s) });
    fast.update(() => "never");
    fast.end();
    expect(quick).toEqual([]);
    for (const opts of [{ json: true }, { quiet: true }]) {
      const silent: string[] = [];
      const p = progress(new Ctx(opts), { tty: true, now: () => 10_000, write: (s) => silent.push(s) });
      p.update(() => "hidden");
      p.end();
      expect(silent).toEqual([]);
    }
  });
});

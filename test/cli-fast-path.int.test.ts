/**
 * The commands an agent runs on every turn (`status`, `resume`) run without the full command
 * table (src/cli/fast.ts): they must take the same options as the full CLI, give the same
 * answers, and really not load it.
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { FAST } from "../src/cli/fast.js";
import { buildProgram } from "../src/cli/main.js";
import { cleanupDirs, cli, REPO, tempDir, writeAt } from "./helpers.js";

afterAll(() => cleanupDirs());

/** An option as `--name` plus `-x` when it has a short flag. */
const flagsOf = (o: { long?: string; short?: string }) => [o.long, o.short].filter((f): f is string => f !== undefined).sort();

describe("the CLI's fast path", () => {
  it("takes exactly the options of the full CLI for each of its commands", () => {
    const program = buildProgram();
    const globals = program.options.filter((o) => !["--version", "--help"].includes(o.long ?? "")).flatMap(flagsOf);
    for (const [name, fast] of Object.entries(FAST)) {
      const full = program.commands.find((c) => c.name() === name);
      expect(full, name).toBeDefined();
      const want = [...globals, ...(full?.options ?? []).flatMap(flagsOf)].sort();
      const have = Object.entries(fast.options)
        .flatMap(([long, o]) => [`--${long}`, ...(o.short ? [`-${o.short}`] : [])])
        .sort();
      expect(have, `options of ${name}`).toEqual(want);
      expect(fast.positionals ?? 0, `arguments of ${name}`).toBe(full?.registeredArguments.length ?? 0);
    }
  });

  it("answers status and resume without the full CLI, as the full CLI does", () => {
    const root = tempDir();
    spawnSync("git", ["init", "-q"], { cwd: root });
    writeAt(root, "notes.md", "one\n");
    expect(cli(["init"], { cwd: root }).code).toBe(0);
    expect(cli(["session", "start", "--flow", "task", "--id", "s1", "--title", "Fast path"], { cwd: root }).code).toBe(0);
    expect(cli(["files", "add", "notes.md", "--session", "s1", "--question", "Is the fast path the same?"], { cwd: root }).code).toBe(0);

    // An install without the full CLI: only the fast path can answer.
    const install = tempDir();
    cpSync(join(REPO, "bin"), join(install, "bin"), { recursive: true });
    mkdirSync(join(install, "dist"));
    // ask.cjs first asks a running server (none here), then hands over to cli.cjs.
    for (const f of ["ask.cjs", "cli.cjs"]) cpSync(join(REPO, "dist", f), join(install, "dist", f));
    cpSync(join(REPO, "package.json"), join(install, "package.json"));
    symlinkSync(join(REPO, "node_modules"), join(install, "node_modules"));
    const fast = (args: string[]) =>
      spawnSync(process.execPath, [join(install, "bin", "baton.cjs"), ...args], { cwd: root, encoding: "utf8" });
    for (const args of [
      ["status", "--json"],
      ["resume", "--json"],
      ["resume", "s1", "--json"],
      ["resume", "-s", "s1", "--json", "-q"],
      ["resume", "--session=s1", "--root", root, "--json"],
    ]) {
      const r = fast(args);
      expect(r.status, `${args.join(" ")}: ${r.stderr}`).toBe(0);
      // The full CLI, reached by a global option before the command, says the same.
      const full = cli(["--json", ...args.filter((a) => a !== "--json")], { cwd: root });
      expect(full.code).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual(JSON.parse(full.stdout));
    }
    // Human output too, and a refusal keeps its code and message.
    expect(fast(["resume", "s1"]).stdout).toBe(cli(["--root", root, "resume", "s1"], { cwd: root }).stdout);
    const refused = fast(["resume", "s1", "--reason", "x", "--json"]);
    expect(refused.status).toBe(2);
    expect(JSON.parse(refused.stdout).error).toMatchObject({ code: "bad_input", message: "--reason goes with --unpause" });
  });
});

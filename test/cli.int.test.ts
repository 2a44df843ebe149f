import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CLI, cleanupDirs, cli, tempDir } from "./helpers.js";

afterAll(() => cleanupDirs());

function workspace(): string {
  const root = tempDir();
  expect(cli(["init", "--root", root]).code).toBe(0);
  return root;
}

describe("baton CLI", () => {
  it("finds the workspace by walking up, or from BATON_ROOT, and says how to create one", () => {
    const root = workspace();
    const sub = join(root, "a", "b");
    mkdirSync(sub, { recursive: true });
    expect(cli(["session", "start", "--flow", "task", "--id", "t1", "--json"], { cwd: sub }).json().sessionId).toBe("t1");
    const elsewhere = tempDir();
    expect(cli(["status", "--json"], { cwd: elsewhere, env: { BATON_ROOT: root } }).json().sessions[0].sessionId).toBe("t1");
    const none = cli(["status", "--json"], { cwd: elsewhere });
    expect(none.code).toBe(4);
    expect(none.json().error.code).toBe("workspace_not_found");
    expect(none.json().error.message).toContain("baton init");
  });

  it("prints errors as {error:{code,message}} under --json with documented exit codes", () => {
    const root = workspace();
    cli(["session", "start", "--flow", "live-variant", "--id", "lv", "--root", root]);
    const invalid = cli(["event", "accepted", "--root", root, "--json"]);
    expect(invalid.code).toBe(3);
    expect(invalid.json().error).toMatchObject({ code: "invalid_transition", phase: "configuring" });
    expect(invalid.json().error.allowed).toContain("generate");
    const badJson = cli(["event", "generate", "--data", "{oops", "--root", root, "--json"]);
    expect(badJson.code).toBe(2);
    expect(badJson.json().error.code).toBe("bad_input");
    const deep = cli(["event", "generate", "--data", `{"x":${"[".repeat(4_000)}${"]".repeat(4_000)}}`, "--root", root, "--json"]);
    expect(deep.code, deep.stdout + deep.stderr).toBe(2);
    expect(deep.json().error).toMatchObject({ code: "bad_input", message: expect.stringMatching(/nested deeper than 64 levels/) });
    const badOption = cli(["status", "--frobnicate", "--root", root, "--json"]);
    expect(badOption.code).toBe(2);
    expect(badOption.json().error.code).toBe("bad_input");
    const human = cli(["event", "accepted", "--root", root]);
    expect(human.code).toBe(3);
    expect(human.stderr).toMatch(/^baton: .*not allowed in phase configuring.*\[invalid_transition\]/);
    expect(cli(["--help"]).code).toBe(0);
    // Numbers past what a store binds or a date holds: bad_input, not the driver's error.
    for (const [args, env] of [
      [["nack", "lease-x", "--delay", "9000000000000000"], {}],
      [["nack", "lease-x", "--delay", "99999999999999999999"], {}],
      [["checkpoint", "--all"], { BATON_CHECKPOINT_RETAIN: "99999999999999999999" }],
    ] as [string[], Record<string, string>][]) {
      const r = cli([...args, "--root", root, "--json"], { env });
      expect([r.code, r.json().error.code], `${args.join(" ")}: ${r.stdout}`).toEqual([2, "bad_input"]);
    }
    // A retention past the bound says where it came from: the variable, or the config file's key.
    const fromEnv = cli(["checkpoint", "--all", "--root", root, "--json"], { env: { BATON_CHECKPOINT_RETAIN: "2000000" } });
    expect(fromEnv.json().error.message).toMatch(/^BATON_CHECKPOINT_RETAIN must be a whole number from 1 to 1000000, got "2000000"/);
    writeFileSync(join(root, ".baton", "config.json"), '{"checkpoints": {"retain": 2000000}}');
    expect(cli(["trust", "--root", root]).code).toBe(0);
    const fromConfig = cli(["checkpoint", "--all", "--root", root, "--json"]);
    expect(fromConfig.json().error.message).toMatch(/checkpoints\.retain.*a whole number from 1 to 1000000/);
    rmSync(join(root, ".baton", "config.json"));
    // Nothing was appended by the failures.
    expect(cli(["export", "lv", "--root", root]).stdout.trim().split("\n")).toHaveLength(1);
  });

  it("defaults to the single active session and lists them when ambiguous", () => {
    const root = workspace();
    cli(["session", "start", "--flow", "task", "--id", "a", "--root", root]);
    expect(cli(["event", "start", "--root", root, "--json"]).json().event.sessionId).toBe("a");
    cli(["session", "start", "--flow", "task", "--id", "b", "--root", root]);
    const amb = cli(["event", "start", "--root", root, "--json"]);
    expect(amb.code).toBe(3);
    expect(amb.json().error.code).toBe("ambiguous_session");
    expect(amb.json().error.sessions.map((s: { sessionId: string }) => s.sessionId)).toEqual(["a", "b"]);
    expect(cli(["event", "b", "start", "--root", root, "--json"]).json().phase).toBe("in_progress");
    expect(cli(["event", "start", "--session", "b", "--root", root, "--json"]).json().error.code).toBe("invalid_transition");
  });

  it("reports an unwritable workspace as a structured error", () => {
    const root = tempDir();
    writeFileSync(join(root, ".baton"), "not a directory");
    const r = cli(["init", "--root", root, "--json"]);
    expect(r.code).toBe(5);
    expect(r.json().error.code).toBe("workspace_unwritable");
    expect(r.json().error.message, "a file in the way is not a permission problem").toMatch(
      /\.baton is there but is not a directory.*move that file away/,
    );
    const root2 = tempDir();
    mkdirSync(join(root2, ".baton", "baton.db"), { recursive: true });
    const r2 = cli(["status", "--root", root2, "--json"]);
    expect(r2.code).toBe(5);
    expect(r2.json().error.code).toBe("workspace_unwritable");
  });

  it("says what is wrong, not something else: the workspace itself named as a file, a config.json that is a FIFO", () => {
    const root = workspace();
    expect(cli(["session", "start", "--flow", "task", "--root", root]).code).toBe(0);
    for (const args of [
      ["checkpoint", "--files", "."],
      ["checkpoint", "--files", `${root}/`],
      ["files", "add", "."],
    ]) {
      const r = cli([...args, "--root", root, "--json"], { cwd: root });
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.json().error.message, args.join(" ")).toMatch(/is the workspace itself: name files inside it/);
    }
    spawnSync("mkfifo", [join(root, ".baton", "config.json")]);
    const trust = cli(["trust", "--root", root, "--json"]);
    expect(trust.code).toBe(2);
    expect(trust.json().error.message).toMatch(/not a regular file; make it a regular file holding a JSON object/);
  });

  it("records facets and shows them in status and resume, flagging files changed since they were recorded", () => {
    const root = workspace();
    const o = ["--root", root, "--json"];
    cli(["session", "start", "--flow", "task", "--id", "t", "--title", "Auth", ...o]);
    cli(["event", "start", ...o]);
    writeFileSync(join(root, "a.ts"), "one");
    writeFileSync(join(root, "b.ts"), "two");
    expect(cli(["files", "add", "a.ts", "b.ts", "--question", "why?", ...o]).code).toBe(0);
    expect(
      cli(["decision", "add", "Use PKCE", "--reason", "public client", "--alternative", "implicit", "--no-reversible", ...o]).code,
    ).toBe(0);
    const blocker = cli(["blocker", "add", "No creds", "--affects", "e2e", ...o]).json();
    expect(cli(["position", "set", "--plan", "oauth", "--task", "callback", ...o]).code).toBe(0);
    expect(cli(["progress", "set", "--total", "4", "--completed", "1", ...o]).code).toBe(0);
    expect(cli(["progress", "set", "--total", "1", "--completed", "4", ...o]).json().error.code).toBe("bad_input");
    // An unknown id is not_found (exit 4) for blockers and runs alike, as for `run heartbeat`.
    const noBlocker = cli(["blocker", "resolve", "nope", ...o]);
    expect([noBlocker.code, noBlocker.json().error.code]).toEqual([4, "not_found"]);
    writeFileSync(join(root, "b.ts"), "changed");
    const st = cli(["status", ...o]).json().sessions[0];
    expect(st.activeBlockers.map((b: { id: string }) => b.id)).toEqual([blocker.blockerId]);
    expect(st.recentDecisions[0]).toMatchObject({ decision: "Use PKCE", reversible: false, alternatives: ["implicit"] });
    expect(st.position).toEqual({ plan: "oauth", task: "callback" });
    expect(st.progress).toEqual({ total: 4, completed: 1, percent: 25 });
    const res = cli(["resume", "t", ...o]).json();
    expect(res.verification.ok).toBe(false);
    expect(res.verification.files).toEqual([
      { path: "a.ts", state: "unchanged", review: false },
      { path: "b.ts", state: "changed", review: true },
    ]);
    expect(res.facets.resume.openQuestions).toEqual(["why?"]);
    expect(res.recentEvents.at(-1).type).toBe("progress:set");
    const human = cli(["resume", "t", "--root", root]).stdout;
    expect(human).toContain("REVIEW b.ts (changed)");
    const runStart = cli(["run", "start", "--agent", "codex", ...o]).json();
    expect(cli(["run", "end", runStart.runId, "--reason", "handoff", ...o]).code).toBe(0);
    for (const cmd of [
      ["run", "end"],
      ["run", "heartbeat"],
    ]) {
      const none = cli([...cmd, "run-nope", ...o]);
      expect([none.code, none.json().error.code], cmd.join(" ")).toEqual([4, "not_found"]);
    }
    expect(cli(["state", "--write", ...o]).json().file).toBe(join(root, ".baton/sessions/t/STATE.md"));
    expect(readFileSync(join(root, ".baton/sessions/t/STATE.md"), "utf8")).toContain("| codex |");
  });

  it("loads user flows from .baton/flows and rejects invalid ones with the line", () => {
    const root = workspace();
    mkdirSync(join(root, ".baton/flows"));
    const flow = {
      name: "review",
      initial: "open",
      phases: {
        open: {
          on: { approve: { to: "merged" } },
          next: { action: "review_code", reason: "Review the change.", command: "baton event {session} approve" },
        },
        merged: { terminal: true, next: { action: "none", reason: "Merged.", command: "" } },
      },
    };
    writeFileSync(join(root, ".baton/flows/review.json"), JSON.stringify(flow, null, 2));
    const started = cli(["session", "start", "--flow", "review", "--id", "r", "--root", root, "--json"]).json();
    expect(started.nextAction).toEqual({ action: "review_code", reason: "Review the change.", command: "baton event r approve" });
    const bad = JSON.stringify({ ...flow, name: "broken", initial: "closed" }, null, 2);
    writeFileSync(join(root, ".baton/flows/broken.json"), bad);
    const v = cli(["flows", "validate", join(root, ".baton/flows/broken.json"), "--json"]);
    expect(v.code).toBe(2);
    const problem = v.json().results[0].problems[0];
    expect(problem).toMatchObject({ path: "initial", line: 3 });
    const use = cli(["session", "start", "--flow", "broken", "--root", root, "--json"]);
    expect(use.code).toBe(2);
    expect(use.json().error.code).toBe("flow_invalid");
    expect(use.json().error.message).toContain("line 3");
    const list = cli(["flows", "list", "--root", root, "--json"]).json();
    expect(list.flows.map((f: { name: string }) => f.name)).toEqual(["task", "external-run", "live-variant", "review"]);
    expect(list.invalid).toHaveLength(1);
    // A file claiming a built-in's name is reported, and the built-in stays built in.
    writeFileSync(join(root, ".baton/flows/mine.json"), JSON.stringify({ ...flow, name: "task" }, null, 2));
    const claimed = cli(["flows", "list", "--root", root, "--json"]).json();
    expect(claimed.flows.map((f: { name: string; builtin: boolean }) => [f.name, f.builtin])).toEqual([
      ["task", true],
      ["external-run", true],
      ["live-variant", true],
      ["review", false],
    ]);
    expect(claimed.invalid.map((r: { name: string }) => r.name)).toEqual(["broken", "task"]);

    // A repository's links never bring a flow from outside: a linked file, or the folder itself linked.
    const outside = tempDir();
    writeFileSync(join(outside, "ext.json"), JSON.stringify({ ...flow, name: "ext" }, null, 2));
    symlinkSync(join(outside, "ext.json"), join(root, ".baton/flows/ext.json"));
    const linked = cli(["flows", "list", "--root", root, "--json"]).json();
    expect(linked.flows.map((f: { name: string }) => f.name)).not.toContain("ext");
    expect(linked.invalid.find((r: { file: string }) => r.file.endsWith("ext.json")).problems[0].message).toMatch(/a symbolic link/);
    rmSync(join(root, ".baton/flows"), { recursive: true });
    symlinkSync(outside, join(root, ".baton/flows"));
    const folder = cli(["flows", "list", "--root", root, "--json"]).json();
    expect(folder.flows.map((f: { name: string }) => f.name)).toEqual(["task", "external-run", "live-variant"]);
    expect(folder.invalid).toEqual([
      { file: join(root, ".baton/flows"), problems: [expect.objectContaining({ message: expect.stringMatching(/is a symbolic link/) })] },
    ]);
  });

  it("recommends persisting to the true source when markers sit in a generated file", () => {
    const root = workspace();
    const o = ["--root", root, "--json"];
    cli(["session", "start", "--flow", "live-variant", "--id", "lv", ...o]);
    cli(["event", "generate", "--actor", "browser", ...o]);
    mkdirSync(join(root, "dist"));
    writeFileSync(
      join(root, "dist/index.html"),
      '<!-- baton-variants-start -->\n<div data-baton-original></div>\n<div data-baton-variant="v1"></div>\n',
    );
    cli(["event", "source_wrapped", "--data", '{"file":"dist/index.html"}', ...o]);
    expect(cli(["status", ...o]).json().sessions[0].nextAction.action).toBe("persist_fallback_to_true_source");
  });

  it("exports the journal as JSON Lines and rebuilds cleanly", () => {
    const root = workspace();
    const o = ["--root", root];
    cli(["session", "start", "--flow", "task", "--id", "t", ...o]);
    cli(["event", "start", "--id", "s1", ...o]);
    const dup = cli(["event", "start", "--id", "s1", ...o, "--json"]).json();
    expect(dup.duplicate).toBe(true);
    const lines = cli(["export", "t", ...o])
      .stdout.trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.seq, l.type])).toEqual([
      [1, "session:started"],
      [2, "start"],
    ]);
    const out = join(root, "t.jsonl");
    expect(cli(["export", "t", "--out", out, ...o, "--json"]).json().events).toBe(2);
    expect(readFileSync(out, "utf8").trim().split("\n")).toHaveLength(2);
    // The journal is the project's: the file is its owner's alone.
    expect(statSync(out).mode & 0o777).toBe(0o600);
    // A --out nobody can write to is the user's to fix, said plainly (not Node's stream error), and nothing is written.
    for (const args of [
      ["export", "t", "--out", join(root, "no-such-folder", "t.jsonl")],
      ["ledger", "export", "--session", "t", "--out", join(root, "no-such-folder", "l.jsonl")],
      ["export", "t", "--out", root],
    ]) {
      const r = cli([...args, ...o, "--json"]);
      expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(2);
      expect(r.stderr).not.toMatch(/Unhandled|\n\s+at /);
      expect(r.json().error.code).toBe("bad_input");
      expect(r.json().error.message).toMatch(/^cannot write .* \((ENOENT|EISDIR)\): give a file in a folder that exists/);
    }
    expect(existsSync(join(root, "no-such-folder"))).toBe(false);
    // A named pipe would block the open: refused. A full disk is an io_error, however small the export.
    spawnSync("mkfifo", [join(root, "pipe")]);
    const piped = cli(["export", "t", "--out", join(root, "pipe"), ...o, "--json"]);
    expect([piped.code, piped.json().error.code]).toEqual([2, "bad_input"]);
    expect(piped.json().error.message).toContain("a named pipe nothing reads");
    // A pipe something reads is written to (`--out >(gzip > x)`, say), however soon the reader
    // takes its end: until `cat` opens the pipe the export is refused, then it is written.
    const read = join(root, "read.jsonl");
    const reader = spawnSync(
      "sh",
      [
        "-c",
        `timeout 50 cat "${join(root, "pipe")}" > "${read}" & i=0; until "$0" "$@" 2>/dev/null; do i=$((i+1)); [ $i -lt 200 ] || exit 9; sleep 0.05; done; wait`,
        process.execPath,
        CLI,
        "export",
        "t",
        "--out",
        join(root, "pipe"),
        ...o,
      ],
      { timeout: 55_000 },
    );
    expect(reader.status, reader.stderr?.toString()).toBe(0);
    expect(readFileSync(read, "utf8").trim().split("\n")).toHaveLength(2);
    const full = cli(["export", "t", "--out", "/dev/full", ...o, "--json"]);
    expect([full.code, full.json().error.code], full.stderr).toEqual([5, "io_error"]);
    // A file that was there is private after the export too.
    writeFileSync(out, "old\n", { mode: 0o644 });
    chmodSync(out, 0o644);
    expect(cli(["export", "t", "--out", out, ...o]).code).toBe(0);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    expect(cli(["rebuild", ...o, "--json"]).json().sessions).toEqual([
      { sessionId: "t", repaired: false, lastSeq: 2, phase: "in_progress" },
    ]);
    // artifact get --out takes the same care (after the journal's checks: adding one appends an event).
    writeFileSync(join(root, "shot.png"), "png");
    expect(cli(["artifact", "add", join(root, "shot.png"), "--session", "t", ...o]).code).toBe(0);
    // Outside the workspace (inside, the file is replaced, never written through).
    const outside = join(tempDir(), "pipe");
    spawnSync("mkfifo", [outside]);
    const artifact = cli(["artifact", "get", "shot.png", "--session", "t", "--out", outside, ...o, "--json"]);
    expect([artifact.code, artifact.json().error?.code], artifact.stdout).toEqual([2, "bad_input"]);
  });
});

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { failureFingerprint } from "../src/core/fingerprint.js";
import { claude } from "../src/core/hooks/claude.js";
import { codex } from "../src/core/hooks/codex.js";
import { gemini } from "../src/core/hooks/gemini.js";
import type { AgentAdapter, HookEvent, PayloadIO } from "../src/core/hooks/types.js";
import { failurePlace, isWaiting, observationDigest, spiralTurn } from "../src/core/spiral/turn.js";

const JEST = (time: string, line = 14) =>
  `FAIL src/cart.test.ts\n  ● cart › applies the discount\n\n    Expected: 30\n    Received: 25\n\n      at Object.<anonymous> (src/cart.test.ts:${line}:23)\n\nTests:       1 failed, 11 passed, 12 total\nTime:        ${time} s`;

describe("what a call returned", () => {
  it("is the same when only times, durations, process ids and object ids changed", () => {
    const a = observationDigest(`Formatted 40 files in 13ms.\nat 2026-01-05T09:00:01.120Z pid 4121 commit 3f2a1c9e`);
    const b = observationDigest(`Formatted 40 files in 12ms.\nat 2026-01-05T09:03:44.007Z pid 977 commit 8be4d07a`);
    expect(a).toBe(b);
    expect(observationDigest("Formatted 41 files in 12ms.")).not.toBe(observationDigest("Formatted 40 files in 12ms."));
    // Gemini CLI's shell result names a new process group every run.
    const shell = (pgid: number) => `<untrusted_context>\nOutput: (empty)\nProcess Group PGID: ${pgid}\n</untrusted_context>`;
    expect(observationDigest(shell(2640))).toBe(observationDigest(shell(3903)));
  });

  it("reads Claude Code's {stdout, stderr}, and a long output by its start and its end", () => {
    expect(observationDigest({ stdout: "ok\n", stderr: "", interrupted: false })).toBe(
      observationDigest({ stdout: "ok\n", stderr: "", interrupted: false, noOutputExpected: true }),
    );
    const long = (last: string) => `${"line\n".repeat(10_000)}${last}`;
    expect(observationDigest(long("12 passed"))).not.toBe(observationDigest(long("11 passed")));
  });
});

describe("a failure and its place", () => {
  it("keeps the place: the same error on another line is another failure, of the same kind", () => {
    const at = (line: number) => `src/cart.ts(${line},5): error TS2322: Type 'string' is not assignable to type 'number'.`;
    expect(failurePlace(at(10))).not.toBe(failurePlace(at(18)));
    expect(failureFingerprint(at(10))).toBe(failureFingerprint(at(18)));
    expect(failurePlace(JEST("2.41"))).toBe(failurePlace(JEST("2.52")));
    expect(failurePlace(JEST("2.41"))).not.toBe(failurePlace(JEST("2.41", 22)));
  });

  it("leaves out progress lines that are not the failure", () => {
    const err = "error[E0425]: cannot find value `conf` in this scope\n --> src/main.rs:12:20\nerror: could not compile `svc`";
    expect(failurePlace(`   Compiling svc v0.1.0 (/work/svc)\n${err}`)).toBe(failurePlace(err));
  });

  it("is built from the redacted text: a secret neither shapes it nor leaks through it", () => {
    const token = (t: string) => `fatal: could not read from https://x:${t}@github.com/acme/app.git: authentication failed`;
    expect(failurePlace(token("ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"))).toBe(
      failurePlace(token("ghp_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb")),
    );
  });
});

describe("waiting", () => {
  const shell = (command: string, error?: string) => ({
    tool: "Bash",
    command,
    status: error ? ("error" as const) : ("success" as const),
    ...(error ? { error } : {}),
  });

  it("polls and sleeps wait on something outside the workspace; builds, tests and git do not", () => {
    for (const c of [
      "sleep 30 && gh run view 812 --json status",
      "gh pr checks 42",
      "kubectl rollout status deploy/web --timeout=60s",
      "curl -sf localhost:3000/health",
      "pg_isready -h localhost",
      "docker compose ps",
      "tail -n 20 build.log",
    ])
      expect(isWaiting(shell(c)), c).toBe(true);
    for (const c of ["npm test", "git status --short", "npx tsc --noEmit", "cargo build", "ls src", "make build"])
      expect(isWaiting(shell(c)), c).toBe(false);
    expect(isWaiting({ tool: "BashOutput", status: "success" })).toBe(true);
  });

  it("a retry after a network failure or a rate limit waits; one after an ordinary failure does not", () => {
    for (const e of [
      "npm ERR! code ETIMEDOUT",
      "gh: API rate limit exceeded for user ID 48211. (HTTP 403)",
      "fatal: unable to access 'https://github.com/acme/app.git/': The requested URL returned error: 503",
      "Error: socket hang up",
    ])
      expect(isWaiting(shell("npm install", e)), e).toBe(true);
    expect(isWaiting(shell("npm test", "TypeError: retry is not a function"))).toBe(false);
  });

  it("a waiting turn names what it waits on, redacted and clipped", () => {
    const t = spiralTurn({
      tool: "Bash",
      input: {},
      command: "curl -H 'Authorization: Bearer sk-live-0123456789abcdefghij' localhost:3000",
      status: "success",
      output: "",
    });
    expect(t.waiting).toBe(true);
    expect(t.waitingOn).toMatch(/^curl -H 'Authorization: Bearer /);
    expect(t.waitingOn).not.toContain("sk-live-0123456789abcdefghij");
    expect(spiralTurn({ tool: "Bash", input: {}, command: `sleep 1; ${"x".repeat(300)}`, status: "success" }).waitingOn).toHaveLength(120);
  });
});

/** What each agent's hooks report, through its adapter, as the detector sees it. */
describe("the results reaching the detector from each agent's hook payloads", () => {
  const fixture = (dir: string, name: string) =>
    JSON.parse(readFileSync(join(import.meta.dirname, "fixtures", dir, `${name}.json`), "utf8")) as Record<string, unknown>;
  const seen = (adapter: AgentAdapter, p: Record<string, unknown>, io?: PayloadIO) => {
    const ev = adapter.parse(p.hook_event_name as string, p, "/", io) as Extract<HookEvent, { kind: "after_tool" }>;
    expect(ev.kind).toBe("after_tool");
    return spiralTurn({
      tool: ev.tool.name,
      input: ev.tool.input,
      ...(ev.tool.command !== undefined ? { command: ev.tool.command } : {}),
      status: ev.status,
      ...(ev.output !== undefined ? { output: ev.output } : {}),
      ...(ev.error !== undefined ? { error: ev.error } : {}),
    });
  };
  const otherFile = (p: Record<string, unknown>, f: (s: string) => string) => JSON.parse(f(JSON.stringify(p))) as Record<string, unknown>;

  it("Claude Code: the same failing command is the same failure; another file fails elsewhere", () => {
    const p = fixture("hooks/claude", "real-post-tool-use-failure-bash");
    const first = seen(claude, p);
    expect(first).toMatchObject({
      status: "error",
      failurePlace: expect.stringMatching(/^fa-/),
      fingerprint: expect.stringMatching(/^fp-/),
    });
    // Another invocation: a new call id and duration, the same failure.
    expect(seen(claude, { ...p, tool_use_id: "toolu_other", duration_ms: 512 })).toMatchObject({
      argsHash: first.argsHash,
      failurePlace: first.failurePlace,
    });
    const other = seen(
      claude,
      otherFile(p, (s) => s.replaceAll("does-not-exist.txt", "missing.txt")),
    );
    expect(other.failurePlace).not.toBe(first.failurePlace);
  });

  it("Claude Code: the same output is the same observation, a changed output is not", () => {
    const p = fixture("agents/claude", "PostToolUse.Bash");
    const t = seen(claude, p);
    expect(t).toMatchObject({ status: "success", observationHash: expect.any(String) });
    expect(seen(claude, { ...p, tool_use_id: "toolu_again" }).observationHash).toBe(t.observationHash);
    const changed = { ...p, tool_response: { ...(p.tool_response as object), stdout: "made-by-shell\n" } };
    expect(seen(claude, changed).observationHash).not.toBe(t.observationHash);
  });

  it("Codex: a failure (its exit code from the transcript) is recognised again; its output changing is a new failure", () => {
    const p = fixture("agents/codex", "PostToolUse.Bash.failure");
    const io: PayloadIO = { codexCallOutcome: () => ({ exitCode: 1 }) };
    const first = seen(codex, p, io);
    expect(first).toMatchObject({ status: "error", failurePlace: expect.stringMatching(/^fa-/) });
    expect(seen(codex, { ...p, tool_use_id: "call_again", turn_id: "turn-2" }, io).failurePlace).toBe(first.failurePlace);
    expect(seen(codex, { ...p, tool_response: "cat: other.txt: No such file or directory\n" }, io).failurePlace).not.toBe(
      first.failurePlace,
    );
    const ok = fixture("agents/codex", "PostToolUse.Bash");
    const success = seen(codex, ok, { codexCallOutcome: () => ({ exitCode: 0 }) });
    expect(success).toMatchObject({ status: "success", observationHash: observationDigest("one\n") });
    expect(seen(codex, { ...ok, tool_response: "two\n" }, { codexCallOutcome: () => ({ exitCode: 0 }) }).observationHash).not.toBe(
      success.observationHash,
    );
  });

  it("Gemini CLI: a new process group each run is the same result; another output is not", () => {
    const fail = fixture("hooks/gemini", "real-after-tool-shell-failure");
    const pgid = (p: Record<string, unknown>, n: number) => otherFile(p, (s) => s.replace(/PGID: \d+/, `PGID: ${n}`));
    const first = seen(gemini, fail);
    expect(first).toMatchObject({ status: "error", failurePlace: expect.stringMatching(/^fa-/) });
    expect(seen(gemini, pgid(fail, 7777)).failurePlace).toBe(first.failurePlace);
    const ok = fixture("hooks/gemini", "real-after-tool-shell");
    const success = seen(gemini, ok);
    expect(seen(gemini, pgid(ok, 9191)).observationHash).toBe(success.observationHash);
    expect(
      seen(
        gemini,
        otherFile(ok, (s) => s.replace("Output: (empty)", "Output: made-by-shell")),
      ).observationHash,
    ).not.toBe(success.observationHash);
  });
});

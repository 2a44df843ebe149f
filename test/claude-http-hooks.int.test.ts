/**
 * Reading Claude Code's local settings for Baton's HTTP hooks (platform/claude-http-hooks.ts):
 * the entries' targets, and a file a repository ships in that place that is not a settings file
 * (a FIFO) never holds a hook or the server's config watch.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { httpHooksOn, httpHooksTargets } from "../src/platform/claude-http-hooks.js";
import { cleanupDirs, cli, initWorkspace, tempDir } from "./helpers.js";

afterEach(() => cleanupDirs());

const entry = (url: string, token?: string) => ({
  type: "http",
  url,
  ...(token !== undefined ? { headers: { Authorization: `Bearer ${token}` } } : {}),
});

describe("Claude Code's HTTP hooks in the local settings", () => {
  it("lists each of Baton's entries with its host, port and token, and nothing else", () => {
    const root = tempDir("baton-http-hooks-");
    mkdirSync(join(root, ".claude"));
    const settings = {
      hooks: {
        PreToolUse: [{ matcher: "*", hooks: [entry("http://127.0.0.1:4100/v1/agent-hooks/claude/PreToolUse", "t1")] }],
        PostToolUse: [
          {
            hooks: [
              entry("http://localhost:4101/v1/agent-hooks/claude/PostToolUse"),
              entry("http://example.com:4100/v1/agent-hooks/claude/PostToolUse", "t1"),
              { type: "command", command: "echo http://127.0.0.1:4100/v1/agent-hooks/claude/PostToolUse" },
              entry("http://127.0.0.1:4100/v1/agent-hooks/codex/PostToolUse", "t1"),
            ],
          },
        ],
      },
    };
    writeFileSync(join(root, ".claude", "settings.local.json"), JSON.stringify(settings));
    expect(httpHooksTargets(root)).toEqual([
      { host: "127.0.0.1", port: 4100, token: "t1" },
      { host: "localhost", port: 4101 },
    ]);
    expect(httpHooksOn(root)).toBe(true);
  });

  it("is off with no file, a file that is not JSON, or none of Baton's entries", () => {
    const root = tempDir("baton-http-hooks-");
    expect(httpHooksOn(root)).toBe(false);
    mkdirSync(join(root, ".claude"));
    writeFileSync(join(root, ".claude", "settings.local.json"), "{ not json");
    expect(httpHooksTargets(root)).toEqual([]);
    expect(httpHooksOn(root)).toBe(false);
    // Caught half written (the server's config watch): Baton's entries still count by their text.
    writeFileSync(
      join(root, ".claude", "settings.local.json"),
      '{"hooks":{"PreToolUse":[{"hooks":[{"type":"http","url":"http://127.0.0.1:4100/v1/agent-hooks/claude/PreToolUse"',
    );
    expect(httpHooksOn(root)).toBe(true);
    writeFileSync(
      join(root, ".claude", "settings.local.json"),
      JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: "command", command: "true" }] }] } }),
    );
    expect(httpHooksOn(root)).toBe(false);
  });

  it("a FIFO in the settings' place is no settings file: read without blocking, in a process and in a hook", () => {
    const root = initWorkspace("baton-http-fifo-");
    mkdirSync(join(root, ".claude"), { recursive: true });
    execFileSync("mkfifo", [join(root, ".claude", "settings.local.json")]);
    expect(httpHooksOn(root)).toBe(false);
    // Every prompt hook asks whether the HTTP hooks are on (the report of missed calls).
    const transcript = join(tempDir("baton-transcript-"), "t.jsonl");
    writeFileSync(transcript, "");
    const payload = { session_id: "s1", cwd: root, hook_event_name: "UserPromptSubmit", prompt: "go on", transcript_path: transcript };
    const r = cli(["hook", "claude", "UserPromptSubmit", "--root", root], { input: JSON.stringify(payload) });
    expect(r.code, r.stderr).toBe(0);
  });
});

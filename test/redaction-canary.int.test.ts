/**
 * The canary: secrets from the redaction corpus are planted through Baton's real entry points
 * (hook payloads on stdin, `baton ledger record`, journal facet events, lessons), then every byte
 * under `.baton/` (database, WAL, blobs, logs, STATE.md) and every export is searched for each
 * of them, and for its base64. None may be found.
 *
 * Checkpoint blobs hold file contents verbatim, by design (a rollback restores them), so secrets
 * are planted in tool arguments, results, errors and notes, never in files a checkpoint copies.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupDirs, cli, initWorkspace, REPO, tempDir } from "./helpers.js";
import { generate, type Positive } from "./redaction/corpus.js";

const FIXTURES = join(REPO, "test", "fixtures", "hooks", "claude");

/** One placement per provider: the contexts are taken in turn, each provider in the next one that fits it. */
function plantings(): Positive[] {
  const corpus = generate(2026);
  const byProvider = new Map<string, Positive[]>();
  for (const p of corpus.positives) if (p.text !== undefined) byProvider.set(p.provider, [...(byProvider.get(p.provider) ?? []), p]);
  return [...byProvider.values()].map((ps, i) => ps[(i * 7) % ps.length] as Positive);
}

function payload(name: string, vars: Record<string, unknown>): string {
  const fixture = JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), "utf8")) as Record<string, unknown>;
  const text = JSON.stringify(fixture).split("{{session}}").join("agent-canary");
  return JSON.stringify({ ...JSON.parse(text), ...vars });
}

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...filesUnder(p));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

/** What would show a secret: 12-character slices of its random material, and the secret whole in base64. */
function needles(p: Positive): string[] {
  const out: string[] = [];
  for (const m of p.material) {
    if (m.length <= 12) out.push(m);
    else for (let i = 0; i + 12 <= m.length; i += 12) out.push(m.slice(i, i + 12));
  }
  out.push(Buffer.from(p.planted).toString("base64").slice(4, 40));
  return out;
}

describe("canary: no planted secret reaches .baton/ or an export", () => {
  afterAll(cleanupDirs);
  const planted = plantings();
  const root = initWorkspace("baton-canary-", { "src/app.ts": "export const ok = true;\n" });
  const run = (args: string[], input?: string) => {
    const r = cli([...args, "--root", root], { cwd: root, input });
    expect(r.code, `baton ${args.slice(0, 3).join(" ")} exited ${r.code}: ${r.stderr}`).toBe(0);
    return r;
  };
  const hook = (name: string, event: string, vars: Record<string, unknown>) =>
    run(["hook", "claude", event], payload(name, { cwd: root, ...vars }));

  // About 30 CLI processes: minutes on a loaded machine.
  it("plants secrets of every provider through hooks, the ledger, journal events and lessons", { timeout: 600_000 }, () => {
    expect(planted.length).toBeGreaterThanOrEqual(200);
    hook("session-start-startup", "SessionStart", {});
    const sid = (JSON.parse(run(["status", "--json"]).stdout).sessions[0] as { sessionId: string }).sessionId;
    const groups: Positive[][] = [];
    for (let i = 0; i < planted.length; i += 10) groups.push(planted.slice(i, i + 10));
    groups.forEach((g, i) => {
      const text = g.map((p) => p.text as string).join("\n");
      switch (i % 6) {
        case 0:
          hook("user-prompt", "UserPromptSubmit", { prompt: `please use these:\n${text}` });
          break;
        case 1:
          hook("pre-bash", "PreToolUse", { tool_use_id: `call-${i}`, tool_input: { command: text, description: "configure" } });
          hook("post-bash", "PostToolUse", {
            tool_use_id: `call-${i}`,
            tool_input: { command: text, description: "configure" },
            tool_response: { stdout: text, stderr: "", interrupted: false, isImage: false },
          });
          break;
        case 2:
          hook("post-bash-failure", "PostToolUseFailure", {
            tool_use_id: `call-${i}`,
            tool_input: { command: "npm run deploy" },
            error: text,
          });
          break;
        case 3:
          run([
            "ledger",
            "record",
            "--session",
            sid,
            "--tool",
            "Bash",
            "--status",
            "error",
            "--args",
            JSON.stringify({ command: text }),
            "--error",
            text,
          ]);
          run(["ledger", "record", "--session", sid, "--tool", "fetch", "--status", "success", "--args", "-", "--observation", text], text);
          break;
        case 4:
          run(["decision", "add", text, "--session", sid]);
          run(["blocker", "add", text, "--session", sid]);
          break;
        case 5:
          // Cut at a line's end: a secret cut in half (`mysql://app:api-c16d…` without its `@`) is no longer one any rule can know.
          run(["lessons", "add", text.slice(0, text.lastIndexOf("\n", 900)), "--workspace"]);
          break;
      }
    });
    hook("pre-compact", "PreCompact", { trigger: "auto" }); // writes STATE.md
  });

  it("finds none of them in any byte under .baton/, in STATE.md, LESSONS.md or the exports", { timeout: 300_000 }, () => {
    const out = tempDir("baton-canary-out-");
    const sid = (JSON.parse(run(["status", "--json"]).stdout).sessions[0] as { sessionId: string }).sessionId;
    run(["export", sid, "-o", join(out, "journal.jsonl")]);
    run(["ledger", "export", "--all", "-o", join(out, "ledger.jsonl")]);
    run(["ledger", "export", "--all", "--format", "otlp", "-o", join(out, "ledger.otlp.jsonl")]);
    run(["state", sid, "--json"]);
    const files = [...filesUnder(join(root, ".baton")), ...filesUnder(out), join(root, "LESSONS.md")];
    expect(files.some((f) => f.endsWith("baton.db"))).toBe(true);
    expect(statSync(join(out, "ledger.otlp.jsonl")).size).toBeGreaterThan(0);
    const hay = files.map((f) => [f, readFileSync(f).toString("latin1")] as const);
    const found: string[] = [];
    for (const p of planted)
      for (const n of needles(p))
        for (const [f, text] of hay) if (text.includes(n)) found.push(`${p.provider}/${p.context}: "${n}" in ${f.slice(root.length)}`);
    expect(found, found.slice(0, 20).join("\n")).toEqual([]);
  });
});

/**
 * Baton's OpenCode plugin as OpenCode loads it (the file `baton hooks install opencode` writes,
 * imported as a module and its hooks called with OpenCode's shapes, @opencode-ai/plugin 1.18.33),
 * against a real baton process and a real workspace. The real CLI runs it in
 * test/agents/opencode.e2e.test.ts.
 */
import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { opencodePluginText } from "../src/hooks/opencode-plugin.js";
import { CLI, cleanupDirs, cli, tempDir, writeAt } from "./helpers.js";

afterEach(() => cleanupDirs());

async function loadPlugin(root: string, command: string, suffix: string): Promise<any> {
  const r = cli(["hooks", "install", "opencode", "--root", root, "--command", command, "--json"], { env: { BATON_HOOK_SERVER: "off" } });
  expect(r.code, r.stderr).toBe(0);
  // A new URL per load: the module cache would give the first file's plugin again.
  const mod = await import(`${pathToFileURL(r.json().file).href}?${suffix}`);
  return mod.BatonPlugin({ directory: root, worktree: root });
}

/** The pids of this process's `baton hook opencode --relay` children (the plugin's relays). */
function relays(): number[] {
  const pids: number[] = [];
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid !== process.pid) continue;
      if (readFileSync(`/proc/${d}/cmdline`, "utf8").split("\0").includes("--relay")) pids.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

function userMessage(sessionID: string, text: string) {
  const message = { id: "msg_1", role: "user", sessionID };
  return { message, parts: [{ id: "prt_1", sessionID, messageID: "msg_1", type: "text", text }] };
}

/**
 * A workspace with a.txt and a started task session, the plugin loaded on this baton, and the
 * hooks answered in-process (no server) while `body` runs.
 */
async function withSession(title: string, suffix: string, body: (root: string, hooks: any) => Promise<void>): Promise<void> {
  const root = tempDir("baton-opencode-");
  writeAt(root, "a.txt", "one\n");
  expect(cli(["init", "--root", root]).code).toBe(0);
  expect(cli(["session", "start", "--root", root, "--flow", "task", "--title", title]).code).toBe(0);
  process.env.BATON_HOOK_SERVER = "off";
  try {
    await body(root, await loadPlugin(root, `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)}`, suffix));
  } finally {
    delete process.env.BATON_HOOK_SERVER;
  }
}

describe("Baton's OpenCode plugin", () => {
  it("adds the session's state to the first prompt, checkpoints before a write, records the result, and adds nothing for a read", async () => {
    await withSession("Parser rework", "a", async (root, hooks) => {
      await hooks.event({ event: { type: "session.created", properties: { info: { id: "ses_1" } } } });
      const out = userMessage("ses_1", "Make the planned changes.");
      await hooks["chat.message"]({ sessionID: "ses_1", messageID: "msg_1" }, out);
      expect(out.parts).toHaveLength(2);
      expect(out.parts[1]).toMatchObject({ type: "text", synthetic: true, sessionID: "ses_1", messageID: "msg_1" });
      expect(out.parts[1]?.text).toContain("Baton: where this work stands");
      expect((out.parts[1]?.id ?? "") > "prt_1", "the part sorts after the user's text").toBe(true);

      const args = { filePath: `${root}/a.txt`, content: "two\n" };
      await hooks["tool.execute.before"]({ tool: "write", sessionID: "ses_1", callID: "call_1" }, { args });
      const checkpoints = cli(["--json", "checkpoints", "--root", root]).json().checkpoints;
      expect(checkpoints.map((c: any) => `${c.kind}:${c.toolName}`)).toEqual(["targeted:write"]);
      writeAt(root, "a.txt", "two\n");
      const result = { title: "a.txt", output: "Wrote file successfully.", metadata: {} };
      await hooks["tool.execute.after"]({ tool: "write", sessionID: "ses_1", callID: "call_1", args }, result);
      expect(result.output).toBe("Wrote file successfully.");
      await hooks["tool.execute.before"]({ tool: "read", sessionID: "ses_1", callID: "call_2" }, { args: { filePath: `${root}/a.txt` } });
      expect(cli(["--json", "checkpoints", "--root", root]).json().checkpoints).toHaveLength(1);
      const ledger = cli(["--json", "ledger", "list", "--root", root]).json().nodes;
      expect(ledger.some((n: any) => JSON.stringify(n).includes("call_1"))).toBe(true);

      // A tool that threw: OpenCode's error part (captured from the CLI) is recorded as that call's failure, once.
      const ev = JSON.parse(readFileSync(join(import.meta.dirname, "fixtures", "hooks", "opencode", "tool-part-error.json"), "utf8"));
      ev.properties.part.sessionID = "ses_1";
      ev.properties.part.state.input.filePath = `${root}/a.txt`;
      await hooks.event({ event: ev });
      await hooks.event({ event: ev });
      const failed = cli(["--json", "ledger", "list", "--root", root])
        .json()
        .nodes.filter((n: any) => JSON.stringify(n).includes(ev.properties.part.callID));
      expect(failed.map((n: any) => n.status)).toEqual(["error"]);
    });
  }, 120_000);

  it("a subagent's child session works in its parent's lane family: its calls checkpointed there, its prompt not taken for the user's", async () => {
    await withSession("Subagents", "sub", async (root, hooks) => {
      await hooks.event({ event: { type: "session.created", properties: { info: { id: "ses_top" } } } });
      await hooks["chat.message"]({ sessionID: "ses_top", messageID: "msg_1" }, userMessage("ses_top", "Refactor the parser."));
      const write = (sessionID: string, callID: string, content: string) =>
        hooks["tool.execute.before"]({ tool: "write", sessionID, callID }, { args: { filePath: `${root}/a.txt`, content } });
      await write("ses_top", "call_top", "two\n");
      writeAt(root, "a.txt", "two\n");
      // The task tool's child session (OpenCode 1.18: session.created with info.parentID).
      await hooks.event({ event: { type: "session.created", properties: { info: { id: "ses_sub", parentID: "ses_top" } } } });
      // Its prompt is the parent's instruction: "undo that" in it rolls nothing back and adds nothing.
      const told = userMessage("ses_sub", "undo that");
      await hooks["chat.message"]({ sessionID: "ses_sub", messageID: "msg_1" }, told);
      expect(told.parts).toHaveLength(1);
      expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("two\n");
      // Its write of a file the parent wrote this turn is its family's: checkpointed, not refused.
      await expect(write("ses_sub", "call_sub", "three\n")).resolves.toBeUndefined();
      const checkpoints = cli(["--json", "checkpoints", "--root", root]).json().checkpoints;
      expect(checkpoints).toHaveLength(2);
      writeAt(root, "a.txt", "three\n");
      const args = { filePath: `${root}/a.txt`, content: "three\n" };
      await hooks["tool.execute.after"](
        { tool: "write", sessionID: "ses_sub", callID: "call_sub", args },
        { title: "a.txt", output: "ok", metadata: {} },
      );
      const lanes = cli(["--json", "lanes", "--root", root])
        .json()
        .lanes.map((l: any) => l.lane);
      expect(lanes).toEqual(expect.arrayContaining(["opencode:ses_top", "opencode:ses_top/ses_sub"]));
      const shellEnv = { env: {} as Record<string, string> };
      await hooks["shell.env"]({ sessionID: "ses_sub" }, shellEnv);
      expect(shellEnv.env.BATON_OPENCODE_SESSION_ID).toBe("ses_top");
    });
  }, 120_000);

  it("a committed plugin runs the baton of PATH's absolute folders only: a repository's node_modules/.bin is never run", async () => {
    const root = tempDir("baton-opencode-");
    expect(cli(["init", "--root", root]).code).toBe(0);
    const marker = join(root, "ran");
    writeAt(root, "node_modules/.bin/baton", `#!/bin/sh\necho ran > ${JSON.stringify(marker)}\n`);
    chmodSync(join(root, "node_modules", ".bin", "baton"), 0o755);
    const path = process.env.PATH;
    process.env.PATH = `node_modules/.bin:/usr/bin:/bin`;
    try {
      const hooks = await loadPlugin(root, "baton", "relpath");
      const out = userMessage("ses_3", "hello");
      await hooks["chat.message"]({ sessionID: "ses_3", messageID: "msg_1" }, out);
      await hooks["tool.execute.before"]({ tool: "bash", sessionID: "ses_3", callID: "call_1" }, { args: { command: "ls" } });
      expect(out.parts).toHaveLength(1);
      expect(existsSync(marker)).toBe(false);
    } finally {
      process.env.PATH = path;
    }
  });

  it("does nothing where its baton cannot be run: no part added, no call refused", async () => {
    const root = tempDir("baton-opencode-");
    expect(cli(["init", "--root", root]).code).toBe(0);
    const hooks = await loadPlugin(root, "/nonexistent/baton", "b");
    const out = userMessage("ses_2", "hello");
    await hooks["chat.message"]({ sessionID: "ses_2", messageID: "msg_1" }, out);
    expect(out.parts).toHaveLength(1);
    await expect(
      hooks["tool.execute.before"]({ tool: "bash", sessionID: "ses_2", callID: "call_1" }, { args: { command: "rm -rf x" } }),
    ).resolves.toBeUndefined();
  });

  it("sends every hook to one relay process; a relay killed mid-call lets that call go on, and the next call starts a new one", async () => {
    const root = tempDir("baton-opencode-");
    writeAt(root, "a.txt", "one\n");
    writeAt(root, "b.txt", "one\n");
    expect(cli(["init", "--root", root]).code).toBe(0);
    process.env.BATON_HOOK_SERVER = "off";
    const db = new Database(join(root, ".baton", "baton.db"));
    // The other tests' plugins (modules of their own) keep their relays.
    const others = new Set(relays());
    const ours = () => relays().filter((pid) => !others.has(pid));
    try {
      const hooks = await loadPlugin(root, `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)}`, "c");
      const pre = (call: string, file: string) =>
        hooks["tool.execute.before"](
          { tool: "write", sessionID: "ses_3", callID: call },
          { args: { filePath: join(root, file), content: "two\n" } },
        );
      const out = userMessage("ses_3", "Go on.");
      await hooks["chat.message"]({ sessionID: "ses_3", messageID: "msg_1" }, out);
      const first = ours();
      expect(first).toHaveLength(1);
      // Two calls at once, on the same relay.
      await Promise.all([pre("call_1", "a.txt"), pre("call_2", "b.txt")]);
      expect(ours()).toEqual(first);
      expect(cli(["--json", "checkpoints", "--root", root]).json().checkpoints).toHaveLength(2);

      // A call under way (waiting for the database, which this test holds), and its relay killed.
      db.exec("BEGIN IMMEDIATE");
      const started = Date.now();
      const stuck = pre("call_3", "a.txt");
      await new Promise((r) => setTimeout(r, 1_500));
      process.kill(first[0] as number, "SIGKILL");
      await expect(stuck).resolves.toBeUndefined();
      expect(Date.now() - started).toBeLessThan(10_000);
      db.exec("ROLLBACK");

      // The next call: a new relay, and Baton again.
      await pre("call_4", "b.txt");
      const second = ours();
      expect(second).toHaveLength(1);
      expect(second).not.toEqual(first);
      const cps = cli(["--json", "checkpoints", "--root", root]).json().checkpoints;
      expect(cps.map((c: any) => c.toolName)).toEqual(["write", "write", "write"]);
      await hooks.dispose();
    } finally {
      db.close();
      delete process.env.BATON_HOOK_SERVER;
      for (const pid of ours()) process.kill(pid, "SIGKILL");
    }
  }, 120_000);

  it("with a baton too old to relay (silent on --relay), sends each hook to a process of its own", async () => {
    const root = tempDir("baton-opencode-");
    writeAt(root, "a.txt", "one\n");
    expect(cli(["init", "--root", root]).code).toBe(0);
    // An older baton: `hook opencode --relay` reads its stdin for one payload and says nothing until it closes.
    const old = join(tempDir("baton-old-"), "baton.cjs");
    writeFileSync(old, `if (process.argv.includes("--relay")) process.stdin.resume(); else require(${JSON.stringify(CLI)});\n`);
    const file = join(tempDir("baton-plugin-"), "baton.js");
    writeFileSync(file, opencodePluginText([process.execPath, old]));
    process.env.BATON_HOOK_SERVER = "off";
    const others = new Set(relays());
    try {
      const hooks = await (await import(pathToFileURL(file).href)).BatonPlugin({ directory: root, worktree: root });
      const started = Date.now();
      const args = { filePath: join(root, "a.txt"), content: "two\n" };
      await hooks["tool.execute.before"]({ tool: "write", sessionID: "ses_4", callID: "call_1" }, { args });
      expect(Date.now() - started).toBeGreaterThanOrEqual(10_000);
      expect(cli(["--json", "checkpoints", "--root", root]).json().checkpoints).toHaveLength(1);
      // No relay is tried again: the next call is answered at once.
      const next = Date.now();
      await hooks["tool.execute.before"]({ tool: "write", sessionID: "ses_4", callID: "call_2" }, { args });
      expect(Date.now() - next).toBeLessThan(10_000);
      expect(cli(["--json", "checkpoints", "--root", root]).json().checkpoints).toHaveLength(2);
      expect(relays().filter((pid) => !others.has(pid))).toEqual([]);
    } finally {
      delete process.env.BATON_HOOK_SERVER;
    }
  }, 120_000);
});

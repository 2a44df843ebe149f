/**
 * What an agent's hooks wait for the disk for: the checkpoint before a tool changes files is
 * committed fully; what the after-tool hook records of a call that already ran (its turn, the
 * files it wrote, its ledger node) is committed without an fsync of its own (docs/architecture.md,
 * "SQLite (embedded default)": what waits for the disk). Real SQLite workspace, payloads captured from Claude Code
 * (test/fixtures/hooks/claude/).
 */
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { TxOptions } from "../src/backend/contract.js";
import { SqliteBackend } from "../src/backend/sqlite/sqlite-backend.js";
import { openBaton, servicesOf } from "../src/compose.js";
import { claude } from "../src/core/hooks/claude.js";
import { codex } from "../src/core/hooks/codex.js";
import type { HookEvent } from "../src/core/hooks/types.js";
import { cleanupDirs, REPO, tempDir } from "./helpers.js";

afterEach(() => {
  vi.restoreAllMocks();
  cleanupDirs();
});

function captured(root: string, name: string): HookEvent {
  const text = readFileSync(join(REPO, "test", "fixtures", "hooks", "claude", `${name}.json`), "utf8")
    .replaceAll("{{session}}", "5f0c1d2e-durability")
    .replaceAll("{{cwd}}", root);
  const payload = JSON.parse(text) as Record<string, unknown>;
  return claude.parse(payload.hook_event_name as string, payload, root);
}

describe("what agent hooks wait for the disk for", () => {
  it("the checkpoint before a write commits fully; the after-tool records commit relaxed, and a reopen finds them", async () => {
    const root = tempDir();
    mkdirSync(join(root, "src"));
    writeFileSync(join(root, "src", "app.ts"), "export const app = 1;\n");
    const baton = await openBaton({ root });
    const writes: (TxOptions | undefined)[] = [];
    const transaction = SqliteBackend.prototype.transaction;
    vi.spyOn(SqliteBackend.prototype, "transaction").mockImplementation(function (this: SqliteBackend, mode, fn, opts) {
      if (mode === "write") writes.push(opts);
      return transaction.call(this, mode, fn, opts);
    });
    const handle = async (name: string) => {
      writes.length = 0;
      await baton.agents.handle(captured(root, name), { agentPid: process.pid, requestId: `req-${name}` });
      return writes.map((o) => o?.durability ?? "full");
    };
    try {
      await handle("session-start-startup");
      const before = await handle("pre-write");
      expect(before).toContain("full");
      writeFileSync(join(root, "src", "session.ts"), 'export const SESSION_COOKIE = "sid";\n');
      const stats = () => (servicesOf(baton).backend as SqliteBackend).writeStats;
      const was = stats();
      const after = await handle("post-write");
      // The turn with the files it wrote (resume:updated, in the turn's own append) and the ledger
      // node: none waits, and they commit together.
      expect(after.length).toBeGreaterThanOrEqual(2);
      expect(after.every((d) => d === "relaxed")).toBe(true);
      expect(stats().transactions - was.transactions).toBe(2);
      expect(stats().commits - was.commits, "the ledger node, the turn and its files in one commit").toBe(1);
      const bash = await handle("pre-bash");
      expect(bash).toContain("full");
      const bashWas = stats();
      const bashAfter = await handle("post-bash");
      expect(bashAfter.length).toBeGreaterThanOrEqual(2);
      expect(bashAfter.every((d) => d === "relaxed")).toBe(true);
      expect(stats().transactions - bashWas.transactions).toBe(2);
      expect(stats().commits - bashWas.commits, "the ledger node and the turn in one commit").toBe(1);
    } finally {
      vi.restoreAllMocks();
      await baton.close();
    }
    const again = await openBaton({ root });
    try {
      const [s] = await again.sessions.list();
      const { events } = await again.events.list(s?.id as string);
      const turns = events.filter((e) => e.type === "turn:recorded").map((e) => e.data.tool);
      expect(turns).toEqual(["Write", "Bash"]);
      // The files the Write wrote, appended right after its turn (their id is the turn's).
      const at = events.findIndex((e) => e.type === "turn:recorded" && e.data.tool === "Write");
      expect(events[at + 1]).toMatchObject({
        id: `${events[at]?.id}.resume`,
        type: "resume:updated",
        data: { filesModified: [expect.objectContaining({ path: "src/session.ts", hash: expect.any(String) })] },
      });
      expect((await again.ledger.list(s?.id as string)).map((n) => n.toolName)).toEqual(["Write", "Bash"]);
    } finally {
      await again.close();
    }
  });

  it("an after-tool hook whose ledger cannot be loaded still records the turn, and the ledger counts its failure", async () => {
    const root = tempDir();
    mkdirSync(join(root, "src"));
    // A limit the ledger's constructor refuses: its service never loads.
    const baton = await openBaton({ root, ledger: { maxNodesPerSession: 0 } });
    try {
      await baton.agents.handle(captured(root, "session-start-startup"), { agentPid: process.pid, requestId: "req-start" });
      writeFileSync(join(root, "src", "session.ts"), 'export const SESSION_COOKIE = "sid";\n');
      expect(await baton.agents.handle(captured(root, "post-write"), { agentPid: process.pid, requestId: "req-post" })).toEqual({});
      const [s] = await baton.sessions.list();
      const { events } = await baton.events.list(s?.id as string);
      expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(["turn:recorded", "resume:updated"]));
      expect(baton.ledger.health().writeFailures).toBe(1);
    } finally {
      await baton.close();
    }
  });

  it("a written file that is a link (CLAUDE.md -> AGENTS.md): the turn names both, the resume list the file, the hook ends well", async () => {
    const root = tempDir();
    mkdirSync(join(root, "src"));
    writeFileSync(join(root, "src", "real.ts"), "export const real = 1;\n");
    const baton = await openBaton({ root });
    try {
      await baton.agents.handle(captured(root, "session-start-startup"), { agentPid: process.pid, requestId: "req-start" });
      symlinkSync("real.ts", join(root, "src", "session.ts"));
      expect(await baton.agents.handle(captured(root, "post-write"), { agentPid: process.pid, requestId: "req-post" })).toEqual({});
      const [s] = await baton.sessions.list();
      const { events } = await baton.events.list(s?.id as string);
      // The link and the file it leads to, where the write landed; the resume list holds only the file.
      const hash = expect.any(String);
      expect(events.filter((e) => e.type === "turn:recorded").map((e) => e.data.files)).toEqual([
        [
          { path: "src/session.ts", hash, size: 23 },
          { path: "src/real.ts", hash, size: 23 },
        ],
      ]);
      expect(events.filter((e) => e.type === "resume:updated").map((e) => e.data.filesModified)).toEqual([
        [expect.objectContaining({ path: "src/real.ts", hash })],
      ]);
      // Nothing failed on the way (the hook's advice, a spiral's pause and the lessons come after).
      expect(existsSync(join(root, ".baton", "logs", "hooks.log"))).toBe(false);
    } finally {
      await baton.close();
    }
  });

  it("a written file that is a folder by then: the turn is recorded without its hash, and no files' record", async () => {
    const root = tempDir();
    mkdirSync(join(root, "src"));
    const baton = await openBaton({ root });
    try {
      await baton.agents.handle(captured(root, "session-start-startup"), { agentPid: process.pid, requestId: "req-start" });
      mkdirSync(join(root, "src", "session.ts"));
      expect(await baton.agents.handle(captured(root, "post-write"), { agentPid: process.pid, requestId: "req-post" })).toEqual({});
      const [s] = await baton.sessions.list();
      const { events } = await baton.events.list(s?.id as string);
      // Recorded and judged like any call (before, the turn failed with the file: nothing of it was kept).
      expect(events.filter((e) => e.type === "turn:recorded").map((e) => e.data.files)).toEqual([[{ path: "src/session.ts" }]]);
      expect(events.some((e) => e.type === "resume:updated")).toBe(false);
      expect(existsSync(join(root, ".baton", "logs", "hooks.log"))).toBe(false);
    } finally {
      await baton.close();
    }
  });

  it("a patch of more files than a turn holds (100): the turn keeps the first 100, the resume list all of them", async () => {
    const root = tempDir();
    const baton = await openBaton({ root });
    try {
      const names = Array.from({ length: 105 }, (_, i) => `gen/f${String(i).padStart(3, "0")}.ts`);
      mkdirSync(join(root, "gen"));
      for (const n of names) writeFileSync(join(root, n), `export const v = "${n}";\n`);
      const patch = `*** Begin Patch\n${names.map((n) => `*** Add File: ${n}\n+export const v = "${n}";\n`).join("")}*** End Patch\n`;
      const payload = (event: string) => ({
        session_id: "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
        transcript_path: null,
        cwd: root,
        hook_event_name: event,
        ...(event === "SessionStart" ? { source: "startup" } : {}),
        ...(event === "PostToolUse"
          ? { tool_name: "apply_patch", tool_use_id: "call_big_patch", tool_input: { command: patch }, tool_response: "Success." }
          : {}),
      });
      for (const event of ["SessionStart", "PostToolUse"])
        await baton.agents.handle(codex.parse(event, payload(event), root), { agentPid: process.pid, requestId: `req-${event}` });
      const [s] = await baton.sessions.list();
      const { events } = await baton.events.list(s?.id as string);
      const turn = events.find((e) => e.type === "turn:recorded");
      expect((turn?.data.files as unknown[] | undefined)?.length).toBe(100);
      const listed = events.find((e) => e.type === "resume:updated")?.data.filesModified as unknown[] | undefined;
      expect(listed?.length).toBe(105);
      expect(existsSync(join(root, ".baton", "logs", "hooks.log"))).toBe(false);
    } finally {
      await baton.close();
    }
  });

  it('with `ledger.durability: "full"` every record of a call waits for the disk', async () => {
    const root = tempDir();
    mkdirSync(join(root, "src"));
    const baton = await openBaton({ root, ledger: { durability: "full" } });
    const writes: (TxOptions | undefined)[] = [];
    const transaction = SqliteBackend.prototype.transaction;
    vi.spyOn(SqliteBackend.prototype, "transaction").mockImplementation(function (this: SqliteBackend, mode, fn, opts) {
      if (mode === "write") writes.push(opts);
      return transaction.call(this, mode, fn, opts);
    });
    try {
      for (const name of ["session-start-startup", "pre-write"])
        await baton.agents.handle(captured(root, name), { agentPid: process.pid, requestId: `req-${name}` });
      writeFileSync(join(root, "src", "session.ts"), 'export const SESSION_COOKIE = "sid";\n');
      writes.length = 0;
      await baton.agents.handle(captured(root, "post-write"), { agentPid: process.pid, requestId: "req-post" });
      expect(writes.length).toBeGreaterThanOrEqual(2);
      expect(writes.map((o) => o?.durability ?? "full")).toEqual(writes.map(() => "full"));
    } finally {
      vi.restoreAllMocks();
      await baton.close();
    }
  });
});

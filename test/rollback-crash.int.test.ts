/**
 * A rollback killed with SIGKILL part-way through: every file must be wholly old or wholly
 * restored (never torn), status must answer finish_rollback naming both ways out, and running
 * the command it gives must finish the job (and the safety checkpoint must undo it).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { openBaton } from "../src/index.js";
import { killAll, type LineChild, spawnFixture, waitExit } from "./child-process.js";
import { cleanupDirs, cli, tempDir } from "./helpers.js";

const FILES = 200;
const KILL_AFTER = 40;
const SESSION = "rb";

afterAll(() => cleanupDirs());

const file = (i: number) => `d${i % 10}/f${i}.txt`;
// Tens of kilobytes each, so a kill often lands while a file is being written.
const target = (i: number) => `target ${i}\n`.repeat(4_000 + i);
const modified = (i: number) => `modified ${i}\n`.repeat(5_000 + 2 * i);

function states(root: string): { restored: number; old: number; torn: string[] } {
  let restored = 0;
  let old = 0;
  const torn: string[] = [];
  for (let i = 0; i < FILES; i++) {
    const text = readFileSync(join(root, file(i)), "utf8");
    if (text === target(i)) restored++;
    else if (text === modified(i)) old++;
    else torn.push(`${file(i)} (${text.length} bytes: ${JSON.stringify(text.slice(0, 30))}…)`);
  }
  return { restored, old, torn };
}

function leftovers(root: string): string[] {
  return Array.from({ length: 10 }, (_, d) => readdirSync(join(root, `d${d}`)).filter((n) => n.startsWith(".baton-restore-"))).flat();
}

describe("a rollback killed with SIGKILL", () => {
  it("leaves each file wholly old or new; status says finish_rollback; finishing (and undoing) works", async () => {
    const root = tempDir();
    const setup = await openBaton({ root });
    await setup.sessions.start({ flow: "task", id: SESSION });
    for (let d = 0; d < 10; d++) mkdirSync(join(root, `d${d}`));
    for (let i = 0; i < FILES; i++) writeFileSync(join(root, file(i)), target(i));
    const cp = await setup.checkpoints.create(SESSION, { all: true, label: "known good" });
    expect(cp.checkpoint.files).toHaveLength(FILES);
    for (let i = 0; i < FILES; i++) writeFileSync(join(root, file(i)), modified(i));
    await setup.close();

    const children: LineChild[] = [];
    try {
      const child = spawnFixture("rollback-restorer.mjs", [root, SESSION, cp.checkpoint.id, "1"]);
      children.push(child);
      await child.waitForLine((l) => l.startsWith(`restored ${KILL_AFTER} `), 30_000, `the ${KILL_AFTER}th restored file`);
      // Not aligned with the progress lines: the kill lands at an arbitrary point of a write.
      await new Promise((r) => setTimeout(r, Math.random() * 4));
      child.proc.kill("SIGKILL");
      const exit = await waitExit(child, 10_000);
      expect(exit, "the restorer died from SIGKILL, not on its own").toEqual({ code: null, signal: "SIGKILL" });
      expect(
        child.lines.some((l) => l.startsWith("applied")),
        "killed before it finished",
      ).toBe(false);
    } finally {
      await killAll(children);
    }

    const mid = states(root);
    expect(mid.torn, "no file is torn: each is wholly old or wholly restored").toEqual([]);
    expect(mid.restored, "the files reported restored are restored").toBeGreaterThanOrEqual(KILL_AFTER);
    expect(mid.old, "the kill landed part-way through").toBeGreaterThan(0);

    const b = await openBaton({ root });
    try {
      const st = (await b.sessions.status()).sessions[0]!;
      expect(st.nextAction.action).toBe("finish_rollback");
      expect(st.nextAction.command).toBe(`baton rollback --session ${SESSION} --to ${cp.checkpoint.id}`);
      const rb = (await b.sessions.snapshot(SESSION)).facets.rollbacks.at(-1)!;
      expect(rb.state).toBe("started");
      expect(st.nextAction.reason).toContain(`baton rollback --session ${SESSION} --to ${rb.safety}`);
      expect(await b.sessions.stateMarkdown(SESSION)).toContain("**interrupted**");
      const safety = await b.checkpoints.get(rb.safety);
      expect(safety.files, "the safety checkpoint holds every file the rollback set out to change").toHaveLength(FILES);

      // Finish it with exactly the command status gave.
      const args = st.nextAction.command.split(" ").slice(1);
      const done = cli([...args, "--json", "--root", root]);
      expect(done.code, done.stdout + done.stderr).toBe(0);
      expect(done.json()).toMatchObject({ target: { id: cp.checkpoint.id } });
      const after = states(root);
      expect(after).toEqual({ restored: FILES, old: 0, torn: [] });
      expect(leftovers(root), "temp files of the killed restorer are cleaned up").toEqual([]);
      const st2 = (await b.sessions.status()).sessions[0]!;
      expect(st2.nextAction.action).not.toBe("finish_rollback");
      expect(st2.suggestions.map((s) => s.action)).toEqual(["capture_lesson"]);

      // And the interrupted rollback's safety checkpoint undoes everything.
      await b.checkpoints.rollback(SESSION, { to: rb.safety });
      expect(states(root)).toEqual({ restored: 0, old: FILES, torn: [] });
      // The contents live in the database (each file is well under the inline limit): both versions of every file.
      const db = new Database(join(root, ".baton", "baton.db"), { readonly: true });
      try {
        expect((db.prepare("SELECT count(*) AS n FROM blobs").get() as { n: number }).n).toBe(2 * FILES);
      } finally {
        db.close();
      }
      expect(existsSync(join(root, ".baton", "blobs")), "no blob file was needed").toBe(false);
    } finally {
      await b.close();
    }
  });
});

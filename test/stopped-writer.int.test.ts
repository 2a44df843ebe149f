/**
 * A writer stopped inside a write transaction (SIGSTOP, a debugger) holds SQLite's write lock
 * until it is resumed. Everyone else's storage_busy must say which process that is and what to
 * do, and doctor must name it.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openBaton } from "../src/index.js";
import { cleanupDirs, initWorkspace, REPO } from "./helpers.js";

afterAll(() => cleanupDirs());

describe("a stopped writer", () => {
  it("storage_busy names the stopped holder and how to resume it; doctor reports it", async () => {
    const root = initWorkspace("baton-stopped-");
    const setup = await openBaton({ root });
    await setup.sessions.start({ flow: "task", id: "s1" });
    await setup.close();

    // A process that takes the write lock, says so, and is then stopped mid-transaction.
    const holder = spawn(
      process.execPath,
      [
        "-e",
        `const Database = require(${JSON.stringify(join(REPO, "node_modules", "better-sqlite3"))});
         const db = new Database(${JSON.stringify(join(root, ".baton", "baton.db"))});
         db.exec("BEGIN IMMEDIATE");
         process.stdout.write("held\\n");
         setInterval(() => {}, 1000);`,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    try {
      await new Promise<void>((resolve, reject) => {
        holder.stdout.on("data", (d: Buffer) => (d.toString().includes("held") ? resolve() : undefined));
        holder.once("exit", () => reject(new Error("the lock holder exited early")));
      });
      holder.kill("SIGSTOP");

      const b = await openBaton({ root, busyTimeoutMs: 300 });
      try {
        const err = await b.events.append("s1", { type: "note:added", data: { text: "hello" } }).catch((e: unknown) => e);
        expect(err).toMatchObject({ code: "storage_busy", details: { holder: { pid: holder.pid, stopped: true } } });
        expect((err as Error).message).toContain(`pid ${holder.pid}`);
        expect((err as Error).message).toContain(`kill -CONT ${holder.pid}`);

        const report = await b.health.doctor();
        const found = report.findings.find((f) => f.code === "storage_lock_stopped");
        expect(found, JSON.stringify(report.findings)).toMatchObject({ severity: "error", evidence: { pid: holder.pid } });
      } finally {
        await b.close();
      }
    } finally {
      holder.kill("SIGKILL");
      await new Promise((r) => holder.once("exit", r));
    }
  });
});

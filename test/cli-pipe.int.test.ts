/**
 * A reader that stops early (`baton export | head -1`) closes stdout's pipe under the CLI: the
 * output ends there, quietly, with exit 0 (issue 10 §2.6). Before, `export` died with an EPIPE
 * stack trace and `ledger export` reported an "unexpected failure".
 */
import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openBaton } from "../src/index.js";
import { CLI, cleanupDirs, initWorkspace, tempDir } from "./helpers.js";

afterAll(() => cleanupDirs());

let root: string;

beforeAll(async () => {
  root = initWorkspace("baton-pipe-");
  const b = await openBaton({ root, durability: "none" });
  try {
    await b.sessions.start({ flow: "task", id: "p1" });
    // Well over any pipe buffer (64 KiB on Linux by default, up to 1 MiB): ~2 MB of journal and ledger.
    const pad = "x".repeat(600);
    for (let i = 0; i < 3000; i++) {
      await b.events.append("p1", { type: "note", actor: "agent", data: { text: `${i} ${pad}` } });
      await b.ledger.record("p1", { toolName: "shell", status: "success", args: { command: `echo ${i} ${pad}` } });
    }
  } finally {
    await b.close();
  }
}, 120_000);

/** Run the CLI, read stdout up to its first line, then close the pipe; resolve with the exit. */
function firstLineThenClose(args: string[]): Promise<{ code: number | null; signal: string | null; first: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args, "--root", root], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let first = "";
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
    });
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      out += d;
      const nl = out.indexOf("\n");
      if (nl >= 0 && first === "") {
        first = out.slice(0, nl);
        child.stdout.destroy(); // the reader goes away, as `head -1` does
      }
    });
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, first, stderr }));
  });
}

describe("stdout closed by the reader", () => {
  for (const args of [
    ["export", "p1"],
    ["ledger", "export"],
    ["ledger", "export", "--format", "otlp"],
    ["export", "p1", "--json"],
  ]) {
    it(`baton ${args.join(" ")} | head -1 ends quietly with exit 0`, async () => {
      const r = await firstLineThenClose(args);
      expect(r.first.length).toBeGreaterThan(0);
      expect(JSON.parse(r.first)).toBeTypeOf("object");
      expect(r.stderr).toBe("");
      expect({ code: r.code, signal: r.signal }).toEqual({ code: 0, signal: null });
    }, 60_000);
  }

  for (const cmd of ["export p1", "ledger export", "demo --chapter 1 --json"]) {
    it(`sh -c 'baton ${cmd} | head -1': a real pipe, exit 0, nothing on stderr`, () => {
      const out = tempDir("baton-pipe-out-");
      const q = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
      const script = `{ ${q(process.execPath)} ${q(CLI)} ${cmd} --root ${q(root)} 2>${q(join(out, "err"))}; echo $? >${q(join(out, "code"))}; } | head -1`;
      const r = spawnSync("sh", ["-c", script], { encoding: "utf8", timeout: 60_000 });
      expect(r.status).toBe(0);
      expect(JSON.parse(r.stdout)).toBeTypeOf("object");
      expect(readFileSync(join(out, "err"), "utf8")).toBe("");
      expect(readFileSync(join(out, "code"), "utf8").trim()).toBe("0");
    }, 60_000);
  }
});

/**
 * A renamed host is the same machine: containers, devcontainers, CI runners and laptops change
 * their host name, and a store inside the workspace (SQLite) holds only this machine's
 * checkpoints, so rollback must not ask for --other-host there (two-host.int.test.ts covers the
 * shared store, where it must).
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { servicesOf } from "../src/compose.js";
import { openBaton } from "../src/index.js";
import { machineId, type ProcessFacts } from "../src/services/process-facts.js";
import { CLI, cleanupDirs, cli, initWorkspace, tempDir } from "./helpers.js";

const facts = (name: string): ProcessFacts => ({ host: () => name, alive: () => true, startTime: () => "1" });

/** Whether this process may make a UTS namespace (root, or unprivileged user namespaces). */
function canUnshare(): boolean {
  const r = spawnSync("unshare", ["-u", "sh", "-c", "hostname baton-probe && hostname"], { encoding: "utf8" });
  return r.status === 0 && r.stdout.trim() === "baton-probe";
}

describe("rollback after the host was renamed", () => {
  afterAll(() => cleanupDirs());

  it("a SQLite store restores its own checkpoint whatever the host is called now", async () => {
    const root = tempDir("renamed-");
    writeFileSync(join(root, "a.txt"), "before\n");
    const first = await openBaton({ root, processFacts: facts("old-name") });
    await first.sessions.start({ flow: "task", id: "t" });
    const cp = await first.checkpoints.create("t", { files: ["a.txt"] });
    expect(cp.checkpoint.host).toBe("old-name");
    await first.close();

    writeFileSync(join(root, "a.txt"), "after\n");
    const second = await openBaton({ root, processFacts: facts("new-name") });
    try {
      expect(servicesOf(second).backend.capabilities.sharedAcrossHosts).toBe(false);
      await second.checkpoints.rollback("t", { to: cp.checkpoint.id });
      expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("before\n");
    } finally {
      await second.close();
    }
  });

  it.skipIf(!canUnshare())("the CLI undoes a change after the host name changed (unshare -u)", () => {
    const root = initWorkspace("renamed-cli-", { "a.txt": "before\n" });
    expect(cli(["--root", root, "session", "start", "--flow", "task", "--id", "t"]).code).toBe(0);
    const cp = cli(["--root", root, "checkpoint", "-s", "t", "--files", "a.txt"]);
    expect(cp.code, cp.stderr).toBe(0);
    writeFileSync(join(root, "a.txt"), "after\n");
    const r = spawnSync(
      "unshare",
      ["-u", "sh", "-c", 'hostname baton-renamed && exec "$0" "$@"', process.execPath, CLI, "--root", root, "rollback", "1", "-s", "t"],
      { encoding: "utf8" },
    );
    expect(r.status, r.stderr).toBe(0);
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("before\n");
  });

  it("records a hash of this machine's identity, never the raw machine-id", async () => {
    const id = machineId();
    let raw: string | undefined;
    try {
      raw = readFileSync("/etc/machine-id", "utf8").trim();
    } catch {
      raw = undefined;
    }
    if (raw !== undefined && /^[0-9a-f]{32}$/i.test(raw)) {
      expect(id).toMatch(/^[0-9a-f]{16}$/);
      expect(raw).not.toContain(id as string);
    }
    const root = tempDir("machine-");
    writeFileSync(join(root, "a.txt"), "x\n");
    const b = await openBaton({ root });
    try {
      await b.sessions.start({ flow: "task", id: "t" });
      const cp = await b.checkpoints.create("t", { files: ["a.txt"] });
      expect((await b.checkpoints.list("t")).find((c) => c.id === cp.checkpoint.id)?.machine).toBe(id);
    } finally {
      await b.close();
    }
  });
});

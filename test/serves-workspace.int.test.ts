/**
 * `servesWorkspace` (platform/server-file.ts): before Baton signals the process server.json
 * names, /proc must show it running `serve` for this workspace, however it was started.
 */
import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { servesWorkspace } from "../src/platform/server-file.js";
import { initWorkspace, tempDir } from "./helpers.js";

const started: ReturnType<typeof spawn>[] = [];
afterEach(() => {
  for (const c of started.splice(0)) c.kill("SIGKILL");
});

it.runIf(process.platform === "linux")("tells a server of this workspace, however started, from any other process", async () => {
  const root = initWorkspace("baton-serves-");
  mkdirSync(join(root, "src"));
  const dir = join(root, ".baton");
  const elsewhere = tempDir();
  // Each case is a shell waiting on its stdin, its command line `sh -c … <args>`.
  const cases: [string, string[], string, Record<string, string>, boolean][] = [
    ["from the root", ["serve"], root, {}, true],
    ["from a folder of it", ["serve"], join(root, "src"), {}, true],
    ["--root, absolute", ["serve", "--root", root], elsewhere, {}, true],
    ["--root=, relative to its folder", ["serve", `--root=${root}/src/..`], elsewhere, {}, true],
    ["BATON_ROOT", ["serve"], elsewhere, { BATON_ROOT: root }, true],
    ["another workspace", ["serve", "--root", elsewhere], root, {}, false],
    ["not a server", ["status"], root, {}, false],
    ["elsewhere, no root", ["serve"], elsewhere, {}, false],
  ];
  for (const [what, args, cwd, env, expected] of cases) {
    const child = spawn("sh", ["-c", "echo up; read x", ...args], {
      cwd,
      env: { ...process.env, BATON_ROOT: "", ...env },
      stdio: ["pipe", "pipe", "ignore"],
    });
    started.push(child);
    await new Promise((resolve) => child.stdout?.once("data", resolve));
    expect(servesWorkspace(child.pid as number, dir), what).toBe(expected);
  }
  expect(servesWorkspace(2 ** 22 + 1, dir), "no such process").toBe(false);
});

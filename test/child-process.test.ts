/**
 * The test harness's own report of a child that would not finish (child-process.ts `waitExit`):
 * it is what a hung CI run leaves to go on, so it must name what held things up.
 */
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { killAll, spawnCommand, waitExit } from "./child-process.js";

describe("waitExit, when a child does not finish in time", () => {
  it("names the process that holds its output open after it exited", async () => {
    const c = spawnCommand("sh", ["-c", "sleep 30 & echo $!; exit 0"], "sh");
    let sleeper = 0;
    try {
      sleeper = Number(await c.waitForLine((l) => /^\d+$/.test(l), 10_000, "the sleep's pid"));
      const message = await waitExit(c, 500).then(
        () => "",
        (e: Error) => e.message,
      );
      expect(message).toContain("it exited (code 0, signal null), but its stdout is still open, held by:\n");
      // The holder is named where `ss` (iproute2) can name the other end of the socket pair.
      const ss = spawnSync("ss", ["-V"]).status === 0;
      expect(message).toContain(ss ? `\n${sleeper} sleep 30\n` : "(unknown: `ss -xn` does not list the other end)");
    } finally {
      if (sleeper > 0) process.kill(sleeper, "SIGKILL");
      await killAll([c]);
    }
  });

  it("reports a child still running with its state and signal masks", async () => {
    const c = spawnCommand("sh", ["-c", "echo started; exec sleep 30"], "sh");
    try {
      await c.waitForLine((l) => l === "started", 10_000, "started");
      const message = await waitExit(c, 500).then(
        () => "",
        (e: Error) => e.message,
      );
      expect(message).toMatch(/it was still running \(killed\)\. Its processes then:\n\d+ S \(sleeping\) wchan=\S+ SigPnd=\S+ .*sleep 30/);
    } finally {
      await killAll([c]);
    }
  });
});

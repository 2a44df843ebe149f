/**
 * `baton dashboard`: starts the workspace's server when none runs, reuses it when one does, and
 * with `--open` hands the login link to the system's opener (`$BROWSER` here, a script that
 * records what it was given).
 */
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { processAlive } from "../src/platform/process-facts.js";
import { cli, tempDir } from "./helpers.js";

async function stopPid(pid: number): Promise<void> {
  try {
    process.kill(pid, "SIGTERM");
  } catch {
    return;
  }
  for (let i = 0; i < 200; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  process.kill(pid, "SIGKILL");
}

describe("baton dashboard", () => {
  it("starts a server, prints a one-time link, opens it with --open, and reuses the server", async () => {
    const root = tempDir();
    expect(cli(["--root", root, "init"]).code).toBe(0);
    const opener = join(tempDir(), "opener.sh");
    const got = join(tempDir(), "opened.txt");
    writeFileSync(opener, `#!/bin/sh\nprintf '%s' "$2" > '${got}'\n`);
    chmodSync(opener, 0o755);
    // $BROWSER as other tools read it: a list of commands tried in turn, `%s` for the URL.
    const r = cli(["--root", root, "--json", "dashboard", "--open"], { env: { BROWSER: `/no/such/browser:${opener} --new-tab %s` } });
    expect(r.code).toBe(0);
    const out = r.json();
    try {
      expect(out).toMatchObject({ started: true, opened: true });
      expect(out.url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${out.port}/dashboard#login=[A-Za-z0-9_-]{32}$`));
      for (let i = 0; i < 100 && !existsSync(got); i++) await new Promise((res) => setTimeout(res, 50));
      expect(readFileSync(got, "utf8")).toBe(out.url);
      const info = JSON.parse(readFileSync(join(root, ".baton", "server.json"), "utf8"));
      expect(info.pid).toBe(out.pid);

      const again = cli(["--root", root, "--json", "dashboard"]).json();
      expect(again).toMatchObject({ started: false, opened: false, pid: out.pid, port: out.port });
      expect(again.url).not.toBe(out.url); // a new code each time

      const human = cli(["--root", root, "dashboard"]);
      expect(human.stdout).toContain("logs in once and expires at");
      expect(human.stdout).toContain(`http://127.0.0.1:${out.port}/dashboard#login=`);

      // --demo: a one-time link to the live-variant demo page of the same server.
      const demo = cli(["--root", root, "--json", "dashboard", "--demo"]).json();
      expect(demo.url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${out.port}/#login=[A-Za-z0-9_-]{32}$`));
      expect(cli(["--root", root, "dashboard", "--demo"]).stdout).toContain("Open the demo page");

      // The server the dashboard started is stopped by name, not by its pid.
      expect(human.stdout).toContain("`baton serve --stop` stops the server.");
      const stopped = cli(["--root", root, "--json", "serve", "--stop"]);
      expect(stopped.json()).toEqual({ stopped: true, running: false, pid: out.pid, port: out.port });
      expect(processAlive(out.pid)).toBe(false);
      expect(existsSync(join(root, ".baton", "server.json"))).toBe(false);
      const none = cli(["--root", root, "serve", "--stop"]);
      expect(none.code).toBe(0);
      expect(none.stdout).toContain("No Baton server runs for this workspace.");
      expect(cli(["--root", root, "serve", "--stop", "--port", "0"]).code).toBe(2);
      // A port past TCP's: bad_input, said before anything starts.
      const port = cli(["--root", root, "--json", "serve", "--port", "65536"]);
      expect([port.code, port.json().error.code]).toEqual([2, "bad_input"]);
    } finally {
      await stopPid(out.pid);
    }
  });
});

import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli } from "./helpers.js";

interface Step {
  step: number;
  title: string;
  command: string[];
  result: Record<string, any>;
}

function jsonLines(stdout: string): any[] {
  return stdout
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => {
      try {
        return JSON.parse(l);
      } catch {
        throw new Error(`demo --json printed a line that is not JSON: ${l}`);
      }
    });
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("baton demo", () => {
  it("tells the recovery story for real under --json, then removes its workspace", () => {
    const r = cli(["demo", "--json"]);
    expect(r.code, `stdout: ${r.stdout}\nstderr: ${r.stderr}`).toBe(0);
    const lines = jsonLines(r.stdout);
    const steps = lines.filter((l) => "step" in l) as Step[];
    const summary = lines.at(-1)?.summary;
    expect(summary, "the last line is the summary").toBeDefined();
    expect(steps.map((s) => s.step)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    for (const s of steps) {
      expect(s.title).toEqual(expect.any(String));
      expect(s.command.length, `step ${s.step} ran commands`).toBeGreaterThan(0);
    }
    const ws: string = summary.workspace;
    // Every journal call is the real CLI on the demo's own workspace.
    const cliCalls = steps.flatMap((s) => s.command).filter((c) => c.startsWith("baton "));
    expect(cliCalls.length).toBeGreaterThanOrEqual(15);
    for (const c of cliCalls) expect(c.startsWith(`baton --root ${ws} --json `)).toBe(true);

    const byStep = (n: number) => steps.find((s) => s.step === n)?.result ?? {};
    expect(byStep(2)).toMatchObject({ nextAction: "write_variants", phase: "generating" });
    expect(byStep(4)).toMatchObject({ phase: "accept_pending" });

    // A real child, really killed.
    const killed = byStep(5);
    expect(killed.signal).toBe("SIGKILL");
    expect(killed.pid).toEqual(expect.any(Number));
    expect(pidAlive(killed.pid)).toBe(false);
    expect(killed.variantsLeftInFile).toEqual(["v2", "v3"]);

    // A fresh process learns what to do from the journal alone.
    expect(byStep(6)).toMatchObject({
      nextAction: "run_accept_cleanup",
      phase: "accept_pending",
      variantId: "v2",
      paramValues: { hue: 210, density: "airy" },
      file: "src/Hero.html",
      deadRun: { status: "crashed", pid: killed.pid },
    });
    expect(byStep(6).reason).toContain("v2");

    // Completing with markers left is refused with exit 3 and the finding.
    const early = byStep(7);
    expect(early.nextAction).toBe("run_carbonize_cleanup");
    expect(early.complete).toMatchObject({ exitCode: 3, error: "source_dirty", marker: "carbonize" });
    expect(early.complete.finding).toMatch(/^src\/Hero\.html:\d+$/);

    const last = byStep(8);
    expect(last).toMatchObject({ phase: "complete", nextAction: "no_active_session" });
    expect(last.events).toBeGreaterThanOrEqual(10);

    expect(summary).toMatchObject({ ok: true, kept: false, variantId: "v2", signal: "SIGKILL", events: last.events });
    expect(ws).toContain("baton-demo-");
    expect(existsSync(ws), `${ws} should have been removed`).toBe(false);
  });

  it("--quiet prints only the summary; --keep leaves a workspace the CLI can still read", () => {
    const r = cli(["demo", "--quiet", "--keep"]);
    expect(r.code, `stdout: ${r.stdout}\nstderr: ${r.stderr}`).toBe(0);
    const ws = /Workspace kept: (\S+)/.exec(r.stdout)?.[1];
    expect(ws, r.stdout).toBeDefined();
    try {
      expect(r.stdout).not.toMatch(/^\s*\d\. /m);
      expect(r.stdout).not.toContain("$ baton");
      expect(r.stdout).toContain("Summary");
      const root = ws as string;
      expect(existsSync(join(root, ".baton"))).toBe(true);
      const hero = readFileSync(join(root, "src", "Hero.html"), "utf8");
      expect(hero).toContain('class="hero hero--split" data-density="airy" style="--hue: 210"');
      expect(hero).not.toContain("baton-");
      const all = cli(["status", "--all", "--json", "--root", root]).json();
      expect(all.sessions).toHaveLength(1);
      expect(all.sessions[0]).toMatchObject({ sessionId: "hero", phase: "complete", status: "completed" });
      const runs = cli(["resume", "hero", "--json", "--root", root]).json().facets.runs;
      expect(runs).toEqual([expect.objectContaining({ status: "crashed", handoffReason: expect.stringMatching(/^dead_pid: /) })]);
    } finally {
      if (ws?.includes("baton-demo-")) rmSync(ws, { recursive: true, force: true });
    }
  });
});
